"""Compile a grid of configs in parallel worker processes: one row per config.

A sweep is a list of `Request`s (kernels.Request: picklable, strings and
ints only).  Each is compiled in a worker process (forked on Linux, spawned
elsewhere: see `_run_pool`), and reduced to a `SweepRow` of plain
values: shared memory, registers, spills, the PTX instruction mix, whether
it fits the arch (summary.summarize: fit, occupancy, spills), or the error
that stopped it.  A failing config is a row; the sweep goes on.

Rows are cached on disk by everything that decides the compile (the spec,
the kernel file's bytes, the Triton version and the code-generation
environment), so a repeat sweep is served without starting any worker.
Core code: no printing; the command renders (render/diff_view.py).
"""

from __future__ import annotations

import concurrent.futures as cf
import csv
import hashlib
import io
import itertools
import json
import multiprocessing
import os
import re
import signal
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable

from tritonscope.core.errors import TritonscopeError, UsageError, error_line
from tritonscope.measure.pruning import Pruning, bound_ms, pruning_threshold  # noqa: F401  (tune's, re-exported)

ROW_FORMAT = 4   # bump when SweepRow changes: old cached rows are then ignored (2: stack spills, STL/LDL;
                 # 3: launch options; 4: the cost model's compiled facts)


@dataclass
class SweepRow:
    index: int
    config: str                       # "BLOCK_SIZE=128 w4 s3 sm_90a"
    constexprs: dict[str, Any]
    num_warps: int | None
    num_stages: int | None
    arch: str | None
    dtype: str | None
    options: dict[str, Any] = field(default_factory=dict)  # launch options: maxnreg, num_ctas, enable_fp_fusion
    ok: bool = False
    error: str | None = None          # why it did not compile
    error_kind: str | None = None     # CompileError, KernelSpecError, ...
    shared: int | None = None         # dynamic shared memory, bytes
    shared_limit: int | None = None   # the arch's max per block
    registers: int | None = None
    spills: int | None = None         # spill bytes per thread: stack frame + local (summary.Spills.bytes)
    spill_stores: int | None = None   # STL instructions in the SASS
    spill_loads: int | None = None    # LDL instructions in the SASS
    fits: bool | None = None
    problems: list[str] = field(default_factory=list)
    blocks_per_sm: int | None = None
    occupancy: float | None = None
    limited_by: str | None = None
    mix: dict[str, int] = field(default_factory=dict)   # instruction classes of the machine stage (PTX; AMDGCN)
    waves_per_simd: int | None = None                  # AMD targets: occupancy in waves per SIMD
    kernel_hash: str | None = None
    compile_seconds: float = 0.0
    cached: bool = False
    # The cost model's compiled facts at the config's launch (cost/features.py); None with cost_why when
    # the model cannot read this kernel.  The prediction itself is made per --gpu (attach_predictions).
    cost_features: dict[str, Any] | None = None
    cost_why: str | None = None
    predicted_ms: float | None = None          # filled by attach_predictions, never cached
    bound_ms: float | None = None              # tune's pruned configs: the model's lower bound, not a prediction
    prediction: dict[str, Any] | None = None   # its breakdown (cost.Prediction.to_dict)
    failure: dict[str, Any] | None = None      # failed inside Triton: its report (analyses/failure), in one line in `error`


@dataclass
class SweepResult:
    kernel: str
    target: str
    rows: list[SweepRow]
    requested: int
    interrupted: bool = False
    seconds: float = 0.0
    workers: int = 0
    from_autotune: bool = False
    options: dict[str, Any] = field(default_factory=dict)  # the launch options every config was given
    start_seconds: float = 0.0   # starting the worker processes (forks) and handing them the configs

    @property
    def finished(self) -> int:
        return len(self.rows)

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "tritonscope.sweep", "schema_version": 1, "kernel": self.kernel, "target": self.target,
                "requested": self.requested, "finished": self.finished, "interrupted": self.interrupted,
                "seconds": round(self.seconds, 3), "workers": self.workers, "from_autotune": self.from_autotune,
                "options": dict(self.options), "rows": [asdict(r) for r in self.rows]}


# --------------------------------------------------------------------------
# The grid
# --------------------------------------------------------------------------


