"""The one loop reader: the loops of an assembly or IR stage (SASS, AMDGCN, PTX, LLVM IR), and the main one.

A loop is a label and a later branch back to it (the dialect's `loop_label`,
`loop_branch` and `loop_targets` say how its lines read).  Rules, the same for
every stage and every reader (the cost model, `diff --loop`, `versions`,
and through the cost model `explain`):

- one loop per label: of several branches back to one label, the last
  (widest) one closes it; an earlier one is a `continue`, not a loop;
- a loop whose body holds no work (its closing branch left out) is padding,
  not a loop: nvdisasm ends SASS with `.L_x_3: BRA \\`(.L_x_3)` after EXIT;
  what is no work is the dialect's `not_work` (SASS: NOP, EXIT, BRA, RET, BPT);
- the innermost loops are those with no other loop inside;
- the main loop (`main_loop`) is the innermost loop with the most
  tensor-core instructions, else the most loads from global memory (global
  loads, async copies, TMA copies), else the most instructions of work; of
  equal ones, the first.  The counts come from the dialect's one vocabulary
  (`classify`): `tally`.

Pure text work: no Triton, no tools.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Protocol, Sequence, TypeVar

from tritonscope.language.dialects import Instr, dialect, every_stage_key

# The classes the main loop's pick counts (dialects.CLASSES words)
TENSOR_CORE = ("mma", "wgmma", "tcgen05 mma")
GLOBAL_LOADS = ("global load", "async copy", "tma copy")


class LoopTally(NamedTuple):
    """What the main loop's pick weighs, in this order (larger first)."""

    tensor: int    # tensor-core instructions (TENSOR_CORE)
    loads: int     # loads from global memory (GLOBAL_LOADS)
    work: int      # instructions that do work (not the dialect's not_work)


class _HasTally(Protocol):
    tally: LoopTally


_Tallied = TypeVar("_Tallied", bound=_HasTally)


@dataclass(frozen=True)
class Loop:
    """One loop of a stage: where it is in the stage's lines, and its body's instructions."""

    stage: str
    label: str                               # as written (".LBB0_2", "$L__BB0_1", ".L_x_1")
    first: int                               # 0-based index of the label's line
    last: int                                # 0-based index of its closing branch
    body: tuple[tuple[int, Instr], ...]      # (line index, Instr) of each instruction after the label, the
                                             # closing branch included (Instr.op set)
    tally: LoopTally
    depth: int = 0                           # loops around it (0: outermost)

    def contains(self, other: "Loop") -> bool:
        return other is not self and self.first <= other.first and other.last <= self.last


def loop_stages() -> tuple[str, ...]:
    """The stages whose dialect knows its loops, the lowest first (SASS, AMDGCN, PTX, LLVM IR: reversed pipeline
    order): where a loop view looks for a loop, the machine's own instructions before any it is compiled from."""
    return tuple(k for k in reversed(every_stage_key()) if knows_loops(k))


def knows_loops(key: str) -> bool:
    d = dialect(key)
    return d.loop_label is not None and d.loop_branch is not None


def _spans(key: str, lines: Sequence[str]) -> list[tuple[int, int]]:
    """(label, branch) indexes of each label with a later branch back to it, the last such branch (of several
    labels one branch names, the first)."""
    if not knows_loops(key):
        return []
    d = dialect(key)
    labels: dict[str, int] = {}
    closing: dict[int, int] = {}
    for i, line in enumerate(lines):
        m = d.loop_label.match(line)
        if m:
            labels[m.group(1)] = i
            continue
        m = d.loop_branch.match(line)
        if m:
            targets = d.loop_targets.findall(line) if d.loop_targets is not None else [m.group(1)]
            back = [labels[t] for t in targets if t in labels]
            if back:
                closing[min(back)] = i
    return sorted(closing.items())


def is_work(key: str, ins: Instr) -> bool:
    """Whether an instruction of stage `key` does work (not padding, not the end of the program, not a branch
    where the dialect says so: its `not_work`)."""
    return bool(ins.op) and ins.op.split(".", 1)[0] not in dialect(key).not_work


def tally(key: str, body: Sequence[tuple[int, Instr]]) -> LoopTally:
    """The main loop's pick's counts of a body (see the module doc)."""
    tensor = sum(1 for _, ins in body if ins.cls in TENSOR_CORE)
    loads = sum(1 for _, ins in body if ins.cls in GLOBAL_LOADS)
    return LoopTally(tensor, loads, sum(1 for _, ins in body if is_work(key, ins)))


def find_loops(key: str, text_or_lines: str | Sequence[str]) -> list[Loop]:
    """Every loop of a stage (padding left out), in the order of their labels; [] for a stage whose dialect
    knows no loop syntax."""
    lines = text_or_lines.splitlines() if isinstance(text_or_lines, str) else text_or_lines
    classify = dialect(key).classify
    out: list[Loop] = []
    for first, last in _spans(key, lines):
        body = []
        for i in range(first + 1, last + 1):
            ins = classify(lines[i])
            if ins is not None and ins.op:
                body.append((i, ins))
        if not any(is_work(key, ins) for i, ins in body if i != last):
            continue   # `.L_x_3: BRA \`(.L_x_3)` after EXIT: padding, not a loop
        label = lines[first].split(":")[0].strip()
        out.append(Loop(key, label, first, last, tuple(body), tally(key, body)))
    return [Loop(lp.stage, lp.label, lp.first, lp.last, lp.body, lp.tally, sum(1 for o in out if o.contains(lp)))
            for lp in out]


def innermost(loops: Sequence[Loop]) -> list[Loop]:
    """The loops with no other loop inside: where a kernel spends its iterations."""
    return [lp for lp in loops if not any(lp.contains(o) for o in loops)]


def innermost_loops(key: str, text_or_lines: str | Sequence[str]) -> list[Loop]:
    return innermost(find_loops(key, text_or_lines))


def main_loop(loops: Sequence[_Tallied]) -> _Tallied | None:
    """The main loop of these (innermost) loops, by their `tally`: the most tensor-core instructions, else loads,
    else work; of equal ones the first.  None without loops.  The cost model (on its SASS loops, which carry the
    reader's tally), `diff --loop` and `versions` all pick with it."""
    best: _Tallied | None = None
    for lp in loops:
        if best is None or lp.tally > best.tally:
            best = lp
    return best
