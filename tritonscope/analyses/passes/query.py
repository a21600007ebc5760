"""Questions about a trace: --find, --line, and the diff one pass made."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tritonscope.triton_api.remarks import Remark
from tritonscope.analyses.passes.model import FindEvent, LineEvent, PassTrace, Step, TextRef
from tritonscope.language.mlir_syntax import LOC, LOC_DEF, OP_NAME

# The stages whose pass managers are dumped, in pipeline order.

# --------------------------------------------------------------------------
# Queries: --find and --line
# --------------------------------------------------------------------------



def find(trace: PassTrace, query: str) -> list[FindEvent]:
    """Steps at which `query` appears, disappears or changes in count.

    An op name ("ttg.local_alloc") counts ops of that kind; "/regex/"
    counts loc-free lines matching the regex; any other text counts
    loc-free lines containing it ("#mma", "cp.async").
    """
    query = check_query(query)
    if OP_NAME.match(query) and any(query in s.ops for s in trace.summaries.values()):
        counts = {ref: s.ops.get(query, 0) for ref, s in trace.summaries.items()}
    else:
        if len(query) > 2 and query.startswith("/") and query.endswith("/"):
            match = re.compile(query[1:-1]).search
        else:
            match = lambda line: query in line  # noqa: E731
        counts = {ref: _count_lines(trace, ref, match) for ref in trace.summaries}
    events = []
    for step in trace.steps:
        if step.after is None:
            continue
        b, a = counts.get(step.before, 0), counts.get(step.after, 0)
        if b == a:
            continue
        kind = "appears" if b == 0 else "removed" if a == 0 else "changed"
        events.append(FindEvent(step.index, step.name, step.stage, kind, b, a))
    return events


def _count_lines(trace: PassTrace, ref: TextRef, match) -> int:
    n = 0
    with open(ref.path, "rb") as f:
        f.seek(ref.start)
        left = ref.end - ref.start
        for raw in f:
            if left <= 0:
                break
            left -= len(raw)
            line = raw.decode(errors="replace")
            if line.startswith("#loc"):
                continue
            if "loc(" in line:
                line = LOC.sub("", line)
            if match(line):
                n += 1
    return n


def check_query(query: str) -> str:
    """A --find query, stripped; UsageError for an empty one or a bad /regex/ (checked before the compile)."""
    from tritonscope.core.errors import UsageError

    query = query.strip()
    if not query:
        raise UsageError("--find needs an op name or some text.", hint="e.g. --find ttg.local_alloc or --find '#mma'.")
    if len(query) > 2 and query.startswith("/") and query.endswith("/"):
        try:
            re.compile(query[1:-1])
        except re.error as e:
            raise UsageError(f"Bad regular expression {query}: {e}.") from e
    return query


def line_history(trace: PassTrace, line: int) -> list[LineEvent]:
    """The steps that changed what Python line `line` became (ops by kind)."""
    events = []
    first = True
    for step in trace.steps:
        before = trace.summary_of(step.before)
        after = trace.summary_of(step.after)
        if before is None:
            continue
        ops_b = before.line_ops.get(line, Counter())
        if first:
            first = False
            if ops_b:
                events.append(LineEvent(0, "(first dump)", step.stage, dict(sorted(ops_b.items())),
                                        dict(sorted(ops_b.items())), {}))
        if after is None or not step.changed:
            continue  # a pass that only moved locations is not a change to report
        ops_a = after.line_ops.get(line, Counter())
        if ops_a != ops_b:
            events.append(LineEvent(step.index, step.name, step.stage, dict(sorted(ops_a.items())),
                                    dict(sorted((ops_a - ops_b).items())), dict(sorted((ops_b - ops_a).items()))))
    return events


def numbered_lines(text: str) -> list[tuple[int, str]]:
    """(line number in `text`, line) for a dump's lines less locations, #loc definitions and blank lines."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("#loc") and LOC_DEF.match(line):
            continue
        if "loc(" in line:
            line = LOC.sub("", line).rstrip()
        if line.strip():
            out.append((number, line))
    return out


def normalized_text(text: str) -> list[str]:
    """A dump's lines less locations and #loc definitions (what --pass diffs)."""
    return [line for _, line in numbered_lines(text)]


