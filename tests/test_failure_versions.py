"""Issue 34's failure report across Triton versions: a failing `versions` side says the pass, the op and the
Python line in one line (the report itself in --json, --save and --record), and "another Triton version" is a
thing to try: checked with an environment `versions` made, said as not tried without one.

Real failures (tests/data/failing/): fp64_dot_amd fails on Triton 3.6 for gfx942 in
ConvertTritonAMDGPUToLLVM and compiles on 3.9; libdevice_on_amd fails on both.  The two Tritons are this
checkout's two environments (.venv: 3.9, .venv36: 3.6), named by their Python: nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import DATA, ROOT, triton_series
from tritonscope import triton_api
from tritonscope.cli import app
from tritonscope.core.errors import ExitCode

runner = CliRunner()
FAILING = DATA / "failing"
PYTHONS = {"3.6": ROOT / ".venv36" / "bin" / "python", "3.9": ROOT / ".venv" / "bin" / "python"}
FP64 = [f"{FAILING}/fp64_dot_amd.py:dot_kernel", "--arch", "gfx942", "--arg", "a_ptr=*fp64",
        "--arg", "out_ptr=*fp64", "-c", "BLOCK=64"]
LIBDEVICE = [f"{FAILING}/libdevice_on_amd.py:rsqrt_kernel", "--arch", "gfx942", "--arg", "x_ptr=*fp32",
             "--arg", "out_ptr=*fp32", "--arg", "n=1024", "-c", "BLOCK=256"]


def _need_both():
    missing = [v for v, p in PYTHONS.items() if not p.exists()]
    if missing:
        pytest.skip(f"no Triton {', '.join(missing)} environment in this checkout ({PYTHONS[missing[0]]})")
    if not triton_api.has_backend("amd"):
        pytest.skip("this Triton has no amd backend")


@pytest.fixture(scope="module")
def fp64_versions(tmp_path_factory):
    """versions of the fp64 dot, A = Triton 3.6 (fails), B = 3.9 (compiles): its --json and its record."""
    _need_both()
    record = tmp_path_factory.mktemp("rec") / "record"
    result = runner.invoke(app, ["versions", *FP64, "--a", str(PYTHONS["3.6"]), "--b", str(PYTHONS["3.9"]),
                                 "--json", "--record", str(record)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), record


def test_a_failing_versions_side_names_pass_op_and_line(fp64_versions):
    data, _ = fp64_versions
    (row,) = data["rows"]
    assert row["status"] == "fails in A" and row["b"] is not None
    err = row["a_error"]
    assert err["line"].startswith("pass ConvertTritonAMDGPUToLLVM (llir pass ")
    assert "on tt.dot at fp64_dot_amd.py:19: PassManager::run failed" in err["line"]
    report = err["failure"]   # the whole report, as compile --json holds it
    assert report["pass_name"] == "ConvertTritonAMDGPUToLLVM" and report["triton_version"] == "3.6.0"
    assert report["op"]["line"] == 19 and report["op"]["source"] == "c = tl.dot(a, a)"
    assert any(d["severity"] == "assertion" for d in report["diagnostics"])
    assert "versions --json" in err["hint"]


def test_the_record_keeps_the_report_and_every_format_shows_the_line(fp64_versions, tmp_path):
    _, record = fp64_versions
    manifest = json.loads((record / "manifest.json").read_text())
    kept = manifest["jobs"][0]["sides"][0]["error"]
    assert kept["failure"]["op"]["line"] == 19 and kept["line"].startswith("pass ConvertTritonAMDGPUToLLVM")
    shown = runner.invoke(app, ["versions", "--replay", str(record), "--width", "100"], catch_exceptions=False)
    assert shown.exit_code == 0
    assert "A fails: pass ConvertTritonAMDGPUToLLVM (llir pass" in shown.stdout
    assert "on tt.dot at fp64_dot_amd.py:19" in " ".join(shown.stdout.split())
    for ext in ("md", "html", "json"):
        out = tmp_path / f"v.{ext}"
        saved = runner.invoke(app, ["versions", "--replay", str(record), "--save", str(out)], catch_exceptions=False)
        assert saved.exit_code == 0
        text = out.read_text().replace("\\_", "_")   # Markdown escapes the underscores
        assert "ConvertTritonAMDGPUToLLVM" in text and "fp64_dot_amd.py:19" in text
    assert json.loads((tmp_path / "v.json").read_text())["rows"][0]["a_error"]["failure"]["op"]["name"] == "tt.dot"


def test_a_tampered_failure_in_a_record_is_refused(fp64_versions, tmp_path):
    import shutil

    _, record = fp64_versions
    bad = tmp_path / "bad"
    shutil.copytree(record, bad)
    manifest = json.loads((bad / "manifest.json").read_text())
    manifest["jobs"][0]["sides"][0]["error"]["failure"] = ["not", "a", "report"]
    (bad / "manifest.json").write_text(json.dumps(manifest))
    result = runner.invoke(app, ["versions", "--replay", str(bad)])
    assert result.exit_code == ExitCode.BAD_INPUT_FILE, result.output
    assert "error.failure is a list" in " ".join(result.output.split())


# --------------------------------------------------------------------------
# Another Triton version, as a thing to try
# --------------------------------------------------------------------------

def _made_env(cache: Path, version: str, python: Path) -> None:
    """An environment as `versions --add` leaves it, whose Python is this checkout's other venv (no pip)."""
    folder = cache / "triton-envs" / f"triton-{version}"
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "python").write_text(f'#!/bin/sh\nexec {python} "$@"\n')
    (folder / "bin" / "python").chmod(0o755)
    (folder / "tritonscope-env.json").write_text(json.dumps({"requested": version, "triton": version}))


