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

from tritonscope.analyses import passes
from tritonscope.core.errors import InputFileError, NotFoundError
from tritonscope.inputs.kernels import Request
from tritonscope.triton_api.remarks import Remark, collect_remarks, parse_remarks

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


def _app(*, errors: bool = False) -> typer.Typer:
    """An app with `passes` only; with `errors`, its errors become messages and exit codes, as in the CLI."""
    from tritonscope.cli import handle_errors
    from tritonscope.commands.passes import passes_cmd, register

    app = typer.Typer()
    if errors:
        app.command("passes")(handle_errors(passes_cmd))
    else:
        register(app)
    app.command("noop")(lambda: None)  # a second command keeps `passes` a subcommand
    return app


def _first(events, kind="appears"):
    return next(e for e in events if e.kind == kind)


def _canonicalizer(name: str) -> bool:
    return name in ("Canonicalizer", "CanonicalizerPass")


def _serve(monkeypatch, trace) -> list:
    """Make `passes TARGET ...` answer with a fixture's trace instead of compiling; returns the requests it got.

    The command closes its trace: it gets a copy that owns no files, so the fixture's dumps stay.
    """
    from dataclasses import replace

    requests = []

    def fake(request, env, *, progress=True):
        requests.append(request)
        return replace(trace, _workdir=None)

    monkeypatch.setattr("tritonscope.commands.passes.trace_request", fake)
    return requests


def _render(renderable, width: int, **kw) -> str:
    import io

    from rich.console import Console

    # a height too: rich renders 80 columns for a dumb terminal (conftest's TERM) unless given both
    console = Console(width=width, height=50, file=io.StringIO(), **({"color_system": None} | kw))
    console.print(renderable)
    return console.file.getvalue()


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
    from tritonscope.outputs.render.passes_view import find_view

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
    from tritonscope.outputs.render.passes_view import pipeline_table
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


# --------------------------------------------------------------------------
# --pass: the annotated diff, side by side or unified
# --------------------------------------------------------------------------


def _accelerate(trace):
    step = trace.step("TritonGPUAccelerateMatmul")
    return step, passes.pass_diff(trace, step)


def test_pass_diff_hunks_are_the_unified_diffs(traces):
    """pass_diff's hunks hold exactly the lines of step_diff (the JSON `diff`), in order."""
    trace = traces("sm_90a")
    step, diff = _accelerate(trace)
    unified = passes.step_diff(trace, step)
    rebuilt = [f"--- before {step.name}", f"+++ after {step.name}"]
    for hunk in diff.hunks:
        rebuilt.append(hunk.header)
        for block in hunk.blocks:
            if block.tag == "equal":
                rebuilt += [" " + text for _, text in block.before]
            else:
                rebuilt += ["-" + text for _, text in block.before] + ["+" + text for _, text in block.after]
    assert rebuilt == unified
    # the notes are the stage views': the new #mma definition gets the encoding's note
    mma = next(n for hunk in diff.hunks for b in hunk.blocks for n, t in b.after if t.startswith("#mma = "))
    assert any(note.kind == "encoding" and "mma v2" in note.label for note in diff.after_notes[mma])


