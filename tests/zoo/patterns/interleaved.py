"""Runtime parameters after constexpr ones, and runtime defaults after constexprs.

Mirrors vLLM's ``fused_moe_kernel_gptq_awq``, whose signature declares
``N: tl.constexpr, K: tl.constexpr`` before the runtime ``EM`` and the strides,
and SGLang's extend-attention ``_fwd_kernel``, which ends with runtime
parameters that have defaults after its block-size constexprs. A launcher must
bind by name in the kernel's own order; positional runtime / keyword constexpr
binding breaks on both. Written for tritonscope's tests, not copied.
"""
import triton
import triton.language as tl


@triton.jit
def moe_like_gemm(
    a_ptr,
    b_ptr,
    c_ptr,
    sorted_ids_ptr,
    N: tl.constexpr,
    K: tl.constexpr,
    EM,
    num_valid_tokens,
    stride_am,
    stride_be,
    stride_bk,
    stride_cm,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    scale=1.0,
    token_offset=0,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    if pid_m * BLOCK_M >= EM:
        return
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    token = tl.load(sorted_ids_ptr + rows, mask=rows < EM, other=0) + token_offset
    valid = token < num_valid_tokens
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + token[:, None] * stride_am + ks[None, :],
                    mask=valid[:, None] & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * stride_bk + cols[None, :],
                    mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    acc = acc * scale
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < EM) & (cols[None, :] < N))
