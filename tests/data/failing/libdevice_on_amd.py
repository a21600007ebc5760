"""A CUDA libdevice call (tl.extra.cuda.libdevice) compiled for an AMD GPU.

Triton 3.6 and 3.9 fail for gfx942 after the llir stage's passes, in
make_llir's Python ("Implicit conversion of CUDA __nv_rsqrtf device function
has been dropped"): no pass fails, so no reproducer; tl.extra.libdevice.rsqrt
is the fix.  tests/test_failure.py compiles it:

    tritonscope compile tests/data/failing/libdevice_on_amd.py:rsqrt_kernel --arch gfx942 \
        --arg x_ptr='*fp32' --arg out_ptr='*fp32' --arg n=1024 -c BLOCK=256
"""

import triton
import triton.language as tl


@triton.jit
def rsqrt_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.extra.cuda.libdevice.rsqrt(x)
    tl.store(out_ptr + offs, y, mask=mask)
