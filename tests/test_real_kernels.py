"""What real kernels need (issue 22), one feature a test: each fails when that feature breaks.

Kernel files are written into tmp_path (or are the pattern kernels of tests/zoo/patterns/),
compiled through the CLI as a user types it, and read back through --json.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tritonscope.cli import app
from tritonscope.core.errors import ExitCode

ROOT = Path(__file__).resolve().parent.parent
PATTERNS = ROOT / "tests" / "zoo" / "patterns"
runner = CliRunner()

ASKS = """
import triton
import triton.language as tl

# a tutorial's host code: configs built at import from the GPU it runs on
DEVICE_TARGET = triton.runtime.driver.active.get_current_target()
NUM_SMS = triton.runtime.driver.active.utils.get_device_properties(0)["multiprocessor_count"]


@triton.jit
def scale(x_ptr, n, SMS: tl.constexpr = NUM_SMS, BLOCK: tl.constexpr = 128):
    pid = tl.program_id(0)
    for start in range(pid * BLOCK, n, SMS * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
"""


def compile_json(*argv: str, cwd: Path | None = None, monkeypatch=None) -> dict:
    if cwd is not None:
        monkeypatch.chdir(cwd)
    result = runner.invoke(app, ["compile", *argv, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def spec_of(*argv: str, **kw) -> dict:
    return compile_json(*argv, **kw)["artifact"]["spec"]


def test_import_time_gpu_questions_get_the_arch_s_answers(tmp_path):
    kernel = tmp_path / "asks.py"
    kernel.write_text(ASKS)
    seen = {}
    for arch in ("sm_90a", "sm_100a", "sm_90a"):  # a second arch imports the file again, for that arch
        spec = spec_of(f"{kernel}:scale", "--arg", "x_ptr=fp32[4096]", "--arg", "n=4096", "--arch", arch)
        seen.setdefault(arch, spec["constexprs"]["SMS"])
        assert spec["constexprs"]["SMS"] == seen[arch]
        assert spec["asked"] == ["the target", "the device properties"]
    assert seen == {"sm_90a": 132, "sm_100a": 148}
    pcie = spec_of(f"{kernel}:scale", "--arg", "x_ptr=fp32[4096]", "--arg", "n=4096", "--gpu", "H100-PCIe")
    assert pcie["constexprs"]["SMS"] == 114 and pcie["gpu"] == "H100-PCIe"  # --gpu answers for that part
    wrong = runner.invoke(app, ["compile", f"{kernel}:scale", "--arg", "x_ptr=fp32[4096]", "--arg", "n=4096",
                                "--gpu", "A100", "--stage", "none"])
    assert wrong.exit_code == ExitCode.USAGE and "the A100 is no sm_90a GPU" in wrong.output
    result = runner.invoke(app, ["compile", f"{kernel}:scale", "--arg", "x_ptr=fp32[4096]", "--arg", "n=4096",
                                 "--stage", "none", "--width", "200"])
    assert "import asked   the target, the device properties: answered as sm_90a's reference GPU" in result.output


def test_sibling_and_package_imports_work_as_python_runs_them(tmp_path, monkeypatch):
    (tmp_path / "helper.py").write_text(textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def twice(x):
            return x * 2
    """))
    (tmp_path / "kern.py").write_text(textwrap.dedent("""
        import triton
        import triton.language as tl
        from helper import twice

        @triton.jit
        def k(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, twice(tl.load(x_ptr + offs)))
    """))
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "util.py").write_text((tmp_path / "helper.py").read_text())
    (pkg / "ops.py").write_text((tmp_path / "kern.py").read_text().replace("from helper import", "from .util import"))
    for target in (f"{tmp_path / 'kern.py'}:k", f"{pkg / 'ops.py'}:k", "mypkg.ops:k"):
        spec = spec_of(target, "--arg", "x_ptr=fp32[64]", "-c", "BLOCK=64", cwd=tmp_path, monkeypatch=monkeypatch)
        assert spec["kernel"] == "k"
    result = runner.invoke(app, ["compile", "mypkg.nope:k"])
    assert result.exit_code == ExitCode.NOT_FOUND and "No module or file named 'mypkg.nope'" in result.output


