"""Issue 33, "stale, corrupted or spurious output": what a module reads at import is in the result cache's
key, an os._exit or a thread at import cannot end or hold tritonscope, cross-version encodings compare as
layouts, the diff's wording, a tune/bench that timed nothing, and how a compile that did not happen here
is named."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

READING_KERNEL = """\
import json
import os
import pathlib

import triton
import triton.language as tl

SCALE: tl.constexpr = tl.constexpr(int(os.environ.get("{var}", "3")))
OFFSET: tl.constexpr = tl.constexpr(json.loads((pathlib.Path(__file__).parent / "cfg.json").read_text())["offset"])


@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * SCALE + OFFSET, mask=mask)
"""

SMALL_KERNEL = """\
import triton
import triton.language as tl
{prelude}

@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)
"""


def _cli(args, *, env=None, timeout=120, cwd=ROOT):
    full = dict(os.environ, COLUMNS="120", **(env or {}))
    return subprocess.run([sys.executable, "-m", "tritonscope", *args], cwd=cwd, env=full, capture_output=True,
                          text=True, timeout=timeout)


# --------------------------------------------------------------------------
# 1. What the module reads at import is in the result cache's key
# --------------------------------------------------------------------------


@pytest.fixture
def reading_kernel(tmp_path, monkeypatch):
    from tritonscope.pipeline import result_cache

    var = f"TS_TEST_SCALE_{uuid.uuid4().hex[:8].upper()}"
    folder = tmp_path / f"kern_{uuid.uuid4().hex[:6]}"
    folder.mkdir()
    (folder / "k.py").write_text(READING_KERNEL.format(var=var))
    (folder / "cfg.json").write_text('{"offset": 5}')
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRITONSCOPE_RESULT_CACHE", raising=False)
    monkeypatch.delenv("TRITON_ALWAYS_COMPILE", raising=False)
    monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(result_cache, "tritonscope_build", lambda: {"version": "test", "stamp": "pinned"})
    yield folder, var
    for name in [n for n in sys.modules if n.startswith("_tritonscope_user_")]:
        if str(folder) in str(getattr(sys.modules[name], "__file__", "")):
            del sys.modules[name]


def _ttir(folder: Path) -> str:
    from tritonscope.commands.running import compile_request
    from tritonscope.core.env import Env
    from tritonscope.inputs.kernels import Request

    # a fresh import each time, as a new tritonscope process would do
    for name in [n for n in sys.modules if n.startswith("_tritonscope_user_")]:
        if str(folder) in str(getattr(sys.modules[name], "__file__", "")):
            del sys.modules[name]
    request = Request(f"{folder / 'k.py'}:k", constexprs={"BLOCK": "64"},
                      args={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "1024"}, arch="sm_80")
    return compile_request(request, Env(), progress=False).artifact.stages["ttir"]


def test_an_environment_variable_or_config_file_read_at_import_is_in_the_key(reading_kernel, monkeypatch):
    folder, var = reading_kernel
    from tritonscope.inputs.kernels import Request
    from tritonscope.pipeline import result_cache

    request = Request(f"{folder / 'k.py'}:k", constexprs={"BLOCK": "64"},
                      args={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "1024"}, arch="sm_80")
    assert "3.000000e+00" in _ttir(folder) and "5.000000e+00" in _ttir(folder)
    assert result_cache.lookup(request, "sm_80") is not None  # an unchanged repeat is still a hit

    monkeypatch.setenv(var, "7")  # was unset: a miss, and the new value is compiled
    assert result_cache.lookup(request, "sm_80") is None
    assert "7.000000e+00" in _ttir(folder)
    assert result_cache.lookup(request, "sm_80") is not None

    (folder / "cfg.json").write_text('{"offset": 9}')  # the same size: the mtime tells
    os.utime(folder / "cfg.json", ns=(time.time_ns() + 10**9,) * 2)
    assert result_cache.lookup(request, "sm_80") is None
    ttir = _ttir(folder)
    assert "9.000000e+00" in ttir and "7.000000e+00" in ttir

    monkeypatch.delenv(var)  # back to unset: the first entry, whose config file is no longer what it read
    assert result_cache.lookup(request, "sm_80") is None


def test_a_warm_cli_repeat_sees_a_changed_variable(tmp_path):
    folder = tmp_path / "kernels"
    folder.mkdir()
    (folder / "k.py").write_text(READING_KERNEL.format(var="TS_TEST_SCALE"))
    (folder / "cfg.json").write_text('{"offset": 5}')
    env = {"TRITONSCOPE_CACHE_DIR": str(tmp_path / "cache"), "TRITONSCOPE_RESULT_CACHE": "1"}
    args = ["compile", f"{folder / 'k.py'}:k", "--arg", "x_ptr=*fp32", "--arg", "out_ptr=*fp32", "--arg", "n=1024",
            "-c", "BLOCK=64", "--arch", "sm_80", "--stage", "ttir", "--raw", "--no-color"]

    def scale(value: str) -> str:
        done = _cli(args, env={**env, "TS_TEST_SCALE": value})
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert "3.000000e+00" in scale("3")
    assert "7.000000e+00" in scale("7")   # the replayed or cached answer for 3 was stale
    assert "3.000000e+00" in scale("3")   # and the first is still kept


# --------------------------------------------------------------------------
# 2. os._exit and threads at import
# --------------------------------------------------------------------------


def test_os_exit_at_import_is_a_clear_error(tmp_path):
    path = tmp_path / "exits.py"
    path.write_text(SMALL_KERNEL.format(prelude="import os\nos._exit(3)\n"))
    done = _cli(["compile", f"{path}:k", "--arg", "x_ptr=*fp32", "--arg", "n=8", "-c", "BLOCK=8",
                 "--arch", "sm_80"], timeout=60)
    assert done.returncode == 4, (done.returncode, done.stdout, done.stderr)
    assert "the module called os._exit(3) at import" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_thread_started_at_import_does_not_hold_tritonscope_open(tmp_path):
    path = tmp_path / "threads.py"
    path.write_text(SMALL_KERNEL.format(
        prelude="import threading, time\nthreading.Thread(target=time.sleep, args=(60,)).start()\n"))
    start = time.monotonic()
    done = _cli(["compile", f"{path}:k", "--arg", "x_ptr=*fp32", "--arg", "n=8", "-c", "BLOCK=8",
                 "--arch", "sm_80", "--stage", "ttir", "--raw"], timeout=50,
                env={"TRITONSCOPE_RESULT_CACHE": "0"})
    assert done.returncode == 0, done.stderr
    assert "tt.func" in done.stdout
    assert time.monotonic() - start < 40


def test_os_exit_outside_an_import_is_left_alone():
    from tritonscope.inputs import import_watch

    assert os._exit is import_watch._REAL_EXIT
    with import_watch.watching(Path(__file__), [str(ROOT / "tests")]):
        assert os._exit is not import_watch._REAL_EXIT
        with pytest.raises(import_watch.ModuleExited, match=r"os\._exit\(2\)"):
            os._exit(2)
    assert os._exit is import_watch._REAL_EXIT


# --------------------------------------------------------------------------
# 3. Cross-version diffs compare layouts, not spellings
# --------------------------------------------------------------------------

CORPUS = ROOT / "tests" / "data" / "layout_corpus" / "amd" / "matmul_b32_gfx950.ttgir"


def _as_triton_34(ttgir: str) -> str:
    """Triton 3.4's spelling of the same TTGIR: versionMajor/versionMinor, and an instrShape without K."""
    import re

    text = re.sub(r"amd_mfma<\{version = (\d+)", r"amd_mfma<{versionMajor = \1, versionMinor = 0", ttgir)
    return re.sub(r"instrShape = \[(\d+), (\d+), \d+\]", r"instrShape = [\1, \2]", text)


