"""A persistent matmul over host-side tensor descriptors (TMA on NVIDIA).

Mirrors Triton's tutorial 09 ``matmul_kernel_descriptor_persistent`` path where the host
builds ``a_desc, b_desc, c_desc`` with
``triton.tools.tensor_descriptor.TensorDescriptor(t, shape, strides, block_shape)`` and the
kernel calls ``.load``/``.store`` on them. The host side, for reference::

    a_desc = TensorDescriptor(a, a.shape, a.stride(), [BLOCK_M, BLOCK_K])

Written for tritonscope's tests, not copied.
"""
import triton
import triton.language as tl


@triton.jit
def descriptor_persistent_matmul(
    a_desc, b_desc, c_desc, M, N, K,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    NUM_PROGRAMS: tl.constexpr,
):
    dtype = c_desc.dtype
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    k_steps = tl.cdiv(K, BLOCK_K)
    for tile in tl.range(tl.program_id(0), tiles_m * tiles_n, NUM_PROGRAMS, flatten=True):
        off_m = (tile // tiles_n) * BLOCK_M
        off_n = (tile % tiles_n) * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_steps):
            off_k = ki * BLOCK_K
            a = a_desc.load([off_m, off_k])
            b = b_desc.load([off_n, off_k])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([off_m, off_n], acc.to(dtype))
