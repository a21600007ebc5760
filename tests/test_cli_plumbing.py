"""The CLI's plumbing: the one output writer, the Env, the child-process protocol, the Triton version."""

from __future__ import annotations

import os

import pytest
from typer.testing import CliRunner

from conftest import ROOT
from tritonscope.cli import app
from tritonscope.core.errors import ExitCode, OutputError, UsageError

runner = CliRunner()
REPORT = ROOT / "tests" / "data" / "report_small.json"
LAYOUT = "#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"


def _no_compiling(monkeypatch):
    """Any compile fails the test: the command had to refuse before starting work."""
    def boom(*a, **k):
        raise AssertionError("work started before the output path was checked")

    import importlib

    for module, name in (("pipeline.triton_compile", "compile_artifact"), ("measure.sweep", "run_sweep"), ("pipeline.binding", "build_spec")):
        monkeypatch.setattr(importlib.import_module(f"tritonscope.{module}"), name, boom)


# --------------------------------------------------------------------------
# Every --save is checked before any work
# --------------------------------------------------------------------------


@pytest.mark.parametrize("args", [
    ["compile", "matmul", "--save", "{tmp}/missing/r.html"],
    ["compile", "matmul", "--save", "{tmp}/r.pdf"],
    ["show", str(REPORT), "--save", "{tmp}/r"],
    ["diff", "matmul", "--a", "BLOCK=16", "--b", "BLOCK=32", "--save", "{tmp}/d.md"],
    ["diff", "matmul", "--a", "BLOCK=16", "--b", "BLOCK=32", "--save", "{tmp}/missing/d.json"],
    ["sweep", "matmul", "-c", "BLOCK=16,32", "--save", "{tmp}/rows.txt"],
    ["sweep", "matmul", "-c", "BLOCK=16,32", "--save", "{tmp}/missing/rows.csv"],
    ["sweep", "matmul", "-c", "BLOCK=16,32", "--save", "{tmp}/exists.csv"],
    ["bench", "matmul", "--save", "{tmp}/plot.gif"],
    ["layout", LAYOUT, "--shape", "16x16", "--svg", "{tmp}/exists.svg"],
    ["layout", LAYOUT, "--shape", "16x16", "--svg", "{tmp}/l.png"],
], ids=lambda a: f"{a[0]}-{a[-1].rsplit('/', 1)[-1]}")
def test_bad_output_paths_fail_before_any_work(args, tmp_path, monkeypatch):
    _no_compiling(monkeypatch)
    (tmp_path / "exists.csv").write_text("keep")
    (tmp_path / "exists.svg").write_text("keep")
    before = sorted(p.name for p in tmp_path.iterdir())
    r = runner.invoke(app, [a.replace("{tmp}", str(tmp_path)) for a in args])
    assert r.exit_code == ExitCode.OUTPUT_ERROR, r.output
    assert "error:" in r.output and "hint:" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert (tmp_path / "exists.csv").read_text() == "keep"


def test_layout_svg_goes_through_the_writer(tmp_path):
    svg = tmp_path / "l.svg"
    args = ["layout", LAYOUT, "--shape", "16x16", "--svg", str(svg)]
    assert runner.invoke(app, args).exit_code == 0
    first = svg.read_text()
    assert first.startswith("<svg") or "<svg" in first[:200]
    svg.write_text("old")
    r = runner.invoke(app, args)
    assert r.exit_code == ExitCode.OUTPUT_ERROR and "--force" in r.output and svg.read_text() == "old"
    assert runner.invoke(app, args + ["--force"]).exit_code == 0
    assert svg.read_text() == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.svg"]  # no temporary left behind


def test_formats_come_from_the_extension():
    from tritonscope.core.output import check_path, format_of

    assert format_of("r.HTM", {".html": "html", ".htm": "html"}) == "html"
    with pytest.raises(OutputError) as e:
        format_of("r.csv", {".html": "html", ".htm": "html", ".md": "markdown"}, "report")
    assert e.value.message == "Cannot tell the report format of 'r.csv': unknown extension '.csv'."
    assert e.value.hint == "Name the file .html or .md."
    assert check_path("r.json") == ""  # no formats: only the path is checked


def test_write_cache_is_atomic_and_never_raises(tmp_path):
    from tritonscope.core.output import write_cache

    path = tmp_path / "deep" / "entry.json"
    assert write_cache(path, "{}") and path.read_text() == "{}"
    assert write_cache(path, b"[]") and path.read_text() == "[]"
    (tmp_path / "file").write_text("x")
    assert write_cache(tmp_path / "file" / "entry.json", "{}") is False
    assert sorted(p.name for p in (tmp_path / "deep").iterdir()) == ["entry.json"]


# --------------------------------------------------------------------------
# The Env
# --------------------------------------------------------------------------


def test_env_reads_debug_and_caches(monkeypatch, tmp_path):
    from tritonscope.core.env import Env, cache_dir, env_of

    monkeypatch.setenv("TRITONSCOPE_DEBUG", "1")
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path / "ts"))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "tr"))
    env = Env.from_environ()
    assert env.debug and env.cache == tmp_path / "ts" == cache_dir() and env.triton_cache == tmp_path / "tr"
    shown = env.with_display(width=77, color=False, pager=True)
    assert (shown.width, shown.color, shown.pager, shown.debug) == (77, False, True, True)
    assert shown.console().width == 77 and shown.console().no_color
    assert env_of(None).debug  # outside the CLI: a default Env from the environment


def test_debug_flag_reaches_the_error_handler(tmp_path):
    missing = str(tmp_path / "nope.json")
    plain = runner.invoke(app, ["show", missing])
    assert plain.exit_code == ExitCode.NOT_FOUND and "Traceback" not in plain.output
    debug = runner.invoke(app, ["--debug", "show", missing])
    assert debug.exit_code == ExitCode.NOT_FOUND and "Traceback" in debug.output


# --------------------------------------------------------------------------
# One child-process protocol; one Triton version
# --------------------------------------------------------------------------


def test_child_returns_the_result_or_the_typed_error():
    from tritonscope.core.child import ChildDiedError, run_in_child

    assert run_in_child("json:dumps", {"a": [1, 2]}, what="A test child") == '{"a": [1, 2]}'
    with pytest.raises(UsageError, match="Bad shape 'x'"):
        run_in_child("tritonscope.inputs.kernels:parse_shape", "x", what="A test child")
    with pytest.raises(ChildDiedError, match=r"A test child failed without an answer \(exit 3\)"):
        run_in_child("os:_exit", 3, what="A test child")
    with pytest.raises(Exception, match="unexpected TypeError"):
        run_in_child("os:getcwd", 1, what="A test child")


def test_one_way_to_read_tritons_version():
    import triton

    from tritonscope import triton_api

    assert triton_api.triton_version() == triton.__version__
    assert triton_api.triton_series() == tuple(int(x) for x in triton.__version__.split(".")[:2])


def test_kernel_objects_are_read_through_triton_api():
    from tritonscope import triton_api
    from tritonscope.inputs.kernels import Request
    from tritonscope.pipeline.binding import build_spec

    loaded = build_spec(Request("matmul_autotuned", arch="sm_90a"), "sm_90a")
    assert triton_api.jit_function(loaded.obj) is loaded.jit_fn
    assert triton_api.python_function(loaded.jit_fn).__name__ == loaded.spec.kernel
    params = triton_api.kernel_params(loaded.jit_fn)
    assert ("BLOCK_M", True) in [(n, c) for n, c, _ in params]
    assert triton_api.jit_function(os) is None and triton_api.autotune_configs(loaded.jit_fn) is None
