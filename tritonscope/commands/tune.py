"""tritonscope tune: measure only the configs the cost model predicts fastest (needs a CUDA GPU).

Every config of the grid is compiled GPU-less in parallel (as `sweep` does) and
predicted; only the predicted top --top, plus any config that fits but has no
prediction (never pruned on a guess), are launched, checked and timed.  With
--full every fitting config is timed too, and tune reports how close its pick
is to the full search's best and the time it saved.

Time accounting (--full): the full search is what an autotuner does: each
config is compiled when first launched, checked and timed.  tune's time is
its GPU-less compile of the whole grid, the predictions, and the same
launch-compile-check-time of its short list.  Each launch compiles cold
(the GPU-less compile and the launches use separate, fresh Triton caches), so
neither side is timed on the other's cache.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from contextlib import contextmanager
from typing import List, Optional

import typer

from tritonscope.commands import _common as c


@contextmanager
def _fresh_triton_cache():
    """A private, empty Triton cache for one phase (so compile times are cold and honest), restored after."""
    old = os.environ.get("TRITON_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="tritonscope-tune-") as d:
        os.environ["TRITON_CACHE_DIR"] = d
        try:
            yield d
        finally:
            if old is None:
                os.environ.pop("TRITON_CACHE_DIR", None)
            else:
                os.environ["TRITON_CACHE_DIR"] = old


def tune(requests, *, arch: str, gpu: str | None, top: int, full: bool, jobs: int | None = None,
         warmup: int = 10, rep: int = 40, kernel: str = "", target: str = "") -> dict:
    """Compile and predict every request, time the predicted top `top` (every fitting one with `full`).

    Returns plain data: rows (config, fits, predicted_ms, measured_ms, measure_s, on the short list), the
    pick, and with `full` the full search's best, the pick's ratio to it and both times."""
    from tritonscope.measure import sweep as sw
    from tritonscope.measure.bench import bench_loaded
    from tritonscope.pipeline.binding import build_spec

    with _fresh_triton_cache():
        t0 = time.perf_counter()
        result = sw.run_sweep(requests, default_arch=arch, jobs=jobs, use_cache=False, kernel=kernel, target=target)
        compile_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    shortlist = sw.attach_predictions(result.rows, gpu, top=top)
    predict_s = time.perf_counter() - t1
    fitting = [r for r in result.rows if r.ok and r.fits]
    ranked = sorted((r for r in fitting if r.predicted_ms is not None), key=lambda r: r.predicted_ms)
    chosen = {r.index for r in ranked[:top]} | {r.index for r in fitting if r.predicted_ms is None}
    measured: dict[int, dict] = {}
    with _fresh_triton_cache():
        for r in (fitting if full else [r for r in fitting if r.index in chosen]):
            t = time.perf_counter()
            status, ms = "failed", None
            try:
                b = bench_loaded(build_spec(requests[r.index], arch), warmup=warmup, rep=rep, with_torch=False)
                status, ms = b.status, (b.kernel.ms if b.kernel else None)
            except Exception as e:  # one config that cannot launch is a row, not the end of the search
                status = f"failed: {type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
            measured[r.index] = {"status": status, "measured_ms": ms, "measure_s": time.perf_counter() - t}
    rows = []
    for r in result.rows:
        m = measured.get(r.index, {})
        rows.append({"index": r.index, "config": r.config, "ok": r.ok, "fits": r.fits, "error": r.error,
                     "predicted_ms": r.predicted_ms, "shortlisted": r.index in chosen, **m})

    def good(x):
        return x.get("status") == "ok" and x.get("measured_ms")

    short = [x for x in rows if x["shortlisted"] and good(x)]
    pick = min(short, key=lambda x: x["measured_ms"]) if short else None
    tune_s = compile_s + predict_s + sum(x.get("measure_s", 0) for x in rows if x["shortlisted"])
    out = {"kernel": kernel, "gpu": shortlist.gpu, "calibration": shortlist.calibration, "top": top,
           "configs": len(rows), "fit": len(fitting), "predicted": shortlist.predicted,
           "no_prediction": shortlist.no_prediction, "widened": shortlist.widened,
           "expected_error": shortlist.expected_error, "compile_s": compile_s, "predict_s": predict_s,
           "tune_s": tune_s, "pick": pick, "rows": rows}
    if full:
        timed = [x for x in rows if good(x)]
        best = min(timed, key=lambda x: x["measured_ms"]) if timed else None
        full_s = sum(x.get("measure_s", 0) for x in rows)
        out.update({"full_best": best, "full_s": full_s,
                    "ratio": pick["measured_ms"] / best["measured_ms"] if pick and best else None,
                    "time_fraction": tune_s / full_s if full_s else None, "saved_s": full_s - tune_s})
    return out


def tune_lines(res: dict) -> list[str]:
    """The result in words."""
    out = [f"compiled {res['configs']} configs GPU-less in {res['compile_s']:.1f} s ({res['fit']} fit); "
           f"predicted {res['predicted']} on {res['gpu']} in {res['predict_s']:.2f} s"]
    for why, n in (res.get("no_prediction") or {}).items():
        out.append(f"no prediction for {n} config{'s' if n != 1 else ''} (timed anyway): {why}")
    short = [x for x in res["rows"] if x["shortlisted"]]
    out.append(f"timed the predicted top {res['top']}" + (f" and {len(short) - res['top']} without a prediction"
                                                          if len(short) > res["top"] else "") + ":")
    for x in sorted(short, key=lambda x: (x["predicted_ms"] is None, x["predicted_ms"] or 0)):
        pred = f"{x['predicted_ms']:.4g} ms predicted" if x["predicted_ms"] is not None else "no prediction"
        got = f"{x['measured_ms']:.4g} ms measured" if x.get("measured_ms") else x.get("status", "not timed")
        out.append(f"  {x['config']}: {pred}, {got}")
    if res["widened"]:
        out.append(f"note: the best predictions are closer than the expected error "
                   f"(±{(res['expected_error'] or 0):.0%}); --top larger measures more of them")
    if res["pick"]:
        out.append(f"pick: {res['pick']['config']} ({res['pick']['measured_ms']:.4g} ms)")
    else:
        out.append("pick: none (no config of the short list launched and passed its check)")
    if "full_s" in res:
        best = res["full_best"]
        if best and res["ratio"]:
            out.append(f"full search: best {best['config']} ({best['measured_ms']:.4g} ms); the pick is "
                       f"{res['ratio']:.3f}x the best ({'within' if res['ratio'] <= 1.05 else 'NOT within'} 5%)")
        out.append(f"time: tune {res['tune_s']:.1f} s (compile {res['compile_s']:.1f} s + predict "
                   f"{res['predict_s']:.2f} s + timing {res['tune_s'] - res['compile_s'] - res['predict_s']:.1f} s) "
                   f"vs full search {res['full_s']:.1f} s: {res['time_fraction']:.0%} of it, "
                   f"{res['saved_s']:.1f} s saved")
    else:
        out.append(f"time: {res['tune_s']:.1f} s (--full also times every config and compares)")
    return out


def tune_cmd(
    ctx: typer.Context,
    target: str = typer.Argument(..., help=c.TARGET_HELP),
    constexpr: Optional[List[str]] = typer.Option(None, "-c", "--constexpr", metavar="NAME=V1,V2,...",
                                                  help="A constexpr axis of the grid (repeatable)."),
    block: Optional[int] = c.BlockOpt,
    blocks: Optional[str] = c.BlocksOpt,
    arg: Optional[List[str]] = c.ArgOpt,
    num_warps: Optional[str] = typer.Option(None, "--num-warps", "-w", metavar="N1,N2,...", help="num_warps axis."),
    num_stages: Optional[str] = typer.Option(None, "--num-stages", "-s", metavar="N1,N2,...",
                                             help="num_stages axis."),
    shape: Optional[str] = c.ShapeOpt,
    dtype: Optional[str] = typer.Option(None, "--dtype", metavar="DTYPE", help="Input dtype of a sample."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="The GPU whose predictions rank the configs (default: "
                                                          "this machine's GPU)."),
    top: int = typer.Option(5, "--top", min=1, help="How many of the predicted fastest configs to time."),
    full: bool = typer.Option(False, "--full", help="Also time every fitting config: how close the pick is to "
                                                    "the full search's best, and the time saved."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, help="Compile workers (default: every core)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    width: Optional[int] = c.WidthOpt,
    color: Optional[bool] = c.ColorOpt,
):
    """Time only the configs the cost model predicts fastest, on this machine's GPU.

    Examples:

      tritonscope tune layer_norm -c BLOCK=256,1024,4096 -w 2,4,8,16 --shape 4096x8192 --top 5

      tritonscope tune matmul_grouped -c BLOCK_M=64,128 -c BLOCK_N=128,256 -c BLOCK_K=32,64 -w 4,8 --shape 4096x4096x4096 --top 5 --full
    """
    from tritonscope.measure import runner
    from tritonscope.commands.sweep import build_requests
    from tritonscope.core.errors import UsageError
    from tritonscope.core.env import env_of

    env = env_of(ctx).with_display(width=width, color=color)
    requests, loaded, _, _, _ = build_requests(target, constexpr, block, blocks, arg, num_warps, num_stages, None,
                                               shape, dtype, None, None, None, gpu)
    if not loaded.spec.grid:  # nothing to predict and nothing to launch: say so before any compile
        raise UsageError(f"{loaded.spec.kernel} has no shape: tune needs a launch grid.",
                         hint="Give --shape for a sample, or an EXAMPLES launch beside your kernel.")
    runner.require_gpu("tune")
    import torch

    arch = c.default_arch()   # this machine's GPU
    if gpu is None:
        from tritonscope.cost import local_gpu

        g = local_gpu()
        gpu = g.name if g else None
    requests = [r if r.arch else _with_arch(r, arch) for r in requests]
    res = tune(requests, arch=arch, gpu=gpu, top=top, full=full, jobs=jobs, kernel=loaded.spec.kernel,
               target=target)
    res["device"] = torch.cuda.get_device_name(0)
    if as_json:
        typer.echo(json.dumps(res, indent=1))
        return
    console = env.console()
    from rich.markup import escape

    for line in tune_lines(res):
        console.print(escape(line), highlight=False)


def _with_arch(req, arch):
    from dataclasses import replace

    return replace(req, arch=arch)