def _fixes(args, monkeypatch, cache: Path | None = None) -> dict:
    if cache is not None:
        monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(cache))
    result = runner.invoke(app, ["compile", *args, "--json"], catch_exceptions=False)
    assert result.exit_code == ExitCode.COMPILE_ERROR, result.output
    return {x["flags"]: x for x in json.loads(result.stdout)["failure"]["fixes"]}


def test_another_triton_is_checked_with_an_environment_versions_made(tmp_path, monkeypatch):
    """On 3.6 the fp64 dot fails and a 3.9 environment compiles it; on 3.9 the libdevice call fails and so does
    it on a 3.6 environment.  Either way the check ran, and says so."""
    _need_both()
    other = "3.9" if triton_series() == "3.6" else "3.6"
    _made_env(tmp_path, f"{other}.0", PYTHONS[other])
    if triton_series() == "3.6":
        fix = _fixes(FP64, monkeypatch, tmp_path)["--triton 3.9.0"]
        assert fix["tried"] and fix["compiles"] and fix["said"] == "compiles"
    else:
        fix = _fixes(LIBDEVICE, monkeypatch, tmp_path)["--triton 3.6.0"]
        assert fix["tried"] and fix["compiles"] is False and fix["said"].startswith("fails too")


def test_another_triton_without_an_environment_is_said_as_not_tried(monkeypatch, tmp_path):
    if not triton_api.has_backend("amd"):
        pytest.skip("this Triton has no amd backend")
    fix = _fixes(LIBDEVICE, monkeypatch, tmp_path / "empty")["--triton VERSION"]
    assert not fix["tried"] and fix["compiles"] is None
    assert fix["said"].startswith("not tried: no other Triton environment here")


def test_other_tritons_reads_only_whole_environments(tmp_path, monkeypatch):
    from tritonscope.analyses.failure import other_tritons

    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path))
    _made_env(tmp_path, "3.4.0", Path(sys.executable))
    _made_env(tmp_path, "3.6.0", Path(sys.executable))
    _made_env(tmp_path, "3.9.0", Path(sys.executable))
    (tmp_path / "triton-envs" / "triton-3.4.0" / "tritonscope-env.json").write_text("{damaged")
    os.remove(tmp_path / "triton-envs" / "triton-3.6.0" / "bin" / "python")
    assert [v for v, _ in other_tritons("3.5.0")] == ["3.9.0"]
    assert other_tritons("3.9.0") == []


