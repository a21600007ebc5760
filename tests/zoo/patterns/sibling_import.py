"""A kernel file that imports a @triton.jit helper from a sibling module (``from helper import f``).

Mirrors kernels shipped as loose scripts next to a ``utils.py``/``helper.py`` of jit
helpers (as many research repos do); Python finds the sibling because the script's own
folder is on the import path. Written for tritonscope's tests, not copied.
"""
import triton
import triton.language as tl

from helper import silu_mul


@triton.jit
def swiglu_rows(gate_ptr, up_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    g = tl.load(gate_ptr + row * stride + cols, mask=mask, other=0.0)
    u = tl.load(up_ptr + row * stride + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * stride + cols, silu_mul(g, u).to(out_ptr.dtype.element_ty), mask=mask)
