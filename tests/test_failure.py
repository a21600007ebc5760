"""Issue 34: when Triton fails, a failure report (analyses/failure.py, render/failure_view.py).

Real failures, from kernels in tests/data/failing/ that make Triton fail
inside its pipeline (each file's docstring says how and on which Triton):

- warp_specialize_attention: NVGPUWarpSpecialization crashes on sm_90a (3.6 and 3.9);
- libdevice_on_amd: make_llir refuses a CUDA libdevice call for gfx942, after its passes (3.6 and 3.9);
- fp64_dot_amd: ConvertTritonAMDGPUToLLVM's MFMA lowering asserts on an fp64 dot (3.6; 3.9 compiles it);
- pipeline_four_loads_amd: TritonAMDGPUPipeline stops with `LLVM ERROR: operation destroyed but still has uses`
  on the loop's fourth load, gfx950, num_stages=4 (triton-lang/triton#9815; 3.6; 3.9 compiles it; -s 1 compiles);
- pointer_select_amd: TritonAMDGPUCanonicalizePointers asserts on an `if` choosing between two pointers, the
  pattern of vLLM's Mamba2 chunk scan (3.6; 3.9 compiles it; AMDGCN_USE_BUFFER_OPS=0 compiles it).

Goldens (tests/golden/failure/<series>/<case>.json) hold the stage, the pass,
the op, the Python line and which checked fixes compile; `pytest --regen`
writes them.  The unit tests at the end need no Triton.
"""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from conftest import DATA, GOLDEN, check_golden, triton_series
from tritonscope import triton_api
from tritonscope.cli import app
from tritonscope.core.errors import CompileError, CompileTimeoutError, ExitCode

runner = CliRunner()
FAILING = DATA / "failing"

ATTENTION = [f"{FAILING}/warp_specialize_attention.py:attn_fwd", "--arch", "sm_90a", "-w", "4", "-s", "3",
             "--arg", "sm_scale=0.5", "--arg", "M=fp32[4096]", "--arg", "Z=1", "--arg", "H=4",
             "--arg", "Q=fp16[4096,64]", "--arg", "K=fp16[4096,64]", "--arg", "V=fp16[4096,64]",
             "--arg", "Out=fp16[4096,64]", "--arg", "N_CTX=1024", "-c", "HEAD_DIM=64", "-c", "BLOCK_M=128",
             "-c", "BLOCK_N=64", "-c", "warp_specialize=True"]
# vLLM's Mamba2 chunk-scan pattern (ROCm/triton#924): a pointer chosen by a runtime `if`; 3.9 compiles it
POINTER_SELECT = [f"{FAILING}/pointer_select_amd.py:select_kernel", "--arch", "gfx942",
                  "--arg", "init_ptr=fp32[4,8192]", "--arg", "states_ptr=fp32[16,8192]", "--arg", "seq_ptr=i32[16]",
                  "--arg", "out_ptr=fp32[16,64]", "--arg", "stride=8192", "-c", "BLOCK=64"]
CASES = {
    "warp_specialize_attention": (ATTENTION + ["-c", "STAGE=3"], ("3.6", "3.9"), None),
    "libdevice_on_amd": ([f"{FAILING}/libdevice_on_amd.py:rsqrt_kernel", "--arch", "gfx942", "--arg", "x_ptr=*fp32",
                          "--arg", "out_ptr=*fp32", "--arg", "n=1024", "-c", "BLOCK=256"], ("3.6", "3.9"), "amd"),
    "fp64_dot_amd": ([f"{FAILING}/fp64_dot_amd.py:dot_kernel", "--arch", "gfx942", "--arg", "a_ptr=*fp64",
                      "--arg", "out_ptr=*fp64", "-c", "BLOCK=64"], ("3.6",), "amd"),
    "pointer_select_amd": (POINTER_SELECT, ("3.6",), "amd"),
    # triton-lang/triton#9815: four loads in a loop pipelined with 4 stages (gfx950); 3.9 compiles it
    "pipeline_four_loads_amd": ([f"{FAILING}/pipeline_four_loads_amd.py:attn_kernel", "--arch", "gfx950", "-s", "4",
                                 "--arg", "q_ptr=*bf16", "--arg", "k_ptr=*bf16", "--arg", "v_ptr=*bf16",
                                 "--arg", "bias_ptr=*fp32", "--arg", "keep_ptr=*i8", "--arg", "out_ptr=*fp32",
                                 "--arg", "N=1024", "--arg", "SEQ_LEN=1024", "-c", "BLOCK_Q=64", "-c", "BLOCK_KV=32",
                                 "-c", "D=64"], ("3.6",), "amd"),
}


