"""The typer app: parse arguments -> core -> renderer -> exit code.

Every command is wrapped by `handle_errors`, the one place that turns a
TritonscopeError into one message on stderr and a documented exit code
(see errors.ExitCode); --debug shows the traceback instead.
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
from typing import Optional

import typer

from tritonscope import __version__
from tritonscope.errors import ExitCode, TritonscopeError

EXIT_CODES_HELP = "\n\n".join(f"{c.value}  {c.name.lower().replace('_', ' ')}" for c in ExitCode)

app = typer.Typer(
    name="tritonscope",
    help="See what Triton really does with a kernel: every stage from Python to SASS, "
    "annotated, source-linked, diffed and benchmarked.\n\n"
    "Examples:\n\n"
    "  tritonscope compile matmul --block 16\n\n"
    "  tritonscope compile matmul --block 16 --view walkthrough\n\n"
    "  tritonscope compile my_kernels.py:add_kernel --arg x_ptr='*fp32' --arg n=1024 -c BLOCK=256\n\n"
    "  tritonscope diff matmul --a BLOCK=16 --b BLOCK=64 --arch sm_90\n\n"
    f"Exit codes:\n\n{EXIT_CODES_HELP}",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

state = {"debug": False}


def _version(value: bool):
    if value:
        typer.echo(f"tritonscope {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show full tracebacks on errors."),
    version: Optional[bool] = typer.Option(None, "--version", callback=_version, is_eager=True,
                                           help="Print the version and exit."),
):
    state["debug"] = debug or bool(os.environ.get("TRITONSCOPE_DEBUG"))


def report_error(err: TritonscopeError) -> None:
    from tritonscope.render.console import make_console

    console = make_console(stderr=True)
    console.print(f"[bold red]error:[/] {_escape(err.message)}")
    if err.context:
        for line in str(err.context).splitlines():
            console.print(f"  [dim]|[/] {_escape(line)}")
    if err.hint:
        console.print(f"[bold]hint:[/] {_escape(err.hint)}")


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(str(text))


def handle_errors(fn):
    """Map typed errors to one clear message + exit code; Ctrl-C to 130."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except typer.Exit:
            raise
        except TritonscopeError as e:
            if state["debug"]:
                traceback.print_exc()
            report_error(e)
            raise typer.Exit(int(e.exit_code))
        except KeyboardInterrupt:
            print("\ninterrupted: stopped before finishing; nothing was written.", file=sys.stderr)
            raise typer.Exit(int(ExitCode.INTERRUPTED))
        except BrokenPipeError:
            # `tritonscope ... | head` closed the pipe: not an error.
            try:
                sys.stdout = open(os.devnull, "w")
            except OSError:
                pass
            raise typer.Exit(0)
        except Exception as e:  # a bug: say so plainly
            if state["debug"]:
                traceback.print_exc()
            report_error(TritonscopeError(
                f"unexpected {type(e).__name__}: {e}",
                hint="This is a tritonscope bug. Rerun with --debug and report the traceback.",
            ))
            raise typer.Exit(int(ExitCode.UNEXPECTED))

    return wrapper


# Commands register themselves on `app` when imported.
from tritonscope.commands import compile as _compile  # noqa: E402,F401
from tritonscope.commands import samples as _samples  # noqa: E402,F401
from tritonscope.commands import diff as _diff  # noqa: E402,F401
from tritonscope.commands import sweep as _sweep  # noqa: E402,F401
from tritonscope.commands import show as _show  # noqa: E402,F401
from tritonscope.commands import layout as _layout  # noqa: E402,F401
from tritonscope.commands import run as _run  # noqa: E402,F401
from tritonscope.commands import bench as _bench  # noqa: E402,F401


def main() -> None:
    app()


if __name__ == "__main__":
    main()
