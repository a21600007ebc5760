"""`tritonscope capture --arch ARCH` on a machine with no GPU (issue 35).

tests/data/capture_cpu/program.py (a plain kernel on fresh tensors and on an unaligned view, an autotuned
kernel, and a heuristics kernel under an autotuner, on tensors made with device="cuda", .cuda() and .to("cuda"),
with the checks a GPU program makes) is captured once for sm_90a and once for gfx942 (module fixtures);
every test reads those two captures.  The device stand-in itself is checked in this process.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from typer.testing import CliRunner  # noqa: E402

from tritonscope.cli import app  # noqa: E402
from tritonscope.inputs import sources  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "tests" / "data" / "capture_cpu" / "program.py"
runner = CliRunner()
# what the program launches: name -> the number of kernels (specializations and autotune configs) it compiles
KERNELS = {"add_kernel": 2, "scale_kernel": 3, "row_sum_kernel": 2}


def _capture(out: Path, arch: str, program: Path = PROGRAM, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.pop("CUDA_VISIBLE_DEVICES", None)
    return subprocess.run([sys.executable, "-m", "tritonscope", "capture", "--arch", arch, *extra, "-o", str(out),
                           "--", sys.executable, str(program)], env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def captures(tmp_path_factory):
    made = {}
    for arch in ("sm_90a", "gfx942"):
        out = tmp_path_factory.mktemp("capcpu") / f"cap-{arch}"
        result = _capture(out, arch)
        assert result.returncode == 0, result.stderr[-3000:]
        made[arch] = (out, result)
    return made


def _launches(folder: Path) -> dict:
    merged = {}
    for part in folder.glob("launches-*.json"):
        merged.update(json.loads(part.read_text())["kernels"])
    return merged


def _tunings(folder: Path) -> list:
    return [t for part in folder.glob("autotune-*.json") for t in json.loads(part.read_text())["tunings"]]


@pytest.mark.parametrize("arch", ["sm_90a", "gfx942"])
def test_the_program_runs_and_every_launch_is_compiled_not_run(captures, arch):
    out, result = captures[arch]
    err = " ".join(result.stderr.split())
    assert err.index("NOT run: the kernels' outputs are not computed") < err.index("kernels recorded")
    assert "the kernels' outputs were not computed" in err.split("kernels recorded")[1]
    assert "program: sums[0] =" in result.stdout and "on cuda:0" in result.stdout  # its own checks passed
    info = json.loads((out / "capture.json").read_text())
    assert info["gpuless"]["arch"] == arch and info["gpuless"]["outputs_computed"] is False
    source = sources.open_source(out)
    names = sorted(e.name for e in source.entries)
    assert names == sorted(n for n, count in KERNELS.items() for _ in range(count))
    assert {e.arch for e in source.entries} == {arch}
    assert all(e.launches >= 1 for e in source.entries)


@pytest.mark.parametrize("arch", ["sm_90a", "gfx942"])
def test_specialization_follows_the_pointers_a_launch_would_see(captures, arch):
    """The view 2 floats into its storage is 8 bytes off 16: its kernel has no divisibility on x_ptr."""
    out, _ = captures[arch]
    source = sources.open_source(out)
    launches = _launches(out)
    adds = [e for e in source.entries if e.name == "add_kernel"]
    by_alignment = {}
    for e in adds:
        args = launches[e.key]["args"][0]
        by_alignment[args[0]["align16"]] = e
        assert launches[e.key]["grids"] == [[4]]
    aligned, unaligned = by_alignment[True], by_alignment[False]
    assert _launches(out)[unaligned.key]["args"][0][0]["storage_offset"] == 2
    assert "tt.divisibility=16" in aligned.record["attrs"]["x_ptr"]
    assert "tt.divisibility=16" not in unaligned.record["attrs"].get("x_ptr", [])
    assert "tt.divisibility=16" in unaligned.record["attrs"]["y_ptr"]


def test_autotune_compiles_every_config_and_times_none(captures):
    out, _ = captures["sm_90a"]
    tunings = {t["kernel"]: t for t in _tunings(out)}
    scale = tunings["scale_kernel"]
    assert scale["timed"] is False and scale["chosen_by"] == "predicted"
    assert [c["kwargs"]["BLOCK"] for c in scale["configs"]] == [256, 1024, 2048]
    assert all(c["ms"] is None and c["predicted_ms"] > 0 for c in scale["configs"])
    fastest = min(scale["configs"], key=lambda c: c["predicted_ms"])
    assert scale["best_config"]["kwargs"] == fastest["kwargs"]
    # the launch after tuning ran the chosen config: its kernel has the program's launches
    launches = _launches(out)
    source = sources.open_source(out)
    chosen = [e for e in source.entries if e.name == "scale_kernel"
              and e.record["constexprs"]["BLOCK"] == fastest["kwargs"]["BLOCK"]]
    assert len(chosen) == 1 and launches[chosen[0].key]["count"] == 1 + 2  # compiled once to predict, launched twice
    assert launches[chosen[0].key]["grids"] == [[65536 // fastest["kwargs"]["BLOCK"]]]
    # the heuristic ran on the real arguments: 1000 columns are no multiple of either block
    rows = [e for e in source.entries if e.name == "row_sum_kernel"]
    assert {e.record["constexprs"]["EVEN_N"] for e in rows} == {False}
    assert {e.record["constexprs"]["BLOCK_N"] for e in rows} == {64, 128}


def test_amd_autotune_picks_the_datasheet_only_prediction(captures):
    """Issue 36: AMDGCN loops are read, so a gfx942 capture's autotune configs are predicted on the MI300X, from
    datasheet figures only: the record says so (never a timing, never measured on an AMD GPU)."""
    out, _ = captures["gfx942"]
    tunings = _tunings(out)
    assert {t["kernel"] for t in tunings} == {"scale_kernel", "row_sum_kernel"}
    for t in tunings:
        assert t["timed"] is False and t["chosen_by"] == "predicted" and t["datasheet_only"] is True
        assert "datasheet only, not measured on any AMD GPU" in t["note"]
        assert all(c["ms"] is None and c["predicted_ms"] > 0 for c in t["configs"])
        fastest = min(t["configs"], key=lambda c: c["predicted_ms"])
        assert t["best_config"]["kwargs"] == fastest["kwargs"]


@pytest.mark.parametrize("arch", ["sm_90a", "gfx942"])
def test_open_lists_every_kernel_with_grid_and_arguments(captures, arch):
    out, _ = captures[arch]
    r = runner.invoke(app, ["open", str(out), "--width", "250"])
    assert r.exit_code == 0, r.output
    text = r.output
    assert "grid" in text and "args" in text
    assert "f32[4098], f32[4096], f32[4096], 4096" in text       # the aligned launch
    assert "f32[4096]+2 (unaligned), f32[4096], f32[4096], 4096" in text
    assert "f16[64,1000], f32[64], 1000, 1000" in text
    assert f"no GPU: compiled for {arch} and not run" in text
    assert "none timed" in text
    j = runner.invoke(app, ["open", str(out), "--json"])
    rows = json.loads(j.output)["kernels"]
    assert len(rows) == sum(KERNELS.values()) and all(r["grid"] for r in rows)
    assert json.loads(j.output)["capture"]["gpuless"]["arch"] == arch


@pytest.mark.parametrize("arch", ["sm_90a", "gfx942"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_recompile_each_kernel(captures, arch, name):
    out, _ = captures[arch]
    entry = next(e for e in sources.open_source(out).entries if e.name == name)
    r = runner.invoke(app, ["open", str(out), "-k", entry.key, "--recompile", "--stage", "none", "--json"])
    assert r.exit_code == 0, r.output
    artifact = json.loads(r.output)["artifact"]
    assert artifact["spec"]["kernel"] == name and artifact["spec"]["arch"] == arch
    assert artifact["spec"]["grid"] == _launches(out)[entry.key]["grids"][0]
    # recompiled for its own arch from the record, it is the kernel the GPU-less launch compiled
    assert artifact["kernel_hash"] == entry.key


def test_predict_each_kernel(captures):
    """explain --predict on each captured kernel, at its recorded grid.  row_sum_kernel's loop runs to n_cols, a
    scalar its first launch passed: the found kernel's spec carries the recorded value (1000, not i32), so the
    loop's trip count is known and explain predicts it as the capture itself did."""
    from tritonscope.inputs.capture import recorded_scalars

    out, _ = captures["sm_90a"]
    launches = _launches(out)
    for entry in sources.open_source(out).entries:
        r = runner.invoke(app, ["explain", str(out), "-k", entry.key, "--predict", "--width", "200"])
        assert r.exit_code == 0, r.output
        assert "predicted:" in r.output and " ms on H100" in r.output, (entry.name, r.output[-800:])
        assert "loop bounds are not known" not in r.output
        if entry.name == "row_sum_kernel":
            assert recorded_scalars(entry.record, launches[entry.key]) == {"n_cols": 1000, "stride": 1000}
            spec = sources.load_artifact(entry).spec
            assert spec.args["n_cols"] == 1000 and spec.args["stride"] == 1000 and spec.args["x_ptr"] == "*fp16"
    rows = next(t for t in _tunings(out) if t["kernel"] == "row_sum_kernel")
    assert rows["chosen_by"] == "predicted" and all(c["predicted_ms"] > 0 for c in rows["configs"])


