"""A quantization to fp8 (e4m3) that rounds toward zero
(`fp_downcast_rounding="rtz"`), compiled for gfx950.

Triton's AMD lowering of tt.fp_to_fp converts fp32 to e4m3 rounding to
nearest even only: Triton 3.9 fails in ConvertTritonAMDGPUToLLVM with a C++
assertion (ConvertFpCastOpToLLVM.cpp: `maybeOutVals.has_value()`, no op named,
the op comes from LLVM's dialect-conversion log), Triton 3.6 with "Unsupported
conversion from 'f32' to 'f8E4M3FN' with rounding mode rtz" at the cast's
line.  Without the rounding argument it compiles (rounding to nearest even:
other results).  tests/test_failure_round13.py compiles it:

    tritonscope compile tests/data/failing/fp8_quant_rtz.py:quantize_kernel --arch gfx950 \\
        --arg x_ptr='*fp32' --arg out_ptr='*fp8e4nv' --arg scale=0.5 --arg n=4096 -c BLOCK=256
"""

import triton
import triton.language as tl


@triton.jit
def quantize_kernel(x_ptr, out_ptr, scale, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask) / scale
    q = x.to(tl.float8e4nv, fp_downcast_rounding="rtz")
    tl.store(out_ptr + offs, q, mask=mask)