def _ttgir_analysis(compiled, ttgir: str, version: str):
    import dataclasses

    from tritonscope.analyses.analysis import analyze

    art = compiled("matmul", block=16)
    return analyze(dataclasses.replace(art, stages={"ttgir": ttgir}, triton_version=version))


def test_a_cross_version_diff_reports_no_encoding_change_for_a_respelled_layout(compiled):
    from tritonscope.analyses.diff import diff_analyses

    new = CORPUS.read_text()
    old = _as_triton_34(new)
    assert "versionMajor = 4" in old and "instrShape = [32, 32]" in old and "instrShape = [32, 32, 16]" in new
    d = diff_analyses(_ttgir_analysis(compiled, old, "3.4.0"), _ttgir_analysis(compiled, new, "3.6.0"))
    assert d.roles and not [r.role for r in d.roles if r.changed]
    assert not [line for line in d.story if "encoding" in line], d.story
    acc = {r.role: r for r in d.roles}["accumulator"]
    assert "version = 4" in acc.a and "version = 4" in acc.b  # one spelling on both sides ("v4" on each)

    # a real change still counts: other warps, or another K where both sides state one
    moved = new.replace("warpsPerCTA = [4, 1], instrShape", "warpsPerCTA = [2, 2], instrShape")
    d = diff_analyses(_ttgir_analysis(compiled, old, "3.4.0"), _ttgir_analysis(compiled, moved, "3.6.0"))
    assert "accumulator" in [r.role for r in d.roles if r.changed]
    assert any("encoding" in line for line in d.story), d.story


