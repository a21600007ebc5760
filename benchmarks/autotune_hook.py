"""prune_by_prediction inside real libraries' @triton.autotune kernels: first-call autotune time and the pick.

    python benchmarks/autotune_hook.py --json autotune_hook.json        # on a GPU (about 6-8 minutes)
    python benchmarks/autotune_hook.py --quick                          # one turn: a dry run
    python benchmarks/autotune_hook.py --list                           # GPU-less: the kernels and their configs

For each zoo kernel below (an autotuned kernel of liger-kernel, fla-core, megatron-core, or the zoo's
tutorial-style grouped matmul), a realistic launch of the library's own host function is made in a fresh
process with a fresh, empty TRITON_CACHE_DIR, and the first call is timed (cold caches: the autotuner compiles
and benchmarks its configs, then launches the winner):

  plain   the library's autotuner as shipped;
  hook    the same, with `tritonscope.prune_by_prediction(TOP, grid="launch")` as its early_config_prune: the
          configs are compiled GPU-less in parallel workers, predicted, and only the predicted top TOP distinct
          kernels (one more on a predicted tie) are benchmarked (their compiles are then loaded from Triton's
          cache).  The hook is made before the timed call, where a program makes it; its imports then
          (`hook_made_s`) are recorded apart.

The two are taken in turns (plain then hook, then hook then plain, ...), each in its own process, turn by turn
over every case; no new turn starts after --budget seconds (400: the whole run stays under about 8 minutes, so
the second turn may cover only some cases).  The second process of each turn, after its measured call, times
both modes' picks with triton.testing.do_bench in turns (ROUNDS rounds, median each), launched as the
autotuner's benchmark launches them; the hook's pick is given as a ratio to the full autotune's.  `tritonscope`
is imported before the timed call (a program imports it when it defines its kernels); its import time is
recorded apart.

Prints a table; --json writes every measurement.  Needs torch, triton and the libraries (the device machine's
wheels in .whl/, installed to /tmp/site and put on PYTHONPATH).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ROUNDS = 3          # do_bench rounds, in turns, when the two picks are timed
BUDGET_S = 400.0    # no new turn of a case starts after this many seconds (the device call has 600)


# --------------------------------------------------------------------------
# The kernels: the zoo's name, where the Autotuner is, and a launch at a realistic shape
# --------------------------------------------------------------------------


def _tutorial_matmul_configs():
    """Triton's matmul tutorial (03) CUDA configs for fp16, with the zoo kernel's constexpr names: the zoo's
    grouped_matmul (tests/zoo/patterns/amd_options.py) ships 2 NVIDIA configs, so it is given these 8."""
    import triton

    rows = [(128, 256, 64, 3, 8), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4), (128, 64, 32, 4, 4),
            (64, 128, 32, 4, 4), (128, 32, 32, 4, 4), (64, 32, 32, 5, 2), (32, 64, 32, 5, 2)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_stages=s, num_warps=w)
            for m, n, k, s, w in rows]


def _liger_dyt_fwd():
    import torch
    from liger_kernel.ops import dyt

    x = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    alpha = torch.full((1,), 0.5, device="cuda", dtype=torch.bfloat16)
    gamma = torch.randn(4096, device="cuda", dtype=torch.bfloat16)
    beta = torch.randn(4096, device="cuda", dtype=torch.bfloat16)
    return lambda: dyt.liger_dyt_fwd(x, alpha, gamma, beta)


def _liger_dyt_bwd():
    import torch
    from liger_kernel.ops import dyt

    x = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    dy = torch.randn_like(x)
    alpha = torch.full((1,), 0.5, device="cuda", dtype=torch.bfloat16)
    gamma = torch.randn(4096, device="cuda", dtype=torch.bfloat16)
    beta = torch.randn(4096, device="cuda", dtype=torch.bfloat16)
    return lambda: dyt.liger_dyt_bwd(dy, x, alpha, gamma, beta)


def _fla_l2norm_fwd():
    import torch
    from fla.modules.norm.l2norm import l2norm_fwd

    x = torch.randn(131072, 128, device="cuda", dtype=torch.bfloat16)
    return lambda: l2norm_fwd(x)


def _fla_kkt():
    import torch
    from fla.ops.common.chunk_scaled_dot_kkt import chunk_scaled_dot_kkt_fwd

    k = torch.randn(4, 2048, 16, 128, device="cuda", dtype=torch.bfloat16)
    g = torch.randn(4, 2048, 16, device="cuda", dtype=torch.float32).cumsum(1) * 0.01
    beta = torch.rand(4, 2048, 16, device="cuda", dtype=torch.bfloat16)
    return lambda: chunk_scaled_dot_kkt_fwd(k, g=g, beta=beta)


def _fla_solve_tril_64():
    import torch
    from fla.ops.utils.solve_tril import solve_tril

    a = torch.randn(4, 2048, 16, 64, device="cuda", dtype=torch.float32) * 0.05
    rows = torch.arange(2048, device="cuda") % 64
    a = a.masked_fill(torch.arange(64, device="cuda")[None, None, None, :] >= rows[None, :, None, None], 0.0)
    return lambda: solve_tril(a)


def _megatron_rope_q():
    import torch
    from megatron.core.fusions.fused_mla_yarn_rope_apply import ApplyMLARotaryEmbQ

    q = torch.randn(4096, 1, 128, 192, device="cuda", dtype=torch.bfloat16)
    cos = torch.randn(4096, 1, 1, 64, device="cuda", dtype=torch.float32)
    sin = torch.randn(4096, 1, 1, 64, device="cuda", dtype=torch.float32)

    def run():
        with torch.no_grad():
            return ApplyMLARotaryEmbQ.apply(q, cos, sin, 128, 64, None, 0, 1)
    return run


def _megatron_rope_kv():
    import torch
    from megatron.core.fusions.fused_mla_yarn_rope_apply import ApplyMLARotaryEmbKV

    kv = torch.randn(4096, 1, 128, 256, device="cuda", dtype=torch.bfloat16)
    k_pos = torch.randn(4096, 1, 1, 64, device="cuda", dtype=torch.bfloat16)
    cos = torch.randn(4096, 1, 1, 64, device="cuda", dtype=torch.float32)
    sin = torch.randn(4096, 1, 1, 64, device="cuda", dtype=torch.float32)

    def run():
        with torch.no_grad():
            return ApplyMLARotaryEmbKV.apply(kv, k_pos, cos, sin, 64, 128, 128, None, 0, 1)
    return run


def _grouped_matmul():
    import torch
    import triton

    mod = _import_file(os.path.join(ROOT, "tests", "zoo", "patterns", "amd_options.py"), "zoo_amd_options")
    m = n = k = 4096
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)

    def run():
        grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)  # noqa: E731
        mod.grouped_matmul[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                 c.stride(0), c.stride(1))
    return run


def _import_file(path: str, name: str):
    import importlib.util

    if name in sys.modules:   # the launch and the tuner lookup share one module object
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


# name (the zoo's), module, kernel attribute, launch builder, shape in words, configs override or None
CASES: list[dict[str, Any]] = [
    {"name": "liger_dyt_fwd", "module": "liger_kernel.ops.dyt", "kernel": "_dyt_fwd_kernel",
     "launch": _liger_dyt_fwd, "shape": "bf16 4096x4096"},
    {"name": "liger_dyt_bwd", "module": "liger_kernel.ops.dyt", "kernel": "_dyt_bwd_kernel",
     "launch": _liger_dyt_bwd, "shape": "bf16 4096x4096"},
    {"name": "fla_l2norm_fwd", "module": "fla.modules.norm.l2norm", "kernel": "l2norm_fwd_kernel",
     "launch": _fla_l2norm_fwd, "shape": "bf16 131072x128"},
    {"name": "fla_chunk_scaled_dot_kkt", "module": "fla.ops.common.chunk_scaled_dot_kkt",
     "kernel": "chunk_scaled_dot_kkt_fwd_kernel", "launch": _fla_kkt, "shape": "bf16 B4 T2048 H16 K128"},
    {"name": "fla_solve_tril_64", "module": "fla.ops.utils.solve_tril",
     "kernel": "merge_16x16_to_64x64_inverse_kernel", "launch": _fla_solve_tril_64, "shape": "fp32 B4 T2048 H16 BT64"},
    {"name": "megatron_mla_rope_q_fwd", "module": "megatron.core.fusions.fused_mla_yarn_rope_apply",
     "kernel": "rotary_fwd_q_kernel", "launch": _megatron_rope_q, "shape": "bf16 4096x128x192 (DeepSeek-V3 MLA)"},
    {"name": "megatron_mla_rope_kv_fwd", "module": "megatron.core.fusions.fused_mla_yarn_rope_apply",
     "kernel": "rotary_fwd_kv_kernel", "launch": _megatron_rope_kv, "shape": "bf16 4096x128x256 (DeepSeek-V3 MLA)"},
    {"name": "pattern_amd_options_config", "module": None, "file": "tests/zoo/patterns/amd_options.py",
     "kernel": "grouped_matmul", "launch": _grouped_matmul, "shape": "fp16 4096x4096x4096",
     "configs": _tutorial_matmul_configs, "note": "given the matmul tutorial's 8 CUDA configs (it ships 2)"},
]


def case(name: str) -> dict[str, Any]:
    for c in CASES:
        if c["name"] == name:
            return c
    raise SystemExit(f"no case named {name!r} (the cases: {', '.join(c['name'] for c in CASES)})")


def find_tuner(obj):
    """The triton Autotuner (or a subclass: fla's CachedAutotuner) in a kernel's decorator stack (heuristics
    may wrap it), or None."""
    from triton.runtime.autotuner import Autotuner

    seen = 0
    while obj is not None and seen < 8:
        if isinstance(obj, Autotuner):
            return obj
        obj, seen = getattr(obj, "fn", None), seen + 1
    return None


def tuner_of(c: dict[str, Any], module=None):
    """The case's Autotuner (its configs replaced when the case says so)."""
    import importlib

    if module is None:
        module = importlib.import_module(c["module"]) if c.get("module") else \
            _import_file(os.path.join(ROOT, c["file"]), "zoo_amd_options")
    tuner = find_tuner(getattr(module, c["kernel"]))
    if tuner is not None and c.get("configs"):
        tuner.configs = c["configs"]()
    return tuner


def discover(arch: str = "sm_90a") -> list[dict[str, Any]]:
    """GPU-less: each case's kernel loaded as tritonscope loads it (its import's questions to the GPU answered
    for `arch`), with its Autotuner's config count and keys.  What --list prints; the tests check it."""
    sys.path.insert(0, ROOT)
    from tritonscope.inputs.kernels import load_module, module_file

    out = []
    for c in CASES:
        row: dict[str, Any] = {"name": c["name"], "shape": c["shape"], "note": c.get("note")}
        try:
            path = module_file(c["module"]) if c.get("module") else os.path.join(ROOT, c["file"])
            tuner = tuner_of(c, load_module(__import__("pathlib").Path(path), arch))
        except Exception as e:  # a library that is not installed here
            row["error"] = f"{type(e).__name__}: {e}"
            out.append(row)
            continue
        row.update(configs=len(tuner.configs) if tuner else 0, key=list(getattr(tuner, "keys", []) or []),
                   has_pruner=bool(getattr(tuner, "early_config_prune", None)))
        out.append(row)
    return out


# --------------------------------------------------------------------------
# The plan: who runs when
# --------------------------------------------------------------------------


def plan(names: list[str], turns: int, start: int = 0) -> list[tuple[str, str, int]]:
    """(case, mode, turn) in the order they run: turn by turn over every case (so a run cut short by its time
    budget still has every case's first turn), plain and hook back to back, plain first in even turns and hook
    first in odd ones (neither always runs right after the other)."""
    order = []
    for t in range(start, start + turns):
        modes = ("plain", "hook") if t % 2 == 0 else ("hook", "plain")
        for name in names:
            order.extend((name, m, t) for m in modes)
    return order


# --------------------------------------------------------------------------
# One measurement (a child process)
# --------------------------------------------------------------------------


def config_dict(cfg) -> dict[str, Any]:
    return {"kwargs": dict(cfg.kwargs), "num_warps": cfg.num_warps, "num_stages": cfg.num_stages,
            "num_ctas": getattr(cfg, "num_ctas", 1), "maxnreg": getattr(cfg, "maxnreg", None)}


def config_of(d: dict[str, Any]):
    import triton

    kw = {"num_warps": d["num_warps"], "num_stages": d["num_stages"], "num_ctas": d.get("num_ctas") or 1}
    if d.get("maxnreg") is not None:
        kw["maxnreg"] = d["maxnreg"]
    return triton.Config(dict(d["kwargs"]), **kw)


def child_first_call(name: str, mode: str, top: int, other: dict[str, Any] | None = None) -> dict[str, Any]:
    """The first call of the case's launch, cold, in this (fresh) process: its seconds, the pick, and what the
    autotuner compiled (Triton's compilation listener: cache hits and misses in this process).  `other`: the
    pick of the other mode in this turn; after the measured call, both picks are timed here (time_picks)."""
    t_start = time.perf_counter()
    import torch

    c = case(name)
    imported = time.perf_counter()
    out: dict[str, Any] = {"case": name, "mode": mode}
    hook = None
    if mode == "hook":   # made where a program makes it: with its kernel, before its inputs
        t = time.perf_counter()
        import tritonscope

        out["import_s"] = time.perf_counter() - t
        hook = tritonscope.prune_by_prediction(top, grid="launch")
    else:                # Triton's cache key, which the hook computes in the background while the inputs are made
        _triton_key()
    run = c["launch"]()
    tuner = tuner_of(c)
    ready = time.perf_counter()
    out["configs"] = len(tuner.configs)
    if hook is not None:
        tuner.early_config_prune = hook
    compiles = {"hit": 0, "miss": 0}
    import triton

    def listener(*, src, metadata, metadata_group, times, cache_hit):
        compiles["hit" if cache_hit else "miss"] += 1

    triton.knobs.compilation.listener = listener
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    run()
    torch.cuda.synchronize()
    out["first_call_s"] = time.perf_counter() - t0
    triton.knobs.compilation.listener = None
    best = getattr(tuner, "best_config", None)
    out["pick"] = config_dict(best) if best is not None else None
    out["pick_text"] = str(best)
    out["benchmarked"] = len(getattr(tuner, "configs_timings", {}) or {})
    out["bench_s"] = getattr(tuner, "bench_time", None)
    out["compiles_here"] = compiles
    if hook is not None:
        out["hook_s"] = hook.seconds
        out["hook_made_s"] = getattr(hook, "made_s", None)   # its imports, when the program makes it (not timed)
        out["same_kernel"] = sum(1 for r in hook.last if r.get("sass_digest")) - \
            len({r["sass_digest"] for r in hook.last if r.get("sass_digest")})
        out["hook_phases"] = getattr(hook, "phases", None)
        out["hook_rows"] = hook.last
        out["workers"] = len({r.get("worker") for r in hook.last if r.get("worker")})
        out["predicted"] = sum(1 for r in hook.last if r.get("predicted_ms") is not None)
        out["pruned_by_bound"] = sum(1 for r in hook.last if r.get("bound_ms") is not None)
    out["setup_s"] = {"import_torch": imported - t_start, "library_and_inputs": ready - imported}
    if other is not None and best is not None:
        mine = config_dict(best)
        out["timed"] = {"same": True} if config_of(other) == config_of(mine) else \
            {"same": False, **time_picks(tuner, run, [config_of(mine), config_of(other)])}
    return out


def child_diagnose(name: str) -> dict[str, Any]:
    """Every config of the case, in this (fresh) process: the kernel alone and as the autotuner's benchmark runs
    it (its pre/post hooks: restore_value's copies), timed with do_bench in turns (ROUNDS rounds, median), beside
    the model's prediction for it (the hook's rows with every config kept).  Why a pick misses: a model error,
    or a cost the autotuner's timing adds."""
    import torch
    import triton.testing

    import tritonscope

    c = case(name)
    run = c["launch"]()
    tuner = tuner_of(c)
    configs = list(tuner.configs)
    seen: dict[str, Any] = {}

    def capture(cfgs, nargs, **kwargs):
        seen.update(nargs=dict(nargs), kwargs=dict(kwargs))
        return cfgs[:1]

    tuner.early_config_prune, tuner.perf_model = capture, None
    tuner.cache.clear()
    run()
    torch.cuda.synchronize()
    hook = tritonscope.prune_by_prediction(len(configs), grid="launch", kernel=tuner.fn)
    hook(configs, seen["nargs"], **seen["kwargs"])
    rows = {str(cfg): dict(r) for cfg, r in zip(configs, hook.last)}
    args, meta = list(seen["nargs"].values()), seen["kwargs"]
    calls = []
    for cfg in configs:
        current = dict(meta, **cfg.all_kwargs())
        full = {**seen["nargs"], **current}

        def alone(current=current):
            tuner.fn.run(*args, **current)

        def hooked(cfg=cfg, current=current, full=full):
            if cfg.pre_hook:
                cfg.pre_hook(full)
            tuner.pre_hook(full)
            tuner.fn.run(*args, **current)
            tuner.post_hook(full, exception=None)
        calls.append((alone, hooked))
    times = [([], []) for _ in configs]
    for _ in range(ROUNDS):
        for i, (alone, hooked) in enumerate(calls):
            times[i][0].append(triton.testing.do_bench(alone, warmup=25, rep=100))
            times[i][1].append(triton.testing.do_bench(hooked, warmup=25, rep=100))
    out = []
    for cfg, (a, h) in zip(configs, times):
        r = rows.get(str(cfg), {})
        out.append({"config": str(cfg), "kernel_ms": statistics.median(a), "autotuner_ms": statistics.median(h),
                    "predicted_ms": r.get("predicted_ms"), "regime": r.get("regime"), "why": r.get("why")})
    return {"case": name, "rows": out, "restore_value": list(getattr(tuner, "restore_value", []) or [])}


def _triton_key() -> None:
    """Triton's cache key (SHA-256 over its library), computed now: a plain process computes it before the timed
    call as the hook process does in the background (tritonscope's warm-up), so neither time counts it."""
    try:
        import triton.runtime.cache as cache

        cache.triton_key()
    except Exception:
        pass


def time_picks(tuner, run, configs: list) -> dict[str, Any]:
    """`configs` timed with triton.testing.do_bench in this process, in turns (ROUNDS rounds, median each): the
    launch's own arguments are captured from the autotuner (its pruner slot), then each config is launched as
    the autotuner's benchmark launches it (Autotuner._bench's kernel call)."""
    import triton.testing

    seen: dict[str, Any] = {}

    def capture(cfgs, nargs, **kwargs):
        seen.update(nargs=dict(nargs), kwargs=dict(kwargs))
        return cfgs[:1]

    tuner.configs, tuner.early_config_prune, tuner.perf_model = list(configs), capture, None
    tuner.cache.clear()
    run()
    args, meta = list(seen["nargs"].values()), seen["kwargs"]

    def call_of(cfg):
        current = dict(meta, **cfg.all_kwargs())
        full = {**seen["nargs"], **current}

        def call():
            if cfg.pre_hook:
                cfg.pre_hook(full)
            tuner.pre_hook(full)
            tuner.fn.run(*args, **current)
            tuner.post_hook(full, exception=None)
        return call

    calls = [call_of(cfg) for cfg in configs]
    times: list[list[float]] = [[] for _ in configs]
    for _ in range(ROUNDS):
        for i, call in enumerate(calls):
            times[i].append(triton.testing.do_bench(call, warmup=25, rep=100))
    return {"ms": [statistics.median(t) for t in times], "rounds_ms": times}


# --------------------------------------------------------------------------
# The parent: run the plan, time the picks, report
# --------------------------------------------------------------------------


def _child(argv: list[str], timeout: float) -> dict[str, Any]:
    """Run this script as a child with a fresh, empty Triton cache; its JSON answer (or the error)."""
    with tempfile.TemporaryDirectory(prefix="autotune-hook-") as d:
        env = {**os.environ, "TRITON_CACHE_DIR": os.path.join(d, "cache"), "TRITON_CACHE_AUTOTUNING": "0",
               "TRITONSCOPE_CACHE_DIR": os.path.join(d, "tritonscope")}   # tritonscope's SASS cache cold too
        out_path = os.path.join(d, "out.json")
        started = time.perf_counter()
        try:
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), *argv, "--out", out_path], env=env,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {timeout:.0f} s"}
        wall = time.perf_counter() - started
        if proc.returncode != 0 or not os.path.exists(out_path):
            return {"error": (proc.stderr or proc.stdout or f"exit {proc.returncode}").strip()[-1500:]}
        with open(out_path) as f:
            res = json.load(f)
        res["process_s"] = wall
        return res


