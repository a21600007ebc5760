"""What the accuracy-round tests (test_cost*.py) share: benchmarks/predict_vs_measured.py loaded as a module,
a target named relative to the repository, and the two checks every round makes of its held-out groups (the
definition is fresh and covers the issue's kinds; the measured figures are the published ones)."""

from __future__ import annotations

import importlib.util
import math
import os
import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks" / "predict_vs_measured.py"


def load_bench():
    """benchmarks/predict_vs_measured.py as a module (the groups, SPLIT, load_measured, group_figures, report)."""
    spec = importlib.util.spec_from_file_location("predict_vs_measured", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def relative(target: str) -> str:
    """'/any/clone/tests/data/cost/round10/x.py:k' -> 'tests/data/cost/round10/x.py:k'."""
    root = str(ROOT) + "/"
    return target[len(root):] if target.startswith(root) else target


def check_fresh_definition(bench, split: str, kinds: dict[str, list[str]], decode: str,
                           others: set[str] | None = None) -> None:
    """A round's held-out groups as defined: at least 8 groups and 300 configs, none in `others` (default: every
    other split), none a known kernel at a known shape and dtype, each kernel file present under
    tests/data/cost/round1* (zoo wrappers and patterns, no sample), each of the issue's `kinds` covered, and
    the `decode` group at M <= 32."""
    defined = {g["name"]: g for g in bench.groups()}
    fresh = bench.SPLIT[split]
    assert len(fresh) >= 8 and len(set(fresh)) == len(fresh) and set(fresh) <= set(defined)
    assert sum(len(defined[n]["configs"]) for n in fresh) >= 300
    if others is None:
        others = {n for name, names in bench.SPLIT.items() if name != split for n in names}
    assert not set(fresh) & others
    seen = {(defined[n]["target"], defined[n]["shape"], defined[n]["dtype"]) for n in defined if n not in fresh}
    for n in fresh:
        g = defined[n]
        assert (g["target"], g["shape"], g["dtype"]) not in seen, n
        path = g["target"].rsplit(":", 1)[0]
        assert os.path.exists(path) and "/tests/data/cost/round1" in path, n
    for kind, names in kinds.items():
        assert set(names) <= set(fresh), kind
    assert int(defined[decode]["shape"].split("x")[0]) <= 32


def check_published(bench, data, published: dict[str, tuple], *, ranked: int, mean: float, worst: float,
                    regret: float, median: float) -> None:
    """The figures a round publishes, hits and misses: per group (timed configs, spread) exactly and (Spearman,
    regret, median error) no worse than `published`; over the groups with a >= 2x spread (`ranked` of them) the
    mean and worst Spearman at least `mean` and `worst`; the worst regret and the median error at most
    `regret` and `median`."""
    figs = bench.group_figures(data)
    for name, (n, spread, rho, pick, err) in published.items():
        f = figs[name]
        assert (f["n"], round(f["spread"], 1)) == (n, spread), name
        assert f["spearman"] >= rho - 0.005 and f["regret"] <= pick + 0.005, (name, f)
        assert math.expm1(f["median_log_error"]) <= err + 0.005, (name, f)
    spread = [f for f in figs.values() if f["spread"] >= 2]
    assert len(spread) == ranked
    assert statistics.mean(f["spearman"] for f in spread) >= mean
    assert min(f["spearman"] for f in spread) >= worst
    assert max(f["regret"] for f in figs.values()) <= regret
    assert math.expm1(statistics.median(f["median_log_error"] for f in figs.values())) <= median