def test_same_layout_compares_normalized_fields():
    from tritonscope.language.encodings import alias_encoding, same_layout

    a = "32x32xf32 tensor amd_mfma<{versionMajor = 4, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [32, 32]}>"
    b = "32x32xf32 tensor amd_mfma<{version = 4, warpsPerCTA = [4, 1], instrShape = [32, 32, 16]}>"
    assert same_layout(a, b)
    assert not same_layout(b, b.replace("[32, 32, 16]", "[32, 32, 8]"))  # both state K: a change
    assert not same_layout(a, b.replace("version = 4", "version = 3"))
    assert not same_layout(a, None)
    enc = alias_encoding("mma", "#ttg.amd_mfma<{versionMajor = 4, versionMinor = 0, warpsPerCTA = [4, 1], "
                                "instrShape = [32, 32]}>")
    assert enc.fields["version"] == 4 and "versionMajor" not in enc.fields


# --------------------------------------------------------------------------
# 4. Diff wording
# --------------------------------------------------------------------------


def test_a_small_shared_memory_change_is_said_in_bytes_not_1x(compiled):
    import dataclasses

    from tritonscope.analyses.analysis import analyze
    from tritonscope.analyses.diff import diff_analyses

    art = compiled("matmul", block=16)

    def with_shared(n: int):
        return analyze(dataclasses.replace(art, resources=dataclasses.replace(art.resources, dynamic_shared=n)))

    d = diff_analyses(with_shared(49_152), with_shared(49_168))
    said = [line for line in d.story if "shared memory" in line]
    assert said == ["B needs 16 more bytes of shared memory (+0.03%: 49,168 vs 49,152 bytes)"], d.story
    row = next(r for r in d.rows if r.name.startswith("dynamic shared memory"))
    assert row.delta == "+16 (+0.03%)"
    d = diff_analyses(with_shared(49_168), with_shared(49_152))
    assert "B needs 16 fewer bytes of shared memory (-0.03%: 49,152 vs 49,168 bytes)" in d.story
    d = diff_analyses(with_shared(2_048), with_shared(49_152))  # a real ratio keeps its words
    assert "B needs 24x the shared memory (49,152 vs 2,048 bytes)" in d.story


