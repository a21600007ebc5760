"""Pass by pass (issue 12), on real dumps from real compiles.

Each compile runs once per module (a fixture shares the traces): the
seed-001 matmul (BLOCK 16) for sm_80 and sm_90a, and a kernel Triton warns it
will not fully pipeline.  The assertions name passes as Triton's own dump
headers spell them, so they hold on 3.6 ("Canonicalizer") and 3.9
("CanonicalizerPass") alike.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from tritonscope import passes
from tritonscope.errors import InputFileError, NotFoundError
from tritonscope.kernels import Request
from tritonscope.remarks import Remark, collect_remarks, parse_remarks

DATA = Path(__file__).resolve().parent / "data" / "passes"
UNPIPELINED = str(DATA / "unpipelined.py")


@pytest.fixture(scope="module")
def traces():
    """traces(name) -> PassTrace, compiled once per module."""
    made: dict[str, passes.PassTrace] = {}
    requests = {
        "sm_80": Request(target="matmul", block=16, arch="sm_80"),
        "sm_90a": Request(target="matmul", block=16, arch="sm_90a"),
        "unpipelined": Request(target=UNPIPELINED, arch="sm_90a"),
    }

    def get(name: str) -> passes.PassTrace:
        if name not in made:
            made[name] = passes.trace_passes(requests[name], "sm_90a")
        return made[name]

    yield get
    for trace in made.values():
        trace.close()


def _app() -> typer.Typer:
    from tritonscope.commands.passes import register

    app = typer.Typer()
    register(app)
    app.command("noop")(lambda: None)  # a second command keeps `passes` a subcommand
    return app


def _first(events, kind="appears"):
    return next(e for e in events if e.kind == kind)


def _canonicalizer(name: str) -> bool:
    return name in ("Canonicalizer", "CanonicalizerPass")


# --------------------------------------------------------------------------
# --find on the seed-001 matmul
# --------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_find_names_the_passes_that_build_the_matmul(traces, arch):
    trace = traces(arch)
    blocked = passes.find(trace, "#blocked")
    assert _first(blocked).name == "ConvertTritonToTritonGPU"
    assert _first(blocked, "removed").name == "ConvertTritonGPUToLLVM"

    mma = passes.find(trace, "#mma")
    assert _first(mma).name == "TritonGPUAccelerateMatmul"
    step = trace.steps[_first(mma).step - 1]
    assert any("nvidia_mma" in enc for enc in step.layouts_added.values())

    alloc = passes.find(trace, "ttg.local_alloc")      # the shared-memory operands
    copies = passes.find(trace, "ttg.async_copy_global_to_local")
    loads = passes.find(trace, "ttg.local_load")
    for events in (alloc, copies, loads):
        assert _first(events).name == "TritonGPUPipeline"
        assert _first(events, "removed").name == "ConvertTritonGPUToLLVM"
    assert _first(copies).after == 6  # 3 stages x 2 operands
    pipeline = trace.steps[_first(copies).step - 1]
    assert pipeline.classes["async copy"] == 6 and pipeline.classes["shared alloc"] == 2

    # the local_loads that feed ldmatrix produce the dot-operand layout
    # directly once the canonicalizer folds the pipeliner's convert_layout
    dot_loads = passes.find(trace, r"/ttg\.local_load .*#ttg\.dot_op/")
    first = _first(dot_loads)
    assert _canonicalizer(first.name) and first.step == pipeline.index + 1
    assert trace.steps[first.step - 1].classes.get("convert_layout", 0) < 0


def test_find_on_the_command_line(traces):
    trace = traces("sm_80")
    events = passes.find(trace, "ttg.async_copy_global_to_local")
    from tritonscope.render.passes_view import find_view

    text = find_view("ttg.async_copy_global_to_local", events).plain
    step = _first(events).step
    assert f"ttg.async_copy_global_to_local appears at step {step}, TritonGPUPipeline" in text
    assert "is removed at step" in text and "ConvertTritonGPUToLLVM" in text


def test_find_text_that_never_appears(traces):
    assert passes.find(traces("sm_80"), "ttng.warp_group_dot") == []


# --------------------------------------------------------------------------
# The table, one pass, one line
# --------------------------------------------------------------------------


def test_steps_are_read_from_the_dump(traces):
    trace = traces("sm_80")
    names = [s.name for s in trace.steps]
    assert names[0].startswith("Inliner")
    assert {"ttir", "ttgir", "llir"} == {s.stage for s in trace.steps}
    stages = [s.stage for s in trace.steps]
    assert stages == sorted(stages, key=["ttir", "ttgir", "llir"].index)  # one block per stage, in order
    assert trace.steps[names.index("ConvertTritonToTritonGPU")].stage == "ttgir"
    assert trace.steps[names.index("ConvertTritonGPUToLLVM")].stage == "llir"
    assert 0 < len(trace.changed_steps) < len(trace.steps)
    assert all(s.after is not None for s in trace.steps)  # each stage's last pass compares with its result
    pipeline = trace.step("TritonGPUPipeline")
    assert pipeline.changed and pipeline.lines_added > 0 and pipeline.seconds is not None
    assert trace.step("AllocateSharedMemoryNv").shared[1] > 0
    assert any(s.stages == (None, 3) for s in trace.steps)  # the loop scheduler sets 3 stages


def test_table_folds_unchanged_passes(traces):
    from tritonscope.render.passes_view import pipeline_table
    from rich.console import Console
    import io

    trace = traces("sm_80")

    def render(**kw) -> str:
        console = Console(width=160, file=io.StringIO(), color_system=None)
        console.print(pipeline_table(trace, **kw))
        return console.file.getvalue()

    folded, full = render(), render(show_all=True)
    assert "unchanged:" in folded and "unchanged:" not in full
    assert len(full.splitlines()) > len(folded.splitlines())
    assert "TritonGPUPipeline" in folded and "+6 async copy" in folded


def test_pass_diff(traces):
    trace = traces("sm_80")
    step = trace.step("TritonGPUPipeline")
    diff = passes.step_diff(trace, step)
    added = [line for line in diff if line.startswith("+") and not line.startswith("+++")]
    assert any("ttg.async_copy_global_to_local" in line for line in added)
    assert not any("loc(" in line for line in diff)  # locations are noise in a diff
    assert trace.step(str(step.index)) is step
    with pytest.raises(NotFoundError):
        trace.step("NoSuchPass")
    with pytest.raises(NotFoundError):
        trace.step("9999")


def test_line_follows_one_load(traces):
    trace = traces("sm_80")
    events = passes.line_history(trace, 17)  # a = tl.load(...)
    assert events[0].ops_after.get("tt.load") == 1
    pipeline = next(e for e in events if e.name == "TritonGPUPipeline")
    assert pipeline.added.get("ttg.async_copy_global_to_local") == 3
    assert pipeline.removed.get("tt.load") == 1


def test_command_output_and_json(traces):
    # one compile through the command itself (the JSON has every step)
    result = CliRunner().invoke(_app(), ["passes", "matmul", "--block", "16", "--arch", "sm_80", "--json",
                                         "--find", "#mma", "--line", "19", "--pass", "TritonGPUAccelerateMatmul"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["kernel"] == "matmul_kernel" and data["arch"] == "sm_80"
    assert len(data["steps"]) == len(traces("sm_80").steps)
    assert data["find"]["#mma"][0]["name"] == "TritonGPUAccelerateMatmul"
    assert any("ttg.convert_layout" in line for line in data["pass"]["diff"])
    assert data["line"]["events"]


# --------------------------------------------------------------------------
# Remarks
# --------------------------------------------------------------------------


def test_remark_on_the_unpipelined_loop_line(traces):
    trace = traces("unpipelined")
    [warning] = [r for r in trace.remarks if r.severity == "warning"]
    assert os.path.realpath(warning.file) == os.path.realpath(UNPIPELINED)
    assert warning.line == 20  # acc += tl.dot(a, b), inside the loop
    assert "pipelined load for this operand will be disabled" in warning.message
    assert warning.stage == "ttgir"  # the TTGIR passes wrote it

    result = CliRunner().invoke(_app(), ["passes", UNPIPELINED, "--arch", "sm_90a", "--line", "20", "--width", "200"])
    assert result.exit_code == 0, result.output
    assert "unpipelined.py:20" in result.output and "poor performance is expected" in result.output


def test_mma_v3_remark_on_small_tiles(traces):
    remarks = traces("sm_90a").remarks
    assert any(r.line == 19 and "MMA version 3 acceleration not applied" in r.message for r in remarks)
    assert not traces("sm_80").remarks


def test_parse_remarks():
    text = """\
