"""Recompiling what was found, elsewhere: from the captured Python function or the TTIR, with the recorded environment and ptxas."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tritonscope.language.dialects import SOURCE
from tritonscope.language.dialects import stages as dialect_stages
from tritonscope.core.errors import InputFileError, UsageError, close_matches
from tritonscope.core.model import ARCHES, Artifact
from tritonscope.language.mlir_syntax import LOOP_OP
from tritonscope.inputs.sources.load import _PTX_VERSION_RE, _kind_words, _tool_words, recorded_environment, recorded_option
from tritonscope.inputs.sources.model import KernelEntry, binary_ext
from tritonscope.inputs.sources.readers import _read_text

def recompile(entry: KernelEntry, original: Artifact, *, arch: str | None = None, num_warps: int | None = None,
              num_stages: int | None = None, constexprs: dict[str, Any] | None = None,
              options: dict[str, Any] | None = None) -> Artifact:
    """The entry's kernel compiled again, with its exact specialization, for another target/config.

    A captured kernel recompiles from its Python function, through Triton's
    ASTSource with the captured signature, constexprs and attributes (the
    path a launch takes), importing the kernel's module in a child process:
    only the front end run again reproduces the original TTIR, because
    Triton's parser drops the names of a loop's induction variable and
    loop-carried values when it reads IR text back.  Where there is no
    Python function (a cache or dump records no constexprs), or it does not
    import or compile here, it recompiles from the TTIR `make_ir` gave
    (`.source`; else the optimised `.ttir`), which carries the launch's
    specialization (divisibility, constexprs folded in), and a warning says
    why and what that renames.

    The compile's code-generation environment is replayed
    (recorded_environment: the capture's record, and the cache-invalidating
    variables Triton wrote into the metadata).  When it differs from this
    process's, the compile runs in a child process with that environment
    (Triton caches the ptxas version and the LLVM features per process, so
    switching a variable here would not be enough, and would leak); a
    recorded tool that is not on this machine is replaced by Triton's
    bundled one, and a warning says so.
    """
    import time

    if entry.kind == "inductor-kernel":   # compiled again as Inductor would, for --arch (inductor_compile.py)
        from tritonscope.inputs.sources.inductor_compile import compile_inductor

        if constexprs or options:
            raise UsageError("-c and launch options do not apply to an Inductor kernel: Inductor's heuristics (or "
                             "its .best_config) choose its constexprs and options.",
                             hint="Leave them out; --arch, --num-warps and --num-stages apply.")
        from tritonscope.inputs.kernels import canonical_arch

        if (arch is None or canonical_arch(arch) == original.spec.arch) and num_warps is None and num_stages is None:
            return original   # load_artifact compiled it for this arch already (as Inductor would)
        return compile_inductor([entry], arch=arch, num_warps=num_warps, num_stages=num_stages)[0].artifact
    target = _target(arch, original)
    launch = _launch(entry, original, target, num_warps, num_stages, options)
    started = time.perf_counter()
    replay = _replay(entry, original, target, launch.notes)
    payload, ttir_payload, how = _payloads(entry, original, target, launch, constexprs)
    compiled, used_tools, how = _compile_or_fall_back(entry, original, target, replay, payload, ttir_payload, how,
                                                      launch.notes)
    warnings = _recompile_warnings(entry, original, target, launch, replay, how, compiled, used_tools)
    return _recompiled_artifact(original, target, launch, replay, constexprs, compiled, warnings, started)


@dataclass(frozen=True)
class _Target:
    """The arch a recompile is for, as the compile needs it."""
    name: str                     # canonical: sm_90a, gfx942
    capability: int | None        # None for an AMD target: it is named by `where`
    where: dict[str, Any]         # {"capability": 90} or {"target": ("hip", "gfx942", 64)}
    backend: str                  # "cuda" or "hip"
    was_capability: int | None    # the original's, to know a recompile for its own arch


def _target(arch: str | None, original: Artifact) -> _Target:
    """The named arch (else the original's), refused when unknown or when this Triton lacks its backend."""
    from tritonscope import triton_api
    from tritonscope.core.errors import CompileError
    from tritonscope.inputs.kernels import canonical_arch

    arch_name = canonical_arch(arch) if arch else original.spec.arch
    if arch_name not in ARCHES:
        raise UsageError(f"The original target {arch_name!r} is unknown; name one with --arch.")
    target_arch = ARCHES[arch_name]
    backend = target_arch.backend
    if backend == "hip" and not triton_api.has_backend("amd"):
        raise CompileError(f"Triton {triton_api.triton_version()} has no HIP backend, so it cannot recompile for "
                           f"{arch_name}.", hint="Install a Triton wheel that includes triton/backends/amd.")
    return _Target(arch_name, target_arch.capability, target_arch.target_words(), backend,
                   getattr(ARCHES.get(original.spec.arch), "capability", None))


@dataclass
class _Launch:
    """The launch options the recompile uses, what it had to guess, and the notes it has to say."""
    warps: int
    stages: int
    extra: dict[str, Any]         # maxnreg, num_ctas, enable_fp_fusion
    guessed: list[str]            # "num_warps=4": taken from Triton's defaults, said, never silent
    notes: list[str]


def _launch(entry: KernelEntry, original: Artifact, target: _Target, num_warps: int | None,
            num_stages: int | None, options: dict[str, Any] | None) -> _Launch:
    warps = num_warps or original.spec.num_warps
    stages_n = num_stages if num_stages is not None else (original.spec.num_stages or 3)
    guessed = []
    for option, given, used in (("num_warps", num_warps, warps), ("num_stages", num_stages, stages_n)):
        if given is None and recorded_option(entry, option) is None:
            guessed.append(f"{option}={used}")
    extra = {k: v for k, v in (original.spec.options or {}).items() if k in ("maxnreg", "num_ctas", "enable_fp_fusion")}
    extra.update(options or {})
    notes: list[str] = []
    if target.backend == "hip" and "maxnreg" in extra:  # the HIP backend has no such option (a launch with it fails)
        notes.append(f"maxnreg={extra.pop('maxnreg')} is a CUDA launch option; the recompile for {target.name} "
                     "leaves it out.")
    was = ARCHES.get(original.spec.arch)
    if was is not None and was.backend != target.backend:
        notes.append(_cross_vendor_note(was.backend, target.name))
    return _Launch(warps, stages_n, extra, guessed, notes)


@dataclass
class _Replay:
    """The compile's recorded environment as this machine can replay it."""
    recorded: dict[str, Any]      # recorded_environment(entry)
    env: dict[str, str]           # the environment to compile in
    missing: dict[str, str]       # recorded tool variables whose file is not here
    names: set[str]               # the variables replayed
    differs: bool                 # from this process's: compile in a child


def _replay(entry: KernelEntry, original: Artifact, target: _Target, notes: list[str]) -> _Replay:
    from tritonscope import triton_api

    recorded = recorded_environment(entry)
    env, missing, names = triton_api.replay_environment(recorded["vars"], complete=recorded["complete"],
                                                         cache_vars_known=recorded["cache_vars_known"])
    # The original's ptxas (the recorded file, else one of its version here) for a recompile for its own arch:
    # the PTX `.version` line follows the ptxas, and this Triton may read another knob for this arch.
    recorded_ptxas = recorded["tools"].get("ptxas") or {}
    capability = target.capability
    if target.backend == "cuda" and capability and capability == target.was_capability \
            and recorded_ptxas.get("version"):
        ptxas_used = triton_api.use_original_ptxas(recorded_ptxas, capability, env)
        if ptxas_used is not None:
            missing = {k: v for k, v in missing.items() if k != recorded_ptxas.get("knob")
                       and k not in ptxas_used["knobs"].split(", ")}
            names = set(names) | set(ptxas_used["knobs"].split(", "))
            if any(env.get(k) == ptxas_used["path"] for k in ptxas_used["knobs"].split(", ")):
                notes.append(_ptxas_note(recorded_ptxas, ptxas_used, target.name))  # not Triton's own choice
    differs = any(env.get(k) != os.environ.get(k) for k in names)
    return _Replay(recorded, env, missing, names, differs)


def _ir_words(entry: KernelEntry) -> str:
    return "from its " + ("pre-pass TTIR (.source)" if "source" in entry.files else "TTIR")


def _payloads(entry: KernelEntry, original: Artifact, target: _Target, launch: _Launch,
              constexprs: dict[str, Any] | None):
    """(The payload to compile, the TTIR one to fall back on or None, how in words): the Python function
    when a capture recorded it, else the IR (refused when -c asks for what the IR has folded in)."""
    record = entry.record or {}
    ir_path = entry.files.get("source") or entry.files.get("ttir")
    ast_ok = record.get("constants") is not None and record.get("module_text") is not None
    payload: dict[str, Any] = {"capability": target.capability, "target": list(target.where.get("target") or [])
                               or None, "num_warps": launch.warps, "num_stages": launch.stages,
                               "options": launch.extra, "kernel": entry.name, "file": original.spec.file}
    ttir_payload = None
    if not constexprs and ir_path is not None:
        ttir_payload = {**payload, "how": "ttir", "ttir": _read_text(ir_path)}
    if ast_ok:
        # The Python function first: Triton's parser renames a loop's induction variable and iter_args, so
        # only the front end run again gives the original text.  It imports the kernel's module (runs its
        # top level, which may import torch), so it runs in a child process.
        payload.update(how="ast", record=record, constexprs=dict(constexprs or {}))
        return payload, ttir_payload, "from its captured Python function (imported in a child process)"
    if constexprs:
        raise UsageError("This kernel's constexprs are folded into its IR: -c cannot change them.",
                         hint="Capture the program with `tritonscope capture` to recompile with other "
                              "constexprs, or compile the kernel's file directly.")
    if ttir_payload is None:
        raise InputFileError(f"{entry.name} cannot be recompiled: this {_kind_words(entry)} has no TTIR "
                             "(a binary-only cache keeps just the cubin).",
                             hint="Run the program again without TRITON_STORE_BINARY_ONLY, or capture it.")
    if _has_loop_values(ttir_payload["ttir"]):
        launch.notes.append(_renamed_note(f"this {_kind_words(entry)} records no Python function to compile "
                                          "(only a capture keeps the constexprs and the module)"))
    return ttir_payload, ttir_payload, _ir_words(entry)


def _compile_or_fall_back(entry: KernelEntry, original: Artifact, target: _Target, replay: _Replay,
                          payload: dict[str, Any], ttir_payload: dict[str, Any] | None, how: str,
                          notes: list[str]):
    """(Compiled, the tools it used, how in words); a captured function that does not import or compile here
    falls back on the IR (said, with why).  Errors are typed and name the recompile."""
    from tritonscope.core.child import ChildDiedError
    from tritonscope.core.errors import CompileError, TritonscopeError

    in_child = replay.differs or payload["how"] == "ast"
    try:
        try:
            compiled, used_tools = _compile_payload(payload, replay.env, in_child, entry.name)
        except (InputFileError, CompileError, ChildDiedError) as e:
            if payload["how"] != "ast" or ttir_payload is None:
                raise
            # the captured module does not import or compile here: the IR still can (said, with why)
            why = e.message.rstrip(".")
            payload, how, in_child = ttir_payload, _ir_words(entry), replay.differs
            notes.insert(0, f"The captured Python function could not be compiled here ({why}), so the recompile "
                            "used its IR instead."
                         + (" " + _renamed_note("") if _has_loop_values(ttir_payload["ttir"]) else ""))
            compiled, used_tools = _compile_payload(payload, replay.env, in_child, entry.name)
    except (UsageError, InputFileError):
        raise
    except KeyboardInterrupt:
        raise
    except TritonscopeError as e:  # a typed error from the child
        if isinstance(e, CompileError):
            e.message = f"Recompiling {entry.name} for {target.name} failed: " + e.message
            e.data["recompile"] = {**payload, "arch_name": target.name}   # what failed: analyses/failure reads it
        raise
    except Exception as e:
        from tritonscope.inputs.compile_errors import compile_error

        err = compile_error(e, original.spec)
        if isinstance(err, CompileError):
            err.message = f"Recompiling {entry.name} for {target.name} failed: " + err.message
            err.data["recompile"] = {**payload, "arch_name": target.name}
        raise err from e
    return compiled, used_tools, how


def _recompile_warnings(entry: KernelEntry, original: Artifact, target: _Target, launch: _Launch,
                        replay: _Replay, how: str, compiled, used_tools: dict[str, Any]) -> list[str]:
    """What was done, then each way the recompile may differ from the original, in words."""
    setting = ""
    if replay.differs:
        shown = ", ".join(f"{k}={v}" for k, v in _replayed(replay).items()) or "none set"
        setting = f", in a process with the compile's recorded environment ({shown})"
    warnings = [f"Recompiled {how} for {target.name} (w{launch.warps} s{launch.stages}){setting}.", *launch.notes]
    guessed = launch.guessed
    if guessed:
        warnings.insert(1, f"{' and '.join(guessed)} {'is a guess' if len(guessed) == 1 else 'are guesses'}: "
                           f"this {_kind_words(entry)} does not record "
                           f"{' or '.join(g.split('=')[0] for g in guessed)}, so the recompile used Triton's "
                           "default, which the original kernel may not have used (name it with "
                           + " / ".join(f"--{g.split('=')[0].replace('_', '-')}" for g in guessed) + ").")
    warnings += _replay_warnings(replay.recorded, replay.missing, used_tools, original.stages.get("ptx", ""),
                                 compiled.asm.get("ptx") or "", target.capability,
                                 searched=target.backend == "cuda" and target.capability == target.was_capability)
    return warnings


def _replayed(replay: _Replay) -> dict[str, str]:
    return {k: replay.env[k] for k in sorted(replay.names) if k in replay.env}


def _recompiled_artifact(original: Artifact, target: _Target, launch: _Launch, replay: _Replay,
                         constexprs: dict[str, Any] | None, compiled, warnings: list[str],
                         started: float) -> Artifact:
    """The Artifact of the recompile: its stages, resources (and SASS), spec and binary (for --emit)."""
    import time

    from tritonscope import triton_api

    from tritonscope.inputs.codeobject import hip_resources
    from tritonscope.triton_api.cubin import cuda_resources, sass_and_resources

    stages: dict[str, str] = {}
    if "python" in original.stages:
        stages["python"] = original.stages["python"]
    for d in dialect_stages(target.backend):  # the texts Triton gives for this backend's stages, in pipeline order
        if d.key != SOURCE and isinstance(compiled.asm.get(d.key), str):
            stages[d.key] = compiled.asm[d.key]
    if target.backend == "hip":
        resources = hip_resources(compiled, warnings)
    else:
        sass, res = sass_and_resources(compiled.asm.get("cubin"), warnings)
        if sass is not None:
            stages["sass"] = sass
        resources = cuda_resources(res, compiled.metadata)
    spec = replace(original.spec, arch=target.name, num_warps=launch.warps, num_stages=launch.stages,
                   constexprs={**original.spec.constexprs, **(constexprs or {})},
                   options={**{k: v for k, v in original.spec.options.items()
                               if k not in ("maxnreg", "num_ctas", "enable_fp_fusion")}, **launch.extra})
    artifact = Artifact(
        spec=spec, triton_version=triton_api.triton_version(), kernel_hash=compiled.kernel_hash, stages=stages,
        python_first_line=original.python_first_line,
        metadata={k: compiled.metadata[k] for k in sorted(compiled.metadata) if k != "hash"},
        resources=resources, specialization=list(original.specialization),
        warnings=warnings, env=_replayed(replay), compile_seconds=time.perf_counter() - started,
        remarks=list(getattr(compiled, "remarks", []) or []))  # none when Triton's cache answered
    binary = binary_ext(target.backend)
    blob = compiled.asm.get(binary) if binary else None
    artifact._binaries = {binary: bytes(blob)} if isinstance(blob, (bytes, bytearray)) else {}  # for --emit
    return artifact


def _compile_payload(payload: dict[str, Any], env: dict[str, str], in_child: bool, name: str):
    """(Compiled, the tools it used): in a child process with `env`, or here."""
    from tritonscope import triton_api

    if in_child:
        from tritonscope.core.child import run_in_child

        answer = run_in_child("tritonscope.inputs.sources:_recompile_child", payload, env=env,
                              what=f"The recompile of {name} (with its recorded environment)")
        return _compiled_from_json(answer["compiled"]), answer["tools"]
    capability = payload["capability"]
    return _compile_now(payload), (triton_api.compile_tools(capability) if capability else {})


# A loop whose values Triton's parser renames when it reads IR text back:
#   %acc = scf.for %k = %c0_i32 to %K step %c32_i32 iter_args(%acc_1 = %cst) -> (tensor<32x32xf32>)  : i32 {
# (mlir_syntax.LOOP_OP)


def _has_loop_values(ttir: str) -> bool:
    return bool(LOOP_OP.search(ttir or ""))


def _renamed_note(why: str) -> str:
    """Why a recompile from IR text may differ from the original in SSA names (and only there)."""
    lead = f"Recompiled from IR text because {why}: " if why else ""
    return (lead + "Triton's parser drops the names its front end gave a loop's induction variable and "
            "loop-carried values, so the recompile's TTIR and TTGIR may name those values differently from the "
            "original's (%arg_1 for %acc_1); the code is the same.")


def _cross_vendor_note(was: str, arch_name: str) -> str:
    """What a recompile across vendors keeps of the original launch's specialization, said plainly."""
    if was == "cuda":
        return ("The TTIR carries the specialization a CUDA launch made; a launch on an AMD GPU also marks tensors "
                "under 2 GiB with tt.pointer_range = 32 (which allows buffer loads), and this TTIR has no such "
                f"marks, so the code may differ from what a real {arch_name} launch compiles.")
    return ("The TTIR carries an AMD launch's specialization (tt.pointer_range = 32 on tensors under 2 GiB); the "
            f"CUDA backend has no use for it, so {arch_name} compiles as a CUDA launch with the same divisibility "
            "would.")


def _compile_now(payload: dict[str, Any]):
    """Compile what `payload` describes in this process (recompile's work; also run in its child)."""
    from tritonscope import triton_api

    common = dict(capability=payload["capability"], num_warps=payload["num_warps"],
                  num_stages=payload["num_stages"], options=payload.get("options") or {},
                  target=tuple(payload["target"]) if payload.get("target") else None)
    if payload["how"] == "ast":
        record = payload["record"]
        fn = _captured_function(record)
        names = list(record["signature"])
        constants = {tuple(k): v for k, v in record["constants"]}
        from tritonscope.inputs.kernels import parse_scalar

        for name, value in (payload.get("constexprs") or {}).items():
            if name not in names or record["signature"][name] != "constexpr":
                raise UsageError(f"{payload['kernel']} has no constexpr {name!r}.{close_matches(name, names)}",
                                 hint="Its constexprs: " + ", ".join(n for n in names
                                                                     if record['signature'][n] == 'constexpr'))
            constants[(names.index(name),)] = parse_scalar(value)
        attrs = {tuple(k): v for k, v in record.get("attrs_raw") or []}
        return triton_api.compile_ast(fn, dict(record["signature"]), constants, attrs, **common)
    return triton_api.compile_from_ttir(payload["ttir"], **common)


def _recompile_child(payload: dict[str, Any]) -> dict[str, Any]:
    """child.run_in_child entry: compile in this (fresh) process, whose environment is the recorded one."""
    import base64
    from types import SimpleNamespace

    from tritonscope import triton_api
    from tritonscope.core.errors import TritonscopeError
    from tritonscope.inputs.compile_errors import compile_error

    try:
        compiled = _compile_now(payload)
    except TritonscopeError:
        raise
    except Exception as e:  # typed like an in-process compile's error (which reads the constexprs given)
        from tritonscope.inputs.kernels import parse_scalar

        given = {k: parse_scalar(v) for k, v in (payload.get("constexprs") or {}).items()}
        jit_fn = None
        if payload.get("how") == "ast":   # its lines numbered from the def in its file (was from 1: ':2')
            try:
                jit_fn = _captured_function(payload["record"])
            except Exception:
                jit_fn = None
        raise compile_error(e, SimpleNamespace(kernel=payload["kernel"], file=payload["file"], constexprs=given,
                                               args={}), jit_fn) from e
    asm = {k: ({"base64": base64.b64encode(v).decode()} if isinstance(v, bytes) else str(v))
           for k, v in compiled.asm.items()}
    return {"compiled": {"asm": asm, "metadata": compiled.metadata, "kernel_hash": compiled.kernel_hash,
                         "remarks": compiled.remarks},
            "tools": triton_api.compile_tools(payload["capability"]) if payload["capability"] else {}}


def _compiled_from_json(data: dict[str, Any]):
    import base64

    from tritonscope.triton_api import Compiled

    asm = {k: (base64.b64decode(v["base64"]) if isinstance(v, dict) else v) for k, v in data["asm"].items()}
    return Compiled(asm=asm, metadata=data["metadata"], kernel_hash=data["kernel_hash"],
                    remarks=data.get("remarks") or [], cache_hit=False)


# A metadata key that is an environment variable Triton's cache key named: TRITON_DEFAULT_FP_FUSION


def _ptxas_note(recorded: dict[str, Any], used: dict[str, str], arch_name: str) -> str:
    """Which ptxas stands in for the original's, and through which variable."""
    if used["how"] == "recorded":
        text = f"Used the original's ptxas {used['version']} ({used['path']})"
    else:
        text = (f"The original's ptxas ({recorded.get('path') or 'its path not recorded'}) is not on this machine; "
                f"used {used['path']}, a ptxas of the same version ({used['version']})")
    return text + f", through {used['knobs']} (what this Triton reads for {arch_name})."


_SEARCHED = "the recorded path, Triton's bundled ptxas, $CUDA_HOME/bin, /usr/local/cuda*/bin and PATH"


def _replay_warnings(recorded: dict[str, Any], missing: dict[str, str], used_tools: dict[str, Any],
                     original_ptx: str, new_ptx: str, capability: int, *, searched: bool = False) -> list[str]:
    """Say plainly where the recompile could not use the compile's own environment."""
    out = []
    was = _PTX_VERSION_RE.search(original_ptx or "")
    now = _PTX_VERSION_RE.search(new_ptx or "")
    versions = f" (`.version {was.group(1)}` captured, `.version {now.group(1)}` now)" if was and now and \
        was.group(1) != now.group(1) else ""
    used = (used_tools or {}).get("ptxas") or {}
    recorded_tool = recorded["tools"].get("ptxas") or {}
    for key, path in sorted(missing.items()):
        if used and used.get("knob") != key and not (searched and recorded_tool.get("knob") == key):
            # e.g. TRITON_PTXAS_PATH when this Triton uses ptxas-blackwell here (for another arch than the original's)
            out.append(f"{key}={path} was set when this kernel was compiled and is not on this machine; "
                       f"this recompile does not use it (it uses {used.get('knob')}'s tool).")
            continue
        before = f" ({_tool_words(recorded_tool)})" if recorded_tool.get("knob") == key else ""
        instead = f"{used.get('path')} ({_tool_words(used)})" if used else "Triton's bundled tool"
        none_here = (f", and no ptxas {recorded_tool['version']} is here (looked at {_SEARCHED})"
                     if searched and before and recorded_tool.get("version") else "")
        out.append(f"{key}={path} was set when this kernel was compiled{before}, but that file is not on this "
                   f"machine{none_here}: recompiled with {instead} instead, so the PTX's ISA version{versions} and "
                   "perhaps its code and cubin differ from the original.")
    if not out and used and recorded_tool.get("version") and (searched or recorded_tool.get("knob") == used.get(
            "knob")) and str(recorded_tool["version"]) != str(used.get("version")):
        none_here = (f"; no ptxas {recorded_tool['version']} is on this machine (looked at {_SEARCHED})"
                     if searched else "")
        out.append(f"The original was compiled with {_tool_words(recorded_tool)}{none_here}: this recompile used "
                   f"{_tool_words(used)} ({used.get('path')}), so the PTX's ISA version{versions} and perhaps "
                   "its code differ.")
    if versions and not out:  # nothing recorded says why: the PTX itself shows another toolchain made it
        now_tool = f" ({_tool_words(used)}, {used.get('path')})" if used else ""
        out.append(f"The original's PTX says `.version {was.group(1)}`; this recompile's says "
                   f"`.version {now.group(1)}`: the original was compiled with another ptxas/CUDA than this "
                   f"recompile used{now_tool}, so its PTX and perhaps its code and cubin differ (run with "
                   "TRITON_PTXAS_PATH set to that ptxas to match it).")
    return out


def _captured_function(record: dict[str, Any]):
    """The JITFunction a capture recorded: its own file when unchanged, else the captured module text."""
    import hashlib
    import importlib.util
    import linecache
    import shutil
    import sys
    import tempfile

    from tritonscope import triton_api
    from tritonscope.core.console import prints_to_stderr

    text = record["module_text"]
    file = record.get("file") or ""
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    name = f"_tritonscope_captured_{digest}"
    module = sys.modules.get(name)
    if module is None:
        path, folder = Path(file), None
        if not (path.is_file() and path.read_text(encoding="utf-8", errors="replace") == text):
            # A new private folder (mode 0700) each time, never a fixed name in the shared temp folder: another
            # user could plant a module under a name known in advance, and importing it runs their code.
            folder = Path(tempfile.mkdtemp(prefix=f"tritonscope-captured-{digest}-"))
            base = Path(file).name
            path = folder / (base if base.endswith(".py") and not base.startswith(".") else "kernel.py")
            path.write_text(text, encoding="utf-8")
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            with prints_to_stderr():  # the module's prints must not corrupt `open --recompile --json`
                spec.loader.exec_module(module)
        except Exception as e:
            del sys.modules[name]
            raise InputFileError(f"The captured module of {record.get('name')} does not import here: "
                                 f"{type(e).__name__}: {e}",
                                 hint="Recompile on a machine with the program's packages (e.g. torch for Inductor "
                                      "kernels), or without -c (from the IR).") from e
        finally:
            if folder is not None:  # Triton read the source at import; tracebacks read it from linecache
                linecache.cache[str(path)] = (len(text), None, text.splitlines(True), str(path))
                shutil.rmtree(folder, ignore_errors=True)
    obj = getattr(module, record.get("qualname") or record.get("name"), None)
    fn = triton_api.jit_function(obj)
    if fn is None:
        raise InputFileError(f"{record.get('name')} is not a @triton.jit function in its captured module.")
    return fn
