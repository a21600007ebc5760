"""tune: time only the configs the cost model predicts fastest (needs a CUDA GPU); `tritonscope tune` prints it.

Every config of the grid is compiled GPU-less in parallel (as `sweep` does,
one worker per core by default) and predicted; only the predicted top
--top, plus any config that fits but has no prediction (never pruned on a
guess), are launched, checked and timed.  With --full every fitting config
is timed too, and tune reports how close its pick is to the full search's
best and the time it saved.

Time accounting (--full):

- The full search is what an autotuner does: each config is compiled when
  it is first launched (cold: its own fresh, empty Triton cache, and the
  JIT function's in-memory kernels forgotten before each launch, so a
  config launched earlier in the same process is compiled again), checked
  and timed, one after another.  Its time is the sum of those launches.
- tune's time is its whole path, in wall time: warming the parent before
  the compile workers fork, the GPU-less compile of the whole grid (all
  workers), the predictions, and the launch-check-time of its short list.
- tune's compile disassembles a config (nvdisasm, about a third of a
  config's compile CPU) only while the model could still rank it
  (measure/pruning.py): a config that does not fit, or whose lower bound is
  above the predicted top --top so far (widened by the model's largest
  expected error), keeps `bound_ms` and no prediction.  The threshold only
  falls, so the short list is the one predicting every config gives.
- The short list is timed while the last compiles finish (`_Early`): once
  every config has started and at most a quarter of the workers are busy,
  the predicted top of the rows compiled so far is timed; after the sweep,
  the final short list's configs not yet timed are timed too, and the
  pick is the fastest of everything timed.  The early timing is inside the
  compile's wall time (`overlap_s`), so it is counted once.
- The short list's launches load the GPU-less compiles from tune's own
  Triton cache instead of compiling again: a GPU-less compile is the launch's
  compile (same source, specialization, options and target, so the same
  cache key and the same cubin).  tune checks this per launch: a launch
  that compiled anyway (a kernel in the cache that no GPU-less compile
  made) is counted in `launch_compiled`, and its compile is in tune's time.
- The pick's ratio to the full search's best uses the full search's own
  measurement of both configs (one set of measurements, no mixing of runs);
  tune's own measurement of its short list is kept in `tune_measured_ms`.
- tune times its short list in turns (measure/turns.py, ROUNDS): every
  config launched and checked first, then each timed ROUNDS times in turn
  with a ROUNDS-th of the repetitions, and its median round kept, so one
  disturbed timing (a microsecond kernel now and then times at several
  times its true time) cannot decide the pick.  The full search times each
  config once, as an autotuner does.
- Both check every result they time, on the GPU (runner.compare); the
  check's seconds are kept apart (`tune_check_s`, `full_check_s`).
- With --full, when the pick is not the full search's best, the two are
  timed again in turn in one process (`referee`): how far apart they are
  once a single timing's noise is out.  Neither time counts it.
"""

from __future__ import annotations

import os
import tempfile
import time
from contextlib import contextmanager

from tritonscope import triton_api
from tritonscope.measure.turns import ROUNDS, fastest, time_configs


def tune_grid(requests, loaded, *, gpu: str | None, top: int, full: bool, jobs: int | None = None,
              target: str = "", arch: str | None = None) -> dict:
    """`tritonscope tune` and the Python API's tune: a grid of requests (measure/axes.grid_requests; `loaded`
    its first config, bound) checked for a launch grid and a GPU before any compile, then tune_requests on
    this machine's arch (`arch`, default pipeline/config.local_arch).  What it returns is what `tune --json`
    prints; tune_outcome(res) is the error for a tune that timed nothing."""
    from tritonscope.core.errors import UsageError
    from tritonscope.measure import runner

    if not loaded.spec.grid:  # nothing to predict and nothing to launch: say so before any compile
        raise UsageError(f"{loaded.spec.kernel} has no launch grid: tune needs one.",
                         hint="Give --grid (e.g. --grid 'cdiv(n_elements, BLOCK_SIZE)'), --shape for a sample, or "
                              "an EXAMPLES launch beside your kernel.")
    runner.require_gpu("tune")
    if arch is None:
        from tritonscope.pipeline.config import local_arch

        arch = local_arch()  # this machine's GPU
    return tune_requests(requests, arch=arch, gpu=gpu, top=top, full=full, jobs=jobs, kernel=loaded.spec.kernel,
                         target=target)


