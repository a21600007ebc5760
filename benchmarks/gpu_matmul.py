"""Reproduce the README's table: the fast matmul samples vs torch.matmul (cuBLAS).

    python benchmarks/gpu_matmul.py                 # the README table (fp16, 1024^3, 4096^3, 8192^3)
    python benchmarks/gpu_matmul.py --tune          # the tuning sweep that chose the defaults
    python benchmarks/gpu_matmul.py --json out.json # also write every figure

Needs a CUDA GPU, PyTorch and tritonscope (or PYTHONPATH=<repo>).  Prints the
device, the versions and the date first.  Timings: triton.testing.do_bench
(CUDA events, L2 flushed before each repetition, median).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

SHAPES = (1024, 4096, 8192)
SAMPLES = ("matmul_grouped", "matmul_persistent")

# (sample, constexprs, num_warps, num_stages): the configs tried for the defaults
TUNE = [
    ("matmul_grouped", {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, 8, 3),
    ("matmul_grouped", {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64}, 8, 4),
    ("matmul_grouped", {"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64}, 8, 3),
    ("matmul_grouped", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, 4, 4),
    ("matmul_grouped", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, 8, 4),
    ("matmul_persistent", {}, 8, 3),
    ("matmul_persistent", {}, 8, 4),
    ("matmul_persistent", {"EPILOGUE_SUBTILE": False}, 8, 3),
    ("matmul_persistent", {"FLATTEN": False}, 8, 3),
    ("matmul_persistent", {"FLATTEN": False, "WARP_SPECIALIZE": True}, 8, 3),
    ("matmul_persistent", {"FLATTEN": False, "WARP_SPECIALIZE": True}, 8, 4),
    ("matmul_persistent", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, 4, 4),
    ("matmul_persistent", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "FLATTEN": False,
                           "WARP_SPECIALIZE": True}, 4, 4),
    ("matmul_persistent", {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 16}, 8, 3),
]


def header() -> str:
    from tritonscope.measure import runner

    v = runner.versions()
    return (f"device: {runner.device_name()} | triton {v['triton']} | torch {v['torch']} | cuda {v.get('cuda')} | "
            f"python {v['python']} | date {datetime.date.today().isoformat()}")


def load(sample: str, n: int, constexprs: dict | None = None, warps: int | None = None, stages: int | None = None,
         dtype: str = "fp16"):
    from tritonscope.inputs.kernels import Request
    from tritonscope.pipeline.binding import build_spec
    from tritonscope.commands.checks import default_arch

    import torch

    arch = default_arch()
    cx = {k: str(v) for k, v in (constexprs or {}).items()}
    if sample == "matmul_persistent":
        cx.setdefault("NUM_SMS", str(torch.cuda.get_device_properties(0).multi_processor_count))
    return build_spec(Request(sample, constexprs=cx, num_warps=warps, num_stages=stages, shape=f"{n}x{n}x{n}",
                              dtype=dtype, arch=arch), arch)


def table(rows, head: bool = True) -> str:
    out = [] if not head else [f"{'config':<78} {'shape':>6} {'ms':>8} {'TFLOP/s':>8} {'torch':>8} {'x torch':>7} {'%peak':>6} "
           f"{'rel err':>8} status"]
    for r in rows:
        n = r.shape[0] if r.shape else ""
        if r.kernel is None:
            out.append(f"{r.label:<78} {n:>6} {'':>8} {'':>8} {'':>8} {'':>7} {'':>6} {'':>8} {r.status}: {r.problem}")
            continue
        out.append(f"{r.label:<78} {n:>6} {r.kernel.ms:8.4f} {r.kernel.tflops:8.1f} "
                   f"{(r.torch.tflops if r.torch else float('nan')):8.1f} {(r.ratio or float('nan')):7.3f} "
                   f"{(r.peak_fraction or float('nan')):6.1%} {r.check['rel_error']:8.1e} {r.status}")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tune", action="store_true", help="run the tuning sweep instead of the README table")
    ap.add_argument("--shapes", default=None, help="comma-separated sizes n (n x n x n); default 1024,4096,8192 "
                                                   "(4096,8192 with --tune)")
    ap.add_argument("--rep", type=int, default=200, help="do_bench repetition time in ms")
    ap.add_argument("--json", default=None, help="write every figure to this JSON file")
    args = ap.parse_args()

    from tritonscope.measure.bench import bench_configs

    print(header(), flush=True)
    shapes = [int(s) for s in args.shapes.split(",")] if args.shapes else ([4096, 8192] if args.tune else SHAPES)
    if args.tune:
        loadeds = [load(s, n, cx, w, st) for s, cx, w, st in TUNE for n in shapes]
    else:
        loadeds = [load(s, n) for s in SAMPLES for n in shapes]
    print(table([]), flush=True)
    report = bench_configs(loadeds, rep=args.rep, on_row=lambda r: print(table([r], head=False), flush=True),
                           progress=lambda i, total, spec: print(f"[{i + 1}/{total}] {spec.label()} {spec.shape}",
                                                                 file=sys.stderr, flush=True))
    print("\n" + table(report.rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"header": header(), **report.to_dict()}, f, indent=1)
    return 0 if all(r.status in ("ok", "out of resources") for r in report.rows) else 1


if __name__ == "__main__":
    sys.exit(main())
