"""`tritonscope tune` on a real GPU: it times only the predicted short list, and --full compares it."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tritonscope.cli import app


@pytest.mark.gpu
def test_tune_times_the_short_list_and_compares_with_the_full_search():
    res = CliRunner().invoke(app, ["tune", "layer_norm", "-c", "BLOCK=256,1024,4096", "-w", "2,4,8",
                                   "--shape", "4096x8192", "--top", "2", "--full", "--json", "--jobs", "4"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    rows = data["rows"]
    assert len(rows) == 9 and data["predicted"] == 9
    short = [r for r in rows if r["shortlisted"]]
    ranked = sorted((r for r in rows if r["predicted_ms"] is not None), key=lambda r: r["predicted_ms"])
    assert {r["index"] for r in short} == {r["index"] for r in ranked[:2]}     # the predicted top 2, no others
    assert all(r["status"] == "ok" and r["measured_ms"] > 0 for r in rows)    # --full timed every config
    best = min(r["measured_ms"] for r in rows)
    assert data["full_best"]["measured_ms"] == best
    timed = [r for r in rows if r["tune_measured_ms"]]     # the short list, and what was timed early
    assert {r["index"] for r in short} <= {r["index"] for r in timed}
    assert {r["index"] for r in timed} == {r["index"] for r in short} | {r["index"] for r in rows if r["timed_early"]}
    assert data["pick"]["tune_measured_ms"] == min(r["tune_measured_ms"] for r in timed)
    assert data["ratio"] == pytest.approx(data["pick"]["measured_ms"] / best)   # the full search's own times
    # the short list was timed in turns: its time is the median of its rounds
    import statistics

    from tritonscope.measure.turns import ROUNDS
    assert all(len(r["tune_rounds_ms"]) == ROUNDS and r["tune_measured_ms"] == statistics.median(r["tune_rounds_ms"])
               for r in timed)
    # the checks are timed on both sides, so the share without them (an autotuner checks nothing) is known
    assert 0 < data["full_check_s"] < data["full_s"] and 0 < data["tune_check_s"] < data["tune_s"]
    assert data["time_fraction_unchecked"] == pytest.approx((data["tune_s"] - data["tune_check_s"])
                                                            / (data["full_s"] - data["full_check_s"]))
    ref = data["referee"]
    assert (ref is None) == (data["pick"]["index"] == data["full_best"]["index"])
    if ref:
        assert ref["ratio"] == pytest.approx(ref["pick_ms"] / ref["best_ms"])
    # the short list's launches loaded tune's GPU-less compiles (same cache key); the full search compiled cold
    assert data["launched"] == len(timed) >= 2 and data["launch_compiled"] == 0
    assert not any(r["tune_compiled_at_launch"] for r in timed)
    assert data["full_compiled_at_launch"] == 9
    assert 0 < data["tune_s"] and data["saved_s"] == pytest.approx(data["full_s"] - data["tune_s"])
    words = CliRunner().invoke(app, ["tune", "layer_norm", "-c", "BLOCK=1024,4096", "-w", "4,8", "--shape",
                                     "4096x8192", "--top", "1"])
    assert words.exit_code == 0, words.output
    assert "timed the predicted top 1" in words.output and "pick:" in words.output


def test_tune_refuses_bad_input_before_any_work():
    r = CliRunner().invoke(app, ["tune", "vector_add", "-c", "BLOCK=1024", "--gpu", "V100"])
    assert r.exit_code == 2 and "Unknown GPU 'V100'" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(app, ["tune", "tests/data/cost/prune_kernel.py:add_kernel", "--arg", "x_ptr=*fp32",
                                 "--arg", "y_ptr=*fp32", "--arg", "out_ptr=*fp32", "--arg", "n=4096", "-c",
                                 "BLOCK=1024"])
    assert r.exit_code == 2 and "has no launch grid" in r.output and "--grid" in r.output
    r = CliRunner().invoke(app, ["tune", "layer_norm", "--shape", "4096", "-c", "BLOCK=1024"])
    assert r.exit_code == 4 and "rejected this config" in r.output and "Traceback" not in r.output
