"""Issue 36, "AMD, honestly": the cost model reads AMDGCN loops, so an MI300X (gfx942) gets a predicted time
from datasheet figures only, marked so wherever it is shown (summary, --json, saved reports, explain, sweep's
pred column), with a doubled expected error.  No AMD GPU was ever measured: these tests check the marks and
that the AMDGCN reader gives the model the facts it reads (real gfx942 compiles, made GPU-less).

NVIDIA predictions are unchanged: test_cost.py and the measured rows (benchmarks/predict_vs_measured.py
--report) cover them; the last test here checks an sm_90a prediction carries no AMD mark.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tritonscope.cli import app
from tritonscope.cost.amdgcn import load_waits, read_amdgcn
from tritonscope.cost.model import calibration
from tritonscope.language import loops
from tritonscope.language.dialects.amdgcn import classify, cost_class

ROOT = Path(__file__).resolve().parents[1]
HAS_AMD = (Path(importlib.util.find_spec("triton").submodule_search_locations[0]) / "backends" / "amd").is_dir()
pytestmark = pytest.mark.skipif(not HAS_AMD, reason="this Triton wheel has no AMD backend")
runner = CliRunner()
MARK = re.compile(r"datasheet only, not measured on any AMD GPU; expected error doubled \(±(\d+)%\)")
GEMM = ["compile", "matmul_grouped", "--shape", "1024x1024x1024", "-c", "BLOCK_M=128", "-c", "BLOCK_N=128",
        "-c", "BLOCK_K=64", "-s", "2", "-w", "8", "--arch", "gfx942", "--predict", "--stage", "none"]


def _json(output: str) -> dict:
    """The report a --json run printed (the test runner mixes in what the compile wrote to stderr before it)."""
    return json.JSONDecoder().raw_decode(output[output.index('{\n "schema"'):])[0]


@pytest.fixture(scope="module")
def gemm():
    """A GEMM compiled for gfx942 and predicted: (--json's report, the terminal's words)."""
    j = runner.invoke(app, GEMM + ["--json"])
    assert j.exit_code == 0, j.output[-3000:]
    t = runner.invoke(app, GEMM + ["--width", "200", "--no-color"])
    assert t.exit_code == 0, t.output[-3000:]
    return _json(j.output), " ".join(t.output.replace("│", " ").split())


def test_summary_shows_a_datasheet_only_prediction_with_the_doubled_error(gemm):
    report, text = gemm
    p = report["prediction"]
    assert re.search(r"predicted [\d.e-]+ ms on MI300X", text), text[-2000:]
    m = MARK.search(text)
    assert m, text[-2000:]
    errs = calibration()["expected_error"]
    base = errs.get(p["regime"], errs.get("default"))
    assert p["expected_error"] == pytest.approx(2 * base)       # doubled: no constant measured on an AMD GPU
    assert int(m.group(1)) == round(p["expected_error"] * 100)


def test_json_carries_the_mark_and_the_amd_facts(gemm):
    report, _ = gemm
    p = report["prediction"]
    assert p["datasheet_only"] is True and p["gpu"] == "MI300X"
    assert MARK.match(p["calibration"]) and "AMD Instinct MI300X data sheet" in p["calibration"]
    assert p["predicted_ms"] > p["bound_ms"] > 0
    f = p["facts"]
    assert f["sms"] == 304 and f["dot_unit"] == "mfma" and f["programs"] == 64    # 8 x 8 tiles of 128x128
    assert f["bytes_per_program"] > 0            # amdg./amdgpu.buffer_load counted from the TTGIR
    assert any("no LDS bank conflicts counted" in n for n in p["notes"])


def test_amdgcn_reader_gives_the_loop_readers_main_loop(gemm):
    report, _ = gemm
    text = report["artifact"]["stages"]["amdgcn"]
    prog = read_amdgcn(text)
    main = prog.main()
    picked = loops.main_loop(loops.innermost_loops("amdgcn", text))
    assert main is not None and main.start == picked.first and main.end == picked.last
    assert main.counts["mma"] == picked.tally.tensor > 0
    assert main.ldgs == picked.tally.loads > 0
    # the K loop loads both tiles each iteration: 128x64 + 64x128 fp16 over 8 wavefronts of 64 lanes
    assert main.ldg_bytes * 64 * 8 == 2 * 128 * 64 * 2
    assert 1 <= main.waits <= main.ldgs
    # s_waitcnt is a wait, not work; s_barrier is the barrier the model's "sync" class counts
    assert "sync" in main.counts and "salu" in prog.counts


def _zoo(name: str, monkeypatch, *extra: str):
    """A zoo kernel compiled for gfx942 with its manifest's arguments and grid (skipped without its package)."""
    sys.path.insert(0, str(ROOT / "tests" / "zoo"))
    import manifest

    entry = next(e for e in manifest.ZOO if e["name"] == name)
    if importlib.util.find_spec(entry["target"].split(".")[0]) is None:
        pytest.skip("needs conch-triton-kernels (pip install -e '.[test]' brings it)")
    monkeypatch.chdir(ROOT)
    argv = ["compile", entry["target"], *shlex.split(manifest.args_for(entry, "gfx942")), "--grid", entry["grid"],
            "--arch", "gfx942", "--predict", "--stage", "none", *extra]
    r = runner.invoke(app, argv)
    assert r.exit_code == 0, r.output[-3000:]
    return r.output


