"""Issue 34, round 13: a Triton 3.9 failure inside an AMD pass, and an sm_120 make_ttgir failure, from kernels
written here.

- fp8_to_fp8 (gfx942): a cast from one fp8 format to another (MI300X's e5m2 fnuz to e4m3 fnuz) for gfx942; Triton 3.6
  and 3.9 fail in ConvertTritonAMDGPUToLLVM ("Unsupported conversion from 'f8E5M2FNUZ' to 'f8E4M3FNUZ'", at the
  cast's line), found by reading the AMD lowering's failure paths (ConvertFpCastOpToLLVM.cpp: getConverter has
  no fp8-to-fp8 case).  The pass fails without crashing, so MLIR also dumps the IR after the failed pass
  ("IR Dump After ConvertTritonAMDGPUToLLVM Failed", generic form), which the steps reader cannot take: the
  report reads the IR the pass received from the dump itself.  Casting through fp32 on that line compiles
  (checked on a copy of the file).

  The same kernel for sm_90a fails in ConvertTritonGPUToLLVM (an assertion: the cast has no rounding mode).

- fp8_quant_rtz: fp32 to e4m3 rounding toward zero, gfx950: 3.9 asserts in ConvertFpCastOpToLLVM.cpp (the op
  from LLVM's conversion log), 3.6 refuses the conversion at the cast's line; dropping the rounding compiles.

- warp_specialize_matmul_sm120: a matmul whose K loop is warp-specialized, for sm_120 (triton-lang/triton#10284's
  pattern, the matmul tutorial with warp_specialize=True on an RTX 5070); Triton 3.6 fails in make_ttgir, in
  NVWSInsertAref (a step of TritonGPUAutomaticWarpSpecialization, with no diagnostic of its own).  The report
  treats the NVWS passes as warp specialization: the op is the loop, and WS=False compiles.  Triton 3.9
  compiles the kernel.

The golden (tests/golden/failure/<series>/<case>.json, written by `pytest --regen`) holds the stage, the pass,
the op, the Python line and which checked fixes compile, as tests/test_failure.py's do.  The unit tests at the
end need no Triton.
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from conftest import DATA, GOLDEN, check_golden, triton_series
from test_failure import _golden_facts
from test_failure_patterns import _failed_compile
from tritonscope import triton_api
from tritonscope.cli import app
from tritonscope.core.errors import ExitCode

runner = CliRunner()
FAILING = DATA / "failing"

FP8_CAST = [f"{FAILING}/fp8_to_fp8.py:requantize_kernel", "--arch", "gfx942", "--arg", "src_ptr=*fp8e5b16",
            "--arg", "dst_ptr=*fp8e4b8", "--arg", "n=4096", "-c", "BLOCK=256"]
FP8_CAST_SM90 = [f"{FAILING}/fp8_to_fp8.py:requantize_kernel", "--arch", "sm_90a", "--arg", "src_ptr=*fp8e5",
                 "--arg", "dst_ptr=*fp8e4nv", "--arg", "n=4096", "-c", "BLOCK=256"]
RTZ = [f"{FAILING}/fp8_quant_rtz.py:quantize_kernel", "--arch", "gfx950", "--arg", "x_ptr=*fp32",
       "--arg", "out_ptr=*fp8e4nv", "--arg", "scale=0.5", "--arg", "n=4096", "-c", "BLOCK=256"]
WS_SM120 = [f"{FAILING}/warp_specialize_matmul_sm120.py:matmul_kernel", "--arch", "sm_120", "-w", "8", "-s", "3",
            "--arg", "a_ptr=fp16[1024,1024]", "--arg", "b_ptr=fp16[1024,1024]", "--arg", "c_ptr=fp16[1024,1024]",
            "--arg", "M=1024", "--arg", "N=1024", "--arg", "K=1024",
            "-c", "BLOCK_M=128", "-c", "BLOCK_N=256", "-c", "BLOCK_K=64", "-c", "WS=True"]


def _facts(d: dict) -> str:
    """The golden's facts (test_failure._golden_facts), the pass's place in its stage left out: the steps reader
    can take a stage's boundary one pass early or late when a stage's last passes change nothing (its pass count
    varied between two runs of the same compile: 'llir pass 10' and 'llir pass 36', step 59 both times)."""
    return re.sub(r"\((\w+) pass \d+, step", r"(\1 pass N, step", _golden_facts(d))


# --------------------------------------------------------------------------
# fp8 to fp8 on gfx942 (3.6 and 3.9)
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fp8_cast(tmp_path_factory):
    """One compile of the fp8-to-fp8 cast for gfx942, --json and --save: (the CLI result, the saved report)."""
    if not triton_api.has_backend("amd"):
        pytest.skip("this Triton has no amd backend")
    return _failed_compile(tmp_path_factory, "fp8_cast", FP8_CAST)


def test_fp8_cast_report(fp8_cast, regen):
    """exit 5; the pass (ConvertTritonAMDGPUToLLVM, in make_llir), the op (tt.fp_to_fp at line 27, where
    Triton's error points), Triton's words and their plain words, and the cast through fp32 compiles
    (checked on a copy of the file): the hint says so."""
    result, _ = fp8_cast
    assert result.exit_code == ExitCode.COMPILE_ERROR, result.output
    d = json.loads(result.stdout)["failure"]
    check_golden(GOLDEN / "failure" / triton_series() / "fp8_to_fp8_gfx942.json", _facts(d), regen)
    assert d["in_pass"] and d["pass_name"] == "ConvertTritonAMDGPUToLLVM" and d["stage"] == "llir"
    assert d["stage_function"] == "make_llir"
    op = d["op"]
    assert (op["name"], op["line"], op["source"]) == ("tt.fp_to_fp", 27, "y = x.to(dst_ptr.dtype.element_ty)")
    assert op["how"] == "where Triton's error points"
    said = [(x["severity"], x["message"]) for x in d["diagnostics"]]
    assert ("error", "Unsupported conversion from 'f8E5M2FNUZ' to 'f8E4M3FNUZ'") in said
    assert any("no direct fp8-to-fp8 conversion" in w and "f8E5M2FNUZ to f8E4M3FNUZ" in w for w in d["explanation"])
    source_fix = [x for x in d["fixes"] if "cast through fp32" in x["label"]]
    assert len(source_fix) == 1 and source_fix[0]["tried"] and source_fix[0]["compiles"] is True
    assert "checked on a copy of the file" in source_fix[0]["label"]
    assert {x["flags"]: x["compiles"] for x in d["fixes"] if x["flags"] in ("-s 1", "-w 8")} == \
        {"-s 1": False, "-w 8": False}
    err = " ".join(result.stderr.split())
    assert d["one_line"] in err and "on tt.fp_to_fp at fp8_to_fp8.py:27" in err
    assert "These compile: change the source: cast through fp32" in err


def test_fp8_cast_ir_the_pass_received(fp8_cast):
    """The IR the pass received is read although MLIR dumped the failed pass's IR after it (in generic form):
    the whole TTGIR module before ConvertTritonAMDGPUToLLVM, none of the "After ... Failed" dump, and the
    excerpt marks the tt.fp_to_fp."""
    result, saved = fp8_cast
    d = json.loads(saved.read_text())["failure"]
    assert d["ir_lines"] > 10
    assert "tt.fp_to_fp %" in d["ir"] and "tt.func public @requantize_kernel" in d["ir"]
    assert '"builtin.module"()' not in d["ir"] and "IR Dump" not in d["ir"]
    marked = [ln for ln in d["ir_excerpt"].splitlines() if ln.startswith("> ")]
    assert len(marked) == 1 and "tt.fp_to_fp" in marked[0]


def test_fp8_cast_in_the_terminal(fp8_cast):
    """show reopens it: the pass, the op and its source line, the plain words, the checked source fix."""
    _, saved = fp8_cast
    shown = runner.invoke(app, ["show", str(saved), "--width", "140"], catch_exceptions=False)
    assert shown.exit_code == 0
    out = " ".join(shown.stdout.split())
    assert "failed in pass ConvertTritonAMDGPUToLLVM (llir" in out
    assert "op tt.fp_to_fp at fp8_to_fp8.py:27" in out and "y = x.to(dst_ptr.dtype.element_ty)" in out
    assert "✓ change the source: cast through fp32" in out and ": compiles" in out
    assert "convert-triton-amdgpu-to-llvm" in out


def test_fp8_cast_on_nvidia(regen):
    """The same cast for sm_90a: ConvertTritonGPUToLLVM's assertion (the cast has no rounding mode) names no op;
    the op comes from LLVM's debug log of a second run, and the cast through fp32 compiles."""
    if not triton_api.has_backend("nvidia"):
        pytest.skip("this Triton has no nvidia backend")
    result = runner.invoke(app, ["compile", *FP8_CAST_SM90, "--json"], catch_exceptions=False)
    assert result.exit_code == ExitCode.COMPILE_ERROR, result.output
    d = json.loads(result.stdout)["failure"]
    check_golden(GOLDEN / "failure" / triton_series() / "fp8_to_fp8_sm90.json", _facts(d), regen)
    assert d["in_pass"] and d["pass_name"] == "ConvertTritonGPUToLLVM" and d["stage"] == "llir"
    assert (d["op"]["name"], d["op"]["line"]) == ("tt.fp_to_fp", 27)
    assert "LLVM's debug log of a second run" in d["op"]["how"]
    asserted = [x for x in d["diagnostics"] if x["severity"] == "assertion"]
    assert asserted and "Rounding mode must be specified" in asserted[0]["message"]
    assert any("a cast from one fp8 format to another is not narrower" in w for w in d["explanation"])
    assert any("cast through fp32" in x["label"] and x["compiles"] for x in d["fixes"])


def test_fp8_rounding_toward_zero_report(regen):
    """fp32 to e4m3 rounding toward zero, gfx950: 3.9 asserts in ConvertTritonAMDGPUToLLVM (no op named: from the
    conversion log), 3.6 says "Unsupported conversion ... with rounding mode rtz" at the cast; either way the op
    is the cast's line, and dropping the rounding argument compiles (its words say the results differ)."""
    if not triton_api.has_backend("amd"):
        pytest.skip("this Triton has no amd backend")
    result = runner.invoke(app, ["compile", *RTZ, "--json"], catch_exceptions=False)
    assert result.exit_code == ExitCode.COMPILE_ERROR, result.output
    d = json.loads(result.stdout)["failure"]
    check_golden(GOLDEN / "failure" / triton_series() / "fp8_quant_rtz.json", _facts(d), regen)
    assert d["in_pass"] and d["pass_name"] == "ConvertTritonAMDGPUToLLVM"
    assert (d["op"]["name"], d["op"]["line"]) == ("tt.fp_to_fp", 25)
    assert d["op"]["source"] == 'q = x.to(tl.float8e4nv, fp_downcast_rounding="rtz")'
    assert any("rounding" in w and "fp_downcast_rounding" in w for w in d["explanation"])
    fix = [x for x in d["fixes"] if "drop fp_downcast_rounding" in x["label"]]
    assert len(fix) == 1 and fix[0]["compiles"] is True and "other results" in fix[0]["label"]
    assert "These compile: change the source: drop fp_downcast_rounding" in " ".join(result.stderr.split())


# --------------------------------------------------------------------------
# A warp-specialized matmul for sm_120 (3.6 fails in make_ttgir; 3.9 compiles it)
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ws_sm120(tmp_path_factory):
    """One compile of the warp-specialized matmul for sm_120 on Triton 3.6, --json and --save."""
    if triton_series() != "3.6":
        pytest.skip(f"warp_specialize_matmul_sm120 fails on Triton 3.6; {triton_series()} compiles it")
    if not triton_api.has_backend("nvidia"):
        pytest.skip("this Triton has no nvidia backend")
    return _failed_compile(tmp_path_factory, "ws_sm120", WS_SM120)


def test_sm120_warp_specialized_matmul_report(ws_sm120, regen):
    """exit 5; make_ttgir's NVWSInsertAref (a step of automatic warp specialization): the op is the loop it
    warp-specializes (line 30), the words say so, and WS=False compiles (checked)."""
    result, _ = ws_sm120
    assert result.exit_code == ExitCode.COMPILE_ERROR, result.output
    d = json.loads(result.stdout)["failure"]
    check_golden(GOLDEN / "failure" / triton_series() / "warp_specialize_matmul_sm120.json", _facts(d), regen)
    assert d["in_pass"] and d["pass_name"] == "NVWSInsertAref" and d["stage_function"] == "make_ttgir"
    op = d["op"]
    assert (op["name"], op["line"]) == ("scf.for", 30)
    assert op["source"] == "for k in tl.range(0, tl.cdiv(K, BLOCK_K), warp_specialize=WS):"
    assert "TritonGPUAutomaticWarpSpecialization" in op["how"]
    assert any("sm_120 included" in w for w in d["explanation"])
    fixes = {x["flags"]: x["compiles"] for x in d["fixes"]}
    assert fixes["-c WS=False"] is True
    err = " ".join(result.stderr.split())
    assert "on scf.for at warp_specialize_matmul_sm120.py:30" in err and "These compile: -c WS=False" in err


def test_sm120_warp_specialized_matmul_in_the_terminal(ws_sm120):
    """show reopens it: the pass, the loop's source line, the checked fix, the excerpt marks the loop."""
    _, saved = ws_sm120
    shown = runner.invoke(app, ["show", str(saved), "--width", "140"], catch_exceptions=False)
    assert shown.exit_code == 0
    out = shown.stdout
    assert "failed in   pass NVWSInsertAref (ttgir pass" in out
    assert "op          scf.for at warp_specialize_matmul_sm120.py:30" in out
    assert "✓ -c WS=False" in out
    marked = [ln for ln in out.splitlines() if ln.startswith("> ")]
    assert len(marked) == 1 and "scf.for" in marked[0]


def test_sm120_warp_specialized_matmul_compiles_on_newer_triton():
    """Triton 3.9 compiles the same kernel for sm_120 (exit 0): the failure is 3.6's."""
    if triton_series() == "3.6":
        pytest.skip("Triton 3.6 fails on it (the tests above)")
    if not triton_api.has_backend("nvidia"):
        pytest.skip("this Triton has no nvidia backend")
    result = runner.invoke(app, ["compile", *WS_SM120, "--stage", "none"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "sm_120" in result.stdout


# --------------------------------------------------------------------------
# Without Triton
# --------------------------------------------------------------------------

# A pass dump as Triton writes it when a pass fails without crashing: the failed pass's IR after it, in generic form
FAILED_DUMP = """\
// -----// IR Dump Before TritonGPUGlobalScratchAllocationPass: tritongpu-global-scratch-memory-allocation ('builtin.module' operation) //----- //
module {
  tt.func public @k() {
    tt.return loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc("/k.py":3:1)


// -----// IR Dump Before ConvertTritonAMDGPUToLLVM: convert-triton-amdgpu-to-llvm{ftz=true gfx-arch=gfx942} ('builtin.module' operation) //----- //
module {
  tt.func public @k() {
    %y = tt.fp_to_fp %x : tensor<256xf8E5M2FNUZ> -> tensor<256xf8E4M3FNUZ> loc(#loc1)
    tt.return loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc1 = loc("/k.py":5:9)


// -----// IR Dump After ConvertTritonAMDGPUToLLVM Failed: convert-triton-amdgpu-to-llvm{ftz=true gfx-arch=gfx942} ('builtin.module' operation) //----- //
"builtin.module"() ({
}) : () -> ()
"""


def test_the_ir_the_failed_pass_received_is_read_from_the_dump(tmp_path):
    """The last 'IR Dump Before <pass>' module up to the next dump's header (not the 'After ... Failed' one);
    '' for a pass the dump never names."""
    from tritonscope.analyses.failure import _received_ir

    dump = tmp_path / "dump.mlir"
    dump.write_text(FAILED_DUMP)
    got = _received_ir(dump, "ConvertTritonAMDGPUToLLVM")
    assert got.startswith("module {") and "tt.fp_to_fp %x" in got and got.rstrip().endswith('#loc1 = loc("/k.py":5:9)')
    assert "builtin.module" not in got and "IR Dump" not in got
    assert "tt.fp_to_fp" not in _received_ir(dump, "TritonGPUGlobalScratchAllocationPass")
    assert _received_ir(dump, "TritonAMDGPUMembar") == ""


def test_the_pass_dump_reader_ends_the_failed_passs_input_at_the_after_failed_dump(tmp_path):
    """read_dumps: the module before the failed pass ends at the 'IR Dump After X Failed' header, and what follows
    it (the generic-form module the pass left) is no pass's input; the dump is read whole, not refused."""
    from tritonscope.analyses.passes.read import read_dumps

    dump = tmp_path / "dump.mlir"
    dump.write_text(FAILED_DUMP + "// -----// IR Dump Before Canonicalizer (canonicalize) ('builtin.module' operation)"
                                  " //----- //\nmodule {\n} loc(#loc)\n")
    dumps = list(read_dumps(dump))
    assert [d.header.name for d in dumps] == ["TritonGPUGlobalScratchAllocationPass", "ConvertTritonAMDGPUToLLVM",
                                             "Canonicalizer"]
    received = dump.read_text()[dumps[1].ref.start:dumps[1].ref.end]
    assert "tt.fp_to_fp %x" in received and "builtin.module" not in received and "IR Dump After" not in received


def test_a_line_rewrite_changes_only_the_ops_line(tmp_path):
    """A fix made on the failing op's line: the first pattern that matches it, once; the rest of the file as it
    was; None when the line holds none of them (the fix is then listed as not tried)."""
    from tritonscope.analyses.failure import KNOWN, _rewritten
    from tritonscope.inputs.kernels import Request

    known = next(k for k in KNOWN if k.line_rewrite)
    src = tmp_path / "k.py"
    src.write_text("a = x.to(t)\ny = x.to(t)\nz = tl.cast(x, t)\nw = x + 1\n")
    config = Request(target=f"{src}:k")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    changed = _rewritten(config, str(src), known.line_rewrite, scratch, line=2)
    copy = changed.target.rpartition(":")[0]
    assert open(copy).read() == "a = x.to(t)\ny = x.to(tl.float32).to(t)\nz = tl.cast(x, t)\nw = x + 1\n"
    changed = _rewritten(config, str(src), known.line_rewrite, scratch, line=3)
    assert open(changed.target.rpartition(":")[0]).read().splitlines()[2] == \
        "z = tl.cast(tl.cast(x, tl.float32), t)"
    assert _rewritten(config, str(src), known.line_rewrite, scratch, line=4) is None
    assert _rewritten(config, str(src), known.line_rewrite, scratch, line=9) is None
    # rounding toward zero asked for: the rewrite drops it (its words say the results differ)
    rtz = next(k for k in KNOWN if k.line_rewrite and "fp_downcast_rounding" in k.source_fix)
    assert "other results" in rtz.source_fix
    src.write_text('y = x.to(tl.float8e4nv, fp_downcast_rounding="rtz")\n')
    changed = _rewritten(config, str(src), rtz.line_rewrite, scratch, line=1)
    assert open(changed.target.rpartition(":")[0]).read() == "y = x.to(tl.float8e4nv)\n"


def test_conversion_and_nvws_plain_words():
    """The AMD float-cast lowering's refusal in plain words (fp8 to fp8 with the fp32 route; any other pair, its
    rounding mode said when Triton gives one); the NVWS passes count as warp specialization."""
    from tritonscope.analyses.failure import _pass_words, _warp_specialization, explain_text

    fp8 = explain_text("Unsupported conversion from 'f8E5M2' to 'f8E4M3FN'")
    assert "no direct fp8-to-fp8 conversion" in fp8 and "f8E5M2 to f8E4M3FN" in fp8
    rtz = explain_text("Unsupported conversion from 'f64' to 'f32' with rounding mode rtz")
    assert rtz.startswith("The kernel casts f64 to f32 rounding toward zero (fp_downcast_rounding=\"rtz\"")
    nvidia = explain_text("/project/third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/ElementwiseOpToLLVM.cpp:508: "
                          "Assertion `roundingMode.has_value() && \"Rounding mode must be specified for convertsions "
                          "to fp8\"' failed.")
    assert "a cast from one fp8 format to another is not narrower" in nvidia
    amd = explain_text("/project/third_party/amd/lib/TritonAMDGPUToLLVM/ConvertFpCastOpToLLVM.cpp:2509: "
                       "Assertion `maybeOutVals.has_value()' failed.")
    assert "not for the rounding mode the cast asks for" in amd
    assert "None" not in explain_text("Unsupported conversion from 'f8E4M3FN' to 'f64'")
    assert _warp_specialization("NVWSInsertAref") and _warp_specialization("TritonGPUAutomaticWarpSpecialization")
    assert not _warp_specialization("TritonGPUPipeline")
    assert "TritonGPUAutomaticWarpSpecialization" in _pass_words("NVWSLowerAref")[0]


def test_a_stage_ends_after_every_pass_its_timing_report_names(tmp_path):
    """steps_from_file with the child's stage records: a stage ends once its dumps have named every pass its
    timing report names, in order, not at the first dump whose module equals the stage's last one after its
    last pass's name (for a small kernel the last passes of a stage change nothing, and Canonicalizer runs
    several times: the llir pass count of a failure then read 40 where it is 10)."""
    from tritonscope.analyses.passes.read import steps_from_file

    module = "module {\n  tt.func public @k() {\n    tt.return\n  }\n}\n"
    lowered = "module {\n  llvm.func @k() {\n    llvm.return\n  }\n}\n"
    first = ["Canonicalizer", "CSE", "Canonicalizer", "SymbolDCE", "Canonicalizer"]
    second = ["AllocateSharedMemory", "ConvertTritonGPUToLLVM"]
    text = "".join(f"// -----// IR Dump Before {name} ('builtin.module' operation) //----- //\n{module}\n"
                   for name in first + second[:1])
    text += f"// -----// IR Dump Before {second[1]} ('builtin.module' operation) //----- //\n{lowered}\n"
    dump = tmp_path / "dump.mlir"
    dump.write_text(text)
    final = tmp_path / "ttgir.final.mlir"
    final.write_text(module)
    timing = [f"    0.0010 ( 10.0%)  {name}" for name in first]
    plan = [{"key": "ttgir", "final": str(final), "timing": timing, "last": first[-1]}, {"key": "llir"}]
    steps, _, _ = steps_from_file(str(dump), plan=plan)
    assert [(s.name, s.stage) for s in steps] == [(n, "ttgir") for n in first] + [(n, "llir") for n in second]


def test_a_stages_dumps_run_through_its_timed_passes_in_order():
    from tritonscope.analyses.passes.read import _stage_ended

    first = ["Canonicalizer", "CSE", "Canonicalizer", "SymbolDCE", "Canonicalizer"]
    assert _stage_ended(first, first[:2], "Canonicalizer") is False          # goes on in the order
    assert _stage_ended(first, first, "ConvertTritonGPUToLLVM") is True       # all dumped: the next stage's
    assert _stage_ended(first, first, "Canonicalizer") is False               # the last pass, another function
    assert _stage_ended(["Canonicalizer", "CSE"], ["Canonicalizer", "Canonicalizer"], "CSE") is False
    assert _stage_ended(first, first[:3], "Inliner") is None                  # leaves the order: not known
    assert _stage_ended(first, ["CSE"], "Canonicalizer") is None
    assert _stage_ended([], first, "CSE") is None
