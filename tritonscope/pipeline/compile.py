"""KernelSpec -> Artifact: one real Triton compile plus SASS and resources.

The compile itself is Triton's (see the triton_api package); this module adds the
stages Triton does not give as text (Python source with its file line
numbers, SASS) and the resource usage (cuobjdump's REG, STACK, SHARED and
LOCAL; for AMD targets, the hsaco code object's metadata, see codeobject.py).
Whether the config fits, and whether it spills, is summary.py's.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from tritonscope import triton_api
from tritonscope.language.dialects import stages as dialect_stages
from tritonscope.language.mlir_syntax import KERNEL_FILE_LOC
from tritonscope.core.env import cache_dir
from tritonscope.core.errors import CompileError, KernelSpecError, OutOfResourcesError
from tritonscope.inputs.kernels import Loaded, kernel_value, stand_in_args
from tritonscope.core.model import ARCHES, ArgSpecialization, Artifact, Resources
from tritonscope.core.output import write_cache


def launch_args(loaded: Loaded) -> dict[str, Any]:
    """Every parameter by name, as a keyword launch binds it: runtime arguments as stand-ins Triton's
    specializer accepts, constexprs as the kernel receives them (a dtype as triton.language's)."""
    spec = loaded.spec
    runtime = stand_in_args(spec.args)
    bound: dict[str, Any] = {}
    for name, is_const, _ in triton_api.kernel_params(loaded.jit_fn):
        if is_const:
            bound[name] = kernel_value(spec.constexprs[name])
        elif name in runtime:
            bound[name] = runtime[name]
    return bound


def compile_artifact(loaded: Loaded, *, remarks: bool = True, guard: bool = True,
                     meanwhile: Callable[[], None] | None = None, sass: bool = True) -> Artifact:
    """One compile of `loaded` for its arch, with Triton's remarks (see `_remarks`).

    `meanwhile` runs while the SASS is disassembled (see sass_and_resources):
    the command line loads what it draws with there.

    `remarks=False` leaves Triton's stderr alone (the `passes` child reads it
    whole) and the Artifact's remarks empty.  `guard=False` skips the runaway
    guard (kernels.runaway_guard); `compile --timeout` does, as its compile
    runs in a child process that is stopped when time is up.  `sass=False`
    does not run nvdisasm (the SASS stage is there only when the SASS cache
    holds it already); the resource usage is read as always.
    """
    if guard:
        from tritonscope.pipeline.binding import runaway_guard

        runaway_guard(loaded)
    spec = loaded.spec
    collect = remarks
    arch = ARCHES[spec.arch]
    args = launch_args(loaded)
    started = time.perf_counter()
    compiled = _compile(loaded, args, arch, remarks=collect)
    if _cached_from_other_file(compiled.asm.get("ttir", ""), spec.file):
        # Triton's cache key ignores the file a kernel came from, so an identical
        # kernel compiled from another path comes back with that path in every
        # location.  Compile this one afresh so the stages name the user's file.
        compiled = _compile(loaded, args, arch, fresh=True, remarks=collect)
    remarks = _remarks(compiled, spec.file) if collect else []
    if remarks is None:
        # Triton's cache answered, so nothing was printed, and no remarks were
        # kept for this kernel: compile it once more to hear them.
        compiled = _compile(loaded, args, arch, fresh=True)
        remarks = _remarks(compiled, spec.file) or []
    seconds = time.perf_counter() - started

    specialization = [
        ArgSpecialization(name, ty, () if ty == "constexpr" else tuple(attrs),
                          spec.constexprs.get(name, spec.args.get(name)) if ty == "constexpr" else None)
        for name, ty, attrs in triton_api.specialization_of(loaded.jit_fn, args, **arch_target(arch))
    ]

    lines, first = inspect.getsourcelines(triton_api.python_function(loaded.jit_fn))
    stages: dict[str, str] = {"python": "".join(lines)}
    # The texts Triton gives for every stage this backend has a dialect for (the derived
    # SASS is added below; binaries such as the cubin and the hsaco are no stage).
    for d in dialect_stages(arch.backend):
        if isinstance(compiled.asm.get(d.key), str):
            stages[d.key] = compiled.asm[d.key]
    warnings: list[str] = []
    if arch.backend == "hip":
        resources = hip_resources(compiled, warnings)
    else:
        sass_text, resources_text = sass_and_resources(compiled.asm.get("cubin"), warnings, meanwhile=meanwhile,
                                                       disassemble=sass)
        if sass_text is not None:
            stages["sass"] = sass_text
        resources = cuda_resources(resources_text, compiled.metadata)
    return Artifact(
        spec=spec,
        triton_version=triton_api.triton_version(),
        kernel_hash=compiled.kernel_hash,
        stages=stages,
        python_first_line=first,
        metadata={k: compiled.metadata[k] for k in sorted(compiled.metadata) if k not in ("hash",)},
        resources=resources,
        specialization=specialization,
        warnings=warnings,
        env=triton_api.codegen_env(),
        compile_seconds=seconds,
        remarks=remarks,
    )


def _remarks(compiled, file: str) -> list[dict] | None:
    """Triton's remarks for this compile; None when its cache answered and none were kept.

    A compile that ran stores what it printed under its kernel hash (next to
    the derived SASS), so a later cache hit, which prints nothing, still has
    them.  The hash covers every input of the compile but the kernel's file
    name, so remarks kept for another file count as none.
    """
    path = cache_dir() / "remarks" / f"{compiled.kernel_hash}.json"
    if compiled.cache_hit is False or (compiled.cache_hit is None and compiled.remarks):
        if compiled.kernel_hash:
            write_cache(path, json.dumps({"file": os.path.realpath(file), "remarks": compiled.remarks}))
        return list(compiled.remarks)
    from tritonscope.core.cache_prune import load_entry, touch

    kept = load_entry(path)
    if not isinstance(kept, dict) or kept.get("file") != os.path.realpath(file) \
            or not isinstance(kept.get("remarks"), list):
        return None
    touch(path)  # it answered: used now
    return kept["remarks"]


def _cached_from_other_file(ttir: str, file: str) -> str | None:
    """The kernel file the IR's locations name, when it is not `file`."""
    m = KERNEL_FILE_LOC.search(ttir)
    if m and os.path.realpath(m.group(1)) != os.path.realpath(file):
        return m.group(1)
    return None


def arch_target(arch) -> dict[str, Any]:
    """How triton_api names the arch's target: a CUDA capability, or (backend, gfx name, wave size)."""
    return arch.target_words()


def _compile(loaded: Loaded, args, arch, fresh: bool = False, remarks: bool = True):
    spec = loaded.spec
    if arch.backend == "hip" and not triton_api.has_backend("amd"):
        raise CompileError(f"Triton {triton_api.triton_version()} has no HIP backend, so it cannot compile for "
                           f"{arch.name}.", hint="Install a Triton wheel that includes triton/backends/amd.")
    try:
        from tritonscope.core.model import TRITON_OPTIONS

        return triton_api.compile_kernel(
            loaded.jit_fn, args, **arch_target(arch),
            num_warps=spec.num_warps, num_stages=spec.num_stages, fresh=fresh, remarks=remarks,
            options={k: v for k, v in spec.options.items() if k in TRITON_OPTIONS},
        )
    except KeyboardInterrupt:
        raise
    except Exception as e:  # Triton raises many types; classify what we can
        raise compile_error(e, spec, loaded.jit_fn) from e


def compile_error(e: Exception, spec, jit_fn: Any = None) -> Exception:
    """Triton's exception as a typed error; `jit_fn` (the kernel, when the caller holds it) numbers its lines.
    One from inside Triton's pipeline (not the kernel's source) is marked data["in_pipeline"]."""
    if triton_api.is_out_of_resources(e):
        return OutOfResourcesError(str(e), hint="Use smaller blocks, fewer stages, or a bigger target.")
    info = triton_api.compilation_error_info(e)
    if info:
        message, lineno, line_text = info
        where = ""
        if lineno:
            src_first = _first_line(spec, jit_fn)
            file_line = (src_first + lineno - 1) if src_first else lineno
            where = f" at {Path(spec.file).name}:{file_line}"
        misfit = _misfit_parameter(spec, message, line_text)
        if misfit:
            return KernelSpecError(
                f"{misfit} does not fit its use in {spec.kernel}{where}: {message}",
                context=line_text,
                hint="Give the parameter what the kernel uses there: a dtype (-c NAME=bf16), a string "
                     "(-c NAME=mean), a tensor (--arg NAME=fp16[64,64]) or a tensor descriptor "
                     "(--arg NAME='desc(fp16[4096,4096],[128,64])').")
        return CompileError(
            f"Triton could not compile {spec.kernel}{where}: {message}",
            context=line_text,
            hint="Fix the kernel source (or the constexprs it was given) and run again.",
        )
    text = str(e).strip() or type(e).__name__
    first = text.splitlines()[0]
    # in_pipeline: Triton's own passes or code failed, not the kernel's source (analyses/failure.py explains it)
    return CompileError(
        f"Triton failed while compiling {spec.kernel}: {type(e).__name__}: {first}",
        context="\n".join(text.splitlines()[1:12]) or None,
        hint="Rerun with --debug for the full traceback.",
        data={"in_pipeline": True},
    )


# 'str' object has no attribute 'scalar'     'tensor' object has no attribute 'load'
_MISUSE_RE = re.compile(r"object has no attribute|object is not callable|unsupported operand|must be|expected|"
                        r"not a (?:dtype|tensor)|cannot|invalid", re.I)


def _misfit_parameter(spec, message: str, line_text: str | None) -> str | None:
    """'compute_type='mean' (a string)': the one string, dtype, tensor or descriptor parameter the failing
    source line uses, when Triton's error says a value did not fit there; else None (a plain compile error)."""
    from tritonscope.inputs.kernels import DescArg, TensorArg, parse_arg_value

    if not line_text or not _MISUSE_RE.search(message):
        return None
    used = set(re.findall(r"[A-Za-z_]\w*", line_text))
    found = []
    for name, value in spec.constexprs.items():
        if name in used and isinstance(value, str):
            found.append(f"{name}={value}" + (" (a dtype)" if value.startswith("tl.") else f" ({value!r}, a string)"))
    # a tensor is named only when Triton says a tensor was used as something else (a_desc.load on a pointer):
    # a plain tensor argument sits on most failing lines without being the cause
    tensor_misused = "'tensor' object" in message
    for name, text in spec.args.items():
        value = parse_arg_value(text)
        if name in used and (isinstance(value, DescArg) or (isinstance(value, TensorArg) and tensor_misused)):
            found.append(f"--arg {name}={text} (a {'tensor descriptor' if isinstance(value, DescArg) else 'tensor'})")
    return found[0] if len(found) == 1 else None


def _first_line(spec, jit_fn: Any = None) -> int | None:
    """File line of the `def`: Triton numbers error lines from there (decorators are cut).  The kernel is
    `jit_fn` when the caller holds it (a Python caller's own function: its file is never run again)."""
    try:
        from tritonscope.inputs.kernels import load_for_spec

        lines, first = inspect.getsourcelines(triton_api.python_function(jit_fn or load_for_spec(spec)))
    except Exception:
        return None
    offset = next((i for i, text in enumerate(lines) if re.match(r"\s*def\s", text)), 0)
    return first + offset


# --------------------------------------------------------------------------
# SASS and resources (cached by cubin hash: nvdisasm costs about 0.3 s, whatever the cubin)
# --------------------------------------------------------------------------


# The tools run on a cubin: name, flags, the warning when it is missing, and when it fails.
# nvdisasm's -ndf skips its dataflow analysis (a quarter of its time): on Triton's cubins the text is the
# same with and without it (615 cubins of every arch, nvdisasm 12.8 and 13; tests/test_sass_tools.py).
NVDISASM_FLAGS = ("-c", "-g", "-ndf")
_TOOLS = (
    ("nvdisasm", NVDISASM_FLAGS, "nvdisasm was not found (set TRITON_NVDISASM_PATH): the SASS stage is missing.",
     "nvdisasm failed, so there is no SASS stage"),
    ("cuobjdump", ("-res-usage",), "cuobjdump was not found (set TRITON_CUOBJDUMP_PATH): registers are unknown.",
     "cuobjdump failed, so registers are unknown"),
)


def sass_and_resources(cubin: bytes | None, warnings: list[str], *, meanwhile: Callable[[], None] | None = None,
                       disassemble: bool = True) -> tuple[str | None, str | None]:
    """The SASS (nvdisasm) and cuobjdump's resource usage of the cubin; each None, with a warning, when missing.

    Both tools run at once, and `meanwhile` (an optimisation only: what it
    raises is ignored) runs while they do: nvdisasm spends about 0.2 s setting
    itself up, whatever the cubin.  `disassemble=False` runs cuobjdump alone
    (a few milliseconds): the SASS is None unless the cache holds it.
    """
    if not cubin:
        warnings.append("No cubin in Triton's output: SASS and resource usage are not available.")
        return None, None
    key = hashlib.sha256(cubin).hexdigest()[:32]
    path = cache_dir() / "derived" / f"{key}.json"
    from tritonscope.core.cache_prune import load_entry, touch

    cached = load_entry(path)
    if isinstance(cached, dict) and all(isinstance(cached.get(k), (str, type(None))) for k in ("sass", "resources")):
        touch(path)  # it answered: used now
        return cached.get("sass"), cached.get("resources")
    out: dict[str, str | None] = {}
    with tempfile.TemporaryDirectory(prefix="tritonscope-") as tmp:
        cubin_path = Path(tmp) / "kernel.cubin"
        cubin_path.write_bytes(cubin)
        running = {}
        try:
            for name, flags, missing, failed in _TOOLS:
                if name == "nvdisasm" and not disassemble:
                    continue
                exe = triton_api.tool_path(name)
                if not (exe and Path(exe).exists()):
                    warnings.append(missing)
                    continue
                try:
                    running[name] = (triton_api.start_tool([exe, *flags, str(cubin_path)]), failed)
                except OSError as e:
                    warnings.append(f"{failed}: {e}")
            if meanwhile is not None and running:
                try:
                    meanwhile()
                except Exception:
                    pass
            for name in list(running):
                proc, failed = running.pop(name)
                try:
                    out[name] = triton_api.finish_tool(proc)
                except Exception as e:
                    warnings.append(f"{failed}: {(str(e).splitlines() or ['?'])[0]}")
        finally:
            for proc, _ in running.values():  # Ctrl-C while a tool ran
                proc.kill()
                proc.wait()
    sass, res = out.get("nvdisasm"), out.get("cuobjdump")
    if sass is not None and res is not None:
        write_cache(path, json.dumps({"sass": sass, "resources": res}))  # an optimisation only: failures pass
    return sass, res


def add_sass(artifact: Artifact) -> bool:
    """The SASS stage of a compile made with sass=False, disassembled now from the cubin Triton's cache holds
    (False, with a warning, when the cubin is not there or nvdisasm gives nothing)."""
    cubin = triton_api.cached_stage_file(artifact.kernel_hash, artifact.spec.kernel, "cubin")
    if not cubin:
        artifact.warnings.append("The cubin is not in Triton's cache: the SASS stage is missing.")
        return False
    sass, _ = sass_and_resources(cubin, artifact.warnings)
    if sass is None:
        return False
    artifact.stages["sass"] = sass
    return True


# Function matmul_kernel:
#     REG:40 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:528 TEXTURE:0 SURFACE:0 SAMPLER:0
_RES_RE = re.compile(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")


def hip_resources(compiled, warnings: list[str]) -> Resources:
    """Registers, LDS and scratch of an AMD kernel, read from its code object (the hsaco)."""
    from tritonscope.inputs import codeobject

    dynamic = int(compiled.metadata.get("shared") or 0)
    hsaco = compiled.asm.get("hsaco")
    if not isinstance(hsaco, (bytes, bytearray)):
        warnings.append("No hsaco in Triton's output: registers and scratch are unknown.")
        return Resources(dynamic_shared=dynamic)
    try:
        k = codeobject.kernel(bytes(hsaco), compiled.metadata.get("name"))
    except (codeobject.CodeObjectError, IndexError, ValueError) as e:
        warnings.append(f"Could not read the code object, so registers are unknown: {e}")
        return Resources(dynamic_shared=dynamic)
    return Resources(registers=k.vgprs, agprs=k.agprs, sgprs=k.sgprs, stack=k.scratch, static_shared=k.lds_static,
                     dynamic_shared=dynamic, vgpr_spills=k.vgpr_spills, sgpr_spills=k.sgpr_spills)


def cuda_resources(text: str | None, metadata: dict[str, Any]) -> Resources:
    dynamic = int(metadata.get("shared") or 0)
    m = _RES_RE.search(text or "")
    if not m:
        return Resources(dynamic_shared=dynamic)
    reg, stack, shared, local = map(int, m.groups())
    return Resources(registers=reg, stack=stack, static_shared=shared, local=local,
                     dynamic_shared=dynamic)


def compile_in_child(payload: dict) -> dict:
    """child.run_in_child's side of `compile_elsewhere`: the Config compiled here, the Artifact encoded."""
    from tritonscope.pipeline.binding import build_spec
    from tritonscope.pipeline.config import Config
    from tritonscope.pipeline.result_cache import encode_artifact

    loaded = build_spec(Config(**payload["config"]))
    return encode_artifact(compile_artifact(loaded, guard=False))


def compile_elsewhere(config, *, timeout: float | None = None, what: str = "The compile", env=None,
                      python: str | None = None) -> Artifact:
    """Compile `config` in a child process: one stopped after `timeout` seconds (`compile --timeout`), or
    one of another Python (`python`, `env`: a Triton of tritonscope/versions, diff's `triton=`).

    Triton's compile cannot be interrupted from inside the process (it runs in
    C++ and in ptxas), so it runs in a child of its own process group, which
    is killed whole, ptxas included, when time is up.  Nothing is written: the
    caller saves reports only after this returns, and Triton writes its cache
    atomically.  Raises CompileTimeoutError (exit 11).
    """
    from tritonscope.core.child import ChildTimeoutError, run_in_child
    from tritonscope.core.errors import CompileTimeoutError
    from tritonscope.pipeline.result_cache import decode_artifact

    extra = {k: v for k, v in (("timeout", timeout), ("env", env), ("python", python)) if v is not None}
    try:
        data = run_in_child("tritonscope.pipeline.compile:compile_in_child", {"config": config.payload()},
                            what=what, **extra)
    except ChildTimeoutError:
        raise CompileTimeoutError(
            f"The compile of {config.target} did not finish within {timeout:g} s; it was stopped. "
            "Nothing was written.",
            hint="Give it more time (--timeout), or use a smaller block, fewer stages or fewer warps.") from None
    return decode_artifact(data)
