"""An fp32 tl.dot with K=8 compiled for gfx942: an index out of range in the MFMA lowering.

Triton 3.6 fails in ConvertTritonAMDGPUToLLVM: lowering tt.dot to MFMA reads
past the end of the operand values it unpacked (LLVM's `idx < size()`
assertion in SmallVector); Triton 3.9 compiles it.  K=16 compiles on 3.6.
tests/test_failure_patterns.py compiles it:

    tritonscope compile tests/data/failing/fp32_dot_short_k_amd.py:dot_kernel --arch gfx942 \
        --arg a_ptr='*fp32' --arg b_ptr='*fp32' --arg out_ptr='*fp32' -c K=8
"""

import triton
import triton.language as tl


@triton.jit
def dot_kernel(a_ptr, b_ptr, out_ptr, K: tl.constexpr):
    rm = tl.arange(0, 16)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * 16 + rm[None, :])
    c = tl.dot(a, b)
    tl.store(out_ptr + rm[:, None] * 16 + rm[None, :], c)
