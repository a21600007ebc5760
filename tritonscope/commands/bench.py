"""tritonscope bench: time a kernel on the local GPU against torch, or sweep its configs."""

from __future__ import annotations

import itertools
import json
from typing import List, Optional

import typer

from tritonscope.commands import checks, requests as build
from tritonscope.commands.options import AXES, DISPLAY, LAUNCH, TARGET_HELP, DtypeOpt, Values, composed


@composed
def bench_cmd(
    ctx: typer.Context,
    target: str = typer.Argument(..., help=TARGET_HELP),
    grid: Values = AXES.but(
        constexpr=(Optional[List[str]], typer.Option(
            None, "-c", "--constexpr", metavar="NAME=V1,V2,...",
            help="Set a constexpr (repeatable); a comma-separated list sweeps it, e.g. -c BLOCK_SIZE=32,64,128.")),
        num_warps=(Optional[str], typer.Option(None, "--num-warps", "-w", metavar="N1,N2,...",
                                               help="Warps per program; a list sweeps: 4,8.")),
        num_stages=(Optional[str], typer.Option(None, "--num-stages", "-s", metavar="N1,N2,...",
                                                help="Pipelining stages; a list sweeps: 2,3,4."))),
    shape: Optional[List[str]] = typer.Option(
        None, "--shape", metavar="SHAPE",
        help="Problem shape, repeatable: --shape 1024x1024x1024 --shape 4096x4096x4096."),
    dtype: Optional[str] = DtypeOpt,
    launch: Values = LAUNCH,
    warmup: int = typer.Option(25, "--warmup", help="do_bench warm-up time in ms."),
    rep: int = typer.Option(100, "--rep", help="do_bench repetition time in ms (the median is reported)."),
    no_torch: bool = typer.Option(False, "--no-torch", help="Skip the torch baseline."),
    save: Optional[str] = typer.Option(None, "--save", help="Save a plot (.png or .svg; needs the 'plot' extra) "
                                                            "or the figures (.json)."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing --save file."),
    as_json: bool = typer.Option(False, "--json", help="Print every figure as JSON."),
    display: Values = DISPLAY.without("pager"),
):
    """Time a kernel on the local GPU: TFLOP/s, bandwidth, torch, peak, correctness.

    Timing is triton.testing.do_bench: CUDA events, the L2 cache flushed
    before every repetition, warm-up, the median.  TFLOP/s come from the
    launch's flop count; the effective bandwidth is (bytes read + bytes
    written) / time with every input read once and every output written once.
    "x torch" is torch's time over the kernel's (above 1: the kernel is faster),
    on the same inputs.  "% peak" is against the GPU's datasheet dense peak for
    the dtype (TF32 when fp32 dots use it).  Every config is checked against
    torch first.  Configs that do not fit the GPU are reported as out of
    resources and not launched.  Needs a CUDA GPU (exit code 9 without one);
    on a CPU, `tritonscope run TARGET --interpret` checks a kernel instead.

    --maxnreg, --num-ctas and --fp-fusion/--no-fp-fusion are passed to every
    launch (kernel[grid](..., maxnreg=N)), so the JIT compiles what such a
    launch compiles.

    Examples:

      tritonscope bench matmul_grouped --shape 4096x4096x4096

      tritonscope bench matmul_persistent --shape 1024x1024x1024 --shape 4096x4096x4096 --shape 8192x8192x8192

      tritonscope bench matmul_masked --shape 4096x4096x4096 -c BLOCK_SIZE=32,64,128,256 --save sweep.png

      tritonscope bench matmul_grouped -w 4,8 -s 3,4 --json

      tritonscope bench matmul_grouped --shape 4096x4096x4096 --maxnreg 128
    """
    from tritonscope.measure import runner
    from tritonscope.measure.bench import bench_configs
    from tritonscope.core.model import option_words
    from tritonscope.inputs.kernels import parse_assignments
    from tritonscope.pipeline.compile_path import Pipeline
    from tritonscope.pipeline.config import local_arch, resolve

    env = display.env(ctx)
    launch.launch_options()  # a bad value: exit 2, before anything else
    if save:  # fail before any timing when the file cannot be written
        _check_save(save, force)

    # every comma-separated value is one point of the sweep
    axes: list[tuple[str, list[str]]] = []
    for name, value in parse_assignments(grid.constexpr, "constexpr").items():
        axes.append((f"c:{name}", [v.strip() for v in value.split(",") if v.strip()]))
    block_values = checks.block_axis(grid.block, grid.blocks)
    if block_values:
        axes.append(("block", [str(v) for v in block_values]))
    for key, text in (("w", grid.num_warps), ("s", grid.num_stages)):
        if text:
            axes.append((key, [v.strip() for v in text.split(",") if v.strip()]))
    axes.append(("shape", list(shape) if shape else [None]))
    requests = []
    for point in itertools.product(*(values for _, values in axes)):
        chosen = dict(zip((k for k, _ in axes), point))
        cx = {k[2:]: v for k, v in chosen.items() if k.startswith("c:")}
        request = build.make_request(target, [f"{k}={v}" for k, v in cx.items()],
                                 _int(chosen.get("block"), "--block"), grid.arg, _int(chosen.get("w"), "--num-warps"),
                                 _int(chosen.get("s"), "--num-stages"), None, chosen.get("shape"), dtype,
                                 maxnreg=launch.maxnreg, num_ctas=launch.num_ctas, fp_fusion=launch.fp_fusion)
        requests.append(request)  # a bad value (-w 3, -c BLOCK=abc): exit 2 here, before the GPU is looked for
    runner.require_gpu("`tritonscope bench`")
    arch = local_arch()
    pipe = Pipeline()
    # this GPU's Config: --num-ctas 2 on an sm_80 is refused (exit 2) before any compile
    loadeds = [pipe.bind(resolve(request, arch)) for request in requests]

    err = env.console(stderr=True)

    def progress(i, total, spec):
        if err.is_terminal and not as_json:
            err.print(f"[dim][{i + 1}/{total}] {spec.label()} {'x'.join(map(str, spec.shape or ()))}[/]")

    report = bench_configs(loadeds, warmup=warmup, rep=rep, with_torch=not no_torch, progress=progress)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=1))
    else:
        from rich.markup import escape

        from tritonscope.outputs.render.bench_view import bench_view

        console = env.console()
        console.print(bench_view(report))
        if report.options:
            console.print(f"launch options (every config): {escape(option_words(report.options))}")
    if save:
        _save(report, save, force)
    problem = bench_outcome(report.rows)
    if problem is not None:
        raise problem


