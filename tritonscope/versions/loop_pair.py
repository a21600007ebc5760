"""Two compiles' main loops found and aligned row by row: the data of `diff --loop` (loop_render.py draws it).

Made for two Triton versions (what an upgrade did to the loop a kernel
spends its time in), it takes any two compiles.  Per side:

- the stage: the first of SASS, AMDGCN, PTX, LLVM IR that *both* sides have
  (the machine code where there is one; an LLVM IR loop has no instruction
  classes, so nothing in it is marked, and the view says so);
- the loop: the main loop of the loop reader (tritonscope/language/loops.py:
  a label and a later branch back to it; of the innermost loops, the one
  with the most tensor-core instructions, else the most loads from global
  memory, else the most instructions; the versions report and the cost
  model pick theirs with the same function);
- every instruction, classified by the stage's dialect (tritonscope/language/dialects)
  and marked where it matters for speed: `MMA` (mma, wgmma, v_mfma, tcgen05
  mma), `WAIT` (a wait for outstanding global memory operations:
  `s_waitcnt vmcnt(N)`, `cp.async.wait_group N`, `wgmma.wait_group N`,
  SASS `DEPBAR`/`WARPGROUP.DEPBAR`, an mbarrier wait), `DRAIN` (such a wait
  for zero outstanding: the loop stalls until every load in flight has
  landed), `BAR` (a block-wide barrier), `LOAD` (a global or buffer load, an
  async copy or a TMA copy into shared memory/LDS).

The two bodies are aligned marks first, then opcodes (`align`), so a wait,
an MMA or any instruction both loops have sits on one row and one only one
side has faces a blank.  Nothing is guessed: an instruction the dialect does
not know is shown as written and left unmarked.
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, field
from typing import Any

MARKS = ("MMA", "DRAIN", "WAIT", "BAR", "LOAD")


@dataclass
class LoopLine:
    text: str                 # the instruction as written (address, comment and trailing ';' dropped)
    op: str                   # its opcode, what the two sides are aligned on
    mark: str | None = None   # one of MARKS, or None
    detail: str | None = None  # what the mark means here ("vmcnt(0)", "mfma 16x16x16 f16")


@dataclass
class SideLoop:
    stage: str
    label: str                # the loop's label as written (".LBB0_2", "$L__BB0_1", ".L_x_1")
    first_line: int           # 1-based line of the label in the stage
    lines: list[LoopLine]
    loops: int                # innermost loops the stage has (the view shows one)

    def counts(self) -> dict[str, int]:
        out = {"instructions": len(self.lines)}
        for m in MARKS:
            out[m.lower()] = sum(1 for ln in self.lines if ln.mark == m)
        return out


@dataclass
class LoopRow:
    a: LoopLine | None
    b: LoopLine | None

    @property
    def same(self) -> bool:
        return self.a is not None and self.b is not None and self.a.op == self.b.op


@dataclass
class LoopPair:
    """Both sides' loops and their aligned rows; `why` says what is missing (no loop, no common stage)."""

    stage: str | None
    a: SideLoop | None
    b: SideLoop | None
    rows: list[LoopRow] = field(default_factory=list)
    why: str | None = None
    marked: bool = True       # False: the stage has no instruction classes (LLVM IR): nothing could be marked

    def to_dict(self) -> dict[str, Any]:
        def side(s: SideLoop | None):
            if s is None:
                return None
            return {"stage": s.stage, "label": s.label, "first_line": s.first_line, "loops": s.loops,
                    "counts": s.counts(), "lines": [asdict(ln) for ln in s.lines]}

        rows = []
        ia = ib = 0
        for r in self.rows:
            rows.append([ia if r.a is not None else None, ib if r.b is not None else None])
            ia += r.a is not None
            ib += r.b is not None
        return {"stage": self.stage, "why": self.why, "marked": self.marked, "a": side(self.a), "b": side(self.b),
                "rows": rows}


# --------------------------------------------------------------------------
# Finding the loop
# --------------------------------------------------------------------------


def _mark(ins, line: str, d) -> tuple[str | None, str | None]:
    """The mark of one classified instruction of dialect `d`, and what it says (see the module doc)."""
    from tritonscope.language.loops import GLOBAL_LOADS, TENSOR_CORE

    cls = ins.cls
    if cls in TENSOR_CORE:
        return "MMA", ins.name
    wait = d.memory_wait(ins, line) if d.memory_wait is not None else None
    if wait is not None:
        return ("DRAIN" if wait else "WAIT"), (d.wait_detail(ins, line) if d.wait_detail is not None else None)
    if cls == "barrier":
        return "BAR", None
    if cls in GLOBAL_LOADS:
        return "LOAD", ins.name
    return None, None


def side_of(stages: dict[str, str], stage: str) -> tuple[SideLoop | None, int]:
    """One stage's main loop as the view shows it (None when it has none), and how many innermost loops it has:
    the loop reader's (tritonscope/language/loops.py) innermost loops and main_loop, each instruction marked."""
    from tritonscope.language.dialects import dialect
    from tritonscope.language.loops import innermost_loops, main_loop

    lines = (stages.get(stage) or "").splitlines()
    d = dialect(stage)
    inner = innermost_loops(stage, lines)
    lp = main_loop(inner)
    if lp is None:
        return None, len(inner)
    body = []
    for i, ins in lp.body:
        mark, detail = _mark(ins, lines[i], d)
        body.append(LoopLine(d.instruction_text(lines[i]), ins.op, mark, detail))
    return SideLoop(stage, lp.label, lp.first + 1, body, len(inner)), len(inner)


