"""Vector add: the simplest kernel, one masked BLOCK-wide slice per program."""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def launch(shape, dtype, c):
    (n,) = shape
    return {
        "args": {"x_ptr": f"{dtype}[{n}]", "y_ptr": f"{dtype}[{n}]", "out_ptr": f"{dtype}[{n}]", "n_elements": n},
        "grid": (triton.cdiv(n, c["BLOCK"]),),
        "check": {"out_ptr": lambda x_ptr, y_ptr: x_ptr + y_ptr},
        "bytes": 3 * n,
    }


EXAMPLES = {
    "add_kernel": {
        "shape": (98432,),
        "dtype": "fp32",
        "constexprs": {"BLOCK": 1024},
        "block": ["BLOCK"],
        "num_warps": 4,
        "num_stages": 3,
        "launch": launch,
    },
}
