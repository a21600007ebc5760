"""check: expectations from explain's facts, exit codes, the table, JUnit XML and EXAMPLES expectations."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from typer.testing import CliRunner

from conftest import ROOT
from tritonscope.cli import app
from tritonscope.core.errors import ExitCode


def test_parse_expectations():
    from tritonscope.core.errors import UsageError
    from tritonscope.analyses.explain import parse_expectation as p

    assert p("tensor-cores").name == "tensor-cores"
    assert p("tensor_cores").name == "tensor-cores" and p("no_spills").name == "no-spills"
    assert p("!tf32").negate
    e = p("shared<=96KiB")
    assert (e.name, e.op, e.value) == ("shared", "<=", 96 * 1024)
    assert p("occupancy>=50%").value == pytest.approx(0.5) and p("occupancy>=50").value == pytest.approx(0.5)
    assert p("occupancy >= 0.25").value == pytest.approx(0.25)
    assert p("width>=128").value == 128
    for bad in ("width", "tensor-cores>=1", "shard<=4", "registers<=12 parsecs", "<=3"):
        with pytest.raises(UsageError):
            p(bad)


def test_failing_check_exits_10_with_a_table_and_junit(tmp_path):
    junit = tmp_path / "check.xml"
    res = CliRunner().invoke(app, ["check", "matmul_masked", "-c", "BLOCK_SIZE=128", "--expect", "fits",
                                   "--expect", "tensor-cores", "--expect", "no-spills", "--expect", "width>=128",
                                   "--expect", "registers<=128", "--junit", str(junit), "--width", "160"])
    assert res.exit_code == int(ExitCode.CHECK_FAILED) == 10, res.output
    out = res.output
    assert "✗" in out and "✓" in out
    assert "needs 393216 bytes of shared memory" in out          # fits: what was found instead
    assert "num_stages=1 fits" not in out                         # check does not compile candidates
    assert "4 of 5 expectations failed" in out or "expectations failed" in out
    tree = ET.parse(junit)
    root = tree.getroot()
    assert root.tag == "testsuites" and root.get("tests") == "5"
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert set(cases) == {"fits", "tensor-cores", "no-spills", "width>=128", "registers<=128"}
    assert cases["fits"].find("failure") is not None and cases["tensor-cores"].find("failure") is None
    assert cases["registers<=128"].find("failure") is not None
    assert root.get("failures") == str(sum(1 for c in cases.values() if c.find("failure") is not None))


def test_passing_check_for_two_archs(tmp_path):
    res = CliRunner().invoke(app, ["check", "matmul", "--block", "32", "--arch", "sm_80", "--arch", "sm_90a",
                                   "-e", "tensor-cores", "-e", "pipelined", "-e", "no-spills", "-e", "fits",
                                   "-e", "shared<=64KiB", "-e", "occupancy>=25%", "-e", "stages>=2", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["passed"] and len(data["results"]) == 14
    assert {r["arch"] for r in data["results"]} == {"sm_80", "sm_90a"}


def test_unpipelined_config_fails_pipelined():
    res = CliRunner().invoke(app, ["check", "matmul", "--block", "16", "-s", "1", "--arch", "sm_80",
                                   "-e", "pipelined", "-e", "!tf32", "--width", "160"])
    assert res.exit_code == 10, res.output
    assert "not pipelined" in res.output


def test_expectations_from_examples(tmp_path):
    src = (ROOT / "samples" / "vector_add.py").read_text()
    src = src.replace('"launch": launch,', '"launch": launch,\n        "expect": ["width>=128", "no-spills", '
                                            '"occupancy>=0.5"],')
    (tmp_path / "k.py").write_text(src)
    res = CliRunner().invoke(app, ["check", f"{tmp_path / 'k.py'}:add_kernel", "--json"])
    data = json.loads(res.output)
    assert [r["expr"] for r in data["results"]] == ["width>=128", "no-spills", "occupancy>=0.5"]
    # the sample's n_elements (98432) is a multiple of 16: 128-bit accesses
    assert data["passed"] and res.exit_code == 0
    res = CliRunner().invoke(app, ["check", f"{tmp_path / 'k.py'}:add_kernel", "--arg", "n_elements=98431",
                                   "--arg", "x_ptr=*fp32+1"])
    assert res.exit_code == 10 and "width>=128" in res.output


def test_no_expectations_is_a_usage_error():
    res = CliRunner().invoke(app, ["check", "matmul"])
    assert res.exit_code == 2 and "No expectations" in res.output
    res = CliRunner().invoke(app, ["check", "matmul", "-e", "tensr-cores"])
    assert res.exit_code == 2 and "tensor-cores" in res.output


def test_bad_junit_path_fails_before_compiling(tmp_path, monkeypatch):
    monkeypatch.setattr("tritonscope.commands.running.compile_config",
                        lambda *a, **k: (_ for _ in ()).throw(AssertionError("compiled")))
    res = CliRunner().invoke(app, ["check", "matmul", "-e", "fits", "--junit", str(tmp_path / "x.txt")])
    assert res.exit_code == 8
    assert "unknown extension '.txt'" in " ".join(res.output.split()) and "Name the file .xml" in res.output
    assert not (tmp_path / "x.txt").exists()