def test_one_kernels_view_says_its_outputs_were_not_computed(captures):
    """open's single-kernel view (and its --json) says what the listing says: the kernel was compiled, not run."""
    out, _ = captures["sm_90a"]
    entry = next(e for e in sources.open_source(out).entries if e.name == "add_kernel")
    r = runner.invoke(app, ["open", str(out), "-k", entry.key, "--stage", "none", "--width", "200"])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "Outputs not computed (captured with no GPU): compiled for sm_90a and not run" in text
    r = runner.invoke(app, ["open", str(out), "-k", entry.key, "--stage", "none", "--json"])
    warnings = json.loads(r.output)["artifact"]["warnings"]
    assert any(w.startswith("Outputs not computed (captured with no GPU)") for w in warnings)
    # a capture made on a GPU ran its kernels: no such words
    gpu_capture = Path(__file__).parent / "data" / "capture"
    gpu_entry = sources.open_source(gpu_capture).entries[0]
    assert not any("not computed" in w for w in sources.load_artifact(gpu_entry).warnings)


def test_predict_on_amd_is_datasheet_only(captures):
    """explain --predict on a captured gfx942 kernel: a time on the MI300X, marked datasheet-only with its doubled
    expected error (issue 36)."""
    out, _ = captures["gfx942"]
    entry = next(e for e in sources.open_source(out).entries if e.name == "add_kernel")
    r = runner.invoke(app, ["explain", str(out), "-k", entry.key, "--predict", "--width", "200"])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert re.search(r"predicted: [\d.e-]+ ms on MI300X", text), text[-1500:]
    assert re.search(r"datasheet only, not measured on any AMD GPU; expected error doubled \(±\d+%\)", text)