def test_dtype_and_string_constexprs_reach_the_kernel_as_a_launch_passes_them():
    target = f"{PATTERNS / 'dtype_constexpr.py'}:matmul_compute_type"
    args = ["--arg", "a_ptr=bf16[256,256]", "--arg", "b_ptr=bf16[256,256]", "--arg", "c_ptr=bf16[256,256]",
            "--arg", "M=256", "--arg", "N=256", "--arg", "K=256", "--arg", "stride_am=256", "--arg", "stride_ak=1",
            "--arg", "stride_bk=256", "--arg", "stride_bn=1", "--arg", "stride_cm=256", "--arg", "stride_cn=1",
            "-c", "BLOCK_M=64", "-c", "BLOCK_N=64", "-c", "BLOCK_K=32", "--arch", "sm_80"]
    hashes = set()
    for spelling in ("bf16", "tl.bfloat16", "torch.bfloat16"):
        out = compile_json(target, *args, "-c", f"compute_type={spelling}")
        assert out["artifact"]["spec"]["constexprs"]["compute_type"] == "tl.bfloat16"
        hashes.add(out["artifact"]["kernel_hash"])
    assert len(hashes) == 1
    fp32 = compile_json(target, *args, "-c", "compute_type=fp32")
    assert fp32["artifact"]["kernel_hash"] not in hashes  # the dtype reached the kernel
    bad = runner.invoke(app, ["compile", target, *args, "-c", "compute_type=mean", "--stage", "none"])
    assert bad.exit_code == ExitCode.BAD_KERNEL
    assert "compute_type=mean ('mean', a string) does not fit its use" in " ".join(bad.output.split())


def test_string_constexprs_quoted_unquoted_and_empty():
    target = f"{PATTERNS / 'string_constexpr.py'}:act_reduce"
    args = ["--arg", "x_ptr=bf16[64,256]", "--arg", "out_ptr=bf16[64,256]", "--arg", "loss_ptr=fp32[64]",
            "--arg", "n_cols=256", "--arg", "stride=256", "-c", "BLOCK=256", "--arch", "sm_80"]
    plain = compile_json(target, *args, "-c", "ACTIVATION=gelu", "-c", "reduction=mean")
    quoted = compile_json(target, *args, "-c", 'ACTIVATION="gelu"', "-c", "reduction='mean'")
    assert plain["artifact"]["kernel_hash"] == quoted["artifact"]["kernel_hash"]
    assert plain["artifact"]["spec"]["constexprs"]["reduction"] == "mean"
    empty = compile_json(target, *args, "-c", 'ACTIVATION=""', "-c", "reduction=sum")
    assert empty["artifact"]["spec"]["constexprs"]["ACTIVATION"] == ""
    assert empty["artifact"]["kernel_hash"] != plain["artifact"]["kernel_hash"]


def test_interleaved_constexprs_bind_by_name():
    spec = compile_json(f"{PATTERNS / 'interleaved.py'}:moe_like_gemm", *_zoo_args("pattern_interleaved"),
                        "--arch", "sm_80")["artifact"]["specialization"]
    order = [s["name"] for s in spec]
    assert order.index("N") < order.index("EM")  # the kernel's own order, constexprs before runtime args
    assert next(s for s in spec if s["name"] == "N")["type"] == "constexpr"


def test_tensor_descriptors_in_both_spellings():
    target = f"{PATTERNS / 'host_descriptor.py'}:descriptor_persistent_matmul"
    rest = ["--arg", "M=4096", "--arg", "N=4096", "--arg", "K=4096", "-c", "BLOCK_M=128", "-c", "BLOCK_N=256",
            "-c", "BLOCK_K=64", "-c", "NUM_PROGRAMS=132", "-w", "8"]
    shaped = compile_json(target, "--arg", "a_desc=desc(fp16[4096,4096],[128,64])",
                          "--arg", "b_desc=desc(fp16[4096,4096],[256,64])",
                          "--arg", "c_desc=desc(fp16[4096,4096],[128,256])", *rest)
    tritons = compile_json(target, "--arg", "a_desc=tensordesc<fp16[128,64]>",
                           "--arg", "b_desc=tensordesc<fp16[256,64]>", "--arg", "c_desc=tensordesc<fp16[128,256]>",
                           *rest)
    types = {s["name"]: s["type"] for s in shaped["artifact"]["specialization"]}
    assert types["a_desc"].replace(" ", "") == "tensordesc<fp16[128,64]>"
    assert shaped["artifact"]["kernel_hash"] == tritons["artifact"]["kernel_hash"]  # shape is a runtime value
    bad = runner.invoke(app, ["compile", target, "--arg", "a_desc=desc(fp16[4096,4096],[128,6])",
                              "--arg", "b_desc=tensordesc<fp16[256,64]>", "--arg", "c_desc=tensordesc<fp16[128,256]>",
                              *rest, "--stage", "none"])
    assert bad.exit_code == ExitCode.BAD_KERNEL and "--arg a_desc: Triton refuses this tensor descriptor" in bad.output