def tune_requests(requests, *, arch: str, gpu: str | None, top: int, full: bool, jobs: int | None = None,
                  kernel: str = "", target: str = "") -> dict:
    """`tritonscope tune` (and the Python API): the requests' arch filled in with this machine's `arch`, and
    the GPU to predict for (`gpu`; None: this machine's, when the table knows it), then tune(), with the
    device's name as torch gives it."""
    from dataclasses import replace

    if gpu is None:
        from tritonscope.cost import local_gpu

        g = local_gpu()
        gpu = g.name if g else None
    requests = [r if r.arch else replace(r, arch=arch) for r in requests]
    res = tune(requests, arch=arch, gpu=gpu, top=top, full=full, jobs=jobs, kernel=kernel, target=target)
    import torch

    res["device"] = torch.cuda.get_device_name(0)
    return res


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


def _warm_parent(request, arch: str) -> None:
    """What every forked compile worker would otherwise repeat before its first compile, done once here.

    A forked worker inherits the parent's imports and caches, so the kernel's module, the modules a sweep
    row uses, and Triton's cache key (SHA-256 over its 500 MB library: forked workers cannot use the early
    digest's thread, triton_api/key.py) are made once instead of once per worker.  Counted in tune's time."""
    import tritonscope.pipeline.triton_compile  # (the modules sweep.compile_row imports)
    import tritonscope.cost.features
    import tritonscope.analyses.explain
    import tritonscope.analyses.summary  # noqa: F401  (imported for the forked workers)
    from tritonscope.pipeline.compile_path import Pipeline
    from tritonscope.pipeline.config import resolve

    try:
        Pipeline().bind(resolve(request, arch))   # loads and caches the kernel's module
        import triton.runtime.cache as cache

        from tritonscope.triton_api.key import _install_key

        _install_key()
        cache.triton_key()
    except Exception:  # warming is an optimisation only: the workers do it themselves if this fails
        pass


def _referee(requests, pick: int | None, best: int | None, arch: str, cache: str, warmup: int,
             rep: int) -> dict | None:
    """When the pick is not the full search's best, the two timed again in turn, ROUNDS times each, on the
    full search's cache (median): how far apart they are once one timing's noise is out (reported beside
    the full search's own figures; counted in neither time)."""
    if pick is None or best is None or pick == best:
        return None
    res = time_configs(requests, [pick, best], arch, cache, warmup, rep, ROUNDS)
    got = {i: r["measured_ms"] for i, r in res.items() if r.get("status") == "ok" and r.get("measured_ms")}
    if len(got) != 2:
        return None
    return {"rounds": ROUNDS, "pick_ms": got[pick], "best_ms": got[best], "ratio": got[pick] / got[best]}


def _short_list(rows, top: int) -> list[int]:
    """The predicted top `top` of `rows` that fit (their predictions attached: sweep.attach_predictions), and
    every fitting row without a prediction (never pruned on a guess), in grid order."""
    fitting = [r for r in rows if r.ok and r.fits]
    ranked = sorted((r for r in fitting if r.predicted_ms is not None), key=lambda r: r.predicted_ms)
    chosen = {r.index for r in ranked[:top]} | {r.index for r in fitting if r.predicted_ms is None
                                                 and r.bound_ms is None}   # pruned rows could not rank
    return sorted(chosen)


