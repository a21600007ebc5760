"""`sweep --scheduler`: configs as Dask tasks, on a local cluster started here (as CI runs it).

The tests that need a cluster skip when `distributed` is not installed (it is
in the `test` extra, so CI has it); the message for a missing `distributed`
and the checks done before any work are tested either way.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict

import pytest
from typer.testing import CliRunner

from tritonscope.measure import sweep as sw
from tritonscope.cli import app
from tritonscope.core.errors import ExitCode, UsageError
from tritonscope.inputs.kernels import Request

runner = CliRunner()

# The row fields that depend on the compile (not on where or when it ran).
VOLATILE = {"compile_seconds", "cached"}

KERNEL = """\
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3, mask=mask)
"""


def comparable(rows):
    return [{k: v for k, v in asdict(r).items() if k not in VOLATILE} for r in rows]


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path / "tscache"))
    return tmp_path


def test_configs_by_archs_on_a_local_cluster_give_the_local_rows_then_the_cache_answers(fresh_cache):
    """`--scheduler local`: a LocalCluster of 2 worker processes, reached by its tcp:// address."""
    pytest.importorskip("distributed")
    kernel = fresh_cache / "scale.py"
    kernel.write_text(KERNEL)
    args = ["sweep", f"{kernel}:scale_kernel", "-c", "BLOCK=64,3", "--arch", "sm_80,sm_90",
            "--arg", "x_ptr=*fp32", "--arg", "out_ptr=*fp32", "--arg", "n=4096", "--json"]
    r = runner.invoke(app, args + ["--scheduler", "local", "-j", "2"])
    assert r.exit_code == 0, r.output
    on_dask = json.loads(r.output)
    assert on_dask["workers"] == 2 and on_dask["finished"] == 4 and not on_dask["interrupted"]
    assert [(x["constexprs"]["BLOCK"], x["arch"], x["ok"], x["cached"]) for x in on_dask["rows"]] == \
        [(64, "sm_80", True, False), (64, "sm_90a", True, False), (3, "sm_80", False, False),
         (3, "sm_90a", False, False)]  # BLOCK=3 does not compile: a row with its error, the sweep goes on
    assert on_dask["rows"][2]["error_kind"] == "CompileError"

    here = json.loads(runner.invoke(app, args + ["-j", "1", "--no-cache"]).output)
    assert [{k: v for k, v in row.items() if k not in VOLATILE} for row in on_dask["rows"]] == \
        [{k: v for k, v in row.items() if k not in VOLATILE} for row in here["rows"]]

    # the rows that compiled are kept here (failures are retried): a repeat of them starts no cluster
    r = runner.invoke(app, [a if a != "BLOCK=64,3" else "BLOCK=64" for a in args] + ["--scheduler", "local"])
    again = json.loads(r.output)
    assert again["workers"] == 0 and [x["cached"] for x in again["rows"]] == [True, True]


def test_a_worker_without_the_file_compiles_the_copy_that_came_with_the_task(fresh_cache):
    kernel = fresh_cache / "scale.py"
    kernel.write_text(KERNEL)
    request = Request(f"{kernel}:scale_kernel", constexprs={"BLOCK": "64"},
                      args={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "4096"}, arch="sm_80")
    shipment = sw.dask._kernel_shipment(request.target)
    assert sw.dask._kernel_shipment("matmul") is None  # samples: every worker has its own
    here = sw.dask._dask_row(0, request, "sm_90a", shipment)
    moved = dict(shipment, path=str(fresh_cache / "elsewhere" / "scale.py"))  # what another machine sees
    there = sw.dask._dask_row(0, request, "sm_90a", moved)
    assert there.ok and comparable([there]) == comparable([here])
    kernel.write_text(KERNEL.replace("* 3", "* 5"))  # the worker's own file differs: the task's copy wins
    assert comparable([sw.dask._dask_row(0, request, "sm_90a", shipment)]) == comparable([here])


def test_without_distributed_the_message_says_what_to_install(monkeypatch, fresh_cache):
    monkeypatch.setitem(sys.modules, "distributed", None)  # `import distributed` now fails
    r = runner.invoke(app, ["sweep", "matmul", "-c", "BLOCK=16", "--scheduler", "tcp://127.0.0.1:8786"])
    assert r.exit_code == int(ExitCode.USAGE)
    assert "distributed" in r.output and "tritonscope[dask]" in r.output


def test_bad_addresses_and_other_versions_stop_before_any_compile(monkeypatch, fresh_cache):
    r = runner.invoke(app, ["sweep", "matmul", "-c", "BLOCK=16", "--scheduler", "my-cluster"])
    assert r.exit_code == int(ExitCode.USAGE) and "tcp://HOST:PORT" in r.output

    class Client:
        def __init__(self, versions):
            self.versions = versions

        def run(self, fn):
            return self.versions

    mine = sw.dask._versions()
    assert sw.dask._check_workers(Client({"tcp://a:1": mine, "tcp://b:1": mine})) == 2
    with pytest.raises(UsageError, match="other versions"):
        sw.dask._check_workers(Client({"tcp://a:1": mine, "tcp://b:1": dict(mine, triton="3.0.0")}))
    with pytest.raises(UsageError, match="no workers"):
        sw.dask._check_workers(Client({}))
