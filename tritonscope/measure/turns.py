"""Launch, check and time configs one after another (an autotuner's search), or in turns (needs a GPU).

`time_configs` is what `tune` times with, both its short list and the full
search, and what `benchmarks/predict_vs_measured.py --rounds` measures with.

- rounds=1 is an autotuner's search: each config launched, checked and
  timed once, one after another.
- rounds=R launches and checks every config first, then times them all R
  times in turn (each time with rep/R ms of repetitions; the first round
  with the whole warm-up, later ones with a R-th of it) and keeps each
  config's median round.  A microsecond kernel's single timing is now and
  then several times its true time (tests/data/cost/h100_timing_noise.json:
  10 of 221 timings of 17 configs were 1.3x to 26x their config's median),
  and one such timing must not decide which config is fastest.

Each config also says which Triton cache entries appeared while it launched
(`new_kernels`): a launch that compiled (rather than loading a compile made
before) adds its kernel's folder to the cache.
"""

from __future__ import annotations

import os
import statistics
import time

from tritonscope.core.errors import error_line

ROUNDS = 5   # timings of each config when timed in turns


def kernels_in(cache: str) -> set[str]:
    """The kernels a Triton cache holds: its entries with a cubin (launcher stubs have none)."""
    out = set()
    try:
        for entry in os.scandir(cache):
            if entry.is_dir() and any(n.endswith((".cubin", ".hsaco")) for n in os.listdir(entry.path)):
                out.add(entry.name)
    except OSError:
        pass
    return out


def time_configs(requests, indices, arch: str, cache: str | None, warmup: int, rep: int,
                 rounds: int = 1) -> dict[int, dict]:
    """{index: {status, measured_ms, measure_s, check_s, new_kernels[, rounds_ms]}} for requests[i], i in
    `indices`, with TRITON_CACHE_DIR already `cache` (None: do not look at the cache; new_kernels is empty).

    measure_s is all the seconds the config took (binding, inputs, launch, check, its timings); check_s the
    part its check took (an autotuner checks nothing)."""
    from tritonscope.measure.bench import finish_row, prepare_loaded, time_prepared
    from tritonscope.pipeline.compile_path import Pipeline
    from tritonscope.pipeline.config import resolve

    pipe = Pipeline()  # binds each launch only: the launch itself compiles (or loads from `cache`), as a user's would

    out: dict[int, dict] = {}
    ready: dict[int, tuple] = {}
    shared: dict[tuple, dict] = {}
    for i in indices:
        before = kernels_in(cache) if cache else set()
        t = time.perf_counter()
        status, ms = "failed", None
        phases: dict = {}
        try:
            loaded = pipe.bind(resolve(requests[i], arch))
            # The kernel's module stays imported, and its JIT function keeps every kernel launched before in
            # memory (another group's, the other phase's): forget them, so this launch finds its kernel the
            # way a fresh process would, in `cache` or by compiling.
            caches = getattr(loaded.jit_fn, "device_caches", None)
            if caches is not None:
                caches.clear()
            row, values = prepare_loaded(loaded, phases=phases)
            status = row.status
            if values is not None:
                if rounds == 1:
                    row = finish_row(row, loaded, time_prepared(loaded, values, warmup, rep))
                    status, ms = row.status, (row.kernel.ms if row.kernel else None)
                else:   # configs of one launch share one set of inputs while they wait for their turns
                    key = tuple(sorted((k, str(v)) for k, v in loaded.spec.args.items()))
                    values = shared.setdefault(key, values)
                    ready[i] = (loaded, values, row)
        except Exception as e:  # one config that cannot launch is a row, not the end of the search
            status = f"failed: {error_line(e)}"
        out[i] = {"status": status, "measured_ms": ms, "measure_s": time.perf_counter() - t,
                  "check_s": phases.get("check_s", 0.0),
                  "new_kernels": sorted(kernels_in(cache) - before) if cache else []}
    times: dict[int, list[float]] = {i: [] for i in ready}
    for k in range(rounds if ready else 0):
        for i, (loaded, values, _) in ready.items():
            t = time.perf_counter()
            try:
                times[i].append(time_prepared(loaded, values, warmup if k == 0 else max(1, warmup // rounds),
                                              max(1, rep // rounds)))
            except Exception as e:
                out[i]["status"] = f"failed: {error_line(e)}"
            out[i]["measure_s"] += time.perf_counter() - t
    for i, (loaded, values, row) in ready.items():
        if times[i] and not out[i]["status"].startswith("failed"):
            row = finish_row(row, loaded, statistics.median(times[i]))
            out[i].update(status=row.status, measured_ms=row.kernel.ms if row.kernel else None,
                          rounds_ms=times[i])
    ready.clear()
    shared.clear()
    return out


def fastest(runs: dict[int, dict]) -> int | None:
    """The config whose launch passed its check and timed fastest (tune's pick, the full search's best)."""
    timed = [i for i, r in runs.items() if r.get("status") == "ok" and r.get("measured_ms")]
    return min(timed, key=lambda i: runs[i]["measured_ms"]) if timed else None