def _case(name: str) -> list[str]:
    args, series, backend = CASES[name]
    if triton_series() not in series:
        pytest.skip(f"{name} fails on Triton {', '.join(series)}, not {triton_series()}")
    if backend and not triton_api.has_backend(backend):
        pytest.skip(f"this Triton has no {backend} backend")
    return args


def _golden_facts(d: dict) -> str:
    """What a golden holds: where it failed and what was tried (no timings, no temporary paths)."""
    op = d.get("op") or {}
    facts = {
        "stage": d["stage"], "stage_function": d["stage_function"], "in_pass": d["in_pass"],
        "pass": d["pass_name"] if d["in_pass"] else None,
        "op": op.get("name"), "file": os.path.basename(op.get("file", "")), "line": op.get("line"),
        "source": op.get("source"),
        "diagnostics": [x["severity"] for x in d["diagnostics"]],
        "reproducer_pipeline": (d.get("reproducer") or {}).get("pipeline"),
        "fixes": {x["flags"] or x["label"]: x["compiles"] for x in d["fixes"]},
        "one_line": d["one_line"],
    }
    return json.dumps(facts, indent=1) + "\n"


@pytest.mark.parametrize("name", list(CASES))
def test_failure_report_of_a_real_failure(name, regen):
    """compile --json of a failing kernel: exit 5, and the report's pass, op, Python line and checked fixes."""
    args = _case(name)
    result = runner.invoke(app, ["compile", *args, "--json"], catch_exceptions=False)
    assert result.exit_code == ExitCode.COMPILE_ERROR, result.output
    data = json.loads(result.stdout)
    assert data["schema"] == "tritonscope.failure"
    d = data["failure"]
    check_golden(GOLDEN / "failure" / triton_series() / f"{name}.json", _golden_facts(d), regen)
    # the one line of the error names the pass (or Triton's function) and the Python line
    assert d["one_line"] in " ".join(result.stderr.split())


def test_attention_report_in_the_terminal():
    """The report's words: the pass, the op with its source line, Triton's note, the checked fix, the reproducer;
    Triton's own stderr (its stage reproducer, ~150 lines on 3.9) is not echoed: the report replaces it."""
    args = _case("warp_specialize_attention")
    result = runner.invoke(app, ["compile", *args, "--width", "140"], catch_exceptions=False)
    assert result.exit_code == ExitCode.COMPILE_ERROR
    out = result.stdout
    assert "failed in   pass NVGPUWarpSpecialization (ttgir pass" in out
    assert "op          scf.for at warp_specialize_attention.py:33" in out
    assert "for start_n in tl.range(lo, hi, BLOCK_N, warp_specialize=warp_specialize):" in out
    assert "Pipeline failed while executing `NVGPUWarpSpecialization`" in out
    assert "✓ -c warp_specialize=False" in out and ": compiles" in out
    assert "triton-opt" in out and "nvgpu-warp-specialization" in out
    assert "The IR the pass received" in out and "> " in out and "tt.warp_specialize" in out
    assert "external_resources" not in result.stderr  # Triton's own reproducer print is held back
    assert "These compile: -c warp_specialize=False" in result.stderr


