"""An fp64 tl.dot compiled for gfx942.

Triton 3.6 fails in ConvertTritonAMDGPUToLLVM: the MFMA lowering of tt.dot
asserts (`type.isF16() && "Unsupported data type"`); Triton 3.9 compiles it.
Neither fewer stages nor other warps help.  tests/test_failure.py compiles it:

    tritonscope compile tests/data/failing/fp64_dot_amd.py:dot_kernel --arch gfx942 \
        --arg a_ptr='*fp64' --arg out_ptr='*fp64' -c BLOCK=64
"""

import triton
import triton.language as tl


@triton.jit
def dot_kernel(a_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs[:, None] * BLOCK + offs[None, :])
    c = tl.dot(a, a)
    tl.store(out_ptr + offs[:, None] * BLOCK + offs[None, :], c)
