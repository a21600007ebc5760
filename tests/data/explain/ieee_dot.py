"""Seed 001's matmul with fp32 inputs and input_precision="ieee": tl.dot on FMA, not tensor cores (explain tests)."""

import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    # row and column indices of this program's output tile
    offs_m = pid_m * BLOCK + tl.arange(0, BLOCK)
    offs_n = pid_n * BLOCK + tl.arange(0, BLOCK)
    offs_k = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, K, BLOCK):
        a = tl.load(a_ptr + offs_m[:, None] * K + (k + offs_k)[None, :])
        b = tl.load(b_ptr + (k + offs_k)[:, None] * N + offs_n[None, :])
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)


def launch(shape, dtype, c):
    M, N, K = shape
    B = c["BLOCK"]
    return {
        "args": {"a_ptr": f"{dtype}[{M},{K}]", "b_ptr": f"{dtype}[{K},{N}]", "c_ptr": f"fp32[{M},{N}]",
                 "M": M, "N": N, "K": K},
        "grid": (triton.cdiv(M, B), triton.cdiv(N, B)),
        "check": {"c_ptr": lambda a_ptr, b_ptr: a_ptr.float() @ b_ptr.float()},
        "flops": 2 * M * N * K,
    }


EXAMPLES = {
    "matmul_kernel": {
        "shape": (32, 32, 32),
        "dtype": "fp32",
        "constexprs": {"BLOCK": 16},
        "block": ["BLOCK"],
        "num_warps": 4,
        "num_stages": 3,
        "launch": launch,
    },
}
