"""Compile a grid of configs in parallel worker processes: one row per config.

A sweep is a list of `Request`s (kernels.Request: picklable, strings and
ints only).  Each is compiled in a worker process and reduced to a
`SweepRow` of plain values: shared memory, registers, spills, the PTX
instruction mix, whether it fits the arch (summary.summarize: fit,
occupancy, spills), or the error that stopped it.  A failing config is a
row; the sweep goes on.  Core code: no printing; the command renders
(render/diff_view.py).

One module a job; each imports only those above it:

    rows.py      SweepRow and SweepResult: what a sweep gives
    grid.py      the command line's axes -> the Requests of the grid
    worker.py    one config compiled and reduced to a row (in a worker process); tune's Pruning applied
    cache.py     the row cache, keyed by everything that decides the compile
    dask.py      the configs on a Dask cluster (the `dask` extra)
    run.py       run_sweep: cached rows served, the others compiled in local workers (or on Dask)
    table.py     sort, filter (--where), check before compiling, save as .csv or .json
    predict.py   the cost model's predicted times on the rows: the pick and the short list

The names callers use are here (`from tritonscope.measure import sweep as sw; sw.run_sweep(...)`).
"""

from __future__ import annotations

from tritonscope.measure.pruning import Pruning, bound_ms, pruning_threshold  # noqa: F401  (tune's, re-exported)
from tritonscope.measure.sweep.rows import ROW_FORMAT, SweepResult, SweepRow  # noqa: F401
from tritonscope.measure.sweep.grid import build_grid, parse_axis, parse_constexpr_axes, parse_ints  # noqa: F401
from tritonscope.measure.sweep.worker import compile_row, row_shell  # noqa: F401
from tritonscope.measure.sweep.dask import DASK_HINT, check_scheduler  # noqa: F401
from tritonscope.measure.sweep.run import compile_weight, default_jobs, run_sweep  # noqa: F401
from tritonscope.measure.sweep.table import (  # noqa: F401
    SAVE_FORMATS, SORT_KEYS, check_save_path, check_where_and_sort, csv_text, filter_rows, iter_mix_columns,
    save_sweep, sort_rows,
)
from tritonscope.measure.sweep.predict import Shortlist, attach_predictions  # noqa: F401
