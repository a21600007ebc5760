"""`diff --loop`: two compiles' innermost loops side by side, from the recorded real compiles in tests/data/versions/
(replayed: no Triton install, no compile).

- moe_gfx950_3.4_3.6: tests/data/versions/moe_int4.py for gfx950, Triton 3.4.0 vs 3.6.0 (AMDGCN);
- samples_capture_3.6_3.9: job 6 is matmul_grouped on sm_90a (SASS, HGMMA + WARPGROUP.DEPBAR), job 3 matmul on
  gfx942, job 2 matmul on sm_90a.
"""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest
from conftest import ROOT, check_golden

from tritonscope.versions.loop_pair import Fold, LoopRow, loop_pair, shown_rows

DATA = Path(__file__).parent / "data" / "versions"
GOLDEN = ROOT / "tests" / "golden" / "versions"


def _artifact(rel: str) -> dict:
    return json.loads(gzip.decompress((DATA / rel).read_bytes()))


def _stages(rel: str) -> dict[str, str]:
    return _artifact(rel)["stages"]


def _render(pair, a="A", b="B") -> str:
    from tritonscope.versions.loop_render import loop_panel
    from tritonscope.core.sanitize import SafeConsole

    console = SafeConsole(width=120, file=io.StringIO(), color_system=None, force_terminal=False)
    console.print(loop_panel(pair, a, b))
    return console.file.getvalue()


@pytest.fixture(scope="module")
def moe():
    return loop_pair(_stages("moe_gfx950_3.4_3.6/000-a.json.gz"), _stages("moe_gfx950_3.4_3.6/000-b.json.gz"))


@pytest.fixture(scope="module")
def grouped_sm90():
    return loop_pair(_stages("samples_capture_3.6_3.9/006-a.json.gz"),
                     _stages("samples_capture_3.6_3.9/006-b.json.gz"))


def test_moe_loop_34_vs_36_marks_new_waits_and_buffer_loads(moe):
    """The vLLM case: 3.6's loop waits for memory twice as often and drains twice; its loads are buffer loads."""
    assert moe.stage == "amdgcn" and moe.why is None and moe.marked
    ca, cb = moe.a.counts(), moe.b.counts()
    assert (ca["drain"], cb["drain"]) == (1, 2)
    assert (ca["wait"] + ca["drain"], cb["wait"] + cb["drain"]) == (3, 6)
    assert ca["mma"] == cb["mma"] == 8
    assert all(ln.text.startswith("global_load") for ln in moe.a.lines if ln.mark == "LOAD")
    assert all(ln.text.startswith("buffer_load") for ln in moe.b.lines if ln.mark == "LOAD")
    drains = [ln for ln in moe.b.lines if ln.mark == "DRAIN"]
    assert [ln.text for ln in drains] == ["s_waitcnt vmcnt(0)"] * 2 and drains[0].detail == "vmcnt(0)"
    # every line of both loops is on exactly one row, in order
    assert [r.a for r in moe.rows if r.a] == moe.a.lines and [r.b for r in moe.rows if r.b] == moe.b.lines
    # marks first: each MMA of A faces an MMA of B, and A's one drain faces one of B's
    paired = [(r.a.mark, r.b.mark) for r in moe.rows if r.a and r.b and (r.a.mark or r.b.mark)]
    assert paired.count(("MMA", "MMA")) == 6 and ("DRAIN", "DRAIN") in paired
    assert all(ma == mb for ma, mb in paired if ma and mb)


def test_sass_loop_marks_hgmma_and_its_wait(grouped_sm90):
    """SASS is preferred over PTX; HGMMA is an MMA, WARPGROUP.DEPBAR (wgmma.wait_group 1) a wait, LDGSTS a load."""
    p = grouped_sm90
    assert p.stage == "sass" and p.a.label == ".L_x_1" and p.a.loops == 1  # not the BRA-to-itself after EXIT
    marks = {ln.mark for ln in p.a.lines}
    assert {"MMA", "WAIT", "BAR", "LOAD"} <= marks
    wg = [ln for ln in p.a.lines if ln.text.startswith("WARPGROUP.DEPBAR")]
    assert wg and wg[0].mark == "WAIT" and wg[0].detail == "wgmma pending<=1"
    assert all(ln.mark == "MMA" for ln in p.a.lines if ln.op.startswith("HGMMA"))
    assert p.a.counts()["mma"] == 4 and p.a.counts()["load"] == 12