def test_attention_save_emit_and_show(tmp_path):
    """--save keeps the whole IR and the reproducer; show reopens the report; --emit writes the files."""
    args = _case("warp_specialize_attention")
    saved, emitted = tmp_path / "failure.json", tmp_path / "out"
    result = runner.invoke(app, ["compile", *args, "--save", str(saved), "--emit", str(emitted)],
                           catch_exceptions=False)
    assert result.exit_code == ExitCode.COMPILE_ERROR
    d = json.loads(saved.read_text())["failure"]
    assert "tt.warp_specialize" in d["ir"] and "mlir_reproducer" in d["reproducer"]["text"]
    names = sorted(p.name for p in emitted.iterdir())
    assert names == ["before-NVGPUWarpSpecialization.mlir", "failure.json", "failure.txt", "reproducer.mlir"]
    shown = runner.invoke(app, ["show", str(saved), "--width", "140"], catch_exceptions=False)
    assert shown.exit_code == 0
    assert "pass NVGPUWarpSpecialization" in shown.stdout and "warp_specialize_attention.py:33" in shown.stdout
    for ext in ("txt", "md", "html"):
        again = runner.invoke(app, ["show", str(saved), "--save", str(tmp_path / f"r.{ext}")], catch_exceptions=False)
        assert again.exit_code == 0 and "NVGPUWarpSpecialization" in (tmp_path / f"r.{ext}").read_text()


def test_failing_sweep_row_names_the_pass_and_line():
    """A sweep row that fails inside Triton says the pass, the op and the line in one line; --json has the
    report."""
    _case("warp_specialize_attention")
    result = runner.invoke(app, ["sweep", *ATTENTION, "-c", "STAGE=1,3", "-j", "1", "--json"],
                           catch_exceptions=False)
    rows = json.loads(result.stdout)["rows"]
    bad = [r for r in rows if not r["ok"]]
    good = [r for r in rows if r["ok"]]
    assert len(bad) == 1 and len(good) == 1
    assert bad[0]["error"].startswith("pass NVGPUWarpSpecialization (ttgir pass")
    assert "on scf.for at warp_specialize_attention.py:33: PassManager::run failed" in bad[0]["error"]
    assert bad[0]["failure"]["op"]["line"] == 33 and good[0]["failure"] is None


def test_timeout_names_the_pass_it_was_in(tmp_path):
    """compile --timeout: exit 11, and the pass a dumped rerun was in when it was stopped at the same limit."""
    kernel = tmp_path / "slow.py"
    kernel.write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def unrolled(x_ptr, out_ptr, BLOCK: tl.constexpr, REPEAT: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n    acc = tl.zeros([BLOCK], dtype=tl.float32)\n"
        "    for i in tl.static_range(REPEAT):\n        acc += tl.load(x_ptr + offs + i * BLOCK) * (i + 1)\n"
        "    tl.store(out_ptr + offs, acc)\n")
    result = runner.invoke(app, ["compile", f"{kernel}:unrolled", "--arg", "x_ptr=*fp32", "--arg", "out_ptr=*fp32",
                                 "-c", "BLOCK=128", "-c", "REPEAT=400", "--stage", "none", "--timeout", "10", "--json"],
                           catch_exceptions=False)
    assert result.exit_code == ExitCode.TIMEOUT, result.output
    d = json.loads(result.stdout)["failure"]
    assert d["timed_out"] and d["pass_name"] and d["stage"] in ("ttir", "ttgir", "llir")
    assert f"it was in pass {d['pass_name']}" in " ".join(result.stderr.split())


# --------------------------------------------------------------------------
# Without Triton
# --------------------------------------------------------------------------

