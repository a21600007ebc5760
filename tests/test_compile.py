"""Issue 2: exact GPU-less compiles of the samples and user kernels."""

from __future__ import annotations

import json
import os
import re
import sys
import textwrap

import pytest
from typer.testing import CliRunner

from conftest import GOLDEN, ROOT, check_golden, triton_series
from tritonscope.cli import app
from tritonscope.core.errors import ExitCode
from tritonscope.core.model import ARCH_ALIASES
from tritonscope.inputs.kernels import SAMPLES_DIR, list_samples
from tritonscope.pipeline.paths import relativize

runner = CliRunner()

SAMPLES = [s.name for s in list_samples()]
ARCHES = ["sm_80", "sm_90a"]


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


# ---------------------------------------------------------------- seed 001


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_seed_001_artifacts(compiled, arch):
    a = compiled("matmul", block=16, arch=arch)
    ttgir, ptx = a.stages["ttgir"], a.stages["ptx"]
    assert ("#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
            "order = [1, 0]}>") in ttgir
    assert "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>" in ttgir
    assert "#ttg.swizzled_shared<{vec = 8, perPhase = 4, maxPhase = 2, order = [1, 0]}>" in ttgir
    assert "cp.async.ca.shared.global" in ptx
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx
    assert "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16" in ptx
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in ptx
    assert "HMMA.16816.F32" in a.stages["sass"]
    assert a.resources.registers and a.resources.registers > 0
    assert a.resources.dynamic_shared > 0


def test_every_stage_is_present(compiled):
    a = compiled("matmul", block=16)
    assert list(a.stages) == ["python", "ttir", "ttgir", "llir", "ptx", "sass"]
    assert a.stages["python"].lstrip().startswith("@triton.jit")
    assert "tt.func public @matmul_kernel" in a.stages["ttir"]
    assert ".target sm_90a" in a.stages["ptx"]


def test_num_warps_and_stages_change_the_kernel(compiled):
    two = compiled("matmul", block=16, num_warps=2)
    assert "sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [2, 1]" in two.stages["ttgir"]
    one_stage = compiled("matmul", block=16, num_stages=1)
    assert "cp.async" not in one_stage.stages["ptx"]


