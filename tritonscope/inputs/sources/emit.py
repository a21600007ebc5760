"""--emit: every stage as a plain file, all or nothing, and checks on an emitted folder."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tritonscope.core.errors import InputFileError
from tritonscope.core.model import ARCHES, Artifact
from tritonscope.inputs.sources.model import BINARIES, KernelEntry, TEXT_STAGES, binary_ext

def check_emit_dir(folder: str | Path) -> Path:
    """Fail before any work when --emit DIR cannot be a folder we write into."""
    from tritonscope.core.errors import OutputError
    from tritonscope.core.output import os_errors

    out_dir = Path(folder)
    with os_errors(out_dir, "emit into"):  # a name too long for the filesystem: exit 8, not a traceback
        if out_dir.exists() and not out_dir.is_dir():
            raise OutputError(f"Cannot emit into {out_dir}: it is a file.", hint="Give a folder (it is created).")
        parent = out_dir if out_dir.exists() else out_dir.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not os.access(parent, os.W_OK | os.X_OK):
            raise OutputError(f"Cannot emit into {out_dir}: no permission to write in {parent}.")
    return out_dir


def emit_files(artifact: Artifact, folder: str | Path, *, binaries: dict[str, bytes] | None = None,
               cubin: bytes | None = None, force: bool = False, stem: str | None = None) -> list[Path]:
    """Write each stage as `<kernel>.<ext>` (+ the binary, + .json metadata) into `folder`, as Triton's dump does.

    `binaries`: {'cubin': bytes} or {'hsaco': bytes} (`cubin=` is the same
    as {'cubin': ...}).  Stages are written as the compiler wrote them: no
    display filter applies.  Every file goes through the one writer
    (output.write_atomic).
    """
    from tritonscope.language.dialects import dialect
    from tritonscope.core.output import write_atomic

    out_dir = check_emit_dir(folder)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        from tritonscope.core.errors import OutputError

        raise OutputError(f"Cannot create {out_dir}: {e.strerror or e}.") from e
    stem = stem or artifact.spec.kernel
    contents: dict[str, bytes] = {}
    for key, text in artifact.stages.items():
        # Triton's own names (kernel.llir, not .ll), so `open` reads an emitted folder back
        ext = key if key in TEXT_STAGES else dialect(key).ext
        contents[f"{stem}.{ext}"] = text.encode("utf-8")
    for ext, blob in {**({"cubin": cubin} if cubin else {}), **(binaries or {})}.items():
        if blob:
            contents[f"{stem}.{ext}"] = bytes(blob)
    # The metadata goes first and lists every file with its size: a folder that lost some of them
    # (a full disk, an interrupted copy) is then told from a whole one by `open` (check_emitted).
    meta = {**artifact.metadata, "hash": artifact.kernel_hash, "name": artifact.spec.kernel,
            "tritonscope": {"target": artifact.spec.target, "constexprs": artifact.spec.constexprs,
                            "args": {k: str(v) for k, v in artifact.spec.args.items()},
                            "specialization": [[s.name, s.type, list(s.attrs)] for s in artifact.specialization],
                            "warnings": list(artifact.warnings),
                            "files": {name: len(data) for name, data in contents.items()}}}
    written = [write_atomic(out_dir / f"{stem}.json", json.dumps(meta, indent=1, default=str) + "\n", force=force)]
    for name, data in contents.items():
        written.append(write_atomic(out_dir / name, data, force=force))
    return written


def check_emitted(folder: Path, metadata: dict[str, Any]) -> None:
    """Refuse an `--emit` folder that lacks files its metadata lists (or holds them at another size)."""
    extra = metadata.get("tritonscope")
    listed = extra.get("files") if isinstance(extra, dict) else None
    if not isinstance(listed, dict):
        return  # not written by --emit, or by a tritonscope before the list
    lacking, changed = [], []
    for name, size in listed.items():
        if not isinstance(name, str) or "/" in name or "\\" in name or name in ("", ".", ".."):
            raise InputFileError(f"{folder.name}: its metadata lists a file named {name!r}, which --emit never "
                                 "writes.")
        try:
            have = (folder / name).stat().st_size
        except OSError:
            lacking.append(name)
            continue
        if isinstance(size, int) and have != size:
            changed.append(name)
    if lacking or changed:
        parts = ([f"lacks {len(lacking)} of its {len(listed)} files ({', '.join(sorted(lacking))})"] if lacking
                 else []) + ([f"holds {', '.join(sorted(changed))} at another size than written"] if changed else [])
        raise InputFileError(f"{folder.name} was written by --emit but " + " and ".join(parts)
                             + ": it is not the whole kernel, so it is not opened as one.",
                             hint="The disk may have filled or a copy stopped: emit it again, or open one of its "
                                  "stage files on its own.")


def cubin_of(entry: KernelEntry) -> bytes | None:
    return binaries_of(entry).get("cubin")


def binaries_of(entry: KernelEntry) -> dict[str, bytes]:
    """{'cubin': bytes} / {'hsaco': bytes}: the binary files the entry has (for --emit)."""
    out = {}
    for ext in BINARIES:
        path = entry.files.get(ext)
        try:
            if path:
                out[ext] = path.read_bytes()
        except OSError:
            continue
    return out


def binaries_of_artifact(artifact: Artifact) -> dict[str, bytes]:
    """The binary of a compile (`compile --emit`): Triton's cache keeps it next to the stages; {} if gone.

    The Artifact holds no binary; a recompile keeps its own (`_binaries`).
    """
    kept = getattr(artifact, "_binaries", None)
    if kept:
        return dict(kept)
    from tritonscope import triton_api

    arch = ARCHES.get(artifact.spec.arch)
    ext = binary_ext(arch.backend if arch else "cuda")
    blob = triton_api.cached_stage_file(artifact.kernel_hash, artifact.spec.kernel, ext) if ext else None
    return {ext: blob} if blob else {}


# --------------------------------------------------------------------------
# Recompiling what was found, for another target
# --------------------------------------------------------------------------
