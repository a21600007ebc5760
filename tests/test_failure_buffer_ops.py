"""Issue 34: a real kernel that Triton 3.6 fails on in an AMD buffer-ops pass, and what its report says.

vLLM's Mamba2 `_chunk_scan_fwd_kernel` (vllm/model_executor/layers/mamba/ops/ssd_chunk_scan.py, the case of
ROCm/triton#924) fails for gfx942 on Triton 3.6 in TritonAMDGPUCanonicalizePointers, which Triton's AMD
compiler runs (with TritonAMDGPUConvertToBufferOps) only with buffer ops on: an `if` picks `prev_states_ptr`
from one of two pointer arguments and ConvertSCFIfOp asserts.  The report must name that pass, the `scf.if` and
its Python line, and check that AMDGCN_USE_BUFFER_OPS=0 compiles.  vllm is no test extra (a 336 MB wheel
whose dependencies are CUDA's); the test runs where it imports:

    pip install --no-deps vllm==0.33.0 pyzmq urllib3 regex

tests/data/failing/pointer_select_amd.py holds the same pattern in 20 lines (tests/test_failure.py checks its
report against a golden on 3.6); here, that Triton 3.9 compiles it.  The unit tests at the end need no Triton.
"""

from __future__ import annotations

import importlib.util
import json

import pytest
from typer.testing import CliRunner

from conftest import DATA, triton_series
from tritonscope import triton_api
from tritonscope.cli import app
from tritonscope.core.errors import ExitCode

runner = CliRunner()
VLLM_VERSION = "0.33.0"
VLLM_MODULE = "vllm.model_executor.layers.mamba.ops.ssd_chunk_scan"
# _chunk_scan_fwd as vLLM's Mamba2 mixer calls it for one 2048-token prompt with an initial state (prefix
# caching): Mamba2-2.7B's 80 heads of 64, one group, d_state 128, chunk 256 (8 chunks), bf16 activations.
VLLM_ARGS = [
    f"{VLLM_MODULE}:_chunk_scan_fwd_kernel", "--arch", "gfx942", "--config", "1",
    "--arg", "cb_ptr=fp32[8,1,256,256]", "--arg", "x_ptr=bf16[2048,80,64]", "--arg", "z_ptr=bf16[2048,80,64]",
    "--arg", "out_ptr=bf16[2048,80,64]", "--arg", "dt_ptr=fp32[80,8,256]", "--arg", "dA_cumsum_ptr=fp32[80,8,256]",
    "--arg", "seq_idx_ptr=i32[8]", "--arg", "C_ptr=bf16[2048,1,128]", "--arg", "states_ptr=fp32[8,80,64,128]",
    "--arg", "D_ptr=fp32[80]", "--arg", "initstates_ptr=fp32[1,80,64,128]", "--arg", "cu_chunk_seqlens_ptr=i32[9]",
    "-c", "chunk_size=256", "-c", "hdim=64", "-c", "dstate=128", "-c", "nheads_ngroups_ratio=80",
    "--arg", "stride_cb_chunk=65536", "--arg", "stride_cb_head=65536", "--arg", "stride_cb_csize_m=256",
    "-c", "stride_cb_csize_k=1", "--arg", "stride_x_seqlen=5120", "--arg", "stride_x_head=64", "-c", "stride_x_hdim=1",
    "--arg", "stride_z_seqlen=5120", "--arg", "stride_z_head=64", "-c", "stride_z_hdim=1",
    "--arg", "stride_out_seqlen=5120", "--arg", "stride_out_head=64", "-c", "stride_out_hdim=1",
    "--arg", "stride_dt_chunk=256", "--arg", "stride_dt_head=2048", "-c", "stride_dt_csize=1",
    "--arg", "stride_dA_cs_chunk=256", "--arg", "stride_dA_cs_head=2048", "-c", "stride_dA_cs_csize=1",
    "-c", "stride_seq_idx_chunk=1", "--arg", "stride_C_seqlen=128", "--arg", "stride_C_head=128",
    "-c", "stride_C_dstate=1", "--arg", "stride_states_chunk=655360", "--arg", "stride_states_head=8192",
    "--arg", "stride_states_hdim=128", "-c", "stride_states_dstate=1", "--arg", "stride_init_states_batch=655360",
    "--arg", "stride_init_states_head=8192", "--arg", "stride_init_states_hdim=128",
    "-c", "stride_init_states_dstate=1", "-c", "stride_D_head=1", "-c", "IS_CAUSAL=True", "-c", "HAS_D=True",
    "-c", "D_HAS_HDIM=False", "-c", "HAS_Z=True", "-c", "BLOCK_SIZE_DSTATE=128", "-c", "IS_TRITON_22=True",
    "-c", "HAS_INITSTATES=True"]


