"""Layer norm forward: one program per row, three passes over it in BLOCK-wide chunks (mean, variance, output)."""

import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, row_stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_ptr += row * row_stride
    y_ptr += row * row_stride
    # mean
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    # variance
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        acc += x * x
    rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    # normalize, scale and shift
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < N
        w = tl.load(w_ptr + cols, mask=mask)
        b = tl.load(b_ptr + cols, mask=mask)
        x = tl.load(x_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(y_ptr + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def _reference(x_ptr, w_ptr, b_ptr):
    import torch

    return torch.nn.functional.layer_norm(x_ptr.float(), (x_ptr.shape[-1],), w_ptr.float(), b_ptr.float(),
                                          1e-5).to(x_ptr.dtype)


def launch(shape, dtype, c):
    rows, cols = shape
    return {
        "args": {"x_ptr": f"{dtype}[{rows},{cols}]", "y_ptr": f"{dtype}[{rows},{cols}]", "w_ptr": f"{dtype}[{cols}]",
                 "b_ptr": f"{dtype}[{cols}]", "row_stride": cols, "N": cols, "eps": 1e-5},
        "grid": (rows,),
        "check": {"y_ptr": _reference},
        "bytes": 4 * rows * cols,
    }


EXAMPLES = {
    "layer_norm_kernel": {
        "shape": (1823, 781),
        "dtype": "fp16",
        "constexprs": {"BLOCK": 1024},
        "block": ["BLOCK"],
        "num_warps": 4,
        "num_stages": 3,
        "launch": launch,
    },
}
