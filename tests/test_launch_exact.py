"""Launch-exact binding: each pattern compiles what the kernel's own launch path compiles.

The kernels are in tests/zoo/patterns/launch_exact.py.  For each, the compile tritonscope makes is held
against Triton's own `kernel.warmup(...)` of the decorated kernel (Heuristics, Autotuner and all) under the
same stand-in driver: the same kernel hash, so the same specialization, constexprs and options.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tritonscope.cli import app

ROOT = Path(__file__).resolve().parent.parent
FILE = "tests/zoo/patterns/launch_exact.py"
HAS_AMD = (Path(importlib.util.find_spec("triton").submodule_search_locations[0]) / "backends" / "amd").is_dir()
runner = CliRunner()

ROWS = {"x_ptr": "fp32[4096,4096]", "y_ptr": "fp32[4096,4096]", "stride": "4096", "n_cols": "4096"}
ROPE = {"q_ptr": "bf16[4096,128]", "cos_ptr": "bf16[4096,64]", "sin_ptr": "bf16[4096,64]", "seq_len": "4096"}
COPY = {"x_ptr": "fp32[2000]", "y_ptr": "fp32[2000]", "n_elements": "2000"}
GEMM = {"a_ptr": "fp16[512,512]", "b_ptr": "fp16[512,512]", "c_ptr": "fp16[512,512]", "M": "512", "N": "512",
        "K": "512"}
GEMM_BLOCKS = {"BLOCK_M": "128", "BLOCK_N": "128", "BLOCK_K": "64"}


@pytest.fixture(scope="module")
def compiled_here():
    """compiled_here(kernel, arch, args, constexprs, **request) -> (Loaded, Artifact), memoized."""
    from tritonscope.inputs.kernels import Request
    from tritonscope.pipeline.binding import build_spec
    from tritonscope.pipeline.triton_compile import compile_artifact

    cache = {}

    def get(kernel, arch, args, constexprs=None, **kw):
        key = (kernel, arch, repr(args), repr(constexprs), repr(sorted(kw.items())))
        if key not in cache:
            loaded = build_spec(Request(f"{ROOT / FILE}:{kernel}", args=dict(args), constexprs=dict(constexprs or {}),
                                        arch=arch, **kw))
            cache[key] = loaded, compile_artifact(loaded, sass=False)
        return cache[key]

    return get


def triton_warmup(obj, arch: str, **keywords):
    """What Triton's own launch path compiles: the decorated kernel's warmup (Heuristics.run, or
    Autotuner.warmup's first pruned config) under the stand-in driver for `arch`."""
    from triton.runtime import driver

    from tritonscope import triton_api
    from tritonscope.core.model import ARCHES
    from tritonscope.inputs.kernels import stand_in_args
    from tritonscope.triton_api.jit import _forget_compiled

    target = triton_api.gpu_target(**ARCHES[arch].target_words())
    jit_fn = triton_api.jit_function(obj)
    args = {k: v for k, v in keywords.items() if isinstance(v, str) and "[" in v}
    keywords = {**keywords, **stand_in_args(args)}
    previous = getattr(driver, "_active", None)
    driver.set_active(triton_api._stand_in_driver(target))
    try:
        _forget_compiled(jit_fn)
        with triton_api._torch_hidden(target), triton_api._hip_torch_probe_kept():
            kernel = obj.warmup(grid=(1,), **keywords)
    finally:
        _forget_compiled(jit_fn)
        driver._active = previous
    kernel = kernel[0] if isinstance(kernel, list) else kernel
    return kernel.metadata


def _module():
    import importlib.util as iu

    spec = iu.spec_from_file_location("launch_exact_patterns", ROOT / FILE)
    module = iu.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _values(text: dict[str, str]) -> dict:
    from tritonscope.inputs.kernels import parse_scalar

    return {k: (v if "[" in v else parse_scalar(v)) for k, v in text.items()}


def test_a_heuristic_sets_num_warps_as_the_launch_does(compiled_here):
    loaded, art = compiled_here("rows_heuristic_warps", "sm_90a", ROWS)
    assert loaded.spec.num_warps == 8 and art.metadata["num_warps"] == 8
    assert loaded.spec.constexprs["BLOCK"] == 4096
    assert set(loaded.spec.heuristics) == {"BLOCK", "num_warps"}
    assert art.kernel_hash == triton_warmup(_module().rows_heuristic_warps, "sm_90a", **_values(ROWS)).hash
    small, _ = compiled_here("rows_heuristic_warps", "sm_90a", {**ROWS, "n_cols": "1000"})
    assert small.spec.num_warps == 4 and small.spec.constexprs["BLOCK"] == 1024


def test_a_user_value_a_heuristic_replaces_is_refused_not_dropped():
    args = [f"--arg={k}={v}" for k, v in ROWS.items()]
    result = runner.invoke(app, ["compile", f"{FILE}:rows_heuristic_warps", *args, "-w", "4", "--stage", "none"])
    assert result.exit_code == 2, result.output
    assert "num_warps" in result.output and "@triton.heuristics" in result.output
    same = runner.invoke(app, ["compile", f"{FILE}:rows_heuristic_warps", *args, "-w", "8", "--stage", "none",
                               "--no-color"])
    assert same.exit_code == 0, same.output
    assert "num_warps=8" in same.output


@pytest.mark.parametrize("backward", ["false", "true"])
def test_a_heuristic_reads_the_value_passed_under_its_own_name(compiled_here, backward):
    loaded, art = compiled_here("rope_own_key", "sm_90a", ROPE, {"HEAD_DIM": "128", "BACKWARD_PASS": backward})
    assert loaded.spec.constexprs["BACKWARD_PASS"] is (backward == "true")
    import triton.language as tl  # noqa: F401

    real = triton_warmup(_module().rope_own_key, "sm_90a", **_values(ROPE), HEAD_DIM=128,
                         BACKWARD_PASS=backward == "true")
    assert art.kernel_hash == real.hash


def test_a_pruner_that_reads_keyword_arguments_sees_them(compiled_here):
    loaded, art = compiled_here("copy_keyword_pruned", "sm_90a", COPY)
    assert loaded.spec.autotune["count"] == 2 and loaded.spec.autotune["of"] == 3
    assert loaded.spec.constexprs["BLOCK"] == 1024 and loaded.spec.num_warps == 4
    assert "launch" not in loaded.spec.autotune  # bound by keyword, as libraries launch
    assert art.kernel_hash == triton_warmup(_module().copy_keyword_pruned, "sm_90a", **_values(COPY)).hash


def test_a_pruner_that_reads_positional_arguments_is_bound_positionally(compiled_here):
    loaded, _ = compiled_here("copy_positional_pruned", "sm_90a", COPY)
    assert loaded.spec.autotune["count"] == 1 and loaded.spec.constexprs["BLOCK"] == 256
    assert loaded.spec.num_warps == 2
    assert "x_ptr, y_ptr, n_elements" in loaded.spec.autotune["launch"]
    result = runner.invoke(app, ["compile", f"{FILE}:copy_positional_pruned",
                                 *[f"--arg={k}={v}" for k, v in COPY.items()], "--stage", "none", "--no-color",
                                 "--width", "200"])
    assert result.exit_code == 0 and "prune_configs_by reads them so" in result.output, result.output


def test_a_pruner_that_fails_fails_the_bind_with_its_error():
    result = runner.invoke(app, ["compile", f"{FILE}:copy_keyword_pruned", "--arg=x_ptr=fp32[2000]",
                                 "--arg=y_ptr=fp32[2000]", "--arg=n_elements=none", "--stage", "none"])
    assert result.exit_code == 4, result.output
    assert "prune_configs_by failed" in result.output and "TypeError" in result.output


@pytest.mark.parametrize("arch,backend", [("sm_90a", "nvidia"), ("gfx942", "amd")])
def test_no_stages_given_compiles_with_the_backends_own_default(compiled_here, arch, backend):
    if backend == "amd" and not HAS_AMD:
        pytest.skip("this Triton wheel has no AMD backend")
    if backend == "amd":
        from triton.backends.amd.compiler import HIPOptions as Options
    else:
        from triton.backends.nvidia.compiler import CUDAOptions as Options
    default = {f.name: f.default for f in dataclasses.fields(Options)}
    loaded, art = compiled_here("gemm_default_stages", arch, GEMM, GEMM_BLOCKS)
    assert (loaded.spec.num_stages, loaded.spec.num_warps) == (default["num_stages"], default["num_warps"])
    assert art.metadata["num_stages"] == default["num_stages"]
    real = triton_warmup(_module().gemm_default_stages, arch, **_values(GEMM), BLOCK_M=128, BLOCK_N=128, BLOCK_K=64)
    assert art.kernel_hash == real.hash


def test_config_conflicts_are_refused_as_a_launch_refuses_them():
    base = ["compile", "matmul_autotuned", "--stage", "none"]
    clash = runner.invoke(app, [*base, "--config", "3", "-c", "BLOCK_M=64"])
    assert clash.exit_code == 2 and "conflicting meta-parameters" in " ".join(clash.output.split()), clash.output
    none = runner.invoke(app, ["compile", "matmul", "--config", "2", "--stage", "none"])
    assert none.exit_code == 2 and "no @triton.autotune" in none.output, none.output
    past = runner.invoke(app, [*base, "--config", "9"])
    assert past.exit_code == 2 and "has 4 autotune configs" in past.output, past.output


def test_missing_boolean_constexpr_hint_offers_a_boolean():
    pytest.importorskip("liger_kernel")
    args = ["--arg=Y_ptr=bf16[4096,4096]", "--arg=Y_row_stride=4096", "--arg=X_ptr=bf16[4096,4096]",
            "--arg=X_row_stride=4096", "--arg=W_ptr=bf16[4096]", "--arg=W_row_stride=1", "--arg=RSTD_ptr=fp32[4096]",
            "--arg=RSTD_row_stride=1", "--arg=n_cols=4096", "--arg=eps=1e-6", "--arg=offset=0.0"]
    result = runner.invoke(app, ["compile", "liger_kernel.ops.rms_norm:_rms_norm_forward_kernel", *args,
                                 "-c", "casting_mode=0", "--stage", "none", "--width", "200"])
    assert result.exit_code == 4, result.output
    assert "-c elementwise_affine=true" in result.output and "-c BLOCK_SIZE=16" in result.output


def test_a_heuristic_that_reads_a_value_not_passed_names_itself():
    result = runner.invoke(app, ["compile", f"{FILE}:rope_own_key", *[f"--arg={k}={v}" for k, v in ROPE.items()],
                                 "-c", "HEAD_DIM=128", "--stage", "none", "--width", "200"])
    assert result.exit_code == 4, result.output
    assert "heuristics for BACKWARD_PASS failed" in result.output and "KeyError" in result.output


BIG_FIRST = '''
import triton
import triton.language as tl


@triton.autotune([triton.Config({"BLOCK": 128}, num_warps=4, num_stages=8),
                  triton.Config({"BLOCK": 64}, num_warps=4, num_stages=3)], key=["K"])
@triton.jit
def tiles(a_ptr, b_ptr, c_ptr, K, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, K, BLOCK):
        a = tl.load(a_ptr + r[:, None] * K + (k + r)[None, :])
        b = tl.load(b_ptr + (k + r)[:, None] * BLOCK + r[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], acc)
'''


def test_an_autotuned_config_that_does_not_fit_points_at_the_others(tmp_path):
    path = tmp_path / "tiles.py"
    path.write_text(BIG_FIRST)
    args = ["--arg", "a_ptr=fp16[256,4096]", "--arg", "b_ptr=fp16[4096,256]", "--arg", "c_ptr=fp32[256,256]",
            "--arg", "K=4096", "--arch", "sm_90a", "--stage", "none", "--width", "200"]
    result = runner.invoke(app, ["compile", f"{path}:tiles", *args])
    assert result.exit_code == 6, result.output
    assert "try --config 2 (1 to 2)" in result.output
    assert runner.invoke(app, ["compile", f"{path}:tiles", *args, "--config", "2"]).exit_code == 0


def test_a_package_module_that_fails_to_import_gets_a_hint_that_works(tmp_path, monkeypatch):
    package = tmp_path / "pkg_fails"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text("VALUE = 1\n")
    (package / "kern.py").write_text("from .helpers import VALUE\nraise RuntimeError('boom at import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    result = runner.invoke(app, ["compile", "pkg_fails.kern:k", "--stage", "none", "--width", "300"])
    assert result.exit_code == 4, result.output
    assert "boom at import" in result.output
    assert "python -c 'import pkg_fails.kern'" in result.output and "python " + str(package) not in result.output


def test_errors_follow_the_commands_width():
    argv = ["compile", "matmul_autotuned", "--config", "3", "-c", "BLOCK_M=64", "--stage", "none"]
    wide = runner.invoke(app, [*argv, "--width", "250"])
    assert wide.exit_code == 2
    assert any(len(line) > 100 for line in wide.output.splitlines()), wide.output
    narrow = runner.invoke(app, [*argv, "--width", "40"])
    assert all(len(line) <= 40 for line in narrow.output.splitlines()), narrow.output


def test_an_empty_string_constexpr_is_shown_quoted():
    args = ["--arg", "x_ptr=bf16[64,64]", "--arg", "out_ptr=bf16[64,64]", "--arg", "loss_ptr=fp32[64]",
            "--arg", "n_cols=64", "--arg", "stride=64", "-c", 'ACTIVATION=""', "-c", "reduction=sum", "-c", "BLOCK=64"]
    result = runner.invoke(app, ["compile", f"{ROOT}/tests/zoo/patterns/string_constexpr.py:act_reduce", *args,
                                 "--stage", "none", "--width", "300", "--no-color"])
    assert result.exit_code == 0, result.output
    assert "ACTIVATION: constexpr = ''" in result.output and "reduction: constexpr = 'sum'" in result.output


def test_config_predicted_compiles_the_config_the_model_predicts_fastest():
    import json

    argv = ["compile", f"{ROOT / FILE}:copy_keyword_pruned", "--arg", "x_ptr=fp32[1048576]",
            "--arg", "y_ptr=fp32[1048576]", "--arg", "n_elements=1048576", "--grid", "cdiv(n_elements, BLOCK)",
            "--gpu", "H100", "--config", "predicted", "--stage", "none"]
    result = runner.invoke(app, [*argv, "--json"])
    assert result.exit_code == 0, result.output
    spec = json.loads(result.output)["artifact"]["spec"]
    info = spec["autotune"]
    assert info["chosen_by"] == "predicted" and info["count"] == 3 and len(info["predictions"]) == 3
    times = {r["index"]: r["predicted_ms"] for r in info["predictions"]}
    assert all(t is not None and t > 0 for t in times.values())
    assert info["index"] == min(times, key=times.get)
    assert spec["constexprs"]["BLOCK"] == [4096, 1024, 256][info["index"] - 1]
    text = runner.invoke(app, [*argv, "--no-color", "--width", "300"])
    assert "predicted fastest on H100 SXM (a prediction, not a timing; expected error" in text.output, text.output
    nogrid = runner.invoke(app, [a for a in argv if a not in ("--grid", "cdiv(n_elements, BLOCK)")])
    assert nogrid.exit_code == 2 and "--grid" in nogrid.output, nogrid.output
    bad = runner.invoke(app, ["compile", "matmul_autotuned", "--config", "fastest", "--stage", "none"])
    assert bad.exit_code == 2 and "'predicted'" in bad.output
