"""Work per program: FLOPs and bytes, loop-aware."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tritonscope.analyses.explain.scalars import Scalars, trip_counts
from tritonscope.analyses.explain.ttgir import DOTS, GLOBAL_LOADS, GLOBAL_STORES, Op, _prod, _tensor_bytes

# ==========================================================================
# Work per program: FLOPs and bytes, loop-aware
# ==========================================================================


def dot_flops(op: Op) -> int | None:
    """2*M*N*K of one dot op (A: MxK first, result MxN last)."""
    shaped = [t for t in op.types if t.static and len(t.shape) >= 2]
    if len(shaped) < 2:
        return None
    a, c = shaped[0], shaped[-1]
    m, k = a.shape[-2], a.shape[-1]
    n = c.shape[-1]
    batch = _prod(c.shape[:-2])
    return 2 * m * n * k * batch


def access_bytes(op: Op) -> int:
    """Bytes one global load/store op moves (its tensor of pointers, or its shared buffer for TMA)."""
    for t in op.types:
        if t.kind == "tensor" and "ptr" in (t.elem or ""):
            return _tensor_bytes(t)
    for t in op.types:
        if t.static:
            return _tensor_bytes(t)
    return 0


@dataclass(frozen=True)
class Work:
    flops: int | None                 # all programs together; None: a loop's bounds are unknown
    bytes_loaded: int | None
    bytes_stored: int | None
    programs: int
    flops_per_program: int | None     # the busiest program
    loops_known: bool


def work(ops: list[Op], ttgir: str, args: dict[str, Any], grid: tuple[int, ...] | None) -> Work:
    """FLOPs (tl.dot) and global bytes, each op multiplied by its loops' trip counts, summed over programs."""
    grid = tuple(grid or (1,))
    programs = _prod(grid)
    scalars = Scalars(ops, ttgir, args, grid)
    counted = [op for op in ops if op.name in DOTS or op.name in GLOBAL_LOADS or op.name in GLOBAL_STORES]

    def one(pid) -> tuple[int | None, int | None, int | None]:
        trips = trip_counts(ops, scalars.values(pid))
        flops = loaded = stored = 0
        for op in counted:
            n = 1
            for loop in op.loops:
                t = trips.get(loop)
                if t is None:
                    return None, None, None
                n *= t
            if op.name in DOTS:
                f = dot_flops(op)
                if f is None:
                    return None, None, None
                flops += f * n
            elif op.name in GLOBAL_LOADS:
                loaded += access_bytes(op) * n
            else:
                stored += access_bytes(op) * n
        return flops, loaded, stored

    if not scalars.pid_dependent or programs == 1:
        f, lo, st = one((0, 0, 0))
        if f is None:
            return Work(None, None, None, programs, None, False)
        return Work(f * programs, lo * programs, st * programs, programs, f, True)
    # Persistent kernels and the like: each program's loops depend on its id; add them up (sampled when many).
    pids = [(x, y, z) for z in range(grid[2] if len(grid) > 2 else 1)
            for y in range(grid[1] if len(grid) > 1 else 1) for x in range(grid[0])]
    stride = max(1, len(pids) // 2048)
    total = [0, 0, 0]
    busiest = 0
    sampled = pids[::stride]
    for pid in sampled:
        f, lo, st = one(pid)
        if f is None:
            return Work(None, None, None, programs, None, False)
        total[0] += f
        total[1] += lo
        total[2] += st
        busiest = max(busiest, f)
    scale = len(pids) / len(sampled)
    return Work(int(total[0] * scale), int(total[1] * scale), int(total[2] * scale), programs, busiest, True)
