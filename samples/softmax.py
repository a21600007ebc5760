"""Row-wise softmax: one program per row, a tl.max and a tl.sum reduction."""

import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, num / den, mask=mask)


def block_for(shape, dtype):
    """One program holds a whole row: BLOCK is the row length's next power of two (Triton's tutorial)."""
    return {"BLOCK": triton.next_power_of_2(shape[-1])}


def launch(shape, dtype, c):
    rows, cols = shape
    return {
        "args": {"out_ptr": f"{dtype}[{rows},{cols}]", "in_ptr": f"{dtype}[{rows},{cols}]",
                 "in_row_stride": cols, "out_row_stride": cols, "n_cols": cols},
        "grid": (rows,),
        "check": {"out_ptr": lambda in_ptr: in_ptr.float().softmax(-1).to(in_ptr.dtype)},
        "bytes": 2 * rows * cols,
    }


EXAMPLES = {
    "softmax_kernel": {
        "shape": (1823, 781),
        "dtype": "fp32",
        "constexprs": {"BLOCK": 1024},
        "constexprs_for": block_for,
        "block": ["BLOCK"],
        "num_warps": 4,
        "num_stages": 3,
        "launch": launch,
    },
}