def test_pass_side_by_side_at_200_unified_at_80(traces):
    from tritonscope.outputs.render.passes_view import pass_view

    trace = traces("sm_90a")
    step, diff = _accelerate(trace)
    wide = _render(pass_view(trace, step, diff, width=200), 200)
    narrow = _render(pass_view(trace, step, diff, width=80), 80)
    assert all(len(line) <= 200 for line in wide.splitlines())
    assert all(len(line) <= 80 for line in narrow.splitlines())

    # side by side: before | after, one row holding both sides' line numbers; the added
    # #mma definition on the right with nothing on the left, its note under it
    rows = [line for line in wide.splitlines() if " │ " in line]
    assert re.search(r"^\s+before\s+│\s+after$", rows[0])
    added = next(line for line in rows if "+ #mma = #ttg.nvidia_mma<" in line)
    assert not added.split(" │ ")[0].strip()
    under = rows[rows.index(added) + 1: rows.index(added) + 3]  # the wrapped rest of the line, then its note
    assert any(re.match(r"^\s+◂ mma v2", r.split(" │ ")[1]) and not r.split(" │ ")[0].strip() for r in under)
    pair = next(line for line in rows if re.search(r"^\s*\d+ - .*tt\.dot", line.split(" │ ")[0]))
    assert re.match(r"\s*\d+ \+ ", pair.split(" │ ")[1])  # the replaced block, line for line
    context = next(line for line in rows if "%c0_i32 = arith.constant 0 : i32" in line)
    left, right = context.split(" │ ")
    assert left.split()[2:] == right.split()[2:] and left.split()[0] != right.split()[0]  # 5 vs 6: #mma moved it
    # the remark the pass printed: in its panel with the pass, and under the tt.dot it names
    assert f"(TTGIR step {step.index}, TritonGPUAccelerateMatmul)" in wide
    assert any("◂ dot 16x16·16x16; remark: MMA version 3" in line for line in wide.splitlines())
    assert "@@ -1,5 +1,6 @@" in wide

    # unified: one column, - and + lines, notes under them; no column separator
    assert " │ " not in narrow.split("before -> after")[1]
    assert "--- before TritonGPUAccelerateMatmul" in narrow and "+++ after TritonGPUAccelerateMatmul" in narrow
    lines = narrow.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  + #mma = #ttg.nvidia_mma<"))
    assert lines[at + 1].startswith("      ") and "◂ mma v2" in lines[at + 2]  # wrapped (hanging), then the note
    assert any(line.startswith("  - ") and "tt.dot" in line for line in lines)

    # forced either way, whatever the width
    assert "(unified;" in _render(pass_view(trace, step, diff, width=200, style="unified"), 200)
    assert "(side by side;" in _render(pass_view(trace, step, diff, width=80, style="side-by-side"), 80)


def test_pass_diff_colour_and_control_characters(traces):
    """Colour marks what changed; NO_COLOR gives plain text; compiler text cannot send escapes."""
    from tritonscope.outputs.render.passes_view import pass_view

    trace = traces("sm_90a")
    # the pass that schedules the loop adds `loop.stage` attributes to lines it otherwise keeps
    step = trace.steps[_first(passes.find(trace, "loop.stage")).step - 1]
    diff = passes.pass_diff(trace, step)
    coloured = _render(pass_view(trace, step, diff, width=200), 200, color_system="truecolor", force_terminal=True)
    assert "\x1b[31m" in coloured and "\x1b[32m" in coloured  # removed red, added green
    assert "\x1b[1;7;32m" in coloured  # and the characters a changed line gained, emphasised
    plain = _render(pass_view(trace, step, diff, width=200), 200)
    assert "\x1b" not in plain and " - " in plain and " + " in plain  # the markers say it without colour

    evil = passes.PassDiff(1, "Evil\x1b]52;c;SGk=\x07", "ttgir", [passes.Hunk("@@ -1 +1 @@", (
        passes.DiffBlock("replace", ((1, "  tt.print \"\x1b[2J\""),), ((1, "  tt.print \"\x1b]0;owned\x07\""),)),))])
    fake = passes.Step(1, "Evil\x1b[2J", "", "builtin.module", "ttgir", None, None, changed=True)
    for style in ("side-by-side", "unified"):
        out = _render(pass_view(trace, fake, evil, width=160, style=style), 160)
        assert "\x1b" not in out and "\\x1b[2J" in out and "\\x1b]0;owned\\x07" in out


def test_pass_command_diff_style(traces, monkeypatch):
    """passes --pass: auto by width, --diff-style forces either; the JSON carries the pass's remarks."""
    trace = traces("sm_90a")
    _serve(monkeypatch, trace)
    args = ["passes", "matmul", "--block", "16", "--arch", "sm_90a", "--pass", "TritonGPUAccelerateMatmul",
            "--no-color"]
    runner = CliRunner()
    wide = runner.invoke(_app(), args + ["--width", "200"])
    assert wide.exit_code == 0, wide.output
    assert "(side by side;" in wide.output and "+ #mma = #ttg.nvidia_mma<" in wide.output
    narrow = runner.invoke(_app(), args + ["--width", "100"])
    assert "(unified;" in narrow.output and "--- before TritonGPUAccelerateMatmul" in narrow.output
    forced = runner.invoke(_app(), args + ["--width", "200", "--diff-style", "unified"])
    assert "(unified;" in forced.output
    forced = runner.invoke(_app(), args + ["--width", "100", "--diff-style", "side-by-side"])
    assert "(side by side;" in forced.output
    bad = runner.invoke(_app(errors=True), args + ["--diff-style", "sideways"])
    assert bad.exit_code == 2 and "Unknown diff style 'sideways'" in bad.output

    data = json.loads(runner.invoke(_app(), args + ["--json"]).output)
    step = trace.step("TritonGPUAccelerateMatmul")
    assert data["pass"]["step"] == step.index and data["pass"]["name"] == "TritonGPUAccelerateMatmul"
    assert [r["severity"] for r in data["pass"]["remarks"]] == ["remark", "note"]
    assert data["pass"]["diff"] == passes.step_diff(trace, step)


