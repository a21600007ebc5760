"""The compile summary and the plain stage views, for the terminal."""

from __future__ import annotations

from rich import box
from rich.console import Group
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from tritonscope.analysis import Analysis
from tritonscope.model import ARCHES, STAGE_BY_KEY


def summary_panel(analysis: Analysis) -> Panel:
    from tritonscope.compile import fit_problems, occupancy

    a = analysis.artifact
    spec = a.spec
    arch = ARCHES[spec.arch]
    res = a.resources
    t = Table.grid(padding=(0, 2))
    t.add_column(style="bold")
    t.add_column()
    t.add_row("kernel", f"{spec.kernel}  ({spec.target})")
    t.add_row("target", f"{arch.name} ({arch.gpus})")
    t.add_row("config", ", ".join([*(f"{k}={v}" for k, v in spec.constexprs.items()),
                                   f"num_warps={spec.num_warps}", f"num_stages={spec.num_stages}"]))
    if spec.shape:
        t.add_row("problem", "x".join(map(str, spec.shape)) + (f"  {spec.dtype}" if spec.dtype else "")
                  + (f"  grid={tuple(spec.grid)}" if spec.grid else ""))
    t.add_row("arguments", ", ".join(
        f"{s.name}: {s.type}" + (f" {{{', '.join(s.attrs)}}}" if s.attrs else "")
        + (f" = {s.value}" if s.type == "constexpr" else "")
        for s in a.specialization))
    fusion = a.metadata.get("enable_fp_fusion")
    t.add_row("triton", a.triton_version
              + ("" if fusion is None else f", fp fusion {'on' if fusion else 'off'}")
              + (f"  ({', '.join(f'{k}={v}' for k, v in a.env.items())})" if a.env else ""))
    t.add_row("shared memory", f"{res.dynamic_shared:,} bytes dynamic (limit {arch.max_shared_per_block:,})")
    regs = "unknown" if res.registers is None else f"{res.registers} per thread"
    spills = "unknown" if res.local is None else ("none" if not res.local else f"{res.local} bytes local memory per thread")
    t.add_row("registers", regs)
    t.add_row("spills", spills)
    problems = fit_problems(a)
    if problems:
        t.add_row("fits", Text("NO: " + "; ".join(problems), style="bold red"))
    else:
        occ = occupancy(a)
        t.add_row("occupancy", f"{occ['blocks_per_sm']} blocks/SM, {occ['warps_per_sm']} warps/SM "
                               f"({occ['occupancy']:.0%}), limited by {occ['limited_by']}")
    t.add_row("mix", mix_text(analysis))
    t.add_row("hash", a.kernel_hash[:16] + f"  compiled in {a.compile_seconds:.2f} s")
    body = [t]
    for w in a.warnings:
        body.append(Text(f"warning: {w}", style="yellow"))
    return Panel(Group(*body), title=f"tritonscope · {spec.kernel}", box=box.ROUNDED, expand=False)


def mix_text(analysis: Analysis) -> str:
    parts = []
    for key in ("ptx", "sass"):
        counts = analysis.mix.get(key)
        if counts:
            parts.append(f"{key.upper()}: " + ", ".join(f"{n} {c}" for c, n in counts.items()))
    return "\n".join(parts) or "n/a"


def stage_panel(analysis: Analysis, key: str, *, line_numbers: bool = True, notes: bool = True,
                width: int | None = None, max_lines: int | None = None) -> Panel:
    """One stage, highlighted, with each line's raw line number and its note labels at the right.

    Full explanations are in `--line N` and `--view walkthrough`; here a dim
    `◂ label` line under the code keeps long stages readable.
    """
    info = STAGE_BY_KEY[key]
    stage = analysis.parsed[key]
    lines = stage.lines if not max_lines else stage.lines[:max_lines]
    hidden = len(stage.lines) - len(lines)
    # Lines are cropped at the panel edge anyway; highlighting only what can be
    # seen keeps huge lines (a wgmma's 128-register operand list) cheap.
    keep = max(40, (width or 200) - 4)
    text = "\n".join(line.text.replace("\t", "    ")[:keep] for line in lines)
    by_line = analysis.notes_for(key) if notes else {}
    width = len(str(stage.lines[-1].number)) if stage.lines else 1
    first = analysis.artifact.python_first_line if key == "python" else None
    body = Text(no_wrap=True, overflow="ellipsis")
    rows = iter(lines)

    def start_row():
        line = next(rows, None)
        if line is not None and line_numbers:
            number = line.loc.line if first is not None and line.loc else line.number
            body.append(f"{number:>{width}}  ", style="dim")
        return line

    def end_row(line):
        body.append("\n")
        labels = by_line.get(line.number, []) if line is not None else []
        if labels:  # on their own line, so a long code line never hides them
            body.append(" " * (width + 2) + "◂ " + "; ".join(n.label for n in labels) + "\n",
                        style="yellow" if any(n.kind == "cost" for n in labels) else "green")

    # Tokens straight from pygments into one Text: cheaper than rich's
    # Syntax.highlight + split, which dominated the time on big kernels.
    style_of = _token_styles()
    current = start_row()
    for ttype, value in _lexer(info.lexer).get_tokens(text):
        parts = value.split("\n")
        for i, part in enumerate(parts):
            if i:
                end_row(current)
                current = start_row()
            if part:
                body.append(part, style_of(ttype))
    body.rstrip()
    body.append("\n")
    if hidden:
        body.append(f"... {hidden:,} more lines of {len(stage.lines):,}: show them with --max-lines 0 "
                    f"(or --pager, --save report.html)\n", style="bold yellow")
    body.rstrip()
    return Panel(body, title=info.title, box=box.SIMPLE_HEAD, title_align="left")


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


def _lexer(name: str):
    """Our MLIR/SASS lexers when present, pygments' own otherwise."""
    try:
        from tritonscope.render.lexers import get_lexer

        return get_lexer(name)
    except Exception:
        from pygments.lexers import get_lexer_by_name
        from pygments.util import ClassNotFound

        try:
            return get_lexer_by_name(name)
        except ClassNotFound:
            return get_lexer_by_name("text")
