"""tritonscope tune: measure only the configs the cost model predicts fastest (needs a CUDA GPU).

The work is measure's (axes.grid_requests: the grid of requests; tune.tune_grid: the compile, the
predictions, the short list's timing, the time accounting), which the Python API's tritonscope.tune calls
too; this command parses its options, calls them, and prints the result.
"""

from __future__ import annotations

import json
from typing import List, Optional

import typer

from tritonscope.commands import checks
from tritonscope.commands import requests as build
from tritonscope.commands.options import AXES, DISPLAY, TARGET_HELP, GpuOpt, GridOpt, ShapeOpt, Values, composed
from tritonscope.measure.turns import ROUNDS


def tune_lines(res: dict) -> list[str]:
    """The result in words."""
    out = [f"compiled {res['configs']} configs GPU-less in {res['compile_s']:.1f} s ({res['fit']} fit); "
           f"predicted {res['predicted']} on {res['gpu']} in {res['predict_s']:.2f} s"]
    if res.get("pruned"):
        out.append(f"{res['pruned']} more could not rank (their lower bound is above the short list's), so their "
                   f"SASS was never disassembled")
    for why, n in (res.get("no_prediction") or {}).items():
        out.append(f"no prediction for {n} config{'s' if n != 1 else ''} (timed anyway): {why}")
    short = [x for x in res["rows"] if x["shortlisted"]]
    out.append(f"timed the predicted top {res['top']}" + (f" and {len(short) - res['top']} without a prediction"
                                                          if len(short) > res["top"] else "") + ":")
    for x in sorted(short, key=lambda x: (x["predicted_ms"] is None, x["predicted_ms"] or 0)):
        pred = f"{x['predicted_ms']:.4g} ms predicted" if x["predicted_ms"] is not None else "no prediction"
        got = f"{x['tune_measured_ms']:.4g} ms measured" if x.get("tune_measured_ms") else \
            (x.get("tune_status") or "not timed")
        out.append(f"  {x['config']}: {pred}, {got}")
    if res.get("timed_early"):
        gone = res.get("timed_early_not_short") or 0
        out.append(f"{res['timed_early']} of them timed while the last compiles finished "
                   f"({res.get('overlap_s') or 0:.1f} s)" + (f"; {gone} then left the short list (timed anyway)"
                                                              if gone else ""))
    if res["widened"]:
        out.append(f"note: the best predictions are closer than the expected error "
                   f"(±{(res['expected_error'] or 0):.0%}); --top larger measures more of them")
    if res["pick"]:
        out.append(f"pick: {res['pick']['config']} ({res['pick']['tune_measured_ms']:.4g} ms, the median of "
                   f"{ROUNDS} timings in turn)")
    else:
        out.append("pick: none (no config of the short list launched and passed its check)")
    if res.get("launch_compiled"):
        out.append(f"note: {res['launch_compiled']} of the {res['launched']} launches compiled again (their "
                   f"GPU-less compile was not the launch's): counted in tune's time")
    if "full_s" in res:
        best = res["full_best"]
        if best and res["ratio"]:
            out.append(f"full search: best {best['config']} ({best['measured_ms']:.4g} ms); the pick, timed by "
                       f"the full search, is "
                       f"{res['ratio']:.3f}x the best ({'within' if res['ratio'] <= 1.05 else 'NOT within'} 5%)")
        if res.get("referee"):
            ref = res["referee"]
            out.append(f"timed again, the two in turn {ref['rounds']} times: the pick {ref['pick_ms']:.4g} ms, the "
                       f"full search's best {ref['best_ms']:.4g} ms ({ref['ratio']:.3f}x)")
        overlap = res.get("overlap_s") or 0.0
        spent = (f"time: tune {res['tune_s']:.1f} s (compile {res['compile_s']:.1f} s on {res['workers']} workers"
                 + (f", {overlap:.1f} s of it also timing" if overlap else "")
                 + f" + predict {res['predict_s']:.2f} s + timing {res['measure_s'] - overlap:.1f} s)")
        if res.get("time_fraction") is not None:
            out.append(f"{spent} vs full search {res['full_s']:.1f} s: {res['time_fraction']:.0%} of it, "
                       f"{res['saved_s']:.1f} s saved")
            if res.get("time_fraction_unchecked") is not None:
                out.append(f"without the checks of results (an autotuner checks none; {res['full_check_s']:.1f} s "
                           f"of the full search's): {res['time_fraction_unchecked']:.0%}")
        else:
            out.append(f"{spent}; the full search timed nothing (no config fits)")
    else:
        out.append(f"time: {res['tune_s']:.1f} s (--full also times every config and compares)")
    return out


@composed
def tune_cmd(
    ctx: typer.Context,
    target: str = typer.Argument(..., help=TARGET_HELP),
    axes: Values = AXES.but(
        constexpr=(Optional[List[str]], typer.Option(None, "-c", "--constexpr", metavar="NAME=V1,V2,...",
                                                     help="A constexpr axis of the grid (repeatable).")),
        num_warps=(Optional[str], typer.Option(None, "--num-warps", "-w", metavar="N1,N2,...",
                                               help="num_warps axis.")),
        num_stages=(Optional[str], typer.Option(None, "--num-stages", "-s", metavar="N1,N2,...",
                                                help="num_stages axis."))),
    shape: Optional[str] = ShapeOpt,
    grid: Optional[str] = GridOpt,
    dtype: Optional[str] = typer.Option(None, "--dtype", metavar="DTYPE", help="Input dtype of a sample."),
    gpu: Optional[str] = GpuOpt,
    top: int = typer.Option(5, "--top", min=1, help="How many of the predicted fastest configs to time."),
    full: bool = typer.Option(False, "--full", help="Also time every fitting config: how close the pick is to "
                                                    "the full search's best, and the time saved."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, help="Compile workers (default: every core)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    display: Values = DISPLAY.without("pager"),
):
    """Time only the configs the cost model predicts fastest, on this machine's GPU.

    Every config is compiled GPU-less in parallel and predicted (a config's SASS is disassembled only while the
    model could still rank it in the short list); the predicted top --top are launched, checked and timed 5
    times in turn, starting while the last compiles finish, and the pick is the fastest median.  --full times
    every config as an autotuner would and compares.

    Examples:

      tritonscope tune layer_norm -c BLOCK=256,1024,4096 -w 2,4,8,16 --shape 4096x8192 --top 5

      tritonscope tune matmul_grouped -c BLOCK_M=64,128 -c BLOCK_N=128,256 -c BLOCK_K=32,64 -w 4,8 --shape 4096x4096x4096 --top 5 --full
    """
    from tritonscope.measure.tune import tune_grid, tune_outcome

    env = display.env(ctx)
    requests, loaded, _, _, _ = build.axes_requests(target, axes.constexpr, axes.block, axes.blocks, axes.arg,
                                                    axes.num_warps, axes.num_stages, None, shape, dtype, None, None,
                                                    None, gpu, grid=grid)
    res = tune_grid(requests, loaded, gpu=gpu, top=top, full=full, jobs=jobs, target=target,
                    arch=checks.default_arch())  # this machine's GPU
    if as_json:
        typer.echo(json.dumps(res, indent=1))
    else:
        console = env.console()
        from rich.markup import escape

        for line in tune_lines(res):
            console.print(escape(line), highlight=False)
    problem = tune_outcome(res)
    if problem is not None:
        raise problem
