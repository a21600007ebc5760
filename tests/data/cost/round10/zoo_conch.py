"""conch's W4A16 GEMM (conch-triton-kernels 1.3, unedited): bf16 activations times int4 weights packed eight
to a u32 along K, group-wise bf16 scales (group 128), launched as mixed_precision_gemm_launcher does
(conch/kernels/quantization/gemm.py)."""
import triton
from conch.kernels.quantization.gemm import _gemm_kernel  # noqa: F401  (the kernel this file describes)


def launch(shape, dtype, c):
    M, N, K = shape
    return {"args": {"a_ptr": f"{dtype}[{M},{K}]", "b_ptr": f"u32[{K // 8},{N}]", "c_ptr": f"{dtype}[{M},{N}]",
                     "scales_ptr": f"{dtype}[{K // 128},{N}]", "zeros_ptr": "i32[1,0]", "scales_a_ptr": None,
                     "m_dim": M, "k_dim": K, "n_dim": N, "matrix_a_stride_m": K, "matrix_a_stride_k": 1,
                     "matrix_b_stride_k": N, "matrix_b_stride_n": 1, "matrix_c_stride_m": N, "matrix_c_stride_n": 1,
                     "meta_stride_g": N, "meta_stride_n": 1},
            "grid": (triton.cdiv(M, c["cxpr_block_size_m"]) * triton.cdiv(N, c["cxpr_block_size_n"]),),
            "flops": 2 * M * N * K}


EXAMPLES = {"_gemm_kernel": {
    "shape": (2048, 4096, 4096), "dtype": "bf16",
    "constexprs": {"cxpr_w_nbits": 4, "cxpr_weight_bias": 8, "cxpr_group_size": 128, "cxpr_unpack_mask": 15,
                   "cxpr_elements_per_sample": 8, "cxpr_input_dtype": "tl.bfloat16", "cxpr_output_dtype": "tl.bfloat16",
                   "cxpr_acc_dtype": "tl.float32", "cxpr_meta_dtype": "tl.bfloat16", "cxpr_channel_scale_mode": 0,
                   "cxpr_w_group_mode": 2, "cxpr_zero_is_scalar": False, "cxpr_data_contiguous": True,
                   "cxpr_matrix_a_load_order": 2, "cxpr_matrix_a_eviction_policy": "evict_last",
                   "cxpr_matrix_b_eviction_policy": "evict_first", "cxpr_meta_eviction_policy": "",
                   "cxpr_swizzle_pid": True, "cxpr_block_size_scale_a": 128, "cxpr_block_size_scale_b": 64,
                   "cxpr_block_size_m": 128, "cxpr_block_size_n": 64, "cxpr_block_size_k": 64, "cxpr_group_size_m": 16},
    "block": ["cxpr_block_size_m"], "num_warps": 8, "num_stages": 2, "launch": launch}}