def pick_ratio(run: dict[str, Any]) -> float | None:
    """The hook's pick over the full autotune's, from the second child of a turn (which timed both)."""
    timed = run.get("timed")
    if not timed:
        return None
    if timed.get("same"):
        return 1.0
    mine, other = timed["ms"]
    return mine / other if run["mode"] == "hook" else other / mine


def summarize(name: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One case's row: median first-call seconds per mode, their ratio, and the worst ratio of the hook's pick
    to the full autotune's pick of the same turn (both timed in one process by the turn's second child)."""
    ok = [r for r in runs if "error" not in r]
    plain = [r["first_call_s"] for r in ok if r["mode"] == "plain"]
    hook = [r["first_call_s"] for r in ok if r["mode"] == "hook"]
    row: dict[str, Any] = {"case": name, "configs": next((r["configs"] for r in ok), None),
                           "turns": len({r["turn"] for r in ok}),
                           "plain_s": statistics.median(plain) if plain else None,
                           "hook_s": statistics.median(hook) if hook else None,
                           "errors": [r["error"] for r in runs if "error" in r]}
    row["time_ratio"] = row["hook_s"] / row["plain_s"] if row["plain_s"] and row["hook_s"] else None
    hooked = [r for r in ok if r["mode"] == "hook"]
    row["benchmarked_with_hook"] = max((r.get("benchmarked") or 0 for r in hooked), default=None)
    row["pruned_by_bound"] = max((r.get("pruned_by_bound") or 0 for r in hooked), default=None)
    row["launch_compiles_missed"] = max(((r.get("compiles_here") or {}).get("miss", 0) for r in hooked), default=None)
    ratios = [x for x in (pick_ratio(r) for r in ok) if x is not None]
    row["pick_ratios"] = ratios
    row["pick_ratio"] = max(ratios) if ratios else None
    return row


def table(rows: list[dict[str, Any]]) -> str:
    head = f"{'kernel':28s} {'cfgs':>4s} {'turns':>5s} {'plain s':>8s} {'hook s':>8s} {'hook/plain':>10s} {'benched':>7s} " \
           f"{'pick/full':>9s}  note"
    lines = [head, "-" * len(head)]
    for r in rows:
        def f(v, fmt):
            return format(v, fmt) if v is not None else "-"
        note = "; ".join(e.splitlines()[-1][:60] for e in r["errors"]) if r["errors"] else ""
        lines.append(f"{r['case']:28s} {f(r['configs'], '4d'):>4s} {f(r.get('turns'), '5d'):>5s} "
                     f"{f(r['plain_s'], '8.2f'):>8s} "
                     f"{f(r['hook_s'], '8.2f'):>8s} {f(r['time_ratio'], '10.2f'):>10s} "
                     f"{f(r['benchmarked_with_hook'], '7d'):>7s} {f(r['pick_ratio'], '9.3f'):>9s}  {note}")
    return "\n".join(lines)


def diagnose(names: list[str], path: str | None) -> int:
    """--diagnose: each case in a fresh child (child_diagnose); a table per case, the JSON to `path`."""
    found = {}
    for n in names:
        case(n)
        res = _child(["--child", n, "--mode", "diagnose"], timeout=240)
        found[n] = res
        if "error" in res:
            print(f"{n}: {res['error'].splitlines()[-1][:160]}")
            continue
        print(f"{n} (restore_value: {res['restore_value'] or 'none'})")
        for r in res["rows"]:
            pred = f"{r['predicted_ms']:.4f}" if r.get("predicted_ms") is not None else (r.get("why") or "-")[:40]
            print(f"  {r['config'][:48]:48s} kernel {r['kernel_ms']:.4f} ms  as autotuned {r['autotuner_ms']:.4f} ms"
                  f"  predicted {pred} {r.get('regime') or ''}")
    if path:
        with open(path, "w") as f:
            json.dump(found, f, indent=1, default=str)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write every measurement here")
    ap.add_argument("--quick", action="store_true", help="one turn per mode (a dry run)")
    ap.add_argument("--turns", type=int, default=2, help="turns per mode (default 2)")
    ap.add_argument("--start-turn", type=int, default=0, help="number the turns from this one (1: hook first, as a "
                                                              "second turn of an earlier run)")
    ap.add_argument("--top", type=int, default=3, help="the hook's top k (default 3)")
    ap.add_argument("--cases", help="comma-separated case names (default: all)")
    ap.add_argument("--list", action="store_true", help="GPU-less: the kernels and their config counts")
    ap.add_argument("--budget", type=float, default=BUDGET_S, help="start no measurement after this many s")
    ap.add_argument("--diagnose", help="comma-separated cases: every config's kernel time alone and as the "
                                       "autotuner times it, beside its prediction (no autotune timing)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--mode", help=argparse.SUPPRESS)
    ap.add_argument("--other", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        sys.path.insert(0, ROOT)
        res = child_diagnose(args.child) if args.mode == "diagnose" else \
            child_first_call(args.child, args.mode, args.top, json.loads(args.other) if args.other else None)
        with open(args.out, "w") as f:
            json.dump(res, f, default=str)
        return 0
    if args.list:
        for r in discover():
            print(f"{r['name']:28s} {r.get('configs', '-'):>4} configs  key={r.get('key')}  {r['shape']}"
                  + (f"  ({r['note']})" if r.get("note") else "") + (f"  ERROR {r['error']}" if "error" in r else ""))
        return 0
    if args.diagnose:
        return diagnose(args.diagnose.split(","), args.json)
    names = args.cases.split(",") if args.cases else [c["name"] for c in CASES]
    for n in names:
        case(n)
    turns = 1 if args.quick else args.turns
    started = time.perf_counter()
    import compileall   # an installed tritonscope has its bytecode: so has this checkout before the first child

    compileall.compile_dir(os.path.join(ROOT, "tritonscope"), quiet=1)
    runs: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    skipped = []
    first: dict[tuple[str, int], dict[str, Any]] = {}   # the turn's first child, whose pick the second times
    for name, mode, turn in plan(names, turns, args.start_turn):
        before = first.get((name, turn))
        if before is None and time.perf_counter() - started > args.budget:   # a turn is started whole or not
            skipped.append((name, mode, turn))
            continue
        argv = ["--child", name, "--mode", mode, "--top", str(args.top)]
        if before is not None and before.get("pick"):
            argv += ["--other", json.dumps(before["pick"])]
        res = _child(argv, timeout=180)
        res.update(case=name, mode=mode, turn=turn)
        runs[name].append(res)
        if before is None:
            first[(name, turn)] = res
        ratio = pick_ratio(res)
        print(f"  {name} {mode} turn {turn}: " + (f"{res['first_call_s']:.2f} s" if "first_call_s" in res
                                                  else res.get("error", "?").splitlines()[-1][:120])
              + (f"; hook's pick / full autotune's pick: {ratio:.3f}" if ratio is not None else ""), flush=True)
    rows = [summarize(name, runs[name]) for name in names]
    print(table(rows))
    if skipped:
        print(f"not measured (over the {args.budget:.0f} s budget): {len(skipped)} runs "
              f"({', '.join(sorted({f'{n} turn {t}' for n, _, t in skipped}))})")
    if args.json:
        import platform

        info: dict[str, Any] = {"python": platform.python_version(), "turns": turns, "top": args.top,
                                "seconds": time.perf_counter() - started}
        try:
            import torch
            import triton

            info.update(torch=torch.__version__, triton=triton.__version__,
                        device=torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)
        except Exception:
            pass
        with open(args.json, "w") as f:
            json.dump({"info": info, "rows": rows, "runs": runs, "skipped": skipped}, f,
                      indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