def parse_axis(text: str, what: str) -> list[str]:
    """'16,32,64' -> ['16', '32', '64']."""
    values = [v.strip() for v in str(text).split(",") if v.strip()]
    if not values:
        raise UsageError(f"Empty list for {what}.", hint=f"Give values like {what} 16,32,64.")
    return values


def parse_constexpr_axes(items: list[str] | None) -> dict[str, list[str]]:
    """['BLOCK=16,32', 'X=1'] -> {'BLOCK': ['16', '32'], 'X': ['1']}."""
    out: dict[str, list[str]] = {}
    for item in items or []:
        name, sep, values = item.partition("=")
        if not sep or not name.strip().isidentifier() or not values.strip():
            raise UsageError(f"Bad -c {item!r}: expected NAME=V1,V2,...", hint="For example: -c BLOCK=16,32,64")
        out[name.strip()] = parse_axis(values, f"-c {name.strip()}=")
    return out


def _ints(values: list[str] | None, what: str) -> list[int] | None:
    if not values:
        return None
    try:
        return [int(v) for v in values]
    except ValueError:
        raise UsageError(f"{what} takes integers, got {','.join(values)}.", hint=f"For example: {what} 2,4,8") from None


def build_grid(base, *, constexprs: dict[str, list[str]], num_warps: list[int] | None,
               num_stages: list[int] | None, arches: list[str] | None, dtypes: list[str] | None,
               autotune: list[dict[str, Any]] | None = None) -> list:
    """Every combination, as Requests (the user's axes and launch options override autotune fields)."""
    seeds: list[dict[str, Any]] = autotune or [{"constexprs": {}, "num_warps": None, "num_stages": None}]
    names = list(constexprs)
    out, seen = [], set()
    for seed in seeds:
        for combo in itertools.product(*(constexprs[n] for n in names)):
            for w, s, arch, dt in itertools.product(num_warps or [seed["num_warps"]],
                                                    num_stages or [seed["num_stages"]],
                                                    arches or [base.arch], dtypes or [base.dtype]):
                cx = dict(base.constexprs or {})
                cx.update({k: str(v) for k, v in seed["constexprs"].items()})
                cx.update(zip(names, combo))
                options = {**(seed.get("options") or {}), **(base.options or {})}  # a Config's maxnreg= ...
                req = replace(base, constexprs=cx, num_warps=w if w is not None else base.num_warps,
                              num_stages=s if s is not None else base.num_stages, arch=arch, dtype=dt,
                              options=options)
                key = (tuple(sorted(cx.items())), req.num_warps, req.num_stages, arch, dt,
                       tuple(sorted(options.items())))
                if key not in seen:
                    seen.add(key)
                    out.append(req)
    return out


# --------------------------------------------------------------------------
# One config (runs in a worker)
# --------------------------------------------------------------------------


def _row_shell(index: int, req) -> SweepRow:
    return SweepRow(index=index, config=_req_label(req), constexprs=dict(req.constexprs or {}),
                    num_warps=req.num_warps, num_stages=req.num_stages, arch=req.arch, dtype=req.dtype,
                    options=dict(req.options or {}))


def _req_label(req) -> str:
    from tritonscope.core.model import option_words

    parts = [f"{k}={v}" for k, v in (req.constexprs or {}).items()]
    if req.num_warps:
        parts.append(f"w{req.num_warps}")
    if req.num_stages is not None:
        parts.append(f"s{req.num_stages}")
    if req.arch:
        parts.append(req.arch)
    if req.dtype:
        parts.append(req.dtype)
    if words := option_words(req.options):
        parts.append(words)
    return " ".join(parts)


_PRUNING: Pruning | None = None   # this worker's (set by _worker_init; run_sweep's own for one job)


