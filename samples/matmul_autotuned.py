"""Seed 004's auto-tuning space: a matmul under @triton.autotune (`sweep` takes its configs as the grid)."""

import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, num_warps=2, num_stages=2),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=8, num_stages=3),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * N + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)


def launch(shape, dtype, c):
    M, N, K = shape
    return {
        "args": {"a_ptr": f"{dtype}[{M},{K}]", "b_ptr": f"{dtype}[{K},{N}]", "c_ptr": f"fp32[{M},{N}]",
                 "M": M, "N": N, "K": K},
        "grid": (triton.cdiv(M, c["BLOCK_M"]), triton.cdiv(N, c["BLOCK_N"])),
        "check": {"c_ptr": lambda a_ptr, b_ptr: a_ptr.float() @ b_ptr.float()},
        "flops": 2 * M * N * K,
    }


EXAMPLES = {
    "matmul_kernel": {
        "shape": (512, 512, 512),   # multiples of every config's tiles: no masks needed
        "dtype": "fp16",
        "constexprs": {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32},
        "block": ["BLOCK_M", "BLOCK_N"],
        "num_warps": 4,
        "num_stages": 3,
        "launch": launch,
    },
}
