"""open_source(path): which kind of source a path is, and its entries."""

from __future__ import annotations

from pathlib import Path

from tritonscope.core.errors import InputFileError, NotFoundError
from tritonscope.inputs.sources.capture import _capture
from tritonscope.inputs.sources.files import _entries_in, _folder_entry, _inductor_context, _is_inductor_cache, _names, _stage_names, _subdirs, file_entry
from tritonscope.inputs.sources.model import Source

def open_source(path: str | Path) -> Source:
    """Read what PATH is (cache, dump, capture, Inductor cache or a stage file) and list its kernels."""
    p = Path(path).expanduser()
    if not p.exists():
        raise NotFoundError(f"No such file or folder: {path}",
                            hint="Give a Triton cache (~/.triton/cache), a TRITON_KERNEL_DUMP folder, "
                                 "a capture folder or a stage file (.ttir, .ttgir, .llir, .ptx, .cubin, .amdgcn, "
                                 ".hsaco, .json).")
    if p.is_file() and p.suffix == ".py":   # a module Inductor generated (a kernel file, output_code.py)
        from tritonscope.inputs.sources.inductor import inductor_file_source

        found = inductor_file_source(p)
        if found is not None:
            return found
    if p.is_file():
        return Source(p, "file", [file_entry(p)], single=True)
    try:
        return _open_dir(p)
    except PermissionError as e:
        raise InputFileError(f"Cannot read {path}: no permission ({e.filename}).") from e


def _open_dir(p: Path) -> Source:
    if (p / "capture.json").is_file():
        return _capture(p)
    names = _names(p)
    if any(n.startswith("__grp__") for n in names) or _stage_names(names):
        entry = _folder_entry(p, kind="triton-cache" if any(n.startswith("__grp__") for n in names) else "dump")
        return Source(p, entry.kind, [entry], single=True)
    if (p / "triton").is_dir():  # an Inductor cache: Triton caches under triton/<device>/
        entries, warnings = [], []
        for device in sorted(_subdirs(p / "triton")):
            found, skipped = _entries_in(device)
            entries += found
            warnings += skipped
        return Source(p, "inductor-cache", entries, warnings=warnings)
    entries, warnings = _entries_in(p)
    if not entries:
        from tritonscope.inputs.sources.inductor import has_generated_kernels, inductor_source

        if has_generated_kernels(p):   # Inductor's own kernel files (a cache without triton/, a debug folder)
            return inductor_source(p)
    if not entries and _is_inductor_cache(p):
        raise InputFileError(
            f"{p} is an Inductor cache without a triton/ folder, and without generated kernel files "
            "(??/c*.py): the kernels it compiled are not kept in it.",
            context=_inductor_context(p),
            hint="Inductor writes the compiled kernels to Triton's cache: open $TRITON_CACHE_DIR if the program set "
                 "it, else ~/.triton/cache; or run the program under `tritonscope capture` to keep every kernel "
                 "it compiles.")
    if not entries:
        if warnings:
            raise InputFileError(f"{p} looks like a Triton cache, but no kernel in it can be read.",
                                 context="\n".join(warnings[:5]),
                                 hint="The cache may be damaged or half-written; delete it and run the program again.")
        raise InputFileError(
            f"{p} is not a Triton cache, kernel dump or capture: no kernel folders in it.",
            hint="Give ~/.triton/cache (or $TRITON_CACHE_DIR), a TRITON_KERNEL_DUMP folder ($TRITON_DUMP_DIR), "
                 "an Inductor cache that holds a triton/ folder ($TMPDIR/torchinductor_$USER), a folder made by "
                 "`tritonscope capture`, "
                 "or a single stage file.")
    kinds = {e.kind for e in entries}
    return Source(p, kinds.pop() if len(kinds) == 1 else "triton-cache", entries, warnings=warnings)


# What an Inductor cache folder holds besides triton/: its FX graph and AOTAutograd caches, and the
# generated modules in two-character folders (ab/cabcdef....py).
