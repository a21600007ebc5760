"""Unsigned and fnuz fp8 tensors: a ``u32`` lock tensor and an ``fp8e4b8`` weight.

Mirrors split-K and stream-K GEMMs, which pass a tensor of per-tile locks spun on
with ``tl.atomic_cas`` (unsigned, ``torch.uint32``, in the libraries that keep
flags and locks unsigned), and MI300X weight-only fp8 GEMMs, whose weights
are ``torch.float8_e4m3fnuz`` (Triton's ``fp8e4b8``) dequantized with a
per-channel scale. Libraries pick the fp8 type per platform (vLLM's
``current_platform.fp8_dtype()``: ``float8_e4m3fn`` on CUDA, ``float8_e4m3fnuz``
on ROCm): Triton supports the fnuz types only on AMD, and on NVIDIA refuses them
(``type fp8e4b8 not supported in this architecture``) at a launch as here. Launched as
``fp8_weight_split_k_gemm[(tiles, SPLIT_K)](x, w, w_scale, out, locks, M, N, K, ...)``
with ``locks = torch.zeros(tiles, dtype=torch.uint32, device="cuda")``.
Written for tritonscope's tests, not copied.
"""
import triton
import triton.language as tl


@triton.jit
def fp8_weight_split_k_gemm(
    x_ptr, w_ptr, w_scale_ptr, out_ptr, locks_ptr, M, N, K,
    stride_xm, stride_xk, stride_wk, stride_wn, stride_om, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr,
):
    tile = tl.program_id(0)
    pid_k = tl.program_id(1)
    tiles_n = tl.cdiv(N, BLOCK_N)
    pid_m = tile // tiles_n
    pid_n = tile % tiles_n
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        ks = (k0 * SPLIT_K + pid_k) * BLOCK_K + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + rm[:, None] * stride_xm + ks[None, :] * stride_xk,
                    mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        w = tl.load(w_ptr + ks[:, None] * stride_wk + rn[None, :] * stride_wn,
                    mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x, w.to(x.dtype), acc)          # the fnuz weight, dequantized to the activations' dtype
    acc *= tl.load(w_scale_ptr + rn, mask=rn < N, other=0.0)[None, :]
    out = out_ptr + rm[:, None] * stride_om + rn[None, :] * stride_on
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    lock = locks_ptr + tile
    while tl.atomic_cas(lock, 0, 1) == 1:           # the tile's partial sums, one split at a time
        pass
    if pid_k == 0:
        tl.store(out, acc.to(out_ptr.dtype.element_ty), mask=mask)
    else:
        prev = tl.load(out, mask=mask, other=0.0)
        tl.store(out, (prev.to(tl.float32) + acc).to(out_ptr.dtype.element_ty), mask=mask)
    tl.atomic_xchg(lock, 0)

