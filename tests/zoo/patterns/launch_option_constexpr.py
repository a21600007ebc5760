"""A constexpr named like a launch option: ``num_stages: tl.constexpr``.

Mirrors Triton's tutorial 02 (fused softmax), whose kernel takes ``num_stages`` as a
constexpr and pipelines its row loop with ``tl.range(..., num_stages=num_stages)``; the
launch passes ``num_stages=`` once and Triton gives it to both the kernel and the
compiler. Written for tritonscope's tests, not copied.
"""
import triton
import triton.language as tl


@triton.jit
def softmax_rows(out_ptr, in_ptr, in_stride, out_stride, n_rows, n_cols,
                 BLOCK: tl.constexpr, num_stages: tl.constexpr):
    first = tl.program_id(0)
    step = tl.num_programs(0)
    for row in tl.range(first, n_rows, step, num_stages=num_stages):
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        y = e / tl.sum(e, axis=0)
        tl.store(out_ptr + row * out_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)
