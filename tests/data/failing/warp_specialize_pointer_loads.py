"""A warp-specialized loop that loads through pointers (tl.load), with a dot and a max-reduction, for sm_90a.

Hopper's warp specialization (NVGPUWarpSpecialization) hands the loop's loads to producer warps, whose commit
can signal only TMA loads (through a tensor descriptor).  These loads are plain pointer loads:

- Triton 3.9: `LLVM ERROR: unsupported load type for producer commit`, inside the pass;
- Triton 3.6: `WSLowerToken.cpp:73: Assertion `false' failed` in processProducerCommitOp.

Both compile with warp_specialize=False.  tests/test_failure_patterns.py compiles it:

    tritonscope compile tests/data/failing/warp_specialize_pointer_loads.py:row_max_kernel --arch sm_90a \\
        --arg a_ptr='*fp16' --arg b_ptr='*fp16' --arg out_ptr='*fp32' --arg K=1024 \\
        -c BLOCK_M=128 -c BLOCK_N=64 -c BLOCK_K=64 -c warp_specialize=True
"""

import triton
import triton.language as tl


@triton.jit
def row_max_kernel(a_ptr, b_ptr, out_ptr, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr, warp_specialize: tl.constexpr):
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    m = tl.full([BLOCK_M], float("-inf"), tl.float32)
    for k in tl.range(0, K, BLOCK_K, warp_specialize=warp_specialize):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BLOCK_N + rn[None, :])
        m = tl.maximum(m, tl.max(tl.dot(a, b), 1))
    tl.store(out_ptr + rm, m)
