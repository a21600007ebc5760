"""Rich renderables for a PassTrace: the pipeline table, one pass's diff,
--find and --line answers, and Triton's remarks pinned to source lines.

Everything here reads the records of tritonscope.analyses.passes; nothing parses IR.
"""

from __future__ import annotations

import os
from typing import Iterable

from rich.console import Group
from rich.panel import Panel
from rich.style import Style
from rich.table import Table
from rich.text import Text

from tritonscope.analyses.passes import STAGE_TITLES, FindEvent, LineEvent, PassDiff, PassTrace, Step
from tritonscope.triton_api.remarks import Remark
from tritonscope.outputs.render.terminal import StageLines, note_row
from tritonscope.language.mlir_syntax import ENCODING_NAME
from tritonscope.core.sanitize import visible

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "remark": "cyan", "note": "dim"}
STAGE_STYLE = {"ttir": "blue", "ttgir": "magenta", "llir": "green"}


def _ms(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds * 1000:.1f}"


def _stage(stage: str) -> Text:
    return Text(STAGE_TITLES.get(stage, stage or "?"), style=STAGE_STYLE.get(stage, ""))




def _layout_kind(encoding: str) -> str:
    m = ENCODING_NAME.match(encoding)
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
        _said(facts, by_step.get(step.index, []))
        name = Text(step.name, style="" if step.changed else "dim")
        if step.changed is None:
            name.append(" (no after)", style="dim")
        table.add_row(str(step.index), name, _stage(step.stage),
                      str(step.lines_added) if step.changed else "",
                      str(step.lines_removed) if step.changed else "", facts, _ms(step.seconds))
    flush()
    for stage, unknown in _unplaced(trace.remarks):
        table.add_row(Text("?", style="dim"), Text(UNKNOWN_PASS, style="italic"), _stage(stage), "", "",
                      _said(Text(), unknown), "")
    parts = [table]
    if remarks and trace.remarks:
        parts.append(remarks_view(trace.remarks))
    return Group(*parts)


UNKNOWN_PASS = "pass unknown"


def _said(cell: Text, remarks: Iterable[Remark]) -> Text:
    """Append each remark and warning (not their notes) to a table cell, one a line."""
    for r in remarks:
        if r.severity != "note":
            cell.append(("\n" if cell else "") + f"{r.severity}: ", style=SEVERITY_STYLE.get(r.severity, ""))
            said = r.said if len(r.said) <= 90 else r.said[:89].rsplit(" ", 1)[0] + " …"
            cell.append(f"{r.where()} {said}")
    return cell


def _unplaced(remarks: Iterable[Remark]) -> list[tuple[str, list[Remark]]]:
    """The remarks tied to no pass (step 0), by stage in pipeline order: [(stage, remarks)]."""
    out: dict[str, list[Remark]] = {}
    for r in remarks:
        if not r.step and r.severity != "note":
            out.setdefault(r.stage, []).append(r)
    order = {s: i for i, s in enumerate(STAGE_TITLES)}
    return sorted(out.items(), key=lambda kv: order.get(kv[0], len(order)))


def pass_words(r: Remark) -> str:
    """Where a remark comes from: 'TTGIR step 19, TritonGPUAccelerateMatmul' or 'TTGIR, pass unknown'."""
    stage = STAGE_TITLES.get(r.stage, r.stage) if r.stage else ""
    if r.pass_name:
        return f"{stage} step {r.step}, {r.pass_name}".strip()
    return f"{stage}, {UNKNOWN_PASS}" if stage else UNKNOWN_PASS


def remarks_view(remarks: Iterable[Remark], *, source: dict[str, list[str]] | None = None) -> Panel:
    """Triton's remarks and warnings, each with its file:line:col and the line's text."""
    body = Text()
    cache: dict[str, list[str]] = dict(source or {})
    for r in remarks:
        if body:
            body.append("\n")
        body.append(f"{r.where()} ", style="bold")
        body.append(f"{r.severity}", style=SEVERITY_STYLE.get(r.severity, ""))
        body.append(f" ({pass_words(r)})", style="dim")
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


# The narrowest terminal that gets the side-by-side diff when --diff-style is auto.
SIDE_BY_SIDE_WIDTH = 160
DIFF_STYLES = ("auto", "side-by-side", "unified")


def diff_style_for(style: str, width: int) -> str:
    """'side-by-side' or 'unified': `style` as asked, or, for 'auto', by the width (>= SIDE_BY_SIDE_WIDTH)."""
    if style == "auto":
        return "side-by-side" if width >= SIDE_BY_SIDE_WIDTH else "unified"
    return style


