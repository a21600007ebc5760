"""Launch options on every command that compiles or launches: diff, sweep, bench, run (issue 11).

`--maxnreg`, `--num-ctas` and `--fp-fusion/--no-fp-fusion` (and, in diff,
the side keywords maxnreg=, num_ctas=, fp_fusion=) must reach the compile
exactly as a launch's keywords do, and a bad value must stop the command with
exit 2 before anything compiles.  The compiles are real (sm_90a, CPU only):
vector_add at BLOCK=4096 needs about 78 registers per thread, so maxnreg=32
shows up as fewer registers and a spill; softmax's PTX changes with fp fusion;
num_ctas=2 asks ptxas for a cluster (`.reqnctapercluster 2`).  bench and a
GPU `run` need a CUDA GPU: their launch is checked through runner.launch (the
one function both call) with a recording kernel, and bench's compile with the
timing replaced.
"""

from __future__ import annotations

import csv
import json
import textwrap

import pytest
from typer.testing import CliRunner

from tritonscope.cli import app
from tritonscope.core.errors import ExitCode

runner = CliRunner()
SPILLS = ["-c", "BLOCK=4096", "--arch", "sm_90a"]   # vector_add: ~78 registers per thread unlimited


def invoke(*args):
    result = runner.invoke(app, [str(a) for a in args])
    assert "Traceback" not in result.output, result.output
    return result


def ok_json(*args) -> dict:
    result = invoke(*args, "--json")
    assert result.exit_code == 0, result.output[-1500:]
    return json.loads(result.output[result.output.index("{"):])


def row(diff: dict, name: str) -> tuple[str, str]:
    found = next(r for r in diff["summary"] if r["name"] == name)
    return found["a"], found["b"]


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def no_compile(monkeypatch):
    """Any compile fails the test: validation must come first."""
    import importlib

    compile_mod = importlib.import_module("tritonscope.pipeline.triton_compile")

    def refuse(*a, **k):
        raise AssertionError("compiled before the options were checked")

    monkeypatch.setattr(compile_mod, "compile_artifact", refuse)
    monkeypatch.setattr(compile_mod, "_compile", refuse)


# --------------------------------------------------------------------------
# diff: --a/--b keywords and the options for both sides
# --------------------------------------------------------------------------


def test_diff_side_maxnreg_reaches_the_compile():
    d = ok_json("diff", "vector_add", *SPILLS, "--b", "maxnreg=32", "--stage", "none")
    regs_a, regs_b = map(int, map(lambda v: v.replace(",", ""), row(d, "registers per thread")))
    assert regs_a > 32 >= regs_b
    spill_a, spill_b = row(d, "spills (stack + local bytes per thread)")
    assert spill_a == "0" and int(spill_b) > 0
    assert d["config_changes"] == ["maxnreg: - -> 32"]
    assert "maxnreg=32" in d["b"] and "maxnreg" not in d["a"]
    text = invoke("diff", "vector_add", *SPILLS, "--b", "maxnreg=32", "--stage", "none", "--width", "120").output
    assert "changed maxnreg: - -> 32" in flat(text) and "B spills" in flat(text)


def test_diff_options_for_both_sides():
    d = ok_json("diff", "vector_add", *SPILLS, "--maxnreg", "32", "--a", "num_warps=4", "--b", "num_warps=8",
                "--stage", "none")
    assert all(int(v) <= 32 for v in row(d, "registers per thread"))
    assert d["config_changes"] == ["num_warps: 4 -> 8"]   # the same maxnreg on both sides is no change


def test_diff_fp_fusion_and_num_ctas_sides():
    d = ok_json("diff", "softmax", "--arch", "sm_90a", "--a", "fp_fusion=on", "--b", "fp_fusion=off")
    stages = {s["stage"]: s for s in d["stages"]}
    assert d["config_changes"] == ["enable_fp_fusion: True -> False"]
    assert stages["ttgir"]["identical"] and not stages["ptx"]["identical"]  # no contraction: sub.rn / mul.rn
    assert any(tag == "+" and ".rn." in text for tag, text, *_ in stages["ptx"]["diff"])
    d = ok_json("diff", "vector_add", "--arch", "sm_90a", "--a", "num_ctas=1", "--b", "num_ctas=2",
                "--stage", "ptx")
    stages = {s["stage"]: s for s in d["stages"]}
    assert any(tag == "+" and ".reqnctapercluster 2" in text for tag, text, *_ in stages["ptx"]["diff"])
    assert d["config_changes"] == ["num_ctas: 1 -> 2"]


@pytest.mark.parametrize("args, says", [
    (["--a", "maxnreg=7"], "--a maxnreg=7"),
    (["--b", "num_ctas=3"], "--b num_ctas=3"),
    (["--a", "fp_fusion=maybe"], "--a fp_fusion=maybe"),
    (["--a", "maxnreg=lots"], "not an integer"),
    (["--maxnreg", "300"], "--maxnreg 300"),
    (["--a", "arch=sm_90a", "--b", "arch=gfx942,maxnreg=64"], "HIP backend has no such option"),
    (["--arch", "sm_80", "--b", "num_ctas=2"], "needs sm_90 or newer"),
])
def test_diff_refuses_bad_options_before_compiling(no_compile, args, says):
    result = invoke("diff", "vector_add", *args)
    assert result.exit_code == ExitCode.USAGE, result.output
    assert says in flat(result.output)


