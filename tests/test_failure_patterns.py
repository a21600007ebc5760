"""Issue 34, the patterns: a verifier error and an out-of-range op, each failing inside a pass, from kernels
written here.

- fp64_dot_tmem_sm100: an fp64 tl.dot for sm_100a; Triton 3.6's TritonGPUAccelerateMatmul builds a tensor-memory
  layout for the accumulator that its verifier refuses (`<unknown>:0: error: colStride must be 1, 2, or 4 but got
  0`, then MLIR's verifyInvariants assertion); Triton 3.9 compiles it (no tcgen05 MMA for fp64).  The verifier's
  message has no location: the report must still show it.

- fp32_dot_short_k_amd: an fp32 tl.dot with K=8 for gfx942; Triton 3.6's ConvertTritonAMDGPUToLLVM reads past
  the end of the operand values it unpacked (LLVM's `idx < size()` assertion); Triton 3.9 compiles it.  Neither
  fewer stages nor other warps compile it, so the report's hint says no fix was found.

- warp_specialize_pointer_loads: a warp-specialized loop (sm_90a) that loads through pointers, with a dot and
  a max-reduction; NVGPUWarpSpecialization fails on both series (3.9: `LLVM ERROR: unsupported load type for
  producer commit`; 3.6: WSLowerToken.cpp's assertion in processProducerCommitOp).  The op is the loop's first
  pointer load (not the loop), and warp_specialize=False compiles.

The golden (tests/golden/failure/<series>/<case>.json, written by `pytest --regen`) holds the stage, the pass,
the op, the Python line and which checked fixes compile, as tests/test_failure.py's do.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import DATA, GOLDEN, check_golden, triton_series
from test_failure import _golden_facts
from tritonscope import triton_api
from tritonscope.cli import app
from tritonscope.core.errors import ExitCode

runner = CliRunner()
FAILING = DATA / "failing"

SHORT_K = [f"{FAILING}/fp32_dot_short_k_amd.py:dot_kernel", "--arch", "gfx942", "--arg", "a_ptr=*fp32",
           "--arg", "b_ptr=*fp32", "--arg", "out_ptr=*fp32", "-c", "K=8"]


TMEM = [f"{FAILING}/fp64_dot_tmem_sm100.py:dot_kernel", "--arch", "sm_100a", "--arg", "a_ptr=*fp64",
        "--arg", "out_ptr=*fp64", "-c", "BLOCK=64"]


def _failed_compile(tmp_path_factory, stem: str, args: list[str]):
    """One compile of a failing kernel with --json and --save: (the CLI result, the saved report's path)."""
    saved = tmp_path_factory.mktemp(stem) / "failure.json"
    result = runner.invoke(app, ["compile", *args, "--json", "--save", str(saved)], catch_exceptions=False)
    return result, saved


@pytest.fixture(scope="module")
def tmem(tmp_path_factory):
    """One compile of the verifier-error kernel, --json and --save: (the CLI result, the saved report's path)."""
    if triton_series() != "3.6":
        pytest.skip(f"fp64_dot_tmem_sm100 fails on Triton 3.6 only; {triton_series()} compiles it")
    return _failed_compile(tmp_path_factory, "tmem", TMEM)


def test_verifier_error_report(tmem, regen):
    """exit 5; the pass (TritonGPUAccelerateMatmul), the op (tt.dot at line 21), the verifier's own message
    (which has no location) before MLIR's assertion, and its plain words."""
    result, _ = tmem
    assert result.exit_code == ExitCode.COMPILE_ERROR, result.output
    d = json.loads(result.stdout)["failure"]
    check_golden(GOLDEN / "failure" / triton_series() / "fp64_dot_tmem_sm100.json", _golden_facts(d), regen)
    assert d["in_pass"] and d["pass_name"] == "TritonGPUAccelerateMatmul" and d["stage"] == "ttgir"
    assert (d["op"]["name"], d["op"]["line"], d["op"]["source"]) == ("tt.dot", 21, "c = tl.dot(a, a)")
    said = [(x["severity"], x["message"]) for x in d["diagnostics"]]
    assert said[0] == ("error", "colStride must be 1, 2, or 4 but got but got 0")
    assert said[1][0] == "assertion" and "verifyInvariants" in said[1][1]
    assert any("column stride of 32 divided by the element's bits" in w and "comes out 0" in w
               for w in d["explanation"])
    assert not any(x["compiles"] for x in d["fixes"])
    assert "No fix found: none of what was tried compiles (-s 1, -w 8" in " ".join(result.stderr.split())


def test_verifier_error_in_the_terminal(tmem):
    """show reopens it: the verifier's error under 'What Triton said', the op's source line, the reproducer."""
    _, saved = tmem
    shown = runner.invoke(app, ["show", str(saved), "--width", "140"], catch_exceptions=False)
    assert shown.exit_code == 0
    out = shown.stdout
    assert "failed in   pass TritonGPUAccelerateMatmul (ttgir pass" in out
    assert "op          tt.dot at fp64_dot_tmem_sm100.py:21" in out and "c = tl.dot(a, a)" in out
    assert "error       colStride must be 1, 2, or 4 but got but got 0" in out
    assert "builtin.module(tritongpu-accelerate-matmul)" in out
    assert "> " in out and "tt.dot %" in out


@pytest.fixture(scope="module")
def short_k(tmp_path_factory):
    """One compile of the failing kernel, --json and --save: (the CLI result, the saved report's path)."""
    if triton_series() != "3.6":
        pytest.skip(f"fp32_dot_short_k_amd fails on Triton 3.6 only; {triton_series()} compiles it")
    if not triton_api.has_backend("amd"):
        pytest.skip("this Triton has no amd backend")
    return _failed_compile(tmp_path_factory, "short_k", SHORT_K)


def test_short_k_dot_report(short_k, regen):
    """exit 5; the pass (ConvertTritonAMDGPUToLLVM), Triton's out-of-range assertion, the golden's facts."""
    result, _ = short_k
    assert result.exit_code == ExitCode.COMPILE_ERROR, result.output
    d = json.loads(result.stdout)["failure"]
    check_golden(GOLDEN / "failure" / triton_series() / "fp32_dot_short_k_amd.json", _golden_facts(d), regen)
    assert d["in_pass"] and d["pass_name"] == "ConvertTritonAMDGPUToLLVM" and d["stage"] == "llir"
    asserted = [x for x in d["diagnostics"] if x["severity"] == "assertion"]
    assert asserted and "idx < size()" in asserted[0]["message"]
    assert d["one_line"] in " ".join(result.stderr.split())


def test_short_k_dot_no_fix_found(short_k):
    """Each fix tried fails too, and the hint says that no fix was found (it names what was tried)."""
    result, _ = short_k
    fixes = json.loads(result.stdout)["failure"]["fixes"]
    tried = [x for x in fixes if x["tried"]]
    assert {x["flags"] for x in tried} >= {"-s 1", "-w 8"}
    assert not any(x["compiles"] for x in fixes)
    hint = " ".join(result.stderr.split())
    assert "No fix found: none of what was tried compiles (-s 1, -w 8" in hint
    assert "These compile" not in hint


def test_short_k_dot_report_reopened(short_k):
    """show reopens the saved report: the pass, the assertion, the fixes that fail too, the tt.dot in the IR."""
    _, saved = short_k
    shown = runner.invoke(app, ["show", str(saved), "--width", "140"], catch_exceptions=False)
    assert shown.exit_code == 0
    out = shown.stdout
    assert "failed in   pass ConvertTritonAMDGPUToLLVM (llir pass" in out
    assert "Assertion `idx < size()' failed" in out
    assert "✗ -s 1" in out and "✗ -w 8" in out and "fails too" in out
    assert "convert-triton-amdgpu-to-llvm" in out
    assert "tt.dot" in json.loads(saved.read_text())["failure"]["ir"]


WS_LOADS = [f"{FAILING}/warp_specialize_pointer_loads.py:row_max_kernel", "--arch", "sm_90a",
            "--arg", "a_ptr=*fp16", "--arg", "b_ptr=*fp16", "--arg", "out_ptr=*fp32", "--arg", "K=1024",
            "-c", "BLOCK_M=128", "-c", "BLOCK_N=64", "-c", "BLOCK_K=64", "-c", "warp_specialize=True"]


@pytest.fixture(scope="module")
def ws_loads(tmp_path_factory):
    """One compile of the warp-specialized pointer-load kernel (3.6 and 3.9), --json and --save."""
    if not triton_api.has_backend("nvidia"):
        pytest.skip("this Triton has no nvidia backend")
    return _failed_compile(tmp_path_factory, "ws_loads", WS_LOADS)


def test_warp_specialized_pointer_loads_report(ws_loads, regen):
    """exit 5; the pass (NVGPUWarpSpecialization), the op (the loop's first pointer load, line 28, not the loop),
    what Triton said on this series, its plain words, and warp_specialize=False compiles (checked)."""
    result, _ = ws_loads
    assert result.exit_code == ExitCode.COMPILE_ERROR, result.output
    d = json.loads(result.stdout)["failure"]
    check_golden(GOLDEN / "failure" / triton_series() / "warp_specialize_pointer_loads.json", _golden_facts(d), regen)
    assert d["in_pass"] and d["pass_name"] == "NVGPUWarpSpecialization" and d["stage"] == "ttgir"
    op = d["op"]
    assert (op["name"], op["line"], op["source"]) == \
        ("tt.load", 28, "a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])")
    assert "the load type Triton's error is about" in op["how"] and op["others"] == [29]
    said = " ".join(x["message"] for x in d["diagnostics"])
    assert ("unsupported load type for producer commit" if triton_series() != "3.6" else
            "processProducerCommitOp") in said
    assert any("commit can signal only TMA loads" in w for w in d["explanation"])
    assert not any("LLVM's backend" in w for w in d["explanation"])
    fixes = {x["flags"]: x["compiles"] for x in d["fixes"]}
    assert fixes["-c warp_specialize=False"] is True
    assert any("tensor descriptor" in x["label"] and not x["tried"] for x in d["fixes"])
    err = " ".join(result.stderr.split())
    assert d["one_line"] in err and "on tt.load at warp_specialize_pointer_loads.py:28" in err
    assert "These compile: -c warp_specialize=False" in err


def test_warp_specialized_pointer_loads_in_the_terminal(ws_loads):
    """show reopens it: the op's source line, the plain words, the checked fix, the excerpt marks the load."""
    _, saved = ws_loads
    shown = runner.invoke(app, ["show", str(saved), "--width", "140"], catch_exceptions=False)
    assert shown.exit_code == 0
    out = shown.stdout
    assert "failed in   pass NVGPUWarpSpecialization (ttgir pass" in out
    assert "op          tt.load at warp_specialize_pointer_loads.py:28" in out
    assert "✓ -c warp_specialize=False" in out
    marked = [ln for ln in out.splitlines() if ln.startswith("> ")]
    assert len(marked) == 1 and "tt.load" in marked[0]


def test_emit_of_a_failure_writes_relative_paths_unless_keep_paths(ws_loads, tmp_path):
    """--emit DIR of a failed compile: failure.json and failure.txt write the kernel's folder as '.' (as --save
    does) and say so; with --keep-paths (outputs/save.failure_files) they keep it; the IR the pass received is
    Triton's text, as written."""
    from tritonscope.analyses.failure_model import Failure
    from tritonscope.outputs.save import failure_files

    folder = str(FAILING.resolve())
    out = tmp_path / "out"
    result = runner.invoke(app, ["compile", *WS_LOADS, "--emit", str(out)], catch_exceptions=False)
    assert result.exit_code == ExitCode.COMPILE_ERROR, result.output
    data = json.loads((out / "failure.json").read_text())
    assert data["paths"] == "relative to the kernel's folder"
    assert data["failure"]["file"] == "./warp_specialize_pointer_loads.py"
    assert data["failure"]["op"]["file"] == "./warp_specialize_pointer_loads.py" and data["failure"]["op"]["line"] == 28
    for name in ("failure.json", "failure.txt"):
        assert folder not in (out / name).read_text(), name
    assert "tt.load at warp_specialize_pointer_loads.py:28" in (out / "failure.txt").read_text()
    assert (out / "before-NVGPUWarpSpecialization.mlir").read_text().count("tt.load") >= 2
    # --keep-paths: the report as the compile made it, absolute
    failure = Failure.from_dict(json.loads(ws_loads[0].stdout)["failure"])
    kept = json.loads(failure_files(failure, keep_paths=True)["failure.json"])
    assert kept["paths"] == "absolute" and kept["failure"]["file"].startswith(folder)


# --------------------------------------------------------------------------
# Without Triton (the lines as Triton 3.6 printed them for fp64_dot_tmem_sm100, sm_100a)
# --------------------------------------------------------------------------

VERIFIER_STDERR = (
    "<unknown>:0: error: colStride must be 1, 2, or 4 but got but got 0\n"
    "python: /root/.triton/llvm/llvm-f6ded0be-almalinux-x64/include/mlir/IR/StorageUniquerSupport.h:180: static "
    "ConcreteT mlir::detail::StorageUserBase<A, B, C, mlir::detail::AttributeUniquer>::get(MLIRContext *, Args "
    "&&...): Assertion `succeeded( ConcreteT::verifyInvariants(getDefaultDiagnosticEmitFn(ctx), args...))' "
    "failed.\n")


def test_a_diagnostic_without_a_location_is_kept_with_its_plain_words():
    from types import SimpleNamespace

    from tritonscope.analyses.failure import _diagnostics, explain_text

    said = _diagnostics(SimpleNamespace(remarks=[]), VERIFIER_STDERR, "/k.py")
    assert [(d.severity, d.message, d.file) for d in said][0] == \
        ("error", "colStride must be 1, 2, or 4 but got but got 0", "")
    assert said[1].severity == "assertion" and said[1].file.endswith("StorageUniquerSupport.h")
    assert "comes out 0, which the layout's verifier refuses" in explain_text(said[0].message)
    assert explain_text(f"{said[1].file}:{said[1].line}: {said[1].message}").startswith(
        "The pass built an attribute or type that its verifier refuses")


# LLVM's dialect-conversion debug log as Triton 3.6 printed it for fp32_dot_short_k_amd (gfx942), cut short
CONVERSION_LOG = (
    "[dialect-conversion:1] Legalizing operation : 'tt.load' (0x5626e980a110) {\n"
    "[dialect-conversion:1]     Legalizing operation : 'llvm.insertvalue' (0x5626e987efb0) {\n"
    "[dialect-conversion:1] } -> SUCCESS\n"
    "[dialect-conversion:1] Legalizing operation : 'tt.dot' (0x5626e980fd90) {\n"
    "[dialect-conversion:1]     Legalizing operation : 'llvm.insertvalue' (0x5626e9876f60) {\n"
    "python: /root/.triton/llvm/include/llvm/ADT/SmallVector.h:293: T &llvm::SmallVectorTemplateCommon<T>::"
    "operator[](size_type): Assertion `idx < size()' failed.\n"
    "[dialect-conversion:1] Legalizing operation : 'tt.store' (0x5626e980ff00) {\n")


def test_the_conversion_log_names_the_op_it_was_legalizing():
    """The last top-level op legalized before the assertion (not an op it created, logged indented, nor one
    after); none from a log without it (a Triton built without LLVM's debug output)."""
    from tritonscope.analyses.failure_op import legalizing_op

    assert legalizing_op(CONVERSION_LOG) == "tt.dot"
    assert legalizing_op(CONVERSION_LOG.replace("Assertion `", "no assertion: ")) == "tt.store"
    assert legalizing_op("python: SmallVector.h:293: Assertion `idx < size()' failed.\n") is None


def test_fatal_errors_plain_words():
    """Triton 3.9's fatal error and 3.6's assertion of a warp-specialized pointer load get the same plain words;
    any other `LLVM ERROR` is said as a fatal error that may come from a pass (Triton's passes call LLVM's
    report_fatal_error too), not as LLVM's backend's."""
    from tritonscope.analyses.failure import explain_text

    fatal = "LLVM ERROR: unsupported load type for producer commit"
    asserted = ("/project/third_party/nvidia/hopper/lib/Transforms/WarpSpecialization/WSLowerToken.cpp:73: "
                "Assertion `false' failed. (in mlir::processProducerCommitOp)")
    assert explain_text(fatal) == explain_text(asserted)
    assert "commit can signal only TMA loads" in explain_text(fatal)
    other = explain_text("LLVM ERROR: Fatal pipeliner error")
    assert other.startswith("A fatal error stopped the compile: Fatal pipeliner error")
    assert "LLVM's backend stopped" not in other and "Triton's own passes" in other
    # TritonAMDGPUPipeline's on pipeline_four_loads_amd (gfx950, Triton 3.6; tests/test_failure.py)
    assert explain_text("LLVM ERROR: operation destroyed but still has uses").startswith(
        "The pass erased an op that other ops still use")
