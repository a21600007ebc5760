"""What is measured or swept: real launches, timings, and grids of configs.

    runner.py       torch tensors from a KernelSpec, a launch, a check (needs a GPU)
    bench.py        time a kernel against PyTorch, correctly
    sweep/          compile a grid of configs in parallel workers: one row per config (grid, worker,
                    row cache, local or Dask run, table, predictions: one module each)
    pruning.py      tune's compile: disassemble a config only while the model could still rank it
    turns.py        launch, check and time configs one after another, or in turns (tune, the benchmark)
    axes.py         the grid of requests sweep and tune compile, from a checked base request and its axes
    tune.py         time only the configs the cost model predicts fastest (`tritonscope tune` and
                    tritonscope.tune: tune_grid)

Imports every layer below it, cost included (sweep's predicted column).
"""
