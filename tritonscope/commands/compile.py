"""tritonscope compile: one real compile, every stage, annotated."""

from __future__ import annotations

import json
from typing import List, Optional

import typer

from tritonscope.cli import app, handle_errors
from tritonscope.commands import _common as c


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
    stage: Optional[str] = c.StageOpt,
    view: str = c.ViewOpt,
    line: Optional[int] = c.LineOpt,
    layouts: bool = typer.Option(False, "--layouts", help="Draw every layout the TTGIR uses."),
    as_json: bool = c.JsonOpt,
    width: Optional[int] = c.WidthOpt,
    color: Optional[bool] = c.ColorOpt,
    pager: bool = c.PagerOpt,
    max_lines: Optional[int] = c.MaxLinesOpt,
    save: Optional[str] = typer.Option(None, "--save", help="Save a report: .html, .md, .json or .txt (by extension)."),
    force: bool = c.ForceOpt,
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

    view = c.check_view(view)
    request = c.make_request(target, constexpr, block, arg, num_warps, num_stages, arch, shape, dtype)
    c.parse_stage_list(stage, STAGE_KEYS)  # a bad --stage fails before the compile
    if save:  # fail before compiling when the report cannot be written
        from tritonscope.report import check_output_path, report_format

        report_format(save)
        check_output_path(save, force=force)
    artifact = c.compile_request(request, progress=not as_json)
    analysis = analyze(artifact)

    if layouts:
        from tritonscope.layouts import layouts_of

        analysis.layouts = layouts_of(analysis)
    if as_json:
        from tritonscope.report import analysis_to_dict

        typer.echo(json.dumps(analysis_to_dict(analysis), indent=1))
    else:
        c.print_analysis(analysis, stage=stage, view=view, line=line, layouts=layouts, width=width, color=color,
                         pager=pager, max_lines=max_lines)
    if save:
        from tritonscope.report import save_report

        save_report(analysis, save, force=force, keep_paths=keep_paths)
    problems = fit_problems(artifact)
    if problems:
        raise OutOfResourcesError(
            f"{artifact.spec.kernel} ({artifact.spec.label()}) will not launch: " + "; ".join(problems) + ".",
            hint="Use a smaller block size or fewer stages (each stage keeps another copy of the tiles in shared memory).",
        )
