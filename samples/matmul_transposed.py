"""Seed 004's matmul: A and/or B transposed through strides, with its pre-fetching loop."""

import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  TM: tl.constexpr, TN: tl.constexpr, TK: tl.constexpr):
    # prologue
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * TM + tl.arange(0, TM)
    rn = pn * TN + tl.arange(0, TN)
    rk = tl.arange(0, TK)
    c = tl.zeros((TM, TN), dtype=tl.float32)
    # pointers to operands: a transposed operand is just another pair of strides
    pa = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    pb = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    # pre-fetch operands
    a = tl.load(pa)
    b = tl.load(pb)
    for k in range(K, 0, -TK):
        c += tl.dot(a, b)
        pa += TK * stride_ak
        pb += TK * stride_bk
        # don't pre-fetch past the last iteration
        check = k > TK
        a = tl.load(pa, mask=check, other=0.0)
        b = tl.load(pb, mask=check, other=0.0)
    # epilogue: rematerialize the indices instead of keeping them live
    rcm = pm * TM + tl.arange(0, TM)
    rcn = pn * TN + tl.arange(0, TN)
    pc = c_ptr + rcm[:, None] * stride_cm + rcn[None, :] * stride_cn
    tl.store(pc, c.to(c_ptr.dtype.element_ty))


def launch(shape, dtype, c):
    M, N, K = shape
    trans_a, trans_b = bool(c.get("TRANS_A")), bool(c.get("TRANS_B"))
    # A transposed: stored K x M, read as M x K through strides (1, M)
    a = f"{dtype}[{M},{K}]" + (".T" if trans_a else "")
    b = f"{dtype}[{K},{N}]" + (".T" if trans_b else "")
    sam, sak = (1, M) if trans_a else (K, 1)
    sbk, sbn = (1, K) if trans_b else (N, 1)
    return {
        "args": {"a_ptr": a, "b_ptr": b, "c_ptr": f"{dtype}[{M},{N}]", "M": M, "N": N, "K": K,
                 "stride_am": sam, "stride_ak": sak, "stride_bk": sbk, "stride_bn": sbn,
                 "stride_cm": N, "stride_cn": 1},
        "grid": (triton.cdiv(M, c["TM"]), triton.cdiv(N, c["TN"])),
        "check": {"c_ptr": lambda a_ptr, b_ptr: (a_ptr.float() @ b_ptr.float())},
        "flops": 2 * M * N * K,
    }


EXAMPLES = {
    "matmul_kernel": {
        "shape": (512, 512, 512),
        "dtype": "fp16",
        "constexprs": {"TM": 64, "TN": 64, "TK": 32},
        "params": {"TRANS_A": 0, "TRANS_B": 0},
        "block": ["TM", "TN"],
        "num_warps": 4,
        "num_stages": 3,
        "launch": launch,
    },
}
