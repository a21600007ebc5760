"""Opening one kernel: its stages read now, its spec from what the files record (guesses marked), the recorded environment."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from tritonscope.language.dialects.ptx import VERSION as _PTX_VERSION_RE  # noqa: F401  (recompile's)
from tritonscope.language.mlir_syntax import FUNC_ARGS, TT_INT_ATTR, TYPED_ARG
from tritonscope.inputs import codeobject
from tritonscope.inputs.capture import recorded_scalars
from tritonscope.language.dialects import SOURCE
from tritonscope.language.dialects import stages as dialect_stages
from tritonscope.core.errors import InputFileError
from tritonscope.core.model import ArgSpecialization, Artifact, KernelSpec
from tritonscope.inputs.sources.model import KernelEntry, TEXT_STAGES, binary_ext, expected_files
from tritonscope.inputs.sources.readers import _read_text, check_size

# Opening one kernel: the stages, read now
# --------------------------------------------------------------------------


def load_artifact(entry: KernelEntry, *, target: str = "") -> Artifact:
    """Read every stage the entry has into an Artifact; what it lacks goes into `warnings`.

    The stages are those of the entry's backend, in the dialect registry's
    order.  CUDA: SASS comes from a `.sass` file when there is one, else from
    the cubin through nvdisasm (triton_api/cubin.py), as do the resources.
    HIP: the resources come from the hsaco's code-object metadata (else from
    the same metadata in the AMDGCN); an hsaco alone shows its summary only
    (tritonscope does not disassemble it).
    """
    from tritonscope.triton_api.cubin import cuda_resources, sass_and_resources

    if entry.kind == "inductor-kernel":   # a kernel file Inductor generated: compiled here, as Inductor would
        from tritonscope.inputs.sources.inductor_compile import compile_inductor

        return compile_inductor([entry])[0].artifact
    warnings: list[str] = []
    stages: dict[str, str] = {}
    python, first = _python_stage(entry, warnings)
    if python is not None:
        stages["python"] = python
    backend = entry.backend
    for path in entry.files.values():  # every file bounded before any is read
        check_size(path)
    for d in dialect_stages(backend):  # pipeline order: ttir ttgir llir ptx sass / ttir ttgir llir amdgcn
        if d.key != SOURCE and d.key in entry.files:
            stages[d.key] = _read_text(entry.files[d.key])
    binary = binary_ext(backend)
    blob = _read_binary(entry, binary)
    metadata = {k: entry.metadata[k] for k in sorted(entry.metadata) if k != "hash"}
    if entry.record and entry.record.get("options"):
        metadata = {**entry.record["options"], **metadata}
    if backend == "hip":
        resources = _amd_resources(entry, blob, metadata, warnings)
    else:
        resources_text = None
        if blob is not None:
            sass, resources_text = sass_and_resources(blob, warnings)
            if sass is not None and "sass" not in stages:
                stages["sass"] = sass
        resources = cuda_resources(resources_text, metadata)
        if resources.registers is None and entry.registers is not None:  # no cuobjdump: the ELF's own numbers
            resources = replace(resources, registers=entry.registers, stack=entry.stack,
                                static_shared=entry.static_shared)
    expected = expected_files(backend)
    lacking = [k for k in expected if k not in stages and not (k == binary and blob is not None)]
    if lacking:
        binary_only = entry.kind != "file" and entry.files.keys() <= {binary, "json", "source"}
        warnings.append(f"This {_kind_words(entry)} has no {', '.join(lacking)}: "
                        + ("only the binary was kept (TRITON_STORE_BINARY_ONLY)." if binary_only
                           else "those stages are not shown.")
                        + ("" if blob is not None else " " + _WITHOUT_BINARY[binary](stages)))
    if not stages and (blob is None or backend != "hip"):
        raise InputFileError(f"{entry.key} has no stage tritonscope can show (no IR, no PTX or AMDGCN, and no SASS "
                             "from a cubin).", context="\n".join(warnings) or None)
    if not stages:  # an hsaco alone: its summary is what there is
        warnings.append("An hsaco alone: tritonscope reads its metadata (registers and scratch: the summary) "
                        "but does not disassemble it, so there is no stage to show; open the folder that holds "
                        "its .amdgcn and IR for those.")
    warnings += _environment_notes(entry)
    gpuless = entry.launch_info.get("gpuless") if entry.kind == "capture" else None
    if isinstance(gpuless, dict):  # capture --arch: compiled, not run (as open's listing says)
        warnings.append(f"Outputs not computed (captured with no GPU): compiled for {gpuless.get('arch') or '?'} and "
                        "not run, so the program went on with whatever this kernel's output buffers held.")
    spec, specialization = _spec_of(entry, target or str(entry.folder or entry.files[next(iter(entry.files))]))
    if "shared" not in entry.metadata:
        metadata = {**metadata, "shared_recorded": False}  # summary.py: shown as unknown, never as 0 bytes
        memory = "LDS" if backend == "hip" else "shared memory"
        warnings.append(f"The {memory} Triton allocates at launch is recorded only in its metadata .json, which "
                        f"this {_kind_words(entry)} lacks: it is unknown, and so is the occupancy.")
    if recorded_option(entry, "num_stages") is None:
        warnings.append(f"This {_kind_words(entry)} does not record num_stages: the config shows Triton's "
                        f"default for {spec.arch} ({spec.num_stages}), a guess the kernel may not have used.")
    if recorded_option(entry, "num_warps") is None:
        warnings.append(f"This {_kind_words(entry)} does not record num_warps (no metadata, and no thread count "
                        f"in its files): the config shows Triton's default ({spec.num_warps}), a guess.")
    if spec.arch == "?":
        warnings.append(f"This {_kind_words(entry)} does not record its target (Triton's NVIDIA LLVM IR names no "
                        "SM): the target is unknown, so nothing here is judged against an arch.")
    return Artifact(
        spec=spec,
        triton_version=str(entry.metadata.get("triton_version") or (entry.record or {}).get("triton_version") or "?"),
        kernel_hash=str(entry.metadata.get("hash") or entry.key),
        stages=stages,
        python_first_line=first,
        metadata=metadata,
        resources=resources,
        specialization=specialization,
        warnings=warnings,
        env=recorded_environment(entry)["vars"],
    )


# What a kernel without its binary cannot show, per binary (the stages it does have decide the AMD wording).
_WITHOUT_BINARY = {
    "cubin": lambda stages: "Without a cubin there is no SASS and no register count.",
    "hsaco": lambda stages: ("Without the hsaco, registers and scratch come from the AMDGCN's metadata block."
                             if "amdgcn" in stages else
                             "Without the hsaco or the AMDGCN there is no register count."),
}


def _read_binary(entry: KernelEntry, ext: str | None) -> bytes | None:
    path = entry.files.get(ext) if ext else None
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError as e:
        raise InputFileError(f"Cannot read {path}: {e.strerror or e}.") from e


def _amd_resources(entry: KernelEntry, blob: bytes | None, metadata: dict[str, Any], warnings: list[str]) -> Any:
    """Registers, LDS and scratch of an AMD kernel: the hsaco's metadata note, else the AMDGCN's metadata block."""
    from types import SimpleNamespace

    from tritonscope.core.model import Resources

    if blob is not None:  # codeobject's reader, as a compile uses it (warns when the code object does not read)
        return codeobject.hip_resources(SimpleNamespace(asm={"hsaco": blob}, metadata=metadata), warnings)
    dynamic = int(metadata.get("shared") or 0)
    if "amdgcn" not in entry.files:
        return Resources(dynamic_shared=dynamic)
    try:
        k = codeobject.pick(codeobject.from_assembly(_read_text(entry.files["amdgcn"])), metadata.get("name"))
    except codeobject.CodeObjectError as e:
        warnings.append(f"Registers are unknown: {e}.")
        return Resources(dynamic_shared=dynamic)
    return Resources(registers=k.vgprs, agprs=k.agprs, sgprs=k.sgprs, stack=k.scratch, static_shared=k.lds_static,
                     dynamic_shared=dynamic, vgpr_spills=k.vgpr_spills, sgpr_spills=k.sgpr_spills)


def _kind_words(entry: KernelEntry) -> str:
    return {"triton-cache": "cache entry", "dump": "kernel dump", "capture": "captured kernel",
            "file": "stage file"}.get(entry.kind, "kernel")


def _python_stage(entry: KernelEntry, warnings: list[str]) -> tuple[str | None, int]:
    """The kernel's Python source and the file line it starts on: captured, else read from the IR's #loc."""
    record = entry.record or {}
    if record.get("source"):
        return record["source"], int(record.get("line") or 1)
    file, line = entry._ir_location()
    if not file:
        if not set(entry.files) & set(TEXT_STAGES + ("source",)):
            warnings.append(f"No Python source: this {_kind_words(entry)} holds only a binary, which does not "
                            "name it.")
        else:
            warnings.append("No Python source: the IR names no source file (compiled without line info).")
        return None, 1
    if not os.path.isfile(file):
        warnings.append(f"No Python source: {file} (named by the IR's locations) is not on this machine.")
        return None, 1
    try:
        lines = Path(file).read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    except OSError:
        warnings.append(f"No Python source: {file} cannot be read.")
        return None, 1
    return "".join(function_block(lines, line)), line


