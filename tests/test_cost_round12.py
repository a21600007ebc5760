"""The twelfth accuracy round (issue 36): fresh held-out groups, defined and committed before anything was
measured (benchmarks/round12_groups.py); never fitted on.  Round 11's groups are no longer held out.

The definition is checked here GPU-less: at least 8 groups and 300 configs, of the kinds the issue names, none a
sample's, a round-10 or a round-11 group's kernel at its shape and dtype, every kernel file present."""

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks" / "predict_vs_measured.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("predict_vs_measured", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_round12_groups_are_fresh_and_cover_the_issue_s_kinds(bench):
    defined = {g["name"]: g for g in bench.groups()}
    fresh = bench.SPLIT["fresh12"]
    assert len(fresh) >= 8 and len(set(fresh)) == len(fresh) and set(fresh) <= set(defined)
    assert sum(len(defined[n]["configs"]) for n in fresh) >= 300
    others = {n for split, names in bench.SPLIT.items() if split != "fresh12" for n in names}
    assert not set(fresh) & others
    seen = {(defined[n]["target"], defined[n]["shape"], defined[n]["dtype"]) for n in defined if n not in fresh}
    for n in fresh:
        g = defined[n]
        assert (g["target"], g["shape"], g["dtype"]) not in seen, n
        path = g["target"].rsplit(":", 1)[0]
        assert os.path.exists(path) and "/tests/data/cost/round1" in path, n   # zoo wrappers and patterns, no sample
    kinds = {"attention forward": ["r12-attn-fwd", "r12-sage-attn-fwd"], "attention backward": ["r12-attn-bwd-dkdv"],
             "MoE": ["r12-moe-grouped"], "int8": ["r12-int8-gemm"], "fp8": ["r12-fp8-gemm"],
             "int4-dequant": ["r12-w4a16-gemm"], "decode M<=32": ["r12-decode-m8"],
             "norms": ["r12-layer-norm", "r12-rms-norm"], "cross entropy": ["r12-cross-entropy"]}
    for kind, names in kinds.items():
        assert set(names) <= set(fresh), kind
    assert int(defined["r12-decode-m8"]["shape"].split("x")[0]) <= 32


def test_round12_configs_are_seeded_and_new(bench):
    """Fixed seeds (the same configs on every machine, so the measured file can be checked), none of an earlier
    round's seeds."""
    a = {g["name"]: g["configs"] for g in bench.groups() if g["name"] in bench.SPLIT["fresh12"]}
    b = {g["name"]: g["configs"] for g in bench.groups() if g["name"] in bench.SPLIT["fresh12"]}
    assert a == b and all(len(c) >= 20 for c in a.values())
    text = (ROOT / "benchmarks" / "round12_groups.py").read_text()
    assert all(f", {seed})" in text or f", {seed}," in text for seed in range(301, 312))