def test_specialization_matches_a_real_launch(tmp_path, compiled):
    """Aligned pointers and ints % 16 -> divisibility 16; int 1 -> constexpr; >= 2**31 -> i64."""
    src = tmp_path / "spec_kernel.py"
    src.write_text(textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr, n16, one, odd, big, f, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, offs + n16 + one + odd + big + f.to(tl.int32))
    """))
    a = compiled(f"{src}:k", args={"x_ptr": "*i32", "n16": "32", "one": "1", "odd": "7", "big": str(2**31), "f": "1.5"},
                 constexprs={"BLOCK": "64"})
    spec = {s.name: s for s in a.specialization}
    assert spec["x_ptr"].type == "*i32" and spec["x_ptr"].attrs == ("tt.divisibility=16",)
    assert spec["n16"].type == "i32" and spec["n16"].attrs == ("tt.divisibility=16",)
    assert spec["one"].type == "constexpr" and spec["one"].value == 1
    assert spec["odd"].type == "i32" and spec["odd"].attrs == ()
    assert spec["big"].type == "i64"
    assert spec["f"].type == "fp32" and spec["f"].attrs == ()
    assert "%n16: i32 {tt.divisibility = 16 : i32}" in a.stages["ttir"]
    assert "%big: i64" in a.stages["ttir"]


# ---------------------------------------------------------------- goldens


def _normalized(text: str) -> str:
    """Stage text with machine-specific paths out: the samples' and Triton's own folders.

    PTX also spells the kernel's path byte by byte in its DWARF sections
    (`.b8 109 ...` with lengths that follow), which no rewrite can fix: those
    sections, the tail of the file, are compared as a marker.
    """
    import triton

    text = relativize(text, str(SAMPLES_DIR), "<samples>")
    text = relativize(text, os.path.dirname(triton.__file__), "<triton>")
    cut = text.find("\t.section\t.debug_")
    return text if cut < 0 else text[:cut] + "// <DWARF debug sections omitted>\n"


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("sample", SAMPLES)
def test_sample_stages_match_golden(compiled, regen, sample, arch):
    """Every sample compiles on sm_80 and sm_90a, and each stage equals the checked-in golden."""
    a = compiled(sample, arch=arch)
    folder = GOLDEN / "compile" / triton_series() / f"{sample}-{arch}"
    for key, text in a.stages.items():
        check_golden(folder / f"{key}.txt", _normalized(text), regen)


# ---------------------------------------------------------------- CLI


def test_cli_compile_main_job():
    result = invoke("compile", "matmul", "--block", "16", "--width", "120", "--no-color")
    assert result.exit_code == 0, result.output
    out = result.output
    for expected in ("matmul_kernel", "sm_90a", "BLOCK=16", "num_warps=4", "num_stages=3", "shared memory",
                     "registers", "spills", "Triton IR", "Triton GPU IR", "LLVM IR", "PTX", "SASS",
                     "mma.sync.aligned.m16n8k16"):
        assert expected in out, expected


def test_cli_stage_selection_and_arch():
    result = invoke("compile", "matmul", "--block", "16", "--arch", "sm_80", "--stage", "ttgir", "--no-color")
    assert result.exit_code == 0, result.output
    assert "sm_80" in result.output and "Triton GPU IR" in result.output
    assert "LLVM IR" not in result.output and "SASS  " not in result.output


def test_cli_json_is_machine_readable():
    result = invoke("compile", "matmul", "--block", "16", "--json", "--stage", "none")
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["artifact"]["spec"]["constexprs"] == {"BLOCK": 16}
    assert "cp.async" in data["artifact"]["stages"]["ptx"]


def test_cli_samples_lists_every_sample():
    result = invoke("samples", "--json")
    names = {r["name"] for r in json.loads(result.output)}
    assert {"matmul", "matmul_masked", "matmul_transposed", "matmul_grouped", "vector_add", "softmax"} <= names


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89", "sm_90a", "sm_90", "sm_100a", "sm_120"])
def test_every_documented_arch_compiles(arch):
    result = invoke("compile", "vector_add", "--arch", arch, "--stage", "none", "--json")
    assert result.exit_code == 0, result.output
    artifact = json.loads(result.output)["artifact"]
    target = ARCH_ALIASES.get(arch, arch)   # sm_90 is compiled as sm_90a, as Triton does for a launch there
    assert artifact["spec"]["arch"] == target
    # the compile was for that target: Triton's PTX names it (with the arch-specific 'a' Triton adds from sm_90 up)
    assert re.search(rf"^\.target {target}a?$", artifact["stages"]["ptx"], re.M), artifact["stages"]["ptx"][:400]


def test_user_kernel_from_plain_file():
    result = invoke("compile", f"{SAMPLES_DIR}/vector_add.py:add_kernel", "--arg", "x_ptr=*fp32",
                    "--arg", "y_ptr=*fp32", "--arg", "out_ptr=*fp32", "--arg", "n_elements=4096",
                    "-c", "BLOCK=1024", "--stage", "ptx", "--no-color")
    assert result.exit_code == 0, result.output
    assert "ld.global.v4" in result.output


def test_compile_never_imports_torch():
    code = ("import sys; from tritonscope.cli import main; sys.argv=['tritonscope','compile','matmul','--block','16',"
            "'--stage','none','--no-color']\ntry:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            "assert 'triton' in sys.modules and 'torch' not in sys.modules, 'torch'")
    import subprocess

    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "tritonscope · matmul_kernel" in proc.stdout and "registers" in proc.stdout, proc.stdout  # it compiled


# ---------------------------------------------------------------- bad input


BAD_KERNELS = {
    "syntax.py": "import triton\n@triton.jit\ndef k(x_ptr:\n    pass\n",
    "notjit.py": "def k(x_ptr):\n    pass\n",
    "compile_error.py": textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, undefined_name)
    """),
}


@pytest.fixture()
def bad_files(tmp_path):
    for name, text in BAD_KERNELS.items():
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize("args, code, words", [
    (["compile", "matmull"], ExitCode.NOT_FOUND, "Did you mean: matmul"),
    (["compile", "nope/missing.py:k"], ExitCode.NOT_FOUND, "No such file"),
    (["compile", "matmul", "--arch", "sm_75"], ExitCode.NOT_FOUND, "Unsupported arch"),
    (["compile", "matmul", "-c", "BLOCKK=16"], ExitCode.BAD_KERNEL, "Did you mean: BLOCK"),
    (["compile", "matmul", "-c", "BLOCK"], ExitCode.USAGE, "expected NAME=VALUE"),
    (["compile", "matmul", "-c", "BLOCK=big"], ExitCode.BAD_KERNEL, "not a number"),
    (["compile", "matmul", "-c", "M=16"], ExitCode.BAD_KERNEL, "runtime argument"),
    (["compile", "matmul", "--stage", "ptxx"], ExitCode.USAGE, "Unknown stage"),
    (["compile", "matmul", "--dtype", "fp17"], ExitCode.USAGE, "Unknown dtype"),
    (["compile", "matmul", "--num-warps", "3"], ExitCode.USAGE, "power of two"),
    (["compile", "matmul_masked", "-c", "BLOCK_SIZE=128", "--stage", "none"], ExitCode.OUT_OF_RESOURCES,
     "393216 bytes of shared memory"),
])
def test_bad_input_gets_one_message_and_exit_code(args, code, words):
    result = runner.invoke(app, args)
    assert result.exit_code == int(code), result.output
    assert words in result.output
    assert "Traceback" not in result.output