def function_block(lines: list[str], line: int) -> list[str]:
    """The `def` starting at 1-based `line` and its indented body (a kernel's source)."""
    start = max(line - 1, 0)
    if start >= len(lines):
        return []
    indent = len(lines[start]) - len(lines[start].lstrip())
    out = [lines[start]]
    in_signature = True
    for text in lines[start + 1:]:
        stripped = text.strip()
        body_indent = len(text) - len(text.lstrip())
        if in_signature:
            out.append(text)
            if stripped.endswith(":") and not stripped.startswith("#"):
                in_signature = False
            continue
        if stripped and body_indent <= indent and not stripped.startswith("#"):
            break
        out.append(text)
    while out and not out[-1].strip():
        out.pop()
    return out


_MLIR_TO_TRITON = {"f16": "fp16", "bf16": "bf16", "f32": "fp32", "f64": "fp64", "i1": "i1", "i8": "i8",
                   "i16": "i16", "i32": "i32", "i64": "i64", "f8E4M3FN": "fp8e4nv", "f8E5M2": "fp8e5"}


def signature_from_ttir(text: str) -> list[tuple[str, str, list[str]]]:
    """[(name, '*fp16' | 'i32', ['tt.divisibility=16'])] from a TTIR tt.func's arguments."""
    m = FUNC_ARGS.search(text)
    if not m:
        return []
    out = []
    for arg in TYPED_ARG.finditer(m.group(1)):
        name, ty, pointee, attrs = arg.groups()
        ty_name = f"*{_MLIR_TO_TRITON.get(pointee, pointee)}" if pointee else _MLIR_TO_TRITON.get(ty, ty)
        found = [f"{a}={v}" for a, v in TT_INT_ATTR.findall(attrs or "")]
        out.append((name, ty_name, found))
    return out


