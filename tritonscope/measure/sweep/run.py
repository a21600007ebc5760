"""Running a sweep: cached rows served here, the others compiled in local worker processes (or on Dask).

Each config is compiled in a worker process (forked on Linux, spawned
elsewhere: see `_run_pool`) and reduced to a row (worker.compile_row); a
failing config is a row, and the sweep goes on.  Rows come back in grid
order; Ctrl-C returns what finished, marked interrupted.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import sys
import time
from typing import Callable

from tritonscope.measure.pruning import Pruning
from tritonscope.measure.sweep import worker
from tritonscope.measure.sweep.cache import cached_row, row_cache_key, store_row
from tritonscope.measure.sweep.dask import check_scheduler, run_dask
from tritonscope.measure.sweep.rows import SweepResult, SweepRow
from tritonscope.measure.sweep.worker import compile_row, row_shell


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def run_sweep(requests: list, *, default_arch: str, jobs: int | None = None, use_cache: bool = True,
              on_row: Callable[[SweepRow], None] | None = None, kernel: str = "", target: str = "",
              from_autotune: bool = False, scheduler: str | None = None,
              pruning: Pruning | None = None) -> SweepResult:
    """Compile every request; rows come back in grid order.

    `pruning` (tune; local workers only, never the row cache): disassemble only the configs the model could
    still rank (Pruning); the caller lowers its threshold from `on_row` as predictions come in.

    `scheduler`: run the configs on a Dask cluster instead of local worker
    processes: "tcp://HOST:PORT" (a running scheduler) or "local" (a
    LocalCluster of `jobs` worker processes on this machine); see run_dask.
    Cached rows are served here either way, and new rows are cached here.

    Ctrl-C cancels what has not started, stops the workers, and returns what
    finished with `interrupted=True` (the caller decides the exit code).
    """
    if scheduler is not None:
        check_scheduler(scheduler)
    started = time.perf_counter()
    result = SweepResult(kernel=kernel, target=target, rows=[], requested=len(requests), from_autotune=from_autotune)
    if pruning is not None and (use_cache or scheduler is not None):
        raise ValueError("a pruned sweep runs on local workers and never uses the row cache")
    keys = [(row_cache_key(r, default_arch) if use_cache else None) for r in requests]
    todo: list[int] = []
    for i, req in enumerate(requests):
        row = cached_row(keys[i], i)
        if row is not None:
            result.rows.append(row)
            if on_row:
                on_row(row)
        else:
            todo.append(i)
    jobs = max(1, min(jobs or default_jobs(), len(todo))) if todo else 0
    result.workers = jobs
    try:
        if scheduler is not None and todo:
            result.workers = run_dask(requests, todo, keys, default_arch, scheduler, jobs, result, on_row)
        elif jobs == 1:
            worker.set_pruning(pruning)
            try:
                for i in todo:
                    row = compile_row(i, requests[i], default_arch)
                    store_row(keys[i], row)
                    result.rows.append(row)
                    if on_row:
                        on_row(row)
            finally:
                worker.set_pruning(None)
        elif jobs > 1:
            _run_pool(requests, todo, keys, default_arch, jobs, result, on_row, pruning)
    except KeyboardInterrupt:
        result.interrupted = True
    result.rows.sort(key=lambda r: r.index)
    result.seconds = time.perf_counter() - started
    return result


def compile_weight(req) -> float:
    """How long a config's compile should take, relative to its grid's others: the elements each thread
    handles (the product of its power-of-two constexprs of 16 and up, over its threads), times its stages.

    Only the order in which a sweep's workers take configs depends on it, never a result: a long compile
    (a 16384-wide row on one warp, a 256x256 tile) taken first runs beside the others, not after them."""
    elems = 1
    for v in (req.constexprs or {}).values():
        try:
            n = int(str(v), 0)
        except ValueError:
            continue
        if n >= 16 and n & (n - 1) == 0:
            elems *= n
    return elems / (32 * (req.num_warps or 4)) * max(1, req.num_stages or 1)


def _run_pool(requests, todo, keys, default_arch, jobs, result, on_row, pruning: Pruning | None = None) -> None:
    """`jobs` worker processes; rows are collected as they finish.

    On Linux the workers are forked, so they start at once with Triton
    imported and the kernel loaded (spawned workers pay 1-2 s each to start,
    which ate most of the gain on a 2-core machine).  Each worker holds one
    task at a time so none sits on a queued config while another idles.
    """
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    ctx = multiprocessing.get_context(method)
    started = time.perf_counter()
    pool = cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=worker._worker_init, initargs=(pruning,))
    # The heaviest configs first, so that no long compile starts last and runs alone (rows still come back
    # in grid order: run_sweep sorts them).
    order = sorted(todo, key=lambda i: -compile_weight(requests[i]))
    futures = {pool.submit(compile_row, i, requests[i], default_arch): i for i in order}
    result.start_seconds = time.perf_counter() - started
    try:
        for fut in cf.as_completed(futures):
            i = futures[fut]
            try:
                row = fut.result()
            except cf.process.BrokenProcessPool as e:
                row = row_shell(i, requests[i])
                row.error, row.error_kind = f"the worker process died while compiling this config ({e})", "WorkerCrash"
            except Exception as e:
                row = row_shell(i, requests[i])
                row.error, row.error_kind = f"{type(e).__name__}: {e}", type(e).__name__
            store_row(keys[i], row)
            result.rows.append(row)
            if on_row:
                on_row(row)
    except KeyboardInterrupt:
        _stop(pool)
        raise
    pool.shutdown(wait=True)


def _stop(pool: cf.ProcessPoolExecutor) -> None:
    """Cancel queued work and end the running workers (they ignore SIGINT)."""
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            proc.terminate()
        except Exception:
            pass
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            proc.join(timeout=5)
        except Exception:
            pass
