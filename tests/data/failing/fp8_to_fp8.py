"""A cast from one fp8 format to another (e5m2 to e4m3), for AMD and NVIDIA.

For gfx942 (MI300X's fnuz formats), Triton 3.6 and 3.9 fail in
ConvertTritonAMDGPUToLLVM: the AMD lowering of tt.fp_to_fp has no fp8-to-fp8
conversion ("Unsupported conversion from 'f8E5M2FNUZ' to 'f8E4M3FNUZ'", at
the cast's line).  For sm_90a, Triton 3.9 fails in ConvertTritonGPUToLLVM:
the front end gives the cast no rounding mode (it is not to a narrower type)
and the NVIDIA lowering asserts that a conversion to fp8 has one.  Casting
through fp32 (`x.to(tl.float32).to(...)`) compiles on both.
tests/test_failure_round13.py compiles it:

    tritonscope compile tests/data/failing/fp8_to_fp8.py:requantize_kernel --arch gfx942 \
        --arg src_ptr='*fp8e5b16' --arg dst_ptr='*fp8e4b8' --arg n=4096 -c BLOCK=256
    tritonscope compile tests/data/failing/fp8_to_fp8.py:requantize_kernel --arch sm_90a \
        --arg src_ptr='*fp8e5' --arg dst_ptr='*fp8e4nv' --arg n=4096 -c BLOCK=256
"""

import triton
import triton.language as tl


@triton.jit
def requantize_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(src_ptr + offs, mask=mask)
    y = x.to(dst_ptr.dtype.element_ty)
    tl.store(dst_ptr + offs, y, mask=mask)
