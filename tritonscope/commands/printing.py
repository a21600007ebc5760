"""What a command prints: an Analysis (JSON or the views, then --save), a failure report (and its
--save and --emit)."""

from __future__ import annotations

from typing import Optional

import typer

from tritonscope.commands import checks
from tritonscope.core.env import Env

# A large kernel's LLVM IR runs to tens of thousands of lines: nobody reads
# that scrolling past, and highlighting it costs more than the compile.
DEFAULT_MAX_LINES = 300


def output_analysis(analysis, env: Env, *, as_json: bool, save: Optional[str], force: bool, keep_paths: bool,
                    hide: Optional[frozenset], stage: Optional[str], view: str, line: Optional[int], layouts: bool,
                    max_lines: Optional[int]) -> None:
    """What `compile`, `open` and `show` do with an Analysis: JSON or the views, then `--save`."""
    if as_json:
        import json

        from tritonscope.outputs.report import analysis_to_dict

        typer.echo(json.dumps(analysis_to_dict(analysis), indent=1))
    else:
        print_analysis(analysis, env, stage=stage, view=view, line=line, layouts=layouts, max_lines=max_lines,
                       hide=hide)
    if save:
        from tritonscope.outputs.save import save_report

        save_report(analysis, save, force=force, keep_paths=keep_paths, hide=hide)


def print_analysis(analysis, env: Env, *, stage: Optional[str], view: str, line: Optional[int], layouts: bool,
                   max_lines: Optional[int], hide: Optional[frozenset] = None) -> None:
    """Print an Analysis with the view options `compile` and `show` share (width, color, pager from `env`).

    `hide`: the noise kinds the stage views fold (see noise_filter; None = all of them).
    """
    from tritonscope.outputs import sections
    from tritonscope.outputs.render.page_view import page_renderables

    view = checks.check_view(view)
    # By default, every stage this compile has (its backend's pipeline: PTX and SASS, or AMDGCN).
    stages = checks.parse_stage_list(stage, tuple(analysis.parsed))  # checked even when empty: --stage '' is refused
    page = sections.build(analysis, view=view, stages=stages if stage else None, line=line, layouts=layouts)
    console = env.console()
    limit = max_lines if max_lines is not None else (0 if env.pager else DEFAULT_MAX_LINES)
    with env.paged(console):
        for renderable in page_renderables(analysis, page, width=console.width, stage_width=console.width,
                                           max_lines=limit, hide=hide):
            console.print(renderable)


def output_failure(err, env: Env, *, as_json: bool, save: Optional[str], force: bool, emit: Optional[str] = None,
                   keep_paths: bool = False) -> None:
    """What `compile` does with a compile error that carries a failure report: the report (or its JSON) on
    stdout, then --save and --emit; the caller re-raises the error (exit 5, or 11 for a timeout).  A timeout
    writes no file: its message says "Nothing was written", as it always has."""
    failure = getattr(err, "data", {}).get("failure")
    if failure is not None:
        timed_out = failure.timed_out
        show_failure(failure, env, as_json=as_json, save=None if timed_out else save, force=force,
                     emit=None if timed_out else emit, keep_paths=keep_paths)


def show_failure(failure, env: Env, *, as_json: bool, save: Optional[str], force: bool,
                 emit: Optional[str] = None, keep_paths: bool = False) -> None:
    """A failure report (analyses/failure.Failure) on stdout, or its JSON, then --save and --emit.  --save
    and --emit's report (failure.txt, failure.json) write the kernel's folder as '.' unless `keep_paths` (as
    a compile's report); stdout keeps the paths as they are (as a compile's --json does), and --emit's IR and
    reproducer are Triton's text as written (as a compile's --emit keeps its stages)."""
    from tritonscope.outputs.render.failure_view import failure_renderables

    if as_json:
        import json

        from tritonscope.analyses.failure import report_dict

        typer.echo(json.dumps(report_dict(failure), indent=1))
    else:
        from tritonscope.core.sanitize import visible_data

        console = env.console()   # a BEL in the kernel's line was dropped by rich, not shown as \x07
        for renderable in failure_renderables(visible_data(failure), width=console.width):
            console.print(renderable)
        console.print()
    if save:
        from tritonscope.outputs.save import save_failure

        save_failure(failure, save, force=force, keep_paths=keep_paths)
    if emit:
        from tritonscope.core.output import write_folder
        from tritonscope.outputs.save import failure_files

        def fill(staging) -> None:
            from pathlib import Path

            for name, text in failure_files(failure, keep_paths=keep_paths).items():
                (Path(staging) / name).write_text(text)

        write_folder(emit, fill, force=force)