def test_diff_refuses_options_on_a_saved_report(no_compile, tmp_path):
    report = tmp_path / "r.json"
    report.write_text("{}")
    result = invoke("diff", str(report), "vector_add", "--a", "maxnreg=32")
    assert result.exit_code == ExitCode.USAGE and "cannot change a saved report" in flat(result.output)


# --------------------------------------------------------------------------
# sweep: options for every config, and a Config's own maxnreg=
# --------------------------------------------------------------------------


def test_sweep_options_reach_every_config(tmp_path):
    base = ["sweep", "vector_add", "-c", "BLOCK=1024,4096", "--arch", "sm_90a", "--jobs", "1"]
    data = ok_json(*base, "--maxnreg", "32")
    assert data["options"] == {"maxnreg": 32}
    rows = {r["constexprs"]["BLOCK"]: r for r in data["rows"]}
    assert all(r["ok"] and r["options"] == {"maxnreg": 32} and r["registers"] <= 32 for r in rows.values())
    assert rows[4096]["spills"] > 0 and "maxnreg=32" in rows[4096]["config"]
    # the row cache keys on the options: the same grid without them is another compile
    plain = {r["constexprs"]["BLOCK"]: r for r in ok_json(*base)["rows"]}
    assert plain[4096]["registers"] > 32 and plain[4096]["spills"] == 0 and plain[4096]["options"] == {}
    out = tmp_path / "rows.csv"
    table = invoke(*base, "--maxnreg", "32", "--save", out, "--width", "160")
    assert table.exit_code == 0 and "launch options (every config): maxnreg=32" in table.output
    assert [r["maxnreg"] for r in csv.DictReader(out.open())] == ["32", "32"]


def test_launch_options_have_one_spelling_in_labels_and_headers():
    """Triton's own names, as a launch passes them, wherever a label or a table header lists launch options."""
    from tritonscope.core.model import option_words

    assert option_words({"maxnreg": 32, "grid_rows": 7, "enable_fp_fusion": False, "num_ctas": None}) \
        == "maxnreg=32 enable_fp_fusion=False"
    base = ["sweep", "vector_add", "-c", "BLOCK=1024", "--arch", "sm_90a", "--jobs", "1", "--no-fp-fusion"]
    row = ok_json(*base)["rows"][0]
    assert row["config"].endswith(" enable_fp_fusion=False"), row["config"]
    table = invoke(*base, "--width", "160")
    assert table.exit_code == 0 and "launch options (every config): enable_fp_fusion=False" in table.output


AUTOTUNED = textwrap.dedent('''
    import triton
    import triton.language as tl


    @triton.autotune(configs=[triton.Config({"BLOCK": 4096}, num_warps=4, maxnreg=32),
                              triton.Config({"BLOCK": 4096}, num_warps=4)], key=["n"])
    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
''')


def test_sweep_takes_an_autotune_configs_maxnreg(tmp_path):
    kernel = tmp_path / "tuned.py"
    kernel.write_text(AUTOTUNED)
    data = ok_json("sweep", f"{kernel}:add_kernel", "-c", "BLOCK=4096", "--arch", "sm_90a", "--jobs", "1",
                   "--arg", "x_ptr=*fp32",
                   "--arg", "y_ptr=*fp32", "--arg", "out_ptr=*fp32", "--arg", "n=65536")
    assert data["from_autotune"] and [r["options"] for r in data["rows"]] == [{"maxnreg": 32}, {}]
    limited, free = data["rows"]
    assert limited["registers"] <= 32 < free["registers"] and limited["spills"] > 0


@pytest.mark.parametrize("args, says", [
    (["--maxnreg", "300"], "--maxnreg 300"),
    (["--num-ctas", "5"], "--num-ctas 5"),
    (["--maxnreg", "32", "--arch", "sm_90a,gfx942"], "HIP backend has no such option"),
    (["--num-ctas", "2", "--arch", "sm_80"], "needs sm_90 or newer"),
])
def test_sweep_refuses_bad_options_before_compiling(no_compile, args, says):
    result = invoke("sweep", "vector_add", "--jobs", "1", *args)
    assert result.exit_code == ExitCode.USAGE, result.output
    assert says in flat(result.output)


@pytest.mark.parametrize("words", [
    ["compile", "matmul", "--arch", "gfx942"],
    ["passes", "matmul", "--arch", "gfx942"],
    ["explain", "matmul", "--arch", "gfx942"],
    ["check", "matmul", "--arch", "sm_90a", "--arch", "gfx942", "-e", "fits"],
])
def test_every_compiling_command_refuses_maxnreg_for_an_amd_target(no_compile, words):
    result = invoke(*words, "--maxnreg", "64")
    assert result.exit_code == ExitCode.USAGE and "HIP backend has no such option" in flat(result.output)


