"""SageAttention's causal int8-QK attention forward (sageattention 1.0.6, unedited), launched as its forward()
does (sageattention/attn_qk_int8_per_block_causal.py: HND layout, STAGE 3, per-block Q/K scales whose count
follows BLOCK_M/BLOCK_N)."""
import triton
from sageattention.attn_qk_int8_per_block_causal import _attn_fwd  # noqa: F401  (the kernel this file describes)


def launch(shape, dtype, c):
    B, H, S, D = shape
    sz, sh = H * S * D, S * D
    return {"args": {"Q": f"i8[{B},{H},{S},{D}]", "K": f"i8[{B},{H},{S},{D}]", "V": f"fp16[{B},{H},{S},{D}]",
                     "Q_scale": f"fp32[{B},{H},{triton.cdiv(S, c['BLOCK_M'])},1]",
                     "K_scale": f"fp32[{B},{H},{triton.cdiv(S, c['BLOCK_N'])},1]",
                     "Out": f"{dtype}[{B},{H},{S},{D}]",
                     "stride_qz": sz, "stride_qh": sh, "stride_qn": D, "stride_kz": sz, "stride_kh": sh, "stride_kn": D,
                     "stride_vz": sz, "stride_vh": sh, "stride_vn": D, "stride_oz": sz, "stride_oh": sh, "stride_on": D,
                     "qo_len": S, "kv_len": S},
            "grid": (triton.cdiv(S, c["BLOCK_M"]), H, B), "flops": 2 * B * H * S * S * D}


EXAMPLES = {"_attn_fwd": {"shape": (2, 32, 4096, 64), "dtype": "fp16",
                          "constexprs": {"H": 32, "num_kv_groups": 1, "BLOCK_M": 128, "BLOCK_N": 64, "HEAD_DIM": 64,
                                         "STAGE": 3},
                          "block": ["BLOCK_M"], "num_warps": 4, "num_stages": 4, "launch": launch}}
