"""Programs that `tritonscope capture` records in the GPU tests and benchmarks (they need a CUDA GPU).

    python tests/gpu/capture_programs.py model       # torch.compile'd model, max-autotune-no-cudagraphs
    python tests/gpu/capture_programs.py autotuned   # a @triton.autotune user kernel
    python tests/gpu/capture_programs.py small       # the checked-in fixture: one plain + one autotuned kernel
    python tests/gpu/capture_programs.py launches N  # N launches of one small kernel (overhead benchmark)
"""

from __future__ import annotations

import sys
import time

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 256}, num_warps=2), triton.Config({"BLOCK": 1024}, num_warps=4),
                          triton.Config({"BLOCK": 2048}, num_warps=8)], key=["n"])
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


def run_add(n: int = 4096, offset: int = 0) -> None:
    base = torch.randn(n + offset, device="cuda")
    x = base[offset:]  # offset > 0: a view whose pointer is not 16-byte aligned
    y = torch.randn(n, device="cuda")
    out = torch.empty(n, device="cuda")
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    torch.testing.assert_close(out, x + y)


def run_autotuned(n: int = 1 << 20) -> None:
    x = torch.randn(n, device="cuda", dtype=torch.float16)
    out = torch.empty_like(x)
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)  # noqa: E731
    for _ in range(3):
        scale_kernel[grid](x, out, n, 0.5)
    torch.testing.assert_close(out, x * 0.5)


class Model(torch.nn.Module):
    """A matmul, a layernorm, a softmax and a pointwise chain."""

    def __init__(self, d: int = 256):
        super().__init__()
        self.linear = torch.nn.Linear(d, d, dtype=torch.float16)
        self.norm = torch.nn.LayerNorm(d, dtype=torch.float16)

    def forward(self, x):
        h = self.norm(self.linear(x))
        h = torch.softmax(h, dim=-1)
        return (torch.nn.functional.gelu(h) * 2.0 + 1.0).sigmoid()


def run_model() -> None:
    torch.manual_seed(0)
    model = Model().cuda()
    compiled = torch.compile(model, mode="max-autotune-no-cudagraphs")
    x = torch.randn(512, 256, device="cuda", dtype=torch.float16)
    with torch.no_grad():
        for _ in range(3):
            out = compiled(x)
        torch.testing.assert_close(out, model(x), atol=2e-2, rtol=2e-2)


def run_launches(count: int) -> None:
    n = 4096
    x, y, out = (torch.randn(n, device="cuda") for _ in range(3))
    grid = (triton.cdiv(n, 1024),)
    for _ in range(10):
        add_kernel[grid](x, y, out, n, BLOCK=1024)
    torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(count):
        add_kernel[grid](x, y, out, n, BLOCK=1024)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    print(f"LAUNCHES {count} {seconds:.6f}")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "small"
    if what == "model":
        run_model()
    elif what == "autotuned":
        run_autotuned()
    elif what == "small":
        run_add()
        run_add(offset=2)   # the same kernel launched with an unaligned view: a second specialization
        run_autotuned(1 << 16)
    elif what == "launches":
        run_launches(int(sys.argv[2]) if len(sys.argv) > 2 else 20000)
    else:
        raise SystemExit(f"unknown program {what!r}")
