"""Issue 34, the patterns: an out-of-range op failing inside a pass, from a kernel written here.

- fp32_dot_short_k_amd: an fp32 tl.dot with K=8 for gfx942; Triton 3.6's ConvertTritonAMDGPUToLLVM reads past
  the end of the operand values it unpacked (LLVM's `idx < size()` assertion); Triton 3.9 compiles it.  Neither
  fewer stages nor other warps compile it, so the report's hint says no fix was found.

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


@pytest.fixture(scope="module")
def short_k(tmp_path_factory):
    """One compile of the failing kernel, --json and --save: (the CLI result, the saved report's path)."""
    if triton_series() != "3.6":
        pytest.skip(f"fp32_dot_short_k_amd fails on Triton 3.6 only; {triton_series()} compiles it")
    if not triton_api.has_backend("amd"):
        pytest.skip("this Triton has no amd backend")
    saved = tmp_path_factory.mktemp("short_k") / "failure.json"
    result = runner.invoke(app, ["compile", *SHORT_K, "--json", "--save", str(saved)], catch_exceptions=False)
    return result, saved


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