def test_out_of_resources_names_the_limit():
    result = runner.invoke(app, ["compile", "matmul_masked", "-c", "BLOCK_SIZE=128", "--stage", "none"])
    assert "232448" in result.output.replace(",", "")


@pytest.mark.parametrize("file, code, words", [
    ("syntax.py:k", ExitCode.BAD_KERNEL, "Syntax error in syntax.py, line 3"),
    ("notjit.py:k", ExitCode.BAD_KERNEL, "not a @triton.jit function"),
    ("compile_error.py:k", ExitCode.COMPILE_ERROR, "undefined_name"),
    ("compile_error.py:kk", ExitCode.NOT_FOUND, "No kernel named 'kk'"),
])
def test_bad_kernel_files(bad_files, file, code, words):
    result = runner.invoke(app, ["compile", f"{bad_files}/{file}", "--arg", "x_ptr=*fp32", "-c", "BLOCK=16"])
    assert result.exit_code == int(code), result.output
    assert words in result.output
    assert "Traceback" not in result.output


def test_compile_error_points_at_the_python_line(bad_files):
    result = runner.invoke(app, ["compile", f"{bad_files}/compile_error.py:k", "--arg", "x_ptr=*fp32",
                                 "-c", "BLOCK=16"])
    assert "compile_error.py:8" in result.output
    assert "tl.store(x_ptr + offs, undefined_name)" in result.output


def test_missing_argument_description_says_how():
    result = runner.invoke(app, ["compile", f"{SAMPLES_DIR}/vector_add.py:add_kernel", "-c", "BLOCK=64",
                                 "--stage", "none", "--no-color", "--width", "200"])
    # the file declares EXAMPLES, so a user kernel path still gets its example launch: its arguments and size
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "x_ptr: *fp32" in text and "n_elements: i32" in text and "BLOCK: constexpr = 64" in text, result.output
    assert "problem 98432 fp32" in text, result.output


def test_user_kernel_without_examples_needs_args(tmp_path):
    (tmp_path / "k.py").write_text(textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def k(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, offs, mask=offs < n)
    """))
    result = runner.invoke(app, ["compile", f"{tmp_path}/k.py:k", "-c", "BLOCK=64"])
    assert result.exit_code == int(ExitCode.BAD_KERNEL)
    assert "--arg x_ptr=*fp16" in result.output and "--arg n=" in result.output
    result = runner.invoke(app, ["compile", f"{tmp_path}/k.py:k"])
    assert "Missing constexpr for k: BLOCK" in result.output


def test_missing_disassembler_warns_and_keeps_other_stages(monkeypatch, tmp_path):
    from tritonscope.triton_api import cubin

    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path))
    real = cubin.tool_path
    monkeypatch.setattr(cubin, "tool_path", lambda name, cap=None: None if name == "nvdisasm" else real(name, cap))
    result = runner.invoke(app, ["compile", "matmul", "--block", "16", "--arch", "sm_80", "--no-color"])
    assert result.exit_code == 0, result.output
    assert "nvdisasm was not found" in result.output
    assert "PTX" in result.output and "mma.sync" in result.output


def test_stages_name_the_users_file_even_after_an_identical_kernel_elsewhere(tmp_path):
    """Triton's cache key ignores the file; tritonscope recompiles so locations name this file."""
    import shutil

    from tritonscope.pipeline.triton_compile import compile_artifact
    from tritonscope.inputs.kernels import Request
    from tritonscope.pipeline.binding import build_spec

    copy = tmp_path / "copy_of_matmul.py"
    shutil.copy(SAMPLES_DIR / "matmul.py", copy)
    first = compile_artifact(build_spec(Request(f"{copy}:matmul_kernel", arch="sm_80"), "sm_80"))
    again = compile_artifact(build_spec(Request("matmul", arch="sm_80"), "sm_80"))
    assert str(copy) in first.stages["ttir"]
    assert str(SAMPLES_DIR / "matmul.py") in again.stages["ttir"]
    assert str(copy) not in again.stages["ttir"]
    assert first.kernel_hash == again.kernel_hash