def test_a_role_on_one_side_only_is_worded_with_its_article(compiled):
    from tritonscope.analyses.analysis import analyze
    from tritonscope.analyses.diff import RoleEncoding, facts, story

    a = analyze(compiled("matmul", block=16))
    roles = [RoleEncoding("A operand (dot 2)", "16x16xf16 tensor blocked<{}>", None),
             RoleEncoding("B operand (dot 2)", None, "16x16xf16 tensor blocked<{}>"),
             RoleEncoding("accumulator (dot 2)", None, "16x16xf32 tensor blocked<{}>")]
    lines = story(a, a, facts(a), facts(a), roles)
    assert "only A has an A operand (dot 2) (B has none)" in lines, lines
    assert "only B has a B operand (dot 2) (A has none)" in lines, lines
    assert "only B has an accumulator (dot 2) (A has none)" in lines, lines
    assert not any(" a A " in line for line in lines)


def test_open_recompile_diff_prints_the_recompile_warnings():
    from typer.testing import CliRunner

    from tritonscope import triton_api
    from tritonscope.cli import app

    series = "%d.%d" % (triton_api.triton_series() or (0, 0))
    cache = ROOT / "tests" / "data" / "found_loop" / series / "cache"
    if not cache.is_dir():
        pytest.skip(f"no found_loop fixture for Triton {series}")
    r = CliRunner().invoke(app, ["open", str(cache), "--kernel", "row_sum_kernel", "--recompile", "--diff",
                                 "--stage", "none", "--width", "200", "--no-color"])
    assert r.exit_code == 0, r.output
    flat = " ".join(r.output.split())
    assert "Triton IR (TTIR) -" in flat  # the TTIR differs (SSA names) ...
    assert "warning: Recompiled from its pre-pass TTIR (.source)" in flat  # ... and the warnings say why
    assert "may name those values differently" in flat


# --------------------------------------------------------------------------
# 5. A tune or bench that timed nothing exits 13 (GPU-less: the GPU's part is faked)
# --------------------------------------------------------------------------


def _fake_gpu(monkeypatch):
    import torch

    from tritonscope.measure import runner

    monkeypatch.setattr(runner, "require_gpu", lambda what="": None)
    monkeypatch.setattr(runner, "device_name", lambda: "NVIDIA H100 80GB HBM3")
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "NVIDIA H100 80GB HBM3")
    monkeypatch.setattr("tritonscope.pipeline.config.local_arch", lambda: "sm_90a")


@pytest.mark.needs("torch")
def test_a_tune_that_timed_nothing_exits_13(monkeypatch):
    from typer.testing import CliRunner

    from tritonscope.cli import app
    from tritonscope.measure import tune as tune_mod

    _fake_gpu(monkeypatch)
    # every launch fails, as `tune --dtype fp8e4nv` did (`module 'torch' has no attribute 'float8e4nv'`)
    monkeypatch.setattr(tune_mod, "time_configs", lambda requests, indices, *a, **k: {
        i: {"status": "failed: AttributeError: module 'torch' has no attribute 'float8e4nv'", "measured_ms": None,
            "measure_s": 0.0, "check_s": 0.0, "new_kernels": []} for i in indices})
    monkeypatch.setattr(tune_mod, "_warm_parent", lambda *a: None)
    r = CliRunner().invoke(app, ["tune", "vector_add", "-c", "BLOCK=1024", "--shape", "65536", "--gpu", "H100",
                                 "-j", "1"])
    assert r.exit_code == 13, r.output
    assert "pick: none" in r.output
    assert "tune timed nothing" in r.output and "float8e4nv" in r.output
    assert "Traceback" not in r.output


@pytest.mark.needs("torch")
def test_a_bench_that_timed_nothing_exits_13(monkeypatch):
    from tritonscope.commands.bench import bench_outcome
    from tritonscope.core.errors import ExitCode, NoResultError
    from tritonscope.inputs.kernels import Request
    from tritonscope.measure import bench, runner
    from tritonscope.measure.bench import BenchRow
    from tritonscope.pipeline.binding import build_spec

    tight = [BenchRow("BLOCK=4096", None, "fp32", {}, 4, 3, "out of resources", problem="too much shared memory")]
    problem = bench_outcome(tight)
    assert isinstance(problem, NoResultError) and problem.exit_code == ExitCode.NO_RESULT == 13
    assert "timed nothing" in problem.message

    # inputs torch cannot make (a dtype it lacks) fail the config (exit 13), not tritonscope (exit 1)
    def no_such_dtype(*a, **k):
        raise AttributeError("module 'torch' has no attribute 'float8e4nv'")

    monkeypatch.setattr(runner, "make_inputs", no_such_dtype)
    monkeypatch.setattr(bench.triton_api, "set_allocator", lambda: None)
    loaded = build_spec(Request("vector_add", constexprs={"BLOCK": "1024"}, arch="sm_90a"), "sm_90a")
    row, values = bench.prepare_loaded(loaded)
    assert values is None and row.status == "failed" and "float8e4nv" in row.problem
    assert isinstance(bench_outcome([row]), NoResultError)


