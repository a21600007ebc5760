"""Saved reports: the versioned JSON schema, and writing report files.

JSON holds everything the tool knows (an Analysis); `tritonscope show`
rebuilds the Analysis from it without importing Triton.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from tritonscope.analysis import Analysis
from tritonscope.errors import InputFileError, OutputError
from tritonscope.model import ArgSpecialization, Artifact, KernelSpec, Line, Note, ParsedStage, Resources, SourceLoc

SCHEMA = "tritonscope.report"
SCHEMA_VERSION = 1


def analysis_to_dict(analysis: Analysis) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "artifact": asdict(analysis.artifact),
        "parsed": {k: [asdict(line) for line in st.lines] for k, st in analysis.parsed.items()},
        "notes": [asdict(n) for n in analysis.notes],
        "mix": analysis.mix,
        "layouts": [asdict(x) if hasattr(x, "__dataclass_fields__") else x for x in analysis.layouts],
        # Extra keys (readers ignore them): who wrote the report, and how paths are written.
        "versions": _versions(analysis),
        "paths": "as compiled",
    }


def _versions(analysis: Analysis) -> dict[str, str]:
    import platform

    from tritonscope import __version__

    return {"tritonscope": __version__, "triton": analysis.artifact.triton_version,
            "python": platform.python_version()}


def analysis_from_dict(data: dict[str, Any], source: str = "report") -> Analysis:
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise InputFileError(f"{source} is not a tritonscope report (no '{SCHEMA}' schema tag).",
                             hint="Save one with `tritonscope compile ... --save report.json`.")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise InputFileError(
            f"{source} uses report schema version {version}; this tritonscope reads version {SCHEMA_VERSION}.",
            hint="Re-save the report with this version of tritonscope.")
    try:
        a = data["artifact"]
        spec = _build(KernelSpec, a["spec"])
        if spec.shape is not None:
            spec = _replace(spec, shape=tuple(spec.shape))
        if spec.grid is not None:
            spec = _replace(spec, grid=tuple(spec.grid))
        artifact = Artifact(
            spec=spec,
            triton_version=a["triton_version"],
            kernel_hash=a["kernel_hash"],
            stages=dict(a["stages"]),
            python_first_line=a["python_first_line"],
            metadata=a["metadata"],
            resources=_build(Resources, a["resources"]),
            specialization=[ArgSpecialization(s["name"], s["type"], tuple(s["attrs"]), s.get("value"))
                            for s in a["specialization"]],
            warnings=list(a.get("warnings", [])),
            env=dict(a.get("env", {})),
            compile_seconds=a.get("compile_seconds", 0.0),
        )
        parsed = {k: ParsedStage(k, tuple(
            Line(ln["number"], ln["text"], ln["raw"], SourceLoc(**ln["loc"]) if ln.get("loc") else None)
            for ln in lines)) for k, lines in data["parsed"].items()}
        notes = [Note(**n) for n in data["notes"]]
        return Analysis(artifact, parsed, notes, data["mix"], list(data.get("layouts", [])))
    except (KeyError, TypeError, ValueError) as e:
        raise InputFileError(f"{source} is a damaged report (schema version {version}): {type(e).__name__}: {e}",
                             hint="Re-save the report with `--save FILE.json`.") from e


def load_analysis(path: str | Path) -> Analysis:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        from tritonscope.errors import NotFoundError

        raise NotFoundError(f"No such report: {path}", hint="Check the path.") from e
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise InputFileError(f"{path} is not valid JSON: {e}", hint="Give a report saved with --save FILE.json.") from e
    return analysis_from_dict(data, str(path))


def _build(cls, data: dict[str, Any]):
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


def _replace(obj, **changes):
    from dataclasses import replace

    return replace(obj, **changes)




# --------------------------------------------------------------------------
# Writing report files
# --------------------------------------------------------------------------

FORMATS = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown",
           ".json": "json", ".txt": "text"}
TEXT_WIDTH = 120  # columns of a saved .txt report


def report_format(path: str | Path) -> str:
    """'html' | 'markdown' | 'json' | 'text', from the file's extension."""
    ext = Path(path).suffix.lower()
    if ext not in FORMATS:
        raise OutputError(
            f"Cannot tell the report format of {str(path)!r}: "
            + (f"unknown extension {ext!r}." if ext else "it has no extension."),
            hint="Name the file .html, .md, .json or .txt.")
    return FORMATS[ext]


def check_output_path(path: str | Path, *, force: bool = False) -> Path:
    """Fail early (before any work) when `path` cannot be written."""
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"Cannot write {path}: it is a folder.", hint="Give a file name.")
    if path.exists() and not force:
        raise OutputError(f"{path} already exists; not overwriting it.",
                          hint="Pass --force to overwrite it, or choose another name.")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.exists():
        raise OutputError(f"Cannot write {path}: the folder {parent} does not exist.",
                          hint="Create the folder first, or choose another path.")
    if not parent.is_dir():
        raise OutputError(f"Cannot write {path}: {parent} is not a folder.", hint="Choose another path.")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"Cannot write {path}: no permission to write in {parent}.",
                          hint="Choose a folder you can write to.")
    return path


