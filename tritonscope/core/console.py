"""One place that decides how the terminal is used: width, color, paging."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # rich is imported by make_console's SafeConsole: prints_to_stderr runs in a managed
    # environment's child (a captured module's import), which holds Triton only
    from rich.console import Console


def make_console(*, width: int | None = None, color: bool | None = None, stderr: bool = False) -> Console:
    """A console that honours NO_COLOR, --no-color and a fixed --width.

    It is a SafeConsole: whatever a renderer prints, no control character
    from kernel or compiler text reaches the terminal (sanitize.py).
    """
    from tritonscope.core.sanitize import SafeConsole

    no_color = color is False or ("NO_COLOR" in os.environ and color is not True)
    return SafeConsole(
        width=width,
        no_color=no_color,
        color_system=None if no_color else "auto",
        highlight=False,
        stderr=stderr,
        soft_wrap=False,
    )


@contextlib.contextmanager
def paged(console: Console, enabled: bool):
    """Page long output through $PAGER (less -R) when writing to a terminal."""
    if enabled and console.is_terminal and sys.stdin.isatty():
        os.environ.setdefault("LESS", "-RFX")
        with console.pager(styles=not console.no_color):
            yield
    else:
        yield


@contextlib.contextmanager
def prints_to_stderr():
    """While a user's module runs (its import), what it prints goes to stderr: stdout carries only
    tritonscope's own output, which may be --json that a `print("loading")` at import would corrupt.

    Python's sys.stdout is redirected, and file descriptor 1 too where stdout is a real file (an
    extension's printf, os.write(1, ...)); both are put back afterwards, whatever the module raised.
    """
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    saved = None
    try:
        if sys.stdout.fileno() == 1 and sys.stderr.fileno() == 2:
            fd = os.dup(1)
            try:
                os.dup2(2, 1)
            except OSError:
                os.close(fd)
                raise
            saved = fd
    except (AttributeError, OSError, ValueError):  # a test's capture: no descriptor
        saved = None
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)
