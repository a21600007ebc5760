"""A loop Triton will not fully pipeline: fp8 wgmma with a row-major B operand.

On sm_90a, an fp8 wgmma needs B K-major in shared memory.  B here is
row-major (N contiguous), so Triton transposes it in registers and, in its
own words, "the pipelined load for this operand will be disabled, so poor
performance is expected" (a warning on the tl.dot line, 3.6 and 3.9).
"""

import triton
import triton.language as tl


@triton.jit
def fp8_rowmajor_b_kernel(a_ptr, b_ptr, c_ptr, K, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, K, BLOCK):
        a = tl.load(a_ptr + k + offs[:, None] * K + offs[None, :])
        b = tl.load(b_ptr + (k + offs[:, None]) * BLOCK + offs[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], acc)


EXAMPLES = {
    "fp8_rowmajor_b_kernel": {
        "constexprs": {"BLOCK": 64},
        "num_warps": 4,
        "num_stages": 3,
        "launch": lambda shape, dtype, c: {
            "args": {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv", "c_ptr": "*fp32", "K": 1024},
            "grid": (1, 1, 1),
        },
    },
}
