"""Loop trip counts from the arguments of one launch."""

from __future__ import annotations

import math
from typing import Any

from tritonscope.language.mlir_syntax import ARG_NAME_LOC, AXIS_WORD, FUNC_ARG, FUNC_SIGNATURE, SSA_VALUE
from tritonscope.analyses.explain.ttgir import Op, _CONST_RE, _FOR_RE, _SCALAR_RE

# ==========================================================================
# Scalars: loop trip counts from the arguments of one launch
# ==========================================================================

_ARITH = {
    "arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b, "arith.muli": lambda a, b: a * b,
    "arith.divsi": lambda a, b: int(a / b) if b else None, "arith.divui": lambda a, b: a // b if b else None,
    "arith.ceildivsi": lambda a, b: -(-a // b) if b else None, "arith.floordivsi": lambda a, b: a // b if b else None,
    "arith.remsi": lambda a, b: int(math.fmod(a, b)) if b else None, "arith.remui": lambda a, b: a % b if b else None,
    "arith.maxsi": max, "arith.minsi": min, "arith.maxui": max, "arith.minui": min,
    "arith.andi": lambda a, b: a & b, "arith.ori": lambda a, b: a | b, "arith.xori": lambda a, b: a ^ b,
    "arith.shli": lambda a, b: a << b, "arith.shrsi": lambda a, b: a >> b, "arith.shrui": lambda a, b: a >> b,
}
_UNARY = ("arith.index_cast", "arith.extsi", "arith.extui", "arith.trunci", "arith.index_castui")


def function_args(ttgir: str) -> list[tuple[str, str, str]]:
    """[(ssa name, python name, the argument's text)] of the kernel's tt.func signature."""
    m = FUNC_SIGNATURE.search(ttgir)
    if not m:
        return []
    sig = m.group(1)
    out = []
    starts = [(a.start(), a.group(1)) for a in FUNC_ARG.finditer(sig)]
    for k, (pos, ssa) in enumerate(starts):
        chunk = sig[pos: starts[k + 1][0] if k + 1 < len(starts) else len(sig)]
        loc = ARG_NAME_LOC.search(chunk)
        out.append((ssa, loc.group(1) if loc else ssa, chunk))
    return out


class Scalars:
    """Evaluates the kernel's scalar i32/i64 arithmetic for one program of one launch."""

    def __init__(self, ops: list[Op], ttgir: str, args: dict[str, Any], grid: tuple[int, ...] | None):
        self.grid = tuple(grid or ())
        self.base: dict[str, int] = {}
        for ssa, name, _ in function_args(ttgir):
            value = args.get(name)
            if isinstance(value, bool) or not isinstance(value, int):
                continue
            self.base["%" + ssa] = value
        self.defs: list[tuple[str, str, list[str]]] = []   # (result, op, operands) in program order
        for op in ops:
            c = _CONST_RE.match(op.text)
            if c:
                self.base[c.group(1)] = int(c.group(2))
                continue
            s = _SCALAR_RE.match(op.text)
            if s:
                operands = SSA_VALUE.findall(s.group(3))
                axis = AXIS_WORD.search(s.group(3))
                self.defs.append((s.group(1), s.group(2) + (f":{axis.group(1)}" if axis else ""), operands))
        self.uses_pid = any(op.startswith("tt.get_program_id") for _, op, _ in self.defs)
        self._ops = ops

    @property
    def pid_dependent(self) -> bool:
        """Whether loop trip counts change from program to program (persistent kernels, causal masks)."""
        if not self.uses_pid or not self.grid:
            return False
        g = list(self.grid) + [1] * (3 - len(self.grid))
        probes = [(0, 0, 0), (g[0] - 1, g[1] - 1, g[2] - 1), (g[0] // 2, g[1] // 2, g[2] // 2)]
        first = trip_counts(self._ops, self.values(probes[0]))
        return any(trip_counts(self._ops, self.values(p)) != first for p in probes[1:])

    def values(self, pid: tuple[int, int, int] = (0, 0, 0)) -> dict[str, int]:
        env = dict(self.base)
        for result, op, operands in self.defs:
            name, _, axis = op.partition(":")
            if name == "tt.get_program_id":
                env[result] = pid["xyz".index(axis or "x")]
                continue
            if name == "tt.get_num_programs":
                dim = "xyz".index(axis or "x")
                if dim < len(self.grid):
                    env[result] = self.grid[dim]
                continue
            vals = [env.get(o) for o in operands]
            if any(v is None for v in vals):
                continue
            if name in _UNARY and len(vals) == 1:
                env[result] = vals[0]
            elif name in _ARITH and len(vals) == 2:
                try:
                    v = _ARITH[name](*vals)
                except (ArithmeticError, ValueError):
                    v = None
                if v is not None:
                    env[result] = v
        return env


def trip_counts(ops: list[Op], env: dict[str, int]) -> dict[int, int | None]:
    """Loop op index -> iterations for one program (None: bounds not known from the arguments)."""
    out: dict[int, int | None] = {}
    for op in ops:
        if op.name != "scf.for":
            continue
        m = _FOR_RE.search(op.text)
        if not m:
            out[op.index] = None
            continue
        lb, ub, step = (env.get(x) for x in m.groups())
        out[op.index] = None if None in (lb, ub, step) or step <= 0 else max(0, -(-(ub - lb) // step))
    return out