def test_passes_takes_the_launch_options(traces, monkeypatch):
    """--maxnreg, --num-ctas and --fp-fusion/--no-fp-fusion reach the compile, as `compile` passes them."""
    requests = _serve(monkeypatch, traces("sm_80"))
    result = CliRunner().invoke(_app(), ["passes", "matmul", "--block", "16", "--arch", "sm_90a", "--maxnreg", "128",
                                         "--num-ctas", "2", "--no-fp-fusion", "--json"])
    assert result.exit_code == 0, result.output
    assert requests[-1].options == {"maxnreg": 128, "num_ctas": 2, "enable_fp_fusion": False}
    CliRunner().invoke(_app(), ["passes", "matmul", "--fp-fusion", "--json"])
    assert requests[-1].options == {"enable_fp_fusion": True}
    bad = CliRunner().invoke(_app(errors=True), ["passes", "matmul", "--maxnreg", "7"])
    assert bad.exit_code == 2 and len(requests) == 2  # refused before any compile


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


def test_remark_on_the_unpipelined_loop_line(traces, monkeypatch):
    trace = traces("unpipelined")
    [warning] = [r for r in trace.remarks if r.severity == "warning"]
    assert os.path.realpath(warning.file) == os.path.realpath(UNPIPELINED)
    assert warning.line == 20  # acc += tl.dot(a, b), inside the loop
    assert "pipelined load for this operand will be disabled" in warning.message
    assert warning.stage == "ttgir"  # the TTGIR passes wrote it
    # the pass that picks the dot's operand layouts (read from the dump's own header)
    assert warning.pass_name == "TritonGPUAccelerateMatmul" == trace.steps[warning.step - 1].name

    _serve(monkeypatch, trace)  # the command on this trace (test_compile_passes_and_passes_save compiles one)
    result = CliRunner().invoke(_app(), ["passes", UNPIPELINED, "--arch", "sm_90a", "--line", "20", "--width", "200"])
    assert result.exit_code == 0, result.output
    assert "unpipelined.py:20" in result.output and "poor performance is expected" in result.output


def test_mma_v3_remark_on_small_tiles(traces):
    remarks = traces("sm_90a").remarks
    assert any(r.line == 19 and "MMA version 3 acceleration not applied" in r.message for r in remarks)
    assert not traces("sm_80").remarks


# --------------------------------------------------------------------------
# Which pass printed each remark
# --------------------------------------------------------------------------


def test_remarks_name_the_pass_that_printed_them(traces):
    """seed-001 on sm_90a, BLOCK 16: TritonGPUAccelerateMatmul says why it keeps mma v2 (line 19)."""
    from tritonscope.outputs.render.passes_view import pipeline_table

    trace = traces("sm_90a")
    step = trace.step("TritonGPUAccelerateMatmul")
    said = [(r.severity, r.line, r.stage, r.step, r.pass_name) for r in trace.remarks]
    assert said == [("remark", 19, "ttgir", step.index, "TritonGPUAccelerateMatmul"),
                    ("note", 19, "ttgir", step.index, "TritonGPUAccelerateMatmul")]  # its note goes with it
    # the compile the report is saved from carries the same
    assert [(r["step"], r["pass_name"]) for r in trace.artifact.remarks] == [(step.index, step.name)] * 2

    # the table: a line of the pass's own row; the remarks list: the pass with the place
    lines = _render(pipeline_table(trace), 160).splitlines()
    at = next(i for i, line in enumerate(lines) if re.match(rf"\s*{step.index} │ TritonGPUAccelerateMatmul ", line))
    assert re.search(r"remark: matmul.py:19:\d+ MMA version 3 acceleration not", lines[at + 1])
    assert lines[at + 1].split("│")[0].strip() == ""  # under the pass's row, not a row of its own
    text = "\n".join(lines)
    assert re.search(rf"matmul.py:19:\d+ remark \(TTGIR step {step.index}, TritonGPUAccelerateMatmul\): "
                     "MMA version 3 acceleration not applied", text)
    assert "pass unknown" not in text

    # JSON: each remark names its step and pass, each step lists its remarks
    data = trace.to_dict()
    assert [(r["step"], r["pass_name"]) for r in data["remarks"]] == [(step.index, step.name)] * 2
    assert data["steps"][step.index - 1]["remarks"] == [0, 1]
    assert all(not d["remarks"] for d in data["steps"] if d["index"] != step.index)
    again = passes.PassTrace.from_dict(json.loads(json.dumps(data)))
    assert again.remarks == trace.remarks and again.steps[step.index - 1].name == step.name


