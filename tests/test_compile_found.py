"""Issue 35: `compile --predict` on a kernel that already compiled (a capture, an Inductor folder), as `open` finds
it: the found kernel is analysed (recompiled with -w/-s/-c/--arch) and predicted at its recorded grid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tritonscope.cli import app

DATA = Path(__file__).parent / "data"
CAPTURE = DATA / "capture"
ADD = "01c9a1bcb1eb"   # add_kernel with its aligned inputs, as the GPU capture recorded it (grid 4, n 4096)


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_compile_predicts_a_captured_kernel_at_its_recorded_grid():
    r = invoke("compile", CAPTURE, "-k", ADD, "--predict", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["artifact"]["spec"]["kernel"] == "add_kernel" and data["artifact"]["spec"]["num_warps"] == 4
    pred = data["prediction"]
    assert pred["predicted_ms"] > 0 and pred["gpu"] == "H100 SXM"


def test_compile_recompiles_a_captured_kernel_with_the_command_lines_changes():
    r = invoke("compile", CAPTURE, "-k", ADD, "-w", "8", "--stage", "none", "--width", "120")
    assert r.exit_code == 0, r.output
    assert "num_warps=8" in r.output


@pytest.mark.needs("torch")
def test_compile_predicts_an_inductor_kernel():
    r = invoke("compile", DATA / "inductor" / "cache", "-k", "triton_poi_fused_add_mul_6", "--predict", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output[r.output.index("{"):])
    assert data["artifact"]["spec"]["constexprs"]["XBLOCK"] == 1024 and data["prediction"]["predicted_ms"] > 0


@pytest.mark.parametrize("args, words", [
    (["--passes"], "--passes: not for a kernel that already compiled"),
    (["--block", "16"], "--block describes a kernel to compile"),
    (["--config", "2"], "--config describes a kernel to compile"),
])
def test_what_describes_a_new_compile_is_refused_for_a_found_kernel(args, words):
    r = invoke("compile", CAPTURE, "-k", ADD, *args)
    assert r.exit_code == 2 and words in r.output, r.output


def test_kernel_option_on_a_kernel_to_compile_is_refused():
    r = invoke("compile", "matmul", "-k", "x")
    assert r.exit_code == 2 and "matmul is a kernel to compile" in r.output
