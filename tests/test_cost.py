"""The cost model: held-out figures recomputed from the checked-in H100 measurements, GPUs, bad input, the hook."""

from __future__ import annotations

import importlib.util
import json
import math
import statistics
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tritonscope.cli import app
from tritonscope.cost import find_gpu, predict_features, resolve_gpu
from tritonscope.core.errors import UsageError

from cost_rounds import load_bench

DATA = Path(__file__).parent / "data" / "cost"

# The held-out figures README "Predicted time" publishes on the first measurement (H100, Triton 3.6.0, 2026-11-26),
# with the eighth round's model (blocks whose warps move in step; constants refitted on TRAIN): a model change that
# does worse on any of them fails here.  (spearman, regret) per held-out group.
PUBLISHED = {
    "grouped-fp16-skinnyM": (0.92, 1.04), "grouped-fp16-1024": (0.93, 1.06), "persistent-fp16-1024": (0.89, 1.09),
    "grouped-tf32-2048": (0.86, 1.02), "softmax-8192": (0.68, 1.00), "layer_norm": (0.94, 1.03),
    "captured-scale": (0.69, 1.03),
}
# Groups measured after the third round's change (h100_measured_fresh.json), never fitted on.
FRESH = {"layer_norm-16384": (0.85, 1.00), "layer_norm-1024": (0.74, 1.07), "layer_norm-fp32": (0.92, 1.03)}
# Groups measured after the eighth round's change and refit (h100_measured_round8.json), never fitted on nor
# looked at while changing it: (spearman, regret, median error).
FRESH8 = {"layer_norm-bf16-12288": (0.87, 1.00, 0.21), "layer_norm-65536": (0.68, 1.05, 0.16),
          "softmax-fp16-32768": (0.92, 1.00, 0.10), "softmax-4096": (0.50, 1.01, 0.07),
          "grouped-fp16-rect": (0.88, 1.00, 0.11)}


@pytest.fixture(scope="module")
def bench():
    return load_bench()


@pytest.fixture(scope="module")
def measured():
    return json.loads((DATA / "h100_measured.json").read_text())


def test_measurements_cover_the_issue(measured, bench):
    timed = sum(len(bench.timed_rows(g)) for g in measured["groups"])
    assert timed >= 450 and len(measured["groups"]) >= 14
    assert set(bench.SPLIT["train"]).isdisjoint(bench.SPLIT["held_out"])
    assert {g["name"] for g in measured["groups"]} == set(bench.SPLIT["train"]) | set(bench.SPLIT["held_out"])
    assert measured["header"]["device"].startswith("NVIDIA H100")


def test_held_out_figures_do_not_regress(measured, bench):
    figs = bench.group_figures(measured)   # the checked-in calibration, the checked-in compiled facts
    for name, (rho, regret) in PUBLISHED.items():
        f = figs[name]
        assert f["spearman"] >= rho - 0.005, (name, f)
        assert f["regret"] <= regret + 0.005, (name, f)
    held = [figs[n] for n in bench.SPLIT["held_out"]]
    assert math.expm1(statistics.median(f["median_log_error"] for f in held)) <= 0.14


def test_fresh_groups_judge_the_change(bench):
    """The three layer-norm groups measured after the load-use waits term was added: their figures recomputed."""
    data = bench.load_measured(",".join(str(DATA / n) for n in ("h100_measured.json", "h100_measured_fresh.json")))
    fresh = {g["name"] for g in data["groups"]} - set(bench.SPLIT["train"]) - set(bench.SPLIT["held_out"])
    assert fresh == set(bench.SPLIT["fresh"]) == set(FRESH)
    figs = bench.group_figures(data)
    for name, (rho, regret) in FRESH.items():
        assert figs[name]["spearman"] >= rho - 0.005 and figs[name]["regret"] <= regret + 0.005, (name, figs[name])
        assert figs[name]["n"] >= 20


