"""The eleventh round's model changes (issue 36), each checked where it can break: real compiles for what the
features read (an int8 GEMM's kind, SageAttention's mixed dots, attention's dependent dots), and the stored
H200 measurements for what the model prices (exp2 between dependent MMAs, spills, loops that only store)."""

import importlib.util
import json
import statistics
from pathlib import Path

import pytest

from cost_rounds import load_bench

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "cost"
ROUND10 = DATA / "round10"


@pytest.fixture(scope="module")
def compiled():
    """One int8 scaled GEMM and one SageAttention forward, compiled for sm_90a (shared by the tests)."""
    import tritonscope

    mm = f"{ROUND10 / 'patterns.py'}:scaled_mm"
    int8 = tritonscope.compile(mm, constexprs={"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8,
                                               "IS_INT": 1}, shape="4096x4096x4096", dtype="i8", num_warps=4,
                               num_stages=3, arch="sm_90a")
    sage = None
    if importlib.util.find_spec("sageattention") is not None:   # optional: the zoo's SageAttention kernel
        sage = tritonscope.compile(f"{ROUND10 / 'zoo_sage.py'}:_attn_fwd", shape="4x32x2048x128", dtype="fp16",
                                   constexprs={"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8, num_stages=3,
                                   arch="sm_90a")
    return {"int8": int8, "sage": sage}


def _facts(result):
    from tritonscope.cost.features import features_of

    return features_of(result.analysis)


def test_an_int8_gemm_is_priced_at_the_int8_rate(compiled):
    from tritonscope.cost import find_gpu, predict_features

    f = _facts(compiled["int8"])
    assert f.peak_kind == "int8" and f.dot_kinds is None and f.loop_dots == 1
    gpu = find_gpu("H100 SXM")
    as_int8 = predict_features(f, gpu)
    as_fp16 = predict_features(f.to_dict() | {"peak_kind": "fp16"}, gpu)
    # the datasheet's INT8 TOPS (1978.9) are twice its fp16 TFLOP/s (989.4): the tensor term halves
    assert as_int8.terms_ms["tensor"] == pytest.approx(as_fp16.terms_ms["tensor"] * 989.4 / 1978.9, rel=1e-6)
    assert as_int8.bound_ms < as_fp16.bound_ms


def test_sage_attention_s_dots_are_mixed_and_dependent(compiled):
    from tritonscope.cost import find_gpu, predict_features
    from tritonscope.cost.model import serial_softmax

    if compiled["sage"] is None:
        pytest.skip("sageattention is not installed (the test extra installs it)")
    f = _facts(compiled["sage"])
    assert f.dot_kinds == {"fp16": 0.5, "int8": 0.5} and f.loop_dots == 2
    assert serial_softmax(f)
    p = predict_features(f, find_gpu("H100 SXM"))
    assert any("exp2 between dependent MMAs" in n for n in p.notes)
    # half the FLOPs at the INT8 rate, half at fp16: 3/4 of the all-fp16 time, more than all-int8's
    fp16 = predict_features(f.to_dict() | {"dot_kinds": None, "peak_kind": "fp16", "loop_dots": 1},
                            find_gpu("H100 SXM"))
    assert p.bound_ms == pytest.approx(fp16.bound_ms * 0.75, rel=1e-3)


def test_every_int8_rate_has_its_source():
    from tritonscope.core.gpus import TABLE, gpu_table
    from tritonscope.cost.model import peak_of

    table = json.loads(TABLE.read_text())["gpus"]
    rated = {n for n, g in table.items() if g.get("int8_tops")}
    assert {"H100 SXM", "H200", "A100"} <= rated
    for name in rated:
        assert "int8" in table[name]["source"].lower(), name
        assert peak_of(gpu_table()[name], "int8") == table[name]["int8_tops"]
    assert peak_of(gpu_table()["H100 SXM"], "int8") == 1978.9
    assert "int8" not in gpu_table()["H100 SXM"].tflops   # the roofline's peaks (fp16 ... fp32) are unchanged


@pytest.fixture(scope="module")
def round10():
    mod = load_bench()
    return mod, mod.load_measured(str(DATA / "h200_measured_round10.json"))


def _rows(bench, data, name):
    return next(bench.timed_rows(g) for g in data["groups"] if g["name"] == name)


def test_gemm_loops_with_a_reciprocal_are_not_attention(round10):
    """A persistent GEMM's loop has a MUFU or two (its tile index): its MMAs are not serialized with it."""
    from tritonscope.cost.model import serial_softmax

    bench, data = round10
    assert all(serial_softmax(r["features"]) for r in _rows(bench, data, "r10-sage-attn-fwd"))
    assert not any(serial_softmax(r["features"]) for r in _rows(bench, data, "r10-moe-grouped"))
    h100 = bench.load_measured(str(DATA / "h100_measured.json"))
    persistent = next(bench.timed_rows(g) for g in h100["groups"] if g["name"] == "persistent-fp16-4096")
    assert persistent[0]["features"]["sass_loop"].get("sfu") and \
        not any(serial_softmax(r["features"]) for r in persistent)


def test_spills_in_the_loop_are_not_overcharged(round10):
    """Attention's and fp8's spilling configs: predicted 1.5-4x their time at the old price (9.5), now within
    about 2x (their median)."""
    from tritonscope.cost import find_gpu, predict_features

    bench, data = round10
    gpu = find_gpu("H200")
    ratios = [predict_features(r["features"], gpu).predicted_ms / r["measured_ms"]
              for name in ("r10-sage-attn-fwd", "r10-attn-bwd-dkdv", "r10-fp8-gemm")
              for r in _rows(bench, data, name) if r["features"]["spill_bytes"] >= 300]
    assert len(ratios) >= 10 and statistics.median(ratios) < 2.0


def test_a_loop_that_only_stores_is_no_pass(round10):
    """liger's cross entropy: its first loop stores and loads nothing; the passes that load are the second
    (first read, from DRAM) and the third (a re-read, from L2 while the rows fit), and their load waits count."""
    from tritonscope.cost.model import _unpipelined_waits, as_features, calibration

    bench, data = round10
    rows = _rows(bench, data, "r10-cross-entropy")
    f = as_features(rows[0]["features"])
    assert f.sass_loops[0]["loaded"] == 0 and f.sass_loops[0]["ldgs"] == 0
    waits = _unpipelined_waits(f, calibration()["constants"], f.sass_loops, f.main_iters, 1, 0.0)
    assert waits is not None and waits > 0



def test_explain_s_roofline_bounds_an_int8_gemm_at_the_int8_rate(compiled):
    """The one GPU table gives explain's roofline the INT8 rate the cost model prices int8 dots at."""
    from tritonscope.analyses.explain.entry import explain as explain_analysis
    from tritonscope.analyses.explain.model import Shape

    analysis = compiled["int8"].analysis
    spec = analysis.artifact.spec
    shape = Shape((4096, 4096, 4096), spec.grid, dict(spec.args), None)
    (roof,) = [v for v in explain_analysis(analysis, shapes=[shape], gpu="H100 SXM", triton_banks=False).verdicts
               if v.kind == "roofline"]
    assert roof.facts["peak_kind"] == "int8" and roof.facts["peak_tflops"] == 1978.9
    assert "TOPS int8" in roof.title and "GOP" in roof.title
