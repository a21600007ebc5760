"""tritonscope sweep: compile a grid of configs in parallel; which fit, and what each costs."""

from __future__ import annotations

import json
from typing import List, Optional

import typer

from tritonscope.commands import checks
from tritonscope.commands import requests as build
from tritonscope.commands.options import (AXES, DISPLAY, LAUNCH, TARGET_HELP, GpuOpt, GridOpt, PythonOpt, ShapeOpt,
                                          TritonOpt, Values, composed)


SchedulerOpt = typer.Option(None, "--scheduler", metavar="tcp://HOST:PORT|local",
                            help="Run the configs on a Dask cluster: a running scheduler's "
                                 "address, or local (a cluster of --jobs processes here). "
                                 "Needs the dask extra: pip install 'tritonscope[dask]'.")
SortOpt = typer.Option(None, "--sort",
                       help="Sort by config, shared, registers, spills, occupancy, time, "
                            "num_warps, num_stages or a constexpr; prefix - for descending.")
WhereOpt = typer.Option(None, "--where",
                        help="Keep rows matching: fits, nofit, ok, failed, or FIELD<op>VALUE "
                             "(shared<100000, BLOCK=64); repeatable, all must hold.")
TopOpt = typer.Option(3, "--top", min=1, help="Configs on the short list worth measuring (widened when "
                                               "the best predictions are closer than their expected error).")