/k.py:19:16: remark: MMA version 3 acceleration not applied due to unsupported shapes or data types.
        acc += tl.dot(a, b)
               ^
/k.py:19:16: note: Target compute capability (90) supports MMA v3.
/k.py:19:16: remark: MMA version 3 acceleration not applied due to unsupported shapes or data types.
    0.0061 (  1.9%)  TritonGPUPipeline
/k.py:3: UserWarning: not a diagnostic
"""
    remarks = parse_remarks(text.splitlines())
    assert [r.severity for r in remarks] == ["remark", "note"]
    assert remarks[0] == Remark("/k.py", 19, 16, "remark", remarks[0].message)
    assert Remark.from_dict(remarks[0].to_dict()) == remarks[0]


def test_collect_remarks_captures_stderr(capfd):
    with collect_remarks() as remarks:
        assert "remarks" in os.environ["MLIR_ENABLE_DIAGNOSTICS"]
        os.write(2, b"/k.py:5:3: warning: something Triton said\n    x = 1\n    ^\nother output\n")
    assert [(r.line, r.col, r.severity) for r in remarks] == [(5, 3, "warning")]
    assert "other output" in capfd.readouterr().err  # the rest still reaches stderr


# --------------------------------------------------------------------------
# Damaged input and errors
# --------------------------------------------------------------------------


def _stream(trace) -> Path:
    return Path(trace.steps[0].before.path)


def test_damaged_dump_is_a_typed_error(traces, tmp_path):
    data = _stream(traces("sm_80")).read_bytes()
    cut = tmp_path / "cut.mlir"
    start = data.index(b"// -----// IR Dump Before")
    cut.write_bytes(data[start:data.index(b"\n", len(data) // 2) + 1])  # cut mid-module
    with pytest.raises(InputFileError, match="damaged"):
        passes.parse_dump(cut)
    garbage = tmp_path / "garbage.mlir"
    garbage.write_text("this is not a dump\n")
    with pytest.raises(InputFileError, match="not an MLIR pass dump"):
        passes.parse_dump(garbage)
    empty = tmp_path / "empty.mlir"
    empty.write_text("")
    with pytest.raises(InputFileError, match="no pass dumps"):
        passes.parse_dump(empty)

    from tritonscope.cli import handle_errors

    app = typer.Typer()
    from tritonscope.commands.passes import passes_cmd

    app.command("passes")(handle_errors(passes_cmd))
    app.command("noop")(lambda: None)
    result = CliRunner().invoke(app, ["passes", "--dump", str(cut)])
    assert result.exit_code == 7 and "Traceback" not in result.output
    assert "damaged" in result.output


def test_whole_user_dump_reads_back(traces, tmp_path):
    data = _stream(traces("sm_80")).read_bytes()
    own = tmp_path / "own.mlir"
    own.write_bytes(data[data.index(b"// -----// IR Dump Before"):])
    steps = passes.parse_dump(own)
    assert [s.name for s in steps] == [s.name for s in traces("sm_80").steps]
    trace = passes.trace_from_dump(own)
    assert _first(passes.find(trace, "ttg.local_alloc")).name == "TritonGPUPipeline"


def test_child_errors_are_typed():
    with pytest.raises(NotFoundError):
        passes.trace_passes(Request(target="no_such_sample"), "sm_90a")


def test_every_compile_collects_remarks(monkeypatch, tmp_path):
    """A plain compile carries Triton's remarks: on the Artifact, in the summary, as notes on every stage."""
    from tritonscope.analysis import analyze
    from tritonscope.compile import compile_artifact
    from tritonscope.kernels import build_spec
    from tritonscope.render.summary_text import summary_rows

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path / "ts"))
    artifact = compile_artifact(build_spec(Request(target=UNPIPELINED, arch="sm_90a"), "sm_90a"))
    [warning] = [r for r in artifact.remarks if r["severity"] == "warning"]
    assert warning["line"] == 20 and "poor performance is expected" in warning["message"]
    analysis = analyze(artifact)
    assert analysis.summary.remarks == 1
    rows = dict(summary_rows(analysis))
    assert rows["remarks"].startswith("1 from Triton; warning at unpipelined.py:20:")
    notes = [n for n in analysis.notes if n.kind == "remark"]
    stages = {n.stage for n in notes}
    assert {"python", "ttir", "ttgir", "ptx", "sass"} <= stages
    lines = {(k, ln.number): ln for k, st in analysis.parsed.items() for ln in st.lines}
    [py] = [n for n in notes if n.stage == "python"]
    assert lines["python", py.line].loc.line == 20
    assert py.facts["line"] == 20 and py.facts["severity"] == "warning"
    for n in notes:  # the MLIR stages: the ops with the remark's own location
        if n.stage in ("ttir", "ttgir"):
            loc = lines[n.stage, n.line].loc
            assert (loc.line, loc.col) == (20, warning["col"])


