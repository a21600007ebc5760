"""A kernel that already compiled, as `compile` and the Python API take it: found (as `open` finds it),
recompiled with the changes asked for, analysed, and predicted at its recorded launch or a given grid.

The command line (`tritonscope compile CAPTURE -k KERNEL`) and `tritonscope.compile(CAPTURE, kernel=...)`
both call analyze_found; neither does any of these steps itself.
"""

from __future__ import annotations

from typing import Any, Callable


def analyze_found(path: str, kernel: str | None, *, changes: dict[str, Any], predict: bool = False,
                  gpu: str | None = None, grid: str | None = None, status: Callable | None = None):
    """The Analysis of the kernel found at `path` (`kernel` picks one of a folder), recompiled first with
    `changes` (inputs/request.recompile_changes) when there are any.  With `predict` or a `gpu`, its
    predicted time (at `grid`, evaluated on what it recorded, else at its own launch) is on `.prediction`.

    A bad `grid` is refused (UsageError, exit 2) before anything is loaded."""
    from tritonscope.analyses.analysis import analyze
    from tritonscope.analyses.explain.run import found_artifact, found_launch
    from tritonscope.cost import predict as predicted

    if grid is not None:  # '' too: refused as a compile's --grid '' is, never taken for "no grid"
        from tritonscope.inputs.grid import parse_grid

        parse_grid(grid)
    found = found_artifact(path, kernel, changes=changes, status=status)
    analysis = analyze(found.artifact)
    if predict or gpu is not None:
        at, args = found_launch(analysis.artifact.spec, grid, [])
        analysis.prediction = predicted(analysis, gpu=gpu, grid=at, args=args).to_dict()
    return analysis