def test_folding_keeps_every_marked_row(moe):
    shown = shown_rows(moe.rows, context=2)
    marked = [r for r in moe.rows if (r.a and r.a.mark) or (r.b and r.b.mark)]
    assert [r for r in shown if isinstance(r, LoopRow) and r in marked] == marked
    folds = [r for r in shown if isinstance(r, Fold)]
    assert folds and sum(f.rows for f in folds) + sum(isinstance(r, LoopRow) for r in shown) == len(moe.rows)
    assert sum(f.a for f in folds) == sum(1 for r in moe.rows if r.a) - sum(1 for r in shown
                                                                             if isinstance(r, LoopRow) and r.a)


def test_different_backends_fall_back_to_llvm_ir_unmarked():
    """sm_90a vs gfx942 share no machine stage: the loops come from the LLVM IR, and nothing is marked."""
    p = loop_pair(_stages("samples_capture_3.6_3.9/002-a.json.gz"), _stages("samples_capture_3.6_3.9/003-a.json.gz"))
    assert p.stage == "llir" and not p.marked and p.a and p.b
    assert not any(ln.mark for ln in p.a.lines + p.b.lines)
    assert any(ln.text.startswith("br ") for ln in p.a.lines)
    assert "has no instruction classes here: nothing is marked" in _render(p)


def test_no_common_stage_and_no_loop_are_said():
    p = loop_pair({"sass": "x"}, {"amdgcn": "y"})
    assert p.a is None and p.b is None and "no stage both sides have" in p.why
    va = _stages("samples_capture_3.6_3.9/016-a.json.gz")  # vector_add: no loop
    p = loop_pair(va, va)
    assert p.why == "neither side has a loop" and p.rows == []
    assert "no loop" in _render(p)


@pytest.mark.parametrize("name,a,b", [
    ("loop_moe_gfx950_34_36", "moe_gfx950_3.4_3.6/000-a.json.gz", "moe_gfx950_3.4_3.6/000-b.json.gz"),
    ("loop_matmul_grouped_sm90a_36_39", "samples_capture_3.6_3.9/006-a.json.gz", "samples_capture_3.6_3.9/006-b.json.gz"),
])
def test_loop_view_golden(name, a, b, regen):
    text = _render(loop_pair(_stages(a), _stages(b)), "triton " + _artifact(a)["triton_version"],
                   "triton " + _artifact(b)["triton_version"])
    check_golden(GOLDEN / f"{name}.txt", text, regen)


@pytest.fixture(scope="module")
def moe_reports(tmp_path_factory):
    """The recorded MOE compiles as saved reports, so `diff A.json B.json --loop` runs on them without Triton."""
    from tritonscope.analyses.analysis import analyze
    from tritonscope.outputs.save import save_report
    from tritonscope.pipeline.result_cache import decode_artifact

    folder = tmp_path_factory.mktemp("loop")
    out = []
    for side in "ab":
        an = analyze(decode_artifact(_artifact(f"moe_gfx950_3.4_3.6/000-{side}.json.gz")))
        out.append(str(save_report(an, folder / f"{side}.json")))
    return out


def test_cli_diff_loop_on_two_versions(moe_reports, tmp_path):
    from typer.testing import CliRunner

    from tritonscope.cli import app

    runner = CliRunner()
    r = runner.invoke(app, ["diff", *moe_reports, "--loop", "--width", "140"])
    assert r.exit_code == 0, r.output
    assert "innermost loop (AMDGCN)" in r.output and "6 memory waits (2 drains)" in r.output
    assert "DRAIN" in r.output and "buffer_load_dwordx4" in r.output
    assert "─ amdgcn" not in r.output.lower().replace("innermost loop (amdgcn)", "")  # --loop alone: no stage diffs
    r = runner.invoke(app, ["diff", *moe_reports, "--loop", "--json"])
    assert r.exit_code == 0
    loop = json.loads(r.output)["loop"]
    assert loop["stage"] == "amdgcn" and loop["b"]["counts"]["drain"] == 2
    assert len(loop["rows"]) >= max(len(loop["a"]["lines"]), len(loop["b"]["lines"]))
    html = tmp_path / "d.html"
    r = runner.invoke(app, ["diff", *moe_reports, "--loop", "--save", str(html)])
    assert r.exit_code == 0 and 'class="loop-view"' in html.read_text() and "DRAIN" in html.read_text()
    r = runner.invoke(app, ["diff", *moe_reports, "--json"])
    assert "loop" not in json.loads(r.output)