def loop_pair(stages_a: dict[str, str], stages_b: dict[str, str]) -> LoopPair:
    """The two sides' main innermost loops in the best stage both have, aligned row by row."""
    from tritonscope.language.dialects import dialect
    from tritonscope.language.loops import loop_stages

    best_first = loop_stages()
    common = [s for s in best_first if stages_a.get(s) and stages_b.get(s)]
    if not common:
        have = lambda st: ", ".join(s for s in best_first if st.get(s)) or "none"
        return LoopPair(None, None, None, why=f"no stage both sides have to read a loop from (A: {have(stages_a)}; "
                                             f"B: {have(stages_b)})")
    # the best common stage where at least one side has a loop (SASS without a loop but PTX with one: the PTX's)
    stage = common[0]
    for s in common:
        la, _ = side_of(stages_a, s)
        lb, _ = side_of(stages_b, s)
        if la is not None or lb is not None:
            stage = s
            break
    else:
        return LoopPair(stage, None, None, why="neither side has a loop")
    pair = LoopPair(stage, la, lb, marked=bool(dialect(stage).classes))
    missing = [w for w, s in (("A", la), ("B", lb)) if s is None]
    if missing:
        pair.why = f"side {missing[0]} has no loop in its {stage}"
    pair.rows = align(la.lines if la else [], lb.lines if lb else [])
    return pair


def align(a: list[LoopLine], b: list[LoopLine]) -> list[LoopRow]:
    """Rows of (A line, B line), in two steps so that what is marked lines up first:

    1. the marked lines of each side are matched on their marks (MMA, WAIT, DRAIN ...) as anchors (difflib's
       longest matching blocks): the n-th wait both loops share sits on one row, whatever its operands or width;
    2. between two anchors, the lines are aligned on their opcodes the same way; a replaced stretch pairs its
       lines in order, the longer side's remainder facing blanks; one only one side has faces a blank.
    """
    ma = [i for i, x in enumerate(a) if x.mark]
    mb = [j for j, x in enumerate(b) if x.mark]
    sm = difflib.SequenceMatcher(None, [a[i].mark for i in ma], [b[j].mark for j in mb], autojunk=False)
    anchors = [(ma[blk.a + k], mb[blk.b + k]) for blk in sm.get_matching_blocks() for k in range(blk.size)]
    rows: list[LoopRow] = []
    pa = pb = 0
    for ia, ib in anchors + [(len(a), len(b))]:
        rows += _align_ops(a[pa:ia], b[pb:ib])
        if ia < len(a):
            rows.append(LoopRow(a[ia], b[ib]))
        pa, pb = ia + 1, ib + 1
    return rows


def _align_ops(a: list[LoopLine], b: list[LoopLine]) -> list[LoopRow]:
    sm = difflib.SequenceMatcher(None, [x.op for x in a], [x.op for x in b], autojunk=False)
    rows: list[LoopRow] = []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            rows += [LoopRow(a[i1 + k], b[j1 + k]) for k in range(i2 - i1)]
        elif tag == "replace":
            n = max(i2 - i1, j2 - j1)
            rows += [LoopRow(a[i1 + k] if i1 + k < i2 else None, b[j1 + k] if j1 + k < j2 else None) for k in range(n)]
        elif tag == "delete":
            rows += [LoopRow(x, None) for x in a[i1:i2]]
        else:
            rows += [LoopRow(None, x) for x in b[j1:j2]]
    return rows


@dataclass
class Fold:
    """Rows a view leaves out: a run of rows neither side marks (A's and B's instructions in it)."""
    rows: int
    a: int
    b: int


def shown_rows(rows: list[LoopRow], context: int = 2) -> list[LoopRow | Fold]:
    """The rows a view prints: every marked row and `context` rows on each side of it; a longer run of rows
    neither side marks is folded to a Fold (the loop view is about where waits, loads and MMAs sit: the
    full text is the stage diff's)."""
    out: list[LoopRow | Fold] = []
    run: list[LoopRow] = []

    def flush(at_start: bool, at_end: bool):
        keep_head = 0 if at_start else context
        keep_tail = 0 if at_end else context
        if len(run) > keep_head + keep_tail + 1:
            out.extend(run[:keep_head])
            mid = run[keep_head:len(run) - keep_tail]
            out.append(Fold(len(mid), sum(r.a is not None for r in mid), sum(r.b is not None for r in mid)))
            out.extend(run[len(run) - keep_tail:])
        else:
            out.extend(run)
        run.clear()

    first = True
    for r in rows:
        if (r.a is None or not r.a.mark) and (r.b is None or not r.b.mark):
            run.append(r)
        else:
            flush(first, False)
            first = False
            out.append(r)
    flush(first, True)
    return out


def loop_pair_of(artifact_a, artifact_b) -> LoopPair:
    return loop_pair(dict(artifact_a.stages), dict(artifact_b.stages))