def pass_view(trace: PassTrace, step: Step, diff: PassDiff, *, width: int = 100, style: str = "auto") -> Group:
    """One step: a header with what changed, the remarks the pass printed, then the annotated diff.

    The diff is side by side (before on the left, after on the right, aligned
    hunk by hunk) or unified, by `style` (diff_style_for).  Changed lines are
    marked (-/+) and coloured, wrapped to the column (a few rows at most) and
    followed by their notes as in the stage views; unchanged lines are clipped.
    """
    head = Text()
    head.append(f"step {step.index}: ", style="bold")
    head.append(visible(step.name), style="bold")
    head.append(f"  {visible(step.arg)}", style="dim")
    head.append(f"\n{STAGE_TITLES.get(step.stage, step.stage)}, on {visible(step.anchor)}")
    if step.seconds is not None:
        head.append(f", {_ms(step.seconds)} ms")
    facts = step_facts(step)
    if facts:
        head.append("\n")
        head.append_text(facts)
    for alias, enc in step.layouts_added.items():
        head.append(f"\n  {alias} = {visible(enc)}", style="magenta")
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
    elif diff_style_for(style, width) == "side-by-side":
        parts.append(side_by_side_diff(diff, width))
    else:
        parts.append(unified_diff(diff, width))
    return Group(*parts)


# How many rows a changed line may wrap to before it is cut (unchanged lines get one).
_WRAP_ROWS = 4
_RED, _GREEN = Style(color="red"), Style(color="green")
_RED_MARK, _GREEN_MARK = Style(color="red", bold=True), Style(color="green", bold=True)
_RED_EMPH, _GREEN_EMPH = Style(color="red", bold=True, reverse=True), Style(color="green", bold=True, reverse=True)
_DIM, _CYAN, _BOLD = Style(dim=True), Style(color="cyan"), Style(bold=True)

Spans = list  # [(text, Style | None)]: one line, in styled pieces