# --------------------------------------------------------------------------
# AMD buffer ops: the knob that turns the failing pass off is offered and checked
# --------------------------------------------------------------------------

@pytest.mark.parametrize("pass_name", ["TritonAMDGPUConvertToBufferOps", "TritonAMDGPUCanonicalizePointers"])
def test_buffer_ops_off_is_checked_with_the_knob_set(pass_name, monkeypatch, tmp_path):
    """Both passes run only with buffer ops on (Triton's amd/compiler.py), so AMDGCN_USE_BUFFER_OPS=0 is a fix to
    check: the check compiles in a child whose environment has it (the compile itself is faked here: no kernel
    installed here fails in these passes on 3.6 or 3.9, see the docs notes)."""
    from tritonscope.analyses import failure as F
    from tritonscope.inputs.kernels import Request
    from tritonscope.pipeline.config import resolve

    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path))
    config = resolve(Request("vector_add", arch="gfx942"), "gfx942")
    f = F.Failure(kernel="add_kernel", file="", arch="gfx942", label="", triton_version="3.6.0",
                  error="RuntimeError: PassManager::run failed", stage="ttgir", in_pass=True, pass_name=pass_name)
    seen = []

    def compile_elsewhere(changed, **kw):
        seen.append((kw.get("env") or {}).get("AMDGCN_USE_BUFFER_OPS"))

    import tritonscope.pipeline as pipeline_pkg
    module = next(m for m in ("child_compile", "compile") if hasattr(__import__(f"tritonscope.pipeline.{m}",
                                                                                fromlist=["x"]), "compile_elsewhere"))
    monkeypatch.setattr(getattr(pipeline_pkg, module), "compile_elsewhere", compile_elsewhere)
    F.check_fixes(f, config, limit=1)
    (fix,) = [x for x in f.fixes if x.flags == "AMDGCN_USE_BUFFER_OPS=0"]
    assert fix.tried and fix.compiles and seen == ["0"]
    assert any("AMDGCN_USE_BUFFER_OPS=0" in w for w in F._pass_words(pass_name))


# --------------------------------------------------------------------------
# open --recompile of a found kernel that fails: the failure report
# --------------------------------------------------------------------------

def test_open_recompile_of_a_found_kernel_that_fails_gets_the_report(tmp_path, monkeypatch):
    """The libdevice kernel compiles for sm_90a (into a Triton cache here); recompiled from that cache for gfx942
    it fails in make_llir: open --recompile says where (the op and its Python line) and what Triton's words mean."""
    if not triton_api.has_backend("amd"):
        pytest.skip("this Triton has no amd backend")
    cache = tmp_path / "triton-cache"
    monkeypatch.setenv("TRITON_CACHE_DIR", str(cache))
    made = runner.invoke(app, ["compile", *[a if a != "gfx942" else "sm_90a" for a in LIBDEVICE], "--stage", "none"],
                         catch_exceptions=False)
    assert made.exit_code == 0, made.output
    result = runner.invoke(app, ["open", str(cache), "-k", "rsqrt_kernel", "--recompile", "--arch", "gfx942",
                                 "--json"], catch_exceptions=False)
    assert result.exit_code == ExitCode.COMPILE_ERROR, result.output
    d = json.loads(result.stdout)["failure"]
    assert d["stage_function"] == "make_llir" and not d["in_pass"]
    assert (d["op"]["name"], d["op"]["line"]) == ("llvm.call", 21)
    assert d["op"]["source"] == "y = tl.extra.cuda.libdevice.rsqrt(x)"
    assert "no libdevice" in " ".join(d["explanation"])
    assert any(x["label"].startswith("change the source") and not x["tried"] for x in d["fixes"])
    said = " ".join(result.stderr.split())
    assert "Recompiling rsqrt_kernel for gfx942 failed" in said and "on llvm.call at libdevice_on_amd.py:21" in said
