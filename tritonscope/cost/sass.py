"""SASS read for the cost model: instructions by class, and the loops they sit in.

A loop in SASS is a backward branch: `BRA` to a label at a lower address.
Each loop's body is the instructions between its label and its branch; the
innermost loop of a kernel's main `scf.for` is where its time goes, so the
cost model counts instructions per loop body and multiplies them by the
trip counts the TTGIR and the launch give (features.py).  Pure text work:
no Triton, no tools.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The SASS words (instruction, label and branch patterns, the opcode -> class table) live in the dialect.
from tritonscope.language.dialects.sass import (
    ACCESS_WIDTH,
    BRANCH_TARGET,
    COST_CLASSES,
    COST_INSTR,
    LDG_REGISTERS,
    LOOP_LABEL,
    NOT_WORK,
    REGISTER,
    WIDTH_BYTES,
)


@dataclass
class SassLoop:
    start: int                 # address of its first instruction (the label)
    end: int                   # address of its backward branch
    counts: dict[str, int] = field(default_factory=dict)   # class -> instructions in the body
    depth: int = 0             # 0: outermost
    local_bytes: int = 0       # bytes one thread's LDL/STL in the body move (spill traffic per iteration)
    ldg_bytes: int = 0         # bytes one thread's LDG in the body load (against the TTGIR's: ptxas unrolling)
    ldgs: int = 0              # LDG instructions in the body
    waits: int = 0             # load-use waits in one pass of the body (see load_waits)
    tail_ldgs: int = 0         # LDGs of the straight code after the loop, up to the next loop (ptxas's remainder)
    tail_waits: int = 0        # load-use waits of that code

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
        """Loops that contain no other loop."""
        return [lp for lp in self.loops if not any(o is not lp and lp.start <= o.start and o.end <= lp.end
                                                   for o in self.loops)]


def _classify(op: str) -> str:
    return COST_CLASSES.get(op, "other")


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
    instrs: list[tuple[int, str, str]] = []    # (address, class, opcode with modifiers)
    operands: dict[int, str] = {}              # address -> operand text
    widths: dict[int, int] = {}                # address -> bytes of a local load/store
    ldg: dict[int, int] = {}                   # address -> bytes of a global load
    labels: dict[str, int] = {}
    pending: list[str] = []
    branches: list[tuple[int, str]] = []
    for line in text.splitlines():
        lab = LOOP_LABEL.match(line)
        if lab:
            pending.append(lab.group(1))
            continue
        m = COST_INSTR.search(line)
        if not m:
            continue
        addr = int(m.group(1), 16)
        op = m.group(2)
        for name in pending:
            labels[name] = addr
        pending = []
        if op == "BRA":
            t = BRANCH_TARGET.search(line)
            if t:
                branches.append((addr, t.group(1)))
        if op in NOT_WORK:
            continue
        cls = _classify(op)
        instrs.append((addr, cls, op + m.group(3)))
        operands[addr] = m.group(4)
        if cls in ("ldl", "stl"):
            widths[addr] = _access_bytes(cls, m.group(3))
        elif cls == "ldg":
            ldg[addr] = _access_bytes(cls, m.group(3))
    counts: dict[str, int] = {}
    shapes: list[str] = []
    for _, cls, full in instrs:
        counts[cls] = counts.get(cls, 0) + 1
        if cls == "mma":
            shapes.append(full.split(".", 2)[1] if "." in full else full)
    loops = []
    for addr, target in branches:
        start = labels.get(target)
        if start is None or start > addr:
            continue
        body: dict[str, int] = {}
        for a, cls, _ in instrs:
            if start <= a <= addr:
                body[cls] = body.get(cls, 0) + 1
        if body:  # `.L_x_3: BRA .L_x_3` after EXIT is padding, not a loop
            loops.append(SassLoop(start, addr, body,
                                  local_bytes=sum(b for a, b in widths.items() if start <= a <= addr),
                                  ldg_bytes=sum(b for a, b in ldg.items() if start <= a <= addr)))
    # one loop per label (several branches back to one label: the widest)
    by_start: dict[int, SassLoop] = {}
    for lp in loops:
        if lp.start not in by_start or lp.end > by_start[lp.start].end:
            by_start[lp.start] = lp
    loops = sorted(by_start.values(), key=lambda lp: (lp.start, -lp.end))
    for lp in loops:
        lp.depth = sum(1 for o in loops if o is not lp and o.start <= lp.start and lp.end <= o.end)

    def code(lo: int, hi: int) -> list[tuple[str, str, str]]:
        return [(full, cls, operands[a]) for a, cls, full in instrs if lo <= a <= hi]

    for lp in loops:
        lp.ldgs, lp.waits = load_waits(code(lp.start, lp.end))
    starts = sorted(lp.start for lp in loops)
    for lp in loops:
        nxt = next((s for s in starts if s > lp.end), None)
        lp.tail_ldgs, lp.tail_waits = load_waits(code(lp.end + 1, (nxt - 1) if nxt is not None else 1 << 62))
    straight = [(full, cls, operands[a]) for a, cls, full in instrs
                if not any(lp.start <= a <= lp.end for lp in loops)]
    ldgs, waits = load_waits(straight)
    return SassProgram(counts, loops, shapes, sum(widths.values()), sum(1 for _, c, _ in instrs if c == "ldg"),
                       waits)
