"""A module that asks torch for each device's raw CUDA stream at import.

Mirrors libraries that cache the current stream of every device when imported, to
pass to their launches (``kernel[grid](..., stream=STREAMS[dev])`` or a C++
extension): once ``torch.cuda.device_count() > 0`` they call
``torch._C._cuda_getCurrentRawStream(i)``, which a CPU build of torch lacks, so
the import fails under a stand-in unless it answers. The kernel is an in-place
residual add with RMS normalization, launched as
``add_rms_norm[(n_rows,)](x, residual, w, x.stride(0), n_cols, eps, BLOCK=triton.next_power_of_2(n_cols))``.
Written for tritonscope's tests, not copied.
"""
import torch
import triton
import triton.language as tl

STREAMS = {}
if torch.cuda.device_count() > 0:
    STREAMS = {i: torch._C._cuda_getCurrentRawStream(i) for i in range(torch.cuda.device_count())}


@triton.jit
def add_rms_norm(x_ptr, residual_ptr, w_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    x += tl.load(residual_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(residual_ptr + row * stride + cols, x.to(residual_ptr.dtype.element_ty), mask=mask)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(x_ptr + row * stride + cols, (x * rstd * w).to(x_ptr.dtype.element_ty), mask=mask)
