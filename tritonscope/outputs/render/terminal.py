"""The compile summary and the plain stage views, for the terminal."""

from __future__ import annotations

from rich import box
from rich.console import Group
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from tritonscope.analyses.analysis import Analysis
from tritonscope.language.dialects import dialect


def summary_panel(analysis: Analysis, summary=None) -> Panel:
    """The summary rows (render/summary_text.py, shared with HTML and Markdown), plus the mix and timing.

    `summary`: the page's summary section (sections.Summary); None: made from the analysis.
    """
    from tritonscope.outputs.render.summary_text import BAD_LABELS, summary_rows

    a = analysis.artifact
    rows = summary.rows if summary is not None else summary_rows(analysis)
    warnings = summary.warnings if summary is not None else a.warnings
    t = Table.grid(padding=(0, 2))
    t.add_column(style="bold")
    t.add_column()
    for label, value in rows:
        if label == "hash":
            t.add_row("mix", mix_text(analysis))
            value += f"  {compile_time_text(analysis)}"
        t.add_row(label, Text(value, style="bold red") if label in BAD_LABELS else value)
    body = [t]
    for w in warnings:
        body.append(Text(f"warning: {w}", style="yellow"))
    return Panel(Group(*body), title=f"tritonscope · {a.spec.kernel}", box=box.ROUNDED, expand=False)


def compile_time_text(analysis: Analysis) -> str:
    """How this kernel came to be here: 'compiled in 0.74 s'; 'replayed from the cache (the compile took 0.74 s)'
    for a result-cache answer; 'not compiled here' for a kernel found on disk (a cache, a dump, a capture),
    which records no compile time."""
    seconds = analysis.artifact.compile_seconds
    if not seconds or seconds <= 0:
        return "not compiled here"
    if analysis.replayed:
        return f"replayed from the cache (the compile took {seconds:.2f} s)"
    return f"compiled in {seconds:.2f} s"


def mix_text(analysis: Analysis) -> str:
    """The fine instruction mix of every stage that counts instructions (PTX and SASS; AMDGCN)."""
    parts = []
    for key, counts in analysis.mix.items():
        if counts:
            parts.append(f"{key.upper()}: " + ", ".join(f"{n} {c}" for c, n in counts.items()))
    return "\n".join(parts) or "n/a"


class StageLines:
    """A stage as pre-cut rows of (text, style) pieces, rendered straight to segments.

    Rows are cut to the console width here, so rich never has to wrap or
    divide one big Text: printing thousands of lines stays cheap.
    """

    def __init__(self, title: str, rows: list[list[tuple[str, object]]]):
        self.title = title
        self.rows = rows

    def __rich_console__(self, console, options):
        from rich.segment import Segment
        from rich.style import Style

        width = options.max_width
        yield Segment("   ")
        yield Segment(self.title, Style(bold=True))
        yield Segment.line()
        for row in self.rows:
            room = width - 2
            yield Segment("  ")
            for text, style in row:
                if room <= 0:
                    break
                if len(text) > room:
                    text = text[: max(room - 1, 0)] + "…"
                room -= len(text)
                yield Segment(text, style)
            yield Segment.line()
        yield Segment.line()


NOTE_MARK = "◂ "  # what starts the row of note labels under an annotated line


def note_row(notes) -> tuple[str, object]:
    """The labels of one line's notes as the stage views show them under it: ('◂ a; b', style).

    Yellow when a note is about a cost or is Triton's own remark, green otherwise.
    """
    from rich.style import Style

    yellow = any(n.kind in ("cost", "remark") for n in notes)
    return NOTE_MARK + "; ".join(n.label for n in notes), Style(color="yellow" if yellow else "green")


