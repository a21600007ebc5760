"""The twelfth accuracy round's groups (issue 36): kernels people run, none of them a sample and none at a
round-10 or round-11 shape, defined and committed before anything was measured and never fitted on
(SPLIT["fresh12"] in predict_vs_measured.py).  Round 11's groups are no longer held out: the model may be fitted
on them; these groups judge what is fitted.

Each group is one kernel at one realistic shape (sizes of common models: Llama-3 8B/70B, Qwen2, Mixtral/
DeepSeek-style MoE) with configs drawn from a grid with a fixed seed (seeds 301-311, new).  The kernels are the
ones rounds 10 and 11 measured at other shapes: zoo kernels imported unedited with the launch their library's
host code makes (liger-kernel's RMSNorm, LayerNorm and cross entropy, SageAttention's int8 forward, conch's
W4A16 GEMM) and written patterns (tests/data/cost/round10/patterns.py: scaled int8/fp8/bf16 GEMM, fused-MoE
grouped GEMM, attention backward dK/dV; tests/data/cost/round11/patterns.py: flash-attention forward, the dQ
pass).  No new kernel is written this round: what changes is the shape, the dtype and the configs.  A
constexpr that follows the shape (HEAD_DIM, SageAttention's H) is set in the group's fixed values.
"""

from __future__ import annotations

import os

DATA = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "cost"))


def _target(folder: str, file: str, kernel: str) -> str:
    return os.path.join(DATA, folder, file) + ":" + kernel


def round12_groups(grid) -> list[tuple]:
    """(name, target, shape, dtype, configs, fixed) of each round-12 group; `grid` is predict_vs_measured._grid."""
    mm = {"BLOCK_M": [64, 128, 256], "BLOCK_N": [64, 128, 256], "BLOCK_K": [64, 128], "num_warps": [4, 8],
          "num_stages": [2, 3, 4, 5]}
    fits = lambda c: c["BLOCK_M"] * c["BLOCK_N"] <= 128 * 256 and c["BLOCK_M"] * c["BLOCK_K"] <= 256 * 128  # noqa
    decode = {"BLOCK_M": [16, 32], "BLOCK_N": [32, 64, 128, 256], "BLOCK_K": [64, 128, 256],
              "num_warps": [2, 4, 8], "num_stages": [2, 3, 4, 5]}
    moe = {"BLOCK_M": [32, 64, 128], "BLOCK_N": [64, 128, 256], "BLOCK_K": [32, 64, 128], "num_warps": [4, 8],
           "num_stages": [2, 3, 4]}
    fwd = {"BLOCK_M": [64, 128], "BLOCK_N": [32, 64, 128], "num_warps": [4, 8], "num_stages": [1, 2, 3, 4]}
    sage = {"BLOCK_M": [64, 128], "BLOCK_N": [32, 64, 128], "num_warps": [4, 8], "num_stages": [1, 2, 3, 4]}
    bwd = {"BLOCK_M": [16, 32, 64, 128], "BLOCK_N": [32, 64, 128], "num_warps": [4, 8], "num_stages": [1, 2, 3]}
    w4 = {"cxpr_block_size_m": [16, 32, 64], "cxpr_block_size_n": [64, 128, 256], "cxpr_block_size_k": [64, 128, 256],
          "num_warps": [4, 8], "num_stages": [2, 3, 4]}
    ce = {"BLOCK_SIZE": [2048, 4096, 8192, 16384, 32768, 65536], "num_warps": [4, 8, 16, 32], "num_stages": [1]}
    ln = {"BLOCK_SIZE": [8192, 16384], "num_warps": [2, 4, 8, 16, 32], "num_stages": [1, 2]}
    rms = {"BLOCK_SIZE": [2048, 4096], "num_warps": [1, 2, 4, 8, 16], "num_stages": [1, 2]}

    def smem(c, a_bytes, b_bytes, m="BLOCK_M", n="BLOCK_N", k="BLOCK_K"):   # the pipelined tiles fit the SM
        return c["num_stages"] * c[k] * (c[m] * a_bytes + c[n] * b_bytes) <= 200 * 1024

    r10, r11 = "round10", "round11"
    # measured in this order: the zoo kernels (launched as their libraries do) first, the written patterns last
    return [
        ("r12-rms-norm", _target(r10, "zoo_liger.py", "_rms_norm_forward_kernel"), "16384x2048", "bf16",
         grid(rms, 20, 301), {}),
        ("r12-layer-norm", _target(r11, "zoo_liger_ln.py", "_layer_norm_forward_kernel"), "8192x8192", "bf16",
         grid(ln, 20, 302), {}),
        ("r12-cross-entropy", _target(r10, "zoo_liger.py", "liger_cross_entropy_kernel"), "2048x151936", "bf16",
         grid(ce, 24, 303, lambda c: c["BLOCK_SIZE"] // (32 * c["num_warps"]) <= 512), {}),
        ("r12-sage-attn-fwd", _target(r10, "zoo_sage.py", "_attn_fwd"), "2x24x4096x64", "fp16",
         grid(sage, 32, 304), {"H": 24, "HEAD_DIM": 64}),
        ("r12-w4a16-gemm", _target(r10, "zoo_conch.py", "_gemm_kernel"), "256x4096x14336", "bf16",
         grid(w4, 32, 305, lambda c: c["cxpr_block_size_m"] * c["cxpr_block_size_n"] <= 64 * 256
              and smem(c, 2, 0.5, "cxpr_block_size_m", "cxpr_block_size_n", "cxpr_block_size_k")), {}),
        ("r12-int8-gemm", _target(r10, "patterns.py", "scaled_mm"), "1024x16384x4096", "i8",
         grid(mm, 32, 306, lambda c: fits(c) and smem(c, 1, 1)), {"GROUP_M": 8, "IS_INT": 1}),
        ("r12-fp8-gemm", _target(r10, "patterns.py", "scaled_mm"), "3072x14336x4096", "fp8e4nv",
         grid(mm, 32, 307, lambda c: fits(c) and smem(c, 1, 1)), {"GROUP_M": 8, "IS_INT": 0}),
        ("r12-decode-m8", _target(r10, "patterns.py", "scaled_mm"), "8x28672x4096", "bf16",
         grid(decode, 32, 308, lambda c: smem(c, 2, 2)), {"GROUP_M": 8, "IS_INT": 0}),
        ("r12-moe-grouped", _target(r10, "patterns.py", "moe_gemm"), "128x64x768x2048", "bf16",
         grid(moe, 32, 309, lambda c: smem(c, 2, 2) and c["BLOCK_M"] <= 64), {"GROUP_M": 8, "TOPK": 8}),
        ("r12-attn-fwd", _target(r11, "patterns.py", "attn_fwd"), "4x32x2048x64", "bf16",
         grid(fwd, 32, 310), {"HEAD_DIM": 64}),
        ("r12-attn-bwd-dkdv", _target(r10, "patterns.py", "attn_bwd_dkdv"), "2x16x4096x64", "bf16",
         grid(bwd, 32, 311, lambda c: c["BLOCK_M"] * c["BLOCK_N"] <= 128 * 64), {"HEAD_DIM": 64}),
    ]


FRESH12 = ["r12-rms-norm", "r12-layer-norm", "r12-cross-entropy", "r12-sage-attn-fwd", "r12-w4a16-gemm",
           "r12-int8-gemm", "r12-fp8-gemm", "r12-decode-m8", "r12-moe-grouped", "r12-attn-fwd", "r12-attn-bwd-dkdv"]
