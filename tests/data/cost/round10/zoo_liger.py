"""Liger-Kernel's cross entropy and RMSNorm forward (liger-kernel 0.8.5, unedited), launched as its host code
does (liger_kernel/ops/cross_entropy.py, rms_norm.py): one row per program, the row in BLOCK_SIZE chunks.
The labels are u32 (random 0..15, each a real column) where liger passes int64: random int64 labels would
be negative and read before the row."""
from liger_kernel.ops.cross_entropy import liger_cross_entropy_kernel  # noqa: F401
from liger_kernel.ops.rms_norm import _rms_norm_forward_kernel  # noqa: F401


def launch_ce(shape, dtype, c):
    rows, vocab = shape
    return {"args": {"X_ptr": f"{dtype}[{rows},{vocab}]", "X_stride": vocab, "Y_ptr": f"u32[{rows}]", "Y_stride": 1,
                     "weight_ptr": None, "loss_ptr": f"fp32[{rows}]", "z_loss_ptr": None, "loss_stride": 1,
                     "token_accuracy_ptr": None, "token_accuracy_stride": 0, "predicted_tokens_ptr": None,
                     "predicted_tokens_stride": 0, "n_cols": vocab, "n_non_ignore": rows,
                     "sum_non_ignore_weight": rows, "weight_sum": 0.0, "ignore_index": -100, "softcap": None},
            "grid": (rows,)}


def launch_rms(shape, dtype, c):
    rows, cols = shape
    return {"args": {"Y_ptr": f"{dtype}[{rows},{cols}]", "Y_row_stride": cols, "X_ptr": f"{dtype}[{rows},{cols}]",
                     "X_row_stride": cols, "W_ptr": f"{dtype}[{cols}]", "W_row_stride": 1, "RSTD_ptr": f"fp32[{rows}]",
                     "RSTD_row_stride": 1, "n_cols": cols, "eps": 1e-6, "offset": 0.0},
            "grid": (rows,)}


EXAMPLES = {
    "liger_cross_entropy_kernel": {
        "shape": (2048, 128256), "dtype": "bf16",
        "constexprs": {"lse_square_scale": 0.0, "label_smoothing": 0.0, "reduction": "mean", "RETURN_Z_LOSS": False,
                       "RETURN_TOKEN_ACCURACY": False, "RETURN_PREDICTED_TOKENS": False, "BLOCK_SIZE": 32768,
                       "HAS_WEIGHT": False, "HAS_SOFTCAPPING": False, "HAS_GRADIENTS": True},
        "block": ["BLOCK_SIZE"], "num_warps": 32, "num_stages": 1, "launch": launch_ce},
    "_rms_norm_forward_kernel": {
        "shape": (8192, 8192), "dtype": "bf16",
        "constexprs": {"casting_mode": 0, "elementwise_affine": True, "BLOCK_SIZE": 8192},
        "block": ["BLOCK_SIZE"], "num_warps": 8, "num_stages": 1, "launch": launch_rms},
}