def test_backend_options_reach_the_compile_and_unknown_ones_are_refused():
    target = f"{PATTERNS / 'amd_options.py'}:grouped_matmul"
    args = [*_zoo_args("pattern_amd_options_config"), "--arch", "gfx942"]
    config = compile_json(target, *args)                       # the HIP config's own options
    # -c waves_per_eu=1 beside a config that sets waves_per_eu=2: a launch refuses it, and so does tritonscope;
    # with every tuned constexpr given (no config applies) it is the launch's own option
    clash = runner.invoke(app, ["compile", target, *args, "-c", "waves_per_eu=1", "--stage", "none"])
    assert clash.exit_code == ExitCode.USAGE and "conflicting meta-parameters" in " ".join(clash.output.split())
    tuned = config["artifact"]["spec"]["constexprs"]
    one = compile_json(target, *args, "-c", "waves_per_eu=1", *[f"-c{k}={v}" for k, v in tuned.items()])
    assert one["artifact"]["spec"]["options"]["waves_per_eu"] == 1
    assert config["artifact"]["spec"]["options"] == {"waves_per_eu": 2, "matrix_instr_nonkdim": 16, "kpack": 2}
    assert config["artifact"]["spec"]["asked"] == ["the target"]  # is_hip() at import: the HIP configs
    assert '"amdgpu-waves-per-eu"="2' in config["artifact"]["stages"]["llir"]
    assert '"amdgpu-waves-per-eu"="1' in one["artifact"]["stages"]["llir"]
    nvidia = runner.invoke(app, ["compile", "matmul", "-c", "waves_per_eu=2", "--stage", "none"])
    assert nvidia.exit_code == ExitCode.USAGE and "no option 'waves_per_eu'" in " ".join(nvidia.output.split())
    unknown = runner.invoke(app, ["compile", "matmul", "-c", "wave_per_eu=2", "--arch", "gfx942", "--stage", "none"])
    assert unknown.exit_code == ExitCode.BAD_KERNEL and "no constexpr named 'wave_per_eu'" in unknown.output


def test_a_constexpr_named_like_a_launch_option_gets_the_launch_s_value():
    target = f"{PATTERNS / 'launch_option_constexpr.py'}"
    name = next(iter(_zoo_entry("pattern_launch_option_constexpr")["target"].split(":")[1:]))
    args = _zoo_args("pattern_launch_option_constexpr")
    args = [a for i, a in enumerate(args) if a != "-s" and (i == 0 or args[i - 1] != "-s")]  # the zoo's -s 4
    spec = spec_of(f"{target}:{name}", *args, "-s", "2")
    assert spec["num_stages"] == 2 and spec["constexprs"]["num_stages"] == 2
    clash = runner.invoke(app, ["compile", f"{target}:{name}", *args, "-c", "num_stages=4", "-s", "2"])
    assert clash.exit_code == ExitCode.USAGE


def test_autotune_configs_prune_and_heuristics(tmp_path):
    kernel = tmp_path / "tuned.py"
    kernel.write_text(textwrap.dedent("""
        import triton
        import triton.language as tl

        def prune(configs, named_args, **kw):
            return [c for c in configs if c.kwargs["BLOCK"] <= named_args["n"]]

        @triton.autotune([triton.Config({"BLOCK": b}, num_warps=w) for b in (64, 256, 1024) for w in (2, 4)],
                         key=["n"], prune_configs_by={"early_config_prune": prune})
        @triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
        @triton.jit
        def k(x_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            if EVEN:
                tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)
            else:
                tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)
    """))
    base = [f"{kernel}:k", "--arg", "x_ptr=fp32[300]", "--arg", "n=300"]
    first = spec_of(*base)
    assert first["constexprs"] == {"BLOCK": 64, "EVEN": False} and first["num_warps"] == 2
    assert first["autotune"]["count"] == 4 and first["autotune"]["of"] == 6  # 1024 > 300 pruned
    fourth = spec_of(*base, "--config", "4")
    assert fourth["constexprs"] == {"BLOCK": 256, "EVEN": False} and fourth["num_warps"] == 4
    even = spec_of(f"{kernel}:k", "--arg", "x_ptr=fp32[512]", "--arg", "n=512", "--config", "3")
    assert even["constexprs"]["EVEN"] is True and even["heuristics"] == ["EVEN"]
    assert runner.invoke(app, ["compile", *base, "--config", "5"]).exit_code == ExitCode.USAGE
    assert runner.invoke(app, ["compile", *base, "-c", "EVEN=true"]).exit_code == ExitCode.USAGE


def test_the_runaway_guard_knows_the_target_s_waves_and_registers():
    from tritonscope.core.errors import OutOfResourcesError
    from tritonscope.inputs.kernels import Request
    from tritonscope.pipeline.binding import build_spec, runaway_guard

    # a 512x512 accumulator over 4 warps: 2,048 values a thread on NVIDIA (refused),
    # 1,024 a lane on CDNA's 64-wide waves with 512 registers (compiles)
    with pytest.raises(OutOfResourcesError, match="at most 255"):
        runaway_guard(build_spec(Request("matmul", block=512, arch="sm_90a"), "sm_90a"))
    runaway_guard(build_spec(Request("matmul", block=512, arch="gfx950"), "gfx950"))


