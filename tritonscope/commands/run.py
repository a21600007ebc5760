"""tritonscope run: launch a kernel on real data and check it against torch."""

from __future__ import annotations

import json

import typer

from tritonscope.commands import running
from tritonscope.commands.options import CONFIG, DISPLAY, TARGET_HELP, Values, composed


@composed
def run_cmd(
    ctx: typer.Context,
    target: str = typer.Argument(..., help=TARGET_HELP),
    kernel: Values = CONFIG.without("arch"),
    interpret: bool = typer.Option(False, "--interpret",
                                   help="Run through Triton's interpreter on the CPU (TRITON_INTERPRET=1); "
                                        "no GPU needed, but slow: use a small --shape."),
    seed: int = typer.Option(0, "--seed", help="Seed for the random inputs."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    display: Values = DISPLAY.without("pager"),
):
    """Run a kernel on random inputs and compare its outputs with torch.

    Inputs are random (never zeros); outputs are filled with NaN first, so an
    element the kernel never writes fails.  The error is the max absolute
    error and ||out - ref|| / ||ref||, against a tolerance suited to the dtype.
    Exit code 0 when every output matches, 1 when one does not.

    --maxnreg, --num-ctas and --fp-fusion/--no-fp-fusion go to the launch
    (kernel[grid](..., maxnreg=N)) as a user's launch passes them; the
    interpreter runs the Python semantics, on which they have no effect (it
    says so).

    Examples:

      tritonscope run matmul --interpret

      tritonscope run softmax --interpret --shape 64x300 -c BLOCK=512

      tritonscope run matmul_grouped --shape 4096x4096x4096        (on a GPU)

      tritonscope run vector_add --maxnreg 32 -c BLOCK=4096         (on a GPU)
    """
    from rich.markup import escape
    from rich.table import Table

    from tritonscope.measure import runner
    from tritonscope.pipeline.compile_path import Pipeline
    from tritonscope.pipeline.config import local_arch, resolve

    env = display.env(ctx)
    request = kernel.request(target)
    console = env.console()
    if interpret:
        with running.spinner(env, not as_json)(f"running {target} in Triton's interpreter on the CPU..."):
            result = runner.run_interpreted(request, seed=seed)
    else:
        runner.require_gpu("`tritonscope run` without --interpret")
        # this GPU's Config: --num-ctas 2 on an sm_80 GPU is refused (exit 2)
        loaded = Pipeline().bind(resolve(request, local_arch()))
        result, _ = runner.run_on_gpu(loaded, seed=seed)

    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=1))
    else:
        console.print(f"[bold]{result.kernel}[/] ({result.target})  {result.label}")
        console.print(f"device: {result.device}  |  "
                      + "  ".join(f"{k} {v}" for k, v in result.versions.items() if k in ("triton", "torch"))
                      + f"  |  {result.seconds:.2f} s")
        t = Table(box=None, pad_edge=False)
        for col in ("output", "dtype", "max abs error", "||out-ref||/||ref||", "tolerance", "unwritten", "result"):
            t.add_column(col, justify="right" if col not in ("output", "dtype", "result") else "left")
        for ch in result.checks:
            t.add_row(ch.output, ch.dtype, f"{ch.max_abs_error:.3g}", f"{ch.rel_error:.3g}", f"{ch.tolerance:g}",
                      str(ch.unwritten), "[green]pass[/]" if ch.passed else "[bold red]FAIL[/]")
        console.print(t)
        if result.tf32_note:
            console.print(f"[yellow]note:[/] {result.tf32_note}")
        for note in result.notes:
            console.print(f"[yellow]note:[/] {escape(note)}")
        if not result.checks:
            console.print("[yellow]note:[/] this launch declares no check, so nothing was compared.")
    if not result.passed:
        raise run_outcome(result)


def run_outcome(result):
    """The typed error for a run that did not pass: a wrong output (12), or nothing compared (13)."""
    from tritonscope.core.errors import NoResultError, WrongResultError

    if not result.checks:
        return NoResultError(f"{result.kernel}: the launch declares no check, so nothing was compared.",
                             hint="Give the kernel's launch a 'check' (output -> reference) to compare with torch.")
    wrong = [ch.output for ch in result.checks if not ch.passed]
    return WrongResultError(f"{result.kernel}: {len(wrong)} of {len(result.checks)} output"
                            f"{'s' if len(result.checks) != 1 else ''} did not match torch: {', '.join(wrong)}.",
                            hint="The table shows each output's error against its tolerance.")
