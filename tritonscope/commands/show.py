"""tritonscope show: re-render a saved JSON report, without Triton.

It takes the same view options as `compile` and renders the same views, from
the Analysis stored in the report.  Nothing on this path imports triton (a
test checks sys.modules), so it works where Triton is not installed.
"""

from __future__ import annotations

import json
from typing import Optional

import typer

from tritonscope.cli import app, handle_errors
from tritonscope.commands import _common as c


@app.command("show")
@handle_errors
def show_cmd(
    report: str = typer.Argument(..., help="A report saved with --save FILE.json."),
    stage: Optional[str] = typer.Option(None, "--stage", "--stages",
                                        help="Stages to show, comma-separated: python,ttir,ttgir,llir,ptx,sass "
                                             "(default all; 'none' for the summary only)."),
    view: str = typer.Option("stages", "--view", help="stages | side-by-side | walkthrough | mix"),
    line: Optional[int] = typer.Option(None, "--line", help="Show Python line N and what it became in every stage."),
    layouts: bool = typer.Option(False, "--layouts", help="Draw the layouts saved in the report."),
    as_json: bool = typer.Option(False, "--json", help="Print the analysis as JSON (the report schema)."),
    width: Optional[int] = typer.Option(None, "--width", help="Render for this many columns."),
    color: Optional[bool] = typer.Option(None, "--color/--no-color", help="Force color on or off (NO_COLOR is honoured)."),
    pager: bool = typer.Option(False, "--pager/--no-pager", help="Page long output through $PAGER."),
    save: Optional[str] = typer.Option(None, "--save", help="Save it again as .html, .md, .json or .txt (by extension)."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing --save file."),
    keep_paths: bool = typer.Option(False, "--keep-paths", help="Keep the report's file paths as they are in --save."),
):
    """Re-render a saved JSON report in the terminal (no Triton needed).

    Examples:

      tritonscope compile matmul --block 16 --save r.json

      tritonscope show r.json

      tritonscope show r.json --stage ttgir,ptx --width 120

      tritonscope show r.json --save r.html
    """
    from tritonscope.errors import UsageError
    from tritonscope.report import analysis_to_dict, check_output_path, load_analysis, report_format

    if save:  # fail before any work
        report_format(save)
        check_output_path(save, force=force)
    analysis = load_analysis(report)
    if layouts and not analysis.layouts:
        raise UsageError(f"{report} was saved without layouts.",
                         hint="Save it with `tritonscope compile ... --layouts --save FILE.json`.")
    if as_json:
        typer.echo(json.dumps(analysis_to_dict(analysis), indent=1))
    else:
        render_views(analysis, stage=stage, view=view, line=line, layouts=layouts, width=width, color=color,
                     pager=pager)
    if save:
        from tritonscope.report import save_report

        save_report(analysis, save, force=force, keep_paths=keep_paths)


def render_views(analysis, *, stage: Optional[str], view: str, line: Optional[int], layouts: bool,
                 width: Optional[int], color: Optional[bool], pager: bool) -> None:
    """Print an Analysis with compile's view options, exactly as `compile` prints it.

    Keep in step with commands/compile.py (a test compares the two outputs).
    """
    from tritonscope.commands.compile import VIEWS
    from tritonscope.errors import UsageError, close_matches
    from tritonscope.model import STAGE_KEYS
    from tritonscope.render import views
    from tritonscope.render.console import make_console, paged
    from tritonscope.render.terminal import stage_panel, summary_panel

    view = view.strip().lower().replace("_", "-")
    if view not in VIEWS:
        raise UsageError(f"Unknown view {view!r}.{close_matches(view, VIEWS)}", hint=f"Views: {', '.join(VIEWS)}.")
    stages = c.parse_stage_list(stage, STAGE_KEYS)
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
            for key in stages:
                if key in analysis.parsed:
                    console.print(stage_panel(analysis, key))
        if layouts:
            from tritonscope.render.layout_view import layout_panels

            for panel in layout_panels(analysis):
                console.print(panel)