# --------------------------------------------------------------------------
# run and bench: the launch itself
# --------------------------------------------------------------------------


class RecordingKernel:
    """Stands in for a JITFunction: kernel[grid](*args, **kwargs) records what the launch passed."""

    def __init__(self):
        self.calls = []

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.calls.append((grid, args, kwargs))
        return launch


def test_launch_passes_the_options_as_keywords():
    from tritonscope.measure import runner as r
    from tritonscope.inputs.kernels import Request
    from tritonscope.pipeline.binding import build_spec

    loaded = build_spec(Request("matmul_transposed", options={"maxnreg": 64, "num_ctas": 2,
                                                              "enable_fp_fusion": False}), "sm_90a")
    kernel = RecordingKernel()
    r.launch(loaded, {n: 0 for n in loaded.spec.args}, fn=kernel)
    (_, _, kwargs), = kernel.calls
    assert (kwargs["maxnreg"], kwargs["num_ctas"], kwargs["enable_fp_fusion"]) == (64, 2, False)
    assert kwargs["num_warps"] == loaded.spec.num_warps
    # the example's launch-only params live in spec.options too, but are no Triton option: not passed
    assert "TRANS_A" in loaded.spec.options and "TRANS_A" not in kwargs
    plain = build_spec(Request("vector_add"), "sm_90a")
    kernel = RecordingKernel()
    r.launch(plain, {n: 0 for n in plain.spec.args}, fn=kernel)
    assert not {"maxnreg", "num_ctas", "enable_fp_fusion"} & set(kernel.calls[0][2])  # none set: none passed


def test_run_interpreted_records_the_options_and_says_they_do_nothing_there():
    pytest.importorskip("torch")
    data = ok_json("run", "vector_add", "--interpret", "--shape", "2048", "--maxnreg", "32", "--no-fp-fusion")
    assert data["passed"] and data["options"] == {"maxnreg": 32, "enable_fp_fusion": False}
    assert "maxnreg=32" in data["label"] and any("no effect" in n for n in data["notes"])


def test_run_and_bench_refuse_bad_options_before_looking_for_a_gpu(no_compile, monkeypatch):
    from tritonscope.measure import runner as r

    monkeypatch.setattr(r, "gpu_available", lambda: False)  # without the check first, these would exit 9
    for cmd in (["run", "vector_add", "--num-ctas", "3"], ["bench", "vector_add", "--maxnreg", "3"]):
        result = invoke(*cmd)
        assert result.exit_code == ExitCode.USAGE, (cmd, result.output)
        assert f"{cmd[2]} 3" in " ".join(result.output.split()) and "GPU" not in result.output, (cmd, result.output)


def test_bench_compiles_and_launches_with_the_options(monkeypatch):
    """bench's compile (and so its registers, spills and fit) is the one the launch options give."""
    pytest.importorskip("torch")
    from tritonscope.measure import bench as b
    from tritonscope.measure import runner as r

    launched = []

    def timed(loaded, *, artifact=None, **_):  # what bench_loaded does, minus the GPU: resources, the launch
        row = b.BenchRow(loaded.spec.label(options=True), loaded.spec.shape, loaded.spec.dtype,
                         dict(loaded.spec.constexprs), loaded.spec.num_warps, loaded.spec.num_stages, "ok")
        b._resources_into(row, artifact)
        kernel = RecordingKernel()
        r.launch(loaded, {n: 0 for n in loaded.spec.args}, fn=kernel)
        launched.append(kernel.calls[0][2])
        return row

    monkeypatch.setattr(r, "require_gpu", lambda *a, **k: None)
    monkeypatch.setattr(r, "device_name", lambda: "NVIDIA H100 80GB HBM3")
    monkeypatch.setattr(r, "versions", lambda: {"triton": "x", "torch": "y"})
    monkeypatch.setattr(b, "bench_loaded", timed)
    monkeypatch.setattr("tritonscope.commands.checks.default_arch", lambda: "sm_90a")
    data = ok_json("bench", "vector_add", "-c", "BLOCK=4096", "--maxnreg", "32", "--no-torch")
    (bench_row,) = data["rows"]
    assert data["options"] == {"maxnreg": 32} and "maxnreg=32" in bench_row["label"]
    assert bench_row["registers"] <= 32 and bench_row["spills"] > 0
    assert launched == [{**launched[0], "maxnreg": 32}]


# --------------------------------------------------------------------------
# Help
# --------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["compile", "diff", "sweep", "bench", "run"])
def test_help_lists_the_launch_options(command):
    result = invoke(command, "--help")
    assert result.exit_code == 0
    text = flat(result.output)
    for option in ("--maxnreg", "--num-ctas", "--fp-fusion / --no-fp-fusion", "enable_fp_fusion="):
        assert option in text, (command, option)
    assert all(len(line) <= 120 for line in result.output.splitlines())
