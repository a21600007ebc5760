"""AMDGCN read for the cost model: the same program record the SASS read gives (cost/sass.py), for AMD targets.

The loops are the language's loop reader's (language/loops.py: find_loops on
the "amdgcn" stage, one loop per label, the main loop its `main_loop`), so
the cost model, `diff --loop` and `versions` see the same main loop on AMD as
on NVIDIA.  Each instruction is counted by the cost model's class of its
opcode (dialects/amdgcn.cost_class: the SASS classes, and `salu` for the
scalar unit).  Load-use waits are read from the counter waits: AMD memory
instructions return out of order of use, and `s_waitcnt vmcnt(N)` (gfx12:
`s_wait_loadcnt`) is where a wave stops until at most N vector-memory
operations are outstanding; a wait that retires a global load is one memory
latency (load_waits), as a SASS scoreboard wait is.  Counts are per lane /
per wavefront instruction (64 lanes on CDNA).  Pure text work: no Triton, no
tools.
"""

from __future__ import annotations

from tritonscope.cost.sass import SassLoop, SassProgram
from tritonscope.language import loops as loop_reader
from tritonscope.language.dialects.amdgcn import classify, cost_class, memory_wait

# Classes that go through the vector-memory counter (vmcnt on CDNA: loads, stores, scratch, vector atomics)
_VMEM = ("ldg", "ldgsts", "stg", "ldl", "stl")


def _counter(ins) -> int | None:
    """N of a wait for vector memory (vmcnt(N), loadcnt N); None: not such a wait."""
    if memory_wait(ins, "") is None:
        return None
    counters = ins.facts.get("counters") or {}
    for name in ("vmcnt", "loadcnt"):
        if counters.get(name) is not None:
            return int(counters[name])
    return None


def load_waits(instrs: list[tuple[object, str | None]]) -> tuple[int, int]:
    """(global loads, load-use waits) of straight-line code: [(Instr, cost class)] in order.

    Vector-memory operations retire in order of issue: `s_waitcnt vmcnt(N)` waits for all but the last N.  A
    wait that retires a global load issued since the last such wait waits a memory latency; every load issued
    before it was in flight together, so the later waits for those (LLVM waits for a burst of loads one
    vmcnt step at a time) cost no more latency, as after a SASS scoreboard wait (cost/sass.load_waits).  Loads
    still outstanding at the end are waited for after it: one more wait."""
    pending: list[bool] = []       # outstanding vector-memory ops, oldest first: True for a load not yet waited on
    ldgs = waits = 0
    for ins, cls in instrs:
        n = _counter(ins)
        if n is not None:
            if len(pending) > n:
                retired, pending = pending[:len(pending) - n], pending[len(pending) - n:]
                if any(retired):
                    waits += 1
                    pending = [False] * len(pending)   # in flight during this wait: no latency of their own
            continue
        if cls in _VMEM or (cls == "atom" and not ins.op.startswith("ds_")):
            pending.append(cls == "ldg")
            ldgs += cls == "ldg"
    if any(pending):
        waits += 1
    return ldgs, waits


def _kernel_lines(lines: list[str]) -> range:
    """Indexes of the kernel's code: up to its `.Lfunc_end` label (the DWARF and metadata after it are data)."""
    end = next((i for i, ln in enumerate(lines) if ln.startswith(".Lfunc_end")), len(lines))
    return range(end)


def read_amdgcn(text: str) -> SassProgram:
    """The kernel's instructions by class, its loops with their counts, waits and per-lane bytes (SassProgram)."""
    lines = text.splitlines()
    instrs: list[tuple[int, str, object]] = []   # (line index, class, Instr): the work, in order
    waits_at: list[tuple[int, object]] = []      # (line index, Instr) of every counted op and counter wait
    for i in _kernel_lines(lines):
        ins = classify(lines[i])
        if ins is None or not ins.op:
            continue
        cls = cost_class(ins.op, ins)
        if cls is not None:
            instrs.append((i, cls, ins))
            waits_at.append((i, ins))
        elif ins.cls == "async wait":
            waits_at.append((i, ins))
    cls_at = {i: cls for i, cls, _ in instrs}
    counts: dict[str, int] = {}
    shapes: list[str] = []
    for _, cls, ins in instrs:
        counts[cls] = counts.get(cls, 0) + 1
        if cls == "mma":
            shapes.append(f"{ins.facts.get('shape')} {ins.facts.get('inputs')}")

    def lane_bytes(lo: int, hi: int, classes: tuple[str, ...]) -> int:
        return sum(int(ins.facts.get("bytes") or 4) for i, cls, ins in instrs if lo < i <= hi and cls in classes)

    def code(lo: int, hi: int) -> list[tuple[object, str | None]]:
        return [(ins, cls_at.get(i)) for i, ins in waits_at if lo < i <= hi]

    found = loop_reader.find_loops("amdgcn", lines)
    inner = {lp.first for lp in loop_reader.innermost(found)}
    loops = []
    for lp in found:
        body: dict[str, int] = {}
        for i, cls, _ in instrs:
            if lp.first < i <= lp.last:
                body[cls] = body.get(cls, 0) + 1
        loops.append(SassLoop(lp.first, lp.last, body, depth=lp.depth,
                              local_bytes=lane_bytes(lp.first, lp.last, ("ldl", "stl")),
                              ldg_bytes=lane_bytes(lp.first, lp.last, ("ldg",)),
                              tally=lp.tally, innermost=lp.first in inner))
    for lp in loops:
        lp.ldgs, lp.waits = load_waits(code(lp.start, lp.end))
    starts = sorted(lp.start for lp in loops)
    for lp in loops:
        nxt = next((s for s in starts if s > lp.end), None)
        lp.tail_ldgs, lp.tail_waits = load_waits(code(lp.end, nxt if nxt is not None else len(lines)))
    straight = [(ins, cls_at.get(i)) for i, ins in waits_at if not any(lp.start < i <= lp.end for lp in loops)]
    _, waits = load_waits(straight)
    return SassProgram(counts, loops, shapes, lane_bytes(-1, len(lines), ("ldl", "stl")), counts.get("ldg", 0),
                       waits)
