"""A matmul whose K loop is warp-specialized (`tl.range(..., warp_specialize=WS)`),
compiled for sm_120 (consumer Blackwell: RTX 50xx, RTX PRO 6000).

The pattern of triton-lang/triton#10284 (Triton's matmul tutorial with
`warp_specialize=True` on an RTX 5070): Triton 3.6 fails in make_ttgir, in
NVWSInsertAref, a step of TritonGPUAutomaticWarpSpecialization (no diagnostic
of its own); WS=False compiles, and Triton 3.9 compiles it as it is.
tests/test_failure_round13.py compiles it:

    tritonscope compile tests/data/failing/warp_specialize_matmul_sm120.py:matmul_kernel --arch sm_120 -w 8 -s 3 \\
        --arg a_ptr='fp16[1024,1024]' --arg b_ptr='fp16[1024,1024]' --arg c_ptr='fp16[1024,1024]' \\
        --arg M=1024 --arg N=1024 --arg K=1024 -c BLOCK_M=128 -c BLOCK_N=256 -c BLOCK_K=64 -c WS=True
"""

import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, WS: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * N + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BLOCK_K), warp_specialize=WS):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + offs_cm[:, None] * N + offs_cn[None, :]
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))