def test_a_failing_program_is_told_the_outputs_were_not_computed(tmp_path):
    program = tmp_path / "fails.py"
    program.write_text("import torch\nx = torch.empty(4, device='cuda')\nassert x.is_cuda\nraise SystemExit(3)\n")
    result = _capture(tmp_path / "cap", "sm_90a", program)
    assert result.returncode == 14, result.stderr
    err = " ".join(result.stderr.split())
    assert "exited with status 3" in err and "kernels' outputs are not computed" in err and ".item()" in err


def test_bad_targets_are_refused_before_the_program_runs(tmp_path):
    r = runner.invoke(app, ["capture", "--gpu", "H100", "-o", str(tmp_path / "a"), "--", "true"])
    assert r.exit_code == 2 and "needs --arch" in r.output
    r = runner.invoke(app, ["capture", "--arch", "sm_13", "-o", str(tmp_path / "b"), "--", "true"])
    assert r.exit_code == 3 and "Unsupported arch" in r.output
    r = runner.invoke(app, ["capture", "--arch", "sm_90a", "--gpu", "MI300X", "-o", str(tmp_path / "c"), "--", "true"])
    assert r.exit_code == 2 and "no sm_90a GPU" in " ".join(r.output.split())
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists() and not (tmp_path / "c").exists()


def test_cuda_tensors_in_cpu_memory():
    """The stand-in device in this process: what a program asks of its cuda tensors, streams and devices."""
    from tritonscope._capture_boot import cuda_standin

    saved = cuda_standin.patch_torch_cuda(torch)
    try:
        with cuda_standin.make_mode():
            x = torch.arange(10, dtype=torch.float32, device="cuda")
            assert x.is_cuda and x.device == torch.device("cuda", 0) and x.get_device() == 0
            view = x[2:]
            assert view.is_cuda and view.data_ptr() == x.data_ptr() + 8 and x.data_ptr() % 16 == 0
            assert (x + 1).is_cuda and torch.empty_like(x).is_cuda and x.to(torch.float16).is_cuda
            assert float((x * 2).sum()) == 90.0  # torch's own code computes real values
            back = x.cpu()
            assert not back.is_cuda and back.data_ptr() != x.data_ptr() and x.is_cuda
            moved = torch.ones(3).to("cuda")
            assert moved.is_cuda and torch.ones(3).cuda().is_cuda and not torch.ones(3).is_cuda
            model = torch.nn.Linear(4, 4).cuda()
            assert model.weight.is_cuda and model(torch.ones(2, 4, device="cuda")).is_cuda
            assert torch.cuda.current_stream().cuda_stream == 0
            with torch.cuda.device(x.device):
                torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            end.record()
            assert end.elapsed_time(start) <= 0 <= start.elapsed_time(end)
    finally:
        for obj, name, value in reversed(saved):
            setattr(obj, name, value)
    assert not torch.zeros(1).is_cuda
