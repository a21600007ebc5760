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


DATA = ROOT / "tests" / "data" / "cost"


@pytest.fixture(scope="module")
def compiled():
    """liger's cross entropy (its gradient written over its logits) and RMSNorm (Y apart from X), compiled for
    sm_90a, and liger's DyT backward, whose row loop runs from the program id in i64 steps of the grid."""
    import tritonscope

    liger = DATA / "round10" / "zoo_liger.py"
    ce = tritonscope.compile(f"{liger}:liger_cross_entropy_kernel", shape="64x32000", dtype="fp32",
                             constexprs={"BLOCK_SIZE": 4096}, num_warps=16, num_stages=1, arch="sm_90a")
    rms = tritonscope.compile(f"{liger}:_rms_norm_forward_kernel", shape="64x4096", dtype="fp16",
                              constexprs={"BLOCK_SIZE": 4096}, num_warps=8, num_stages=1, arch="sm_90a")
    dyt = None
    if importlib.util.find_spec("liger_kernel") is not None:
        from tritonscope import triton_api
        from tritonscope.inputs.kernels import load_module, module_file

        kernel = load_module(Path(module_file("liger_kernel.ops.dyt")), "sm_90a")._dyt_bwd_kernel
        while triton_api.jit_function(kernel) is not kernel and hasattr(kernel, "fn"):
            kernel = kernel.fn
        dyt = tritonscope.compile(kernel, constexprs={"HAVE_BETA": True, "N": 4096, "BLOCK_N": 1024}, num_warps=4,
                                  args={"DY": "bf16[4096,4096]", "DX": "bf16[4096,4096]", "DA": "fp32[132,8]",
                                        "DG": "fp32[132,4096]", "DB": "fp32[132,4096]", "X": "bf16[4096,4096]",
                                        "Alpha": "bf16[1]", "Gamma": "bf16[4096]", "M": 4096}, arch="sm_90a")
    return {"ce": ce, "rms": rms, "dyt": dyt}


def test_a_tensor_loaded_and_stored_is_counted_twice_in_dram(compiled):
    """Cross entropy loads its logits and stores their gradient over them: inplace_bytes is the logits' size and
    the DRAM term carries them twice (read, written back); RMSNorm writes Y apart from X: none."""
    from tritonscope.cost import find_gpu, predict_features
    from tritonscope.cost.features import features_of

    ce, rms = features_of(compiled["ce"].analysis), features_of(compiled["rms"].analysis)
    assert ce.version == 5 and ce.inplace_bytes == 64 * 32000 * 4
    assert rms.inplace_bytes == 0
    gpu = find_gpu("H200")
    with_writes = predict_features(ce, gpu).terms_ms["DRAM"]
    without = predict_features(ce.to_dict() | {"inplace_bytes": None}, gpu).terms_ms["DRAM"]
    assert with_writes > without * 1.9   # the logits are nearly all of the compulsory bytes


def test_an_i64_loop_bound_from_the_program_id_is_read(compiled):
    """liger's DyT backward: `for row in range(pid(1), M, num_programs(1))` with the bounds cast to i64 (arith.extsi
    ... : i32 to i64) has trip counts now (was 'loop bounds are not known from the launch's arguments')."""
    if compiled["dyt"] is None:
        pytest.skip("liger_kernel is not installed here")
    from tritonscope.cost import predict

    p = predict(compiled["dyt"].analysis, gpu="H200", grid=(4, 132), args={"M": 4096})
    assert p.ok, p.why
    assert p.facts["main_iters"] == -(-4096 // 132)
