"""Autotune Configs that carry AMD backend options in their kwargs.

Mirrors Triton's matmul tutorial / ROCm Triton kernels, whose AMD configs read
``triton.Config({'BLOCK_SIZE_M': 128, ..., 'waves_per_eu': 2, 'matrix_instr_nonkdim': 16,
'kpack': 2}, num_warps=8, num_stages=2)``: the HIP backend takes these keys as compile
options, not as kernel constexprs. Written for tritonscope's tests, not copied.
"""
import triton
import triton.language as tl


def is_hip():
    # the tutorials' own test: what the active driver's target is, asked at import time
    return triton.runtime.driver.active.get_current_target().backend == "hip"


def get_autotune_config():
    """As Triton's matmul tutorial does: AMD configs carry the HIP backend's options, NVIDIA ones none."""
    if is_hip():
        return [
            triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8,
                           "waves_per_eu": 2, "matrix_instr_nonkdim": 16, "kpack": 2},
                          num_warps=8, num_stages=2),
            triton.Config({"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 4,
                           "waves_per_eu": 0, "matrix_instr_nonkdim": 32, "kpack": 1},
                          num_warps=8, num_stages=2),
        ]
    return [
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=8, num_stages=3),
    ]


@triton.autotune(configs=get_autotune_config(), key=["M", "N", "K"])
@triton.jit
def grouped_matmul(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    in_group = GROUP_M * tiles_n
    first_m = (pid // in_group) * GROUP_M
    size_m = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % in_group) % size_m
    pid_n = (pid % in_group) // size_m
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, tl.cdiv(K, BLOCK_K)):
        ks = k0 * BLOCK_K + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + ks[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn,
             acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))
