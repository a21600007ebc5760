"""String-valued constexprs: ``ACTIVATION`` ("" or "gelu") and ``reduction`` ("mean"/"sum").

Mirrors the activation string of Triton's matmul tutorial (``ACTIVATION: tl.constexpr``
with ``""`` for none, ``"leaky_relu"`` otherwise) and Liger-Kernel's cross entropy, which
passes ``reduction="mean"`` as a constexpr. Written for tritonscope's tests, not copied.
"""
import triton
import triton.language as tl


@triton.jit
def _gelu(x):
    return 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))


@triton.jit
def act_reduce(
    x_ptr, out_ptr, loss_ptr, n_cols, stride,
    ACTIVATION: tl.constexpr,
    reduction: tl.constexpr,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    if ACTIVATION == "gelu":
        x = _gelu(x)
    tl.store(out_ptr + row * stride + cols, x.to(out_ptr.dtype.element_ty), mask=mask)
    total = tl.sum(tl.where(mask, x, 0.0), axis=0)
    if reduction == "mean":
        total = total / n_cols
    tl.store(loss_ptr + row, total)
