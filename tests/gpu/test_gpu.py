"""GPU tests: run on an H100/H200 with `pytest -m gpu tests/gpu -s`.

1. Launch fidelity: every sample is launched for real (real tensors, the real
   driver, a fresh Triton cache) and what Triton's JIT compiled must equal
   tritonscope's GPU-less compile for sm_90a, stage by stage, once file paths
   and debug locations are stripped.
2. bench: correct timings and figures.
3. The interpreter on the CPU and the hardware agree on the same inputs.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover - collected only with -m gpu
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

from fidelity import first_difference, normalize  # noqa: E402
from tritonscope.measure import runner  # noqa: E402
from tritonscope.pipeline.binding import build_spec  # noqa: E402
from tritonscope.inputs.kernels import Request, list_samples  # noqa: E402

ARCH = "sm_90a"
# Every sample at its default config; a few more configs that change the
# specialization (transposed operands, non-multiple-of-16 sizes, other tiles).
EXTRA = [
    ("matmul", {"block": 64, "shape": "256x256x256"}),
    ("matmul", {"block": 32, "shape": "96x96x96", "dtype": "fp32"}),
    ("matmul_masked", {"block": 32, "shape": "1000x1000x1000"}),
    ("matmul_transposed", {"constexprs": {"TRANS_A": "1", "TRANS_B": "1"}}),
    ("matmul_grouped", {"shape": "1000x1000x1000", "constexprs": {"BLOCK_M": "64", "BLOCK_N": "64"}}),
    ("vector_add", {"shape": "1000000", "dtype": "fp16"}),
    ("softmax", {"shape": "64x4096", "constexprs": {"BLOCK": "4096"}, "dtype": "bf16"}),
    # launch options, passed to the real launch as kernel[grid](..., maxnreg=..., num_ctas=..., enable_fp_fusion=...)
    ("vector_add", {"constexprs": {"BLOCK": "4096"}, "options": {"maxnreg": 32}}),
    ("matmul", {"block": 64, "shape": "256x256x256", "options": {"enable_fp_fusion": False}}),
    ("vector_add", {"options": {"num_ctas": 2}}),
]
CASES = [(s.name, {}) for s in list_samples()] + EXTRA

if not torch.cuda.get_device_capability(0) == (9, 0):  # pragma: no cover
    pytest.skip("the fidelity reference arch is sm_90a: run on an H100/H200", allow_module_level=True)


@pytest.mark.parametrize("target,kw", CASES, ids=[f"{t}-{i}" for i, (t, _) in enumerate(CASES)])
def test_launch_fidelity(target, kw, tmp_path, monkeypatch):
    from tritonscope.pipeline.triton_compile import compile_artifact

    # Fresh caches and always compile: neither side may reuse the other's output.
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "real"))
    loaded = build_spec(Request(target, arch=ARCH, **kw), ARCH)
    result, compiled = runner.run_on_gpu(loaded, seed=0)   # the real driver, real tensors
    assert compiled is not None and hasattr(compiled, "asm"), "the launch returned no CompiledKernel"

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "tritonscope"))
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path / "ts"))
    artifact = compile_artifact(loaded)                     # the stand-in driver, no GPU needed

    same = {}
    for stage in ("ttir", "ttgir", "llir", "ptx"):
        ours, real = normalize(stage, artifact.stages[stage]), normalize(stage, compiled.asm[stage])
        same[stage] = ours == real
    real_hash = compiled.hash if hasattr(compiled, "hash") else compiled.metadata.hash
    options = loaded.spec.launch_options()
    print(f"\nFIDELITY {target} [{loaded.spec.label()}{''.join(f' {k}={v}' for k, v in options.items())}] "
          f"shape={loaded.spec.shape}: "
          + " ".join(f"{k}={'same' if v else 'DIFFERENT'}" for k, v in same.items())
          + f" hash={'same' if real_hash == artifact.kernel_hash else 'different'}"
          + f" check={'pass' if result.passed else 'FAIL'} rel_err={result.checks[0].rel_error:.2e}"
          + (" tf32" if result.tf32 else ""))
    for stage, ok in same.items():
        assert ok, f"{stage} differs: " + first_difference(normalize(stage, artifact.stages[stage]),
                                                             normalize(stage, compiled.asm[stage]))
    assert real_hash == artifact.kernel_hash
    assert result.passed, result.checks
    for name, value in options.items():  # the real launch compiled with the option, and so did tritonscope
        assert compiled.metadata._asdict()[name] == value == artifact.metadata[name], name


_LAUNCH = """
import json, sys
from triton import knobs
from tritonscope.measure import runner
from tritonscope.inputs.kernels import Request
from tritonscope.pipeline.binding import build_spec
hits = []
knobs.compilation.listener = lambda **kw: hits.append(bool(kw.get("cache_hit")))
loaded = build_spec(Request("matmul", block=16, arch="sm_90a"), "sm_90a")
result, compiled = runner.run_on_gpu(loaded, seed=0)
print(json.dumps({"hits": hits, "hash": compiled.hash if hasattr(compiled, "hash") else compiled.metadata.hash,
                  "passed": result.passed}))
