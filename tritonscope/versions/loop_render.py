"""Terminal rendering of a LoopPair (tritonscope diff --loop): the two innermost loops side by side."""

from __future__ import annotations

from rich import box
from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from tritonscope.core.sanitize import visible
from tritonscope.versions.loop_pair import Fold, LoopPair, LoopRow, SideLoop, shown_rows

MARK_STYLE = {"MMA": "bold magenta", "DRAIN": "bold red", "WAIT": "yellow", "BAR": "cyan", "LOAD": "green"}
STAGE_TITLE = {"sass": "SASS", "amdgcn": "AMDGCN", "ptx": "PTX", "llir": "LLVM IR"}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def side_summary(s: SideLoop | None) -> str:
    """'.LBB0_2 (line 812): 332 instructions, 8 MMA, 6 waits (2 drains), 2 barriers, 6 loads'."""
    if s is None:
        return "no loop"
    c = s.counts()
    waits = c["wait"] + c["drain"]
    more = f"; 1 of {s.loops} innermost loops" if s.loops > 1 else ""
    return (f"{visible(s.label)} (line {s.first_line}): {_plural(c['instructions'], 'instruction')}, {c['mma']} MMA, "
            f"{_plural(waits, 'memory wait')} ({_plural(c['drain'], 'drain')}), {_plural(c['bar'], 'barrier')}, "
            f"{_plural(c['load'], 'load')}{more}")


def _cell(line) -> tuple[Text, Text]:
    if line is None:
        return Text(""), Text("")
    mark = Text(line.mark or "", style=MARK_STYLE.get(line.mark or "", ""))
    return mark, Text(visible(line.text), style="bold" if line.mark else "")


def loop_panel(p: LoopPair, a_label: str, b_label: str, *, context: int = 2) -> Panel:
    """The loop view: a header per side, then the aligned rows; runs with no mark folded (see shown_rows)."""
    stage = STAGE_TITLE.get(p.stage or "", p.stage or "")
    head = Table.grid(padding=(0, 1))
    head.add_column(style="bold")
    head.add_column(overflow="fold")
    head.add_row("A", f"{visible(a_label)}: {side_summary(p.a)}")
    head.add_row("B", f"{visible(b_label)}: {side_summary(p.b)}")
    parts: list = [head]
    if p.why:
        parts.append(Text(p.why, style="yellow"))
    if not p.marked:
        parts.append(Text(f"{stage} has no instruction classes here: nothing is marked.", style="dim"))
    if p.rows:
        t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, expand=True)
        t.add_column("", no_wrap=True, width=5)
        t.add_column("A", no_wrap=True, overflow="ellipsis", ratio=1)
        t.add_column("", no_wrap=True, width=5)
        t.add_column("B", no_wrap=True, overflow="ellipsis", ratio=1)
        for r in shown_rows(p.rows, context):
            if isinstance(r, Fold):
                t.add_row("", Text(f"⋯ {r.a} unmarked" if r.a else "", style="dim italic"), "",
                          Text(f"⋯ {r.b} unmarked" if r.b else "", style="dim italic"))
                continue
            assert isinstance(r, LoopRow)
            (ma, ta), (mb, tb) = _cell(r.a), _cell(r.b)
            t.add_row(ma, ta, mb, tb)
        parts += [Text(""), t]
        parts.append(Text("MMA tensor-core instruction · WAIT waits until at most N loads (or wgmmas) are in flight · "
                          "DRAIN waits until none is · BAR barrier · LOAD global/buffer load, async or TMA copy; "
                          "rows aligned on marks, then opcodes; ⋯ a run with no mark", style="dim"))
    return Panel(Group(*parts), title=f"innermost loop ({stage})" if stage else "innermost loop",
                 title_align="left", border_style="blue")


def loop_html(p: LoopPair, a_label: str, b_label: str, *, context: int = 2) -> str:
    """The loop panel as an HTML <pre> (inline styles), for a saved .html diff."""
    import io

    from tritonscope.core.sanitize import SafeConsole

    console = SafeConsole(width=140, file=io.StringIO(), record=True, color_system="truecolor", force_terminal=True)
    console.print(loop_panel(p, a_label, b_label, context=context))
    return console.export_html(inline_styles=True, code_format='<pre class="loop-view">{code}</pre>\n')
