"""prune_by_prediction compiles in forked workers, with tune's lower-bound pruning (issue 36).

- the parallel hook keeps the same top k as predicting every config one by one in this process (the serial
  path, PredictedPrune._predict_one), with the same predictions; a config it did not predict (its lower bound
  above the threshold) could not have ranked;
- its compiles run in worker processes, and land in Triton's cache under the key the in-process compile uses;
- jobs= and TRITONSCOPE_PRUNE_JOBS are checked; grid="launch" reads the grid the launch hands the pruner;
- benchmarks/autotune_hook.py's GPU-free parts: its plan alternates the modes, its summary and table.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
N = 1 << 24
LAUNCH = {"x_ptr": f"fp32[{N}]", "y_ptr": f"fp32[{N}]", "out_ptr": f"fp32[{N}]", "n": N}


def _grid(m):
    import triton

    return (triton.cdiv(m["n"], m["BLOCK"]),)


@pytest.fixture(scope="module")
def kernel_module():
    spec = importlib.util.spec_from_file_location("prune_kernel_hook", DATA / "cost" / "prune_kernel.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def configs():
    from triton import Config

    return [Config({"BLOCK": b}, num_warps=w) for b in (128, 1024, 8192) for w in (1, 8)]


def _cache_entries(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if p.is_dir()} if folder.is_dir() else set()


@pytest.fixture(scope="module")
def runs(kernel_module, configs, tmp_path_factory):
    """One parallel call (2 workers) on a fresh Triton cache, then every config predicted serially in this
    process on the same cache."""
    import tritonscope

    cache = tmp_path_factory.mktemp("triton-cache")
    old = os.environ.get("TRITON_CACHE_DIR")
    os.environ["TRITON_CACHE_DIR"] = str(cache)
    try:
        hook = tritonscope.prune_by_prediction(2, grid=_grid, kernel=kernel_module.add_kernel, arch="sm_90a",
                                               gpu="H100")
        hook.jobs = 2
        kept = hook(configs, {}, **LAUNCH)   # a keyword launch
        rows = list(hook.last)
        after_parallel = _cache_entries(cache)
        serial = [hook._predict_one(kernel_module.add_kernel, dict(LAUNCH), dict(c.kwargs), num_warps=c.num_warps,
                                    num_stages=c.num_stages) for c in configs]
        after_serial = _cache_entries(cache)
    finally:
        if old is None:
            os.environ.pop("TRITON_CACHE_DIR", None)
        else:
            os.environ["TRITON_CACHE_DIR"] = old
    return {"hook": hook, "kept": kept, "rows": rows, "serial": serial, "after_parallel": after_parallel,
            "after_serial": after_serial}


def test_the_parallel_hook_keeps_the_serial_top_k(runs, configs):
    serial_ms = [ms for ms, _ in runs["serial"]]
    assert all(ms is not None for ms in serial_ms), runs["serial"]
    from tritonscope.cost.autotune import short_list

    ranked = sorted(range(len(configs)), key=lambda i: serial_ms[i])
    digests = [r.get("sass_digest") for r in runs["rows"]]
    assert sum(d is not None for d in digests) >= 2   # the workers name each predicted config's kernel
    scored = [(serial_ms[i], i) for i in range(len(configs)) if "predicted_ms" in runs["rows"][i]]
    assert [str(c) for c in runs["kept"]] == [str(configs[i]) for i in short_list(scored, digests, 2)]
    assert [str(c) for c in runs["kept"]][:2] == [str(configs[i]) for i in ranked[:2]] or \
        len({digests[i] for i in ranked[:2]}) < 2   # the serial top 2, unless two of them are one kernel
    kth = serial_ms[ranked[1]]
    for row, ms in zip(runs["rows"], serial_ms):
        if "predicted_ms" in row:   # the same facts, the same prediction
            assert row["predicted_ms"] == pytest.approx(ms, rel=1e-9), row
        else:   # not disassembled: its lower bound was above the threshold, and it could not have ranked
            assert row["bound_ms"] <= ms * (1 + 1e-9) and ms > kth, (row, ms, kth)
    assert sum("predicted_ms" in r for r in runs["rows"]) >= 2


def test_the_short_list_keeps_distinct_kernels_and_one_tie():
    """short_list: a config whose SASS an earlier-ranked one has is skipped (the same kernel), and one config
    more is kept when it is predicted within TIE of the k-th; no Triton needed."""
    from tritonscope.cost.autotune import TIE, short_list

    scored = [(1.0, 0), (1.0, 1), (1.10, 2), (1.2, 3), (1.2 * (1 + TIE / 2), 4), (1.3, 5)]
    digests = ["a", "a", "b", "c", "d", "e"]
    assert short_list(scored, digests, 3) == [0, 2, 3, 4]     # 1 is 0's kernel; 4 ties with 3
    assert short_list(scored, [None] * 6, 3) == [0, 1, 2]     # no digests: plain top 3 (2 is 10% off: no tie)
    assert short_list(scored, digests, 1) == [0]
    assert short_list([(1.0, 0), (1.0 + TIE * 2, 1)], [None, None], 1) == [0]


def test_the_compiles_run_in_worker_processes(runs):
    workers = {r.get("worker") for r in runs["rows"]}
    assert None not in workers and os.getpid() not in workers, runs["rows"]
    assert 1 <= len(workers) <= 2   # jobs=2
    assert all(r["compile_s"] > 0 for r in runs["rows"])


def test_the_worker_compiles_land_in_triton_s_cache_under_the_in_process_key(runs, configs):
    """Each config's compile left its kernel in TRITON_CACHE_DIR, and compiling the same configs again in this
    process (the serial path, the launch's key: tune checks that on the GPU) added no new kernel."""
    assert len(runs["after_parallel"]) >= len(configs)
    assert runs["after_serial"] == runs["after_parallel"]


@pytest.mark.parametrize("jobs,error,words", [
    (0, ValueError, "jobs must be at least 1, got 0"),
    ("2", TypeError, "jobs is how many compile workers to start, a whole number (an int), not '2'"),
    (True, TypeError, "not True (a bool)"),
])
def test_jobs_is_checked_at_decoration(jobs, error, words):
    from tritonscope.cost.autotune import PredictedPrune

    with pytest.raises(error) as e:
        PredictedPrune(2, compile_fn=None, describe_arg=None, grid=(1,), jobs=jobs)
    assert words in str(e.value)


def test_a_bad_jobs_variable_is_refused_at_decoration(monkeypatch):
    import tritonscope
    from tritonscope.cost.autotune import default_jobs

    monkeypatch.setenv("TRITONSCOPE_PRUNE_JOBS", "many")
    with pytest.raises(ValueError, match="TRITONSCOPE_PRUNE_JOBS='many': the compile workers"):
        tritonscope.prune_by_prediction(2, grid=(1,))
    monkeypatch.setenv("TRITONSCOPE_PRUNE_JOBS", "3")
    assert tritonscope.prune_by_prediction(2, grid=(1,)).jobs is None and default_jobs() == 3


def test_grid_launch_reads_the_grid_the_launch_hands_the_pruner(kernel_module, configs):
    """Triton's Autotuner.run passes the launch's grid= on to early_config_prune; without it, nothing is
    pruned on a guess (every config kept, each saying why)."""
    import tritonscope

    hook = tritonscope.prune_by_prediction(2, grid="launch", kernel=kernel_module.add_kernel, arch="sm_90a",
                                           gpu="H100")
    assert hook.grid == "launch"
    two = configs[:3]
    assert hook(two, {}, **LAUNCH) == two
    assert {r["why"] for r in hook.last} == {'not predicted: grid="launch", but the launch passed no grid to the pruner'}
    hook.jobs = 1
    kept = hook(two, {}, grid=_grid, warmup=False, **LAUNCH)
    assert len(kept) == 2 and all("predicted_ms" in r or "bound_ms" in r for r in hook.last), hook.last


# --------------------------------------------------------------------------
# benchmarks/autotune_hook.py, GPU-free
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("autotune_hook_bench",
                                                  Path(__file__).parent.parent / "benchmarks" / "autotune_hook.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_benchmark_alternates_the_modes_turn_by_turn(bench):
    assert bench.plan(["a", "b"], 2) == [("a", "plain", 0), ("a", "hook", 0), ("b", "plain", 0), ("b", "hook", 0),
                                         ("a", "hook", 1), ("a", "plain", 1), ("b", "hook", 1), ("b", "plain", 1)]
    assert bench.plan(["a"], 1) == [("a", "plain", 0), ("a", "hook", 0)]


def test_the_benchmark_summary_and_table(bench):
    """A turn's second child timed both picks: [its own, the other mode's]; the ratio is hook / plain."""
    runs = [{"mode": "plain", "turn": 0, "configs": 18, "first_call_s": 9.0, "pick_text": "A"},
            {"mode": "hook", "turn": 0, "configs": 18, "first_call_s": 3.0, "pick_text": "B", "benchmarked": 3,
             "pruned_by_bound": 5, "compiles_here": {"hit": 3, "miss": 0}, "timed": {"same": False, "ms": [1.02, 1.0]}},
            {"mode": "hook", "turn": 1, "configs": 18, "first_call_s": 2.0, "pick_text": "A", "benchmarked": 3},
            {"mode": "plain", "turn": 1, "configs": 18, "first_call_s": 11.0, "pick_text": "C",
             "timed": {"same": False, "ms": [1.1, 1.0]}},
            {"mode": "plain", "turn": 2, "error": "Traceback...\nRuntimeError: boom"}]
    row = bench.summarize("k", runs)
    assert row["plain_s"] == 10.0 and row["hook_s"] == 2.5 and row["time_ratio"] == 0.25 and row["turns"] == 2
    assert row["pick_ratios"] == [1.02, pytest.approx(1 / 1.1)] and row["pick_ratio"] == 1.02
    assert row["benchmarked_with_hook"] == 3 and row["pruned_by_bound"] == 5 and row["launch_compiles_missed"] == 0
    assert bench.pick_ratio({"mode": "hook", "timed": {"same": True}}) == 1.0
    text = bench.table([row])
    assert "k " in text and "10.00" in text and "0.25" in text and "1.020" in text and "RuntimeError: boom" in text


def test_the_benchmark_kernels_are_the_zoo_s_with_8_configs_or_more(bench):
    """Every case is a zoo entry (tests/zoo manifests) whose autotuner has at least 8 configs; the one given
    more configs says so."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent / "zoo"))
    try:
        from manifest import ZOO
        import manifest_wider
    finally:
        sys.path.pop(0)
    zoo = {e["name"] for e in ZOO} | {e["name"] for v in vars(manifest_wider).values()
                                      if isinstance(v, list) for e in v if isinstance(e, dict) and "name" in e}
    assert len(bench.CASES) >= 8 and {c["name"] for c in bench.CASES} <= zoo
    assert all(c.get("note") for c in bench.CASES if c.get("configs"))
    found = {r["name"]: r for r in bench.discover()}
    missing = [n for n, r in found.items() if "error" in r]
    for name, row in found.items():
        if "error" not in row:
            assert row["configs"] >= 8, row
    assert len(missing) <= len(bench.CASES) - 1, found   # at least the zoo's own pattern kernel loads here
