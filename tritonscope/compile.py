"""KernelSpec -> Artifact: one real Triton compile plus SASS and resources.

The compile itself is Triton's (see triton_api.py); this module adds the
stages Triton does not give as text (Python source with its file line
numbers, SASS) and the resource usage, and checks that the config fits.
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
from typing import Any

from tritonscope import triton_api
from tritonscope.errors import CompileError, OutOfResourcesError
from tritonscope.kernels import DTYPES, Loaded, TensorArg, parse_arg_value
from tritonscope.model import ARCHES, ArgSpecialization, Artifact, Resources


def cache_dir() -> Path:
    """Where derived data (SASS, resource usage) is kept, keyed by kernel hash."""
    base = os.environ.get("TRITONSCOPE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tritonscope")
    return Path(base)


def launch_args(loaded: Loaded) -> list[Any]:
    """The runtime arguments as stand-ins Triton's specializer accepts."""
    out = []
    for name, value in loaded.spec.args.items():
        value = parse_arg_value(value)
        if isinstance(value, TensorArg):
            out.append(triton_api.StandInTensor(DTYPES[value.dtype]))
        else:
            out.append(value)
    return out


def compile_artifact(loaded: Loaded) -> Artifact:
    spec = loaded.spec
    arch = ARCHES[spec.arch]
    args = launch_args(loaded)
    constexprs = dict(spec.constexprs)
    started = time.perf_counter()
    compiled = _compile(loaded, args, constexprs, arch.capability)
    if _cached_from_other_file(compiled.asm.get("ttir", ""), spec.file):
        # Triton's cache key ignores the file a kernel came from, so an identical
        # kernel compiled from another path comes back with that path in every
        # location.  Compile this one afresh so the stages name the user's file.
        compiled = _compile(loaded, args, constexprs, arch.capability, fresh=True)
    seconds = time.perf_counter() - started

    specialization = [
        ArgSpecialization(name, ty, () if ty == "constexpr" else tuple(_attrs(attr)),
                          spec.constexprs.get(name, spec.args.get(name)) if ty == "constexpr" else None)
        for name, ty, attr in triton_api.specialization_of(loaded.jit_fn, args, constexprs, arch.capability)
    ]

    lines, first = inspect.getsourcelines(loaded.jit_fn.fn)
    stages: dict[str, str] = {"python": "".join(lines)}
    for key in ("ttir", "ttgir", "llir", "ptx"):
        if key in compiled.asm:
            stages[key] = compiled.asm[key]
    warnings: list[str] = []
    sass, resources_text = _derived(compiled, arch.capability, warnings)
    if sass is not None:
        stages["sass"] = sass
    resources = _resources(resources_text, compiled.metadata)
    return Artifact(
        spec=spec,
        triton_version=triton_api.version(),
        kernel_hash=compiled.kernel_hash,
        stages=stages,
        python_first_line=first,
        metadata={k: compiled.metadata[k] for k in sorted(compiled.metadata) if k not in ("hash",)},
        resources=resources,
        specialization=specialization,
        warnings=warnings,
        env=triton_api.codegen_env(),
        compile_seconds=seconds,
    )


# #loc = loc("/home/u/kernels/matmul.py":8:1)
_FILE_LOC_RE = re.compile(r'^#loc\d* = loc\("([^"]+\.py)":\d+:\d+\)', re.MULTILINE)


def _cached_from_other_file(ttir: str, file: str) -> str | None:
    """The kernel file the IR's locations name, when it is not `file`."""
    m = _FILE_LOC_RE.search(ttir)
    if m and os.path.realpath(m.group(1)) != os.path.realpath(file):
        return m.group(1)
    return None


def _compile(loaded: Loaded, args, constexprs, capability: int, fresh: bool = False):
    spec = loaded.spec
    try:
        return triton_api.compile_kernel(
            loaded.jit_fn, args, constexprs, capability=capability,
            num_warps=spec.num_warps, num_stages=spec.num_stages, fresh=fresh,
        )
    except KeyboardInterrupt:
        raise
    except Exception as e:  # Triton raises many types; classify what we can
        raise _compile_error(e, spec) from e


def _attrs(attr: str) -> list[str]:
    # "D" is Triton's code for "divisible by 16"; anything else is shown as is.
    if not attr:
        return []
    if attr == "D":
        return ["tt.divisibility=16"]
    return [attr]


def _compile_error(e: Exception, spec) -> Exception:
    if triton_api.is_out_of_resources(e):
        return OutOfResourcesError(str(e), hint="Use smaller blocks, fewer stages, or a bigger target.")
    info = triton_api.compilation_error_info(e)
    if info:
        message, lineno, line_text = info
        where = ""
        if lineno:
            src_first = _first_line(spec)
            file_line = (src_first + lineno - 1) if src_first else lineno
            where = f" at {Path(spec.file).name}:{file_line}"
        return CompileError(
            f"Triton could not compile {spec.kernel}{where}: {message}",
            context=line_text,
            hint="Fix the kernel source (or the constexprs it was given) and run again.",
        )
    text = str(e).strip() or type(e).__name__
    first = text.splitlines()[0]
    return CompileError(
        f"Triton failed while compiling {spec.kernel}: {type(e).__name__}: {first}",
        context="\n".join(text.splitlines()[1:12]) or None,
        hint="Rerun with --debug for the full traceback.",
    )