# --------------------------------------------------------------------------
# 6. A compile that did not happen here is not timed as one
# --------------------------------------------------------------------------


def test_a_found_kernel_says_not_compiled_here():
    from typer.testing import CliRunner

    from tritonscope import triton_api
    from tritonscope.cli import app

    series = "%d.%d" % (triton_api.triton_series() or (0, 0))
    cache = ROOT / "tests" / "data" / "found_loop" / series / "cache"
    if not cache.is_dir():
        pytest.skip(f"no found_loop fixture for Triton {series}")
    r = CliRunner().invoke(app, ["open", str(cache), "--kernel", "row_sum_kernel", "--stage", "none",
                                 "--width", "160", "--no-color"])
    assert r.exit_code == 0, r.output
    assert "not compiled here" in r.output and "compiled in 0.00 s" not in r.output


def test_a_result_cache_answer_and_a_replay_say_replayed(reading_kernel):
    from rich.console import Console

    from tritonscope.commands.running import analysis_of, compile_request
    from tritonscope.core.env import Env
    from tritonscope.inputs.kernels import Request
    from tritonscope.outputs.render.terminal import summary_panel
    from tritonscope.pipeline.replay import replayed_text

    folder, _ = reading_kernel
    request = Request(f"{folder / 'k.py'}:k", constexprs={"BLOCK": "64"},
                      args={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "1024"}, arch="sm_80")

    def hash_row(compiled) -> str:
        console = Console(width=200, record=True, color_system=None)
        console.print(summary_panel(analysis_of(compiled)))
        return next(line for line in console.export_text().splitlines() if " hash " in line)

    fresh = compile_request(request, Env(), progress=False)
    assert fresh.loaded is not None and "compiled in" in hash_row(fresh)
    again = compile_request(request, Env(), progress=False)
    assert again.loaded is None  # from the result cache
    row = hash_row(again)
    seconds = f"{again.artifact.compile_seconds:.2f}"
    assert f"replayed from the cache (the compile took {seconds} s)" in row and "compiled in" not in row

    # replay writes back a fresh run's output with its compile time said as replayed, in the same width
    line = "│ hash           294eb5573e11ebd9  compiled in 0.74 s                                   │"
    back = replayed_text(line)
    assert "replayed" in back and "compiled in" not in back and len(back) == len(line)
    assert "0.74 s" in back


def test_the_sweep_row_cache_keys_on_what_the_module_read(reading_kernel, monkeypatch):
    from tritonscope.inputs.kernels import Request, load_module
    from tritonscope.measure.sweep.cache import row_cache_key

    folder, var = reading_kernel
    request = Request(f"{folder / 'k.py'}:k", constexprs={"BLOCK": "64"},
                      args={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "1024"}, arch="sm_80")

    def key_after_import(value: str) -> str:
        monkeypatch.setenv(var, value)
        for name in [n for n in sys.modules if n.startswith("_tritonscope_user_")]:
            if str(folder) in str(getattr(sys.modules[name], "__file__", "")):
                del sys.modules[name]
        load_module(folder / "k.py", "sm_80")   # as sweep's parent imports the kernel before it keys its rows
        return row_cache_key(request, "sm_80")

    assert key_after_import("3") == key_after_import("3")
    assert key_after_import("7") != key_after_import("3")
