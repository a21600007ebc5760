"""What predictions add to a sweep: the cost model's share of each config's compile-and-summarize (GPU-less).

    python benchmarks/predict_speed.py [--jobs 1] [--out speed.json]

For each config of a few kernels (GEMM, layer norm, softmax, vector add), a sweep
row's work is timed in two parts: what a sweep without predictions does (the
compile and its summary) and what predictions add (the cost model's compiled
facts, cost/features.py, and the prediction itself, cost/model.py).  The issue's
goal: a sweep with predictions costs at most 1.2x one without.  Compiles are
cold (a fresh Triton cache), one at a time, so the parts are not mixed up by
parallel workers.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

CASES = [
    ("matmul_grouped", "4096x4096x4096", "fp16", [{"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": 64, "GROUP_M": 8}
                                                  for m in (64, 128) for n in (128, 256)], (4, 8), (3,)),
    ("layer_norm", "4096x8192", "fp16", [{"BLOCK": b} for b in (256, 1024, 4096)], (4, 8), (1,)),
    ("softmax", "4096x8192", "fp32", [{"BLOCK": 8192}], (4, 8, 16), (1,)),
    ("vector_add", "16777216", "fp32", [{"BLOCK": b} for b in (1024, 4096)], (4,), (1,)),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--out", help="write the per-config times here (JSON)")
    args = ap.parse_args()
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="tritonscope-speed-")
    from tritonscope.pipeline.triton_compile import compile_artifact
    from tritonscope.cost import find_gpu, predict_features
    from tritonscope.cost.features import features_of_artifact
    from tritonscope.language.dialects import class_counts, machine_stage
    from tritonscope.pipeline.binding import build_spec
    from tritonscope.inputs.kernels import Request
    from tritonscope.analyses.summary import summarize

    gpu = find_gpu("H100")
    rows = []
    for target, shape, dtype, cxs, warps, stages in CASES:
        for cx in cxs:
            for w in warps:
                for s in stages:
                    req = Request(target, constexprs={k: str(v) for k, v in cx.items()}, num_warps=w, num_stages=s,
                                  shape=shape, dtype=dtype, arch=args.arch)
                    t0 = time.perf_counter()
                    loaded = build_spec(req, args.arch)
                    art = compile_artifact(loaded)
                    summary = summarize(art)
                    stage = machine_stage(art.stages) or "ptx"
                    class_counts(stage, art.stages.get(stage, ""))
                    base = time.perf_counter() - t0
                    t1 = time.perf_counter()
                    f = features_of_artifact(art, summary)
                    p = predict_features(f, gpu)
                    extra = time.perf_counter() - t1
                    rows.append({"config": loaded.spec.label(options=True), "without_s": base, "predictions_s": extra,
                                 "ratio": (base + extra) / base, "predicted_ms": p.predicted_ms})
                    print(f"{rows[-1]['config']:<55} sweep row {base:6.2f} s + predictions {extra:5.2f} s "
                          f"= {rows[-1]['ratio']:.3f}x", flush=True)
    total = sum(r["without_s"] for r in rows)
    extra = sum(r["predictions_s"] for r in rows)
    print(f"\n{len(rows)} configs: a sweep without predictions {total:.1f} s, predictions add {extra:.1f} s: "
          f"{(total + extra) / total:.3f}x (worst config {max(r['ratio'] for r in rows):.3f}x, "
          f"median {statistics.median(r['ratio'] for r in rows):.3f}x); goal <= 1.2x")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"rows": rows, "without_s": total, "predictions_s": extra, "ratio": (total + extra) / total}, fh,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
