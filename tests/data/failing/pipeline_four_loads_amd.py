"""Attention with four loads in its loop (K, V, a bias and a keep-mask), pipelined with num_stages=4, for gfx950.

The pattern of triton-lang/triton#9815 (open): Triton 3.6's AMD software pipeliner (TritonAMDGPUPipeline) stops
with `LLVM ERROR: operation destroyed but still has uses` on gfx950 and gfx1200 (gfx942 compiles it).
num_stages=3 compiles; Triton 3.9 compiles it.  tests/test_failure_patterns.py compiles it:

    tritonscope compile tests/data/failing/pipeline_four_loads_amd.py:attn_kernel --arch gfx950 -s 4 \\
        --arg q_ptr='*bf16' --arg k_ptr='*bf16' --arg v_ptr='*bf16' --arg bias_ptr='*fp32' --arg keep_ptr='*i8' \\
        --arg out_ptr='*fp32' --arg N=1024 --arg SEQ_LEN=1024 -c BLOCK_Q=64 -c BLOCK_KV=32 -c D=64
"""

import triton
import triton.language as tl


@triton.jit
def attn_kernel(q_ptr, k_ptr, v_ptr, bias_ptr, keep_ptr, out_ptr, N, SEQ_LEN, BLOCK_Q: tl.constexpr,
                BLOCK_KV: tl.constexpr, D: tl.constexpr):
    offs_q = tl.program_id(0) * BLOCK_Q + tl.arange(0, BLOCK_Q)
    offs_d = tl.arange(0, D)
    offs_kv = tl.arange(0, BLOCK_KV)
    q = tl.load(q_ptr + offs_q[:, None] * D + offs_d[None, :], mask=offs_q[:, None] < N, other=0.0)
    acc = tl.zeros((BLOCK_Q, D), dtype=tl.float32)
    m_i = tl.full((BLOCK_Q,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_Q,), dtype=tl.float32) + 1.0
    for start_kv in range(0, SEQ_LEN, BLOCK_KV):
        kv = tl.multiple_of(start_kv, BLOCK_KV) + offs_kv
        both = (offs_q[:, None] < N) & (kv[None, :] < N)
        k = tl.load(k_ptr + offs_d[:, None] + kv[None, :] * D, mask=kv[None, :] < N, other=0.0)
        v = tl.load(v_ptr + kv[:, None] * D + offs_d[None, :], mask=kv[:, None] < N, other=0.0)
        bias = tl.load(bias_ptr + offs_q[:, None] * SEQ_LEN + kv[None, :], mask=both, other=float("-inf"))
        keep = tl.load(keep_ptr + offs_q[:, None] * SEQ_LEN + kv[None, :], mask=both, other=0)
        qk = tl.where(keep != 0, tl.dot(q, k) + bias, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_ij[:, None])
        alpha = tl.exp(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_ij
    tl.store(out_ptr + offs_q[:, None] * D + offs_d[None, :], acc / l_i[:, None], mask=offs_q[:, None] < N)
