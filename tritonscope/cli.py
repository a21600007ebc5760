"""The typer app: parse arguments -> core -> renderer -> exit code.

Commands are plain functions in tritonscope/commands/, registered here in
one place (COMMANDS); none of them imports this module.  Each is wrapped by
`handle_errors`, the one place that turns a TritonscopeError into one
message on stderr and a documented exit code (see errors.ExitCode); --debug
shows the traceback instead.  The root callback builds the Env (env.py) that
commands read from typer's context.
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
from typing import Optional

import typer

from tritonscope._version import __version__
from tritonscope.commands import bench as bench_cmd
from tritonscope.commands import compile as compile_cmd
from tritonscope.commands import diff as diff_cmd
from tritonscope.commands import layout as layout_cmd
from tritonscope.commands import open as open_cmd
from tritonscope.commands import capture as capture_cmd
from tritonscope.commands import check as check_cmd
from tritonscope.commands import explain as explain_cmd
from tritonscope.commands import passes as passes_cmd
from tritonscope.commands import run as run_cmd
from tritonscope.commands import samples as samples_cmd
from tritonscope.commands import show as show_cmd
from tritonscope.commands import sweep as sweep_cmd
from tritonscope.core.env import Env, env_of
from tritonscope.core.errors import ExitCode, InterruptedRunError, TritonscopeError

# "\b" alone on a paragraph's first line keeps click from rewrapping it: one code, one example per line.
EXIT_CODES_HELP = "\b\n" + "\n".join(f"{c.value:>3}  {c.name.lower().replace('_', ' ')}"
                                       + (" (a tritonscope bug)" if c == ExitCode.UNEXPECTED else "")
                                       for c in ExitCode)

app = typer.Typer(
    name="tritonscope",
    help="See what Triton really does with a kernel: every stage from Python to SASS, "
    "annotated, source-linked, diffed and benchmarked.\n\n"
    "Examples:\n\n\b\n"
    "  tritonscope compile matmul --block 16\n"
    "  tritonscope compile matmul --block 16 --view walkthrough\n"
    "  tritonscope compile my_kernels.py:add_kernel --arg x_ptr='*fp32' \\\n"
    "      --arg n=1024 -c BLOCK=256\n"
    "  tritonscope diff matmul --a BLOCK=16 --b BLOCK=64 --arch sm_90\n\n"
    f"Exit codes:\n\n{EXIT_CODES_HELP}\n\n"
    "12 and 13 are run's and bench's (13 also tune's: it timed nothing), 14 capture's (the message names the "
    "program's own status).",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool):
    if value:
        typer.echo(f"tritonscope {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    debug: bool = typer.Option(False, "--debug", help="Show full tracebacks on errors."),
    version: Optional[bool] = typer.Option(None, "--version", callback=_version, is_eager=True,
                                           help="Print the version and exit."),
):
    ctx.obj = Env.from_environ(debug=debug)
    from tritonscope.core.cache_prune import problem

    if problem() is not None:  # a typo in TRITONSCOPE_CACHE_MAX_MB turns pruning off: say so
        _warn(problem())


def _warn(message: str) -> None:
    _stderr_lines("bold yellow", "warning", message)


def report_error(err: TritonscopeError, *, width: int | None = None, color: bool | None = None) -> None:
    """The error on stderr, at the command's --width and --color/--no-color where it has them."""
    _stderr_lines("bold red", "error", str(err.message), context=err.context, hint=err.hint, width=width, color=color)


def _stderr_lines(style: str, label: str, message: str, *, context=None, hint=None, width: int | None = None,
                  color: bool | None = None) -> None:
    """'label: message', then the context lines and a hint, on stderr.

    Messages quote kernel names, file names, variables and Triton's own
    errors: control characters are shown, not sent.
    """
    from rich.markup import escape

    from tritonscope.core.console import make_console
    from tritonscope.core.sanitize import visible

    console = make_console(stderr=True, width=width if isinstance(width, int) and width >= 20 else None,
                           color=color if isinstance(color, bool) else None)
    console.print(f"[{style}]{label}:[/] {escape(visible(message))}")
    if context:
        for line in str(context).splitlines():
            console.print(f"  [dim]|[/] {escape(visible(line))}")
    if hint:
        console.print(f"[bold]hint:[/] {escape(visible(str(hint)))}")