IR = """\
#loc = loc("/k.py":5:0)
module attributes {"ttg.num-warps" = 4 : i32} {
  tt.func public @k(%arg0: i32 loc("/k.py":5:0)) attributes {noinline = false} {
    %c0 = arith.constant 0 : i32 loc(#loc1)
    %0 = scf.for %i = %c0 to %arg0 step %c1 iter_args(%a = %c0) -> (i32)  : i32 {
      %1 = arith.addi %a, %i : i32 loc(#loc2)
      scf.yield %1 : i32 loc(#loc2)
    } {tt.warp_specialize} loc(#loc3)
    %2 = tt.dot %x, %y, %z : tensor<16x16xf16> * tensor<16x16xf16> -> tensor<16x16xf32> loc(#loc4)
    tt.return loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("/k.py":6:9)
#loc2 = loc("/k.py":8:9)
#loc3 = loc("/k.py":7:5)
#loc4 = loc("/k.py":9:9)
"""


def _failure(**kw):
    from tritonscope.analyses.failure import Failure

    base = dict(kernel="k", file="/k.py", arch="sm_90a", label="w4", triton_version="3.9.0",
                error="RuntimeError: PassManager::run failed", stage="ttgir", in_pass=True)
    base.update(kw)
    return Failure(**base)


def test_op_a_pass_works_on_is_found_by_the_attribute_after_its_region():
    from tritonscope.analyses.failure import excerpt, find_op

    f = _failure(pass_name="NVGPUWarpSpecialization")
    op = find_op(IR, f, f.error)
    assert (op.name, op.line) == ("scf.for", 7) and "Triton names no op" in op.how
    text = excerpt(IR, op)
    assert text.splitlines()[0].startswith("> %0 = scf.for") and text.splitlines()[-1].strip() == "} {tt.warp_specialize}"


def test_op_from_an_assertion_in_a_lowering_and_from_an_error_location():
    from tritonscope.analyses.failure import Diagnostic, find_op

    f = _failure(pass_name="ConvertTritonGPUToLLVM", diagnostics=[
        Diagnostic("assertion", "Assertion `x' failed.", file="/src/lib/DotOpToLLVM/MMAv2.cpp", line=3)])
    assert find_op(IR, f, f.error).name == "tt.dot"
    f = _failure(pass_name="Canonicalizer", diagnostics=[Diagnostic("error", "'arith.addi' op is bad", "/k.py", 8, 9)])
    op = find_op(IR, f, f.error)
    assert (op.name, op.line, op.how) == ("arith.addi", 8, "where Triton's error points")


def test_plain_words_for_known_patterns():
    from tritonscope.analyses.failure import explain_text

    assert "no libdevice" in explain_text("Implicit conversion of CUDA __nv_expf device function has been dropped")
    assert "MFMA" in explain_text("/p/DotOpToLLVM/MFMA.cpp:505: Assertion `type.isF16() && \"Unsupported data type\"'")
    assert explain_text("nothing known") == ""


def test_report_round_trips_through_json():
    from tritonscope.analyses.failure import FailingOp, FixCheck, failure_from_report, report_dict

    f = _failure(pass_name="P", op=FailingOp("tt.dot", "%2 = tt.dot", "/k.py", 9, 9, "c = tl.dot(a, b)", "x"),
                 fixes=[FixCheck("fewer stages", "-s 1", tried=True, compiles=True, said="compiles")],
                 earlier=[("A", 0.5)])
    again = failure_from_report(json.loads(json.dumps(report_dict(f))))
    assert again == f and again.one_line() == "pass P (ttgir) on tt.dot at k.py:9"


def test_a_diagnosis_that_fails_leaves_the_error_as_it_was(monkeypatch):
    from tritonscope.analyses import failure

    def broken(*a, **k):
        raise RuntimeError("no")

    monkeypatch.setattr(failure, "diagnose", broken)
    err = CompileError("Triton failed while compiling k: RuntimeError: PassManager::run failed",
                       data={"in_pipeline": True})
    assert failure.attach(err, object()) is None
    assert err.message.endswith("PassManager::run failed") and "RuntimeError: no" in err.data["failure_error"]
    assert failure.attach(CompileTimeoutError("late"), object(), timeout=None) is None
