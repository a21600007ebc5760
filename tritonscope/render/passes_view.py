"""Rich renderables for a PassTrace: the pipeline table, one pass's diff,
--find and --line answers, and Triton's remarks pinned to source lines.

Everything here reads the records of tritonscope.passes; nothing parses IR.
"""

from __future__ import annotations

import os
import re
from typing import Iterable

from rich.console import Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from tritonscope.passes import STAGE_TITLES, FindEvent, LineEvent, PassTrace, Step
from tritonscope.remarks import Remark

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "remark": "cyan", "note": "dim"}
STAGE_STYLE = {"ttir": "blue", "ttgir": "magenta", "llir": "green"}


def _ms(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds * 1000:.1f}"


def _stage(stage: str) -> Text:
    return Text(STAGE_TITLES.get(stage, stage or "?"), style=STAGE_STYLE.get(stage, ""))


# #ttg.nvidia_mma<{versionMajor = 2, ...}>  ->  nvidia_mma
_KIND_RE = re.compile(r"^#\w+\.(\w+)")


def _layout_kind(encoding: str) -> str:
    m = _KIND_RE.match(encoding)
    return m.group(1) if m else encoding[:24]


def step_facts(step: Step) -> Text:
    """What a step changed, in kernel terms, as one styled line."""
    out = Text()

    def add(text: str, style: str = "") -> None:
        if out:
            out.append(", ")
        out.append(text, style=style)

    for alias, enc in step.layouts_added.items():
        verb = "now" if alias in step.layouts_removed else "+"
        add(f"{verb}{alias} {_layout_kind(enc)}", "bold magenta")
    for alias, enc in step.layouts_removed.items():
        if alias not in step.layouts_added:
            add(f"-{alias} {_layout_kind(enc)}", "magenta")
    for fact in step.facts():
        if fact.startswith("#"):
            continue  # layouts, drawn above with their kind
        add(fact, "cyan" if fact.startswith("+") else "")
    return out


def pipeline_table(trace: PassTrace, *, show_all: bool = False, remarks: bool = True) -> Group:
    """The pass table: one row per step that changed the IR (all with show_all)."""
    table = Table(title=f"{trace.kernel} on {trace.arch}: {len(trace.steps)} pass steps, "
                        f"{len(trace.changed_steps)} changed the IR (Triton {trace.triton_version})",
                  title_justify="left", show_edge=False, pad_edge=False, expand=False)
    table.add_column("step", justify="right", style="bold")
    table.add_column("pass")
    table.add_column("stage")
    table.add_column("+lines", justify="right", style="green")
    table.add_column("-lines", justify="right", style="red")
    table.add_column("what changed", ratio=1, overflow="fold")
    table.add_column("ms", justify="right", style="dim")
    by_step: dict[int, list[Remark]] = {}
    for r in trace.remarks:
        by_step.setdefault(r.step, []).append(r)
    folded: list[Step] = []

    def flush() -> None:
        if not folded:
            return
        names = []
        for s in folded:
            if s.name not in names:
                names.append(s.name)
        span = f"{folded[0].index}" if len(folded) == 1 else f"{folded[0].index}-{folded[-1].index}"
        label = f"{len(folded)} unchanged: " + ", ".join(names[:4]) + (" ..." if len(names) > 4 else "")
        table.add_row(Text(span, style="dim"), Text(label, style="dim italic"), "", "", "", "", "")
        folded.clear()

    for step in trace.steps:
        if not show_all and step.changed is False and step.index not in by_step:
            folded.append(step)
            continue
        flush()
        facts = step_facts(step)
        if step.internal:
            facts.append((", " if facts else "") + "internal: " + ", ".join(step.internal), style="dim")
        for r in by_step.get(step.index, []):
            if r.severity != "note":
                facts.append(("\n" if facts else "") + f"{r.severity}: ", style=SEVERITY_STYLE.get(r.severity, ""))
                facts.append(f"{r.where()} {r.said[:90]}")
        name = Text(step.name, style="" if step.changed else "dim")
        if step.changed is None:
            name.append(" (no after)", style="dim")
        table.add_row(str(step.index), name, _stage(step.stage),
                      str(step.lines_added) if step.changed else "",
                      str(step.lines_removed) if step.changed else "", facts, _ms(step.seconds))
    flush()
    parts = [table]
    if remarks and trace.remarks:
        parts.append(remarks_view(trace.remarks))
    return Group(*parts)


