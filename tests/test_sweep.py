"""tritonscope sweep: grids, fits, failures as rows, cache, Ctrl-C, output files."""

from __future__ import annotations

import csv
import io
import json

import pytest
from typer.testing import CliRunner

from tritonscope.measure import sweep as sw
from tritonscope import triton_api
from tritonscope.cli import app
from tritonscope.inputs.kernels import Request
from tritonscope.pipeline.binding import build_spec

runner = CliRunner()


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """A private tritonscope cache so 'cached' rows come from this test only (workers inherit the env)."""
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path / "tscache"))
    return tmp_path


def test_seed002_block128_does_not_fit_sm90(fresh_cache):
    row = sw.compile_row(0, Request("matmul_masked", constexprs={"BLOCK_SIZE": "128"}, arch="sm_90"), "sm_90a")
    assert row.ok and row.fits is False
    assert (row.shared, row.shared_limit) == (393216, 232448)
    assert row.problems == ["needs 393216 bytes of shared memory per block; sm_90a (H100, H200) has 232448"]
    from rich.console import Console

    from tritonscope.outputs.render.diff_view import sweep_table

    result = sw.SweepResult("matmul_kernel", "matmul_masked", [row], 1, workers=1)
    console = Console(width=160, file=io.StringIO(), color_system=None)
    console.print(sweep_table(result, [row]))
    text = console.file.getvalue()
    assert "NO: shared 393216 B > 232448 B" in text


def test_grid_is_every_combination():
    base = Request("matmul", arch="sm_90a")
    reqs = sw.build_grid(base, constexprs={"BLOCK": ["16", "32"]}, num_warps=[2, 4], num_stages=[1, 2, 3],
                         arches=None, dtypes=None)
    assert len(reqs) == 12
    assert {(r.constexprs["BLOCK"], r.num_warps, r.num_stages) for r in reqs} == \
        {(b, w, s) for b in ("16", "32") for w in (2, 4) for s in (1, 2, 3)}


def test_autotune_configs_are_the_grid():
    loaded = build_spec(Request("matmul_autotuned", arch="sm_90a"), "sm_90a")
    auto = triton_api.autotune_configs(loaded.obj)
    assert auto and len(auto) == 4
    reqs = sw.build_grid(Request("matmul_autotuned", arch="sm_90a"), constexprs={}, num_warps=None,
                         num_stages=None, arches=None, dtypes=None, autotune=auto)
    assert [(r.constexprs["BLOCK_M"], r.num_warps, r.num_stages) for r in reqs] == \
        [("32", 2, 2), ("64", 4, 3), ("128", 4, 4), ("128", 8, 3)]
    row = sw.compile_row(0, reqs[0], "sm_90a")
    assert row.ok and row.config == "BLOCK_M=32 BLOCK_N=32 BLOCK_K=32 w2 s2 sm_90a fp16"


def test_cli_sweep_parallel_with_a_failing_config_then_cached(fresh_cache):
    out = fresh_cache / "rows.csv"
    args = ["sweep", "matmul", "-c", "BLOCK=16,3", "--num-warps", "2,4", "--arch", "sm_90", "--jobs", "2",
            "--width", "200", "--no-color"]
    r = runner.invoke(app, args + ["--save", str(out)])
    assert r.exit_code == 0, r.output
    assert "4/4 configs" in r.output and "2 failed" in r.output and "on 2 workers" in r.output
    assert "FAILED" in r.output
    rows = list(csv.DictReader(out.open()))
    assert [(x["BLOCK"], x["num_warps"], x["ok"]) for x in rows] == \
        [("16", "2", "True"), ("16", "4", "True"), ("3", "2", "False"), ("3", "4", "False")]
    assert "arange" in rows[2]["error"] or "power of 2" in rows[2]["error"]
    assert rows[0]["fits"] == "True" and int(rows[0]["shared_bytes"]) > 0
    # refuses to overwrite; the repeat is served from the cache (failures are retried)
    r = runner.invoke(app, args + ["--save", str(out)])
    assert r.exit_code == 8 and "--force" in r.output
    r = runner.invoke(app, args + ["--json", "--where", "fits", "--sort", "-num_warps"])
    data = json.loads(r.output)
    assert [(x["num_warps"], x["cached"]) for x in data["rows"]] == [(4, True), (2, True)]