def compile_row(index: int, req, default_arch: str) -> SweepRow:
    """Compile one config and reduce it to a row; errors become the row's error.

    Under a Pruning (tune), the SASS is disassembled only for a config that fits and that the model could
    still rank; any other keeps `bound_ms` (its lower bound) and no prediction."""
    from tritonscope.language.dialects import class_counts, machine_stage
    from tritonscope.analyses.summary import summarize
    from tritonscope.pipeline.compiler import Pipeline
    from tritonscope.pipeline.config import resolve

    pruning = _PRUNING
    row = _row_shell(index, req)
    from tritonscope.analyses.failure import reporter, row_error

    # its own rows (not the result cache); a config failing inside Triton gets its report (one more compile)
    pipe = Pipeline(sass=pruning is None, on_failure=reporter(checks=False))
    try:
        config = resolve(req, default_arch)
        loaded = pipe.bind(config)
        spec = loaded.spec
        row.config, row.constexprs, row.options = spec.label(options=True), dict(spec.constexprs), spec.launch_options()
        row.num_warps, row.num_stages, row.arch, row.dtype = spec.num_warps, spec.num_stages, spec.arch, spec.dtype
        artifact = pipe.compile(config, loaded=loaded).artifact
    except KeyboardInterrupt:
        raise
    except TritonscopeError as e:
        row.error, row.error_kind = row_error(e) or e.message, type(e).__name__
        if e.data.get("failure") is not None:
            row.failure = e.data["failure"].to_dict()
        return row
    except Exception as e:  # a bug or an unclassified Triton failure: still a row
        row.error, row.error_kind = error_line(e), type(e).__name__
        return row
    summary = summarize(artifact)
    problems = list(summary.fit.problems) if summary.fit else []
    if pruning is not None and not problems and "sass" not in artifact.stages:
        _cost_facts(row, artifact, summary, bound=True)
        bound = bound_ms(row.cost_features, pruning.gpu)
        if pruning.admits(bound):
            from tritonscope.pipeline.compile import add_sass

            row.cost_features, row.cost_why = None, None
            if add_sass(artifact):
                summary = summarize(artifact)   # the spills the SASS counts
        else:
            row.bound_ms, row.cost_features = bound, None
    row.ok = True
    row.shared, row.shared_limit = summary.shared.dynamic, summary.shared.limit_per_block
    row.registers, row.spills = summary.registers, summary.spills.bytes
    row.spill_stores, row.spill_loads = summary.spills.stores, summary.spills.loads
    row.fits, row.problems = not problems, problems
    if summary.occupancy:
        occ = summary.occupancy
        row.blocks_per_sm, row.occupancy, row.limited_by = occ.blocks_per_sm, occ.fraction, occ.limited_by
        row.waves_per_simd = occ.waves_per_simd
    mix_stage = machine_stage(artifact.stages) or "ptx"   # PTX on CUDA, AMDGCN on AMD
    row.mix = class_counts(mix_stage, artifact.stages.get(mix_stage, ""))
    row.kernel_hash = artifact.kernel_hash
    row.compile_seconds = round(artifact.compile_seconds, 4)
    if row.bound_ms is not None:
        row.cost_why = "not predicted: its lower bound is above the short list's threshold"
    elif pruning is not None and problems:
        row.cost_why = "not predicted: it does not fit"   # never ranked, so never disassembled under a Pruning
    else:
        _cost_facts(row, artifact, summary)
    return row


def _cost_facts(row: SweepRow, artifact, summary, bound: bool = False) -> None:
    """The cost model's compiled facts for this row (a failure of the model is its reason, never the row's);
    `bound`: the facts of its lower bound, read without the SASS (features_of_artifact)."""
    from tritonscope.cost.features import NoFeatures, features_of_artifact

    try:
        row.cost_features = features_of_artifact(artifact, summary, bound=bound)
    except NoFeatures as e:
        row.cost_why = str(e)
    except Exception as e:  # a kernel shape the model's reader does not know: no prediction, said plainly
        row.cost_why = f"the cost model could not read this kernel ({type(e).__name__}: {e})"


def _worker_init(pruning: Pruning | None = None) -> None:
    global _PRUNING
    _PRUNING = pruning
    # Ctrl-C goes to the whole process group; the parent decides what to stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from tritonscope import triton_api

    triton_api.quiet_known_warnings()


# --------------------------------------------------------------------------
# The row cache
# --------------------------------------------------------------------------


def _row_cache_key(req, default_arch: str) -> str | None:
    """Everything that decides the compile, hashed; None when it cannot be known."""
    try:
        from tritonscope import triton_api
        from tritonscope.inputs import import_watch
        from tritonscope.inputs.kernels import resolve_target

        path, kernel = resolve_target(req.target)
        data = {
            "format": ROW_FORMAT, "request": asdict(req), "default_arch": default_arch,
            "file": str(path), "kernel": kernel, "source": hashlib.sha256(path.read_bytes()).hexdigest(),
            "triton": triton_api.triton_version(), "env": triton_api.codegen_env(),
            # what the module read when this process imported it (env vars, config files): their values now
            "reads": import_watch.reads_of(path),
        }
    except Exception:
        return None
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:32]