def remarks_view(remarks: Iterable[Remark], *, source: dict[str, list[str]] | None = None) -> Panel:
    """Triton's remarks and warnings, each with its file:line:col and the line's text."""
    body = Text()
    cache: dict[str, list[str]] = dict(source or {})
    for r in remarks:
        if body:
            body.append("\n")
        body.append(f"{r.where()} ", style="bold")
        body.append(f"{r.severity}", style=SEVERITY_STYLE.get(r.severity, ""))
        if r.pass_name:
            body.append(f" (step {r.step}, {r.pass_name})", style="dim")
        elif r.stage:
            body.append(f" ({STAGE_TITLES.get(r.stage, r.stage)} passes)", style="dim")
        body.append(f": {r.said}")
        line = _source_line(cache, r.file, r.line)
        if line is not None and r.severity != "note":
            body.append(f"\n    {r.line:>4} | {line.rstrip()}", style="dim")
    return Panel(body, title="Triton's remarks", title_align="left", border_style="yellow")


def _source_line(cache: dict[str, list[str]], file: str, line: int) -> str | None:
    if not file or line <= 0:
        return None
    if file not in cache:
        try:
            with open(file, encoding="utf-8", errors="replace") as f:
                cache[file] = f.read().splitlines()
        except OSError:
            cache[file] = []
    lines = cache[file]
    return lines[line - 1] if line <= len(lines) else None


def find_view(query: str, events: list[FindEvent]) -> Text:
    """`X` appears at step 35, TritonGPUPipeline ... removed at step 68, ..."""
    out = Text()
    if not events:
        out.append(f"{query}", style="bold")
        out.append(" never appears or changes in any pass step.")
        return out
    for e in events:
        if out:
            out.append("\n")
        out.append(query, style="bold")
        verb = {"appears": "appears", "removed": "is removed", "changed": "changes"}[e.kind]
        style = {"appears": "green", "removed": "red", "changed": "yellow"}[e.kind]
        out.append(f" {verb} ", style=style)
        out.append(f"at step {e.step}, ")
        out.append(e.name, style="bold")
        out.append(f" ({STAGE_TITLES.get(e.stage, e.stage)}; {e.before} -> {e.after})", style="dim")
    return out


def line_view(trace: PassTrace, line: int, events: list[LineEvent]) -> Group:
    """One Python line's ops through the passes (only the steps that changed them)."""
    cache: dict[str, list[str]] = {}
    text = _source_line(cache, trace.file, line)
    head = Text(f"{os.path.basename(trace.file) or '?'}:{line}", style="bold")
    if text is not None:
        head.append(f"  {text.strip()}")
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("step", justify="right", style="bold")
    table.add_column("pass")
    table.add_column("stage")
    table.add_column("added", style="green", overflow="fold")
    table.add_column("removed", style="red", overflow="fold")
    for e in events:
        table.add_row(str(e.step) if e.step else "-", e.name, _stage(e.stage), _ops(e.added), _ops(e.removed))
    parts: list = [head]
    if events:
        parts.append(table)
    else:
        parts.append(Text("No op in any dump carries this line's location.", style="dim"))
    mine = [r for r in trace.remarks if r.line == line and r.file and trace.file
            and os.path.realpath(r.file) == os.path.realpath(trace.file)]
    if mine:
        parts.append(remarks_view(mine, source=cache))
    return Group(*parts)


def _ops(ops: dict[str, int]) -> str:
    return ", ".join(f"{k} x{v}" if v > 1 else k for k, v in ops.items())


def pass_view(trace: PassTrace, step: Step, diff: list[str], *, width: int | None = None) -> Group:
    """One step: a header with what changed, then the coloured unified diff."""
    head = Text()
    head.append(f"step {step.index}: ", style="bold")
    head.append(step.name, style="bold")
    head.append(f"  {step.arg}", style="dim")
    head.append(f"\n{STAGE_TITLES.get(step.stage, step.stage)}, on {step.anchor}")
    if step.seconds is not None:
        head.append(f", {_ms(step.seconds)} ms")
    facts = step_facts(step)
    if facts:
        head.append("\n")
        head.append_text(facts)
    for alias, enc in step.layouts_added.items():
        head.append(f"\n  {alias} = {enc}", style="magenta")
    if step.ops_added:
        head.append("\n  ops added: " + _ops(step.ops_added), style="green")
    if step.ops_removed:
        head.append("\n  ops removed: " + _ops(step.ops_removed), style="red")
    parts: list = [head]
    mine = [r for r in trace.remarks if r.step == step.index]
    if mine:
        parts.append(remarks_view(mine))
    if step.changed is None:
        parts.append(Text("This is the last pass Triton dumped: there is no module after it to compare.",
                          style="dim"))
    elif not step.changed:
        parts.append(Text("This pass left the IR unchanged (locations aside).", style="dim"))
    else:
        body = Text(no_wrap=True, overflow="ellipsis")
        for line in diff:
            if body:
                body.append("\n")
            if line.startswith(("+++", "---")):
                body.append(line, style="bold")
            elif line.startswith("@@"):
                body.append(line, style="cyan")
            elif line.startswith("+"):
                body.append(line, style="green")
            elif line.startswith("-"):
                body.append(line, style="red")
            else:
                body.append(line)
        parts.append(Panel(body, title=f"before -> after {escape(step.name)}", title_align="left",
                           border_style="dim"))
    return Group(*parts)