"""


def test_early_key_names_the_launchs_cache_entry(tmp_path):
    """`tritonscope compile` (Triton's key from the early digest, triton_api.start_key_digest) writes the
    cache entry that a real launch in a later process then finds: the same key, so the same entry."""
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "triton"), TRITONSCOPE_CACHE_DIR=str(tmp_path / "ts"))
    env.pop("TRITON_ALWAYS_COMPILE", None)
    ours = subprocess.run([sys.executable, "-m", "tritonscope", "compile", "matmul", "--block", "16", "--arch",
                           "sm_90a", "--json"], env=env, capture_output=True, text=True, timeout=300)
    assert ours.returncode == 0, ours.stderr[-2000:]
    artifact = json.loads(ours.stdout)["artifact"]
    launch = subprocess.run([sys.executable, "-c", _LAUNCH], env=env, capture_output=True, text=True, timeout=300)
    assert launch.returncode == 0, launch.stderr[-2000:]
    real = json.loads(launch.stdout.strip().splitlines()[-1])
    same = "same" if real["hash"] == artifact["kernel_hash"] else "different"
    print(f"\nEARLY KEY: launch cache hits {real['hits']}, hash {same}")
    assert real["hits"] == [True] and real["hash"] == artifact["kernel_hash"] and real["passed"]


def test_bench_matmul_correct():
    from tritonscope.measure.bench import bench_configs

    loaded = build_spec(Request("matmul_grouped", arch=ARCH, shape="2048x2048x2048"), ARCH)
    report = bench_configs([loaded], warmup=10, rep=50)
    (row,) = report.rows
    print(f"\nBENCH {report.device} {row.label}: {row.kernel.ms:.4f} ms {row.kernel.tflops:.1f} TFLOP/s, "
          f"torch {row.torch.tflops:.1f} TFLOP/s, ratio {row.ratio:.3f}, peak {row.peak_fraction:.2%}")
    assert row.status == "ok" and row.check["passed"]
    assert row.bytes_read == 2 * 2048 * 2048 * 2 and row.bytes_written == 2048 * 2048 * 2
    # the figures are consistent with each other and physically possible
    assert row.kernel.tflops == pytest.approx(2 * 2048**3 / (row.kernel.ms / 1e3) / 1e12)
    assert row.kernel.gbs == pytest.approx(3 * 2048 * 2048 * 2 / (row.kernel.ms / 1e3) / 1e9)
    assert 0.05 < row.peak_fraction < 1.0
    assert row.ratio == pytest.approx(row.torch.ms / row.kernel.ms)
    assert row.registers and row.shared and any("wgmma" in k.lower() or "HGMMA" in k for k in row.mix), row.mix
    # the timing is stable: a second measurement within 15 %
    again = bench_configs([loaded], warmup=10, rep=50, with_torch=False).rows[0]
    assert again.kernel.ms == pytest.approx(row.kernel.ms, rel=0.15)


def test_bench_sweep_reports_out_of_resources():
    from tritonscope.measure.bench import bench_configs

    loadeds = [build_spec(Request("matmul_masked", arch=ARCH, shape="1024x1024x1024", block=b), ARCH)
               for b in (32, 64, 128)]
    rows = bench_configs(loadeds, warmup=5, rep=20).rows
    print("\nSWEEP " + "; ".join(f"{r.label}: {r.status}" for r in rows))
    assert [r.status for r in rows] == ["ok", "ok", "out of resources"]
    assert "393216" in rows[2].problem
    assert rows[1].tf32 is True   # seed 002's fp32 kernel uses TF32


@pytest.mark.parametrize("target,kw", [
    ("matmul", {}),
    ("matmul_grouped", {"shape": "128x128x128", "constexprs": {"BLOCK_M": "64", "BLOCK_N": "64", "BLOCK_K": "32"}}),
    ("matmul_transposed", {"shape": "128x128x64", "constexprs": {"TRANS_A": "1"}}),
    ("vector_add", {"shape": "5000"}),
    ("softmax", {"shape": "37x300", "constexprs": {"BLOCK": "512"}}),
])
def test_interpreter_agrees_with_hardware(target, kw, tmp_path):
    saved = tmp_path / "interp.pt"
    req = Request(target, arch=ARCH, **kw)
    interp = runner.run_interpreted(req, seed=3, save_to=str(saved))
    assert interp.passed, interp.checks
    cpu = torch.load(saved)
    loaded = build_spec(req, ARCH)
    outputs = runner.output_names(loaded)
    values = {}
    for name, text in loaded.spec.args.items():
        if name in cpu:
            t = cpu[name].cuda() if cpu[name].is_contiguous() else cpu[name].T.contiguous().cuda().T
            if name in outputs:
                runner.poison(t)
            values[name] = t
        else:
            values[name] = runner.parse_arg_value(text)
    runner.launch(loaded, values)
    torch.cuda.synchronize()
    tol = runner.tolerance_for(loaded, tf32=True)
    for name in outputs:
        res = runner.compare(name, values[name], cpu[name], tol)
        print(f"\nAGREE {target}: {name} max_abs={res.max_abs_error:.3g} rel={res.rel_error:.3g} "
              f"(tol {tol:g}) {'pass' if res.passed else 'FAIL'}")
        assert res.passed, res