def recorded_option(entry: KernelEntry, name: str) -> Any:
    """num_warps / num_stages as the entry's metadata, capture record or stage files record it; None if none does."""
    value = entry.metadata.get(name)
    if value is None:
        value = ((entry.record or {}).get("options") or {}).get(name)
    return value


# Triton's default num_stages per backend (CUDAOptions / HIPOptions): what the config shows when a source
# does not record it (a stage file, a dump), said in a warning.
DEFAULT_NUM_STAGES = {"cuda": 3, "hip": 2}


def _spec_of(entry: KernelEntry, target: str) -> tuple[KernelSpec, list[ArgSpecialization]]:
    record = entry.record or {}
    meta = entry.metadata
    arch = entry.arch  # "?" when the source does not say
    file = record.get("file") or entry._ir_location()[0]
    specialization: list[ArgSpecialization] = []
    args: dict[str, Any] = {}
    if record.get("signature"):
        constexprs = record.get("constexprs") or {}
        # a capture's scalars as its first launch passed them (n_cols: 1000, not i32): loop bounds and grids
        # that run to them can be evaluated; pointers stay their types
        values = recorded_scalars(record, entry.launch_info) if entry.kind == "capture" else {}
        for name, ty in record["signature"].items():
            attrs = tuple(record.get("attrs", {}).get(name, []))
            if ty == "constexpr":
                specialization.append(ArgSpecialization(name, "constexpr", (), constexprs.get(name)))
            else:
                specialization.append(ArgSpecialization(name, ty, attrs))
                args[name] = values.get(name, ty)
    else:
        ir_path = entry.files.get("source") or entry.files.get("ttir")
        for name, ty, attrs in signature_from_ttir(_read_text(ir_path)) if ir_path else []:
            specialization.append(ArgSpecialization(name, ty, tuple(attrs)))
            args[name] = ty
    options = {k: meta[k] for k in ("maxnreg", "num_ctas", "enable_fp_fusion") if meta.get(k) not in (None,)}
    spec = KernelSpec(
        target=target, kernel=entry.name, file=str(file or ""), args=args,
        constexprs=dict(record.get("constexprs") or {}),
        num_warps=int(meta.get("num_warps") or record.get("options", {}).get("num_warps") or 4),
        num_stages=int(meta.get("num_stages") or record.get("options", {}).get("num_stages")
                       or DEFAULT_NUM_STAGES.get(entry.backend, 3)),
        arch=arch, grid=tuple((entry.launch_info.get("grids") or [None])[0] or ()) or None,
        options={k: v for k, v in options.items() if not (k == "num_ctas" and v == 1)},
    )
    return spec, specialization