def test_cli_ctrl_c_shows_what_finished_and_exits_130(fresh_cache, monkeypatch):
    """The command's Ctrl-C: the rows that finished, 'interrupted: ...' (no 'error:') and exit 130."""
    from tritonscope.core.errors import ExitCode

    real = sw.run_sweep

    def interrupted_after_first_row(requests, **kw):
        def stop(row):
            raise KeyboardInterrupt

        return real(requests, **{**kw, "on_row": stop, "jobs": 1, "use_cache": False})

    monkeypatch.setattr(sw, "run_sweep", interrupted_after_first_row)
    r = runner.invoke(app, ["sweep", "matmul", "-c", "BLOCK=16", "--num-warps", "2,4", "--arch", "sm_90",
                            "--width", "200", "--no-color"])
    assert r.exit_code == ExitCode.INTERRUPTED, r.output
    assert "interrupted: 1 of 2 configs finished (shown above)." in r.output
    assert "error:" not in r.output


def test_ctrl_c_stops_workers_and_keeps_what_finished(fresh_cache):
    reqs = [Request("matmul", constexprs={"BLOCK": "16"}, num_warps=w, num_stages=s, arch="sm_90a")
            for w in (1, 2, 4) for s in (1, 2)]
    seen = []

    def interrupt_after_first(row):
        seen.append(row)
        raise KeyboardInterrupt

    result = sw.run_sweep(reqs, default_arch="sm_90a", jobs=2, use_cache=False, on_row=interrupt_after_first)
    assert result.interrupted
    assert result.finished == 1 and result.requested == 6
    assert result.rows[0].ok


def test_workers_take_the_heaviest_configs_first(monkeypatch):
    """The pool is given the configs heaviest first (elements per thread x stages), so a long compile never
    starts last; the rows still come back in grid order."""
    small = Request("softmax", constexprs={"BLOCK": "1024"}, num_warps=32, num_stages=1, arch="sm_90a")
    big = Request("softmax", constexprs={"BLOCK": "16384"}, num_warps=1, num_stages=1, arch="sm_90a")
    tile = Request("matmul_grouped", constexprs={"BLOCK_M": "128", "BLOCK_N": "256", "BLOCK_K": "64", "GROUP_M": "8"},
                   num_warps=8, num_stages=4, arch="sm_90a")
    assert sw.compile_weight(big) > sw.compile_weight(small)
    assert sw.compile_weight(tile) == 128 * 256 * 64 / (32 * 8) * 4     # GROUP_M (8) is no block size
    submitted = []

    class Pool:
        def __init__(self, **kw):
            pass

        def submit(self, fn, i, req, arch):
            import concurrent.futures as cf

            submitted.append(i)
            fut = cf.Future()
            fut.set_result(sw.row_shell(i, req))
            return fut

        def shutdown(self, wait=True):
            pass

    monkeypatch.setattr(sw.run.cf, "ProcessPoolExecutor", Pool)
    result = sw.run_sweep([small, big, tile], default_arch="sm_90a", jobs=2, use_cache=False)
    assert submitted == [2, 1, 0]
    assert [r.index for r in result.rows] == [0, 1, 2]


def _row(i, **kw):
    base = dict(index=i, config=f"c{i}", constexprs={"BLOCK": 16 * (i + 1)}, num_warps=4, num_stages=3,
                arch="sm_90a", dtype="fp16", ok=True, fits=True, shared=1000 * (3 - i), registers=40 + i)
    base.update(kw)
    return sw.SweepRow(**base)


def test_where_and_sort():
    rows = [_row(0), _row(1, fits=False), _row(2, ok=False, fits=None, shared=None, error="boom")]
    assert [r.index for r in sw.filter_rows(rows, ["fits"])] == [0]
    assert [r.index for r in sw.filter_rows(rows, ["nofit"])] == [1]
    assert [r.index for r in sw.filter_rows(rows, ["failed"])] == [2]
    assert [r.index for r in sw.filter_rows(rows, ["shared<2500", "ok"])] == [1]
    assert [r.index for r in sw.filter_rows(rows, ["BLOCK>=32"])] == [1, 2]
    assert [r.index for r in sw.sort_rows(rows, "shared")] == [1, 0, 2]
    assert [r.index for r in sw.sort_rows(rows, "-registers")] == [2, 1, 0]
    with pytest.raises(Exception, match="Cannot read --where"):
        sw.filter_rows(rows, ["shared <<< 3"])
    with pytest.raises(Exception, match="Cannot sort"):
        sw.sort_rows(rows, "colour")
