"""The summary model (summary.py): derived facts computed once, and true spill figures.

The spilling kernel is the softmax sample with BLOCK=8192 on one warp: ptxas
keeps the 8,192-wide row (256 floats a thread, all 255 registers taken) partly
in a stack frame (`cuobjdump -res-usage` says `STACK:552 LOCAL:0`, with 165
STL and 185 LDL in the SASS, on Triton 3.9; `STACK:208`, 53 STL and 64 LDL
on 3.6).  BLOCK=16384 spills 3,960 bytes but takes three times as long to
compile; the figures below are checked against the SASS and ptxas whatever
their size.  Reading only LOCAL called it "spills none"; every view
must now show the same stack bytes and STL/LDL counts.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from tritonscope.analyses.summary import Fit, Occupancy, SharedMemory, Spills, Summary, local_accesses, summarize

ROOT = Path(__file__).resolve().parent.parent
SPILL = dict(constexprs={"BLOCK": "8192"}, num_warps=1, arch="sm_90a")


@pytest.fixture(scope="module")
def spilling(compiled):
    from tritonscope.analyses.analysis import analyze

    return analyze(compiled("softmax", **SPILL))


@pytest.fixture(scope="module")
def plain(compiled):
    from tritonscope.analyses.analysis import analyze

    return analyze(compiled("softmax", arch="sm_90a"))


def _spill_text(sp: Spills) -> str:
    return f"{sp.stack:,} bytes stack frame per thread; {sp.stores:,} STL and {sp.loads:,} LDL in SASS"


# --------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------


def test_spilling_kernel_spills(spilling):
    s = spilling.summary
    sp = s.spills
    assert s.registers is not None and s.registers <= 255
    assert sp.local == 0, "ptxas spills to the stack frame, not to LOCAL"
    assert sp.stack >= 128, sp            # 552 bytes on Triton 3.9, 208 on 3.6
    assert sp.stores >= 32 and sp.loads >= 32, sp   # 165 STL and 185 LDL on 3.9, 53 and 64 on 3.6
    assert sp.spills is True and sp.bytes == sp.stack
    assert (sp.stores, sp.loads) == local_accesses(spilling.artifact.stages["sass"])
    assert sp.stack == spilling.artifact.resources.stack


def test_plain_kernel_does_not_spill(plain):
    sp = plain.summary.spills
    assert (sp.stack, sp.local, sp.stores, sp.loads) == (0, 0, 0, 0)
    assert sp.spills is False and sp.bytes == 0


def test_fit_and_occupancy_are_computed_once(plain, compiled):
    from tritonscope.analyses.analysis import analyze

    s = plain.summary
    assert s.fit == Fit(True, True, ()) and s.fit.ok
    assert s.occupancy.blocks_per_sm >= 1 and 0 < s.occupancy.fraction <= 1
    assert s.shared == SharedMemory(plain.artifact.resources.dynamic_shared,
                                    plain.artifact.resources.static_shared, 232448)
    assert s.fp_fusion is True and s.grid == plain.artifact.spec.grid
    assert s.mix == {k: v for k, v in plain.mix.items() if k in ("ptx", "sass") and v}
    big = analyze(compiled("matmul", block=128, num_stages=5, arch="sm_90a"))  # 320 KiB of shared memory
    assert big.summary.fit.shared_per_block is False and big.summary.occupancy is None
    assert big.summary.fit.problems[0].startswith("needs 327680 bytes of shared memory per block")


def test_local_accesses_reads_predicated_and_wide_forms():
    sass = "\n".join([
        "        /*0080*/                   STL [R1+0xefc], R13 ;",
        "        /*0090*/                   STL.64 [R1+0x10], R4 ;",
        "        /*00a0*/              @!P0 LDL.LU R7, [R1+0x8] ;",
        "        /*00b0*/               @P1 LDL.128 R8, [R1] ;",
        "        /*00c0*/                   LDG.E R2, desc[UR4][R2.64] ;",
        "        /*00d0*/                   STS [R0], R2 ;",
        "        // STL in a comment",
    ])
    assert local_accesses(sass) == (2, 2)
    assert local_accesses("") == (0, 0)
    assert local_accesses(None) == (None, None)


@pytest.mark.parametrize("spills, text", [
    (Spills(None, None, None, None), "unknown"),
    (Spills(0, 0, 0, 0), "none"),
    (Spills(0, 0, None, None), "none"),
    (Spills(3960, 0, 2981, 3814), "3,960 bytes stack frame per thread; 2,981 STL and 3,814 LDL in SASS"),
    (Spills(3960, 0, None, None), "3,960 bytes stack frame per thread"),
    (Spills(0, 64, 3, 2), "64 bytes local memory per thread; 3 STL and 2 LDL in SASS"),
    # a call frame without local traffic is not spilling
    (Spills(16, 0, 0, 0), "none (16 bytes stack frame per thread, no STL/LDL in SASS)"),
])
def test_spills_text(spills, text):
    from tritonscope.outputs.render.summary_text import spills_text

    assert spills_text(spills) == text


def test_summary_dict_round_trip(spilling, plain):
    for s in (spilling.summary, plain.summary):
        back = Summary.from_dict(json.loads(json.dumps(s.to_dict())))
        assert back == s
    assert isinstance(Summary.from_dict(plain.summary.to_dict()).occupancy, Occupancy)


def test_unknown_arch_has_no_fit(plain):
    spec = replace(plain.artifact.spec, arch="sm_999")
    s = summarize(replace(plain.artifact, spec=spec))
    assert s.fit is None and s.occupancy is None and s.gpus is None and s.shared.limit_per_block is None


# --------------------------------------------------------------------------
# The same figure in every view
# --------------------------------------------------------------------------


def test_terminal_html_markdown_say_the_same(spilling):
    from tritonscope.outputs.render.html import render_html
    from tritonscope.outputs.render.markdown import render_markdown
    from tritonscope.outputs.render.summary_text import summary_rows
    from tritonscope.outputs.render.text import render_text

    want = _spill_text(spilling.summary.spills)
    rows = dict(summary_rows(spilling))
    assert rows["spills"] == want
    text = render_text(spilling)
    assert f"spills         {want}" in text
    assert f"<tr><td>spills</td><td>{want}</td></tr>" in render_html(spilling)
    assert f"| **spills** | {want} |" in render_markdown(spilling)
    # the terminal shows every row HTML and Markdown show (and adds the mix and timing)
    for label, value in rows.items():
        assert f"{label:<15}{value}"[:60] in text, label


def test_json_report_holds_the_summary(spilling, tmp_path):
    from tritonscope.outputs.report import load_analysis
    from tritonscope.outputs.save import save_report

    path = save_report(spilling, tmp_path / "r.json")
    data = json.loads(path.read_text())
    assert data["schema_version"] == 2
    sp = data["summary"]["spills"]
    assert sp == {"stack": spilling.summary.spills.stack, "local": 0,
                  "stores": spilling.summary.spills.stores, "loads": spilling.summary.spills.loads}
    back = load_analysis(path)
    assert back.summary == spilling.summary


def test_diff_rows_show_the_spills(spilling, plain):
    from tritonscope.analyses.diff import diff_analyses

    d = diff_analyses(plain, spilling)
    rows = {r.name: r for r in d.rows}
    sp = spilling.summary.spills
    row = rows["spills (stack + local bytes per thread)"]
    assert (row.a, row.b, row.changed) == ("0", f"{sp.stack:,}", True)
    ops = rows["spill instructions (SASS)"]
    assert (ops.a, ops.b) == ("0 STL, 0 LDL", f"{sp.stores:,} STL, {sp.loads:,} LDL")
    assert f"B spills: {sp.stack:,} bytes of stack per thread, {sp.stores:,} STL and {sp.loads:,} LDL " \
           "(A does not)" in d.story
    same = diff_analyses(plain, plain)
    assert "spill instructions (SASS)" not in {r.name for r in same.rows}, "no spill row when neither spills"


def test_sweep_row_shows_the_spills(spilling):
    """The row's compile is the fixture's (the session's caches answer it: Triton's, the remarks and the SASS)."""
    from tritonscope.measure import sweep as sw
    from tritonscope.inputs.kernels import Request

    row = sw.compile_row(0, Request("softmax", **SPILL), "sm_90a")
    sp = spilling.summary.spills
    assert row.ok and (row.spills, row.spill_stores, row.spill_loads) == (sp.stack, sp.stores, sp.loads)
    assert row.fits and row.blocks_per_sm == spilling.summary.occupancy.blocks_per_sm
    result = sw.SweepResult("softmax_kernel", "softmax", [row], 1, workers=1)
    got = next(csv.DictReader(io.StringIO(sw.csv_text(result))))
    assert (got["spill_bytes"], got["spill_stores"], got["spill_loads"]) == \
        (str(sp.stack), str(sp.stores), str(sp.loads))


def test_bench_row_shows_the_spills(spilling, plain):
    """bench fills its row from the summary (no GPU needed for that part) and adds a spill column."""
    from rich.console import Console

    from tritonscope.measure.bench import BenchReport, BenchRow, _resources_into
    from tritonscope.outputs.render.bench_view import bench_table

    def row(an):
        r = BenchRow(an.artifact.spec.label(), an.artifact.spec.shape, "fp32", {}, 1, 3, "out of resources")
        _resources_into(r, an.artifact)
        return r

    sp = spilling.summary.spills
    rows = [row(spilling), row(plain)]
    assert (rows[0].spills, rows[0].spill_stores, rows[0].spill_loads) == (sp.stack, sp.stores, sp.loads)
    assert rows[1].spills == 0

    def table(rows):
        console = Console(width=250, file=io.StringIO(), color_system=None)
        console.print(bench_table(BenchReport("cpu", "sm_90a", {}, rows)))
        return console.file.getvalue()

    assert f"{sp.stack:,} ({sp.stores:,} STL, {sp.loads:,} LDL)" in table(rows)
    assert "spill" not in table(rows[1:]), "no spill column when nothing spills"


# --------------------------------------------------------------------------
# Reports: version 2, and version 1 migrated
# --------------------------------------------------------------------------


def test_v1_report_opens_with_a_recomputed_summary():
    from tritonscope.outputs.render.text import render_text
    from tritonscope.outputs.report import load_analysis

    path = ROOT / "tests" / "data" / "report_small.json"
    assert json.loads(path.read_text())["schema_version"] == 1, "keep the checked-in report a v1 fixture"
    small = load_analysis(path)
    s = small.summary
    assert s.registers == 26 and s.spills == Spills(0, 0, 0, 0) and s.fit.ok
    assert s.occupancy.limited_by == "threads"
    assert "spills         none" in render_text(small)
    stored = json.loads(path.read_text())["notes"]
    assert [(n.stage, n.line, n.label) for n in small.notes] == [(n["stage"], n["line"], n["label"]) for n in stored]
    if "facts" in small.notes[0].__dataclass_fields__:  # the walkthrough reads facts: v1 notes get them back
        assert all(n.facts for n in small.notes if n.stage == "ttir")


def test_v1_report_of_a_spilling_kernel_now_says_it_spills(spilling):
    """A v1 report saved before this fix stored no summary: reading it recomputes the spills from STACK."""
    from tritonscope.outputs.report import analysis_from_dict, analysis_to_dict

    data = json.loads(json.dumps(analysis_to_dict(spilling)))
    data["schema_version"] = 1
    del data["summary"]
    for note in data["notes"]:
        note.pop("facts", None)
    back = analysis_from_dict(data)
    assert back.summary == spilling.summary
    assert [(n.stage, n.line, n.label) for n in back.notes] == [(n.stage, n.line, n.label) for n in spilling.notes]
    assert [getattr(n, "facts", None) for n in back.notes] == [getattr(n, "facts", None) for n in spilling.notes]


def test_damaged_summary_is_a_bad_input_file(plain):
    from tritonscope.core.errors import InputFileError
    from tritonscope.outputs.report import analysis_from_dict, analysis_to_dict

    data = json.loads(json.dumps(analysis_to_dict(plain)))
    data["summary"] = {"arch": "sm_90a"}
    with pytest.raises(InputFileError, match="damaged report"):
        analysis_from_dict(data)
    data["schema_version"] = 3
    with pytest.raises(InputFileError, match="reads versions 1, 2"):
        analysis_from_dict(data)
