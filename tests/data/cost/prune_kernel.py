import triton, tritonscope
import triton.language as tl
from triton import Config


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


if __name__ == "__main__":
    hook = tritonscope.prune_by_prediction(2, grid=lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),),
                                           kernel=add_kernel, arch="sm_90a", gpu="H100")
    cfgs = [Config({"BLOCK": b}, num_warps=w) for b in (128, 1024, 4096) for w in (1, 4)]
    n = 1 << 24
    out = hook(cfgs, {"x_ptr": f"fp32[{n}]", "y_ptr": f"fp32[{n}]", "out_ptr": f"fp32[{n}]", "n": n})
    print([str(c) for c in out])
    print(hook.last)