class _Early:
    """Times the short list of the rows compiled so far while the last few compiles finish.

    A sweep's last compiles can run long and alone (a 8192-wide row on one warp took 7 s, the group's other
    39 configs together 2 s on 16 workers).  Once every config has started and at most a quarter of the workers
    are still busy, the predicted top of the rows already compiled is launched and timed (in turns, as
    always); when the sweep ends, the configs of the final short list not yet timed are timed too.  The pick is
    the fastest of everything timed.  Only when the sweep has more than one worker (otherwise nothing would
    run meanwhile).

    It also keeps the sweep's Pruning threshold (when there is one) at the rows' predictions so far."""

    def __init__(self, total: int, workers: int, gpu: str | None, top: int, measure, pruning=None,
                 margin: float = 0.0):
        self.total, self.tail, self.gpu, self.top, self.measure = total, max(1, workers // 4), gpu, top, measure
        self.workers, self.pruning, self.margin = workers, pruning, margin
        self.rows: list = []
        self.predicted: list[float] = []
        self.timed: dict[int, dict] = {}
        self.seconds = 0.0

    def on_row(self, row) -> None:
        from tritonscope.measure import sweep as sw

        self.rows.append(row)
        if self.pruning is not None and row.ok and row.fits and row.cost_features is not None:
            sw.attach_predictions([row], self.gpu, top=self.top)
            if row.predicted_ms is not None:
                self.predicted.append(row.predicted_ms)
                self.pruning.threshold.value = sw.pruning_threshold(self.predicted, self.top, self.margin)
        left = self.total - len(self.rows)
        if self.timed or self.workers < 2 or not 0 < left <= self.tail:
            return
        t = time.perf_counter()
        sw.attach_predictions(self.rows, self.gpu, top=self.top)
        self.timed.update(self.measure(_short_list(self.rows, self.top)) or {})
        self.seconds = time.perf_counter() - t


def _pruning(gpu: str | None, arch: str):
    """(the sweep's Pruning, its margin): configs are disassembled only while the model could still rank them
    (measure/pruning.py); (None, 0) when no GPU is known to predict for."""
    import multiprocessing

    from tritonscope.cost import find_gpu, resolve_gpu, widest_error
    from tritonscope.measure import sweep as sw

    g = find_gpu(gpu) if gpu else resolve_gpu(None, arch)
    if g is None:
        return None, 0.0
    return sw.Pruning(g.name, multiprocessing.Value("d", float("inf"))), widest_error(g)


def tune(requests, *, arch: str, gpu: str | None, top: int, full: bool, jobs: int | None = None,
         warmup: int = 10, rep: int = 40, kernel: str = "", target: str = "") -> dict:
    """Compile and predict every request, time the predicted top `top` (every fitting one with `full`).

    Returns plain data: rows (config, fits, predicted_ms, measured_ms, measure_s, on the short list), the
    pick, and with `full` the full search's best, the pick's ratio to it and both times."""
    from tritonscope.measure import sweep as sw

    with _fresh_triton_cache() as tune_cache:
        t0 = time.perf_counter()
        if requests:
            _warm_parent(requests[0], arch)
        warm_s = time.perf_counter() - t0

        def measure(indices):   # the short list, launched on tune's own cache: it loads the GPU-less compiles
            return time_configs(requests, indices, arch, tune_cache, warmup, rep, ROUNDS) if indices else {}

        workers = max(1, min(jobs or sw.default_jobs(), len(requests)))
        pruning, margin = _pruning(gpu, arch)
        early = _Early(len(requests), workers, gpu, top, measure, pruning, margin)
        result = sw.run_sweep(requests, default_arch=arch, jobs=jobs, use_cache=False, kernel=kernel, target=target,
                              on_row=early.on_row, pruning=pruning)
        if result.interrupted:   # Ctrl-C: nothing is timed after it (exit 130)
            from tritonscope.core.errors import InterruptedRunError

            raise InterruptedRunError(f"tune stopped while compiling ({result.finished} of {result.requested} "
                                      f"configs compiled); nothing more was timed.")
        compile_s = time.perf_counter() - t0   # the sweep's wall time: it holds the early timing (overlap_s)
        t1 = time.perf_counter()
        shortlist = sw.attach_predictions(result.rows, gpu, top=top)
        final = _short_list(result.rows, top)
        predict_s = time.perf_counter() - t1
        tuned = dict(early.timed)
        tuned.update(measure([i for i in final if i not in tuned]))
        tune_s = compile_s + predict_s + sum(r["measure_s"] for i, r in tuned.items() if i not in early.timed)
    fitting = [r for r in result.rows if r.ok and r.fits]
    # a launch compiled (its GPU-less compile was not the launch's) when it added a kernel no sweep row made
    made = {triton_api.cache_folder(r.kernel_hash) for r in result.rows if r.kernel_hash}
    for r in tuned.values():
        r["compiled_at_launch"] = bool(set(r.pop("new_kernels", [])) - made)
    full_runs: dict[int, dict] = {}
    referee = None
    if full:
        with _fresh_triton_cache() as full_cache:   # the autotuner: every launch compiles cold
            full_runs = time_configs(requests, [r.index for r in fitting], arch, full_cache, warmup, rep)
            for r in full_runs.values():
                r["compiled_at_launch"] = bool(r.pop("new_kernels", []))
            referee = _referee(requests, fastest(tuned), fastest(full_runs), arch, full_cache, warmup, rep)
    rows = []
    for r in result.rows:
        m = full_runs.get(r.index) or tuned.get(r.index) or {}
        tm = tuned.get(r.index, {})
        rows.append({"index": r.index, "config": r.config, "ok": r.ok, "fits": r.fits, "error": r.error,
                     "predicted_ms": r.predicted_ms, "bound_ms": r.bound_ms, "shortlisted": r.index in final,
                     "timed_early": r.index in early.timed,
                     "compile_seconds": r.compile_seconds, **m,
                     "tune_status": tm.get("status"), "tune_measured_ms": tm.get("measured_ms"),
                     "tune_measure_s": tm.get("measure_s"), "tune_compiled_at_launch": tm.get("compiled_at_launch"),
                     "tune_rounds_ms": tm.get("rounds_ms"), "tune_check_s": tm.get("check_s")})

    by_index = {x["index"]: x for x in rows}
    pick = by_index.get(fastest(tuned))
    measure_s = sum(r["measure_s"] for r in tuned.values())
    tune_check_s = sum(r.get("check_s") or 0 for r in tuned.values())
    out = {"kernel": kernel, "gpu": shortlist.gpu, "calibration": shortlist.calibration, "top": top,
           "configs": len(rows), "fit": len(fitting), "predicted": shortlist.predicted,
           "no_prediction": shortlist.no_prediction, "widened": shortlist.widened,
           "expected_error": shortlist.expected_error, "workers": result.workers, "warm_s": warm_s,
           "start_workers_s": result.start_seconds,
           "compile_s": compile_s, "compile_cpu_s": sum(r.compile_seconds or 0 for r in result.rows),
           "predict_s": predict_s, "measure_s": measure_s, "overlap_s": early.seconds, "tune_s": tune_s,
           "tune_check_s": tune_check_s,
           "launch_compiled": sum(1 for x in rows if x.get("tune_compiled_at_launch")),
           "disassembled": sum(1 for r in result.rows if r.ok and r.bound_ms is None and r.fits),
           "pruned": sum(1 for r in result.rows if r.bound_ms is not None),
           "launched": len(tuned), "timed_early": len(early.timed),
           "timed_early_not_short": len(set(early.timed) - set(final)), "pick": pick, "rows": rows}
    if full:
        best = by_index.get(fastest(full_runs))
        full_s = sum(r["measure_s"] for r in full_runs.values())
        pick_full = pick if pick and pick.get("status") == "ok" and pick.get("measured_ms") else None
        out.update({"referee": referee, "full_best": best, "full_s": full_s,
                    "full_compiled_at_launch": sum(1 for x in full_runs.values() if x.get("compiled_at_launch")),
                    "ratio": pick_full["measured_ms"] / best["measured_ms"] if pick_full and best else None,
                    "time_fraction": tune_s / full_s if full_s else None, "saved_s": full_s - tune_s})
        # both searches check every result they time; an autotuner checks none: the share without the checks
        full_check_s = sum(x.get("check_s") or 0 for x in full_runs.values())
        out.update({"full_check_s": full_check_s,
                    "time_fraction_unchecked": (tune_s - tune_check_s) / (full_s - full_check_s)
                    if full_s > full_check_s else None})
    return out


def tune_outcome(res: dict):
    """The typed error for a tune that timed nothing (exit 13: no result), after its lines are shown; None
    when it has a pick."""
    from tritonscope.core.errors import NoResultError

    if res.get("pick"):
        return None
    short = [x for x in res.get("rows") or [] if x.get("shortlisted")]
    why = [f"{x['config']}: {x.get('tune_status') or 'not timed'}" for x in short[:3]]
    if not short:
        what = (f"none of the {res.get('configs', 0)} configs compiled and fit" if not res.get("fit")
                else "no config was short-listed")
    else:
        what = f"none of the {len(short)} short-listed configs launched and passed its check"
    return NoResultError(f"tune timed nothing: {what}" + (f" ({'; '.join(why)})" if why else "") + ".",
                         hint="The lines above say why for each config; `tritonscope bench` of one config shows "
                              "its launch's error in full.")
