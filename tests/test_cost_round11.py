"""The eleventh accuracy round (issue 36): fresh held-out groups, defined and committed before anything was
measured (benchmarks/round11_groups.py), after the model changes made on round 10's groups; never fitted on.

The definition is checked here GPU-less: at least 8 groups and 300 configs, of the kinds the issue names, none a
sample's or a round-10 group's kernel at its shape, every kernel file present.  Once measured, the file must
hold exactly these groups with exactly these configs (test_round11_file_measures_the_defined_groups)."""

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "cost"
BENCH = ROOT / "benchmarks" / "predict_vs_measured.py"
MEASURED = [DATA / "h100_measured_round11.json", DATA / "h200_measured_round11.json"]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("predict_vs_measured", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _relative(target: str) -> str:
    root = str(ROOT) + "/"
    return target[len(root):] if target.startswith(root) else target


def test_round11_groups_are_fresh_and_cover_the_issue_s_kinds(bench):
    defined = {g["name"]: g for g in bench.groups()}
    fresh = bench.SPLIT["fresh11"]
    assert len(fresh) >= 8 and len(set(fresh)) == len(fresh) and set(fresh) <= set(defined)
    assert sum(len(defined[n]["configs"]) for n in fresh) >= 300
    others = set(bench.SPLIT["train"]) | set(bench.SPLIT["held_out"]) | set(bench.SPLIT["fresh10"])
    assert not set(fresh) & others
    # no round-10 (or earlier) group's kernel at its shape and dtype
    seen = {(defined[n]["target"], defined[n]["shape"], defined[n]["dtype"]) for n in defined if n not in fresh}
    for n in fresh:
        g = defined[n]
        assert (g["target"], g["shape"], g["dtype"]) not in seen, n
        path = g["target"].rsplit(":", 1)[0]
        assert os.path.exists(path) and "/tests/data/cost/round1" in path, n   # zoo wrappers and patterns, no sample
    kinds = {"attention forward": ["r11-attn-fwd", "r11-sage-causal-fwd"], "attention backward": ["r11-attn-bwd-dq"],
             "MoE": ["r11-moe-grouped"], "int8": ["r11-int8-gemm"], "fp8": ["r11-fp8-gemm"],
             "int4-dequant": ["r11-w4a16-gemm"], "decode M<=32": ["r11-decode-m32"],
             "norms": ["r11-layer-norm", "r11-rms-norm"], "cross entropy": ["r11-cross-entropy"]}
    for kind, names in kinds.items():
        assert set(names) <= set(fresh), kind
    assert int(defined["r11-decode-m32"]["shape"].split("x")[0]) <= 32


def test_round11_configs_are_seeded(bench):
    """The configs are drawn with fixed seeds: the same on every machine, so the measured file can be checked."""
    a = {g["name"]: g["configs"] for g in bench.groups() if g["name"] in bench.SPLIT["fresh11"]}
    b = {g["name"]: g["configs"] for g in bench.groups() if g["name"] in bench.SPLIT["fresh11"]}
    assert a == b and all(len(c) >= 24 for c in a.values())
