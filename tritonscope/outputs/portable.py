"""A report without the user's folders: the kernel's folder written as '.', Python's as <site-packages>.

A saved report is shared (pasted into an issue, attached to a bug), so by
default it names no absolute path (`--keep-paths` keeps them).  The rewrite
works on the report's JSON (report.analysis_to_dict) and reads it back, so
every format (save.py) writes the same rewritten analysis.
"""

from __future__ import annotations

import os
import re
from typing import Any

from tritonscope.analyses.analysis import Analysis
from tritonscope.outputs.report import analysis_from_dict, analysis_to_dict


def kernel_folders(analysis: Analysis) -> list[str]:
    """Absolute folders written as '.' in a report, longest first."""
    from tritonscope.pipeline.paths import kernel_files

    folders = {os.path.dirname(f) for f in kernel_files(analysis) if os.path.isabs(f)}
    # a kernel opened from disk (`open /abs/k.ttgir`, `explain /abs/capture`) names that path in its target
    target = analysis.artifact.spec.target or ""
    opened = target if os.path.exists(target) else target.rpartition(":")[0]
    if opened and os.path.isabs(opened):
        folders.add(os.path.dirname(opened.rstrip(os.sep)))
    # the analysis holds names sanitized ('e\\x1b[31mx', LLVM's 'e\\1B[31mx'); the stages that PTX and nvdisasm
    # wrote spell the folder's real characters their own way ('e\\033[31mx'): relativize spells the real one
    folders |= {real for f in folders if (real := _unsanitized(f)) != f}
    return sorted((f for f in folders if f not in ("", os.sep)), key=len, reverse=True)


# /tmp/e\x1b[31mx (sanitize.visible)   /tmp/e\u202ex   /tmp/e\1B[31mx (LLVM's escape in !DIFile, loc)
_SANITIZED = re.compile(r"\\x([0-9a-f]{2})|\\u(20[26][0-9a-e])|\\([0-9A-F]{2})(?![0-9A-Fa-f])")


def _unsanitized(folder: str) -> str:
    """The folder's real name from a sanitized spelling of it (each control character written out)."""
    def char(m: re.Match) -> str:
        code = int(next(g for g in m.groups() if g), 16)
        return chr(code) if code < 0x20 or 0x7f <= code <= 0x9f or code >= 0x2000 else m.group(0)

    return _SANITIZED.sub(char, folder)


def relative_paths(analysis: Analysis) -> Analysis:
    """A copy of the analysis with the kernel's folder written as '.' everywhere.

    Stage texts carry the user's paths (loc(...), .file, DIFile, //## File);
    so do locations, the spec and notes.  A report saved this way is already
    relative (its spec.file is './x.py'), so saving it again changes nothing.
    """
    from tritonscope.pipeline.paths import install_folders

    # the kernel's folders first: a kernel that lives under site-packages is still '.'
    rewrites = [(f, ".") for f in kernel_folders(analysis)]
    rewrites += [(f, SITE_PACKAGES) for f in install_folders() if all(f != k for k, _ in rewrites)]
    # the temporary folders a compile used (a --passes compile's MLIR_DUMP_PATH in the metadata)
    rewrites += [(f, TEMP) for f in temp_folders() if all(f != k for k, _ in rewrites)]
    data = analysis_to_dict(analysis)
    data = _map_strings(data, lambda s: _strip_folders(s, rewrites))
    _dwarf_lines_from_stages(data)
    return analysis_from_dict(data)  # layouts come back as dicts: the drawers take those too


def _dwarf_lines_from_stages(data: dict[str, Any]) -> None:
    """Parsed `.b8` lines as in their rewritten stage text.

    A DWARF string is one `.b8 N` line per byte, so the folder in it spans
    many parsed lines, which no one-string rewrite sees.  The stage text was
    rewritten whole with its length kept (paths.relativize keep_length), so
    its line N is the parsed line N.
    """
    stages = data["artifact"]["stages"]
    for key, lines in data["parsed"].items():
        text = stages.get(key)
        if not text or ".b8" not in text:
            continue
        fixed = text.split("\n")
        for ln in lines:
            n = ln["number"]
            if not (ln["raw"].startswith(".b8") and 0 < n <= len(fixed) and fixed[n - 1] != ln["raw"]):
                continue
            old, new = ln["raw"].split(), fixed[n - 1].split()
            if len(old) < 2 or len(new) < 2 or new[0] != ".b8":
                continue  # not a byte line of the rewritten text: leave the line as it was
            ln["text"] = ln["text"].replace(f".b8 {old[1]}", f".b8 {new[1]}", 1)
            ln["raw"] = fixed[n - 1]


# How a saved report writes Python's package folders (Triton's libdevice in metadata["extern_libs"]).
SITE_PACKAGES = "<site-packages>"
# ... and the temporary folder (`compile --passes` dumps into one: MLIR_DUMP_PATH in the metadata).
TEMP = "<tmp>"


def temp_folders() -> list[str]:
    """The system's temporary folder, as named and with links resolved (TMPDIR, else /tmp)."""
    import tempfile

    folder = tempfile.gettempdir()
    return sorted({os.path.normpath(folder), os.path.realpath(folder)}, key=len, reverse=True)


def _strip_folder(text: str, folder: str) -> str:
    """`text` with `folder` written as '.' (one folder of _strip_folders)."""
    return _strip_folders(text, [(folder, ".")])


def _strip_folders(text: str, rewrites: list[tuple[str, str]]) -> str:
    """`text` with each folder written as its replacement, in every spelling paths.relativize knows."""
    from tritonscope.pipeline.paths import relativize

    for folder, replacement in rewrites:
        text = relativize(text, folder, replacement, keep_length=True)
    return text


def _map_strings(obj: Any, fn) -> Any:
    if isinstance(obj, str):
        return fn(obj)
    if isinstance(obj, dict):
        return {(fn(k) if isinstance(k, str) else k): _map_strings(v, fn) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map_strings(v, fn) for v in obj)
    return obj




def relative_failure(failure):
    """A copy of a failure report (analyses/failure_model.Failure) with the kernel's folder written as '.',
    Python's package folders as <site-packages> and the temporary folder as <tmp>: its file, its op's and
    diagnostics' files, the IR's loc(...) and the reproducer's text, as relative_paths does for a report."""
    from tritonscope.analyses.failure_model import Failure
    from tritonscope.pipeline.paths import install_folders

    folders = {os.path.dirname(f) for f in (failure.file, failure.op.file if failure.op else "")
               if f and os.path.isabs(f)}
    folders |= {real for f in folders if (real := _unsanitized(f)) != f}
    rewrites = [(f, ".") for f in sorted((f for f in folders if f not in ("", os.sep)), key=len, reverse=True)]
    rewrites += [(f, SITE_PACKAGES) for f in install_folders() if all(f != k for k, _ in rewrites)]
    rewrites += [(f, TEMP) for f in temp_folders() if all(f != k for k, _ in rewrites)]
    data = _map_strings(failure.to_dict(full=True), lambda s: _strip_folders(s, rewrites))
    return Failure.from_dict(data)
