"""`tritonscope run --interpret` on the CPU, and `bench` without a GPU (CI)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tritonscope.cli import app
from tritonscope.core.errors import ExitCode

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, list(args))


@pytest.mark.parametrize("args", [
    ["matmul"],
    ["matmul_grouped", "--shape", "64x64x64", "-c", "BLOCK_M=32", "-c", "BLOCK_N=32", "-c", "BLOCK_K=32"],
    ["vector_add", "--shape", "5000"],
    ["softmax", "--shape", "64x300", "-c", "BLOCK=512"],
])
@pytest.mark.needs("torch")
def test_run_interpret_passes(args):
    result = invoke("run", *args, "--interpret", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["passed"] and data["mode"] == "interpreter"
    (check,) = data["checks"]
    assert check["unwritten"] == 0 and check["rel_error"] <= check["tolerance"]


@pytest.mark.needs("torch")
def test_run_interpret_table_reports_max_error():
    result = invoke("run", "matmul", "--interpret")
    assert result.exit_code == 0, result.output
    assert "CPU (Triton interpreter)" in result.output and "max abs error" in result.output
    assert "pass" in result.output


@pytest.mark.needs("torch")
def test_run_interpret_catches_a_wrong_kernel(tmp_path):
    # a kernel that writes only half of its output: the poisoned half fails the check
    src = tmp_path / "half.py"
    src.write_text(
        "import triton\nimport triton.language as tl\n\n"
        "@triton.jit\ndef k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n // 2)\n\n"
        "def launch(shape, dtype, c):\n"
        "    (n,) = shape\n"
        "    return {'args': {'x_ptr': f'{dtype}[{n}]', 'out_ptr': f'{dtype}[{n}]', 'n': n},\n"
        "            'grid': (triton.cdiv(n, c['BLOCK']),), 'check': {'out_ptr': lambda x_ptr: x_ptr}}\n\n"
        "EXAMPLES = {'k': {'shape': (256,), 'dtype': 'fp32', 'constexprs': {'BLOCK': 64}, 'launch': launch}}\n")
    result = invoke("run", f"{src}:k", "--interpret", "--json")
    assert result.exit_code == ExitCode.WRONG_RESULT, result.output  # 12, never 1 (a bug)
    (check,) = json.loads(result.stdout)["checks"]  # the error goes to stderr, after the JSON
    assert check["unwritten"] == 128 and not check["passed"]
    assert "error: k: 1 of 1 output did not match torch: out_ptr." in result.stderr


@pytest.mark.needs("torch")
def test_run_without_a_check_is_no_result_not_a_pass(tmp_path):
    """A launch that declares no check: nothing was compared, so exit 13 (no result), never 0 and never 1."""
    src = tmp_path / "nocheck.py"
    src.write_text(
        "import triton\nimport triton.language as tl\n\n"
        "@triton.jit\ndef k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n\n"
        "def launch(shape, dtype, c):\n"
        "    (n,) = shape\n"
        "    return {'args': {'x_ptr': f'{dtype}[{n}]', 'out_ptr': f'{dtype}[{n}]', 'n': n},\n"
        "            'grid': (triton.cdiv(n, c['BLOCK']),)}\n\n"
        "EXAMPLES = {'k': {'shape': (64,), 'dtype': 'fp32', 'constexprs': {'BLOCK': 64}, 'launch': launch}}\n")
    result = invoke("run", f"{src}:k", "--interpret")
    assert result.exit_code == ExitCode.NO_RESULT, result.output
    assert "declares no check, so nothing was compared" in result.output
    assert "error: k: the launch declares no check" in " ".join(result.output.split())


def _row(label, status, shape=(64, 64, 64)):
    from tritonscope.measure.bench import BenchRow

    return BenchRow(label, shape, "fp16", {}, 4, 3, status)


def test_bench_outcome_codes():
    """bench's exit: 0 with rows that fit or not, 12 for a wrong result (first), 13 for a failed or impossible row."""
    from tritonscope.commands.bench import bench_outcome
    from tritonscope.core.errors import NoResultError, WrongResultError

    assert bench_outcome([_row("A", "ok"), _row("B", "out of resources")]) is None
    wrong = bench_outcome([_row("A", "ok"), _row("B", "wrong"), _row("C", "failed")])
    assert isinstance(wrong, WrongResultError) and wrong.exit_code == ExitCode.WRONG_RESULT == 12
    assert wrong.message == "1 of 3 configs computed a wrong result: B."
    none = bench_outcome([_row("A", "failed"), _row("B", "measurement error", (8,)), _row("C", "ok")])
    assert isinstance(none, NoResultError) and none.exit_code == ExitCode.NO_RESULT == 13
    assert none.message == ("Of 3 configs, 1 failed (A 64x64x64) and 1 gave a figure that cannot be true (B 8).")


@pytest.mark.needs("torch")
def test_run_interpret_notes_tf32_for_fp32_dots():
    result = invoke("run", "matmul_masked", "--interpret", "--shape", "64x64x64", "--block", "32", "--json")
    assert result.exit_code == 0, result.output
    assert "TF32" in json.loads(result.output)["tf32_note"]


