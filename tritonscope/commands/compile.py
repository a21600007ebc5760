"""tritonscope compile: one real compile, every stage, annotated."""

from __future__ import annotations

import json
from typing import List, Optional

import typer

from tritonscope.cli import app, handle_errors
from tritonscope.commands import _common as c


VIEWS = ("stages", "side-by-side", "walkthrough", "mix")
# A large kernel's LLVM IR runs to tens of thousands of lines: nobody reads
# that scrolling past, and highlighting it costs more than the compile.
DEFAULT_MAX_LINES = 400


@app.command("compile")
@handle_errors
def compile_cmd(
    target: str = typer.Argument(..., help=c.TARGET_HELP),
    constexpr: Optional[List[str]] = c.ConstexprOpt,
    block: Optional[int] = c.BlockOpt,
    arg: Optional[List[str]] = c.ArgOpt,
    num_warps: Optional[int] = c.WarpsOpt,
    num_stages: Optional[int] = c.StagesOpt,
    arch: Optional[str] = c.ArchOpt,
    shape: Optional[str] = c.ShapeOpt,
    dtype: Optional[str] = c.DtypeOpt,
    stage: Optional[str] = typer.Option(None, "--stage", "--stages",
                                        help="Stages to show, comma-separated: python,ttir,ttgir,llir,ptx,sass "
                                             "(default all; 'none' for the summary only)."),
    view: str = typer.Option("stages", "--view",
                             help="stages (each stage, annotated) | side-by-side (2-3 stages aligned by Python line, "
                                  "default ttgir,ptx) | walkthrough (the story of the compile, generated) | "
                                  "mix (instruction counts per class)."),
    line: Optional[int] = typer.Option(None, "--line", help="Show Python line N and what it became in every stage."),
    layouts: bool = typer.Option(False, "--layouts", help="Draw every layout the TTGIR uses."),
    as_json: bool = typer.Option(False, "--json", help="Print the analysis as JSON (the report schema)."),
    width: Optional[int] = typer.Option(None, "--width", help="Render for this many columns."),
    color: Optional[bool] = typer.Option(None, "--color/--no-color", help="Force color on or off (NO_COLOR is honoured)."),
    pager: bool = typer.Option(False, "--pager/--no-pager", help="Page long output through $PAGER (shows every line)."),
    max_lines: Optional[int] = typer.Option(None, "--max-lines", min=0,
                                            help="Show at most N lines of each stage in the stages view "
                                                 "(default 400, or all with --pager; 0 = all)."),
    save: Optional[str] = typer.Option(None, "--save", help="Save a report: .html, .md, .json or .txt (by extension)."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing --save file."),
    keep_paths: bool = typer.Option(False, "--keep-paths", help="Keep absolute file paths in saved reports."),
):
    """Compile a kernel for a config and show every stage, annotated.

    Examples:

      tritonscope compile matmul --block 16

      tritonscope compile matmul --block 16 --arch sm_80 --stage ttgir,ptx

      tritonscope compile matmul --block 16 --view walkthrough

      tritonscope compile matmul --block 16 --line 19

      tritonscope compile matmul --block 16 --view side-by-side --stages ttgir,ptx,sass

      tritonscope compile matmul --block 16 --view mix

      tritonscope compile kernels.py:add_kernel --arg x_ptr='*fp32' --arg y_ptr='*fp32' --arg out_ptr='*fp32' --arg n=4096 -c BLOCK=1024
    """
    from tritonscope.analysis import analyze
    from tritonscope.compile import fit_problems
    from tritonscope.errors import OutOfResourcesError
    from tritonscope.model import STAGE_KEYS
    from tritonscope.render.console import make_console, paged
    from tritonscope.render.terminal import stage_panel, summary_panel

    view = view.strip().lower().replace("_", "-")
    if view not in VIEWS:
        from tritonscope.errors import UsageError, close_matches

        raise UsageError(f"Unknown view {view!r}.{close_matches(view, VIEWS)}", hint=f"Views: {', '.join(VIEWS)}.")
    request = c.make_request(target, constexpr, block, arg, num_warps, num_stages, arch, shape, dtype)
    stages = c.parse_stage_list(stage, STAGE_KEYS)
    artifact = c.compile_request(request, progress=not as_json)
    analysis = analyze(artifact)

    if layouts:
        from tritonscope.layouts import layouts_of

        analysis.layouts = layouts_of(analysis)
    if as_json:
        from tritonscope.report import analysis_to_dict

        typer.echo(json.dumps(analysis_to_dict(analysis), indent=1))
    else:
        from tritonscope.render import views

        console = make_console(width=width, color=color)
        with paged(console, pager):
            console.print(summary_panel(analysis))
            if line is not None:
                shown = tuple(k for k in (stages if stage else views.PIPELINE) if k != "python")
                console.print(views.line_view(analysis, line, shown))
            elif view == "side-by-side":
                shown = tuple(k for k in (stages if stage else ("ttgir", "ptx")) if k != "python")
                console.print(views.side_by_side(analysis, shown, console.width))
            elif view == "walkthrough":
                console.print(views.walkthrough(analysis))
            elif view == "mix":
                console.print(views.mix_view(analysis))
            else:
                limit = max_lines if max_lines is not None else (0 if pager else DEFAULT_MAX_LINES)
                for key in stages:
                    if key in analysis.parsed:
                        console.print(stage_panel(analysis, key, width=console.width, max_lines=limit))
            if layouts:
                from tritonscope.render.layout_view import layout_panels

                for panel in layout_panels(analysis):
                    console.print(panel)
    if save:
        from tritonscope.report import save_report

        save_report(analysis, save, force=force, keep_paths=keep_paths)
    problems = fit_problems(artifact)
    if problems:
        raise OutOfResourcesError(
            f"{artifact.spec.kernel} ({artifact.spec.label()}) will not launch: " + "; ".join(problems) + ".",
            hint="Use a smaller block size or fewer stages (each stage keeps another copy of the tiles in shared memory).",
        )