def _cache_path(key: str) -> Path:
    from tritonscope.core.env import cache_dir

    return cache_dir() / "sweep" / f"{key}.json"


def _cached_row(key: str | None, index: int) -> SweepRow | None:
    if not key:
        return None
    from tritonscope.core.cache_prune import load_entry, touch

    path = _cache_path(key)
    data = load_entry(path)
    try:
        row = SweepRow(**data)  # a damaged entry (not a dict, unknown fields) is a miss
    except TypeError:
        return None
    touch(path)  # it answered: used now
    row.index, row.cached = index, True
    return row


def _store_row(key: str | None, row: SweepRow) -> None:
    if not key or not row.ok:   # failures are retried: the cause may be transient
        return
    from tritonscope.core.output import write_cache

    write_cache(_cache_path(key), json.dumps(asdict(row)))   # the cache is an optimisation only


# --------------------------------------------------------------------------
# Running the sweep
# --------------------------------------------------------------------------


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
    LocalCluster of `jobs` worker processes on this machine); see _run_dask.
    Cached rows are served here either way, and new rows are cached here.

    Ctrl-C cancels what has not started, stops the workers, and returns what
    finished with `interrupted=True` (the caller decides the exit code).
    """
    global _PRUNING
    if scheduler is not None:
        check_scheduler(scheduler)
    started = time.perf_counter()
    result = SweepResult(kernel=kernel, target=target, rows=[], requested=len(requests), from_autotune=from_autotune)
    if pruning is not None and (use_cache or scheduler is not None):
        raise ValueError("a pruned sweep runs on local workers and never uses the row cache")
    keys = [(_row_cache_key(r, default_arch) if use_cache else None) for r in requests]
    todo: list[int] = []
    for i, req in enumerate(requests):
        row = _cached_row(keys[i], i)
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
            result.workers = _run_dask(requests, todo, keys, default_arch, scheduler, jobs, result, on_row)
        elif jobs == 1:
            _PRUNING = pruning
            try:
                for i in todo:
                    row = compile_row(i, requests[i], default_arch)
                    _store_row(keys[i], row)
                    result.rows.append(row)
                    if on_row:
                        on_row(row)
            finally:
                _PRUNING = None
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
    pool = cf.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_worker_init, initargs=(pruning,))
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
                row = _row_shell(i, requests[i])
                row.error, row.error_kind = f"the worker process died while compiling this config ({e})", "WorkerCrash"
            except Exception as e:
                row = _row_shell(i, requests[i])
                row.error, row.error_kind = f"{type(e).__name__}: {e}", type(e).__name__
            _store_row(keys[i], row)
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


# --------------------------------------------------------------------------
# Running on a Dask cluster (the `dask` extra: pip install 'tritonscope[dask]')
# --------------------------------------------------------------------------

DASK_HINT = "Install the optional extra: pip install 'tritonscope[dask]' (it brings distributed)."


def check_scheduler(scheduler: str) -> str:
    """'local' or a tcp://HOST:PORT address, checked (and `distributed` importable) before any work."""
    text = scheduler.strip()
    # tcp://10.0.0.5:8786   tls://sched.example:8786   local
    if text != "local" and not re.fullmatch(r"(tcp|tls|ucx|inproc)://[^\s/]+(:\d+)?/?", text):
        raise UsageError(f"--scheduler {scheduler!r} is not a Dask scheduler address.",
                         hint="Give tcp://HOST:PORT (a running `dask scheduler`), or local for a cluster on this machine.")
    _distributed()
    return text


def _distributed():
    try:
        import distributed
    except ImportError:
        raise UsageError("--scheduler needs Dask's `distributed` package, which is not installed.",
                         hint=DASK_HINT) from None
    return distributed