def bench_outcome(rows):
    """The typed error for rows that are not results: a wrong result (12) before a failed or impossible one (13).

    A config that does not fit ("out of resources") is an answer of a sweep, not a failure, unless no config
    was timed at all (13: nothing to report).
    """
    from tritonscope.core.errors import NoResultError, WrongResultError

    many_shapes = len({r.shape for r in rows}) > 1

    def names(status: str) -> list[str]:
        return [f"{r.label} {'x'.join(map(str, r.shape))}" if many_shapes and r.shape else r.label
                for r in rows if r.status == status]

    total = f"{len(rows)} config{'s' if len(rows) != 1 else ''}"
    wrong = names("wrong")
    if wrong:
        return WrongResultError(f"{len(wrong)} of {total} computed a wrong result: {', '.join(wrong)}.",
                                hint="The table shows each config's error; a wrong result gets no figures.")
    failed, impossible = names("failed"), names("measurement error")
    parts = ([f"{len(failed)} failed ({', '.join(failed)})"] if failed else []) + \
        ([f"{len(impossible)} gave a figure that cannot be true ({', '.join(impossible)})"] if impossible else [])
    if parts:
        return NoResultError(f"Of {total}, " + " and ".join(parts) + ".",
                             hint="The table's status column says why for each.")
    if all(r.status == "out of resources" for r in rows):  # every config out of resources (or none): nothing timed
        return NoResultError(f"bench timed nothing: {'none of the ' + total if len(rows) > 1 else 'the config'} "
                             f"fits this GPU." if rows else "bench timed nothing: no config to time.",
                             hint="The table's problem column says what each config needs; a smaller config "
                                  "(-c, --num-warps, --num-stages) fits.")
    return None


def _int(text, option):
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        from tritonscope.core.errors import UsageError

        raise UsageError(f"{option} {text!r} is not a whole number.", hint=f"For example: {option} 4,8") from None


SAVE_FORMATS = {".png": "png", ".svg": "svg", ".json": "json"}


def _check_save(path: str, force: bool) -> str:
    from tritonscope.core.errors import UsageError
    from tritonscope.core.output import check_path

    fmt = check_path(path, force=force, formats=SAVE_FORMATS, what="bench output")
    if fmt != "json":
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise UsageError("Saving a plot needs matplotlib, which is not installed.",
                             hint="pip install 'tritonscope[plot]', or save the figures with --save out.json.") from None
    return fmt


def _save(report, path: str, force: bool) -> None:
    """Write the figures (.json) or their plot (.png/.svg), rendered to bytes first, through the one writer."""
    from tritonscope.core.output import write_atomic

    fmt = _check_save(path, force)
    if fmt == "json":
        data: str | bytes = json.dumps(report.to_dict(), indent=1)
    else:
        from tritonscope.outputs.render.bench_plot import plot_bytes

        data = plot_bytes(report, fmt)
    write_atomic(path, data, force=force)
