"""The grid of requests `sweep` and `tune` (and the Python API's tune) compile: a checked base request and its
axes -> one Request per config.  The first config is bound once here (no compile) to find the kernel's
@triton.autotune configs and what --block sets, before any worker starts."""

from __future__ import annotations

from dataclasses import replace
from typing import Any


def grid_requests(base, *, axes: dict[str, list[str]], num_warps: list[int] | None, num_stages: list[int] | None,
                  arches: list[str] | None, dtypes: list[str] | None, block_values: list[int] | None,
                  default_arch: str) -> tuple[list, Any, list]:
    """(the requests, the first config bound (pipeline Loaded), the kernel's autotune configs).  `base` is
    checked already (its values, its launch options for every arch); `axes` are the constexpr axes
    ({'BLOCK': ['16', '32']}), `block_values` --block / --blocks."""
    from tritonscope import triton_api
    from tritonscope.measure.sweep import build_grid
    from tritonscope.pipeline.binding import check_axis_values
    from tritonscope.pipeline.compile_path import Pipeline
    from tritonscope.pipeline.config import resolve

    first = {k: v[0] for k, v in axes.items()}
    loaded = Pipeline().bind(resolve(replace(base, constexprs=first), default_arch))
    check_axis_values(loaded, axes)  # -c BLOCK=16,1e999 or 16,nan: refused here, not a FAILED row
    auto = triton_api.autotune_configs(loaded.obj)
    bases = [replace(base, arch=arches[0] if arches else None)]
    if block_values:  # --block(s): the tile constexprs it sets become part of each config
        bases = _block_bases(bases[0], block_values, loaded, axes)
    requests = [r for b in bases for r in build_grid(b, constexprs=axes, num_warps=num_warps, num_stages=num_stages,
                                                     arches=arches, dtypes=dtypes, autotune=auto)]
    return requests, loaded, auto


def _block_bases(base, values: list[int], loaded, axes: dict) -> list:
    """One base request per --blocks value, with the constexprs --block sets written out (labels show them)."""
    from tritonscope.core.errors import UsageError
    from tritonscope.inputs.kernels import names_set_by_block

    names = names_set_by_block(loaded.example, list(loaded.spec.constexprs))
    clash = [n for n in names if n in axes]
    if clash:
        raise UsageError(f"--block sets {', '.join(clash)}, which -c sets too.", hint="Give one of them.")
    return [replace(base, block=None, constexprs={**(base.constexprs or {}), **{n: str(v) for n in names}})
            for v in values]