def _run_dask(requests, todo, keys, default_arch, scheduler, jobs, result, on_row) -> int:
    """One task per config on a Dask cluster; each returns its SweepRow, gathered as they finish.

    No scheduling of our own: `distributed.Client.submit` and `as_completed`.
    Workers need tritonscope and the same Triton; a different Triton or
    tritonscope on any worker stops the sweep before it starts (rows would
    not be comparable, and the row cache here keys on this machine's Triton).
    The kernel file's bytes go with each task: a worker that has the file at
    the same path with the same content compiles it there (its imports work),
    any other compiles a copy (see _dask_row).  Returns the number of workers.
    """
    import uuid

    distributed = _distributed()
    client = _dask_client(distributed, scheduler, jobs)
    shipped = {}
    try:
        workers = _check_workers(client)
        for i in todo:
            shipped.setdefault(requests[i].target, _kernel_shipment(requests[i].target))
        run = uuid.uuid4().hex[:8]
        futures = {client.submit(_dask_row, i, requests[i], default_arch, shipped[requests[i].target],
                                 key=f"tritonscope-row-{run}-{i}", pure=False, retries=0): i for i in todo}
        try:
            for fut in distributed.as_completed(futures):
                i = futures[fut]
                try:
                    row = fut.result()
                except Exception as e:  # the worker died (KilledWorker) or the task could not run there
                    row = _row_shell(i, requests[i])
                    row.error = f"the Dask task failed on its worker: {type(e).__name__}: {e}"
                    row.error_kind = "WorkerCrash"
                _store_row(keys[i], row)
                result.rows.append(row)
                if on_row:
                    on_row(row)
        except KeyboardInterrupt:
            client.cancel(list(futures))
            raise
    finally:
        _close_dask(client)
    return workers


def _dask_client(distributed, scheduler: str, jobs: int):
    import logging

    try:
        if scheduler == "local":
            # processes, one thread each: a compile holds triton_api's lock, so threads would take turns
            cluster = distributed.LocalCluster(n_workers=max(1, jobs), threads_per_worker=1, processes=True,
                                               dashboard_address=":0", silence_logs=logging.ERROR)
            try:  # connect by address, as to a remote scheduler: one code path for both
                client = distributed.Client(cluster.scheduler_address, timeout=10)
            except BaseException:
                cluster.close()
                raise
            client._tritonscope_cluster = cluster
            return client
        return distributed.Client(scheduler, timeout=10)
    except (OSError, TimeoutError) as e:
        raise UsageError(f"Cannot reach the Dask scheduler at {scheduler}: {e}",
                         hint="Start one with `dask scheduler` (and workers with `dask worker ADDRESS`), "
                              "check the address, or use --scheduler local.") from None


def _close_dask(client) -> None:
    cluster = getattr(client, "_tritonscope_cluster", None)
    try:
        client.close()
    finally:
        if cluster is not None:  # a LocalCluster we started
            cluster.close()


def _check_workers(client) -> int:
    """The number of workers, once each runs the same Triton and tritonscope as this machine."""
    mine = _versions()
    theirs = client.run(_versions)
    if not theirs:
        raise UsageError("The Dask cluster has no workers.", hint="Start some with `dask worker SCHEDULER_ADDRESS`.")
    odd = {w: v for w, v in theirs.items() if v != mine}
    if odd:
        worker, versions = next(iter(odd.items()))
        raise UsageError(
            f"{len(odd)} Dask worker(s) run other versions than this machine (e.g. {worker}: "
            f"Triton {versions['triton']}, tritonscope {versions['tritonscope']}; here: Triton {mine['triton']}, "
            f"tritonscope {mine['tritonscope']}).",
            hint="Install the same Triton and tritonscope on every worker: rows from another compiler "
                 "would not be comparable.")
    return len(theirs)


def _versions() -> dict[str, str]:
    from tritonscope import triton_api
    from tritonscope._version import __version__

    return {"triton": triton_api.triton_version(), "tritonscope": __version__}


def _kernel_shipment(target: str) -> dict[str, Any] | None:
    """{path, sha256, source} of a target's kernel file, sent with its tasks (None for a sample)."""
    from tritonscope.inputs.kernels import SAMPLES_DIR, resolve_target

    path, _ = resolve_target(target)
    if path.parent == SAMPLES_DIR:  # workers have their own samples (same tritonscope)
        return None
    data = path.read_bytes()
    return {"path": str(path), "sha256": hashlib.sha256(data).hexdigest(), "source": data.decode("utf-8")}