# --------------------------------------------------------------------------
# The table as plain rows (HTML and Markdown reports), saved tables, diff --passes
# --------------------------------------------------------------------------


def table_rows(trace: PassTrace, *, show_all: bool = False) -> list[dict]:
    """The pipeline table as plain rows: {step, pass, stage, added, removed, what, ms, folded}.

    The same folding as `pipeline_table`: a run of unchanged steps is one row.
    """
    rows: list[dict] = []
    folded: list[Step] = []
    remarked = {r.step for r in trace.remarks if r.step}

    def flush() -> None:
        if not folded:
            return
        names = list(dict.fromkeys(s.name for s in folded))
        span = f"{folded[0].index}" if len(folded) == 1 else f"{folded[0].index}-{folded[-1].index}"
        rows.append({"step": span, "pass": f"{len(folded)} unchanged: " + ", ".join(names[:4])
                     + (" ..." if len(names) > 4 else ""), "stage": "", "added": "", "removed": "", "what": "",
                     "ms": "", "folded": True})
        folded.clear()

    for step in trace.steps:
        if not show_all and step.changed is False and step.index not in remarked:
            folded.append(step)
            continue
        flush()
        rows.append({"step": str(step.index), "pass": step.name, "stage": STAGE_TITLES.get(step.stage, step.stage),
                     "added": str(step.lines_added) if step.changed else "",
                     "removed": str(step.lines_removed) if step.changed else "",
                     "what": step_facts(step).plain, "ms": _ms(step.seconds), "folded": False})
    flush()
    return rows


def table_title(trace: PassTrace) -> str:
    return (f"{trace.kernel} on {trace.arch}: {len(trace.steps)} pass steps, "
            f"{len(trace.changed_steps)} changed the IR (Triton {trace.triton_version})")


def saved_table(passes: dict, *, show_all: bool = False) -> Group:
    """A report's saved pass table (PassTrace.to_dict()), drawn as `passes` draws it."""
    return pipeline_table(PassTrace.from_dict(passes), show_all=show_all, remarks=False)


def divergence_view(div, from_start: bool, label_a: str, label_b: str) -> Group:
    """`diff --passes`: the first pass that treats A and B differently, and how."""
    head = Text()
    if div is None:
        head.append("No pass treats A and B differently beyond the config's own numbers", style="bold")
        head.append(" (shapes, constants, layout parameters, repeated per-element code).")
        if from_start:
            head.append("\nThe first dumps already differ: the config changes the code Triton builds from the source.",
                        style="dim")
        return Group(head)
    where = (f"step {div.step_a} on A, {div.step_b} on B" if div.step_a and div.step_b and div.step_a != div.step_b
             else f"step {div.step_a or div.step_b}")
    head.append("A and B first diverge at ", style="bold")
    head.append(f"{where}, {div.name}", style="bold magenta")
    head.append(f" ({STAGE_TITLES.get(div.stage, div.stage)})", style="dim")
    if div.step_a is None or div.step_b is None:
        head.append(f"\nonly {'B' if div.step_a is None else 'A'} runs this pass (and it changes the IR)")
    head.append(f"\nA = {label_a}\nB = {label_b}", style="dim")
    if from_start:
        head.append("\n(the first dumps already differ: the config changes the code Triton builds from the source)",
                    style="dim")
    parts: list = [head]
    for side, only, ops, said in (("A", div.only_a, div.ops_a, div.remarks_a),
                                  ("B", div.only_b, div.ops_b, div.remarks_b)):
        body = Text()
        for remark in said:
            body.append(f"Triton ({STAGE_TITLES.get(div.stage, div.stage)} passes) {remark}\n", style="yellow")
        if ops:
            body.append("ops: " + ", ".join(f"{n:+d} {k}" for k, n in ops.items()) + "\n", style="cyan")
        for line in only:
            body.append(line + "\n", style="green" if line.startswith("+") else "red")
        if not only:
            body.append("(nothing B does not do too)" if side == "A" else "(nothing A does not do too)", style="dim")
        body.rstrip()
        parts.append(Panel(body, title=f"what {div.name} does to {side} only", title_align="left",
                           border_style="dim"))
    parts.append(Text("The rule: numbers, names and layout parameters are set aside; the first pass whose "
                      "distinct added/removed lines differ is named (`tritonscope diff --help`).", style="dim"))
    return Group(*parts)
