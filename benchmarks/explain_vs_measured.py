"""explain's static time bound against the measured time, config by config (needs a CUDA GPU).

    python benchmarks/explain_vs_measured.py                    # gpu_matmul --tune configs + seed 002, 3 shapes
    python benchmarks/explain_vs_measured.py --shapes 4096 --rep 50
    python benchmarks/explain_vs_measured.py --json out.json

For every config of `benchmarks/gpu_matmul.py --tune` and of seed 002's
block-size sweep (matmul_masked, fp32, BLOCK_SIZE 32/64/128/256), at 1024^3,
4096^3 and 8192^3: compile it for the local GPU (the compile a launch does),
ask `explain` for its roofline bound on this GPU (its datasheet peaks and SM
count), and time it with tritonscope.measure.bench (do_bench: CUDA events, L2
flushed, median).  Prints per config the bound, the measured time and their
ratio, flags any bound ABOVE the measured time (a bound must never be), and
the Spearman rank correlation of bound and measured time across configs
(all together, and within each shape).  Configs that do not fit are listed
and skipped.  Exit code 1 when a bound is above a measured time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

SEED_002 = [("matmul_masked", {"BLOCK_SIZE": b}, 4, 3, "fp32") for b in (32, 64, 128, 256)]


def ranks(xs: list[float]) -> list[float]:
    """Average ranks (1-based), ties sharing the mean of their positions."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    out = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(xs: list[float], ys: list[float]) -> float | None:
    """Spearman's rho: Pearson correlation of the ranks (None with fewer than 3 points or no spread)."""
    if len(xs) < 3:
        return None
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    vx = sum((a - mx) ** 2 for a in rx)
    vy = sum((b - my) ** 2 for b in ry)
    if not vx or not vy:
        return None
    return cov / (vx * vy) ** 0.5


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="1024,4096,8192", help="comma-separated sizes n (n x n x n)")
    ap.add_argument("--rep", type=int, default=60, help="do_bench repetition time in ms")
    ap.add_argument("--warmup", type=int, default=10, help="do_bench warm-up time in ms")
    ap.add_argument("--json", default=None, help="write every figure to this JSON file")
    ap.add_argument("--only", default=None, help="only configs whose label contains this text")
    ap.add_argument("--dry-run", action="store_true", help="no GPU: compile for sm_90a and print the H200 bounds only")
    args = ap.parse_args()

    from gpu_matmul import TUNE, header, load
    from tritonscope.measure import runner
    from tritonscope.analyses.analysis import analyze
    from tritonscope.measure.bench import bench_loaded, peaks_for
    from tritonscope.pipeline.triton_compile import compile_artifact
    from tritonscope.core.errors import TritonscopeError
    from tritonscope.analyses.explain import Shape, explain

    if args.dry_run:
        from tritonscope.inputs.kernels import Request
        from tritonscope.pipeline.binding import build_spec

        def load(sample, n, cx, warps, stages, dtype):  # noqa: F811 (the dry run's stand-in: no torch, no GPU)
            cx = {k: str(v) for k, v in cx.items()}
            if sample == "matmul_persistent":
                cx.setdefault("NUM_SMS", "132")
            return build_spec(Request(sample, constexprs=cx, num_warps=warps, num_stages=stages,
                                      shape=f"{n}x{n}x{n}", dtype=dtype, arch="sm_90a"), "sm_90a")
        gpu = "H200"
        print("dry run: no GPU, bounds for an H200 only", flush=True)
    else:
        import torch

        runner.require_gpu("explain_vs_measured")
        print(header(), flush=True)
        gpu, _ = peaks_for(runner.device_name())
        print(f"datasheet peaks: {gpu or 'none for this device (no bound)'}; SMs "
              f"{torch.cuda.get_device_properties(0).multi_processor_count}", flush=True)
    shapes = [int(s) for s in args.shapes.split(",")]
    configs = [(s, cx, w, st, "fp16") for s, cx, w, st in TUNE] + SEED_002
    rows = []
    started = time.time()
    print(f"{'config':<92} {'n':>5} {'bound ms':>9} {'meas ms':>9} {'meas/bound':>10} {'bound':>8}  note", flush=True)
    for sample, cx, warps, stages, dtype in configs:
        for n in shapes:
            loaded = load(sample, n, cx, warps, stages, dtype)
            spec = loaded.spec
            label = f"{sample} {spec.label()}"
            if args.only and args.only not in label:
                continue
            row = {"config": label, "sample": sample, "n": n, "constexprs": dict(spec.constexprs),
                   "num_warps": spec.num_warps, "num_stages": spec.num_stages, "dtype": dtype}
            try:
                artifact = compile_artifact(loaded)
            except TritonscopeError as e:
                row.update(status="compile failed", note=e.message.splitlines()[0])
                rows.append(row)
                print(f"{label:<92} {n:>5} {'':>9} {'':>9} {'':>10} {'':>8}  {row['note']}", flush=True)
                continue
            analysis = analyze(artifact)
            if analysis.summary.fit is not None and not analysis.summary.fit.ok:
                row.update(status="does not fit", note="; ".join(analysis.summary.fit.problems))
                rows.append(row)
                print(f"{label:<92} {n:>5} {'':>9} {'':>9} {'':>10} {'':>8}  does not fit", flush=True)
                continue
            shape = Shape((n, n, n), spec.grid, dict(spec.args), (loaded.launch or {}).get("flops"))
            expl = explain(analysis, shapes=[shape], gpu=gpu, triton_banks=False)
            roof = next((v for v in expl.of("roofline")), None)
            bound_ms = roof.facts.get("bound_s", 0) * 1e3 if roof and roof.facts.get("bound_s") else None
            if args.dry_run:
                bench = None
                measured = None
            else:
                bench = bench_loaded(loaded, artifact=artifact, warmup=args.warmup, rep=args.rep, with_torch=False)
                measured = bench.kernel.ms if bench.kernel else None
            row.update(status=bench.status if bench else "dry run", bound_ms=bound_ms, measured_ms=measured,
                       bound=roof.facts.get("bound") if roof else None,
                       flops=roof.facts.get("flops") if roof else None,
                       compute_ms=(roof.facts.get("compute_s") or 0) * 1e3 if roof else None,
                       memory_ms=(roof.facts.get("memory_s") or 0) * 1e3 if roof else None,
                       peak_kind=roof.facts.get("peak_kind") if roof else None)
            above = bound_ms is not None and measured is not None and bound_ms > measured
            row["bound_above_measured"] = above
            rows.append(row)
            if bound_ms is None:  # explain says why it gives no bound (e.g. loop bounds it cannot read)
                row["no_bound"] = roof.title if roof else "no roofline verdict"
            note = ("BOUND ABOVE MEASURED" if above else "") + ("" if row["status"] == "ok" else f" {row['status']}")
            note += f" no bound: {row['no_bound']}" if bound_ms is None else ""

            def fig(x, width=9, places=4):
                return f"{x:{width}.{places}f}" if x else f"{'-':>{width}}"

            ratio = measured / bound_ms if (bound_ms and measured) else None
            print(f"{label:<92} {n:>5} {fig(bound_ms)} {fig(measured)} {fig(ratio, 10, 2)} "
                  f"{row['bound'] or '':>8}  {note.strip()}", flush=True)
            del analysis, expl
            if not args.dry_run:
                torch.cuda.empty_cache()
    timed = [r for r in rows if r.get("bound_ms") and r.get("measured_ms")]
    rho = spearman([r["bound_ms"] for r in timed], [r["measured_ms"] for r in timed])
    print(f"\n{len(timed)} configs timed in {time.time() - started:.0f} s; "
          f"{sum(1 for r in timed if r['bound_above_measured'])} with the bound above the measured time")
    print(f"Spearman rank correlation, bound vs measured, all configs: "
          f"{'n/a' if rho is None else f'{rho:.3f}'}")
    per_shape = {}
    for n in shapes:
        mine = [r for r in timed if r["n"] == n]
        per_shape[n] = spearman([r["bound_ms"] for r in mine], [r["measured_ms"] for r in mine])
        print(f"  within {n}^3 ({len(mine)} configs): "
              f"{'n/a' if per_shape[n] is None else f'{per_shape[n]:.3f}'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"header": header(), "gpu": gpu, "rows": rows, "spearman": rho,
                       "spearman_per_shape": {str(k): v for k, v in per_shape.items()}}, f, indent=1)
    return 1 if any(r["bound_above_measured"] for r in timed) else 0


if __name__ == "__main__":
    sys.exit(main())