def test_held_out_figures_on_times_in_turns(bench):
    """Every group measured again, each config timed 5 times in turn (median): the model unchanged, the held-out
    figures the README gives, and the 1.11x miss is the model's (its two configs' rounds lie close together)."""
    data = json.loads((DATA / "h100_measured_rounds.json").read_text())
    assert data["rounds"] == 5 and len(data["groups"]) == 17
    figs = bench.group_figures(data)
    held = [figs[n] for n in bench.SPLIT["held_out"] + bench.SPLIT["fresh"]]
    spread = [f for f in held if f["spread"] >= 2]   # the ten held-out groups, the fresh three included
    assert round(statistics.mean(f["spearman"] for f in spread), 2) == 0.87
    assert round(min(f["spearman"] for f in spread), 2) == 0.72
    assert round(max(f["regret"] for f in held), 2) == 1.05      # the seventh round's model: 1.11x (layer norm)
    rows = {r["config"]: r for g in data["groups"] if g["name"] == "layer_norm-16384" for r in g["rows"]}
    for config, spread_max in (("BLOCK=16384 w16 s1 sm_90a fp16", 0.015), ("BLOCK=16384 w8 s1 sm_90a fp16", 0.014)):
        r = rows[config]["rounds_ms"]
        assert len(r) == 5 and max(r) / min(r) - 1 <= spread_max
    readme = " ".join((Path(__file__).parent.parent / "docs" / "accuracy.md").read_text().split())
    assert "`tests/data/cost/h100_measured_rounds.json`" in readme
    assert "On these times the ten held-out groups (the fresh three included) give mean Spearman 0.87 (worst 0.72), " \
        "median error 12%, worst regret 1.05x" in readme
    assert math.expm1(statistics.median(f["median_log_error"] for f in held)) == pytest.approx(0.12, abs=0.005)


def test_load_waits_from_real_sass():
    """ptxas interleaves a layer norm's loads with their uses at 8 warps (58 registers) and hoists them at 4
    (128 registers): the first pass waits four times against once (SASS of Triton 3.6.0, sm_90a, checked in)."""
    from tritonscope.cost.model import _loop_waits
    from tritonscope.cost.sass import read_sass

    got = {}
    for w in (4, 8):
        text = (DATA / "sass" / f"layer_norm_4096x8192_B8192_w{w}_sm90a_triton360.sass").read_text()
        got[w] = [(lp.ldgs, lp.waits) for lp in read_sass(text).innermost()]
    assert got[4][0] == (8, 1) and got[8][0] == (4, 4)
    assert [n for n, _ in got[4]] == [8, 8, 24] and [n for n, _ in got[8]] == [4, 4, 12]
    # a loop unrolled 4 times that runs 2 iterations runs its remainder: that code's waits per load
    lp = {"ldgs": 4, "waits": 4, "unroll": 4, "tail_ldgs": 3, "tail_waits": 2}
    assert _loop_waits(lp, 2) == pytest.approx(2 * 1 * 2 / 3) and _loop_waits(lp, 8) == 8
    assert _loop_waits({"ldgs": 0, "waits": 0}, 5) is None   # no LDG: unknown, the per-iteration latency stays


def test_model_never_reads_a_measured_time(measured):
    """The prediction of a row is the same with its measured time removed (it only sees compiled facts)."""
    gpu = find_gpu("H100")
    row = next(r for g in measured["groups"] for r in g["rows"] if r.get("features") and r.get("measured_ms"))
    assert "measured_ms" not in row["features"]
    assert predict_features(row["features"], gpu).predicted_ms > 0


def test_config_that_does_not_fit_is_never_ranked(measured):
    row = next(r for g in measured["groups"] for r in g["rows"] if r.get("features") and r.get("measured_ms"))
    p = predict_features(dict(row["features"], fits=False), find_gpu("H100"))
    assert not p.ok and "does not fit" in p.why


def test_gpus_have_sources_and_uncalibrated_ones_say_so(measured):
    for name in ("H100 SXM", "H100 PCIe", "H200", "A100", "B200", "MI300X"):
        g = find_gpu(name)
        assert g is not None and g.source and g.sms > 0
    row = next(r for g in measured["groups"] for r in g["rows"] if r.get("features") and r.get("measured_ms"))
    own = predict_features(row["features"], find_gpu("H100"))
    other = predict_features(row["features"], find_gpu("H200"))
    assert own.calibration.startswith("calibrated on NVIDIA H100") and "Triton 3.6.0" in own.calibration
    assert other.calibration.startswith("datasheet only") and other.expected_error == pytest.approx(
        2 * own.expected_error) if own.regime == other.regime else True
    wrong = predict_features(row["features"], find_gpu("A100"))  # compiled for sm_90a
    assert not wrong.ok and "sm_90a" in wrong.why


def test_unknown_gpu_is_one_line_exit_2():
    with pytest.raises(UsageError):
        resolve_gpu("V100", None)
    res = CliRunner().invoke(app, ["sweep", "vector_add", "--gpu", "V100", "--arch", "sm_90a"])
    assert res.exit_code == 2
    assert "Unknown GPU 'V100'" in res.output and "Traceback" not in res.output


