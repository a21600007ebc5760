"""The eleventh accuracy round's groups (issue 36): kernels people run, none of them a sample and none at a
round-10 shape, defined and committed before anything was measured and never fitted on (SPLIT["fresh11"] in
predict_vs_measured.py).  The model was changed on round 10's groups (int8 rates, exp2 between dependent MMAs,
spill price, passes of loops that only store); these groups judge that change.

Each group is one kernel at one realistic shape with configs (block sizes x warps x stages) drawn from a grid
with a fixed seed.  The kernels: zoo kernels imported unedited with the launch their library's host code makes
(SageAttention's causal int8 forward, liger-kernel's LayerNorm, RMSNorm and cross entropy, conch's W4A16 GEMM)
and written patterns (tests/data/cost/round11/patterns.py: a bf16 flash-attention forward and the dQ pass of its
backward; round 10's scaled int8/fp8/bf16 GEMM and fused-MoE GEMM at other shapes).
"""

from __future__ import annotations

import os

DATA = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "cost"))


def _target(folder: str, file: str, kernel: str) -> str:
    return os.path.join(DATA, folder, file) + ":" + kernel


def round11_groups(grid) -> list[tuple]:
    """(name, target, shape, dtype, configs, fixed) of each round-11 group; `grid` is predict_vs_measured._grid."""
    mm = {"BLOCK_M": [64, 128, 256], "BLOCK_N": [64, 128, 256], "BLOCK_K": [64, 128], "num_warps": [4, 8],
          "num_stages": [2, 3, 4, 5]}
    fits = lambda c: c["BLOCK_M"] * c["BLOCK_N"] <= 128 * 256 and c["BLOCK_M"] * c["BLOCK_K"] <= 256 * 128  # noqa
    decode = {"BLOCK_M": [16, 32], "BLOCK_N": [32, 64, 128, 256], "BLOCK_K": [64, 128, 256],
              "num_warps": [2, 4, 8], "num_stages": [2, 3, 4, 5]}
    moe = {"BLOCK_M": [32, 64, 128], "BLOCK_N": [64, 128, 256], "BLOCK_K": [32, 64, 128], "num_warps": [4, 8],
           "num_stages": [2, 3, 4]}
    fwd = {"BLOCK_M": [64, 128], "BLOCK_N": [32, 64, 128], "num_warps": [4, 8], "num_stages": [1, 2, 3, 4]}
    causal = {"BLOCK_M": [64, 128], "BLOCK_N": [32, 64, 128], "num_warps": [4, 8], "num_stages": [1, 2, 3, 4]}
    dq = {"BLOCK_M": [32, 64, 128], "BLOCK_N": [32, 64, 128], "num_warps": [4, 8], "num_stages": [1, 2, 3]}
    w4 = {"cxpr_block_size_m": [16, 32, 64], "cxpr_block_size_n": [64, 128, 256], "cxpr_block_size_k": [64, 128, 256],
          "num_warps": [4, 8], "num_stages": [2, 3, 4]}
    ce = {"BLOCK_SIZE": [1024, 2048, 4096, 8192, 16384, 32768], "num_warps": [2, 4, 8, 16, 32], "num_stages": [1]}
    ln = {"BLOCK_SIZE": [4096, 8192], "num_warps": [1, 2, 4, 8, 16, 32], "num_stages": [1, 2]}
    rms = {"BLOCK_SIZE": [8192, 16384], "num_warps": [1, 2, 4, 8, 16, 32], "num_stages": [1, 2]}

    def smem(c, a_bytes, b_bytes, m="BLOCK_M", n="BLOCK_N", k="BLOCK_K"):   # the pipelined tiles fit the SM
        return c["num_stages"] * c[k] * (c[m] * a_bytes + c[n] * b_bytes) <= 200 * 1024

    r10, r11 = "round10", "round11"
    # measured in this order: the zoo kernels (launched as their libraries do) first, the written patterns last
    return [
        ("r11-layer-norm", _target(r11, "zoo_liger_ln.py", "_layer_norm_forward_kernel"), "16384x4096", "fp16",
         grid(ln, 24, 201), {}),
        ("r11-rms-norm", _target(r10, "zoo_liger.py", "_rms_norm_forward_kernel"), "4096x5120", "fp16",
         grid(rms, 24, 202), {}),
        ("r11-cross-entropy", _target(r10, "zoo_liger.py", "liger_cross_entropy_kernel"), "4096x32000", "fp32",
         grid(ce, 28, 203, lambda c: c["BLOCK_SIZE"] // (32 * c["num_warps"]) <= 512), {}),
        ("r11-sage-causal-fwd", _target(r11, "zoo_sage_causal.py", "_attn_fwd"), "2x32x4096x64", "fp16",
         grid(causal, 36, 204), {}),
        ("r11-w4a16-gemm", _target(r10, "zoo_conch.py", "_gemm_kernel"), "512x14336x4096", "bf16",
         grid(w4, 36, 205, lambda c: c["cxpr_block_size_m"] * c["cxpr_block_size_n"] <= 64 * 256
              and smem(c, 2, 0.5, "cxpr_block_size_m", "cxpr_block_size_n", "cxpr_block_size_k")), {}),
        ("r11-int8-gemm", _target(r10, "patterns.py", "scaled_mm"), "2048x11008x4096", "i8",
         grid(mm, 36, 206, lambda c: fits(c) and smem(c, 1, 1)), {"GROUP_M": 8, "IS_INT": 1}),
        ("r11-fp8-gemm", _target(r10, "patterns.py", "scaled_mm"), "2048x8192x2048", "fp8e4nv",
         grid(mm, 36, 207, lambda c: fits(c) and smem(c, 1, 1)), {"GROUP_M": 8, "IS_INT": 0}),
        ("r11-decode-m32", _target(r10, "patterns.py", "scaled_mm"), "32x4096x14336", "bf16",
         grid(decode, 36, 208, lambda c: smem(c, 2, 2)), {"GROUP_M": 8, "IS_INT": 0}),
        ("r11-moe-grouped", _target(r10, "patterns.py", "moe_gemm"), "64x256x1536x2048", "bf16",
         grid(moe, 36, 209, lambda c: smem(c, 2, 2)), {"GROUP_M": 8, "TOPK": 8}),
        ("r11-attn-fwd", _target(r11, "patterns.py", "attn_fwd"), "2x16x4096x128", "bf16",
         grid(fwd, 36, 210), {}),
        ("r11-attn-bwd-dq", _target(r11, "patterns.py", "attn_bwd_dq"), "2x16x4096x64", "bf16",
         grid(dq, 32, 211, lambda c: c["BLOCK_M"] * c["BLOCK_N"] <= 128 * 64), {}),
    ]


FRESH11 = ["r11-layer-norm", "r11-rms-norm", "r11-cross-entropy", "r11-sage-causal-fwd", "r11-w4a16-gemm",
           "r11-int8-gemm", "r11-fp8-gemm", "r11-decode-m32", "r11-moe-grouped", "r11-attn-fwd", "r11-attn-bwd-dq"]
