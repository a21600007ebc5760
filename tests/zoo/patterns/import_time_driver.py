"""Autotune configs built at import time from the active driver.

Mirrors Triton's tutorials 03 (matmul: ``is_cuda()`` picks the config list through
``triton.runtime.driver.active.get_current_target()``) and 09 (persistent matmul:
``NUM_SMS`` from ``driver.active.utils.get_device_properties(...)["multiprocessor_count"]``),
and libraries such as fla that ask the driver for the backend and shared memory when a
module is imported. Importing this file needs an active driver for the target.
Written for tritonscope's tests, not copied.
"""
import triton
import triton.language as tl

DEVICE_DRIVER = triton.runtime.driver.active


def is_cuda():
    return DEVICE_DRIVER.get_current_target().backend == "cuda"


def is_hip():
    return DEVICE_DRIVER.get_current_target().backend == "hip"


def _device_index():
    return DEVICE_DRIVER.get_current_device()


NUM_SMS = DEVICE_DRIVER.utils.get_device_properties(_device_index())["multiprocessor_count"]


def _configs():
    if is_hip():
        return [triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "NUM_PROGRAMS": NUM_SMS},
                              num_warps=8, num_stages=2)]
    return [triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "NUM_PROGRAMS": NUM_SMS},
                          num_warps=8, num_stages=3),
            triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "NUM_PROGRAMS": NUM_SMS},
                          num_warps=4, num_stages=4)]


@triton.autotune(configs=_configs(), key=["M", "N", "K"])
@triton.jit
def persistent_matmul(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    NUM_PROGRAMS: tl.constexpr,
):
    start = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    num_tiles = tl.cdiv(M, BLOCK_M) * tiles_n
    for tile in tl.range(start, num_tiles, NUM_PROGRAMS):
        pid_m = tile // tiles_n
        pid_n = tile % tiles_n
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, tl.cdiv(K, BLOCK_K)):
            ks = k0 * BLOCK_K + tl.arange(0, BLOCK_K)
            a = tl.load(a_ptr + rm[:, None] * stride_am + ks[None, :] * stride_ak,
                        mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
            b = tl.load(b_ptr + ks[:, None] * stride_bk + rn[None, :] * stride_bn,
                        mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn,
                 acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))