@composed
def sweep_cmd(
    ctx: typer.Context,
    target: str = typer.Argument(..., help=TARGET_HELP),
    axes: Values = AXES,
    arch: Optional[str] = typer.Option(None, "--arch", metavar="ARCH[,ARCH...]",
                                       help="Target(s): sm_80, sm_90a, ... (default: the local GPU's, else sm_90a)."),
    shape: Optional[str] = ShapeOpt,
    grid: Optional[str] = GridOpt,
    dtype: Optional[str] = typer.Option(None, "--dtype", metavar="DTYPE[,DTYPE...]", help="Input dtype axis for a sample."),
    launch: Values = LAUNCH,
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes (default: every core)."),
    scheduler: Optional[str] = SchedulerOpt,
    sort: Optional[str] = SortOpt,
    where: Optional[List[str]] = WhereOpt,
    gpu: Optional[str] = GpuOpt,
    top: int = TopOpt,
    no_cache: bool = typer.Option(False, "--no-cache", help="Recompile every config (ignore cached rows)."),
    as_json: bool = typer.Option(False, "--json", help="Print the rows as JSON."),
    save: Optional[str] = typer.Option(None, "--save", help="Save the rows as .csv or .json."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing --save file."),
    display: Values = DISPLAY.without("pager"),
    triton: Optional[str] = TritonOpt,
    python: Optional[str] = PythonOpt,
):
    """Compile a grid of configs in parallel and tabulate what each needs and whether it fits.

    The grid is every combination of the -c axes, --num-warps, --num-stages,
    --arch and --dtype. A @triton.autotune kernel's own configs are the grid
    (crossed with any axes you give; a Config's maxnreg/num_ctas go with it).
    --maxnreg, --num-ctas and --fp-fusion/--no-fp-fusion apply to every config,
    as the same keywords at a launch do. A config that fails to compile is a row
    with its error; the sweep goes on. Ctrl-C stops the workers and prints what
    finished (exit 130). A repeat sweep is served from the cache.

    Examples:

      tritonscope sweep matmul -c BLOCK=16,32,64,128 --num-warps 2,4,8 --num-stages 1,2,3 --arch sm_90

      tritonscope sweep matmul_masked -c BLOCK_SIZE=32,64,128 --arch sm_90

      tritonscope sweep matmul_autotuned --sort -occupancy --where fits --save sweep.csv

      tritonscope sweep matmul -c BLOCK=16,32,64 --arch sm_80,sm_90 --scheduler tcp://10.0.0.5:8786

      tritonscope sweep vector_add -c BLOCK=1024,4096 --maxnreg 32 --arch sm_90a

      tritonscope sweep matmul_grouped -c BLOCK_K=32,64 -w 4,8 --shape 4096x4096x4096 --gpu H100 --sort predicted

      tritonscope sweep matmul -c BLOCK=16,32 --arch gfx942 --triton 3.6.0
    """
    from tritonscope.measure import sweep as sw
    from tritonscope.core.model import option_words

    env = display.env(ctx)
    if save:  # fail before the sweep starts when the rows cannot be written
        sw.check_save_path(save, force=force)
    if scheduler is not None:  # a bad address, or no `distributed`: exit 2 before any work
        scheduler = sw.check_scheduler(scheduler)
    other = None
    if triton is not None or python is not None:  # another Triton (tritonscope/versions/sides.py)
        from tritonscope.versions import sides

        other = sides.triton_choice(triton, python)
        sides.check_value(other)
        if scheduler is not None:
            sides.refuse_with("--scheduler", "the Dask workers compile with their own Triton.")
    requests, loaded, base, auto, arches = build.axes_requests(target, axes.constexpr, axes.block, axes.blocks, axes.arg,
                                                         axes.num_warps, axes.num_stages, arch, shape, dtype,
                                                         launch.maxnreg, launch.num_ctas, launch.fp_fusion, gpu,
                                                         grid=grid)
    default_arch = checks.default_arch()
    # a --where or --sort no row could answer fails now, not after every config has compiled
    sw.check_where_and_sort(where, sort, {*loaded.spec.constexprs, *(n for r in requests for n in r.constexprs or {})})

    err = env.console(stderr=True)
    if other is not None:
        other = sides.resolve(other, progress=None if as_json else sides.say(env))
    result = _run(requests, loaded, err, quiet=as_json, other=other, default_arch=default_arch, jobs=jobs,
                  use_cache=not no_cache, target=target, from_autotune=bool(auto), scheduler=scheduler)
    result.options = dict(base.options or {})
    if other is not None and not as_json:
        err.print(f"compiled with {other.label()}", markup=False, highlight=False)

    shortlist = sw.attach_predictions(result.rows, gpu, top=top)
    rows = sw.sort_rows(sw.filter_rows(result.rows, where), sort)
    if as_json:
        data = result.to_dict()
        from dataclasses import asdict

        data["rows"] = [asdict(r) for r in rows]
        data["shortlist"] = shortlist.to_dict()
        if other is not None:
            data["triton"] = {"version": other.triton, "python": other.python}
        typer.echo(json.dumps(data, indent=1))
    else:
        from rich.markup import escape

        from tritonscope.outputs.render.diff_view import sweep_table

        console = env.console()
        console.print(sweep_table(result, rows))
        for line in shortlist_lines(result, shortlist):
            console.print(escape(line), highlight=False)
        if result.options:
            console.print(f"launch options (every config): {escape(option_words(result.options))}")
    if save:
        path = sw.save_sweep(result, save, rows=rows, force=force)
        if not as_json:
            err.print(f"saved {len(rows)} rows to {path}")
    if result.interrupted:
        from tritonscope.core.errors import InterruptedRunError

        raise InterruptedRunError(f"{result.finished} of {result.requested} configs finished (shown above).")


def _run(requests, loaded, err, *, quiet: bool, other, default_arch: str, jobs, use_cache: bool, target: str,
         from_autotune: bool, scheduler):
    """The sweep itself (here, on Dask, or under another Triton), with a count of finished configs on a terminal."""
    from tritonscope.measure import sweep as sw
    from tritonscope.versions import sides

    kernel, done = loaded.spec.kernel, [0]
    status = None
    if err.is_terminal and not quiet:
        status = err.status(f"sweeping {len(requests)} configs of {kernel} ...")
        status.start()

    def progress(row):
        done[0] += 1
        if status is not None:
            status.update(f"sweeping {kernel}: {done[0]}/{len(requests)} done (last: {row.config})")

    try:
        if other is not None:
            return sides.run_sweep_with_triton(requests, other, default_arch=default_arch,
                                               jobs=jobs or sw.default_jobs(), on_row=progress, kernel=kernel,
                                               target=target, from_autotune=from_autotune)
        return sw.run_sweep(requests, default_arch=default_arch, jobs=jobs, use_cache=use_cache, on_row=progress,
                            kernel=kernel, target=target, from_autotune=from_autotune, scheduler=scheduler)
    finally:
        if status is not None:
            status.stop()


def shortlist_lines(result, shortlist) -> list[str]:
    """The pick and the short list in words (no lines when nothing was predicted)."""
    by_index = {r.index: r for r in result.rows}
    out = []
    if shortlist.pick is not None:
        best = by_index[shortlist.pick]
        p = best.prediction or {}
        err = shortlist.expected_error or 0.0
        out.append(f"predicted on {shortlist.gpu}: pick {best.config}: {best.predicted_ms:.4g} ms "
                   f"({p.get('regime_words')}, expected error ±{err:.0%}); {shortlist.calibration}")
        names = ", ".join(by_index[i].config for i in shortlist.indexes)
        out.append(f"measure these {len(shortlist.indexes)}: {names}")
        if shortlist.widened:
            out.append(f"the best predictions are closer than the expected error (±{err:.0%}): the short list "
                       f"was widened to every config within it")
    for why, n in shortlist.no_prediction.items():
        out.append(f"no prediction for {n} config{'s' if n != 1 else ''}: {why}")
    return out
