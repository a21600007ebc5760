"""A table that fits the width it is drawn at, whole: no number split across lines, no header cut.

Rich squeezes a table that is too wide by folding its cells wherever the
column ends ("cp.async:12" over "0"), and cuts columns that may not wrap.
`FittedTable` sizes the columns itself, at draw time (it is a renderable:
the console's width, or `--width`, decides):

- a column's narrowest width is its widest cell and header, or, for a
  column whose text may wrap (`wrap`), its longest word: words are never
  broken; a `fold` column (a name, a path) may be broken anywhere past its
  `min_width`;
- when even the narrowest widths do not fit, columns are left out, the
  highest `drop` first (0: never), and the caption names them and where to
  see them;
- the width left over goes to the wrapping columns, up to their natural
  width.

Renderers decide what goes in a table and how it looks; this only decides
the widths.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text


@dataclass
class Col:
    """One column: its header, its cells (str or Text), and how it may shrink."""

    header: str
    cells: list[Any] = field(default_factory=list)
    justify: str = "left"
    wrap: bool = False           # may wrap between words (never inside one)
    fold: bool = False           # a name or path: may break anywhere, down to min_width
    min_width: int | None = None
    drop: int = 0                # left out first when the table cannot fit (highest first); 0: never

    def _plain(self, cell) -> str:
        return cell.plain if isinstance(cell, Text) else str(cell)

    def natural(self) -> int:
        texts = [self.header] + [self._plain(c) for c in self.cells]
        return max((cell_len(line) for t in texts for line in (t.splitlines() or [""])), default=1)

    def narrowest(self) -> int:
        if self.fold:
            return min(self.natural(), max(self.min_width or 8, _longest_word(self.header)))
        if not self.wrap:
            return self.natural()
        words = [_longest_word(self.header)] + [_longest_word(self._plain(c)) for c in self.cells]
        return min(self.natural(), max(max(words, default=1), self.min_width or 0))


def _longest_word(text: str) -> int:
    return max((cell_len(w) for w in text.split()), default=0)


class FittedTable:
    """A rich Table built for the width it is drawn at (see the module's docstring).

    `table` holds the Table's own arguments (title, box, ...); `row_styles` one style (or None) per row;
    `left_out` the words of the caption that names left-out columns, '{names}' standing for them."""

    def __init__(self, columns: list[Col], *, row_styles: list[str | None] | None = None,
                 left_out: str = "left out at this width: {names} (a wider --width shows them)",
                 caption: str | None = None, **table: Any):
        self.columns = columns
        self.row_styles = row_styles
        self.left_out = left_out
        self.caption = caption
        self.table = table

    def layout(self, width: int, console: Console, options: ConsoleOptions) -> tuple[list[Col], list[int], list[str]]:
        """(the columns kept, their widths, the headers of those left out) at `width` cells."""
        kept = list(self.columns)
        gone: list[Col] = []
        while True:
            mins = [c.narrowest() for c in kept]
            overhead = self._overhead(len(kept), console, options)
            if sum(mins) + overhead <= width or not any(c.drop for c in kept):
                break
            worst = max((c for c in kept if c.drop), key=lambda c: c.drop)
            kept.remove(worst)
            gone.append(worst)
        widths = list(mins)
        spare = width - sum(widths) - overhead
        # the spare width: first to columns that must not wrap (cannot happen: they are at natural width), then
        # to wrapping and folding columns, in turn, up to their natural width
        growable = [i for i, c in enumerate(kept) if c.wrap or c.fold]
        while spare > 0 and growable:
            grew = False
            for i in growable:
                if spare > 0 and widths[i] < kept[i].natural():
                    widths[i] += 1
                    spare -= 1
                    grew = True
            if not grew:
                break
        return kept, widths, [c.header for c in self.columns if c in gone]

    def _overhead(self, n: int, console: Console, options: ConsoleOptions) -> int:
        """Cells a table of `n` columns takes beyond its columns' widths (borders, separators, padding)."""
        probe = Table(**self.table)
        for _ in range(n):
            probe.add_column(width=1)
        return Measurement.get(console, options.update_width(10 ** 6), probe).maximum - n

    def build(self, width: int, console: Console, options: ConsoleOptions) -> Table:
        kept, widths, gone = self.layout(width, console, options)
        notes = [self.caption] if self.caption else []
        if gone:
            notes.append(self.left_out.format(names=", ".join(gone)))
        t = Table(**self.table, caption="\n".join(notes) or None, caption_justify="left")
        for c, w in zip(kept, widths):
            t.add_column(c.header, justify=c.justify, width=w, no_wrap=not (c.wrap or c.fold),
                         overflow="fold" if c.fold else ("fold" if c.wrap else "ellipsis"))
        rows = max((len(c.cells) for c in self.columns), default=0)
        for r in range(rows):
            style = self.row_styles[r] if self.row_styles else None
            t.add_row(*(c.cells[r] if r < len(c.cells) else "" for c in kept), style=style)
        return t

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.build(options.max_width, console, options)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.build(options.max_width, console, options))