def _vllm() -> None:
    if triton_series() != "3.6":
        pytest.skip(f"vLLM's chunk scan fails on Triton 3.6, not {triton_series()}")
    if not triton_api.has_backend("amd"):
        pytest.skip("this Triton has no AMD backend")
    try:
        from importlib.metadata import version

        have = version("vllm")
    except Exception:
        pytest.skip(f"needs vllm {VLLM_VERSION}, which is not installed (no test extra: "
                    f"pip install --no-deps vllm=={VLLM_VERSION} pyzmq urllib3 regex)")
    if have != VLLM_VERSION:
        pytest.skip(f"needs vllm {VLLM_VERSION}, not {have}")
    try:
        found = importlib.util.find_spec(VLLM_MODULE) is not None
    except Exception as e:
        found, why = False, f"{type(e).__name__}: {e}"
    else:
        why = "not found"
    if not found:
        pytest.skip(f"{VLLM_MODULE} does not import here ({why})")


@pytest.fixture(scope="module")
def vllm_report():
    _vllm()
    result = runner.invoke(app, ["compile", *VLLM_ARGS, "--json"], catch_exceptions=False)
    return result


def test_vllm_chunk_scan_report_names_the_buffer_ops_pass_the_if_and_its_line(vllm_report):
    """The real kernel: exit 5; the pass, the `if` it failed on with its source line, the assertion in plain
    words, and AMDGCN_USE_BUFFER_OPS=0 checked by compiling (it compiles)."""
    result = vllm_report
    assert result.exit_code == ExitCode.COMPILE_ERROR, result.output
    d = json.loads(result.stdout)["failure"]
    assert d["pass_name"] == "TritonAMDGPUCanonicalizePointers" and d["in_pass"] and d["stage"] == "ttgir"
    op = d["op"]
    assert op["name"] == "scf.if" and op["file"].endswith("ssd_chunk_scan.py")
    assert op["source"] == "if HAS_INITSTATES and (seq_idx != seq_idx_prev):"
    assert "ConvertSCFIfOp" in op["how"]
    assert any("cannot merge them" in w for w in d["explanation"])
    fixes = {x["flags"]: x for x in d["fixes"]}
    off = fixes["AMDGCN_USE_BUFFER_OPS=0"]
    assert off["tried"] and off["compiles"] is True and off["said"] == "compiles"
    # --config 1 sets num_warps and num_stages: the changed launches are that config said with -c, -w and -s
    stages = next(x for x in d["fixes"] if x["label"].startswith("fewer stages"))
    assert stages["flags"].startswith("-c BLOCK_SIZE_M=32 -c BLOCK_SIZE_N=32 -c BLOCK_SIZE_K=32 ")
    assert stages["flags"].endswith("-w 8 -s 1") and stages["tried"]
    assert "set by the launch and by" not in stages["said"]       # compiled, not refused by the binding
    assert f"on scf.if at ssd_chunk_scan.py:{op['line']}" in d["one_line"]
    assert d["one_line"] in " ".join(result.stderr.split())
    assert "These compile: AMDGCN_USE_BUFFER_OPS=0" in result.stderr


