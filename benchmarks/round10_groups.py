"""The tenth accuracy round's groups (issue 36): kernels people run, none of them a sample, defined before
anything was measured and never fitted on (SPLIT["fresh10"] in predict_vs_measured.py).

Each group is one kernel at one realistic shape with configs (block sizes x warps x stages) drawn from a
grid with a fixed seed; the kernels are under tests/data/cost/round10/: zoo kernels imported unedited
(sageattention, conch, liger-kernel) with the launch their library's host code makes, and patterns
written there (a scaled int8/fp8/bf16 GEMM with a [N, K] weight, a fused-MoE grouped GEMM, the dK/dV
pass of attention backward).
"""

from __future__ import annotations

import os

KERNELS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "cost",
                                        "round10"))


def _target(file: str, kernel: str) -> str:
    return os.path.join(KERNELS, file) + ":" + kernel


def round10_groups(grid) -> list[tuple]:
    """(name, target, shape, dtype, configs, fixed) of each round-10 group; `grid` is predict_vs_measured._grid."""
    mm = {"BLOCK_M": [64, 128, 256], "BLOCK_N": [64, 128, 256], "BLOCK_K": [64, 128], "num_warps": [4, 8],
          "num_stages": [2, 3, 4, 5]}
    fits = lambda c: c["BLOCK_M"] * c["BLOCK_N"] <= 128 * 256 and c["BLOCK_M"] * c["BLOCK_K"] <= 256 * 128  # noqa
    decode = {"BLOCK_M": [16, 32, 64], "BLOCK_N": [32, 64, 128, 256], "BLOCK_K": [64, 128, 256],
              "num_warps": [2, 4, 8], "num_stages": [2, 3, 4, 5]}
    moe = {"BLOCK_M": [64, 128], "BLOCK_N": [64, 128, 256], "BLOCK_K": [32, 64, 128], "num_warps": [4, 8],
           "num_stages": [2, 3, 4]}
    sage = {"BLOCK_M": [64, 128], "BLOCK_N": [32, 64, 128], "num_warps": [4, 8], "num_stages": [1, 2, 3, 4]}
    bwd = {"BLOCK_M": [16, 32, 64, 128], "BLOCK_N": [32, 64, 128], "num_warps": [4, 8], "num_stages": [1, 2, 3]}
    w4 = {"cxpr_block_size_m": [32, 64, 128], "cxpr_block_size_n": [64, 128, 256], "cxpr_block_size_k": [32, 64, 128],
          "num_warps": [4, 8], "num_stages": [2, 3, 4]}
    ce = {"BLOCK_SIZE": [1024, 2048, 4096, 8192, 16384, 32768, 65536], "num_warps": [2, 4, 8, 16, 32],
          "num_stages": [1]}
    rms = {"BLOCK_SIZE": [8192, 16384], "num_warps": [1, 2, 4, 8, 16, 32], "num_stages": [1, 2]}
    pat = "patterns.py"

    def smem(c, a_bytes, b_bytes, m="BLOCK_M", n="BLOCK_N", k="BLOCK_K"):   # the pipelined tiles fit the SM
        return c["num_stages"] * c[k] * (c[m] * a_bytes + c[n] * b_bytes) <= 200 * 1024

    # measured in this order: the zoo kernels (launched as their libraries do) first, the written patterns last
    return [
        ("r10-rms-norm", _target("zoo_liger.py", "_rms_norm_forward_kernel"), "8192x8192", "bf16",
         grid(rms, 24, 109), {}),
        ("r10-cross-entropy", _target("zoo_liger.py", "liger_cross_entropy_kernel"), "2048x128256", "bf16",
         grid(ce, 24, 108, lambda c: c["BLOCK_SIZE"] // (32 * c["num_warps"]) <= 512), {}),
        ("r10-sage-attn-fwd", _target("zoo_sage.py", "_attn_fwd"), "4x32x2048x128", "fp16",
         grid(sage, 40, 101), {}),
        ("r10-w4a16-gemm", _target("zoo_conch.py", "_gemm_kernel"), "2048x4096x4096", "bf16",
         grid(w4, 36, 106, lambda c: c["cxpr_block_size_m"] * c["cxpr_block_size_n"] <= 128 * 256
              and smem(c, 2, 0.5, "cxpr_block_size_m", "cxpr_block_size_n", "cxpr_block_size_k")), {}),
        ("r10-int8-gemm", _target(pat, "scaled_mm"), "4096x4096x4096", "i8",
         grid(mm, 40, 104, lambda c: fits(c) and smem(c, 1, 1)),
         {"GROUP_M": 8, "IS_INT": 1}),
        ("r10-fp8-gemm", _target(pat, "scaled_mm"), "4096x4096x4096", "fp8e4nv",
         grid(mm, 40, 105, lambda c: fits(c) and smem(c, 1, 1)),
         {"GROUP_M": 8, "IS_INT": 0}),
        ("r10-decode-m16", _target(pat, "scaled_mm"), "16x14336x4096", "bf16",
         grid(decode, 40, 107, lambda c: smem(c, 2, 2)),
         {"GROUP_M": 8, "IS_INT": 0}),
        ("r10-attn-bwd-dkdv", _target(pat, "attn_bwd_dkdv"), "4x16x2048x128", "bf16",
         grid(bwd, 36, 102, lambda c: c["BLOCK_M"] * c["BLOCK_N"] <= 128 * 64), {}),
        ("r10-moe-grouped", _target(pat, "moe_gemm"), "8x2048x4096x4096", "bf16",
         grid(moe, 40, 103, lambda c: smem(c, 2, 2)),
         {"GROUP_M": 8, "TOPK": 2}),
    ]


FRESH10 = ["r10-sage-attn-fwd", "r10-attn-bwd-dkdv", "r10-moe-grouped", "r10-int8-gemm", "r10-fp8-gemm",
           "r10-w4a16-gemm", "r10-decode-m16", "r10-cross-entropy", "r10-rms-norm"]
