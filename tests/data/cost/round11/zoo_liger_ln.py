"""Liger-Kernel's LayerNorm forward (liger-kernel 0.8.5, unedited), launched as layer_norm_forward does
(liger_kernel/ops/layer_norm.py): one row per program, the whole row in one BLOCK_SIZE >= n_cols."""
from liger_kernel.ops.layer_norm import _layer_norm_forward_kernel  # noqa: F401


def launch_ln(shape, dtype, c):
    rows, cols = shape
    return {"args": {"Y_ptr": f"{dtype}[{rows},{cols}]", "Y_row_stride": cols, "X_ptr": f"{dtype}[{rows},{cols}]",
                     "X_row_stride": cols, "W_ptr": f"{dtype}[{cols}]", "W_row_stride": 1, "B_ptr": f"{dtype}[{cols}]",
                     "B_row_stride": 1, "Mean_ptr": f"fp32[{rows}]", "Mean_row_stride": 1, "RSTD_ptr": f"fp32[{rows}]",
                     "RSTD_row_stride": 1, "n_cols": cols, "eps": 1e-5},
            "grid": (rows,)}


EXAMPLES = {"_layer_norm_forward_kernel": {
    "shape": (16384, 4096), "dtype": "fp16", "constexprs": {"BLOCK_SIZE": 4096},
    "block": ["BLOCK_SIZE"], "num_warps": 8, "num_stages": 1, "launch": launch_ln}}
