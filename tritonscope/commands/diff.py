"""tritonscope diff: what changes between two configs (or two saved reports) of one kernel."""

from __future__ import annotations

import json
from typing import List, Optional

import typer

from tritonscope.commands import checks, running
from tritonscope.commands.options import CONFIG, DISPLAY, GRID, GpuOpt, Values, composed
from tritonscope.core.errors import UsageError

SideAOpt = typer.Option(None, "--a", metavar="NAME=VALUE,...",
                        help="Config of side A: constexprs and num_warps, num_stages, arch, dtype, "
                             "shape, the launch options maxnreg, num_ctas, fp_fusion (on/off), "
                             "and triton=VERSION or triton=/path/to/python (another Triton), "
                             "comma-separated (repeatable).")
SideBOpt = typer.Option(None, "--b", metavar="NAME=VALUE,...", help="Config of side B (as --a).")
StagesOpt = typer.Option(None, "--stage", "--stages",
                         help="Stages to diff: python,ttir,ttgir,llir,ptx,sass (amdgcn for AMD "
                              "targets), all (default), or none for the summary only.")
PassesOpt = typer.Option(False, "--passes",
                         help="Also name the first compiler pass that treats A and B differently beyond the "
                              "config's own numbers (both sides compile once with Triton's per-pass dumps; "
                              "the rule is below).")
PredictOpt = typer.Option(False, "--predict",
                          help="Also predict each side's time at its launch (GPU-less cost model): the "
                               "predicted speed ratio and the terms that explain it.")
LoopOpt = typer.Option(False, "--loop",
                       help="Also put the two sides' innermost loops side by side (SASS or AMDGCN, else PTX), "
                            "memory waits, drains, barriers, loads and MMAs marked; alone, it replaces the "
                            "stage diffs (add --stage to have both).")


