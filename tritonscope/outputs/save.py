"""Writing what a command saves: one table of formats, one dispatch, one writer.

Every `--save` goes through here (`compile`, `open`, `show`, `passes`,
`explain`, `diff`): the format follows the extension, from the one table
FORMATS; each command names which formats it writes (explain has no
Markdown-less form, diff no Markdown); the path is checked before any work
(core/output.check_path) and the file is written all at once
(core/output.write_atomic).  The schema (report.py) writes nothing and
imports no renderer: the renderers are imported here, per format.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from tritonscope.analyses.analysis import Analysis
from tritonscope.outputs.render.text import TEXT_WIDTH  # columns of a saved .txt (report and verdicts)

# Extension -> format, for every command that saves (the first extension of a format is the one hints name).
FORMATS = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown",
           ".json": "json", ".txt": "text"}
REPORT = ("html", "markdown", "json", "text")   # compile/open/show/passes --save
EXPLAIN = ("json", "text", "markdown", "html")  # explain --save (.txt: the verdicts alone)
DIFF = ("json", "text", "html")                 # diff --save
VERSIONS = REPORT                               # versions --save (the regression report: versions/report.render)


def formats(names: tuple[str, ...] = REPORT) -> dict[str, str]:
    """The extensions of these formats, in the order named (which orders the 'Name the file ...' hint)."""
    return {ext: name for name in names for ext, fmt in FORMATS.items() if fmt == name}


def check(path: str | Path, *, force: bool = False, names: tuple[str, ...] = REPORT, what: str = "report") -> str:
    """The format of `path` ('html', 'markdown', 'json', 'text'), checked before any work: a path that
    cannot be written, or an extension none of `names` has, is an OutputError (exit 8)."""
    from tritonscope.core.output import check_path

    return check_path(path, force=force, formats=formats(names), what=what)


def write(path: str | Path, render: Callable[[str], str], *, force: bool = False,
          names: tuple[str, ...] = REPORT, what: str = "report") -> Path:
    """Check `path`, render its format (`render(fmt)` -> the file's text), write it atomically."""
    from tritonscope.core.output import write_atomic

    fmt = check(path, force=force, names=names, what=what)  # before rendering: fail fast
    return write_atomic(path, render(fmt), force=force)


# --------------------------------------------------------------------------
# Reports (an Analysis)
# --------------------------------------------------------------------------

def render_report(analysis: Analysis, fmt: str, *, keep_paths: bool = False,
                  hide: frozenset[str] | None = None) -> str:
    """The text of a report in one format ('html', 'markdown', 'json', 'text').

    `hide`: the noise kinds the views fold (render/noise.py; None = the default,
    empty = --raw).  JSON (the schema) always holds every stage's full text; the
    other formats draw the page sections.build makes (HTML with its layouts).
    """
    from tritonscope.core.errors import OutputError
    from tritonscope.outputs import sections

    if not keep_paths:
        from tritonscope.outputs.portable import relative_paths

        analysis = relative_paths(analysis)
    if fmt == "json":
        from tritonscope.outputs.report import analysis_to_dict

        data = analysis_to_dict(analysis)
        data["paths"] = "absolute" if keep_paths else "relative to the kernel's folder"
        return json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    if fmt not in REPORT:
        raise OutputError(f"Unknown report format {fmt!r}.", hint="Use html, markdown, json or text.")
    page = sections.build(analysis, layouts=fmt == "html")  # only HTML draws the layouts
    if fmt == "html":
        from tritonscope.outputs.render.html import render_html

        return render_html(analysis, hide=hide, page=page)
    # The analysis' text is already sanitized (analyze, load_analysis); the .md and .txt files are read
    # with `cat` too, so they get the same last pass as a terminal (sanitize.visible).
    from tritonscope.core.sanitize import visible

    if fmt == "markdown":
        from tritonscope.outputs.render.markdown import render_markdown

        return visible(render_markdown(analysis, hide=hide, page=page))
    from tritonscope.outputs.render.text import render_text

    return visible(render_text(analysis, hide=hide, page=page))


def save_report(analysis: Analysis, path: str | Path, *, force: bool = False, keep_paths: bool = False,
                hide: frozenset[str] | None = None) -> Path:
    """Write a report; the format follows the extension (.html, .md, .json, .txt).

    Paths are written relative to the kernel file's folder unless
    `keep_paths`.  The write is atomic and never overwrites without `force`.
    """
    return write(path, lambda fmt: render_report(analysis, fmt, keep_paths=keep_paths, hide=hide), force=force)


def save_failure(failure, path: str | Path, *, force: bool = False, keep_paths: bool = False) -> Path:
    """A failed compile's report (analyses/failure_model.Failure), in the format of the extension; paths
    written as save_report writes them (relative unless `keep_paths`), in every format."""
    from tritonscope.outputs.render.failure_view import render_failure

    if not keep_paths:
        from tritonscope.outputs.portable import relative_failure

        failure = relative_failure(failure)
    return write(path, lambda fmt: render_failure(failure, fmt, keep_paths=keep_paths), force=force,
                 what="failure report")


def failure_files(failure, *, keep_paths: bool = False) -> dict[str, str]:
    """--emit DIR of a failed compile: {file name: text}.  Its report (failure.txt, failure.json) writes the
    kernel's folder as '.' unless `keep_paths`, as save_failure does; the IR and MLIR's reproducer are
    Triton's text, kept as written (as a compile's --emit keeps its stages)."""
    from tritonscope.outputs.render.failure_view import failure_files as files

    if keep_paths:
        return files(failure, keep_paths=True)
    from tritonscope.outputs.portable import relative_failure

    return files(failure, report=relative_failure(failure), keep_paths=False)


# --------------------------------------------------------------------------
# explain --save, diff --save
# --------------------------------------------------------------------------

def save_explanation(analysis: Analysis, expl, path: str | Path, *, force: bool = False, keep_paths: bool = False,
                     width: int | None = None) -> Path:
    """explain --save: .html/.md/.json are the compile report with the Explain section; .txt the verdicts alone."""
    def render(fmt: str) -> str:
        if fmt == "text":
            from tritonscope.outputs.render.explain_view import explanation_text

            return explanation_text(expl, width or TEXT_WIDTH)
        from tritonscope.analyses.explain import attach_explanation

        return render_report(attach_explanation(analysis, expl.to_dict()), fmt, keep_paths=keep_paths)

    return write(path, render, force=force, names=EXPLAIN, what="explain output")


def save_diff(d, path: str | Path, *, force: bool = False, stages: tuple[str, ...] = (),
              max_lines: int | None = None, divergence=None, attached: tuple = ()) -> Path:
    """diff --save: .json (the diff's data), .txt (the terminal's diff, plain), .html (stages side by side);
    `attached` views (diff_view.Attached) go into each."""
    def render(fmt: str) -> str:
        from tritonscope.outputs.render import diff_view

        if fmt == "json":
            return json.dumps(diff_view.diff_data(d, divergence, attached), indent=1) + "\n"
        if fmt == "html":
            from tritonscope.outputs.render.html import render_html_diff

            text = render_html_diff(d)
            for a in attached:  # each attached view as the terminal shows it, before the end of the page
                text = text.replace("</body>", a.html + "</body>", 1)
            return text
        import io

        from tritonscope.core.sanitize import SafeConsole

        console = SafeConsole(width=TEXT_WIDTH, file=io.StringIO(), color_system=None, force_terminal=False)
        for renderable in diff_view.diff_renderables(d, stages, max_lines, divergence, attached):
            console.print(renderable)
        return console.file.getvalue()

    return write(path, render, force=force, names=DIFF, what="diff")