def step_diff(trace: PassTrace, step: Step, *, context: int = 3) -> list[str]:
    """Unified diff lines of one step's before and after (locations removed)."""
    import difflib

    if step.after is None:
        return []
    a = normalized_text(trace.text(step.before))
    b = normalized_text(trace.text(step.after))
    return list(difflib.unified_diff(a, b, f"before {step.name}", f"after {step.name}", n=context, lineterm=""))


@dataclass(frozen=True)
class DiffBlock:
    """A run of lines the same on both sides, or replaced, removed or added (difflib's opcodes).

    Lines are (number, text): the number counts the loc-free lines, as the
    unified diff's `@@` headers do.
    """

    tag: str                                  # "equal" | "replace" | "delete" | "insert"
    before: tuple[tuple[int, str], ...]
    after: tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class Hunk:
    header: str                               # "@@ -42,8 +43,12 @@", as the unified diff writes it
    blocks: tuple[DiffBlock, ...]


@dataclass
class PassDiff:
    """One step's before and after, in hunks, with the notes the stage views would put on its lines.

    `before_notes` / `after_notes`: loc-free line number -> model.Note, from
    the MLIR dialect's annotator (encodings, ops) and the remarks this pass
    printed (on the ops with the remark's location).  Both the side-by-side
    and the unified view are drawn from this (render/passes_view.py).
    """

    step: int
    name: str
    stage: str
    hunks: list[Hunk]
    before_notes: dict[int, list[Any]] = field(default_factory=dict)
    after_notes: dict[int, list[Any]] = field(default_factory=dict)


def _unified_range(start: int, stop: int) -> str:
    # as difflib.unified_diff writes a range: "42,8", "43" (one line), "41,0" (none)
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start if not length else start + 1},{length}"


def pass_diff(trace: PassTrace, step: Step, *, context: int = 3, notes: bool = True) -> PassDiff:
    """One step's before/after as hunks (the same hunks as step_diff) with the lines' notes."""
    import difflib

    out = PassDiff(step.index, step.name, step.stage, [])
    if step.after is None:
        return out
    before_text, after_text = trace.text(step.before), trace.text(step.after)
    a, b = numbered_lines(before_text), numbered_lines(after_text)
    matcher = difflib.SequenceMatcher(None, [t for _, t in a], [t for _, t in b])
    for group in matcher.get_grouped_opcodes(context):
        header = (f"@@ -{_unified_range(group[0][1], group[-1][2])} "
                  f"+{_unified_range(group[0][3], group[-1][4])} @@")
        blocks = tuple(DiffBlock(tag, tuple((i + 1, a[i][1]) for i in range(i1, i2)),
                                 tuple((j + 1, b[j][1]) for j in range(j1, j2)))
                       for tag, i1, i2, j1, j2 in group)
        out.hunks.append(Hunk(header, blocks))
    if notes and out.hunks:
        mine = [r for r in trace.remarks if r.step == step.index]
        out.before_notes = _line_notes(before_text, a, step.stage, trace.file, mine)
        out.after_notes = _line_notes(after_text, b, step.stage, trace.file, mine)
    return out


def _line_notes(text: str, numbered: list[tuple[int, str]], stage: str, file: str,
                remarks: list[Remark]) -> dict[int, list[Any]]:
    """{loc-free line number: notes}: the stage views' annotations of one dumped module, and `remarks`."""
    from tritonscope.language.dialects import annotate_stage, is_mlir, mlir_stages, parse_stage
    from tritonscope.analyses.remarks import remark_notes

    # every dump is MLIR; the LLVM stage's passes work on MLIR's llvm dialect until translation
    key = stage if is_mlir(stage) else mlir_stages()[-1]
    parsed = parse_stage(key, text, file=file)
    found = annotate_stage(parsed)
    if remarks:
        found += remark_notes({key: parsed}, remarks, file)
    index = {raw: n for n, (raw, _) in enumerate(numbered, 1)}
    out: dict[int, list[Any]] = {}
    for note in found:
        n = index.get(note.line)
        if n is not None:
            out.setdefault(n, []).append(note)
    return out