@composed
def diff_cmd(
    ctx: typer.Context,
    targets: List[str] = typer.Argument(..., metavar="TARGET [TARGET_B]",
                                        help="A kernel (sample or file.py:kernel) diffed against itself with --a/--b, "
                                             "or two sides: saved .json reports and/or kernels."),
    a: Optional[List[str]] = SideAOpt,
    b: Optional[List[str]] = SideBOpt,
    kernel: Values = CONFIG + GRID,
    stage: Optional[str] = StagesOpt,
    max_lines: int = typer.Option(60, "--max-lines", help="Diff lines shown per stage (0: all)."),
    context: int = typer.Option(2, "--context", "-U", help="Unchanged lines around each change."),
    force_different: bool = typer.Option(False, "--force-different", help="Diff two different kernels anyway."),
    passes: bool = PassesOpt,
    predict: bool = PredictOpt,
    gpu: Optional[str] = GpuOpt,
    loop: bool = LoopOpt,
    as_json: bool = typer.Option(False, "--json", help="Print the diff as JSON."),
    save: Optional[str] = typer.Option(None, "--save", help="Save the diff: .json, .txt or .html (by extension)."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing --save file."),
    display: Values = DISPLAY,
):
    """Diff two configs of one kernel: resources, instruction mix, encodings, every stage.

    Each side is a config of TARGET (--a/--b: comma-separated NAME=VALUE, where
    NAME is a constexpr or num_warps, num_stages, arch, dtype, shape, a
    launch option: maxnreg, num_ctas, fp_fusion=on|off, or triton=VERSION|PYTHON:
    that side compiles with another Triton, in a child of an environment
    `tritonscope versions` makes and caches), or a saved JSON
    report. Options like --arch or --maxnreg apply to both sides. Stage diffs
    ignore noise: SSA/register/label numbering, locations, paths, debug info.

    --passes compiles both sides with per-pass dumps (in parallel) and names
    the first pass that does something different to them.  Each dump is read
    with what a config changes set aside (numbers: shapes, constants,
    attributes; SSA and symbol names; layout parameters and alias numbers;
    runs of one repeated item); a pass's effect is the set of distinct lines
    it adds and removes, and the first pass (paired by name, in order) whose
    effects differ, or that only one side runs and that changes its IR, is
    where A and B diverge.

    Exit status: 0 (also when A and B are the same config: it says so),
    2 bad usage or different kernels without --force-different, 7 bad report.

    Examples:

      tritonscope diff matmul --a BLOCK=16 --b BLOCK=64 --arch sm_90

      tritonscope diff matmul --block 16 --a num_warps=2 --b num_warps=4 --stage ttgir

      tritonscope diff matmul --a arch=sm_80 --b arch=sm_90 --stage none

      tritonscope diff vector_add -c BLOCK=4096 --a maxnreg=255 --b maxnreg=32 --stage none

      tritonscope diff softmax --a fp_fusion=on --b fp_fusion=off --stage ptx

      tritonscope diff old.json new.json

      tritonscope diff matmul --a triton=3.4.0 --b triton=3.6.0 --arch gfx950 --stage amdgcn

      tritonscope diff matmul --a triton=3.6.0 --b triton=3.9.0 --arch gfx942 --loop

      tritonscope diff matmul --a BLOCK=16 --b BLOCK=64 --arch sm_90a --passes --stage none

      tritonscope diff matmul_grouped --shape 4096x4096x4096 --a BLOCK_M=64 --b BLOCK_M=128 --gpu H100 --stage none
    """
    from tritonscope.language.dialects import every_stage_key
    from tritonscope.versions.config_diff import diff_sides, is_report, parse_side

    env = display.env(ctx)
    if len(targets) > 2:
        raise UsageError(f"diff takes one or two targets, got {len(targets)}.",
                         hint="tritonscope diff matmul --a BLOCK=16 --b BLOCK=32, or tritonscope diff old.json new.json")
    # every backend's stages: a side without one shows it as missing (sm_90a has no AMDGCN, gfx942 no PTX)
    stages = checks.parse_stage_list("none" if loop and stage is None else stage, every_stage_key())
    if context < 0:
        raise UsageError(f"-U/--context {context}: give 0 or more lines.",
                         hint="e.g. -U 2 (the default), or -U 0 for the changed lines alone.")
    if save:  # fail before compiling anything when --save cannot be honoured
        from tritonscope.outputs import save as saving

        saving.check(save, force=force, names=saving.DIFF, what="diff")
    checks.check_gpu(gpu)  # empty or unknown: before any kernel is loaded (its arch: once the sides are bound)
    side_a, side_b = parse_side(a, "a"), parse_side(b, "b")
    pair = targets if len(targets) == 2 else [targets[0], targets[0]]
    if len(targets) == 1 and is_report(targets[0]):
        raise UsageError("A saved report needs a second side to diff against.",
                         hint="tritonscope diff old.json new.json")
    run = diff_sides(pair, side_a, side_b, kernel.request("_"), running.pipeline(env, progress=not as_json),
                     passes=passes, predict=predict, gpu=gpu, loop=loop, context=context,
                     force_different=force_different, status=running.spinner(env, not as_json), say=_say_env(env),
                     check_arches=lambda arches: checks.check_gpu(gpu, arches))
    if run.same is not None:
        return _say_same(run.same, as_json)
    d, divergence = run.diff, run.divergence
    attached = (_loop_view(d, run.loop, context),) if loop else ()
    if as_json:
        typer.echo(json.dumps(_diff_dict(d, divergence, attached), indent=1))
    else:
        console = env.console()
        with env.paged(console):
            _print_diff(console, d, stages, max_lines, divergence, attached)
    if save:
        from tritonscope.outputs.save import save_diff

        save_diff(d, save, force=force, stages=stages, max_lines=max_lines, divergence=divergence,
                  attached=attached)


def _loop_view(d, pair, context: int):
    """--loop: the two innermost loops side by side (versions/loop_pair.py), attached to the diff's views."""
    from tritonscope.outputs.render.diff_view import Attached
    from tritonscope.versions.loop_render import loop_html, loop_panel

    return Attached("loop", pair.to_dict(), loop_panel(pair, d.a_label, d.b_label, context=context),
                    loop_html(pair, d.a_label, d.b_label, context=context))


def _say_same(spec, as_json: bool) -> None:
    """A and B are one config: said (exit 0), nothing diffed."""
    if as_json:
        typer.echo(json.dumps({"identical_configs": True, "config": spec.label()}))
        return
    from tritonscope.core.sanitize import visible

    typer.echo(visible(f"A and B are the same config ({spec.kernel}: {spec.label()}): nothing to diff."))
    typer.echo("hint: give the sides different values, e.g. --a BLOCK=16 --b BLOCK=32", err=True)


def _say_env(env):
    console = env.console(stderr=True)

    def say(line: str) -> None:
        from rich.markup import escape

        console.print(escape(line), highlight=False)
    return say


def _diff_dict(d, divergence, attached=()) -> dict:
    from tritonscope.outputs.render.diff_view import diff_data

    return diff_data(d, divergence, attached)


def _print_diff(console, d, stages, max_lines, divergence=None, attached=()) -> None:
    from tritonscope.outputs.render.diff_view import diff_renderables

    for renderable in diff_renderables(d, stages, max_lines, divergence, attached):
        console.print(renderable)
