"""Reading the TTGIR for explain: ops with their types, loops, allocations."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from tritonscope.language.mlir_syntax import (  # noqa: F401  (the TTGIR patterns explain reads with)
    BARE_MEMDESC as _BARE_MEMDESC_RE, CONST_INT as _CONST_RE, CONTIGUITY as _CONTIG_RE, FOR_BOUNDS as _FOR_RE, OP,
    PTR_ELEM as _PTR_ELEM_RE, SCALAR_OP as _SCALAR_RE, MlirType, element_bits, find_types,
)

# ==========================================================================
# Reading the TTGIR: ops with their types, loops, allocations
# ==========================================================================

# AMD's TTGIR ops are amdgpu.* up to Triton 3.6, amdg.* from 3.7 on
GLOBAL_LOADS = ("tt.load", "ttg.async_copy_global_to_local", "ttng.async_tma_copy_global_to_local",
                "tt.descriptor_load", "amdgpu.buffer_load", "amdgpu.buffer_load_to_local", "amdg.buffer_load",
                "amdg.buffer_load_to_local")
GLOBAL_STORES = ("tt.store", "ttng.async_tma_copy_local_to_global", "tt.descriptor_store", "amdgpu.buffer_store",
                 "tt.atomic_rmw", "tt.atomic_cas", "amdg.buffer_store")
ASYNC_COPIES = ("ttg.async_copy_global_to_local", "ttng.async_tma_copy_global_to_local",
                "amdgpu.buffer_load_to_local", "amdg.buffer_load_to_local")
DOTS = ("tt.dot", "ttng.warp_group_dot", "ttng.tc_gen5_mma", "tt.dot_scaled", "ttng.tc_gen5_mma_scaled")


@dataclass
class Op:
    """One TTGIR op line: its name, text, types, Python line and enclosing loops (innermost last)."""

    index: int                        # position in the stage's line list
    number: int                       # line number in the TTGIR
    name: str
    text: str
    py: int | None
    loops: tuple[int, ...]            # indexes of the enclosing scf.for ops
    types: list[MlirType]


def _types(text: str) -> list[MlirType]:
    types = list(find_types(text, ("tensor", "memdesc")))
    m = _BARE_MEMDESC_RE.search(text)
    if m:
        types.extend(find_types("!ttg.memdesc" + m.group(1)))
    return types


def ttgir_ops(stage) -> list[Op]:
    """Every op line of a parsed TTGIR/TTIR stage with the loops around it."""
    ops: list[Op] = []
    stack: list[int | None] = []      # open regions: the loop op's index, or None for other regions
    for i, line in enumerate(stage.lines):
        text = line.text.rstrip()
        stripped = text.lstrip()
        if not stripped or stripped.startswith(("#", "//")):
            continue
        if stripped.startswith("}"):
            closed = stack.pop() if stack else None
            # Triton puts a loop's own location on its closing line (`} loc(#loc12)`): the Python `for`
            if closed is not None and ops[closed].py is None and line.loc is not None:
                ops[closed].py = line.loc.line
            if not stripped.endswith("{"):
                continue
        m = OP.match(text)
        loops = tuple(x for x in stack if x is not None)
        if m:
            name = m.group(1)
            ops.append(Op(len(ops), line.number, name, text, line.loc.line if line.loc else None, loops,
                          _types(text) if name not in ("arith.constant",) else []))
        if text.endswith("{"):
            is_loop = bool(m) and m.group(1) == "scf.for" and not stripped.startswith("}")
            stack.append(ops[-1].index if is_loop else None)
    return ops


def _prod(xs: Iterable[int]) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


def _pointee_bits(t: MlirType) -> int | None:
    m = _PTR_ELEM_RE.search(t.elem or "")
    return element_bits(m.group(1)) if m else t.bits


def _tensor_bytes(t: MlirType) -> int:
    bits = _pointee_bits(t) if "ptr" in (t.elem or "") else t.bits
    return _prod(t.shape) * (bits or 0) // 8 if t.static else 0
