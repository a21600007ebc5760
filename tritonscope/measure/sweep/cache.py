"""The row cache: a config's row kept on disk by everything that decides its compile.

The key covers the request, the kernel file's bytes, what its module read at
import (env vars, config files), the Triton version and the code-generation
environment; a repeat sweep is served from here without starting any worker.
Only rows that compiled are kept (a failure may be transient).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

from tritonscope.measure.sweep.rows import ROW_FORMAT, SweepRow


def row_cache_key(req, default_arch: str) -> str | None:
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


def cache_path(key: str) -> Path:
    from tritonscope.core.env import cache_dir

    return cache_dir() / "sweep" / f"{key}.json"


def cached_row(key: str | None, index: int) -> SweepRow | None:
    if not key:
        return None
    from tritonscope.core.cache_prune import load_entry, touch

    path = cache_path(key)
    data = load_entry(path)
    try:
        row = SweepRow(**data)  # a damaged entry (not a dict, unknown fields) is a miss
    except TypeError:
        return None
    touch(path)  # it answered: used now
    row.index, row.cached = index, True
    return row


def store_row(key: str | None, row: SweepRow) -> None:
    if not key or not row.ok:   # failures are retried: the cause may be transient
        return
    from tritonscope.core.output import write_cache

    write_cache(cache_path(key), json.dumps(asdict(row)))   # the cache is an optimisation only