# --------------------------------------------------------------------------
# --emit: every stage as a plain file
# --------------------------------------------------------------------------


_ENV_NAME_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")


def recorded_environment(entry: KernelEntry) -> dict[str, Any]:
    """The code-generation environment the entry was compiled with, as far as its source knows it.

    {'vars': {NAME: value}, 'tools': {'ptxas': {...}}, 'complete': bool, 'cache_vars_known': bool}:
    Triton writes every cache-invalidating variable that was set into the
    metadata (a cache entry or a capture: `cache_vars_known`); a capture's
    record adds the tool and codegen knobs and the ptxas used (`complete`:
    a knob it does not list was unset).  A dump or a stage file knows none.
    """
    meta = entry.metadata or {}
    record = entry.record or {}
    codegen = record.get("codegen") if isinstance(record.get("codegen"), dict) else {}
    found = {k: str(v) for k, v in meta.items() if _ENV_NAME_RE.match(k) and v is not None}
    found.update({str(k): str(v) for k, v in (record.get("env") or {}).items()})
    found.update({str(k): str(v) for k, v in (codegen.get("vars") or {}).items()})
    return {"vars": dict(sorted(found.items())), "tools": dict(codegen.get("tools") or {}),
            "complete": bool(codegen.get("complete")), "cache_vars_known": "triton_version" in meta}


def _tool_words(tool: dict[str, Any]) -> str:
    """'ptxas 13.0, PTX ISA 9.0' (what is known of it)."""
    parts = [f"ptxas {tool['version']}" if tool.get("version") else "ptxas"]
    if tool.get("ptx_isa"):
        parts.append(f"PTX ISA {tool['ptx_isa']}")
    return ", ".join(parts)


def _environment_notes(entry: KernelEntry) -> list[str]:
    """What `open` says about a kernel built with tools other than Triton's bundled ones."""
    from tritonscope.triton_api import TOOL_KNOBS

    recorded = recorded_environment(entry)
    ptxas = recorded["tools"].get("ptxas") or {}
    notes = []
    for key, value in recorded["vars"].items():
        if key not in TOOL_KNOBS.values():
            continue
        here = os.path.isfile(value)
        if ptxas and ptxas.get("knob") != key:  # set, but not the tool this arch's compile used
            if not here:
                notes.append(f"{key}={value} was also set when it compiled (not the ptxas this arch used); "
                             "that file is not on this machine.")
            continue
        if ptxas.get("bundled") and here:  # the variable named Triton's own tool
            continue
        text = (f"Compiled with {_tool_words(ptxas) + ' from ' if ptxas else ''}{key}={value}, not Triton's "
                "bundled tool (set by the program or its environment: torch's Inductor sets TRITON_PTXAS_PATH "
                "to torch's own ptxas).")
        if here:
            text += " A --recompile uses the same file."
        else:
            text += (" That file is not on this machine: a --recompile uses Triton's bundled tool instead, "
                     "so its PTX `.version` line (and perhaps its code) will differ.")
        notes.append(text)
    return notes
