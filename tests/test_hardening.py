"""Issue 15, hostile and careless input: escape sequences, leaked paths, bad values, runaway work,
impossible bench figures, and the help.  Each test fails on the code before the fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT
from tritonscope.cli import COMMANDS, app
from tritonscope.core.errors import ExitCode
from tritonscope.core.sanitize import has_control

runner = CliRunner()
REPORT = ROOT / "tests" / "data" / "report_small.json"
VECTOR_ADD = (ROOT / "samples" / "vector_add.py").read_text()
OSC52, CLEAR, RED = "\x1b]52;c;SGVsbG8=\x07", "\x1b[2J", "\x1b[31mred\x1b[0m"
HOSTILE = f"# evil {OSC52} {CLEAR} {RED}"
BLOCKED = "#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"


def _raw_controls(text: str) -> bool:
    """A control character other than newline (what a terminal would act on)."""
    return has_control(text.replace("\r\n", "\n"))


def _no_hostile_sequence(text: str) -> None:
    for seq in ("\x1b]52", "\x1b[2J", "\x07", "\x1b[31mred"):
        assert seq not in text, repr(seq)


@pytest.fixture(scope="module")
def hostile_kernel(tmp_path_factory) -> Path:
    """vector_add with an escape-laden comment in its body, in a file whose name holds an escape."""
    folder = tmp_path_factory.mktemp("hostile")
    src = VECTOR_ADD.replace("    pid = tl.program_id(0)\n", f"    pid = tl.program_id(0)\n    {HOSTILE}\n", 1)
    path = folder / "k\x1b[31mx.py"
    path.write_text(src)
    return path


# --------------------------------------------------------------------------
# 1. No escape sequence reaches a terminal or a text report
# --------------------------------------------------------------------------


def test_hostile_kernel_is_shown_not_obeyed(hostile_kernel, tmp_path):
    target = f"{hostile_kernel}:add_kernel"
    result = runner.invoke(app, ["compile", target, "--stage", "python,ptx", "--raw", "--max-lines", "0",
                                 "--no-color", "--width", "150"])
    assert result.exit_code == 0, result.output
    assert not _raw_controls(result.output)
    assert "\\x1b]52;c;SGVsbG8=\\x07" in result.output       # the reader sees what was there
    assert "k\\x1b[31mx.py" in result.output                 # the file name too (summary, PTX comments)
    for ext in ("txt", "md", "html", "json"):
        out = tmp_path / f"r.{ext}"
        saved = runner.invoke(app, ["compile", target, "--stage", "none", "--save", str(out)])
        assert saved.exit_code == 0, saved.output
        text = out.read_text()
        assert not _raw_controls(text), ext
        assert "\\x1b]52;c;SGVsbG8=" in text, ext


def test_hostile_kernel_in_a_real_terminal(hostile_kernel):
    """A subprocess with a forced terminal (colour on): our colours, none of theirs."""
    env = {**os.environ, "FORCE_COLOR": "1", "COLUMNS": "150", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    proc = subprocess.run([sys.executable, "-m", "tritonscope", "compile", f"{hostile_kernel}:add_kernel",
                           "--stage", "python,ptx", "--raw", "--max-lines", "0"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "\x1b[" in proc.stdout                      # colour is on, so the test means something
    _no_hostile_sequence(proc.stdout)
    _no_hostile_sequence(proc.stderr)
    assert "\\x1b]52;c;SGVsbG8=\\x07" in proc.stdout


def test_triton_error_with_an_escape_is_shown_not_obeyed(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(VECTOR_ADD.replace("    pid = tl.program_id(0)\n",
                                      f"    pid = tl.program_id(0) + undefined_thing  {HOSTILE}\n", 1))
    result = runner.invoke(app, ["compile", f"{bad}:add_kernel", "--stage", "none"])
    assert result.exit_code == ExitCode.COMPILE_ERROR, result.output
    assert not _raw_controls(result.output)
    assert "\\x1b]52" in result.output
    env = {**os.environ, "FORCE_COLOR": "1", "TERM": "xterm-256color"}
    proc = subprocess.run([sys.executable, "-m", "tritonscope", "compile", f"{bad}:add_kernel", "--stage", "none"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == ExitCode.COMPILE_ERROR
    _no_hostile_sequence(proc.stderr)
    assert "\\x1b]52" in proc.stderr


def _hand_edited_report(tmp_path) -> Path:
    data = json.loads(REPORT.read_text())
    data["artifact"]["spec"]["kernel"] = f"evil{OSC52}k"
    key = next(iter(data["parsed"]))
    data["parsed"][key][0]["text"] = f"x {CLEAR} y"
    data["notes"][0]["explanation"] = f"note {RED}"
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(data))
    return path


def test_received_report_is_shown_not_obeyed(tmp_path):
    report = _hand_edited_report(tmp_path)
    for view in ("stages", "walkthrough"):
        result = runner.invoke(app, ["show", str(report), "--view", view, "--no-color"])
        assert result.exit_code == 0, result.output
        assert not _raw_controls(result.output)
        assert "evil\\x1b]52;c;SGVsbG8=\\x07k" in result.output
    for ext in ("txt", "md", "html"):
        out = tmp_path / f"again.{ext}"
        assert runner.invoke(app, ["show", str(report), "--save", str(out)]).exit_code == 0
        assert not _raw_controls(out.read_text()), ext
    env = {**os.environ, "FORCE_COLOR": "1", "TERM": "xterm-256color"}
    proc = subprocess.run([sys.executable, "-m", "tritonscope", "show", str(report)], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=120)
    assert proc.returncode == 0 and "\x1b[" in proc.stdout
    _no_hostile_sequence(proc.stdout)


def test_every_console_is_safe():
    from tritonscope.core.env import Env
    from tritonscope.core.sanitize import SafeConsole

    env = Env()
    assert isinstance(env.console(), SafeConsole) and isinstance(env.console(stderr=True), SafeConsole)


# --------------------------------------------------------------------------
# 2. Saved reports hold no absolute kernel folder and no venv path
# --------------------------------------------------------------------------


def _spellings(folder: str) -> dict[str, str]:
    octal = "".join(chr(b) if b < 128 else f"\\{b:03o}" for b in folder.encode("utf-8"))
    return {"plain": folder, "octal": octal}


def _has_b8_run(text: str, folder: str) -> bool:
    """The folder as consecutive DWARF `.b8 N` bytes (PTX debug_info), wherever they are written:
    stage text, one parsed line per byte in JSON, HTML spans, report lines."""
    import re

    values = [int(v) for v in re.findall(r"\.b8(?:\s|&nbsp;|</span>|<[^>]*>)+(\d+)", text)]
    want = list(folder.encode("utf-8"))
    return any(values[i:i + len(want)] == want for i in range(len(values) - len(want) + 1))


def test_saved_reports_leak_no_paths(tmp_path):
    import sysconfig

    folder = tmp_path / "été k"
    folder.mkdir()
    (folder / "vector_add.py").write_text(VECTOR_ADD)
    venv = [p for p in {sys.prefix, sysconfig.get_paths()["purelib"]} if p]
    texts = {}
    for ext in ("json", "html", "md", "txt"):
        out = tmp_path / f"r.{ext}"
        result = runner.invoke(app, ["compile", f"{folder}/vector_add.py", "--stage", "none", "--save", str(out)])
        assert result.exit_code == 0, result.output
        texts[ext] = out.read_text()
    raw = json.loads(texts["json"])
    assert "<site-packages>/" in json.dumps(raw["artifact"]["metadata"])  # extern_libs: libdevice
    ptx_lines = raw["parsed"]["ptx"]
    for field in ("raw", "text"):  # one parsed line per DWARF byte
        assert not _has_b8_run("\n".join(ln[field] for ln in ptx_lines), str(folder)), field
    assert len(raw["artifact"]["stages"]["ptx"].split("\n")) >= ptx_lines[-1]["number"]  # line numbers hold
    for ext, text in texts.items():
        for name, spelling in _spellings(str(folder)).items():
            assert spelling not in text, f"{ext}: the folder, {name}"
        assert not _has_b8_run(text, str(folder)), f"{ext}: the folder as .b8 bytes"
        for path in venv:
            assert path not in text, f"{ext}: {path}"
    # the test can see each spelling: with --keep-paths they are all there
    kept = tmp_path / "kept.json"
    assert runner.invoke(app, ["compile", f"{folder}/vector_add.py", "--stage", "none", "--save", str(kept),
                               "--keep-paths"]).exit_code == 0
    kept_text = kept.read_text()
    ptx = json.loads(kept_text)["artifact"]["stages"]["ptx"]
    assert _spellings(str(folder))["octal"] in ptx and _has_b8_run(ptx, str(folder))
    assert _has_b8_run("\n".join(ln["raw"] for ln in json.loads(kept_text)["parsed"]["ptx"]), str(folder))
    assert any(p in kept_text for p in venv)


# --------------------------------------------------------------------------
# 3. Every value checked before any work
# --------------------------------------------------------------------------


def _no_work(monkeypatch):
    import importlib

    def boom(*a, **k):
        raise AssertionError("work started before the options were checked")

    for module, name in (("pipeline.triton_compile", "compile_artifact"), ("pipeline.triton_compile", "_compile"), ("measure.sweep", "run_sweep"),
                         ("pipeline.binding", "build_spec")):
        monkeypatch.setattr(importlib.import_module(f"tritonscope.{module}"), name, boom)


VA = ["compile", f"{ROOT / 'samples' / 'vector_add.py'}:add_kernel", "--arg", "y_ptr=*fp32", "--arg", "out_ptr=*fp32",
      "--arg", "n_elements=4096", "-c", "BLOCK=1024", "--stage", "none"]


@pytest.mark.parametrize("args,code,words", [
    (["compile", "matmul", "-w", "0"], 2, "--num-warps 0"),
    (["compile", "matmul", "-w", "3"], 2, "--num-warps 3"),
    (["compile", "matmul", "--arch", ""], 2, "--arch is empty"),
    (["compile", "matmul", "--stage", ""], 2, "names no stage"),
    (["compile", "matmul", "--width", "0"], 2, "--width"),
    (["compile", "matmul", "-c", "BLOCK=16", "-c", "BLOCK=32"], 2, "BLOCK=16 and BLOCK=32"),
    (VA + ["--arg", "x_ptr=fp16[32,x]"], 2, "every dim must be a whole number"),
    (VA + ["--arg", "x_ptr=banana"], 2, "not a tensor or a number"),
    (["compile", "matmul", "--block", "0"], 2, "--block 0"),
    (["compile", "matmul", "--timeout", "0"], 2, "--timeout"),
    (["sweep", "matmul", "-c", "BLOCK=16", "-j", "0"], 2, "--jobs"),
    (["sweep", "matmul", "--block", "16", "--blocks", "16,32"], 2, "not both"),
    (["bench", "matmul", "--blocks", "16,x"], 2, "--blocks"),
    (["run", "matmul", "--width", "5"], 2, "--width"),
])
def test_bad_values_are_refused_before_work(monkeypatch, args, code, words):
    _no_work(monkeypatch)
    if args[0] == "bench":
        from tritonscope.measure import runner as run_mod

        monkeypatch.setattr(run_mod, "require_gpu", lambda *a, **k: None)
    result = runner.invoke(app, args)
    assert result.exit_code == code, result.output
    assert words in result.output
    assert "Traceback" not in result.output and "unexpected" not in result.output


def test_request_checks_also_guard_the_api():
    from tritonscope.core.errors import UsageError
    from tritonscope.inputs.kernels import Request
    from tritonscope.pipeline.binding import build_spec

    for bad in (dict(num_warps=0), dict(block=0), dict(arch=""), dict(args={"a_ptr": "banana"})):
        with pytest.raises(UsageError):
            build_spec(Request("matmul", **bad), "sm_90a")


@pytest.mark.parametrize("damage", ["line number", "line text", "kernel", "note line", "seconds", "registers",
                                    "options"])
def test_damaged_report_exits_7(tmp_path, damage):
    data = json.loads(REPORT.read_text())
    key = next(iter(data["parsed"]))
    a = data["artifact"]
    {"line number": lambda: data["parsed"][key][0].__setitem__("number", "x"),
     "line text": lambda: data["parsed"][key][0].__setitem__("text", 5),
     "kernel": lambda: a["spec"].__setitem__("kernel", 3),
     "note line": lambda: data["notes"][0].__setitem__("line", "x"),
     "seconds": lambda: a.__setitem__("compile_seconds", "x"),
     "registers": lambda: a["resources"].__setitem__("registers", -1),
     "options": lambda: a["spec"].__setitem__("options", "x")}[damage]()
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(data))
    result = runner.invoke(app, ["show", str(path), "--no-color"])
    assert result.exit_code == ExitCode.BAD_INPUT_FILE, result.output
    assert "damaged report" in result.output


def test_show_refuses_a_huge_file_before_reading(tmp_path, monkeypatch):
    from pathlib import Path as P

    huge = tmp_path / "huge.json"
    with open(huge, "wb") as f:
        f.truncate(300 << 20)  # sparse: 300 MB on paper, nothing on disk

    def no_reading(*a, **k):
        raise AssertionError("the file was read")

    with monkeypatch.context() as m:
        m.setattr(P, "read_text", no_reading)
        result = runner.invoke(app, ["show", str(huge)])
    assert result.exit_code == ExitCode.BAD_INPUT_FILE, result.output
    assert "300 MB" in result.output and "TRITONSCOPE_MAX_REPORT_MB" in result.output
    monkeypatch.setenv("TRITONSCOPE_MAX_REPORT_MB", "0.01")
    assert runner.invoke(app, ["show", str(REPORT)]).exit_code == ExitCode.BAD_INPUT_FILE


@pytest.mark.parametrize("encoding,shape,note", [
    (BLOCKED, "4096x4096", "Showing rows 0-63 of 4096"),
    ("#ttg.blocked<{sizePerThread = [1, 1, 2], threadsPerWarp = [1, 4, 8], warpsPerCTA = [1, 4, 1], "
     "order = [2, 1, 0]}>", "1024x1024x1024", "Rank 3"),
    ("#ttg.swizzled_shared<{vec = 8, perPhase = 4, maxPhase = 2, order = [1, 0]}>", "4096x4096", "Showing rows"),
])
def test_layout_of_a_huge_shape_draws_a_window(encoding, shape, note):
    import tracemalloc

    tracemalloc.start()
    result = runner.invoke(app, ["layout", encoding, "--shape", shape, "--hardware", "--no-color", "--width", "100"])
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert result.exit_code == 0, result.output
    assert note in result.output
    assert peak < 200 << 20, peak  # a window is drawn, not all 16M elements (time: benchmarks/layout_speed.py)


def test_windowed_grids_match_the_whole_walk():
    from tritonscope.language import layouts as L

    cases = [BLOCKED, "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>",
             "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>",
             "#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0], "
             "CGALayout = [[0, 1]]}>"]
    box = (64, 40)
    for text in cases:
        use = L.describe(L.parse_encoding(text, source="string"), (512, 512))
        grids = [L.owner_grid] if use.kind == "distributed" else [L.offset_grid]
        if use.bases.get("block"):
            grids.append(L.cta_grid)
        for grid in grids:
            whole = {k: v for k, v in grid(use).items() if k[0] < box[0] and k[1] < box[1]}
            assert grid(use, window=box) == whole, (use.name, grid.__name__)


def test_runaway_configs_are_refused_before_compiling(monkeypatch):
    import importlib

    comp = importlib.import_module("tritonscope.pipeline.triton_compile")

    def boom(*a, **k):
        raise AssertionError("Triton was entered")

    monkeypatch.setattr(comp, "_compile", boom)
    stages = runner.invoke(app, ["compile", "matmul", "-s", "1000", "--stage", "none"])
    assert stages.exit_code == ExitCode.USAGE, stages.output
    assert "--num-stages 1000" in stages.output and "--timeout" in stages.output
    tile = runner.invoke(app, ["compile", "matmul", "--block", "1024", "--stage", "none"])
    assert tile.exit_code == ExitCode.OUT_OF_RESOURCES, tile.output
    assert "8,192 registers per thread" in tile.output


def test_timeout_stops_a_runaway_compile(tmp_path):
    out = tmp_path / "r.json"
    started = time.perf_counter()
    result = runner.invoke(app, ["compile", "matmul", "--block", "512", "--timeout", "4", "--stage", "none",
                                 "--no-cache", "--save", str(out)])
    assert result.exit_code == ExitCode.TIMEOUT, result.output
    said = " ".join(result.output.split())
    assert "did not finish within 4 s" in said and "Nothing was written" in said
    assert time.perf_counter() - started < 60
    assert not out.exists() and not list(tmp_path.iterdir())


def test_timeout_gives_the_same_compile(compiled):
    from tritonscope.commands.running import compile_request
    from tritonscope.core.env import Env
    from tritonscope.inputs.kernels import Request

    artifact = compile_request(Request("matmul", block=16, arch="sm_90a"), Env(), progress=False, cache=False,
                               timeout=300).artifact
    direct = compiled("matmul", block=16)
    assert artifact.stages == direct.stages and artifact.resources == direct.resources


# --------------------------------------------------------------------------
# 4. bench shows only figures that can be true
# --------------------------------------------------------------------------


def _row(status="ok", **kw):
    from tritonscope.measure.bench import BenchRow

    return BenchRow(kw.pop("label", "BLOCK=1024 w4 s3 sm_90a fp32"), (4096, 8192), "fp32", {"BLOCK": 1024}, 4, 3,
                    status, **kw)


H200 = {"fp16": 989.4, "fp32": 66.9, "tf32": 494.7, "gbs": 4800}


def test_bench_wrong_result_gets_no_figures():
    from tritonscope.measure.bench import fill_figures

    row = fill_figures(_row("wrong"), ms=0.0134, torch_ms=0.2, flops=None, moved=2 * 4096 * 8192 * 4 * 4,
                       peaks=H200, peak_table="H200")
    assert row.kernel.ms == 0.0134 and row.kernel.gbs is None and row.kernel.tflops is None
    assert row.peak_fraction is None and row.ratio is None and "wrong result" in row.withheld


def test_bench_above_peak_is_a_measurement_error():
    from tritonscope.measure.bench import fill_figures

    # 19,925 GB/s on a 4,800 GB/s part: 415% of peak
    moved = int(19925e9 * 0.0134e-3)
    row = fill_figures(_row(), ms=0.0134, torch_ms=0.2, flops=None, moved=moved, peaks=H200, peak_table="H200")
    assert row.status == "measurement error"
    assert row.kernel.gbs is None and row.peak_fraction is None and row.ratio is None
    assert "415%" in row.withheld and "measurement error" in row.withheld
    ok = fill_figures(_row(), ms=1.0, torch_ms=2.0, flops=None, moved=int(1e9), peaks=H200, peak_table="H200")
    assert ok.status == "ok" and ok.kernel.gbs == pytest.approx(1000) and ok.ratio == 2.0


def test_bench_view_keeps_one_unit_per_column_and_no_bar_for_bad_rows():
    import io

    from rich.console import Console

    from tritonscope.measure.bench import BenchReport, fill_figures
    from tritonscope.outputs.render.bench_view import bench_table, bench_view

    moved = 2 * 4096 * 8192 * 4
    rows = [fill_figures(_row(label="BLOCK=8192 w4 s3 sm_90a fp32"), ms=0.2, torch_ms=0.25, flops=None, moved=moved,
                         peaks=H200, peak_table="H200"),
            fill_figures(_row("wrong"), ms=0.0134, torch_ms=0.25, flops=None, moved=moved, peaks=H200,
                         peak_table="H200"),
            fill_figures(_row(label="BLOCK=2048 w4 s3 sm_90a fp32"), ms=0.0001, torch_ms=0.25, flops=None,
                         moved=moved, peaks=H200, peak_table="H200")]
    for r in rows:
        r.torch_what = "torch reference"
    report = BenchReport("NVIDIA H200", "sm_90a", {"triton": "3.9.0"}, rows, peak_table="H200")
    table = bench_table(report)
    columns = {c.header: list(c._cells) for c in table.columns}
    assert "torch ms" in columns and "torch TFLOP/s" not in columns  # no flops here: no TFLOP/s column
    for header, cells in columns.items():  # the unit is in the header, never in a cell
        if header not in ("config", "shape", "status", "instruction mix (SASS)"):
            assert not any(str(c).endswith((" ms", "/s", " B")) for c in cells), (header, cells)
    for header in ("GB/s", "TFLOP/s", "% peak", "x torch"):
        assert columns[header][1:] == ["", ""], header  # the wrong and the impossible row: no figure
    assert columns["GB/s"][0] and columns["% peak"][0].endswith("%")
    console = Console(file=io.StringIO(), width=250, no_color=True, color_system=None)
    console.print(bench_view(report))
    out = console.file.getvalue()
    chart = out[out.index("throughput\n"):]
    bars = [line for line in chart.splitlines() if "█" in line]
    assert len(bars) == 2  # the right row and torch; none for the wrong or impossible one
    assert "(wrong)" in chart and "(measurement error)" in chart
    assert "of the H200's bandwidth peak is impossible" in out.replace("\n", " ").replace("  ", " ")


def test_softmax_block_covers_the_row():
    from tritonscope.inputs.kernels import Request
    from tritonscope.pipeline.binding import build_spec

    assert build_spec(Request("softmax", shape="4096x8192"), "sm_90a").spec.constexprs["BLOCK"] == 8192
    assert build_spec(Request("softmax"), "sm_90a").spec.constexprs["BLOCK"] == 1024  # 781 columns
    assert build_spec(Request("softmax", shape="8x300", constexprs={"BLOCK": "512"}),
                      "sm_90a").spec.constexprs["BLOCK"] == 512  # -c still wins


# --------------------------------------------------------------------------
# 5. Help: terminal options, one meaning per name, readable types, exit codes
# --------------------------------------------------------------------------

# capture prints one status line to stderr and hands its terminal to the program it runs
NO_TERMINAL_OPTIONS = {"capture"}
PAGED = {"compile", "show", "open", "diff", "passes"}


def test_top_help_lists_one_exit_code_and_one_example_per_line():
    """Plain help (no rich): click would rewrap each paragraph; the exit codes and examples stay a line each."""
    import re

    result = runner.invoke(app, ["--help"], terminal_width=80)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    first = next(i for i, line in enumerate(lines) if line.strip() == "0  ok")
    for line, code in zip(lines[first:], ExitCode):  # a block of consecutive lines, in order
        name = code.name.lower().replace("_", " ")
        assert re.fullmatch(rf"\s*{code.value}  {name}( \(a tritonscope bug\))?", line), (line, name)
    examples = [i for i, line in enumerate(lines) if line.strip().startswith("tritonscope ")]
    assert len(examples) == 4 and examples[-1] - examples[0] == 4, result.output  # one continued with a backslash


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_help(name):
    import re

    result = runner.invoke(app, [name, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    text = result.output
    assert "Exit codes: 0 ok" in text and "2 usage" in text and "130 interrupted" in text
    assert not re.search(r"<(int|str|float|list\[[a-z]+\]|int range|float range)>", text), text
    if name not in NO_TERMINAL_OPTIONS:
        assert "--width COLUMNS" in text and "--color / --no-color" in text
    if name in PAGED:
        assert "--pager / --no-pager" in text
    for line in re.findall(r"^\s+--block\b.*$", text, re.M):
        assert line.split()[1] == "N", line  # one number wherever it appears; --blocks is the list form


def test_block_options_mean_one_thing():
    import typer.core
    import typer.main

    group = typer.main.get_command(app)
    seen = {}
    for name, command in group.commands.items():
        for p in command.params:
            if isinstance(p, typer.core.TyperOption):
                for opt in p.opts:
                    seen.setdefault(opt, set()).add((p.metavar, name))
    assert {m for m, _ in seen["--block"]} == {"N"}
    assert {c for _, c in seen["--blocks"]} == {"sweep", "bench", "tune"}
    assert "sweep" in {c for _, c in seen["--block"]}
    # in the grid commands, every axis option is a list, spelled the same
    for opt in ("-w", "-s", "-c"):
        assert len({m for m, c in seen[opt] if c in ("sweep", "bench", "tune")}) == 1, opt