def _dask_row(index: int, req, default_arch: str, shipment: dict[str, Any] | None) -> SweepRow:
    """On a Dask worker: compile_row, from the user's file when this worker has the same one, else from a copy."""
    from tritonscope import triton_api

    triton_api.quiet_known_warnings()
    if shipment is not None:
        path = Path(shipment["path"])
        try:
            same = hashlib.sha256(path.read_bytes()).hexdigest() == shipment["sha256"]
        except OSError:
            same = False
        if not same:  # another machine, or another version of the file there: a copy of ours
            import tempfile

            from tritonscope.core.output import write_cache

            path = Path(tempfile.gettempdir()) / "tritonscope-dask" / shipment["sha256"][:16] / path.name
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                write_cache(path, shipment["source"])
        # the absolute path: the worker's folder is not the client's
        kernel = _kernel_name(req.target)
        req = replace(req, target=f"{path}:{kernel}" if kernel else str(path))
    return compile_row(index, req, default_arch)


def _kernel_name(target: str) -> str:
    """'k.py:add' -> 'add'; 'k.py' -> '' (as kernels.resolve_target reads a target)."""
    if ":" in target and not re.match(r"^[A-Za-z]:[\\/]", target):
        return target.rpartition(":")[2]
    return ""


# --------------------------------------------------------------------------
# Sorting, filtering, saving
# --------------------------------------------------------------------------

SORT_KEYS = ("config", "shared", "registers", "spills", "occupancy", "blocks_per_sm", "time", "predicted")
_FIELD_ALIASES = {"time": "compile_seconds", "predicted": "predicted_ms", "pred": "predicted_ms", "smem": "shared", "regs": "registers", "occ": "occupancy",
                  "warps": "num_warps", "stages": "num_stages"}


def sort_rows(rows: list[SweepRow], key: str | None) -> list[SweepRow]:
    """Sort by a column ('-shared' for descending); rows without a value go last."""
    if not key:
        return rows
    desc = key.startswith("-")
    name = key.lstrip("-+")
    name = _FIELD_ALIASES.get(name, name)
    if name != "config" and name not in SweepRow.__dataclass_fields__ and not _is_constexpr(rows, name):
        raise UsageError(f"Cannot sort by {key!r}.",
                         hint="Sort by config, shared, registers, spills, occupancy, blocks_per_sm, time, "
                              "num_warps, num_stages or a constexpr (prefix - for descending).")

    def value(r: SweepRow):
        v = r.index if name == "config" else _field(r, name)
        return v

    present = [r for r in rows if value(r) is not None]
    missing = [r for r in rows if value(r) is None]
    return sorted(present, key=value, reverse=desc) + missing


def _is_constexpr(rows, name) -> bool:
    return any(name in r.constexprs for r in rows)


def _field(row: SweepRow, name: str):
    if name in row.constexprs:
        return row.constexprs[name]
    if name in row.options:  # maxnreg, num_ctas, enable_fp_fusion
        return row.options[name]
    if name.startswith("mix."):
        return row.mix.get(name[4:].replace("_", " "), 0)
    return getattr(row, name, None)


# shared<100000   registers>=128   BLOCK=64   num_warps!=8
_COND_RE = re.compile(r"^\s*([\w.]+)\s*(<=|>=|!=|==|=|<|>)\s*(\S+)\s*$")


def check_where_and_sort(where: list[str] | None, sort: str | None, constexprs: Iterable[str]) -> None:
    """Refuse (UsageError) a --where or --sort the rows could never answer, before any config compiles.

    `constexprs`: the constexpr names the configs set.  The same names are
    accepted here as by filter_rows and sort_rows once rows exist.
    """
    names = set(constexprs)

    def known(name: str) -> bool:
        name = _FIELD_ALIASES.get(name, name)
        return name in SweepRow.__dataclass_fields__ or name in names or name.startswith("mix.")

    for cond in where or []:
        c = cond.strip().lower()
        if c in _WORD_CONDITIONS:
            continue
        m = _COND_RE.match(cond)
        if not m:
            raise UsageError(f"Cannot read --where {cond!r}.", hint=_WHERE_HINT)
        if not known(m[1]):
            raise UsageError(f"Unknown field {m[1]!r} in --where {cond!r}.", hint=_FIELDS_HINT)
    if sort:
        name = sort.lstrip("-+")
        if name != "config" and not (known(name) and not name.startswith("mix.")):
            raise UsageError(f"Cannot sort by {sort!r}.", hint=_SORT_HINT)