def test_remarks_name_the_pass_in_json_and_reports(traces, monkeypatch, tmp_path):
    from tritonscope.commands.passes import save_with_passes

    trace = traces("sm_90a")
    step = trace.step("TritonGPUAccelerateMatmul")
    _serve(monkeypatch, trace)
    out = CliRunner().invoke(_app(), ["passes", "matmul", "--block", "16", "--arch", "sm_90a", "--json"])
    data = json.loads(out.output)
    assert data["remarks"][0]["pass_name"] == "TritonGPUAccelerateMatmul" and data["remarks"][0]["step"] == step.index
    assert data["steps"][step.index - 1]["remarks"] == [0, 1]

    for ext in ("json", "html", "md"):
        save_with_passes(trace, str(tmp_path / f"r.{ext}"))
    report = json.loads((tmp_path / "r.json").read_text())
    assert [(r["step"], r["pass_name"]) for r in report["remarks"]] == [(step.index, step.name)] * 2
    assert report["passes"]["remarks"][0]["pass_name"] == step.name
    # the remark notes on the stage lines name the pass too
    note = next(n for n in report["notes"] if n["kind"] == "remark" and n["stage"] == "python")
    assert re.match(r"Triton remark \(TTGIR pass TritonGPUAccelerateMatmul, matmul.py:19:\d+\)", note["explanation"])
    assert note["facts"]["pass_name"] == step.name
    # HTML and Markdown: the remark in the pass's row of the pass table
    page = (tmp_path / "r.html").read_text()
    row = re.search(rf"<tr><td class=\"num\">{step.index}</td><td>TritonGPUAccelerateMatmul</td>.*?</tr>", page)
    assert row and re.search(r"remark: matmul.py:19:\d+ MMA version 3 acceleration not applied", row.group(0))
    md = (tmp_path / "r.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith(f"| {step.index} | TritonGPUAccelerateMatmul |"))
    assert re.search(r"remark: matmul.py:19:\d+ MMA version 3 acceleration not applied", row)
    # and the remarks lists (HTML, Markdown) and the walkthrough say which pass printed it
    assert "(TTGIR pass TritonGPUAccelerateMatmul)" in page
    assert "(TTGIR pass TritonGPUAccelerateMatmul)" in md
    from tritonscope.outputs.render import views
    from tritonscope.core.console import make_console
    from tritonscope.outputs.report import analysis_from_dict

    console = make_console(width=200, color=False)
    with console.capture() as got:
        console.print(views.walkthrough(analysis_from_dict(report)))
    assert "remark, from the TTGIR pass TritonGPUAccelerateMatmul: MMA version 3" in got.get()


def _staged(trace):
    """The trace's remarks as the main compile leaves them: a stage, no pass."""
    from dataclasses import replace

    return [replace(r, step=0, pass_name="") for r in trace.remarks]


def test_remarks_by_pass_reads_the_order_or_says_pass_unknown(traces, tmp_path):
    """The rule, on the real stream of the remarks run: a diagnostic printed between "IR Dump Before X"
    and the next dump is X's; other passes than the trace's, or after the timing report: pass unknown."""
    from tritonscope.outputs.render.passes_view import pipeline_table, table_rows

    trace = traces("sm_90a")
    step = trace.step("TritonGPUAccelerateMatmul")
    stream = Path(trace._workdir.name) / "remarks" / "stderr.txt"
    text = stream.read_text()
    staged = _staged(trace)

    def by_pass(path, steps=trace.steps):
        dumps = list(passes.read_dumps(path, summarize=False))
        return passes.remarks_by_pass(steps, staged, dumps, ["ttgir"])

    assert [(r.step, r.pass_name) for r in by_pass(stream)] == [(step.index, step.name)] * 2
    # the stream: the dumps of the TTGIR stage only, in order with the diagnostics, names read from it
    headers = [passes.parse_header(line) for line in text.splitlines()]
    names = [h.name for h in headers if h]
    assert names == [s.name for s in trace.steps if s.stage == "ttgir"]
    before = text.index(f"IR Dump Before {step.name}")
    assert before < text.index("MMA version 3 acceleration not applied") < text.index("IR Dump Before", before + 1)

    # a dump of your own with the diagnostics in the same stream (no MLIR_DUMP_PATH) reads the same way
    own = tmp_path / "own.mlir"
    own.write_text("".join(line for line in text[text.index("// -----// IR Dump"):].splitlines(keepends=True)
                           if not line.startswith(passes.STAGE_MARK)))
    from_dump = passes.trace_from_dump(own)
    assert [(r.severity, r.pass_name) for r in from_dump.remarks] == [("remark", step.name), ("note", step.name)]

    # not the passes the trace ran (one missing): the order cannot be read
    fewer = [s for s in trace.steps if s is not step]
    assert [(r.step, r.pass_name) for r in by_pass(stream, fewer)] == [(0, "")] * 2

    # printed after the pass manager's timing report: no pass was running
    blocks = re.findall(r"^/\S+:\d+:\d+: (?:remark|note): .*\n(?:[ \t].*\n)*", text, re.M)
    assert len(blocks) >= 2
    moved = text
    for block in blocks:
        moved = moved.replace(block, "", 1)
    end = moved.index(passes.STAGE_MARK + "ttgir end")
    assert moved.rfind("Execution time report", 0, end) > moved.rfind("IR Dump Before", 0, end)
    late = tmp_path / "late.txt"
    late.write_text(moved[:end] + "".join(blocks) + moved[end:])
    unknown = by_pass(late)
    assert [(r.step, r.pass_name, r.stage) for r in unknown] == [(0, "", "ttgir")] * 2

    # and the views say so
    shown = replace_trace(trace, remarks=unknown)
    text = _render(pipeline_table(shown), 160)
    assert "remark (TTGIR, pass unknown): MMA version 3" in text
    assert re.search(r"\? │ pass unknown\s+│ TTGIR .*remark: matmul.py:19:\d+ MMA version 3", text)
    assert table_rows(shown)[-1]["pass"] == "pass unknown"


def replace_trace(trace, **changes):
    from dataclasses import replace

    return replace(trace, _workdir=None, **changes)


def test_remarks_run_failing_leaves_the_stage(traces):
    """When the second compile fails, the remarks keep their stage (pass unknown) and the trace says why."""
    trace = replace_trace(traces("unpipelined"), remarks=_staged(traces("unpipelined")), warnings=[], artifact=None)
    passes.attribute_remarks(trace, Request(target="no_such_sample"), "sm_90a", Path(traces("unpipelined")
                             ._workdir.name) / "remarks-failing")
    assert [(r.step, r.stage) for r in trace.remarks] == [(0, "ttgir")]
    assert "could not be tied to passes" in trace.warnings[0]


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
    from tritonscope.analyses.analysis import analyze
    from tritonscope.pipeline.triton_compile import compile_artifact
    from tritonscope.pipeline.binding import build_spec
    from tritonscope.outputs.render.summary_text import summary_rows

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

    from tritonscope.pipeline.binding import build_spec

    compile_mod = importlib.import_module("tritonscope.pipeline.triton_compile")
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
    from tritonscope.outputs.report import analysis_from_dict, analysis_to_dict, load_analysis

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


class _ExitsOnPoll:
    """A child that writes its last lines and exits between the reader's empty read and its poll."""

    def __init__(self, path: Path, tail: bytes):
        self.path, self.tail, self.returncode = path, tail, None

    def poll(self):
        if self.returncode is None:
            with open(self.path, "ab") as f:
                f.write(self.tail)  # the buffer flushed at exit
            self.returncode = 0
        return self.returncode


def test_follow_splits_what_the_child_wrote_as_it_exited(tmp_path):
    """The tail read after the child exits is split into lines (it once came back as one: a dump read as cut off)."""
    dump = tmp_path / "dump.mlir"
    dump.write_bytes(b"// -----// IR Dump Before A (a) ('builtin.module' operation) //----- //\nmodule {\n")
    tail = b"  tt.func @k() {\n  }\n}\n"
    lines = list(passes._follow(dump, _ExitsOnPoll(dump, tail), poll=0))
    assert lines == dump.read_bytes().splitlines(keepends=True)
    assert [d.header.name for d in passes.read_dumps(dump, lines=iter(lines))] == ["A"]


def test_follow_reads_a_file_made_just_before_the_child_exited(tmp_path):
    dump = tmp_path / "dump.mlir"
    lines = list(passes._follow(dump, _ExitsOnPoll(dump, b"line 1\nline 2\n"), poll=0))
    assert lines == [b"line 1\n", b"line 2\n"]