def test_sweep_rows_carry_predictions():
    res = CliRunner().invoke(app, ["sweep", "vector_add", "-c", "BLOCK=256,4096", "--arch", "sm_90a", "--gpu",
                                   "H100", "--shape", "16777216", "--json", "--no-cache", "--jobs", "1"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    rows = data["rows"]
    assert all(r["predicted_ms"] > 0 and r["prediction"]["regime"] for r in rows)
    assert data["shortlist"]["pick"] in [r["index"] for r in rows]
    assert data["shortlist"]["gpu"] == "H100 SXM"
    best = min(rows, key=lambda r: r["predicted_ms"])
    assert data["shortlist"]["pick"] == best["index"]


def test_prune_hook_keeps_predicted_top_k():
    spec = importlib.util.spec_from_file_location("prune_kernel", DATA / "prune_kernel.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    import triton
    from triton import Config

    import tritonscope

    hook = tritonscope.prune_by_prediction(2, grid=lambda m: (triton.cdiv(m["n"], m["BLOCK"]),),
                                           kernel=mod.add_kernel, arch="sm_90a", gpu="H100")
    cfgs = [Config({"BLOCK": b}, num_warps=w) for b in (128, 4096) for w in (1, 4)]
    n = 1 << 24
    kept = hook(cfgs, {"x_ptr": f"fp32[{n}]", "y_ptr": f"fp32[{n}]", "out_ptr": f"fp32[{n}]", "n": n})
    ranked = sorted((x for x in hook.last if "predicted_ms" in x), key=lambda x: x["predicted_ms"])
    # the top 2 (four distinct kernels here), and a third only when predicted within TIE of the second
    from tritonscope.cost.autotune import TIE

    assert len({x["sass_digest"] for x in ranked}) == 4
    tie = [x for x in ranked[2:3] if x["predicted_ms"] <= (1 + TIE) * ranked[1]["predicted_ms"]]
    assert [str(c) for c in kept] == [x["config"] for x in ranked[:2] + tie]
    assert {x["config"] for x in hook.last if x.get("kept")} == {str(c) for c in kept}


def test_prune_hook_sees_a_keyword_launch_and_serves_triton_s_perf_model_slot():
    """Libraries launch by keyword: Triton's own Autotuner.prune_configs hands the hook the arguments in
    **kwargs (nargs empty); the perf_model slot gets **nargs, **kwargs, **config.all_kwargs() per config."""
    spec = importlib.util.spec_from_file_location("prune_kernel_kw", DATA / "prune_kernel.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    import triton
    from triton import Config
    from triton.runtime.autotuner import Autotuner

    import tritonscope

    grid = lambda m: (triton.cdiv(m["n"], m["BLOCK"]),)  # noqa: E731
    cfgs = [Config({"BLOCK": b}, num_warps=w) for b in (128, 4096) for w in (1, 4)]
    n = 1 << 24
    launch = {"x_ptr": f"fp32[{n}]", "y_ptr": f"fp32[{n}]", "out_ptr": f"fp32[{n}]", "n": n}
    hook = tritonscope.prune_by_prediction(2, grid=grid, kernel=mod.add_kernel, arch="sm_90a", gpu="H100")
    kept = hook(cfgs, {}, **launch)  # a keyword launch: nothing in nargs
    assert 2 <= len(kept) <= 3 and all("predicted_ms" in row for row in hook.last), hook.last
    model = tritonscope.predicted_time(grid=grid, kernel=mod.add_kernel, arch="sm_90a", gpu="H100")
    tuner = Autotuner(mod.add_kernel, mod.add_kernel.arg_names, cfgs, key=["n"], reset_to_zero=None,
                      restore_value=None, prune_configs_by={"perf_model": model, "top_k": 2})
    tuner.nargs = {}
    by_model = tuner.prune_configs(dict(launch))  # Triton's own pruning calls the model once per config
    times = {str(c): model(**launch, **c.all_kwargs()) for c in cfgs}
    assert [str(c) for c in by_model] == sorted(times, key=times.get)[:2]
    assert {str(c) for c in by_model} == {str(c) for c in kept[:2]}   # the hook's top 2 (and any tie after them)


def test_tune_short_list_launches_find_the_gpu_less_compiles(monkeypatch):
    """tune's accounting, GPU-less: the short list is launched on the Triton cache its GPU-less compile filled
    (every config's kernel is there to load), the full search on a fresh, empty one; the pick's ratio uses the
    full search's own times and tune's time is its compile + predictions + short-list launches."""
    from tritonscope.measure import tune as tune_mod
    from tritonscope.inputs.kernels import Request
    from tritonscope.measure.turns import kernels_in

    seen = []

    def fake_time(requests, indices, arch, cache, warmup, rep, rounds=1):
        seen.append((list(indices), len(kernels_in(cache)), rounds))
        return {i: {"status": "ok", "measured_ms": 1.0 + 0.1 * i + (0.5 if len(seen) == 1 else 0), "measure_s": 2.0,
                    "check_s": 0.5, "new_kernels": [f"K{i}"] if len(seen) == 2 else []} for i in indices}

    monkeypatch.setattr(tune_mod, "time_configs", fake_time)
    reqs = [Request("vector_add", constexprs={"BLOCK": str(b)}, num_warps=4, num_stages=1, shape="16777216",
                    dtype="fp32", arch="sm_90a") for b in (256, 1024, 4096)]
    res = tune_mod.tune(reqs, arch="sm_90a", gpu="H100", top=1, full=True, jobs=1)
    (short, in_tune_cache, short_rounds), (every, in_full_cache, full_rounds), *referee = seen
    assert len(short) >= 1 and in_tune_cache == 3       # tune's cache holds all three GPU-less compiles
    assert every == [0, 1, 2] and in_full_cache == 0     # the full search starts cold
    assert short_rounds == tune_mod.ROUNDS and full_rounds == 1   # the short list in turns, the search once each
    assert res["timed_early"] == 0 and res["overlap_s"] == 0.0    # one worker: nothing runs beside the timing
    pick = res["pick"]
    if pick["index"] == 0:   # the pick is the full search's best: nothing to time again
        assert referee == [] and res["referee"] is None
    else:                    # else both are timed again, in turn, in one process: neither time counts it
        assert referee == [([pick["index"], 0], 0, tune_mod.ROUNDS)]
        assert res["referee"]["ratio"] == pytest.approx((1.0 + 0.1 * pick["index"]) / 1.0)
    assert pick["tune_measured_ms"] == pytest.approx(1.5 + 0.1 * pick["index"])
    assert res["ratio"] == pytest.approx((1.0 + 0.1 * pick["index"]) / 1.0)   # full search's times, both sides
    assert res["launch_compiled"] == 0 and res["full_compiled_at_launch"] == 3
    assert res["tune_s"] == pytest.approx(res["compile_s"] + res["predict_s"] + 2.0 * len(short))
    assert res["full_s"] == pytest.approx(6.0) and res["time_fraction"] == pytest.approx(res["tune_s"] / 6.0)
    # the share an autotuner that checks nothing would see: both sides' checks taken off
    assert res["full_check_s"] == pytest.approx(1.5) and res["tune_check_s"] == pytest.approx(0.5 * len(short))
    assert res["time_fraction_unchecked"] == pytest.approx((res["tune_s"] - 0.5 * len(short)) / 4.5)


def test_tune_times_the_short_list_while_the_last_compiles_finish(monkeypatch):
    """With several workers, once every config has started and at most a quarter of the workers are busy, the
    short list of the rows compiled so far is timed (inside the sweep's wall time, `overlap_s`); the final
    short list's configs not timed then are timed after; the pick is the fastest of all timed.  A launch that
    adds a kernel no sweep row made compiled at launch (counted)."""
    from tritonscope.measure import tune as tune_mod
    from tritonscope.inputs.kernels import Request

    seen = []

    def fake_time(requests, indices, arch, cache, warmup, rep, rounds=1):
        seen.append(list(indices))
        return {i: {"status": "ok", "measured_ms": 1.0 + 0.1 * i, "measure_s": 0.25, "check_s": 0.0,
                    "new_kernels": ["NOT-A-SWEEP-KERNEL"] if i == 2 else []} for i in indices}

    monkeypatch.setattr(tune_mod, "time_configs", fake_time)
    reqs = [Request("vector_add", constexprs={"BLOCK": str(b)}, num_warps=w, num_stages=1, shape="16777216",
                    dtype="fp32", arch="sm_90a") for b in (256, 1024, 4096) for w in (4, 8)]
    res = tune_mod.tune(reqs, arch="sm_90a", gpu="H100", top=2, full=False, jobs=4)
    early, *late = seen
    assert res["workers"] == 4 and res["timed_early"] == len(early) == 2   # the top 2 of the 5 compiled first
    assert res["overlap_s"] > 0 and len(late) <= 1
    timed = set(early) | set(late[0] if late else [])
    final = {x["index"] for x in res["rows"] if x["shortlisted"]}
    assert final <= timed and res["launched"] == len(timed)
    assert {x["index"] for x in res["rows"] if x["timed_early"]} == set(early)
    assert res["timed_early_not_short"] == len(set(early) - final)
    assert res["pick"]["index"] == min(timed)                             # the fastest of everything timed
    assert res["launch_compiled"] == (1 if 2 in timed else 0)
    assert res["tune_s"] == pytest.approx(res["compile_s"] + res["predict_s"] + 0.25 * len(late[0] if late else []))


TUNE_RUNS = {"h100_tune_overlap.json": "checks on the GPU, timing beside the compile",
             "h100_tune_overlap_rerun.json": "the same again",
             "h100_tune_pruned.json": "and disassembling only what could rank",
             "h100_tune_pruned_rerun.json": "the same again",
             "h100_tune_round8.json": "the eighth round's model (in step)"}
PRUNED_RUNS = {"h100_tune_pruned.json", "h100_tune_pruned_rerun.json", "h100_tune_round8.json"}


@pytest.mark.parametrize("name", list(TUNE_RUNS))
def test_checked_in_tune_runs_are_what_the_readme_says(name):
    """The README's tune figures are these runs' own: 10 groups, picks against the full search's best (by the
    full search's own times), the short list timed in turns, both times, and the share without the checks."""
    data = json.loads((DATA / name).read_text())
    groups = data["groups"]
    assert len(groups) == 10 and data["top"] == 5 and data["header"]["device"].startswith("NVIDIA H100")
    for g in groups:
        timed = [r for r in g["rows"] if r.get("status") == "ok" and r.get("measured_ms")]
        best = min(timed, key=lambda r: r["measured_ms"])
        pick = next(r for r in g["rows"] if r["index"] == g["pick"]["index"])
        assert g["ratio"] == pytest.approx(pick["measured_ms"] / best["measured_ms"])
        assert all(len(r["tune_rounds_ms"]) == 5 for r in g["rows"] if r["tune_status"] == "ok")
        assert g["launch_compiled"] == 0
        # the pick is the fastest of everything tune timed; the final short list was all timed
        tuned = [r for r in g["rows"] if r.get("tune_measured_ms")]
        assert pick["tune_measured_ms"] == min(r["tune_measured_ms"] for r in tuned)
        assert {r["index"] for r in g["rows"] if r["shortlisted"]} <= {r["index"] for r in tuned}
        if name in PRUNED_RUNS:   # a pruned config has a bound and no prediction, and never made the short list
            pruned = [r for r in g["rows"] if r.get("bound_ms") is not None]
            assert len(pruned) == g["pruned"] and not any(r["predicted_ms"] or r["shortlisted"] for r in pruned)
    within = sum(1 for g in groups if g["ratio"] <= 1.05)
    tune_s, full_s = sum(g["tune_s"] for g in groups), sum(g["full_s"] for g in groups)
    unchecked = (tune_s - sum(g["tune_check_s"] for g in groups)) / (full_s - sum(g["full_check_s"] for g in groups))
    share = f"**{tune_s / full_s:.0%}**" if name in PRUNED_RUNS else f"{tune_s / full_s:.0%}"
    row = (f"| {TUNE_RUNS[name]} (`{name}`{', the table' if name == 'h100_tune_pruned.json' else ''}) | "
           f"{within} of 10 (")
    readme = (Path(__file__).parent.parent / "docs" / "accuracy.md").read_text()
    line = next(ln for ln in readme.splitlines() if ln.startswith(row))
    assert line.endswith(f"| {tune_s:.0f} s | {full_s:.0f} s | {share} | {unchecked:.0%} |"), line
    if name in PRUNED_RUNS:
        assert within == 10 and tune_s / full_s < 0.25


def test_readme_tune_table_is_the_pruned_run():
    """The README's per-group tune table: the pruned run's groups, disassembled counts, picks and times."""
    data = json.loads((DATA / "h100_tune_pruned.json").read_text())
    readme = (Path(__file__).parent.parent / "docs" / "accuracy.md").read_text()
    for g in data["groups"]:
        again = f"{g['referee']['ratio']:.3f}x" if g.get("referee") else "(the same config)"
        cells = (f"| {g['configs']} | {g['fit'] - g['pruned']} of {g['fit']} | {g['ratio']:.3f}x | {again} | "
                 f"{g['tune_s']:.1f} s | {g['full_s']:.1f} s | {g['tune_s'] / g['full_s']:.0%} |")
        assert cells in readme, (g["name"], cells)
    total = sum(g["fit"] - g["pruned"] for g in data["groups"]), sum(g["fit"] for g in data["groups"])
    assert f"| **all** | 395 | {total[0]} of {total[1]} that fit |" in readme


def test_tune_words_say_one_pick_and_the_second_timing():
    """tune's text from a real run's result: one pick line (the median of its turns), the full search's verdict,
    the pick and the full search's best timed again, and the time; a run with no pick says so once."""
    from tritonscope.commands.tune import ROUNDS, tune_lines

    res = json.loads((DATA / "h100_tune_rounds.json").read_text())["groups"][3]   # grouped fp16 1024^3
    lines = tune_lines(res)
    picks = [ln for ln in lines if ln.startswith("pick:")]
    assert picks == [f"pick: {res['pick']['config']} ({res['pick']['tune_measured_ms']:.4g} ms, the median of "
                     f"{ROUNDS} timings in turn)"]
    assert any(ln.startswith("full search: best ") and "within 5%" in ln for ln in lines)
    assert any(ln.startswith("timed again, the two in turn 5 times") for ln in lines)
    assert lines[-1].startswith("time: tune ") and f"{res['time_fraction']:.0%} of it" in lines[-1]
    empty = dict(res, pick=None, full_best=None, ratio=None, referee=None, rows=[], full_s=0.0, time_fraction=None,
                 launch_compiled=0)
    lines = tune_lines(empty)
    assert [ln for ln in lines if ln.startswith("pick:")] == \
        ["pick: none (no config of the short list launched and passed its check)"]
    assert lines[-1].endswith("the full search timed nothing (no config fits)")


def test_tune_times_its_short_list_in_turns(monkeypatch):
    """GPU-less, with the launch and the timer stood in: every config is prepared (launched, checked) first, then
    timed ROUNDS times in turn, and keeps its median round, so one disturbed timing (9 ms here) decides nothing;
    configs of one launch share one set of inputs while they wait."""
    from tritonscope.inputs.kernels import Request
    from tritonscope.measure import bench, turns

    prepared, calls = [], []
    script = {"256": iter([1.0, 1.0, 9.0, 1.0, 1.0]), "1024": iter([1.1] * 5)}

    def prepare(loaded, artifact=None, seed=None, phases=None):
        phases["check_s"] = 0.25
        values = {"x_ptr": object()}
        prepared.append(values)
        return bench.BenchRow("c", None, None, dict(loaded.spec.constexprs), 4, 1, "ok"), values

    def timer(loaded, values, warmup, rep):
        calls.append((str(loaded.spec.constexprs["BLOCK"]), id(values), warmup, rep))
        return next(script[str(loaded.spec.constexprs["BLOCK"])])

    def finish(row, loaded, ms, torch_ms=None):
        row.kernel = bench.Timing(ms, None, None)
        return row

    monkeypatch.setattr(bench, "prepare_loaded", prepare)
    monkeypatch.setattr(bench, "time_prepared", timer)
    monkeypatch.setattr(bench, "finish_row", finish)
    reqs = [Request("vector_add", constexprs={"BLOCK": str(b)}, num_warps=4, num_stages=1, shape="16777216",
                    dtype="fp32", arch="sm_90a") for b in (256, 1024)]
    out = turns.time_configs(reqs, [0, 1], "sm_90a", "", warmup=10, rep=40, rounds=5)
    assert [c[0] for c in calls] == ["256", "1024"] * 5                  # in turn, not one config after the other
    assert [(c[2], c[3]) for c in calls[:2]] == [(10, 8)] * 2            # the first round warms up in full
    assert {(c[2], c[3]) for c in calls[2:]} == {(2, 8)}
    assert len({c[1] for c in calls}) == 1 and len(prepared) == 2        # one set of inputs for both
    assert out[0]["measured_ms"] == 1.0 and out[0]["rounds_ms"] == [1.0, 1.0, 9.0, 1.0, 1.0]
    assert out[1]["measured_ms"] == pytest.approx(1.1) and out[0]["status"] == out[1]["status"] == "ok"
    assert out[0]["check_s"] == out[1]["check_s"] == 0.25      # each check's seconds, kept apart


def test_checked_in_check_split_is_what_the_readme_says():
    """The previous round's CPU checks (three groups, h100_tune_checks.json): the share without them, as the
    README gives it; and this round's checks on the GPU cost next to nothing on either side."""
    groups = json.loads((DATA / "h100_tune_checks.json").read_text())["groups"]
    tune_s, full_s = sum(g["tune_s"] for g in groups), sum(g["full_s"] for g in groups)
    tune_c, full_c = sum(g["tune_check_s"] for g in groups), sum(g["full_check_s"] for g in groups)
    assert full_c / full_s > 0.4   # 64 of 144 s on the CPU
    readme = " ".join((Path(__file__).parent.parent / "docs" / "accuracy.md").read_text().split())
    assert f"({full_c:.0f} of {full_s:.0f} s of the full search on three groups)" in readme
    assert f"{(tune_s - tune_c) / (full_s - full_c):.0%} without the checks on three groups" in readme
    for name in ("h100_tune_pruned.json", "h100_tune_pruned_rerun.json"):
        g = json.loads((DATA / name).read_text())["groups"]
        assert sum(x["full_check_s"] for x in g) < 0.01 * sum(x["full_s"] for x in g)


def test_pruned_compile_gives_the_short_list_of_predicting_every_config():
    """tune's compile disassembles a config only while the model could still rank it (sweep.Pruning): the short
    list (and its widening) is the one predicting every config gives, each pruned config's lower bound is at
    most its prediction, and the resources every row reports are the same."""
    import math
    import multiprocessing

    from tritonscope.cost import find_gpu, widest_error
    from tritonscope.inputs.kernels import Request
    from tritonscope.measure import sweep as sw

    reqs = [Request("matmul_grouped", constexprs={"BLOCK_M": str(m), "BLOCK_N": str(n), "BLOCK_K": "64",
                                                  "GROUP_M": "8"}, num_warps=4, num_stages=st,
                    shape="4096x4096x4096", dtype="fp16", arch="sm_90a")
            for m in (64, 128) for n in (64, 128, 256) for st in (3, 4)]
    top, gpu = 3, find_gpu("H100 SXM")
    pruning, margin, predicted = sw.Pruning(gpu.name, multiprocessing.Value("d", math.inf)), widest_error(gpu), []

    def on_row(r):   # what tune's _Early does: the threshold follows the predictions so far
        if r.ok and r.fits and r.cost_features is not None:
            sw.attach_predictions([r], gpu.name, top=top)
            predicted.append(r.predicted_ms)
            pruning.threshold.value = sw.pruning_threshold(predicted, top, margin)

    pruned = sw.run_sweep(reqs, default_arch="sm_90a", jobs=2, use_cache=False, pruning=pruning, on_row=on_row)
    every = sw.run_sweep(reqs, default_arch="sm_90a", jobs=2, use_cache=False)
    a, b = (sw.attach_predictions(x.rows, gpu.name, top=top) for x in (pruned, every))
    assert a.bounded > 0 and a.predicted + a.bounded == b.predicted == len(reqs)
    assert (a.indexes, a.widened) == (b.indexes, b.widened)
    for ra, rb in zip(pruned.rows, every.rows):
        assert (ra.fits, ra.registers, ra.blocks_per_sm, ra.shared) == (rb.fits, rb.registers, rb.blocks_per_sm,
                                                                         rb.shared)
        if ra.bound_ms is not None:
            assert ra.predicted_ms is None and ra.bound_ms <= rb.predicted_ms
        else:
            assert ra.predicted_ms == pytest.approx(rb.predicted_ms, rel=1e-12)


@pytest.mark.parametrize("name", ["h100_measured.json", "h100_measured_fresh.json", "h100_measured_round7.json",
                                  "h100_measured_round8.json"])
def test_the_bound_is_at_most_the_prediction_on_every_measured_config(name):
    """cost.features.bound_facts: the SASS's side of a config's facts at its least gives a lower bound on the
    model's prediction, on every config measured on the H100 (the Pruning's threshold relies on it)."""
    from tritonscope.cost import find_gpu, predict_features
    from tritonscope.cost.features import bound_facts

    gpu = find_gpu("H100 SXM")
    n = 0
    for group in json.loads((DATA / name).read_text())["groups"]:
        for r in group["rows"]:
            f = r.get("features")
            if not (f and r["ok"] and r["fits"]):
                continue
            leaves = type("L", (), {"leaves": [0, 1] if len(f.get("sass_loops") or []) > 1 else [0]})
            bound = dict(f, spill_instructions=None, **bound_facts(leaves, bool(f.get("pipelined"))))
            p, lb = predict_features(f, gpu), predict_features(bound, gpu)
            assert lb.predicted_ms <= p.predicted_ms * (1 + 1e-12), (group["name"], r["config"])
            n += 1
    assert n > 50


def test_tune_stopped_by_ctrl_c_while_compiling_times_nothing(monkeypatch):
    """Ctrl-C during tune's compile: the sweep comes back interrupted, and tune stops there (exit 130) instead of
    timing a short list of the configs that happened to finish."""
    from tritonscope.measure import tune as tune_mod
    from tritonscope.core.errors import ExitCode, InterruptedRunError
    from tritonscope.inputs.kernels import Request
    from tritonscope.measure import sweep as sw

    real = sw.run_sweep

    def stopped(requests, **kw):
        res = real(requests[:1], **kw)
        res.requested, res.interrupted = len(requests), True
        return res

    monkeypatch.setattr(sw, "run_sweep", stopped)
    monkeypatch.setattr(tune_mod, "time_configs", lambda *a, **k: pytest.fail("nothing may be timed"))
    reqs = [Request("vector_add", constexprs={"BLOCK": str(b)}, num_warps=4, num_stages=1, shape="16777216",
                    dtype="fp32", arch="sm_90a") for b in (256, 1024)]
    with pytest.raises(InterruptedRunError) as e:
        tune_mod.tune(reqs, arch="sm_90a", gpu="H100", top=1, full=True, jobs=1)
    assert e.value.exit_code == ExitCode.INTERRUPTED and "1 of 2 configs compiled" in str(e.value)


def test_seventh_round_fresh_groups_publish_their_miss(bench):
    """Three groups measured in turns with the seventh round's model untouched (its 1.34x layer-norm miss stays in
    the README): their figures with the current model, as the README gives them beside the old ones (a model
    change that does worse on any of them fails here)."""
    data = json.loads((DATA / "h100_measured_round7.json").read_text())
    assert {g["name"] for g in data["groups"]} == set(bench.SPLIT["fresh7"]) and data["rounds"] == 5
    figs = bench.group_figures(data)
    published = {"grouped-fp16-longK": (0.92, 1.00), "layer_norm-32768": (0.80, 1.02), "softmax-fp16-2048": (0.92, 1.04)}
    readme = (Path(__file__).parent.parent / "docs" / "accuracy.md").read_text()
    for name, (rho, regret) in published.items():
        f = figs[name]
        assert f["spearman"] >= rho - 0.005 and f["regret"] <= regret + 0.005, (name, f)
        assert f"| {f['spearman']:.2f} | " + ("**" if f["regret"] > 1.10 else "") + f"{f['regret']:.2f}x" in readme


def test_eighth_round_fresh_groups_judge_the_in_step_change(bench):
    """Five groups measured after the in-step change and its refit on TRAIN, never looked at before: the issue's
    goals on them, and each group's figures as the README gives them."""
    data = json.loads((DATA / "h100_measured_round8.json").read_text())
    assert {g["name"] for g in data["groups"]} == set(bench.SPLIT["fresh8"]) == set(FRESH8) and data["rounds"] == 5
    assert data["header"]["device"].startswith("NVIDIA H100")
    figs = bench.group_figures(data)
    readme = " ".join((Path(__file__).parent.parent / "docs" / "accuracy.md").read_text().split())
    for name, (rho, regret, err) in FRESH8.items():
        f = figs[name]
        assert f["spearman"] >= rho - 0.005 and f["regret"] <= regret + 0.005, (name, f)
        assert math.expm1(f["median_log_error"]) <= err + 0.005, (name, f)
        assert f"| {f['n']} | {f['spread']:.1f}x | {f['spearman']:.2f} | {f['regret']:.2f}x |" in readme, name
    ranked = [f for f in figs.values() if f["spread"] >= 2]
    assert statistics.mean(f["spearman"] for f in ranked) >= 0.85 and min(f["spearman"] for f in ranked) >= 0.6
    assert max(f["regret"] for f in figs.values()) <= 1.10
    assert math.expm1(statistics.median(f["median_log_error"] for f in figs.values())) <= 0.25


def test_blocks_that_move_in_step_fix_the_wide_layer_norm_pick(bench, monkeypatch):
    """Layer norm 1024x32768: one block of 16 warps a SM (BLOCK=32768) waits and loads in turn, so the model picks
    two blocks a SM (BLOCK=16384, within 2% of the measured best); without the in-step term it picks the 1.34x one.
    Only barrier kernels without async copies move in step (not a GEMM, not vector_add, not one warp)."""
    from tritonscope.cost import model

    data = json.loads((DATA / "h100_measured_round7.json").read_text())
    group = next(g for g in data["groups"] if g["name"] == "layer_norm-32768")
    rows = bench.timed_rows(group)
    gpu = find_gpu("H100 SXM")

    def pick():
        pred = [predict_features(r["features"], gpu).predicted_ms for r in rows]
        return rows[pred.index(min(pred))]

    best = min(r["measured_ms"] for r in rows)
    assert pick()["config"].startswith("BLOCK=16384 ") and pick()["features"]["blocks_per_sm"] == 2
    assert pick()["measured_ms"] <= 1.02 * best
    one = next(r for r in rows if r["config"] == "BLOCK=32768 w16 s1 sm_90a fp16")
    p = predict_features(one["features"], gpu)
    assert p.facts["in_step"] and any("move in step" in n for n in p.notes)
    from tritonscope.outputs.render.summary_text import prediction_text

    assert "a block's warps move in step" in prediction_text(p.to_dict())
    monkeypatch.setattr(model, "moves_in_step", lambda f: False)
    assert pick()["config"] == "BLOCK=32768 w16 s1 sm_90a fp16" and pick()["measured_ms"] > 1.3 * best
    monkeypatch.undo()
    measured = json.loads((DATA / "h100_measured.json").read_text())
    for g in measured["groups"]:
        for r in bench.timed_rows(g)[:6]:
            f = r["features"]
            if g["name"].startswith(("grouped", "persistent", "vector_add")) or f["num_warps"] == 1:
                assert not model.moves_in_step(f), (g["name"], r["config"])
            elif g["name"].startswith(("layer_norm", "softmax")):
                assert model.moves_in_step(f), (g["name"], r["config"])