_WORD_CONDITIONS = frozenset({"fits", "fit", "nofit", "!fits", "not-fits", "nofits", "ok", "compiled", "failed",
                              "fails", "error", "errors"})
_WHERE_HINT = "Use fits, nofit, ok, failed, or FIELD<op>VALUE such as shared<100000 or BLOCK=64."
_FIELDS_HINT = ("Fields: shared, registers, spills, occupancy, blocks_per_sm, time, num_warps, num_stages, "
                "mix.wgmma ..., or a constexpr name.")
_SORT_HINT = ("Sort by config, shared, registers, spills, occupancy, blocks_per_sm, time, num_warps, num_stages "
              "or a constexpr (prefix - for descending).")


def filter_rows(rows: list[SweepRow], where: list[str] | None) -> list[SweepRow]:
    """Keep rows matching every condition: fits, nofit, ok, failed, or FIELD<op>VALUE."""
    for cond in where or []:
        rows = [r for r in rows if _matches(r, cond)]
    return rows


def _matches(row: SweepRow, cond: str) -> bool:
    c = cond.strip().lower()
    if c in ("fits", "fit"):
        return bool(row.ok and row.fits)
    if c in ("nofit", "!fits", "not-fits", "nofits"):
        return bool(row.ok and not row.fits)
    if c in ("ok", "compiled"):
        return row.ok
    if c in ("failed", "fails", "error", "errors"):
        return not row.ok
    m = _COND_RE.match(cond)
    if not m:
        raise UsageError(f"Cannot read --where {cond!r}.",
                         hint="Use fits, nofit, ok, failed, or FIELD<op>VALUE such as shared<100000 or BLOCK=64.")
    name, op, text = m[1], m[2], m[3]
    name = _FIELD_ALIASES.get(name, name)
    if name not in SweepRow.__dataclass_fields__ and name not in row.constexprs and not name.startswith("mix."):
        raise UsageError(f"Unknown field {m[1]!r} in --where {cond!r}.",
                         hint="Fields: shared, registers, spills, occupancy, blocks_per_sm, time, num_warps, "
                              "num_stages, mix.wgmma ..., or a constexpr name.")
    value = _field(row, name)
    if value is None:
        return False
    try:
        target: Any = type(value)(text) if not isinstance(value, bool) else text.lower() in ("1", "true", "yes")
    except (TypeError, ValueError):
        target = text
    return {"<": value < target, ">": value > target, "<=": value <= target, ">=": value >= target,
            "=": value == target, "==": value == target, "!=": value != target}[op]


def csv_text(result: SweepResult, rows: list[SweepRow] | None = None) -> str:
    rows = result.rows if rows is None else rows
    cx_names = list(dict.fromkeys(n for r in rows for n in r.constexprs))
    mix_names = list(dict.fromkeys(n for r in rows for n in r.mix))
    opt_names = list(dict.fromkeys(n for r in rows for n in r.options))  # only when a launch option was set
    head = ["config", *cx_names, "num_warps", "num_stages", "arch", "dtype", *opt_names, "ok", "fits", "shared_bytes",
            "shared_limit", "registers", "spill_bytes", "spill_stores", "spill_loads", "blocks_per_sm", "occupancy", "limited_by",
            *[f"mix:{m}" for m in mix_names], "problems", "error", "compile_seconds", "cached", "kernel_hash"]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(head)
    for r in rows:
        w.writerow([r.config, *[r.constexprs.get(n, "") for n in cx_names], r.num_warps, r.num_stages, r.arch,
                    r.dtype or "", *[_blank(r.options.get(n)) for n in opt_names], r.ok, "" if r.fits is None else r.fits, _blank(r.shared), _blank(r.shared_limit),
                    _blank(r.registers), _blank(r.spills), _blank(r.spill_stores), _blank(r.spill_loads),
                    _blank(r.blocks_per_sm),
                    "" if r.occupancy is None else f"{r.occupancy:.4f}", r.limited_by or "",
                    *[r.mix.get(m, 0) if r.ok else "" for m in mix_names], "; ".join(r.problems), r.error or "",
                    r.compile_seconds, r.cached, r.kernel_hash or ""])
    return buf.getvalue()


