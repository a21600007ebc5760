"""A ``@triton.heuristics`` kernel: ``EVEN_K`` computed from the arguments.

Mirrors Triton's ``ops/matmul.py`` and flash-attention's Triton kernels, which decorate
with ``@triton.heuristics({"EVEN_K": lambda args: args["K"] % (args["BLOCK_K"] * args["SPLIT_K"]) == 0})``
so the masked K loop is compiled out when the sizes divide. Written for tritonscope's
tests, not copied.
"""
import triton
import triton.language as tl


@triton.heuristics({"EVEN_K": lambda args: args["K"] % (args["BLOCK_K"] * args["SPLIT_K"]) == 0})
@triton.jit
def split_k_matmul(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    SPLIT_K: tl.constexpr, EVEN_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_k = tl.program_id(2)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        ks = (k0 * SPLIT_K + pid_k) * BLOCK_K + tl.arange(0, BLOCK_K)
        if EVEN_K:
            a = tl.load(a_ptr + rm[:, None] * stride_am + ks[None, :] * stride_ak)
            b = tl.load(b_ptr + ks[:, None] * stride_bk + rn[None, :] * stride_bn)
        else:
            a = tl.load(a_ptr + rm[:, None] * stride_am + ks[None, :] * stride_ak,
                        mask=ks[None, :] < K, other=0.0)
            b = tl.load(b_ptr + ks[:, None] * stride_bk + rn[None, :] * stride_bn,
                        mask=ks[:, None] < K, other=0.0)
        acc += tl.dot(a, b)
    c = acc.to(c_ptr.dtype.element_ty)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    if SPLIT_K == 1:
        tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, c, mask=mask)
    else:
        tl.atomic_add(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, c, mask=mask)
