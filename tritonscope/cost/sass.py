"""SASS read for the cost model: instructions by its classes, and the loops they sit in.

The loops are the language's loop reader's (tritonscope/language/loops.py:
a label and a later branch back to it, one loop per label, padding left
out); the main loop is its `main_loop`, the one the `diff --loop` view and
the versions report show.  Each loop's body is counted here by the cost
model's class of each opcode (the `cost` field of the SASS vocabulary,
dialects/sass.OPCODES): the innermost loop of a kernel's main `scf.for` is
where its time goes, so the cost model counts instructions per loop body and
multiplies them by the trip counts the TTGIR and the launch give
(features.py).  Pure text work: no Triton, no tools.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tritonscope.language import loops as loop_reader
# The SASS words (instruction and register patterns, the opcode vocabulary) live in the dialect.
from tritonscope.language.dialects.sass import (
    ACCESS_WIDTH,
    COST_INSTR,
    LDG_REGISTERS,
    REGISTER,
    WIDTH_BYTES,
    cost_class,
)


@dataclass
class SassLoop:
    start: int                 # 0-based line index of its label (its body: the lines after it, up to `end`)
    end: int                   # line index of its backward branch
    counts: dict[str, int] = field(default_factory=dict)   # class -> instructions in the body
    depth: int = 0             # 0: outermost
    local_bytes: int = 0       # bytes one thread's LDL/STL in the body move (spill traffic per iteration)
    ldg_bytes: int = 0         # bytes one thread's LDG in the body load (against the TTGIR's: ptxas unrolling)
    ldgs: int = 0              # LDG instructions in the body
    waits: int = 0             # load-use waits in one pass of the body (see load_waits)
    tail_ldgs: int = 0         # LDGs of the straight code after the loop, up to the next loop (ptxas's remainder)
    tail_waits: int = 0        # load-use waits of that code
    tally: loop_reader.LoopTally | None = None   # what the loop reader's main_loop weighs (its counts)
    innermost: bool = False    # no loop inside it (the loop reader's innermost)

    @property
    def instructions(self) -> int:
        return sum(self.counts.values())


@dataclass
class SassProgram:
    counts: dict[str, int]                 # class -> instructions in the whole kernel (static)
    loops: list[SassLoop]                  # outermost first
    mma_shapes: list[str]                  # "64x256x16" of each HGMMA, "16816" of HMMA ...
    local_bytes: int = 0                   # bytes one thread's LDL/STL move, the whole kernel (static)
    ldgs: int = 0                          # LDG instructions, the whole kernel (static)
    waits: int = 0                         # load-use waits of the code outside every loop

    def innermost(self) -> list[SassLoop]:
        """Loops that contain no other loop (the loop reader's innermost)."""
        return [lp for lp in self.loops if lp.innermost]

    def main(self) -> SassLoop | None:
        """The main loop: the loop reader's pick among the innermost loops (loops.main_loop, on their tallies)."""
        return loop_reader.main_loop(self.innermost())


def _access_bytes(cls: str, modifiers: str) -> int:
    """Bytes one thread moves with a local load/store (spill traffic) or a global load; 0 for other classes."""
    if cls not in ("ldl", "stl", "ldg"):
        return 0
    m = ACCESS_WIDTH.search(modifiers)
    return WIDTH_BYTES[m.group(1)] if m else 4


def _registers(operands: str) -> set[int]:
    """The general registers an instruction names (a `.64` pair names both)."""
    out: set[int] = set()
    for m in REGISTER.finditer(operands):
        r = int(m.group(1))
        out.add(r)
        if m.group(2):
            out.add(r + 1)
    return out


def load_waits(instrs: list[tuple[str, str, str]]) -> tuple[int, int]:
    """(LDGs, load-use waits) of straight-line code: [(opcode with modifiers, class, operands)] in order.

    A thread keeps issuing past a global load until an instruction names a register the load has not yet
    written (its scoreboard wait); that wait lasts a memory latency, and every load issued before it was in
    flight together.  So the waits, not the loads, count the latencies a pass costs: ptxas hoists all of a
    loop's loads above their first use when registers allow (one wait), or interleaves load and use (one wait
    per load, a quarter of the bytes in flight for four loads).  Loads still pending at the end are consumed
    after it: one more wait."""
    pending: set[int] = set()
    ldgs = waits = 0
    for full, cls, operands in instrs:
        regs = _registers(operands)
        if pending and regs & pending:
            waits += 1
            pending.clear()
        if cls == "ldg":
            ldgs += 1
            first = REGISTER.search(operands)
            if first:
                width = LDG_REGISTERS.get(full.rsplit(".", 1)[-1], 1)
                pending.update(range(int(first.group(1)), int(first.group(1)) + width))
    if pending:
        waits += 1
    return ldgs, waits


def read_sass(text: str) -> SassProgram:
    lines = text.splitlines()
    instrs: list[tuple[int, str, str]] = []    # (line index, class, opcode with modifiers): the work, in order
    operands: dict[int, str] = {}              # line index -> operand text
    widths: dict[int, int] = {}                # line index -> bytes of a local load/store
    ldg: dict[int, int] = {}                   # line index -> bytes of a global load
    for i, line in enumerate(lines):
        m = COST_INSTR.search(line)
        if not m:
            continue
        cls = cost_class(m.group(2))
        if cls is None:
            continue   # no work (NOP, EXIT, BRA ...)
        instrs.append((i, cls, m.group(2) + m.group(3)))
        operands[i] = m.group(4)
        if cls in ("ldl", "stl"):
            widths[i] = _access_bytes(cls, m.group(3))
        elif cls == "ldg":
            ldg[i] = _access_bytes(cls, m.group(3))
    counts: dict[str, int] = {}
    shapes: list[str] = []
    for _, cls, full in instrs:
        counts[cls] = counts.get(cls, 0) + 1
        if cls == "mma":
            shapes.append(full.split(".", 2)[1] if "." in full else full)
    loops = []
    found = loop_reader.find_loops("sass", lines)
    inner = {lp.first for lp in loop_reader.innermost(found)}
    for lp in found:
        body: dict[str, int] = {}
        for i, cls, _ in instrs:
            if lp.first < i <= lp.last:
                body[cls] = body.get(cls, 0) + 1
        loops.append(SassLoop(lp.first, lp.last, body, depth=lp.depth,
                              local_bytes=sum(b for i, b in widths.items() if lp.first < i <= lp.last),
                              ldg_bytes=sum(b for i, b in ldg.items() if lp.first < i <= lp.last),
                              tally=lp.tally, innermost=lp.first in inner))

    def code(lo: int, hi: int) -> list[tuple[str, str, str]]:
        return [(full, cls, operands[i]) for i, cls, full in instrs if lo < i <= hi]

    for lp in loops:
        lp.ldgs, lp.waits = load_waits(code(lp.start, lp.end))
    starts = sorted(lp.start for lp in loops)
    for lp in loops:
        nxt = next((s for s in starts if s > lp.end), None)
        lp.tail_ldgs, lp.tail_waits = load_waits(code(lp.end, nxt if nxt is not None else len(lines)))
    straight = [(full, cls, operands[i]) for i, cls, full in instrs
                if not any(lp.start < i <= lp.end for lp in loops)]
    ldgs, waits = load_waits(straight)
    return SassProgram(counts, loops, shapes, sum(widths.values()), sum(1 for _, c, _ in instrs if c == "ldg"),
                       waits)