def _blank(v) -> Any:
    return "" if v is None else v


SAVE_FORMATS = {".csv": "csv", ".json": "json"}


def check_save_path(path: str, *, force: bool = False) -> str:
    """'csv' or 'json' for a --save path that can be written (checked before the sweep starts)."""
    from tritonscope.core.output import check_path

    return check_path(path, force=force, formats=SAVE_FORMATS, what="sweep")


def save_sweep(result: SweepResult, path: str, *, rows: list[SweepRow] | None = None, force: bool = False) -> Path:
    """Write the rows as .csv or .json through the one writer (atomic; never clobbers without force)."""
    from tritonscope.core.output import write_atomic

    if check_save_path(path, force=force) == "csv":
        text = csv_text(result, rows)
    else:
        data = result.to_dict()
        if rows is not None:
            data["rows"] = [asdict(r) for r in rows]
        text = json.dumps(data, indent=1) + "\n"
    return write_atomic(path, text, force=force)


def iter_mix_columns(rows: Iterable[SweepRow]) -> list[str]:
    """The mix classes worth a column (present in any row), in a stable order."""
    from tritonscope.language.dialects import order_classes

    return order_classes(m for r in rows for m in r.mix)


# --------------------------------------------------------------------------
# Predicted times (the cost model): the pick and the short list worth measuring
# --------------------------------------------------------------------------


@dataclass
class Shortlist:
    gpu: str | None
    calibration: str = ""
    pick: int | None = None            # row index of the predicted fastest config
    indexes: list[int] = field(default_factory=list)   # the short list, fastest first
    widened: bool = False              # the top configs are closer than the expected error: more were added
    expected_error: float | None = None
    predicted: int = 0                 # rows with a prediction
    bounded: int = 0                   # rows a Pruning left with a lower bound only (they could not rank)
    no_prediction: dict[str, int] = field(default_factory=dict)   # reason -> rows

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def attach_predictions(rows: list[SweepRow], gpu: str | None, *, top: int = 3) -> Shortlist:
    """Each compiled row's predicted time on `gpu` (None: each row's arch's reference GPU), and the short list.

    Only rows that compiled and fit are predicted (a config that does not fit is never ranked).  The
    short list is the `top` fastest predictions, widened to every config whose prediction is within the
    expected error of the best (they cannot be told apart by the model, so each is worth measuring)."""
    from tritonscope.cost import find_gpu, predict_features, resolve_gpu

    out = Shortlist(gpu=None)
    timed: list[tuple[float, SweepRow]] = []
    for r in rows:
        r.predicted_ms, r.prediction = None, None
        if not (r.ok and r.fits):
            continue
        if r.bound_ms is not None and r.cost_features is None:   # pruned (Pruning): it could not rank
            out.bounded += 1
            continue
        if r.cost_features is None:
            out.no_prediction[r.cost_why or "no compiled facts"] = out.no_prediction.get(r.cost_why or "?", 0) + 1
            continue
        g = find_gpu(gpu) if gpu else resolve_gpu(None, r.arch)
        if g is None:
            why = f"no GPU known for {r.arch} (name one with --gpu)"
            out.no_prediction[why] = out.no_prediction.get(why, 0) + 1
            continue
        p = predict_features(r.cost_features, g)
        r.prediction = p.to_dict()
        out.gpu, out.calibration = g.name, p.calibration
        if not p.ok:
            out.no_prediction[p.why or "?"] = out.no_prediction.get(p.why or "?", 0) + 1
            continue
        r.predicted_ms = round(p.predicted_ms, 6)
        timed.append((p.predicted_ms, r))
    out.predicted = len(timed)
    if not timed:
        return out
    timed.sort(key=lambda x: x[0])
    best_ms, best = timed[0]
    out.pick = best.index
    err = (best.prediction or {}).get("expected_error") or 0.0
    out.expected_error = err
    chosen = [r.index for _, r in timed[:max(1, top)]]
    close = [r.index for ms, r in timed if ms <= best_ms * (1 + err) and r.index not in chosen][:2 * max(1, top)]
    out.widened = bool(close)
    out.indexes = chosen + close
    return out
