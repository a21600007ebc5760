"""Seed 002's masked matmul: BLOCK_SIZE x BLOCK_SIZE tiles with bounds masks, fp32 inputs (TF32 dot)."""

import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_SIZE: tl.constexpr):
    # Program ID in the 2D grid
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    # Define tile/block start points in matrix A and B
    offsets_m = pid_m * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    offsets_n = pid_n * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)

    # Initialize accumulator for the output block
    acc = tl.zeros((BLOCK_SIZE, BLOCK_SIZE), dtype=tl.float32)

    # Loop over tiles in the shared K dimension
    for k in range(0, K, BLOCK_SIZE):
        # Load tiles of A and B
        a_tile = tl.load(a_ptr + offsets_m[:, None] * K + (k + tl.arange(0, BLOCK_SIZE)[None, :]),
                         mask=(offsets_m[:, None] < M) & (k + tl.arange(0, BLOCK_SIZE)[None, :] < K), other=0.0)
        b_tile = tl.load(b_ptr + (k + tl.arange(0, BLOCK_SIZE)[:, None]) * N + offsets_n[None, :],
                         mask=(k + tl.arange(0, BLOCK_SIZE)[:, None] < K) & (offsets_n[None, :] < N), other=0.0)

        # Perform the matrix multiplication for the tile
        acc += tl.dot(a_tile, b_tile)

    # Write the computed block to the output matrix
    tl.store(c_ptr + offsets_m[:, None] * N + offsets_n[None, :], acc,
             mask=(offsets_m[:, None] < M) & (offsets_n[None, :] < N))


def launch(shape, dtype, c):
    M, N, K = shape
    B = c["BLOCK_SIZE"]
    return {
        "args": {"a_ptr": f"{dtype}[{M},{K}]", "b_ptr": f"{dtype}[{K},{N}]", "c_ptr": f"fp32[{M},{N}]",
                 "M": M, "N": N, "K": K},
        "grid": (triton.cdiv(M, B), triton.cdiv(N, B)),
        "check": {"c_ptr": lambda a_ptr, b_ptr: a_ptr.float() @ b_ptr.float()},
        "flops": 2 * M * N * K,
    }


EXAMPLES = {
    "matmul_kernel": {
        "shape": (1024, 1024, 1024),
        "dtype": "fp32",
        "constexprs": {"BLOCK_SIZE": 64},
        "block": ["BLOCK_SIZE"],
        "num_warps": 4,
        "num_stages": 3,
        "launch": launch,
    },
}
