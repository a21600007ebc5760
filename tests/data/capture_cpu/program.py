"""A program for `tritonscope capture`, with a GPU or without one (`capture --arch sm_90a`, tests/test_capture_cpu.py
and tests/gpu/test_capture_cpu_vs_gpu.py).

It launches a plain kernel (on fresh tensors and on a view whose pointer is not 16-byte aligned), an autotuned
one (three configs, keyed on n) and one with @triton.heuristics under @triton.autotune, on tensors made with
device="cuda", .cuda() and .to("cuda"), and makes the checks a GPU program makes of its tensors and streams.
It reads one kernel output (.item()) and prints it; it checks no kernel's values (with no GPU they are not
computed).

    python tests/data/capture_cpu/program.py
"""

from __future__ import annotations

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


@triton.autotune(configs=[triton.Config({"BLOCK_N": 64}, num_warps=2), triton.Config({"BLOCK_N": 128}, num_warps=4)],
                 key=["n_cols"])
@triton.heuristics({"EVEN_N": lambda args: args["n_cols"] % args["BLOCK_N"] == 0})
@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK_N: tl.constexpr, EVEN_N: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        if EVEN_N:
            acc += tl.load(x_ptr + row * stride + cols).to(tl.float32)
        else:
            acc += tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


def checks(*tensors) -> None:
    """What a GPU program asks of its tensors and streams."""
    for t in tensors:
        assert t.is_cuda and t.device.type == "cuda", t.device
    assert torch.cuda.is_available()
    stream = torch.cuda.current_stream()
    with torch.cuda.device(tensors[0].device):
        assert torch.cuda.current_device() == tensors[0].device.index
    return stream


def main() -> None:
    torch.manual_seed(0)
    n = 4096
    x = torch.randn(n + 2, device="cuda")
    y = torch.randn(n).cuda()
    out = torch.empty(n, device=torch.device("cuda"))
    checks(x, y, out)
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    add_kernel[(triton.cdiv(n, 1024),)](x[2:], y, out, n, BLOCK=1024)  # a view 8 bytes in: not 16-byte aligned

    h = torch.randn(1 << 16, dtype=torch.float16).to("cuda")
    scaled = torch.empty_like(h)
    checks(h, scaled)
    grid = lambda meta: (triton.cdiv(h.numel(), meta["BLOCK"]),)  # noqa: E731
    for _ in range(2):
        scale_kernel[grid](h, scaled, h.numel(), 0.5)

    rows, cols = 64, 1000
    m = torch.randn(rows, cols, device="cuda", dtype=torch.float16)
    sums = torch.empty(rows, device="cuda", dtype=torch.float32)
    row_sum_kernel[(rows,)](m, sums, cols, m.stride(0))
    torch.cuda.synchronize()
    print(f"program: sums[0] = {sums[0].item():.3f} on {sums.device}", flush=True)


if __name__ == "__main__":
    main()
