"""A GPTQ/AWQ-style MoE GEMM with 4-bit weights, for the `versions` tests (written here, not copied).

The shape of vLLM's ``fused_moe_kernel_gptq_awq`` (the kernel of the 3.4 -> 3.6
MI355X regression): tokens gathered through a sorted-ids table, an expert's
packed int4 weights unpacked with shifts, a zero point and a per-group scale,
then a dot in the compute dtype.  Its loop loads activations, packed weights and
scales every iteration, which is where Triton 3.6's buffer loads on AMD change
where the loop waits for memory.
"""
import triton
import triton.language as tl


@triton.jit
def moe_int4_gemm(
    a_ptr, b_ptr, c_ptr, b_scale_ptr, sorted_token_ids_ptr, expert_ids_ptr,
    N: tl.constexpr, K: tl.constexpr,
    EM, num_valid_tokens,
    stride_am, stride_ak, stride_be, stride_bk, stride_bn, stride_cm, stride_cn,
    stride_bse, stride_bsk, stride_bsn,
    group_size: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
    top_k: tl.constexpr, compute_type: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    if pid_m * BLOCK_SIZE_M >= EM:
        return
    offs_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    token = tl.load(sorted_token_ids_ptr + offs_m)
    token_mask = token < num_valid_tokens
    expert = tl.load(expert_ids_ptr + pid_m).to(tl.int64)
    offs_n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (token[:, None] // top_k * stride_am + offs_k[None, :] * stride_ak)
    # two 4-bit weights per byte along K
    b_ptrs = b_ptr + expert * stride_be + (offs_k[:, None] // 2) * stride_bk + offs_n[None, :] * stride_bn
    shifter = (offs_k % 2) * 4
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=token_mask[:, None] & (offs_k[None, :] < K - k * BLOCK_SIZE_K), other=0.0)
        b = tl.load(b_ptrs)
        b = (b >> shifter[:, None]) & 0xF
        scale_ptrs = (b_scale_ptr + expert * stride_bse + offs_n[None, :] * stride_bsn
                      + ((offs_k[:, None] + BLOCK_SIZE_K * k) // group_size) * stride_bsk)
        scale = tl.load(scale_ptrs)
        b = ((b.to(tl.float32) - 8.0) * scale).to(compute_type)
        acc = tl.dot(a, b, acc=acc)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += (BLOCK_SIZE_K // 2) * stride_bk
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_m[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, acc.to(compute_type), mask=token_mask[:, None] & (offs_cn[None, :] < N))


def launch(shape, dtype, c):
    EM, N, K = shape
    E, G = 8, c["group_size"]
    return {
        "args": {"a_ptr": f"{dtype}[{EM},{K}]", "b_ptr": f"u8[{E},{K // 2},{N}]", "c_ptr": f"{dtype}[{EM},{N}]",
                 "b_scale_ptr": f"{dtype}[{E},{K // G},{N}]", "sorted_token_ids_ptr": f"i32[{EM}]",
                 "expert_ids_ptr": f"i32[{EM // c['BLOCK_SIZE_M']}]", "EM": EM, "num_valid_tokens": EM,
                 "stride_am": K, "stride_ak": 1, "stride_be": K // 2 * N, "stride_bk": N, "stride_bn": 1,
                 "stride_cm": N, "stride_cn": 1, "stride_bse": K // G * N, "stride_bsk": N, "stride_bsn": 1},
        "grid": (triton.cdiv(EM, c["BLOCK_SIZE_M"]), triton.cdiv(N, c["BLOCK_SIZE_N"])),
    }


EXAMPLES = {
    "moe_int4_gemm": {
        "shape": (4096, 4096, 4096),
        "dtype": "fp16",
        "constexprs": {"N": 4096, "K": 4096, "group_size": 128, "BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128,
                       "BLOCK_SIZE_K": 64, "top_k": 2, "compute_type": "tl.float16"},
        "num_warps": 4,
        "num_stages": 2,
        "launch": launch,
    },
}
