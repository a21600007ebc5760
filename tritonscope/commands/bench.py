"""tritonscope bench: time a kernel on the local GPU against torch, or sweep its configs."""

from __future__ import annotations

import itertools
import json
from typing import List, Optional

import typer

from tritonscope.cli import app, handle_errors
from tritonscope.commands import _common as c


@app.command("bench")
@handle_errors
def bench_cmd(
    target: str = typer.Argument(..., help=c.TARGET_HELP),
    constexpr: Optional[List[str]] = typer.Option(
        None, "-c", "--constexpr", metavar="NAME=V[,V...]",
        help="Set a constexpr (repeatable); a comma-separated list sweeps it, e.g. -c BLOCK_SIZE=32,64,128."),
    block: Optional[str] = typer.Option(None, "--block", help="Samples' tile-size shorthand; a list sweeps: 32,64."),
    arg: Optional[List[str]] = c.ArgOpt,
    num_warps: Optional[str] = typer.Option(None, "--num-warps", "-w", help="Warps per program; a list sweeps: 4,8."),
    num_stages: Optional[str] = typer.Option(None, "--num-stages", "-s", help="Pipelining stages; a list sweeps: 2,3,4."),
    shape: Optional[List[str]] = typer.Option(
        None, "--shape", help="Problem shape, repeatable: --shape 1024x1024x1024 --shape 4096x4096x4096."),
    dtype: Optional[str] = c.DtypeOpt,
    warmup: int = typer.Option(25, "--warmup", help="do_bench warm-up time in ms."),
    rep: int = typer.Option(100, "--rep", help="do_bench repetition time in ms (the median is reported)."),
    no_torch: bool = typer.Option(False, "--no-torch", help="Skip the torch baseline."),
    save: Optional[str] = typer.Option(None, "--save", help="Save a plot (.png or .svg; needs the 'plot' extra) "
                                                            "or the figures (.json)."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing --save file."),
    as_json: bool = typer.Option(False, "--json", help="Print every figure as JSON."),
    width: Optional[int] = typer.Option(None, "--width", help="Render for this many columns."),
    color: Optional[bool] = typer.Option(None, "--color/--no-color", help="Force color on or off."),
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

    Examples:

      tritonscope bench matmul_grouped --shape 4096x4096x4096

      tritonscope bench matmul_persistent --shape 1024x1024x1024 --shape 4096x4096x4096 --shape 8192x8192x8192

      tritonscope bench matmul_masked --shape 4096x4096x4096 -c BLOCK_SIZE=32,64,128,256 --save sweep.png

      tritonscope bench matmul_grouped -w 4,8 -s 3,4 --json
    """
    from tritonscope import runner
    from tritonscope.bench import bench_configs
    from tritonscope.kernels import build_spec, parse_assignments
    from tritonscope.render.console import make_console

    if save:
        _check_save(save, force)
    runner.require_gpu("`tritonscope bench`")
    arch = c.default_arch()

    # every comma-separated value is one point of the sweep
    axes: list[tuple[str, list[str]]] = []
    for name, value in parse_assignments(constexpr, "constexpr").items():
        axes.append((f"c:{name}", [v.strip() for v in value.split(",") if v.strip()]))
    for key, text in (("block", block), ("w", num_warps), ("s", num_stages)):
        if text:
            axes.append((key, [v.strip() for v in text.split(",") if v.strip()]))
    axes.append(("shape", list(shape) if shape else [None]))
    loadeds = []
    for point in itertools.product(*(values for _, values in axes)):
        chosen = dict(zip((k for k, _ in axes), point))
        cx = {k[2:]: v for k, v in chosen.items() if k.startswith("c:")}
        request = c.make_request(target, [f"{k}={v}" for k, v in cx.items()],
                                 _int(chosen.get("block"), "--block"), arg, _int(chosen.get("w"), "--num-warps"),
                                 _int(chosen.get("s"), "--num-stages"), None, chosen.get("shape"), dtype)
        loadeds.append(build_spec(request, arch))

    err = make_console(stderr=True)

    def progress(i, total, spec):
        if err.is_terminal and not as_json:
            err.print(f"[dim][{i + 1}/{total}] {spec.label()} {'x'.join(map(str, spec.shape or ()))}[/]")

    report = bench_configs(loadeds, warmup=warmup, rep=rep, with_torch=not no_torch, progress=progress)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=1))
    else:
        from tritonscope.render.bench_view import bench_view

        console = make_console(width=width, color=color)
        console.print(bench_view(report))
    if save:
        _save(report, save, force)
    if any(r.status in ("wrong", "failed") for r in report.rows):
        raise typer.Exit(1)


def _int(text, option):
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        from tritonscope.errors import UsageError

        raise UsageError(f"{option} {text!r} is not a whole number.", hint=f"For example: {option} 4,8") from None


def _check_save(path: str, force: bool) -> None:
    from pathlib import Path

    from tritonscope.errors import OutputError, UsageError

    p = Path(path)
    if p.suffix.lower() not in (".png", ".svg", ".json"):
        raise UsageError(f"--save {path}: unknown format {p.suffix or '(none)'}.", hint="Use a .png, .svg or .json file.")
    if p.exists() and not force:
        raise OutputError(f"{path} already exists.", hint="Pass --force to overwrite it, or pick another name.")
    if p.suffix.lower() != ".json":
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise UsageError("Saving a plot needs matplotlib, which is not installed.",
                             hint="pip install 'tritonscope[plot]', or save the figures with --save out.json.") from None


def _save(report, path: str, force: bool) -> None:
    """Write the report (.json) or its plot (.png/.svg) all at once, or not at all."""
    from pathlib import Path

    from tritonscope.report import write_atomic

    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt == "json":
        data: str | bytes = json.dumps(report.to_dict(), indent=1)
    else:
        from tritonscope.render.bench_plot import plot_bytes

        data = plot_bytes(report, fmt)
    write_atomic(path, data, force=force)
