"""Issue 23, hostile user: bad values that gave exit 1 ("a tritonscope bug"), were accepted silently, or
were checked only after the work.  Each gets one line and its documented exit code, before any compile."""

from __future__ import annotations

import importlib

import pytest
from typer.testing import CliRunner

from conftest import ROOT
from tritonscope.cli import app
from tritonscope.core.errors import ExitCode

runner = CliRunner()
REPORT = ROOT / "tests" / "data" / "report_small.json"


def _no_work(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("work started before the options were checked")

    for module, name in (("pipeline.triton_compile", "compile_artifact"), ("pipeline.triton_compile", "_compile"), ("pipeline.child_compile", "compile_elsewhere"),
                         ("measure.sweep", "run_sweep"), ("pipeline.binding", "build_spec"), ("commands.passes", "trace_request"),
                         ("commands.running", "trace_request"), ("outputs.report", "load_analysis")):
        monkeypatch.setattr(importlib.import_module(f"tritonscope.{module}"), name, boom)


def _one_clean_error(result, code: int, words: str) -> None:
    assert result.exit_code == code, result.output
    assert words in " ".join(result.output.split())
    assert "Traceback" not in result.output and "unexpected" not in result.output and "bug" not in result.output


@pytest.mark.parametrize("args,code,words", [
    (["compile", "matmul", "--timeout", "nan"], 2, "--timeout nan"),
    (["compile", "matmul", "--timeout", "inf"], 2, "--timeout inf"),
    (["compile", "matmul", "--line", "-5"], 2, "--line -5: line numbers start at 1"),
    (["compile", "matmul", "--line", "0"], 2, "--line 0"),
    (["show", str(REPORT), "--line", "-5"], 2, "--line -5"),
    (["passes", "matmul", "--line", "-5"], 2, "--line -5"),
    (["passes", "matmul", "--find", ""], 2, "--find needs an op name"),
    (["passes", "matmul", "--find", "  "], 2, "--find needs an op name"),
    (["passes", "matmul", "--find", "/[/"], 2, "Bad regular expression"),
    (["compile", "matmul", "--save", ""], 2, "--save '' names no file or folder"),
    (["compile", "matmul", "--emit", ""], 2, "--emit '' names no file or folder"),
    (["compile", "matmul", "--emit", " "], 2, "--emit ' ' names no file or folder"),
    (["show", str(REPORT), "--save", ""], 2, "--save ''"),
    (["sweep", "matmul", "-c", "BLOCK=16", "--save", ""], 2, "--save ''"),
    (["diff", "matmul", "--a", "BLOCK=16", "--b", "BLOCK=32", "--save", ""], 2, "--save ''"),
    (["diff", "matmul", "--a", "BLOCK=16", "--b", "BLOCK=32", "-U", "-1"], 2, "-U/--context -1"),
    (["passes", "--dump", ""], 2, "--dump ''"),
])
def test_bad_values_are_refused_before_work(monkeypatch, args, code, words):
    _no_work(monkeypatch)
    _one_clean_error(runner.invoke(app, args), code, words)


def test_sweep_where_and_sort_are_checked_before_any_config_compiles(monkeypatch):
    from tritonscope.measure import sweep

    def boom(*a, **k):
        raise AssertionError("the sweep ran before --where was checked")

    monkeypatch.setattr(sweep, "run_sweep", boom)
    grid = ["sweep", "matmul", "-c", "BLOCK=16,32,64", "--num-warps", "2,4,8", "--num-stages", "1,2,3,4,5"]
    _one_clean_error(runner.invoke(app, [*grid, "--where", "nothing=1"]), 2, "Unknown field 'nothing'")
    _one_clean_error(runner.invoke(app, [*grid, "--where", "shared"]), 2, "Cannot read --where")
    _one_clean_error(runner.invoke(app, [*grid, "--sort", "-nothing"]), 2, "Cannot sort by '-nothing'")
    # what the rows can answer still reaches the sweep
    for ok in (["--where", "BLOCK=16"], ["--where", "fits"], ["--where", "regs<100"], ["--where", "mix.wgmma>0"],
               ["--sort", "-BLOCK"], ["--sort", "occupancy"]):
        assert "the sweep ran" in runner.invoke(app, [*grid, *ok]).output, ok


def test_save_to_a_link_to_nothing_or_into_proc_fails_before_the_compile(monkeypatch, tmp_path):
    _no_work(monkeypatch)
    link = tmp_path / "r.json"
    link.symlink_to(tmp_path / "missing" / "r.json")
    _one_clean_error(runner.invoke(app, ["compile", "matmul", "--save", str(link)]), 8, "which does not exist")
    assert link.is_symlink() and not link.exists()
    link2 = tmp_path / "r2.json"
    link2.symlink_to(tmp_path / "r-target.json")
    _one_clean_error(runner.invoke(app, ["compile", "matmul", "--save", str(link2)]), 8, "symbolic link")
    _one_clean_error(runner.invoke(app, ["compile", "matmul", "--save", "/proc/r.json"]), 8, "Cannot write /proc/r.json")
    _one_clean_error(runner.invoke(app, ["sweep", "matmul", "-c", "BLOCK=16", "--save", "/proc/r.csv"]), 8,
                     "Cannot write /proc/r.csv")


@pytest.fixture(scope="module")
def deep_json(tmp_path_factory):
    folder = tmp_path_factory.mktemp("deep")
    out = {}
    for name, depth in (("array", 100_000), ("object", 100_000), ("shallower", 900)):
        path = folder / f"{name}.json"
        path.write_text("[" * depth + "]" * depth if name != "object" else '{"a":' * depth + "1" + "}" * depth)
        out[name] = path
    return out


@pytest.mark.parametrize("name", ["array", "object", "shallower"])
def test_a_deeply_nested_json_is_a_bad_input_file(deep_json, name):
    path = str(deep_json[name])
    _one_clean_error(runner.invoke(app, ["show", path]), ExitCode.BAD_INPUT_FILE, "nested too deeply")
    _one_clean_error(runner.invoke(app, ["diff", path, str(REPORT)]), ExitCode.BAD_INPUT_FILE, "nested too deeply")
    import tritonscope
    from tritonscope.core.errors import InputFileError

    with pytest.raises(InputFileError, match="nested too deeply"):
        tritonscope.show(path)


@pytest.mark.parametrize("value", ["abc", "nan", "inf", "-5", "0"])
def test_max_report_mb_that_is_no_size_is_refused(monkeypatch, value):
    monkeypatch.setenv("TRITONSCOPE_MAX_REPORT_MB", value)
    _one_clean_error(runner.invoke(app, ["show", str(REPORT)]), 2, f"TRITONSCOPE_MAX_REPORT_MB={value!r} is not a size")
    monkeypatch.setenv("TRITONSCOPE_MAX_REPORT_MB", "512")
    assert runner.invoke(app, ["show", str(REPORT), "--stage", "none"]).exit_code == 0


@pytest.mark.parametrize("content", [b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 40,
                                     bytes((i * 7919) % 256 for i in range(3000)) + b"\xff\xfe"])
def test_a_binary_pass_dump_is_refused_in_one_line(tmp_path, content):
    dump = tmp_path / "dump.mlir"
    dump.write_bytes(content)
    result = runner.invoke(app, ["passes", "--dump", str(dump)])
    _one_clean_error(result, ExitCode.BAD_INPUT_FILE, "is a binary file, not an MLIR pass dump")
    assert "\ufffd" not in result.output and "\\x" not in result.output
    assert len(result.output.strip().splitlines()) <= 4
