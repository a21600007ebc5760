"""tritonscope explain: why a config is slow or does not fit, and what to change (checked by compiling).

TARGET is a kernel to compile (a sample, or path/to/file.py:kernel), or a
kernel that already compiled, found where `tritonscope open` looks: a
capture, a Triton cache or TRITON_KERNEL_DUMP folder, a single stage file.
A found kernel is explained from what its source holds (explain.py says
which verdicts that leaves out, and why); its fixes are checked with
sources.recompile where its IR (or, for -c, a captured Python function) can
be compiled again, and marked "not checked" otherwise.

The work is analyses/explain/run.py's (explain_config for a kernel to compile, explain_found for one that
already compiled), which the Python API's tritonscope.explain calls too; this command checks its options, runs
it with the command's compile and spinner (commands/running.py), and prints.
"""

from __future__ import annotations

import json
from typing import List, Optional

import typer

from tritonscope.commands import checks, running
from tritonscope.commands import requests as build
from tritonscope.commands.options import (CONFIG, DISPLAY, FOUND_TARGET_HELP, GRID, ForceOpt, FoundKernelOpt, GpuOpt,
                                          KeepPathsOpt, Values, composed)

ShapesOpt = typer.Option(None, "--shape", metavar="MxNxK",
                         help="A problem shape (repeatable, e.g. --shape 4096x4096x4096): tiles against SMs, the "
                              "last wave, and the roofline time bound.  The first also sets the compiled shape "
                              "of a sample.")
NoCheckOpt = typer.Option(False, "--no-check-fixes", help="Do not compile candidate fixes (faster; fixes are then "
                                                           "suggestions, not checked).")


# --------------------------------------------------------------------------
# The command
# --------------------------------------------------------------------------


@composed
def explain_cmd(
    ctx: typer.Context,
    target: str = typer.Argument(..., help=FOUND_TARGET_HELP),
    kernel: Optional[str] = FoundKernelOpt,
    cfg: Values = CONFIG.but(shape=(Optional[List[str]], ShapesOpt)) + GRID,
    gpu: Optional[str] = GpuOpt,
    predict: bool = typer.Option(False, "--predict",
                                 help="Also predict the kernel's time at its launch with the GPU-less cost model "
                                      "(on --gpu where the cost model knows it, else the local GPU or the arch's "
                                      "reference GPU): shown after the verdicts, in --json under \"prediction\", "
                                      "and in --save reports."),
    no_check_fixes: bool = NoCheckOpt,
    as_json: bool = typer.Option(False, "--json", help="Print the verdicts as JSON."),
    save: Optional[str] = typer.Option(None, "--save", help="Save a report: .html, .md or .json write the compile "
                                                            "report with an Explain section (`show` replays a "
                                                            ".json); .txt writes the verdicts as printed."),
    force: bool = ForceOpt,
    keep_paths: bool = KeepPathsOpt,
    display: Values = DISPLAY.without("pager"),
):
    """Explain a config: one verdict per finding, with the stage line and Python line that show it and a fix.

    Verdicts: shared memory (each buffer, the largest num_stages / block size
    that fits), occupancy (the limiter), registers (live registers from
    nvdisasm), spills, global access width (and the hint that widens it),
    pipelining of each loop, tensor cores and TF32, shared-memory bank
    conflicts, and for each --shape the waves and a roofline time bound.
    Fixes marked "checked" were compiled.  Exit code 0 whatever it finds
    (use `tritonscope check` to gate on it).

    TARGET may also be a kernel that already compiled (what `tritonscope open`
    reads): the verdicts its stages allow are given, the others are listed as
    not judged, with the reason; --kernel picks one kernel of a folder.

    Examples:

      tritonscope explain matmul_masked -c BLOCK_SIZE=128

      tritonscope explain softmax -c BLOCK=16384 -w 1

      tritonscope explain matmul_masked --shape 4096x4096x4096 --gpu H200

      tritonscope explain matmul_grouped --shape 4096x4096x4096 --gpu H100 --predict

      tritonscope explain ~/.triton/cache --kernel matmul_kernel

      tritonscope explain kernel.ttgir

      tritonscope explain matmul --block 16 --save report.html
    """
    env = display.env(ctx)
    shape = cfg.shape
    if save:
        from tritonscope.outputs import save as saving

        saving.check(save, force=force, names=saving.EXPLAIN, what="explain output")
    checks.check_gpu(gpu)  # empty or unknown (core/gpus.json): exit 2 before any compile, as for `compile`
    if shape:
        from tritonscope.inputs.kernels import parse_shape

        for s in shape:
            parse_shape(s)
    if cfg.grid:  # a bad --grid: exit 2 before any compile
        from tritonscope.inputs.grid import parse_grid

        parse_grid(cfg.grid)
    from tritonscope.analyses.explain.run import found_launch, is_found_target

    found = is_found_target(target)
    launches: list = []
    if found:
        checks.refuse_for_found(target, **{"--block": cfg.block, "--arg": cfg.arg, "--dtype": cfg.dtype})
        changes = build.recompile_changes(cfg.arch, cfg.num_warps, cfg.num_stages, cfg.constexpr, cfg.maxnreg, cfg.num_ctas,
                                    cfg.fp_fusion)
        analysis, expl = running.run_explain_found(target, kernel, env, changes=changes, shapes=list(shape or []), gpu=gpu,
                                           check_fixes=not no_check_fixes, progress=not as_json, launches=launches)
    else:
        checks.refuse_kernel_option(target, kernel)
        # e.g. --maxnreg for AMD: exit 2, no compile
        request = cfg.config(target, shape=shape[0] if shape else None, gpu=gpu)
        analysis, expl = running.run_explain(request, env, shapes=list(shape or []), gpu=gpu,
                                     check_fixes=not no_check_fixes, progress=not as_json)
    if predict:
        from tritonscope.cost import predict as predicted

        # a kernel that already compiled: at --grid, else at a --shape's launch from its file's EXAMPLES
        grid, args = found_launch(analysis.artifact.spec, cfg.grid, launches) if found else (None, None)
        analysis.prediction = predicted(analysis, gpu=gpu, grid=grid, args=args).to_dict()
    if as_json:
        out = expl.to_dict()
        if analysis.prediction is not None:
            out["prediction"] = analysis.prediction
        typer.echo(json.dumps(out, indent=1))
    else:
        from tritonscope.outputs.render.explain_view import explain_renderable

        console = env.console()
        console.print(explain_renderable(expl, console.width))
        if analysis.prediction is not None:
            from rich.markup import escape

            from tritonscope.outputs.render.summary_text import prediction_text

            console.print(f"predicted: {escape(prediction_text(analysis.prediction))}", highlight=False)
    if save:
        from tritonscope.outputs.save import save_explanation

        save_explanation(analysis, expl, save, force=force, keep_paths=keep_paths, width=display.width)
