"""capture --arch with no GPU on a torch.compile program: Inductor's kernels compiled for the target and recorded,
not run (issue 35)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
if importlib.util.find_spec("torch._inductor") is None:
    pytest.skip("needs torch with Inductor (torch._inductor), which this torch lacks", allow_module_level=True)

from typer.testing import CliRunner  # noqa: E402

from tritonscope.cli import app  # noqa: E402
from tritonscope.inputs import sources  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "tests" / "data" / "capture_cpu" / "compiled_program.py"
runner = CliRunner()
LIMIT_S = 120


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    out = tmp_path_factory.mktemp("capcompile") / "cap"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "TORCHINDUCTOR_CACHE_DIR": str(out.parent / "inductor-cache")}  # a fresh cache: Inductor compiles
    env.pop("CUDA_VISIBLE_DEVICES", None)
    try:
        result = subprocess.run([sys.executable, "-m", "tritonscope", "capture", "--arch", "sm_90a", "-o", str(out),
                                 "--", sys.executable, str(PROGRAM)], env=env, capture_output=True, text=True,
                                timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        pytest.skip(f"capture of a torch.compile program took over {LIMIT_S} s on this machine (Inductor's compile "
                    "on a slow or busy CPU)")
    assert result.returncode == 0, result.stderr[-3000:]
    return out, result


def test_inductor_kernels_are_compiled_and_recorded_not_run(capture):
    out, result = capture
    err = " ".join(result.stderr.split())
    assert "torch.compile graph compiled by Inductor for cuda" in err and "its outputs are not computed" in err
    assert "program: out (32, 64) on cuda:0" in result.stdout  # the compiled module returned (uncomputed) outputs
    entries = sources.open_source(out).entries
    assert entries and all(e.name.startswith("triton_") for e in entries), [e.name for e in entries]
    for e in entries:
        record = e.record
        assert e.arch == "sm_90a" and e.launches == 0
        assert "@triton.jit" in record["module_text"] and "triton_helpers" in record["module_text"]
        assert {"ttir", "ttgir", "ptx", "cubin"} <= set(e.files)
    r = runner.invoke(app, ["open", str(out), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["capture"]["gpuless"]["arch"] == "sm_90a" and len(doc["kernels"]) == len(entries)


def test_one_inductor_kernel_opens_with_its_registers(capture):
    out, _ = capture
    entry = sources.open_source(out).entries[0]
    r = runner.invoke(app, ["open", str(out), "-k", entry.key, "--stage", "none", "--width", "200"])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert entry.name in text and "sm_90a" in text and "registers" in text
    assert "Outputs not computed (captured with no GPU)" in text
