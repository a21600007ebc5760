"""A kernel family gated on ``torch.version.cuda`` at import: it exists only where the gate passes.

Mirrors libraries that define their MX-format (microscaling) quantization kernels
only on a CUDA build new enough for them (CUDA 12.8 brought sm_100's block-scaled
formats), and leave them undefined on ROCm, where ``torch.version.cuda`` is None.
The kernel quantizes bf16 rows to fp8 e4m3 with one power-of-two (e8m0) scale per
32 elements, stored as ``u8``. Launched as
``mx_quantize_fp8[(n_rows,)](x, out, scales, n_rows, n_cols, x.stride(0), out.stride(0),
scales.stride(0), BLOCK_COLS=triton.next_power_of_2(n_cols))``.
Written for tritonscope's tests, not copied.
"""
import torch
import triton
import triton.language as tl

_CUDA = tuple(int(v) for v in torch.version.cuda.split(".")[:2]) if torch.version.cuda else (0, 0)
HAS_MX = _CUDA >= (12, 8)

if HAS_MX:
    @triton.jit
    def mx_quantize_fp8(
        x_ptr, out_ptr, scale_ptr, n_rows, n_cols, stride_x, stride_out, stride_scale,
        BLOCK_COLS: tl.constexpr, MX_BLOCK: tl.constexpr = 32,
    ):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK_COLS)
        x = tl.load(x_ptr + row * stride_x + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        blocks = tl.reshape(x, (BLOCK_COLS // MX_BLOCK, MX_BLOCK))
        amax = tl.max(tl.abs(blocks), axis=1)
        exponent = tl.ceil(tl.log2(tl.maximum(amax, 1e-30) / 448.0))   # 448: e4m3's largest value
        q = (blocks / tl.exp2(exponent)[:, None]).to(tl.float8e4nv)
        tl.store(out_ptr + row * stride_out + cols, tl.reshape(q, (BLOCK_COLS,)), mask=cols < n_cols)
        nb = tl.arange(0, BLOCK_COLS // MX_BLOCK)
        tl.store(scale_ptr + row * stride_scale + nb, (exponent + 127).to(tl.uint8),
                 mask=nb < tl.cdiv(n_cols, MX_BLOCK))
