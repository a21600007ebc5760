"""Issue 33: every table stays readable at 100 columns (render/fit.py's FittedTable).

At --width 100 the sweep split numbers across lines ('cp.async:12' over '0'), cut its header and dropped
'pred ms'; the versions table folded every cell.  Now no number or header is broken: a column that cannot
fit whole is left out, and the caption names it.  Real compiles (a sweep of the matmul sample) and real
recorded versions runs (tests/data/versions).
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from conftest import DATA
from tritonscope.cli import app

runner = CliRunner()
SWEEP = ["sweep", "matmul", "-c", "BLOCK=32,128", "-s", "3,4", "-w", "4", "--arch", "sm_90a", "-j", "1"]


def _run(*args) -> str:
    result = runner.invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def _whole(token: str, text: str) -> bool:
    """`token` appears in `text` with no digit, letter or ':' glued on either side (not part of a split)."""
    return re.search(rf"(?<![\w:.]){re.escape(token)}(?![\w:.])", text) is not None


@pytest.fixture(scope="module")
def sweep_rows():
    return json.loads(_run(*SWEEP, "--json"))["rows"]


@pytest.mark.parametrize("width", [100, 160])
def test_sweep_at_width_keeps_numbers_and_headers_whole(sweep_rows, width):
    out = _run(*SWEEP, "--width", str(width))
    lines = out.splitlines()
    assert all(len(line.rstrip()) <= width for line in lines)
    header = next(line for line in lines if line.startswith("config"))
    for name in ("config", "shared B", "regs", "spill", "fits", "pred ms"):
        assert name in header, (name, header)
    for r in sweep_rows:
        assert r["ok"]
        for value in (r["shared"], r["registers"], r["spills"]):
            assert _whole(str(value), out), (value, out)
        if r["predicted_ms"] is not None:
            assert _whole(f"{r['predicted_ms']:.4g}", out)
    mix = {f"{k}:{v}" for r in sweep_rows for k, v in r["mix"].items()}
    if "PTX mix" in header:   # shown: every count whole, never 'cp.async' over ':12'
        shown = [m for m in mix if m.startswith("async copy:")]
        assert not any(line.rstrip().endswith("cp.async") for line in lines)
        assert shown and all(_whole("cp.async:" + m.split(":")[1], out) for m in shown)
    else:                     # left out: said under the table
        assert "left out at this width: PTX mix" in " ".join(out.split())
    if width == 160:
        assert "PTX mix" in header


@pytest.mark.parametrize("record", ["samples_capture_3.6_3.9", "moe_gfx950_3.4_3.6"])
def test_versions_table_at_100_columns(record):
    from tritonscope import versions as V

    rep = V.from_record(DATA / "versions" / record)
    out = _run("versions", "--replay", str(DATA / "versions" / record), "--width", "100", "--details", "0")
    lines = out.splitlines()
    assert all(len(line.rstrip()) <= 100 for line in lines)
    header = " ".join(lines[1:4])
    for name in ("kernel", "arch", "status", "regs", "spills", "pred B/A"):
        assert name in header, (name, header)
    for r in rep.rows:
        cells = V.report.table_cells(r)
        for cell in (cells[3], cells[4]):       # regs and spills: never wrapped
            assert cell in out, (cell, out)
        for token in (cells[3] + " " + cells[4]).split():   # '192+48a', '→', '168+32a': each whole
            assert token == "→" or _whole(token, out), token
    left = " ".join(out.split())
    assert "left out at this width:" in left and "--save report.md" in left
    wide = _run("versions", "--replay", str(DATA / "versions" / record), "--width", "200", "--details", "0")
    assert "left out at this width" not in wide and "buf/glob loads" in wide and "MMA" in wide


def test_fitted_table_leaves_out_the_highest_drop_first():
    import io

    from rich.console import Console

    from tritonscope.outputs.render.fit import Col, FittedTable

    cols = [Col("name", ["a" * 30]), Col("n", ["123456789"], drop=1), Col("words", ["one two three"], wrap=True,
                                                                         drop=2)]
    def draw(width):
        console = Console(width=width, file=io.StringIO(), color_system=None)
        console.print(FittedTable(cols))
        return console.file.getvalue()

    assert "123456789" in draw(80) and "three" in draw(80)
    narrow = draw(48)
    assert "123456789" in narrow and "words" not in narrow.splitlines()[1] and "left out at this width: words" in narrow
    narrowest = draw(36)
    assert "123456789" not in narrowest and "left out at this width: n, words" in " ".join(narrowest.split())