@pytest.mark.skipif(not triton_api.has_backend("amd"), reason="this Triton has no AMD backend")
def test_pointer_select_compiles_on_newer_triton():
    """The pattern's 20-line kernel fails on 3.6 (tests/test_failure.py) and compiles on 3.9, as its docstring
    says (the report's 'another Triton' row checks this with a managed environment)."""
    if triton_series() == "3.6":
        pytest.skip("fails on 3.6: tests/test_failure.py checks its report")
    from test_failure import POINTER_SELECT

    result = runner.invoke(app, ["compile", *POINTER_SELECT, "--stage", "none"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "tritonscope · select_kernel" in result.stdout and "compiled in" in result.stdout


# --------------------------------------------------------------------------- no Triton needed

IF_IR = """\
module {
  tt.func public @k(%a: !tt.ptr<f32> loc("/k.py":1:0), %b: !tt.ptr<f32> loc("/k.py":1:0), %c: i1 loc("/k.py":1:0)) {
    %p = tt.addptr %a, %c0 : !tt.ptr<f32>, i64 loc(#loc2)
    %0 = scf.if %c -> (!tt.ptr<f32>) {
      %1 = tt.addptr %a, %c1 : !tt.ptr<f32>, i64 loc(#loc4)
      scf.yield %1 : !tt.ptr<f32> loc(#loc4)
    } else {
      %2 = tt.addptr %b, %c1 : !tt.ptr<f32>, i64 loc(#loc5)
      scf.yield %2 : !tt.ptr<f32> loc(#loc5)
    } loc(#loc3)
    tt.return loc(#loc6)
  } loc(#loc1)
} loc(#loc)
#loc = loc("/k.py":1:0)
#loc1 = loc("/k.py":1:0)
#loc2 = loc("/k.py":3:4)
#loc3 = loc("/k.py":4:7)
#loc4 = loc("/k.py":5:8)
#loc5 = loc("/k.py":7:8)
#loc6 = loc("/k.py":9:4)
"""


def test_op_of_an_assertion_in_a_rewrite_pattern():
    """An assertion in ConvertSCFIfOp::matchAndRewrite: the scf.if (found past its `} else {`), not the first
    tt.addptr of the pass."""
    from tritonscope.analyses.failure import Diagnostic, Failure, _pattern_ops, find_op

    f = Failure(kernel="k", file="/k.py", arch="gfx942", label="", triton_version="3.6.0",
                error="RuntimeError: PassManager::run failed", stage="ttgir", in_pass=True,
                pass_name="TritonAMDGPUCanonicalizePointers", diagnostics=[Diagnostic(
                    "assertion", "Assertion `x && \"expected then fat ptr canNarrow\"' failed. "
                                 "(in mlir::ConvertSCFIfOp::matchAndRewrite_)", file="/s/CanonicalizePointers.cpp",
                    line=1433)])
    op = find_op(IF_IR, f, f.error)
    assert (op.name, op.line) == ("scf.if", 4) and "ConvertSCFIfOp" in op.how
    names = {"scf.if", "scf.for", "tt.addptr", "tt.load", "arith.select"}
    assert _pattern_ops("ConvertSCFIfOp", names) == {"scf.if"}
    assert _pattern_ops("ConvertSCFForOp", names) == {"scf.for"}
    assert _pattern_ops("ConvertAddPtrOp", names) == {"tt.addptr"}
    assert _pattern_ops("ConvertArithSelectOp", names) == {"arith.select"}
    assert _pattern_ops("FooBarOp", names) == set()
    # without the assertion, the op the pass works on, as before
    f.diagnostics = []
    assert find_op(IF_IR, f, f.error).name == "tt.addptr"


def test_plain_words_for_the_canonicalize_pointers_assertion():
    from tritonscope.analyses.failure import explain_text

    said = explain_text("/s/CanonicalizePointers.cpp:1433: Assertion `(a == b) && \"expected then fat ptr "
                        "canNarrow and else fat ptr canNarrow \" \"to be equal\"' failed.")
    assert "two branches of an `if`" in said and "32 bits" in said


def test_changed_launch_of_an_autotune_config_is_that_config_said_in_flags():
    """--config N fixes num_warps/num_stages (a launch refuses -s/-w beside it): the fewer-stages and
    other-warps checks compile the config's own values as the user's config, and their flags say them."""
    from tritonscope.analyses.failure import Failure, candidate_fixes
    from tritonscope.inputs.request import Request

    config = Request(target="k.py:k", arch="gfx942", constexprs={"HAS_D": "True"}, config=1)
    f = Failure(kernel="k", file="k.py", arch="gfx942", label="", triton_version="3.6.0", error="E",
                stage="ttgir", in_pass=True, pass_name="TritonAMDGPUCanonicalizePointers")
    tuned = {"index": 1, "constexprs": {"HAS_D": "True", "BLOCK": "32"}, "num_warps": 8, "num_stages": 2}
    fixes = {c.label: (c, changed) for c, changed, _ in candidate_fixes(f, config, None, tuned=tuned)}
    check, changed = fixes["fewer stages (num_stages=1, the rest as autotune config 1)"]
    assert check.flags == "-c BLOCK=32 -w 8 -s 1"
    assert changed.config is None and changed.constexprs == {"HAS_D": "True", "BLOCK": "32"}
    assert (changed.num_warps, changed.num_stages) == (8, 1)
    check, changed = fixes["another num_warps (4, the rest as autotune config 1)"]
    assert check.flags == "-c BLOCK=32 -w 4 -s 2" and (changed.num_warps, changed.num_stages) == (4, 2)
    # without --config: the plain flags, as before
    plain = {c.flags for c, _, _ in candidate_fixes(f, Request(target="k.py:k", arch="gfx942"), None)}
    assert {"-s 1", "-w 8", "AMDGCN_USE_BUFFER_OPS=0"} <= plain