def test_a_burst_of_loads_waits_one_latency(monkeypatch):
    """conch's w4a16 GEMM on gfx942: LLVM issues a burst of loads and then waits for them a vmcnt step at a
    time (vmcnt(23), vmcnt(21), ...).  The first step takes the memory latency; the loads the later steps wait
    for were in flight with it: a few load-use waits per iteration, not one per step."""
    report = _json(_zoo("conch_w4a16_gemm", monkeypatch, "--json"))
    assert report["prediction"]["datasheet_only"] is True and report["prediction"]["predicted_ms"] > 0
    text = report["artifact"]["stages"]["amdgcn"]
    main = read_amdgcn(text).main()
    lines = text.splitlines()[main.start:main.end + 1]
    steps = [ins for ins in map(classify, lines) if ins is not None and ins.cls == "async wait"
             and ins.facts.get("counters", {}).get("vmcnt") is not None]
    assert len(steps) >= 10 and main.ldgs >= 20
    assert 1 <= main.waits <= 3, main.waits
    # the reader's waits are load_waits of the body's own instructions
    body = [(ins, cost_class(ins.op, ins)) for ins in map(classify, lines[1:]) if ins is not None and ins.op]
    assert load_waits(body) == (main.ldgs, main.waits)


def test_zoo_kernel_on_gfx942_is_predicted_datasheet_only(monkeypatch):
    text = " ".join(_zoo("conch_rms_norm", monkeypatch, "--width", "200", "--no-color").replace("│", " ").split())
    assert re.search(r"predicted [\d.e-]+ ms on MI300X", text) and MARK.search(text), text[-2000:]


def test_explain_and_sweep_say_datasheet_only():
    r = runner.invoke(app, ["explain", "softmax", "--arch", "gfx942", "--predict", "--width", "200", "--no-color"])
    assert r.exit_code == 0, r.output[-2000:]
    text = " ".join(r.output.split())
    assert re.search(r"predicted: [\d.e-]+ ms on MI300X", text) and MARK.search(text), text[-2000:]
    sweep = ["sweep", "softmax", "--num-warps", "4,8", "--arch", "gfx942"]
    t = runner.invoke(app, sweep + ["--width", "120", "--no-color"])
    assert t.exit_code == 0, t.output[-2000:]
    assert "pred ms*" in t.output and "* pred ms: datasheet only, not measured on any AMD GPU" in t.output
    pick = next(ln for ln in t.output.splitlines() if ln.startswith("predicted on MI300X: pick"))
    said = " ".join(t.output[t.output.index(pick):].split())
    # the pick's error and the mark's are the same figure
    assert re.search(r"expected error ±(\d+)%\); datasheet only, not measured on any AMD GPU; expected error "
                     r"doubled \(±\1%\)", said), said
    j = runner.invoke(app, sweep + ["--json"])
    rows = json.loads(j.output)["rows"]
    assert rows and all(r["predicted_ms"] > 0 and r["prediction"]["datasheet_only"] is True for r in rows)


def test_an_nvidia_prediction_has_no_amd_mark():
    r = runner.invoke(app, ["compile", "vector_add", "--arch", "sm_90a", "--predict", "--stage", "none", "--json"])
    assert r.exit_code == 0, r.output[-2000:]
    p = _json(r.output)["prediction"]
    assert p["predicted_ms"] > 0 and "datasheet_only" not in p
    assert p["calibration"].startswith("calibrated on NVIDIA H100") and "AMD" not in p["calibration"]


def test_diff_predict_says_datasheet_only(tmp_path):
    saved = []
    for warps in ("4", "8"):
        path = tmp_path / f"softmax_w{warps}.json"
        r = runner.invoke(app, ["compile", "softmax", "-w", warps, "--arch", "gfx942", "--stage", "none",
                                "--save", str(path)])
        assert r.exit_code == 0, r.output[-2000:]
        saved.append(str(path))
    r = runner.invoke(app, ["diff", *saved, "--predict", "--width", "200", "--no-color"])
    assert r.exit_code == 0, r.output[-2000:]
    text = " ".join(r.output.replace("│", " ").split())
    assert "predicted time (ms, MI300X, datasheet only)" in text
    assert re.search(r"predicted [\d.]+x faster on MI300X.*; datasheet only, not measured on any AMD GPU "
                     r"\(expected error doubled\)", text), text[-2000:]
