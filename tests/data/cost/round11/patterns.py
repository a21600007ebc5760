"""Kernels written for the eleventh accuracy round (benchmarks/predict_vs_measured.py --groups fresh11).

Attention as people write it that neither the samples nor round 10 hold: a bf16 flash-attention forward
(online softmax in exp2, non-causal, as Triton's fused-attention tutorial computes it) and the dQ pass of
its backward (round 10 measured the dK/dV pass).  The GEMM patterns of this round (scaled int8/fp8/bf16,
fused-MoE) are round 10's kernels (tests/data/cost/round10/patterns.py) at other shapes.
"""
import triton
import triton.language as tl


@triton.jit
def attn_fwd(Q, K, V, Out, sm_scale, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    base = bh.to(tl.int64) * N_CTX * HEAD_DIM
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rd = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + rm[:, None] * HEAD_DIM + rd[None, :])
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start in range(0, N_CTX, BLOCK_N):
        rn = start + tl.arange(0, BLOCK_N)
        kT = tl.load(K + base + rn[None, :] * HEAD_DIM + rd[:, None])
        qk = tl.dot(q, kT) * qk_scale
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V + base + rn[:, None] * HEAD_DIM + rd[None, :])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(Out + base + rm[:, None] * HEAD_DIM + rd[None, :], acc.to(Out.dtype.element_ty))


@triton.jit
def attn_bwd_dq(Q, K, V, DO, LSE, DELTA, DQ, sm_scale, N_CTX,
                HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    base = bh.to(tl.int64) * N_CTX * HEAD_DIM
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rd = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + rm[:, None] * HEAD_DIM + rd[None, :])
    do = tl.load(DO + base + rm[:, None] * HEAD_DIM + rd[None, :])
    m = tl.load(LSE + bh * N_CTX + rm)
    di = tl.load(DELTA + bh * N_CTX + rm)
    dq = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start in range(0, N_CTX, BLOCK_N):
        rn = start + tl.arange(0, BLOCK_N)
        kT = tl.load(K + base + rn[None, :] * HEAD_DIM + rd[:, None])
        vT = tl.load(V + base + rn[None, :] * HEAD_DIM + rd[:, None])
        p = tl.math.exp2(tl.dot(q, kT) * sm_scale - m[:, None])
        dp = tl.dot(do, vT).to(tl.float32)
        ds = p * (dp - di[:, None])
        dq += tl.dot(ds.to(kT.dtype), tl.trans(kT))
    tl.store(DQ + base + rm[:, None] * HEAD_DIM + rd[None, :], (dq * sm_scale).to(DQ.dtype.element_ty))


def launch_attn_fwd(shape, dtype, c):
    B, H, S, D = shape
    t = f"{dtype}[{B * H},{S},{D}]"
    return {"args": {"Q": t, "K": t, "V": t, "Out": t, "sm_scale": 0.08838835, "N_CTX": S},
            "grid": (triton.cdiv(S, c["BLOCK_M"]), B * H), "flops": 4 * B * H * S * S * D}


def launch_attn_dq(shape, dtype, c):
    B, H, S, D = shape
    t = f"{dtype}[{B * H},{S},{D}]"
    return {"args": {"Q": t, "K": t, "V": t, "DO": t, "LSE": f"fp32[{B * H},{S}]", "DELTA": f"fp32[{B * H},{S}]",
                     "DQ": t, "sm_scale": 0.125, "N_CTX": S},
            "grid": (triton.cdiv(S, c["BLOCK_M"]), B * H), "flops": 3 * 2 * B * H * S * S * D}


EXAMPLES = {
    "attn_fwd": {"shape": (2, 16, 4096, 128), "dtype": "bf16",
                 "constexprs": {"HEAD_DIM": 128, "BLOCK_M": 128, "BLOCK_N": 64},
                 "block": ["BLOCK_M"], "num_warps": 8, "num_stages": 3, "launch": launch_attn_fwd},
    "attn_bwd_dq": {"shape": (2, 16, 4096, 64), "dtype": "bf16",
                    "constexprs": {"HEAD_DIM": 64, "BLOCK_M": 64, "BLOCK_N": 64},
                    "block": ["BLOCK_M"], "num_warps": 4, "num_stages": 2, "launch": launch_attn_dq},
}
