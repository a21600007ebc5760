"""The sanitizer: no control character from kernel text reaches a terminal."""

from __future__ import annotations

import io

from rich.panel import Panel
from rich.text import Text

from tritonscope.core.sanitize import SafeConsole, has_control, visible

HOSTILE = "a\x1b]52;c;SGVsbG8=\x07b\x1b[31mred\x1b[2J\x9b2J\u202eevil\x00z"


def test_visible_writes_controls_out():
    out = visible(HOSTILE)
    assert not has_control(out)
    assert "\\x1b]52;c;SGVsbG8=\\x07" in out
    assert "\\x9b" in out and "\\u202e" in out and "\\x00" in out
    assert visible("tab\tand\nnewline") == "tab\tand\nnewline"


def test_safe_console_keeps_our_styles_and_drops_theirs():
    buf = io.StringIO()
    console = SafeConsole(file=buf, force_terminal=True, color_system="standard", width=120, highlight=False)
    console.print(Panel(Text(HOSTILE, style="red")))
    console.print(HOSTILE, markup=False)
    out = buf.getvalue()
    assert "\x1b[31m" in out                      # our own red style is still applied
    assert "\x1b]52" not in out and "\x1b[2J" not in out and "\x9b" not in out and "\u202e" not in out
    assert "\\x1b]52;c;SGVsbG8=" in out           # and the reader sees what was there
