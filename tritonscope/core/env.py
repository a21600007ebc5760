"""The environment a command runs in: one object instead of module-level state.

The root callback of the CLI builds one `Env` (debug, caches) and puts it on
typer's context (`ctx.obj`); each command adds its display options (width,
color, pager) with `with_display` and asks it for consoles.  Core code that
needs a cache folder calls `cache_dir()`, which reads the same variables.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path


def cache_dir() -> Path:
    """Where tritonscope keeps derived data (SASS, resources, sweep rows).

    TRITONSCOPE_CACHE_DIR, else $XDG_CACHE_HOME/tritonscope, else ~/.cache/tritonscope.
    """
    base = os.environ.get("TRITONSCOPE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tritonscope")
    return Path(base)


def triton_cache_dir() -> Path | None:
    """Triton's own cache (TRITON_CACHE_DIR), when set; else Triton picks (~/.triton/cache)."""
    value = os.environ.get("TRITON_CACHE_DIR")
    return Path(value) if value else None


@dataclass(frozen=True)
class Env:
    debug: bool = False           # --debug or TRITONSCOPE_DEBUG: tracebacks instead of one message
    width: int | None = None      # --width: render for this many columns (None: the terminal's)
    color: bool | None = None     # --color/--no-color (None: decide from the terminal and NO_COLOR)
    pager: bool = False           # --pager
    cache: Path | None = None     # tritonscope's cache folder
    triton_cache: Path | None = None

    @classmethod
    def from_environ(cls, *, debug: bool = False) -> "Env":
        return cls(debug=debug or bool(os.environ.get("TRITONSCOPE_DEBUG")), cache=cache_dir(),
                   triton_cache=triton_cache_dir())

    def with_display(self, *, width: int | None = None, color: bool | None = None, pager: bool = False) -> "Env":
        """This environment with a command's display options."""
        return replace(self, width=width, color=color, pager=pager)

    def console(self, *, stderr: bool = False):
        """A rich Console for stdout (with --width/--color) or for stderr (progress, errors)."""
        from tritonscope.core.console import make_console

        if stderr:
            return make_console(stderr=True, color=self.color)
        return make_console(width=self.width, color=self.color)

    def paged(self, console):
        """A context that pages `console`'s output when --pager was given (and it is a terminal)."""
        from tritonscope.core.console import paged

        return paged(console, self.pager)


def env_of(ctx) -> Env:
    """The Env the root callback put on the typer/click context (a default one outside the CLI)."""
    obj = getattr(ctx, "obj", None) if ctx is not None else None
    return obj if isinstance(obj, Env) else Env.from_environ()
