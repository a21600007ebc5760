"""Kernels with loop-carried values, compiled (no GPU) under `tritonscope capture` by make_found_loop.py.

A recompile from a cache's `.source` renames loop-carried values (Triton's parser drops the names its
front end gave the loop's induction variable and iter_args); one from this Python source does not.
"""

import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + offs, mask=offs < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def online_max_sum_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    running_max = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    running_sum = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + offs, mask=offs < n_cols, other=float("-inf"))
        new_max = tl.maximum(running_max, x)
        running_sum = running_sum * tl.exp(running_max - new_max) + tl.exp(x - new_max)
        running_max = new_max
    total = tl.max(running_max, axis=0)
    tl.store(out_ptr + row, tl.sum(running_sum * tl.exp(running_max - total), axis=0))


if __name__ == "__main__":
    capability = int(sys.argv[1]) if len(sys.argv) > 1 else 90
    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n_cols": "i32", "stride": "i32", "BLOCK": "constexpr"}
    attrs = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]], (3,): [["tt.divisibility", 16]]}
    for fn in (row_sum_kernel, online_max_sum_kernel):
        src = ASTSource(fn=fn, signature=sig, constexprs={(4,): 128}, attrs=attrs)
        triton.compile(src, target=GPUTarget("cuda", capability, 32), options={"num_warps": 4, "num_stages": 3})
