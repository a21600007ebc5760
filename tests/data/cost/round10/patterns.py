"""Kernels written for the tenth accuracy round (benchmarks/predict_vs_measured.py --groups fresh10).

Patterns people run that the samples are not: a scaled GEMM with the weight stored [N, K] as a linear
layer keeps it (int8 x int8 -> int32 with per-row/per-column scales, fp8 e4m3 x e4m3 -> fp32, and
bf16 at decode shapes, M <= 32), a fused-MoE grouped GEMM (tokens gathered by a sorted id list, each
block of rows multiplied by its expert's weight, as vLLM's fused_moe does), and the dK/dV pass of
flash-attention backward (as in Triton's fused-attention tutorial, non-causal).
"""
import triton
import triton.language as tl


@triton.jit
def scaled_mm(a_ptr, b_ptr, c_ptr, a_scale_ptr, b_scale_ptr, M, N, K, stride_am, stride_bn, stride_cm,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
              IS_INT: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    in_group = GROUP_M * num_pid_n
    first_m = (pid // in_group) * GROUP_M
    size_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % in_group) % size_m
    pid_n = (pid % in_group) // size_m
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rn[None, :] * stride_bn + rk[:, None]      # the weight is [N, K]: a K-major B tile
    if IS_INT:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    else:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=rm[:, None] < M)      # rows past M are never stored
        b = tl.load(b_ptrs)
        if IS_INT:
            acc += tl.dot(a, b, out_dtype=tl.int32)
        else:
            acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    a_scale = tl.load(a_scale_ptr + rm, mask=rm < M, other=1.0)
    b_scale = tl.load(b_scale_ptr + rn)
    out = acc.to(tl.float32) * a_scale[:, None] * b_scale[None, :]
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], out.to(c_ptr.dtype.element_ty), mask=rm[:, None] < M)


@triton.jit
def moe_gemm(a_ptr, w_ptr, c_ptr, ids_ptr, num_tokens, num_rows, rows_per_expert, N, K, stride_am, stride_we,
             stride_wn, stride_cm, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
             TOPK: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(num_rows, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    in_group = GROUP_M * num_pid_n
    first_m = (pid // in_group) * GROUP_M
    size_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % in_group) % size_m
    pid_n = (pid % in_group) // size_m
    expert = (pid_m * BLOCK_M) // rows_per_expert
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    ids = tl.load(ids_ptr + rm).to(tl.int32)
    token = (rm // TOPK + ids) % num_tokens          # the gather of vLLM's sorted_token_ids
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + token[:, None] * stride_am + rk[None, :]
    w_ptrs = w_ptr + expert * stride_we + rn[None, :] * stride_wn + rk[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        acc = tl.dot(tl.load(a_ptrs), tl.load(w_ptrs), acc)
        a_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def attn_bwd_dkdv(Q, K, V, DO, LSE, DELTA, DK, DV, sm_scale, N_CTX,
                  HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_n = tl.program_id(0)
    bh = tl.program_id(1)
    base = bh.to(tl.int64) * N_CTX * HEAD_DIM
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rd = tl.arange(0, HEAD_DIM)
    k = tl.load(K + base + rn[:, None] * HEAD_DIM + rd[None, :])
    v = tl.load(V + base + rn[:, None] * HEAD_DIM + rd[None, :])
    dk = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
    dv = tl.zeros((BLOCK_N, HEAD_DIM), dtype=tl.float32)
    for start in range(0, N_CTX, BLOCK_M):
        rm = start + tl.arange(0, BLOCK_M)
        qT = tl.load(Q + base + rm[None, :] * HEAD_DIM + rd[:, None])
        m = tl.load(LSE + bh * N_CTX + rm)
        pT = tl.math.exp2(tl.dot(k, qT) * sm_scale - m[None, :])
        do = tl.load(DO + base + rm[:, None] * HEAD_DIM + rd[None, :])
        dv += tl.dot(pT.to(do.dtype), do)
        di = tl.load(DELTA + bh * N_CTX + rm)
        dpT = tl.dot(v, tl.trans(do)).to(tl.float32)
        dsT = pT * (dpT - di[None, :])
        dk += tl.dot(dsT.to(qT.dtype), tl.trans(qT))
    tl.store(DV + base + rn[:, None] * HEAD_DIM + rd[None, :], dv.to(DV.dtype.element_ty))
    tl.store(DK + base + rn[:, None] * HEAD_DIM + rd[None, :], (dk * sm_scale).to(DK.dtype.element_ty))


def launch_scaled_mm(shape, dtype, c):
    M, N, K = shape
    out = "bf16"
    return {"args": {"a_ptr": f"{dtype}[{M},{K}]", "b_ptr": f"{dtype}[{N},{K}]", "c_ptr": f"{out}[{M},{N}]",
                     "a_scale_ptr": f"fp32[{M}]", "b_scale_ptr": f"fp32[{N}]", "M": M, "N": N, "K": K,
                     "stride_am": K, "stride_bn": K, "stride_cm": N},
            "grid": (triton.cdiv(M, c["BLOCK_M"]) * triton.cdiv(N, c["BLOCK_N"]),), "flops": 2 * M * N * K}


def launch_moe(shape, dtype, c):
    E, T, N, K = shape          # experts, rows per expert (tokens x top-k sorted by expert), N, K
    topk = c["TOPK"]
    rows = E * T
    return {"args": {"a_ptr": f"{dtype}[{rows // topk},{K}]", "w_ptr": f"{dtype}[{E},{N},{K}]",
                     "c_ptr": f"{dtype}[{rows},{N}]", "ids_ptr": f"u32[{rows}]", "num_tokens": rows // topk,
                     "num_rows": rows, "rows_per_expert": T, "N": N, "K": K, "stride_am": K, "stride_we": N * K, "stride_wn": K,
                     "stride_cm": N},
            "grid": (triton.cdiv(rows, c["BLOCK_M"]) * triton.cdiv(N, c["BLOCK_N"]),),
            "flops": 2 * rows * N * K}


def launch_attn_bwd(shape, dtype, c):
    B, H, S, D = shape
    t = f"{dtype}[{B * H},{S},{D}]"
    return {"args": {"Q": t, "K": t, "V": t, "DO": t, "LSE": f"fp32[{B * H},{S}]", "DELTA": f"fp32[{B * H},{S}]",
                     "DK": t, "DV": t, "sm_scale": 0.12753102, "N_CTX": S},
            "grid": (triton.cdiv(S, c["BLOCK_N"]), B * H), "flops": 4 * 2 * B * H * S * S * D}


EXAMPLES = {
    "scaled_mm": {"shape": (4096, 4096, 4096), "dtype": "i8",
                  "constexprs": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "IS_INT": 1},
                  "block": ["BLOCK_M", "BLOCK_N"], "num_warps": 8, "num_stages": 3, "launch": launch_scaled_mm},
    "moe_gemm": {"shape": (8, 2048, 4096, 4096), "dtype": "bf16",
                 "constexprs": {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "TOPK": 2},
                 "block": ["BLOCK_M", "BLOCK_N"], "num_warps": 4, "num_stages": 3, "launch": launch_moe},
    "attn_bwd_dkdv": {"shape": (4, 16, 2048, 128), "dtype": "bf16",
                      "constexprs": {"HEAD_DIM": 128, "BLOCK_M": 32, "BLOCK_N": 128},
                      "block": ["BLOCK_N"], "num_warps": 8, "num_stages": 2, "launch": launch_attn_bwd},
}
