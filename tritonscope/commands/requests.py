"""The command line's words as what a command compiles: a checked kernels.Request, the one resolved
Config, the grid of requests `sweep` and `tune` compile, and a found kernel's recompile changes."""

from __future__ import annotations

from typing import Any, List, Optional

from tritonscope.commands import checks


def make_request(target: str, constexpr: Optional[List[str]], block: Optional[int], arg: Optional[List[str]],
                 num_warps: Optional[int], num_stages: Optional[int], arch: Optional[str],
                 shape: Optional[str], dtype: Optional[str], *, maxnreg: Optional[int] = None,
                 num_ctas: Optional[int] = None, fp_fusion: Optional[bool] = None, config: Optional[int] = None,
                 gpu: Optional[str] = None, grid: Optional[str] = None):
    """The command line's words as a kernels.Request, every value checked before any file is loaded or Triton
    is entered (a command that compiles for several arches makes one Config of it per arch).  With --grid, the
    request carries its text (pipeline/config.with_grid), its syntax checked here."""
    from tritonscope.inputs.kernels import check_request
    from tritonscope.pipeline.config import with_grid

    return with_grid(check_request(_request(target, constexpr, block, arg, num_warps, num_stages, arch, shape, dtype,
                                            maxnreg=maxnreg, num_ctas=num_ctas, fp_fusion=fp_fusion, config=config,
                                            gpu=gpu)), grid)


def make_config(*words, grid: Optional[str] = None, **keywords):
    """make_request's words as the one resolved Config (pipeline/config.py): every value checked, the arch
    canonicalised once (--arch, else the local GPU's, else the default), a launch option the arch cannot take
    refused, --grid's syntax checked, before any file is loaded or Triton is entered."""
    from tritonscope.pipeline.config import resolve

    return resolve(_request(*words, grid=grid, **keywords))  # resolved once here; everything downstream reads it


def _request(target: str, constexpr, block, arg, num_warps, num_stages, arch, shape, dtype, *, maxnreg=None,
             num_ctas=None, fp_fusion=None, config=None, gpu=None, grid=None):
    """The command line's words as a kernels.Request, unchecked but for -c/--arg's NAME=VALUE form, the
    launch options' ranges and --grid's syntax (in that order)."""
    from tritonscope.inputs.kernels import Request, parse_assignments

    options = checks.launch_options(maxnreg, num_ctas, fp_fusion)
    constexprs, args = parse_assignments(constexpr, "constexpr"), parse_assignments(arg, "argument")
    if grid is not None:  # a bad --grid: exit 2 before any file is loaded (as pipeline/config.with_grid)
        from tritonscope.inputs.grid import parse_grid

        parse_grid(grid)
    return Request(target=target, constexprs=constexprs, block=block, args=args, num_warps=num_warps,
                   num_stages=num_stages, arch=arch, shape=shape, dtype=dtype, options=options, config=config,
                   gpu=gpu, grid=grid)


def axes_requests(target, constexpr, block, blocks, arg, num_warps, num_stages, arch, shape, dtype, maxnreg,
                   num_ctas, fp_fusion, gpu, *, grid=None):
    """The grid of requests `sweep` and `tune` compile: (requests, loaded first config, base, autotune configs,
    arches).  Every check that can fail without compiling fails here (exit 2), before any worker starts.
    `grid`: --grid's text, which every request carries (each config's launch grid is its own evaluation)."""
    from tritonscope.inputs.kernels import canonical_arch, canonical_dtype
    from tritonscope.measure import sweep as sw
    from tritonscope.measure.axes import grid_requests

    axes = sw.parse_constexpr_axes(constexpr)
    # an axis given as '' is an empty list (exit 2), not an axis left out: `is not None`, not truth
    warps = sw.parse_ints(sw.parse_axis(num_warps, "--num-warps") if num_warps is not None else None, "--num-warps")
    stages = sw.parse_ints(sw.parse_axis(num_stages, "--num-stages") if num_stages is not None else None,
                           "--num-stages")
    check_axis_values(warps, stages)   # -w 3 or -s 0: exit 2 here, not a FAILED row per config (or exit 9 first)
    arches = [canonical_arch(x) for x in sw.parse_axis(arch, "--arch")] if arch is not None else None
    dtypes = [canonical_dtype(x) for x in sw.parse_axis(dtype, "--dtype")] if dtype is not None else None
    default_arch = checks.default_arch()
    checks.check_gpu(gpu, arches or [default_arch])  # an unknown --gpu, or one of another arch: exit 2, no compile

    # Check the kernel once (and find autotune configs) before any worker starts.
    block_values = checks.block_axis(block, blocks)
    base = make_request(target, None, block_values[0] if block_values else None, arg, None, None,
                        arches[0] if arches else None, shape, dtypes[0] if dtypes else None,
                        maxnreg=maxnreg, num_ctas=num_ctas, fp_fusion=fp_fusion, grid=grid)
    checks.check_options_for_arches(base.options, arches or [None])  # e.g. --maxnreg with a gfx target: exit 2
    requests, loaded, auto = grid_requests(base, axes=axes, num_warps=warps, num_stages=stages, arches=arches,
                                           dtypes=dtypes, block_values=block_values, default_arch=default_arch)
    return requests, loaded, base, auto, arches


def check_axis_values(warps, stages) -> None:
    """Each --num-warps / --num-stages value of a sweep or tune axis checked as one compile's would be (a power of
    two from 1 to 32; at least 1): a UsageError, worded in the caller's terms (the CLI's flags, the API's keywords)."""
    from tritonscope.inputs.kernels import Request, check_request

    for w in warps or ():
        check_request(Request(target="-", num_warps=w))
    for s in stages or ():
        check_request(Request(target="-", num_stages=s))


def recompile_changes(arch: Optional[str], num_warps: Optional[int], num_stages: Optional[int],
                      constexpr: Optional[List[str]], maxnreg: Optional[int], num_ctas: Optional[int],
                      fp_fusion: Optional[bool]) -> dict[str, Any]:
    """The command line's changes to a found kernel, as sources.recompile's keywords (checked; {} for none)."""
    from tritonscope.inputs.kernels import parse_assignments
    from tritonscope.inputs.request import recompile_changes as changes

    return changes(arch=arch, num_warps=num_warps, num_stages=num_stages,
                   constexprs=parse_assignments(constexpr, "constexpr"),
                   options=checks.launch_options(maxnreg, num_ctas, fp_fusion))