@pytest.mark.needs("torch")
def test_bench_without_gpu_exits_9(monkeypatch):
    from tritonscope.measure import runner as r

    monkeypatch.setattr(r, "gpu_available", lambda: False)
    result = invoke("bench", "matmul_grouped", "--shape", "4096x4096x4096")
    assert result.exit_code == 9
    assert "needs a CUDA GPU" in result.output and "--interpret" in result.output


def test_run_without_gpu_exits_9(monkeypatch):
    from tritonscope.measure import runner as r

    monkeypatch.setattr(r, "gpu_available", lambda: False)
    result = invoke("run", "matmul")
    assert result.exit_code == 9 and "--interpret" in result.output


def test_tolerances_and_peaks():
    from tritonscope.measure.bench import peak_kind, peaks_for
    from tritonscope.measure.runner import uses_tf32

    assert peaks_for("NVIDIA H200")[0] == "H200"
    assert peaks_for("NVIDIA H100 80GB HBM3") == ("H100 SXM", {"fp16": 989.4, "bf16": 989.4, "tf32": 494.7,
                                                             "fp8": 1978.9, "fp32": 66.9, "gbs": 3350})
    assert peaks_for("NVIDIA H100 PCIe")[0] == "H100 PCIe" and peaks_for("NVIDIA H100 NVL")[0] == "H100 NVL"
    assert peaks_for("NVIDIA A100-SXM4-80GB")[0] == "A100"
    assert peaks_for("Tesla T4") == (None, None) and peaks_for("NVIDIA A10") == (None, None)  # no peaks in the table
    assert peak_kind("fp32", True) == "tf32" and peak_kind("fp32", False) == "fp32"
    assert uses_tf32("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {...}")
    assert not uses_tf32("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {...}")


def test_bench_table_names_what_sets_each_row_apart():
    """The shared config is printed once; each row shows only what differs (rows stay narrow)."""
    import io

    from rich.console import Console

    from tritonscope.measure.bench import BenchReport, BenchRow, Timing
    from tritonscope.outputs.render.bench_view import bench_view

    label = "BLOCK_M=128 BLOCK_N=256 BLOCK_K=64 GROUP_M=8 w8 s3 sm_90a fp16"
    rows = [BenchRow(label=label, shape=shape, dtype="fp16", constexprs={}, num_warps=8, num_stages=3, status="ok",
                     kernel=Timing(1.0, 600.0, None)) for shape in ((4096, 4096, 4096), (8192, 8192, 8192))]
    rows.append(BenchRow(label=label.replace("BLOCK_N=256", "BLOCK_N=128"), shape=(4096, 4096, 4096), dtype="fp16",
                         constexprs={}, num_warps=8, num_stages=3, status="out of resources", problem="needs more"))
    out = io.StringIO()
    Console(file=out, width=150, color_system=None).print(bench_view(BenchReport("H200", "sm_90a", {}, rows)))
    text = out.getvalue()
    assert "config: BLOCK_M=128 BLOCK_K=64 GROUP_M=8 w8 s3" in text
    assert "BLOCK_N=256 " in text and "BLOCK_N=128 " in text
    assert "BLOCK_M=128 BLOCK_N=256" not in text.split("config:")[1].split("\n", 1)[1]


@pytest.mark.parametrize("chunk", [7, 1 << 24])
@pytest.mark.needs("torch")
def test_compare_chunked_on_the_outputs_device_matches_a_whole_float64_compare(monkeypatch, chunk):
    """The check reads the output chunk by chunk on its own device; its figures are those of one float64
    compare of the whole tensors, a transposed output and a NaN (an unwritten element) included."""
    import math

    import torch

    from tritonscope.measure import runner as rn

    monkeypatch.setattr(rn, "CHUNK", chunk)
    gen = torch.Generator().manual_seed(0)
    want = torch.randn(37, 29, generator=gen)
    got = (want + 1e-3 * torch.randn(37, 29, generator=gen)).half().T.contiguous().T   # a transposed layout
    res = rn.compare("c", got, want, 2e-3)
    g64, w64 = got.double(), want.double()
    assert math.isclose(res.max_abs_error, float((g64 - w64).abs().max()), rel_tol=1e-12)
    assert math.isclose(res.rel_error, float(torch.linalg.vector_norm(g64 - w64) / torch.linalg.vector_norm(w64)),
                        rel_tol=1e-9)
    assert res.passed and res.unwritten == 0 and res.dtype == "float16"
    got[3, 5] = float("nan")
    bad = rn.compare("c", got, want, 2e-3)
    assert bad.unwritten == 1 and not bad.passed and math.isnan(bad.rel_error) and math.isnan(bad.max_abs_error)
    far = rn.compare("c", want + 1.0, want, 2e-3)
    assert not far.passed and far.unwritten == 0 and math.isclose(far.max_abs_error, 1.0, rel_tol=1e-6)


def test_run_interpret_without_torch_says_so(monkeypatch):
    """Without PyTorch, `run --interpret` said "unexpected ModuleNotFoundError" (exit 1): one message, exit 9."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    result = invoke("run", "matmul", "--interpret")
    assert result.exit_code == ExitCode.NO_GPU, result.output
    assert "needs PyTorch" in result.output and "Traceback" not in result.output
