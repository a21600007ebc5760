"""tritonscope show: re-render a saved JSON report, without Triton.

It takes the same view options as `compile` and renders the same views, from
the Analysis stored in the report, with its Explain section when it was saved
with one (`compile --explain`, `explain --save`).  Nothing on this path imports triton (a
test checks sys.modules), so it works where Triton is not installed.
"""

from __future__ import annotations

from typing import Optional

import typer

from tritonscope.commands import checks, printing
from tritonscope.commands.options import OUTPUT, STAGE_VIEWS, ForceOpt, Values, composed


@composed
def show_cmd(
    ctx: typer.Context,
    report: str = typer.Argument(..., help="A report saved with --save FILE.json."),
    views: Values = STAGE_VIEWS.but(layouts=(bool, typer.Option(False, "--layouts",
                                                                help="Draw the layouts saved in the report."))),
    out: Values = OUTPUT,
    save: Optional[str] = typer.Option(None, "--save", help="Save it again as .html, .md, .json or .txt (by extension)."),
    force: bool = ForceOpt,
    keep_paths: bool = typer.Option(False, "--keep-paths", help="Keep the report's file paths as they are in --save."),
):
    """Re-render a saved JSON report in the terminal (no Triton needed).

    A report saved with explain's verdicts (`compile --explain`, `explain
    --save FILE.json`) shows them again, after the summary.  The report of a
    compile that failed inside Triton (`compile ... --save FILE.json`) shows
    its failure report again.

    Examples:

      tritonscope compile matmul --block 16 --save r.json

      tritonscope show r.json

      tritonscope show r.json --stage ttgir,ptx --width 120

      tritonscope show r.json --save r.html
    """
    from tritonscope.core.errors import UsageError
    from tritonscope.outputs.report import load_analysis

    env = out.env(ctx)
    hide = checks.noise_filter(out.raw, out.keep)
    checks.check_line(views.line)
    if save:  # fail before any work
        checks.check_report_path(save, force)
    from tritonscope.analyses.failure import load_failure

    failure = load_failure(report)
    if failure is not None:  # a failed compile's report (compile --save FILE.json): shown again, exit 0
        asked = [flag for flag, given in (("--stage", views.stage is not None), ("--view", views.view != "stages"),
                                          ("--line", views.line is not None), ("--layouts", views.layouts)) if given]
        if asked:  # they were ignored (even --stage nosuch): a failure report has no stages to show
            raise UsageError(f"{report} is the report of a compile that failed: it has no stages, so "
                             f"{' and '.join(asked)} {'has' if len(asked) == 1 else 'have'} nothing to show.",
                             hint=f"Leave {' and '.join(asked)} out; --save keeps the IR the failing pass had.")
        printing.show_failure(failure, env, as_json=out.as_json, save=save, force=force, keep_paths=keep_paths)
        return
    analysis = load_analysis(report)
    if views.layouts and not analysis.layouts:
        raise UsageError(f"{report} was saved without layouts.",
                         hint="Save it with `tritonscope compile ... --layouts --save FILE.json`.")
    printing.output_analysis(analysis, env, as_json=out.as_json, save=save, force=force, keep_paths=keep_paths, hide=hide,
                      stage=views.stage, view=views.view, line=views.line, layouts=views.layouts,
                      max_lines=out.max_lines)