def test_a_kernel_file_that_is_not_utf8_is_one_clear_line(tmp_path):
    bad = tmp_path / "latin.py"
    bad.write_bytes(b"# caf\xe9\nimport triton\n")
    result = runner.invoke(app, ["compile", f"{bad}:k"])
    assert result.exit_code == ExitCode.BAD_KERNEL and "not UTF-8 text" in result.output


def _zoo_entry(name: str) -> dict:
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "zoo"))
    import manifest

    return next(e for e in manifest.ZOO if e["name"] == name)


def _zoo_args(name: str) -> list[str]:
    import shlex

    entry = _zoo_entry(name)
    return shlex.split(entry["args"])


NO_TORCH = """
import sys
class NoTorch:  # as if torch were not installed
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError("No module named 'torch'")
sys.meta_path.insert(0, NoTorch())
from typer.testing import CliRunner
from tritonscope.cli import app
r = CliRunner().invoke(app, ["compile", "matmul", "--block", "32", "--arch", "gfx942", "--stage", "none"])
print(r.exit_code, "torch" in sys.modules and sys.modules["torch"].__name__)
print(r.output[-400:])
"""


def test_amd_targets_compile_without_torch_installed():
    # Triton 3.6's HIP backend runs `import torch` while it specializes a pointer
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", NO_TORCH], capture_output=True, text=True, timeout=300)
    first = out.stdout.splitlines()[0] if out.stdout else out.stderr[-2000:]
    assert first == "0 False", out.stdout + out.stderr


def test_the_python_api_takes_what_a_launch_passes():
    torch = pytest.importorskip("torch")
    from triton.tools.tensor_descriptor import TensorDescriptor

    import tritonscope

    target = f"{PATTERNS / 'host_descriptor.py'}:descriptor_persistent_matmul"
    a = torch.empty(4096, 4096, dtype=torch.float16)
    result = tritonscope.compile(target, args={"a_desc": TensorDescriptor.from_tensor(a, [128, 64]),
                                               "b_desc": "tensordesc<fp16[256,64]>",
                                               "c_desc": "tensordesc<fp16[128,256]>", "M": 4096, "N": 4096, "K": 4096},
                                 constexprs={"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "NUM_PROGRAMS": 132},
                                 num_warps=8, options={"maxnreg": 232})
    spec = result.artifact.spec
    assert spec.args["a_desc"] == "desc(fp16[4096,4096],[128,64])" and spec.options == {"maxnreg": 232}
    assert result.artifact.metadata["maxnreg"] == 232  # the option reached the compile
    dtype = tritonscope.compile(f"{PATTERNS / 'dtype_constexpr.py'}:matmul_compute_type", arch="sm_80",
                                args={**{n: "bf16[256,256]" for n in ("a_ptr", "b_ptr", "c_ptr")},
                                      **{n: 256 for n in ("M", "N", "K", "stride_am", "stride_bk", "stride_cm")},
                                      **{n: 1 for n in ("stride_ak", "stride_bn", "stride_cn")}},
                                constexprs={"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32,
                                            "compute_type": torch.bfloat16})
    assert dtype.artifact.spec.constexprs["compute_type"] == "tl.bfloat16"


def test_two_kernel_folders_each_get_their_own_sibling_module(tmp_path, monkeypatch):
    # two folders with a helper.py each (different functions): each kernel imports its own, in one process
    for folder, fn, factor in (("a", "twice", 2), ("b", "thrice", 3)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "helper.py").write_text(textwrap.dedent(f"""
            import triton

            @triton.jit
            def {fn}(x):
                return x * {factor}
        """))
        (tmp_path / folder / "kern.py").write_text(textwrap.dedent(f"""
            import triton
            import triton.language as tl
            from helper import {fn}

            @triton.jit
            def k(x_ptr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, {fn}(tl.load(x_ptr + offs)))
        """))
    for folder in ("a", "b", "a"):
        spec = spec_of(f"{tmp_path / folder / 'kern.py'}:k", "--arg", "x_ptr=fp32[64]", "-c", "BLOCK=64")
        assert spec["kernel"] == "k"


def test_block_and_c_for_the_same_constexpr_is_refused():
    # was silently accepted, -c winning (issue 23)
    out = runner.invoke(app, ["compile", "matmul", "-c", "BLOCK=16", "--block", "32", "--stage", "none"])
    assert out.exit_code == ExitCode.USAGE
    assert "--block 32 and -c BLOCK=16 both set BLOCK" in " ".join(out.output.split())