def stage_panel(analysis: Analysis, key: str, *, line_numbers: bool = True, notes: bool = True,
                width: int | None = None, max_lines: int | None = None,
                hide: frozenset[str] | None = None) -> StageLines:
    """One stage, highlighted, with each line's raw line number and its note labels.

    Full explanations are in `--line N` and `--view walkthrough`; here a dim
    `◂ label` line under the code keeps long stages readable.  Noise lines whose
    kind is in `hide` (default: every kind the dialect marks; none with --raw)
    are folded, with one line saying how many; shown lines keep their numbers.
    """
    from tritonscope.outputs.render import noise
    from rich.style import Style

    info = dialect(key)
    stage = analysis.parsed[key]
    folded = noise.fold(analysis, key, hide)
    lines = folded.shown if not max_lines else folded.shown[:max_lines]
    hidden = len(folded.shown) - len(lines)
    # Lines are cut at the console edge anyway; highlighting only what can be
    # seen keeps huge lines (a wgmma's 128-register operand list) cheap.
    keep = max(40, (width or 200) - 4)
    text = "\n".join(line.text.replace("\t", "    ")[:keep] for line in lines)
    by_line = analysis.notes_for(key) if notes else {}
    digits = len(str(stage.lines[-1].number)) if stage.lines else 1
    first = analysis.artifact.python_first_line if dialect(key).is_source else None
    dim, green, yellow = Style(dim=True), Style(color="green"), Style(color="yellow")
    rows: list[list[tuple[str, object]]] = []
    source = iter(lines)

    def start_row():
        line = next(source, None)
        rows.append([])
        if line is not None and line_numbers:
            number = line.loc.line if first is not None and line.loc else line.number
            rows[-1].append((f"{number:>{digits}}  ", dim))
        return line

    def end_row(line):
        labels = by_line.get(line.number, []) if line is not None else []
        if labels:  # on their own line, so a long code line never hides them
            rows.append([(" " * (digits + 2) + "◂ " + "; ".join(n.label for n in labels),
                          yellow if any(n.kind in ("cost", "remark") for n in labels) else green)])

    # Tokens straight from pygments: cheaper than rich's Syntax.highlight,
    # which dominated the time on big kernels.
    style_of = _token_styles()
    current = start_row()
    lexer = _lexer(info.lexer)
    lexer.stripnl = lexer.stripall = False  # a leading blank line is a row too: numbers must not shift
    for ttype, value in lexer.get_tokens(text):
        for i, part in enumerate(value.split("\n")):
            if i:
                end_row(current)
                current = start_row()
            if part:
                rows[-1].append((part, style_of(ttype)))
    while rows and not any(t.strip() for t, _ in rows[-1]):
        rows.pop()  # the lexer's trailing newline
    if current is not None and rows and rows[-1] and rows[-1][0][1] is not green:
        end_row(current)
    if hidden:
        rows.append([(f"... {hidden:,} more lines of {len(folded.shown):,}: show them with --max-lines 0 "
                      "(or --pager, --save report.html)", Style(bold=True, color="yellow"))])
    if folded.hidden:  # first, so it shows even when the stage is cut at --max-lines
        rows.insert(0, [(noise.message(folded.hidden), Style(dim=True, italic=True))])
    return StageLines(info.title, rows)


def _token_styles():
    """ttype -> rich Style for the ansi_dark theme, memoized per token type."""
    theme = Syntax.get_theme("ansi_dark")
    cache: dict = {}

    def style_of(ttype):
        style = cache.get(ttype)
        if style is None:
            style = cache[ttype] = theme.get_style_for_token(ttype)
        return style

    return style_of


def warm_up() -> None:
    """Build every stage's lexer once (Pygments compiles a lexer's expressions on first use).

    Data-independent: the command line calls it while the disassembler runs
    (compile.sass_and_resources' `meanwhile`), where it costs no wall time.
    """
    from tritonscope.language.dialects import discover

    for d in discover().values():
        if d.lexer:
            _lexer(d.lexer)


def _lexer(name: str):
    """Our MLIR/SASS lexers when present, pygments' own otherwise."""
    try:
        from tritonscope.outputs.render.lexers import get_lexer

        return get_lexer(name)
    except Exception:
        from pygments.lexers import get_lexer_by_name
        from pygments.util import ClassNotFound

        try:
            return get_lexer_by_name(name)
        except ClassNotFound:
            return get_lexer_by_name("text")