def side_by_side_diff(diff: PassDiff, width: int) -> StageLines:
    """Before on the left, after on the right; each hunk's blocks aligned row for row.

    Each side: line number, marker (- removed, + added, blank unchanged),
    text.  A replaced block pairs its lines in order (the changed characters
    of a pair emphasised); the shorter side is padded.  Notes follow the
    changed lines they belong to, in the same column.
    """
    room = max(40, width - 2)  # StageLines indents its rows by two
    digits = len(str(_last_number(diff)))
    gutter = digits + 3  # "123 - "
    text_w = max(8, (room - 3 - 2 * gutter) // 2)
    side_w = gutter + text_w
    rows: list[Spans] = [_pad([(" " * gutter + "before", _BOLD)], side_w) + [(" │ ", _DIM),
                                                                             (" " * gutter + "after", _BOLD)]]

    def cell(number: int | None, text: str, mark: str, style, emph, spans_of=None) -> list[Spans]:
        if number is None:
            return []
        spans = spans_of if spans_of is not None else [(visible(text), style)]
        cut = _cut(spans, text_w, _WRAP_ROWS if mark.strip() else 1)
        out = []
        for i, piece in enumerate(cut):
            lead = f"{number:>{digits}} " if i == 0 else " " * (digits + 1)
            out.append([(lead, _DIM), (f"{mark} " if i == 0 else "  ", emph)] + piece)
        return out

    def notes(by_line: dict, number: int | None) -> list[Spans]:
        found = by_line.get(number) if number is not None else None
        if not found:
            return []
        label, style = note_row(found)
        return [[(" " * gutter, None)] + _cut([(visible(label), style)], text_w, 1)[0]]

    for hunk in diff.hunks:
        rows.append([(hunk.header, _CYAN)])
        for block in hunk.blocks:
            pairs = _pairs(block)
            for (bn, bt), (an, at) in pairs:
                if block.tag == "equal":
                    left = cell(bn, bt, " ", None, None)
                    right = cell(an, at, " ", None, None)
                else:
                    spans_b, spans_a = _emphasis(bt, at) if bn is not None and an is not None else (None, None)
                    left = cell(bn, bt, "-", _RED, _RED_MARK, spans_b) + notes(diff.before_notes, bn)
                    right = cell(an, at, "+", _GREEN, _GREEN_MARK, spans_a) + notes(diff.after_notes, an)
                for i in range(max(len(left), len(right))):
                    lpart = left[i] if i < len(left) else []
                    rpart = right[i] if i < len(right) else []
                    rows.append(_pad(lpart, side_w) + ([(" │ ", _DIM)] + rpart if rpart else [(" │", _DIM)]))
    return StageLines(f"before -> after {visible(diff.name)} (side by side; --diff-style unified for one column)",
                      rows)


def unified_diff(diff: PassDiff, width: int) -> StageLines:
    """The unified diff (- removed, + added), with the changed lines' notes under them."""
    room = max(20, width - 2)
    text_w = room - 2
    name = visible(diff.name)
    rows: list[Spans] = [[(f"--- before {name}", _BOLD)], [(f"+++ after {name}", _BOLD)]]

    def add(mark: str, text: str, style, by_line: dict, number: int) -> None:
        cut = _cut([(visible(text), style)], text_w, _WRAP_ROWS if mark.strip() else 1)
        for i, piece in enumerate(cut):
            rows.append([(f"{mark} " if i == 0 else "  ", style)] + piece)
        found = by_line.get(number) if mark.strip() else None
        if found:
            label, note_style = note_row(found)
            rows.append([("  ", None)] + _cut([(visible(label), note_style)], text_w, 1)[0])

    for hunk in diff.hunks:
        rows.append([(hunk.header, _CYAN)])
        for block in hunk.blocks:
            if block.tag == "equal":
                for number, text in block.before:
                    add(" ", text, None, {}, number)
                continue
            for number, text in block.before:
                add("-", text, _RED, diff.before_notes, number)
            for number, text in block.after:
                add("+", text, _GREEN, diff.after_notes, number)
    return StageLines(f"before -> after {name} (unified; --diff-style side-by-side for two columns)", rows)


def _last_number(diff: PassDiff) -> int:
    last = 1
    for hunk in diff.hunks:
        for block in hunk.blocks:
            for number, _ in block.before[-1:] + block.after[-1:]:
                last = max(last, number)
    return last


def _pairs(block) -> list[tuple[tuple[int | None, str], tuple[int | None, str]]]:
    """A block's lines side by side: the i-th before line with the i-th after line, the rest alone."""
    none = (None, "")
    n = max(len(block.before), len(block.after))
    return [(block.before[i] if i < len(block.before) else none, block.after[i] if i < len(block.after) else none)
            for i in range(n)]


def _emphasis(before: str, after: str) -> tuple[Spans | None, Spans | None]:
    """Spans of a replaced pair with the characters that differ emphasised (None: too unlike to bother)."""
    import difflib

    before, after = visible(before), visible(after)
    if len(before) + len(after) > 2000:
        return None, None
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    if matcher.ratio() < 0.5:
        return None, None
    left: Spans = []
    right: Spans = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        same = tag == "equal"
        if i2 > i1:
            left.append((before[i1:i2], _RED if same else _RED_EMPH))
        if j2 > j1:
            right.append((after[j1:j2], _GREEN if same else _GREEN_EMPH))
    return left, right


def _cut(spans: Spans, width: int, max_rows: int) -> list[Spans]:
    """Styled spans cut into rows of at most `width` characters; past `max_rows`, the last row ends in '…'.

    Rows after the first hang four columns past the line's own indentation,
    so a wrapped line never reads as a line of its own.
    """
    spans = [(t.replace("\t", "    "), st) for t, st in spans]
    while spans and not spans[-1][0].strip():  # trailing blanks take room and say nothing
        spans.pop()
    if spans:
        spans[-1] = (spans[-1][0].rstrip(), spans[-1][1])
    whole = "".join(t for t, _ in spans)
    hang = min(len(whole) - len(whole.lstrip()) + 4, width // 2)
    rows: list[Spans] = []
    row: Spans = []
    used = 0
    for text, style in spans:
        while text:
            if used == width:
                rows.append(row)
                row, used = [(" " * hang, None)], hang
            take = text[: width - used]
            if max_rows > 1 and len(take) < len(text):  # wrapping: end the row at a blank near its end
                blank = take.rfind(" ")
                if blank >= max(1, (width - used) * 2 // 3):
                    take = take[: blank + 1]
                    row.append((take, style))
                    used = width
                    text = text[len(take):]
                    continue
            row.append((take, style))
            used += len(take)
            text = text[len(take):]
    rows.append(row)
    if len(rows) > max_rows:
        rows = rows[:max_rows]
        last, room = [], width - 1
        for text, style in rows[-1]:
            if room <= 0:
                break
            last.append((text[:room], style))
            room -= len(text[:room])
        rows[-1] = last + [("…", last[-1][1] if last else None)]
    return rows


def _pad(spans: Spans, width: int) -> Spans:
    used = sum(len(t) for t, _ in spans)
    return spans + [(" " * (width - used), None)] if used < width else spans


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

    by_step: dict[int, list[Remark]] = {}
    for r in trace.remarks:
        by_step.setdefault(r.step, []).append(r)
    for step in trace.steps:
        if not show_all and step.changed is False and step.index not in remarked:
            folded.append(step)
            continue
        flush()
        rows.append({"step": str(step.index), "pass": step.name, "stage": STAGE_TITLES.get(step.stage, step.stage),
                     "added": str(step.lines_added) if step.changed else "",
                     "removed": str(step.lines_removed) if step.changed else "",
                     "what": _said(step_facts(step), by_step.get(step.index, [])).plain.replace("\n", "; "),
                     "ms": _ms(step.seconds),
                     "folded": False})
    flush()
    for stage, unknown in _unplaced(trace.remarks):
        rows.append({"step": "?", "pass": UNKNOWN_PASS, "stage": STAGE_TITLES.get(stage, stage), "added": "",
                     "removed": "", "what": _said(Text(), unknown).plain.replace("\n", "; "), "ms": "",
                     "folded": False})
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
