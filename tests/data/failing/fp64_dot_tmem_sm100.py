"""An fp64 tl.dot compiled for sm_100a: a verifier error inside TritonGPUAccelerateMatmul.

Triton 3.6 maps the dot to Blackwell's tcgen05 MMA with its accumulator in
tensor memory, whose layout packs 32-bit columns: for 64-bit elements the
column stride comes out 32 / 64 = 0, and the attribute's verifier refuses it
("colStride must be 1, 2, or 4 but got 0"); the pass stops.  Triton 3.9
compiles it.  tests/test_failure_patterns.py compiles it:

    tritonscope compile tests/data/failing/fp64_dot_tmem_sm100.py:dot_kernel --arch sm_100a \
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
