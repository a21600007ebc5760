"""The one sanitizer for text that reaches a terminal or a text report.

Kernel source, file names, compiler messages and reopened reports are not
ours: any of them can hold an escape sequence (colour, window title, the
OSC 52 clipboard write, clear screen).  Every such character is shown
visibly instead, so the reader sees that it is there and the terminal does
nothing with it:

    'a\\x1b]52;c;SGVsbG8=\\x07'  ->  'a\\\\x1b]52;c;SGVsbG8=\\\\x07'

Newlines and tabs are kept (they are layout, not commands).  `SafeConsole`
applies the same rule to every segment rich renders, after our own styles
have become segments, so a renderer that forgets to sanitize still cannot
leak a control character.
"""

from __future__ import annotations

import re
from typing import Iterable

from rich.console import Console
from rich.segment import Segment

# C0 controls but \t and \n, DEL, C1 controls (\x80-\x9f: 8-bit CSI/OSC), the Unicode
# bidi overrides that reorder what a line appears to say, and lone surrogates (a report's
# JSON may hold "\ud800": no terminal encoding can write one, and printing it ended in
# a UnicodeEncodeError, exit 1).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _visible(match: re.Match) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with every control character written out as an escape ('\\x1b')."""
    if not text:
        return text
    return _CONTROL.sub(_visible, text)


def has_control(text: str) -> bool:
    return bool(_CONTROL.search(text))


class SafeConsole(Console):
    """A rich Console whose rendered text segments never carry a control character.

    Styles are applied by rich as separate control codes when the segments are
    written, so sanitizing segment text keeps our colours and drops theirs.
    """

    def on_broken_pipe(self) -> None:
        """`tritonscope ... | head` closed the pipe: not an error (exit 0, as the CLI and a replayed run say;
        rich's own handler exits 1)."""
        import os
        import sys

        self.quiet = True
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):  # not a real file (a test's capture): nothing to redirect
            pass
        raise SystemExit(0)

    def render(self, renderable, options=None) -> Iterable[Segment]:  # type: ignore[override]
        for segment in super().render(renderable, options):
            if segment.control or not _CONTROL.search(segment.text):
                yield segment
            else:
                yield Segment(visible(segment.text), segment.style, segment.control)


def visible_data(obj):
    """`obj` (JSON-like data, or dataclasses of it) with every string passed through `visible`.

    Used where text enters the tool (a compile's artifact, a reopened report),
    so the views measure the widths of what they will really print.  Returns
    the very same object when there was nothing to change, so the common case
    allocates nothing.
    """
    if isinstance(obj, str):
        return visible(obj)
    if isinstance(obj, dict):
        pairs = [(k, v, visible_data(k), visible_data(v)) for k, v in obj.items()]
        if all(k is nk and v is nv for k, v, nk, nv in pairs):
            return obj
        return {nk: nv for _, _, nk, nv in pairs}
    if isinstance(obj, (list, tuple)):
        items = [visible_data(v) for v in obj]
        if all(a is b for a, b in zip(items, obj)):
            return obj
        return type(obj)(items) if not hasattr(obj, "_fields") else type(obj)(*items)
    fields = getattr(obj, "__dataclass_fields__", None)
    if fields:
        from dataclasses import replace

        changes = {}
        for name, f in fields.items():
            if not f.init:
                continue
            value = getattr(obj, name)
            new = visible_data(value)
            if new is not value:
                changes[name] = new
        return replace(obj, **changes) if changes else obj
    return obj