def write_atomic(path: str | Path, text: str | bytes, force: bool = False) -> Path:
    """Write `text` (str or bytes) to `path` all at once, or not at all.

    The text goes to a temporary file in the same folder, which is then
    renamed over `path`: an error or Ctrl-C part way leaves no half-written
    file (and leaves an existing file untouched).  Without `force` an
    existing file is never replaced, even one created while we wrote.
    """
    path = check_output_path(path, force=force)
    parent = path.parent if str(path.parent) else Path(".")
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
        binary = isinstance(text, bytes)
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8", "newline": ""})) as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual mode
        if force:
            os.replace(tmp, path)
        else:
            _rename_no_clobber(tmp, path)
        tmp = None
    except OutputError:
        raise
    except OSError as e:
        raise OutputError(f"Cannot write {path}: {e.strerror or e}.",
                          hint="Check the path, the free disk space and your permissions.") from e
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return path


def _rename_no_clobber(tmp: str, path: Path) -> None:
    """Move tmp to path unless path exists (checked atomically where the filesystem allows)."""
    try:
        os.link(tmp, path)  # fails with FileExistsError instead of replacing
    except FileExistsError:
        raise OutputError(f"{path} already exists; not overwriting it.",
                          hint="Pass --force to overwrite it, or choose another name.") from None
    except OSError:  # a filesystem without hard links
        if path.exists():
            raise OutputError(f"{path} already exists; not overwriting it.",
                              hint="Pass --force to overwrite it, or choose another name.") from None
        os.replace(tmp, path)
        return
    os.unlink(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def kernel_files(analysis: Analysis) -> set[str]:
    """The kernel's file as the user named it and as the compiled stages name it.

    They differ when Triton's cache served a compile of the same source from
    another file: the IR then carries that file's path.  The TTIR's `tt.func`
    location names the file the stages were compiled from.
    """
    files = {analysis.artifact.spec.file} if analysis.artifact.spec.file else set()
    py = analysis.parsed.get("python")
    if py:
        files |= {ln.loc.file for ln in py.lines if ln.loc}
    for key in ("ttir", "ttgir"):
        stage = analysis.parsed.get(key)
        func = next((ln for ln in stage.lines if "tt.func" in ln.text and ln.loc), None) if stage else None
        if func:
            files.add(func.loc.file)
            break
    return files


def kernel_folders(analysis: Analysis) -> list[str]:
    """Absolute folders written as '.' in a report, longest first."""
    folders = {os.path.dirname(f) for f in kernel_files(analysis) if os.path.isabs(f)}
    return sorted((f for f in folders if f not in ("", os.sep)), key=len, reverse=True)


def relative_paths(analysis: Analysis) -> Analysis:
    """A copy of the analysis with the kernel's folder written as '.' everywhere.

    Stage texts carry the user's paths (loc(...), .file, DIFile, //## File);
    so do locations, the spec and notes.  A report saved this way is already
    relative (its spec.file is './x.py'), so saving it again changes nothing.
    """
    folders = kernel_folders(analysis)
    data = analysis_to_dict(analysis)
    for folder in folders:
        data = _map_strings(data, lambda s, folder=folder: _strip_folder(s, folder))
    return analysis_from_dict(data)  # layouts come back as dicts: the drawers take those too


def _strip_folder(text: str, folder: str) -> str:
    from tritonscope.paths import relativize

    if folder not in text:
        return text
    text = relativize(text, folder)
    # the folder on its own, e.g. LLVM's !DIFile(directory: "/home/u/k")
    return re.sub(re.escape(os.path.normpath(folder)) + r"(?![\w.\-])", ".", text)


def _map_strings(obj: Any, fn) -> Any:
    if isinstance(obj, str):
        return fn(obj)
    if isinstance(obj, dict):
        return {(fn(k) if isinstance(k, str) else k): _map_strings(v, fn) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map_strings(v, fn) for v in obj)
    return obj


def render_report(analysis: Analysis, fmt: str, *, keep_paths: bool = False) -> str:
    """The text of a report in one format ('html', 'markdown', 'json', 'text')."""
    if not keep_paths:
        analysis = relative_paths(analysis)
    if fmt == "json":
        data = analysis_to_dict(analysis)
        data["paths"] = "absolute" if keep_paths else "relative to the kernel's folder"
        return json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    if fmt == "html":
        from tritonscope.render.html import render_html

        return render_html(analysis)
    if fmt == "markdown":
        from tritonscope.render.markdown import render_markdown

        return render_markdown(analysis)
    if fmt == "text":
        return render_text(analysis)
    raise OutputError(f"Unknown report format {fmt!r}.", hint="Use html, markdown, json or text.")


def render_text(analysis: Analysis, width: int = TEXT_WIDTH) -> str:
    """The terminal's summary and stage views, as plain text."""
    import io

    from rich.console import Console

    from tritonscope.render.terminal import stage_panel, summary_panel

    console = Console(file=io.StringIO(), width=width, no_color=True, color_system=None,
                      highlight=False, record=True, soft_wrap=False)
    console.print(summary_panel(analysis))
    for key in analysis.parsed:
        console.print(stage_panel(analysis, key))
    return console.export_text(styles=False)


def save_report(analysis: Analysis, path: str | Path, *, force: bool = False, keep_paths: bool = False) -> Path:
    """Write a report; the format follows the extension (.html, .md, .json, .txt).

    Paths are written relative to the kernel file's folder unless
    `keep_paths`.  The write is atomic and never overwrites without `force`.
    """
    fmt = report_format(path)
    check_output_path(path, force=force)  # before rendering: fail fast
    return write_atomic(path, render_report(analysis, fmt, keep_paths=keep_paths), force=force)
