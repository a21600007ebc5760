"""One place that decides how the terminal is used: width, color, paging."""

from __future__ import annotations

import contextlib
import os
import sys

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
