"""Running a sweep's configs on a Dask cluster (the `dask` extra: pip install 'tritonscope[dask]').

One task per config (distributed's own submit and as_completed); every
worker must run this machine's Triton and tritonscope; the kernel file's
bytes go with each task.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from tritonscope.core.errors import UsageError
from tritonscope.measure.sweep.cache import store_row
from tritonscope.measure.sweep.rows import SweepRow
from tritonscope.measure.sweep.worker import compile_row, row_shell


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


def run_dask(requests, todo, keys, default_arch, scheduler, jobs, result, on_row) -> int:
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
                    row = row_shell(i, requests[i])
                    row.error = f"the Dask task failed on its worker: {type(e).__name__}: {e}"
                    row.error_kind = "WorkerCrash"
                store_row(keys[i], row)
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

            # a private folder of this worker process (mkdtemp), never a fixed /tmp name another user could plant
            # a module in; one copy per file content for the process's life
            path = _SHIPPED.get(shipment["sha256"])
            if path is None:
                path = Path(tempfile.mkdtemp(prefix="tritonscope-dask-")) / Path(shipment["path"]).name
                write_cache(path, shipment["source"])
                _SHIPPED[shipment["sha256"]] = path
        # the absolute path: the worker's folder is not the client's
        kernel = _kernel_name(req.target)
        req = replace(req, target=f"{path}:{kernel}" if kernel else str(path))
    return compile_row(index, req, default_arch)


_SHIPPED: dict[str, Path] = {}   # sha256 of a shipped kernel file -> this worker's private copy


def _kernel_name(target: str) -> str:
    """'k.py:add' -> 'add'; 'k.py' -> '' (as kernels.resolve_target reads a target)."""
    if ":" in target and not re.match(r"^[A-Za-z]:[\\/]", target):
        return target.rpartition(":")[2]
    return ""
