"""The tenth accuracy round (issue 36): fresh held-out groups of kernels people run, measured once with the model
untouched (tests/data/cost/h200_measured_round10.json; the device call landed on an H200, so the model predicts
with its H200 datasheet figures).  The file must reproduce the figures the notes publish, its configs must be the
ones benchmarks/round10_groups.py defines, and a model change that does worse on any group fails here."""

import argparse
import math
import statistics
from pathlib import Path

import pytest

from cost_rounds import load_bench, relative

DATA = Path(__file__).parent / "data" / "cost"
MEASURED = DATA / "h200_measured_round10.json"

# (timed configs, spread, spearman, top-1 regret, median error) per group, as --report printed them (2026-11-28).
PUBLISHED10 = {
    "r10-rms-norm": (24, 10.7, 0.82, 1.00, 0.06),
    "r10-cross-entropy": (24, 5.1, 0.66, 1.05, 0.29),
    "r10-sage-attn-fwd": (40, 2.8, 0.69, 1.16, 0.38),
    "r10-w4a16-gemm": (31, 6.1, 0.94, 2.20, 0.32),
    "r10-int8-gemm": (40, 7.2, 0.84, 1.17, 0.23),
    "r10-fp8-gemm": (40, 8.0, 0.88, 1.01, 0.09),
    "r10-decode-m16": (40, 116.1, 0.84, 1.03, 0.26),
    "r10-attn-bwd-dkdv": (36, 7.9, 0.65, 1.16, 1.12),
    "r10-moe-grouped": (40, 6.6, 0.85, 1.16, 0.08),
}


# The same groups after the eleventh round's model changes, which were made looking at them (int8 at the INT8
# rate, exp2 between dependent MMAs serialized, the spill price 9.5 -> 4, loops that only store are no pass):
# (spearman, regret, median error) as --report prints them now.  Better than PUBLISHED10 on 6 groups; worse on
# two, published as such: r10-w4a16-gemm (Spearman 0.94 -> 0.91, error 32% -> 36%) and r10-decode-m16 (0.84 ->
# 0.83, 26% -> 28%), both from the lower spill price.
CHANGED10 = {
    "r10-rms-norm": (0.824, 1.000, 0.063),
    "r10-cross-entropy": (0.812, 1.037, 0.188),
    "r10-sage-attn-fwd": (0.891, 1.037, 0.082),
    "r10-w4a16-gemm": (0.913, 2.195, 0.356),
    "r10-int8-gemm": (0.839, 1.170, 0.076),
    "r10-fp8-gemm": (0.881, 1.008, 0.080),
    "r10-decode-m16": (0.833, 1.029, 0.275),
    "r10-attn-bwd-dkdv": (0.699, 1.000, 0.522),
    "r10-moe-grouped": (0.852, 1.165, 0.077),
}
WORSE10 = {"r10-w4a16-gemm", "r10-decode-m16"}


@pytest.fixture(scope="module")
def bench():
    return load_bench()


@pytest.fixture(scope="module")
def data(bench):
    return bench.load_measured(str(MEASURED))   # each group keeps its run's header: predicted for the H200


def test_round10_file_measures_the_defined_groups(bench, data):
    """Every fresh10 group, in turns, with exactly the configs round10_groups.py defines (seeded, reproducible)."""
    assert [g["name"] for g in data["groups"]] == [g["name"] for g in bench.groups()
                                                   if g["name"] in bench.SPLIT["fresh10"]]
    assert set(bench.SPLIT["fresh10"]) == set(PUBLISHED10) and len(PUBLISHED10) >= 8
    assert not set(bench.SPLIT["fresh10"]) & set(bench.SPLIT["train"])
    assert data["rounds"] == 5 and data["header"]["triton"] == "3.6.0"
    assert data["header"]["device"] == "NVIDIA H200" and bench.gpu_of(data["header"]["device"]) == "H200"
    defined = {g["name"]: g for g in bench.groups()}
    for g in data["groups"]:
        d = defined[g["name"]]
        # the file names its kernels relative to the repository (a clone anywhere reads it)
        assert (g["target"], g["shape"], g["dtype"]) == (relative(d["target"]), d["shape"], d["dtype"])
        assert len(g["rows"]) == len(d["configs"])
        for row, c in zip(g["rows"], d["configs"]):
            assert (row["num_warps"], row["num_stages"]) == (c["num_warps"], c["num_stages"])
            assert all(str(row["constexprs"][k]) == str(v) for k, v in c.items()
                       if k not in ("num_warps", "num_stages")), (g["name"], row["config"])
    assert sum(len(bench.timed_rows(g)) for g in data["groups"]) == 315


def test_round10_figures_are_the_changed_model_s(bench, data):
    """The figures of the current model on round 10 (CHANGED10): a change that does worse on any group fails."""
    figs = bench.group_figures(data)
    for name, (n, spread, _, _, _) in PUBLISHED10.items():
        f = figs[name]
        assert (f["n"], round(f["spread"], 1)) == (n, spread), name
        rho, regret, err = CHANGED10[name]
        assert f["spearman"] >= rho - 0.005 and f["regret"] <= regret + 0.005, (name, f)
        assert math.expm1(f["median_log_error"]) <= err + 0.005, (name, f)
    ranked = [f for f in figs.values() if f["spread"] >= 2]
    assert len(ranked) == 9
    assert statistics.mean(f["spearman"] for f in ranked) >= 0.835
    assert max(f["regret"] for f in figs.values()) <= 2.2
    assert math.expm1(statistics.median(f["median_log_error"] for f in figs.values())) <= 0.085


def test_round10_changes_against_the_untouched_model(bench, data):
    """Against the figures published before the change (PUBLISHED10): no worse, except the two groups named
    in WORSE10, which are published as worse."""
    figs = bench.group_figures(data)
    worse = set()
    for name, (_, _, rho, regret, err) in PUBLISHED10.items():
        f = figs[name]
        if f["spearman"] < rho - 0.005 or f["regret"] > regret + 0.005 or \
                math.expm1(f["median_log_error"]) > err + 0.005:
            worse.add(name)
    assert worse == WORSE10
    # the misses the change was for: int8's error, attention's ranking and picks, cross entropy's ranking
    assert math.expm1(figs["r10-int8-gemm"]["median_log_error"]) < 0.10
    assert figs["r10-sage-attn-fwd"]["spearman"] > 0.85 and figs["r10-sage-attn-fwd"]["regret"] < 1.05
    assert figs["r10-attn-bwd-dkdv"]["regret"] < 1.01
    assert figs["r10-cross-entropy"]["spearman"] > 0.8


def test_round10_report_prints_every_group_and_the_summary(bench, capsys):
    args = argparse.Namespace(report=str(MEASURED), fit=False, fit_only=None, json=None, write_calibration=None)
    assert bench.report(args) == 0
    out = capsys.readouterr().out
    assert "measured on NVIDIA H200 (132 SMs), driver 580.159.04, Triton 3.6.0" in out
    assert "315 configs timed in 9 groups" in out
    assert "r10-w4a16-gemm         fresh10    31    6.1x     0.91   2.20x" in out
    assert ("tenth round (kernels people run; the eleventh round's changes were made on these groups): mean "
            "Spearman (groups with spread >= 2x) 0.85, worst 0.70; worst regret 2.20x; median error 8%") in out   # CE
    # 0.81 -> 0.92 in round 12 (the gradient written over the logits counted in DRAM)