def test_remarks_survive_a_triton_cache_hit(monkeypatch, tmp_path):
    """A cache hit prints nothing: the remarks come from tritonscope's own copy, or a fresh compile."""
    import importlib

    from tritonscope.kernels import build_spec

    compile_mod = importlib.import_module("tritonscope.compile")
    calls = []
    real = compile_mod._compile

    def spy(*args, **kw):
        compiled = real(*args, **kw)
        calls.append((kw.get("fresh", False), compiled.cache_hit))
        return compiled

    monkeypatch.setattr(compile_mod, "_compile", spy)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path / "ts"))
    loaded = build_spec(Request(target=UNPIPELINED, arch="sm_90a"), "sm_90a")

    def remarks():
        calls.clear()
        return [(r["line"], r["severity"]) for r in compile_mod.compile_artifact(loaded).remarks]

    assert remarks() == [(20, "warning")] and calls == [(False, False)]       # compiled
    assert remarks() == [(20, "warning")] and calls == [(False, True)]        # Triton's cache + the kept copy
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path / "ts2"))       # the kept copy is gone
    assert remarks() == [(20, "warning")] and calls == [(False, True), (True, False)]


def test_unpipelined_loop_remark_in_terminal_html_and_show(tmp_path):
    """Issue 12: the remark sits on the loop's Python line in the terminal and in the HTML report."""
    from tritonscope.cli import app

    html, js = tmp_path / "r.html", tmp_path / "r.json"
    args = ["compile", UNPIPELINED, "--arch", "sm_90a", "--stage", "python", "--width", "200", "--no-color"]
    result = CliRunner().invoke(app, args + ["--save", str(html)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("20  ") and "tl.dot(a, b)" in line)
    assert lines[at + 1].strip().startswith("◂ warning: Forcing a different order")
    assert "remarks        1 from Triton; warning at unpipelined.py:20:" in result.output

    page = html.read_text()
    # the Python pane's line 20 carries the remark note ...
    line20 = re.search(r'<div class="l"[^>]* data-py="20"[^>]*><span class="n">20</span>.*?</div>', page)
    assert line20 and 'class="note k-remark"' in line20.group(0) and "poor performance is expected" in line20.group(0)
    # ... and the remarks list links to it
    section = re.search(r'<section id="remarks">.*?</section>', page, re.S).group(0)
    assert '<button type="button" class="go" data-py="20">unpipelined.py:20:' in section
    assert "pipelined load for this operand" in section

    # the JSON report carries the remarks; `show` replays them (no Triton: see test_report)
    result = CliRunner().invoke(app, args + ["--save", str(js), "--stage", "none"])
    assert result.exit_code == 0, result.output
    data = json.loads(js.read_text())
    assert [(r["line"], r["severity"]) for r in data["remarks"]] == [(20, "warning")]
    assert "remarks" not in data["artifact"] and any(n["kind"] == "remark" for n in data["notes"])
    shown = CliRunner().invoke(app, ["show", str(js), "--line", "20", "--width", "200", "--no-color"])
    assert shown.exit_code == 0, shown.output
    assert "▸ Triton warning (unpipelined.py:20:" in shown.output and "Forcing a different order" in shown.output
    walk = CliRunner().invoke(app, ["show", str(js), "--view", "walkthrough", "--width", "200", "--no-color"])
    assert "What Triton itself says" in walk.output and "line 20 (acc += tl.dot(a, b)): warning" in walk.output


def test_reports_without_remarks_or_passes_still_open():
    """Reports saved before remarks and pass tables existed (no such keys) open as they are."""
    from tritonscope.report import analysis_from_dict, analysis_to_dict, load_analysis

    old = load_analysis(Path(__file__).resolve().parent / "data" / "report_small.json")  # version 1
    assert old.artifact.remarks == [] and old.passes is None and old.summary.remarks == 0
    data = analysis_to_dict(old)
    for key in ("remarks", "passes"):
        data.pop(key, None)
    data["summary"].pop("remarks")
    again = analysis_from_dict(data)
    assert again.artifact.remarks == [] and again.passes is None and again.summary.remarks == 0


def test_pass_table_in_saved_reports(traces, tmp_path):
    """passes --save / compile --passes: HTML, Markdown, JSON and text carry the table; show replays it."""
    import subprocess
    import sys
    import textwrap

    from tritonscope.commands.passes import save_with_passes

    trace = traces("sm_90a")
    paths = {ext: tmp_path / f"r.{ext}" for ext in ("json", "html", "md", "txt")}
    for path in paths.values():
        save_with_passes(trace, str(path))
    data = json.loads(paths["json"].read_text())
    assert len(data["passes"]["steps"]) == len(trace.steps)
    assert data["passes"]["steps"][trace.step("TritonGPUPipeline").index - 1]["name"] == "TritonGPUPipeline"
    assert any("MMA version 3" in r["message"] for r in data["remarks"])
    page = paths["html"].read_text()
    assert '<section id="passes">' in page and "TritonGPUPipeline" in page and "+6 async copy" in page
    assert "unchanged:" in page  # folded as in the terminal
    md = paths["md"].read_text()
    assert "Compiler passes: matmul_kernel on sm_90a" in md and "| TritonGPUAccelerateMatmul |" in md
    assert "**Triton's remarks**" in md and "MMA version 3 acceleration not applied" in md
    assert "TritonGPUPipeline" in paths["txt"].read_text()

    code = textwrap.dedent(f"""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split('.')[0] in ('triton', 'torch'):
                    raise ImportError('show imported ' + name)
        sys.meta_path.insert(0, Block())
        from typer.testing import CliRunner
        from tritonscope.cli import app
        r = CliRunner().invoke(app, ["show", {str(paths["json"])!r}, "--stage", "none", "--width", "160",
                                     "--no-color"])
        assert r.exit_code == 0, (r.output, r.exception)
        print(r.output)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "pass steps" in proc.stdout and "TritonGPUPipeline" in proc.stdout
    assert "remarks" in proc.stdout and "MMA version 3" in proc.stdout


def test_compile_passes_and_passes_save(tmp_path):
    """`compile --passes` and `passes --save`: one compile each, the table in the output and the report."""
    from tritonscope.cli import app

    out = tmp_path / "c.json"
    result = CliRunner().invoke(app, ["compile", "matmul", "--block", "16", "--arch", "sm_80", "--passes",
                                      "--stage", "none", "--width", "160", "--no-color", "--save", str(out)])
    assert result.exit_code == 0, result.output
    assert "pass steps" in result.output and "TritonGPUPipeline" in result.output
    data = json.loads(out.read_text())
    assert data["passes"]["arch"] == "sm_80" and data["artifact"]["spec"]["arch"] == "sm_80"
    assert "ptx" in data["artifact"]["stages"]

    md = tmp_path / "p.md"
    result = CliRunner().invoke(app, ["passes", UNPIPELINED, "--arch", "sm_90a", "--save", str(md), "--width", "160"])
    assert result.exit_code == 0, result.output
    text = md.read_text()
    assert "Compiler passes:" in text and "Forcing a different order" in text
    result = CliRunner().invoke(app, ["passes", "--dump", str(md), "--save", str(tmp_path / "x.md")])
    assert result.exit_code == 2 and "--save needs a compile" in result.output


# --------------------------------------------------------------------------
# diff --passes
# --------------------------------------------------------------------------


def test_skeleton_sets_the_config_aside():
    a = passes.skeleton("""\
#blocked1 = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8]}>
    %c16_i32 = arith.constant 16 : i32 loc(#loc3)
    %7 = tt.call @triton.language.standard.zeros__Tc16_c16T_cfp32() : () -> tensor<16x16xf32, #blocked1>
    %9 = ttg.local_load %3 : !ttg.memdesc<16x16xf16, #shared, #smem, mutable> -> tensor<16x16xf16, #blocked1>
    %0 = llvm.extractvalue %4[0] : !llvm.struct<(f32, f32, f32, f32)>
""")
    b = passes.skeleton("""\
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4]}>
    %c64_i32 = arith.constant 64 : i32 loc(#loc9)
    %12 = tt.call @triton.language.standard.zeros__Tc64_c64T_cfp32() : () -> tensor<64x64xf32, #blocked>
    %20 = ttg.local_load %5 : !ttg.memdesc<16x64xf16, #shared1, #smem, mutable, 64x64> -> tensor<16x64xf16, #blocked>
    %1 = llvm.extractvalue %8[3] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
""")
    assert a == b
    assert passes.skeleton('  tt.call @"zeros____(0, 0)cconstexpr_16__(1,)cconstexpr_fp32_"()') == \
        passes.skeleton('  tt.call @"zeros____(0, 0)cconstexpr_64__(1,)cconstexpr_fp32_"()')  # 3.6 quotes names
    assert passes.skeleton("  %1 = tt.dot %a, %b, %c : tensor<16x16xf16, #blocked>") != \
        passes.skeleton("  %1 = ttng.warp_group_dot %a, %b, %c : tensor<16x16xf16, #blocked>")


def test_diff_passes_names_the_pass_that_picks_wgmma(tmp_path):
    """BLOCK 16 vs 64 on sm_90a: the configs part ways where Triton picks wgmma for 64 only."""
    from tritonscope.cli import app

    args = ["diff", "matmul", "--a", "BLOCK=16", "--b", "BLOCK=64", "--arch", "sm_90a", "--passes", "--stage", "none"]
    result = CliRunner().invoke(app, args + ["--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)["passes"]
    div = found["divergence"]
    assert div["name"] == "TritonGPUAccelerateMatmul" and div["stage"] == "ttgir"
    assert not found["from_start"]
    assert div["ops_b"].get("ttng.warp_group_dot") == 1 and "ttng.warp_group_dot" not in div["ops_a"]
    assert any("ttng.warp_group_dot" in line for line in div["only_b"])
    assert any("tt.dot" in line and line.startswith("+") for line in div["only_a"])
    # Triton says why, in the same stage's passes, on A only
    assert any("MMA version 3 acceleration not applied" in r for r in div["remarks_a"]) and not div["remarks_b"]

    result = CliRunner().invoke(app, ["diff", "matmul", str(tmp_path / "x.json"), "--passes"])
    assert result.exit_code == 2 and "--passes compiles both sides" in result.output