def _first_line(spec) -> int | None:
    """File line of the `def`: Triton numbers error lines from there (decorators are cut)."""
    try:
        from tritonscope.kernels import load_for_spec

        lines, first = inspect.getsourcelines(load_for_spec(spec).fn)
    except Exception:
        return None
    offset = next((i for i, text in enumerate(lines) if re.match(r"\s*def\s", text)), 0)
    return first + offset


# --------------------------------------------------------------------------
# SASS and resources (cached by kernel hash: nvdisasm costs ~0.2 s)
# --------------------------------------------------------------------------


def _derived(compiled, capability: int, warnings: list[str]) -> tuple[str | None, str | None]:
    cubin = compiled.asm.get("cubin")
    if not cubin:
        warnings.append("No cubin in Triton's output: SASS and resource usage are not available.")
        return None, None
    key = hashlib.sha256(cubin).hexdigest()[:32]
    path = cache_dir() / "derived" / f"{key}.json"
    try:
        cached = json.loads(path.read_text())
        return cached["sass"], cached["resources"]
    except (OSError, ValueError, KeyError):
        pass
    sass = res = None
    with tempfile.TemporaryDirectory(prefix="tritonscope-") as tmp:
        cubin_path = Path(tmp) / "kernel.cubin"
        cubin_path.write_bytes(cubin)
        nvdisasm = triton_api.tool_path("nvdisasm")
        if nvdisasm and Path(nvdisasm).exists():
            try:
                sass = triton_api.run_tool([nvdisasm, "-c", "-g", str(cubin_path)])
            except Exception as e:
                warnings.append(f"nvdisasm failed, so there is no SASS stage: {str(e).splitlines()[0]}")
        else:
            warnings.append("nvdisasm was not found (set TRITON_NVDISASM_PATH): the SASS stage is missing.")
        cuobjdump = triton_api.tool_path("cuobjdump")
        if cuobjdump and Path(cuobjdump).exists():
            try:
                res = triton_api.run_tool([cuobjdump, "-res-usage", str(cubin_path)])
            except Exception as e:
                warnings.append(f"cuobjdump failed, so registers are unknown: {str(e).splitlines()[0]}")
        else:
            warnings.append("cuobjdump was not found (set TRITON_CUOBJDUMP_PATH): registers are unknown.")
    if sass is not None and res is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp_path = path.with_suffix(f".{os.getpid()}.tmp")
            tmp_path.write_text(json.dumps({"sass": sass, "resources": res}))
            os.replace(tmp_path, path)
        except OSError:
            pass  # the cache is an optimisation only
    return sass, res


# Function matmul_kernel:
#     REG:40 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:528 TEXTURE:0 SURFACE:0 SAMPLER:0
_RES_RE = re.compile(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")


def _resources(text: str | None, metadata: dict[str, Any]) -> Resources:
    dynamic = int(metadata.get("shared") or 0)
    m = _RES_RE.search(text or "")
    if not m:
        return Resources(dynamic_shared=dynamic)
    reg, stack, shared, local = map(int, m.groups())
    return Resources(registers=reg, stack=stack, static_shared=shared, local=local,
                     dynamic_shared=dynamic)


# --------------------------------------------------------------------------
# Does it fit?
# --------------------------------------------------------------------------


def fit_problems(artifact: Artifact) -> list[str]:
    """Why this config cannot launch on its arch (empty when it fits)."""
    arch = ARCHES[artifact.spec.arch]
    res = artifact.resources
    problems = []
    # Triton's own launch-time check compares the dynamic size alone
    # (CompiledKernel._init_handles raises OutOfResources on it).
    shared = res.dynamic_shared
    if shared > arch.max_shared_per_block:
        problems.append(
            f"needs {shared} bytes of shared memory per block; {arch.name} ({arch.gpus}) "
            f"has {arch.max_shared_per_block}")
    threads = artifact.spec.num_warps * 32
    if res.registers and res.registers * threads > arch.regs_per_sm:
        problems.append(
            f"needs {res.registers} registers x {threads} threads = {res.registers * threads}; "
            f"an SM has {arch.regs_per_sm}")
    return problems


def occupancy(artifact: Artifact) -> dict[str, Any]:
    """Blocks per SM allowed by shared memory, registers and threads."""
    arch = ARCHES[artifact.spec.arch]
    res = artifact.resources
    threads = artifact.spec.num_warps * 32
    limits: dict[str, int] = {
        "threads": arch.max_threads_per_sm // threads,
        "blocks": arch.max_blocks_per_sm,
    }
    shared = res.dynamic_shared
    if shared:
        # the driver reserves 1 KiB of shared memory per block on sm_80+
        limits["shared"] = arch.shared_per_sm // (shared + 1024) if shared <= arch.max_shared_per_block else 0
    if res.registers:
        # registers are allocated per warp in units of 256
        per_warp = -(-res.registers * 32 // 256) * 256
        limits["registers"] = arch.regs_per_sm // (per_warp * artifact.spec.num_warps)
    blocks = min(limits.values())
    return {
        "blocks_per_sm": blocks,
        "warps_per_sm": blocks * artifact.spec.num_warps,
        "occupancy": blocks * threads / arch.max_threads_per_sm,
        "limited_by": min(limits, key=limits.get),
        "limits": limits,
    }