def handle_errors(fn):
    """Map typed errors to one clear message + exit code; Ctrl-C to 130.

    Every command takes `ctx` (typer passes it by name): its Env says --debug.
    """

    path_options = _path_options(fn)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        debug = env_of(kwargs.get("ctx")).debug
        from tritonscope.core.output import started_in
        from tritonscope.pipeline.interrupt import prompt_interrupt

        try:
            _refuse_empty_paths(path_options, kwargs)
            # Ctrl-C stops at once, even inside Triton's C++ compiler; a relative --save/--emit stays in the
            # folder the command started in, whatever a kernel module's import does to the cwd
            with prompt_interrupt(), started_in(_cwd()):
                return fn(*args, **kwargs)
        except typer.Exit:
            raise
        except InterruptedRunError as e:  # Ctrl-C after the command showed what finished: not an error
            print(f"\ninterrupted: {e.message}", file=sys.stderr)
            raise typer.Exit(int(e.exit_code))
        except TritonscopeError as e:
            if debug:
                traceback.print_exc()
            report_error(e, width=kwargs.get("width"), color=kwargs.get("color"))
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
            if debug:
                traceback.print_exc()
            report_error(TritonscopeError(
                f"unexpected {type(e).__name__}: {e}",
                hint="This is a tritonscope bug. Rerun with --debug and report the traceback.",
            ))
            raise typer.Exit(int(ExitCode.UNEXPECTED))

    return wrapper


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # the folder it started in is gone: relative paths fail as they would
        return None


# Options that name a file or folder to write or read: an empty one (`--save ''`, a variable that was
# not set) is a mistake, never "no file" (each command tests them with `if save:`).
PATH_OPTIONS = frozenset({"save", "emit", "junit", "svg", "dump", "out"})


def _path_options(fn) -> dict[str, str]:
    """{parameter: its long option name} for the command's path options ('save' -> '--save')."""
    import inspect

    from typer.models import OptionInfo

    out = {}
    for param in inspect.signature(fn).parameters.values():
        info = param.default
        if param.name in PATH_OPTIONS and isinstance(info, OptionInfo):
            names = [d for d in [info.default, *info.param_decls] if isinstance(d, str) and d.startswith("--")]
            out[param.name] = names[0] if names else f"--{param.name}"
    return out


def _refuse_empty_paths(options: dict[str, str], kwargs) -> None:
    from tritonscope.core.errors import UsageError

    for name, option in options.items():
        value = kwargs.get(name)
        if isinstance(value, str) and not value.strip():
            raise UsageError(f"{option} {value!r} names no file or folder.",
                             hint=f"Give {option} a path, or leave the option out.")


# Every command, in `--help` order: name -> plain function (commands never import this module).
COMMANDS = {
    "compile": compile_cmd.compile_cmd,
    "samples": samples_cmd.samples_cmd,
    "diff": diff_cmd.diff_cmd,
    "sweep": sweep_cmd.sweep_cmd,
    "show": show_cmd.show_cmd,
    "layout": layout_cmd.layout_cmd,
    "run": run_cmd.run_cmd,
    "bench": bench_cmd.bench_cmd,
    "passes": passes_cmd.passes_cmd,
    "open": open_cmd.open_cmd,
    "capture": capture_cmd.capture_cmd,
    "explain": explain_cmd.explain_cmd,
    "check": check_cmd.check_cmd,
    "versions": __import__("tritonscope.commands.versions", fromlist=["versions_cmd"]).versions_cmd,
    "tune": __import__("tritonscope.commands.tune", fromlist=["tune_cmd"]).tune_cmd,
}
# What an exit code means beyond errors.ExitCode, for the commands that give one a meaning of their own.
EXIT_NOTES = {
    "run": "12 when an output does not match torch; 13 when the launch declares no check (nothing compared).",
    "bench": "12 when a config computes a wrong result; 13 when one fails or its figure cannot be true.",
    "capture": "14 when the program exits non-zero or a signal kills it (its status is named; the capture is kept).",
}


def command_help(name: str, fn) -> str:
    """The command's docstring, then every exit code it can give (the one list, errors.ExitCode)."""
    import inspect

    codes = ", ".join(f"{c.value} {c.name.lower().replace('_', ' ')}"
                      + (" (a tritonscope bug)" if c == ExitCode.UNEXPECTED else "") for c in ExitCode)
    note = f" {EXIT_NOTES[name]}" if name in EXIT_NOTES else ""
    return f"{inspect.getdoc(fn) or ''}\n\nExit codes: {codes}.{note}"


def readable_metavars(fn) -> None:
    """Give options and arguments without a metavar a readable one (N, TEXT, TARGET).

    Without it, typer shows Python types: `<int>`, `<str>`, `<list[str]>`.
    The option objects are shared between commands, so this is idempotent.
    """
    import inspect

    from typer.models import ArgumentInfo, OptionInfo

    for param in inspect.signature(fn).parameters.values():
        info = param.default
        if not isinstance(info, (OptionInfo, ArgumentInfo)) or info.metavar:
            continue
        kind = str(param.annotation)
        if isinstance(info, ArgumentInfo):
            info.metavar = param.name.upper()
        elif "bool" in kind:
            continue
        elif "int" in kind:
            info.metavar = "N"
        elif "float" in kind:
            info.metavar = "NUMBER"
        else:
            info.metavar = "TEXT"


for _name, _fn in COMMANDS.items():
    readable_metavars(_fn)
    app.command(_name, help=command_help(_name, _fn))(handle_errors(_fn))


def main() -> None:
    app()


if __name__ == "__main__":
    main()
