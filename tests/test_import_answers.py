"""What a library asks torch at import, answered for the target (issue 32, item 6).

The zoo's pattern kernels (tests/zoo/patterns/torch_version_gate.py, raw_stream_import.py) are the
libraries' own style: a kernel family defined only when `torch.version.cuda` allows it, and a stream per
device cached at import with `torch._C._cuda_getCurrentRawStream(i)`.  Here: what the summary's
`import asked` row says of them, that the gate follows the arch within one process, that torch is put
back afterwards, and the message for a library that runs `nvidia-smi` to learn the vendor.
"""

from __future__ import annotations

import shlex
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tritonscope.cli import app
from tritonscope.core.errors import ExitCode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "zoo"))
import manifest  # noqa: E402

runner = CliRunner()
torch = pytest.importorskip("torch")


def _compile(entry_name: str, arch: str):
    entry = next(e for e in manifest.ZOO if e["name"] == entry_name)
    argv = ["compile", entry["target"], *shlex.split(manifest.args_for(entry, arch)), "--arch", arch,
            "--stage", "none", "--no-color", "--width", "400"]
    result = runner.invoke(app, argv)
    return result.exit_code, " ".join(result.output.split())


def _has_amd() -> bool:
    from tritonscope import triton_api

    return triton_api.has_backend("amd")


def test_torch_version_cuda_is_tritons_ptxas_and_the_gate_follows_the_arch(monkeypatch):
    from tritonscope import triton_api

    monkeypatch.chdir(ROOT)
    cuda = triton_api.ptxas_version(triton_api.tool_path("ptxas"))
    assert cuda and tuple(int(v) for v in cuda.split(".")) >= (12, 8)
    code, out = _compile("pattern_torch_version_gate", "sm_100a")
    assert code == 0, out
    assert f"import asked the CUDA version ({cuda}, Triton's ptxas): answered as sm_100a's reference GPU" in out
    if _has_amd():  # the same process: the file is imported again for gfx942, where a ROCm torch has no CUDA
        code, out = _compile("pattern_torch_version_gate", "gfx942")
        assert code == ExitCode.NOT_FOUND and "No kernel named 'mx_quantize_fp8'" in out, out
        assert "Its import asked the CUDA version (none)" in out
    code, out = _compile("pattern_torch_version_gate", "sm_90a")
    assert code == 0 and "mx_quantize_fp8" in out, out
    assert torch.version.cuda is None and "__getattr__" not in vars(torch.version)  # a CPU torch, put back


def test_a_raw_stream_query_at_import_is_answered(monkeypatch):
    monkeypatch.chdir(ROOT)
    for arch in ("sm_90a", "gfx942") if _has_amd() else ("sm_90a",):
        code, out = _compile("pattern_raw_stream_import", arch)
        assert code == 0, out
        assert f"import asked the current stream: answered as {arch}'s reference GPU" in out
    from tritonscope.inputs.kernels import load_module

    module = load_module(ROOT / "tests" / "zoo" / "patterns" / "raw_stream_import.py", "sm_90a")
    assert module.STREAMS == {0: 0}
    assert not hasattr(torch._C, "_cuda_getCurrentRawStream")  # gone again: this torch has none


def test_torch_versions_and_queries_while_importing(tmp_path):
    """The values a file sees, read at its module level, on each backend."""
    kernel = tmp_path / "asks_torch.py"
    kernel.write_text(textwrap.dedent("""
        import torch
        import triton
        import triton.language as tl
        from torch.version import cuda as CUDA

        HIP = torch.version.hip
        ARCHES = torch.cuda.get_arch_list()
        STREAM = torch._C._cuda_getCurrentStream(0)
        DEFAULT = torch._C._cuda_getDefaultStream(0)

        @triton.jit
        def k(x_ptr, V: tl.constexpr):
            tl.store(x_ptr, V)
    """))
    from tritonscope.inputs.kernels import load_module

    nvidia = load_module(kernel, "sm_90a")
    assert nvidia.CUDA and nvidia.HIP is None and nvidia.ARCHES == ["sm_90"]
    assert nvidia.STREAM == (0, 0, 1) and nvidia.DEFAULT == (0, 0, 1)
    if _has_amd():
        amd = load_module(kernel, "gfx942")
        assert amd.CUDA is None and amd.HIP.startswith("7.") and amd.ARCHES == ["gfx942"]
    assert torch.version.cuda is None and torch.version.hip is None


def test_a_library_that_runs_nvidia_smi_is_told_how_to_set_the_vendor(tmp_path):
    (tmp_path / "vendlib.py").write_text(textwrap.dedent("""
        import os
        import subprocess

        def vendor():
            forced = os.environ.get("VENDLIB_DEVICE")
            if forced:
                return forced
            return subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout

        VENDOR = vendor()
    """))
    kernel = tmp_path / "uses_vendlib.py"
    kernel.write_text(textwrap.dedent("""
        import triton
        import triton.language as tl
        from vendlib import VENDOR

        @triton.jit
        def k(x_ptr):
            tl.store(x_ptr, 1.0)
    """))
    import shutil

    if shutil.which("nvidia-smi"):
        pytest.skip("this machine has nvidia-smi")
    result = runner.invoke(app, ["compile", f"{kernel}:k", "--arg", "x_ptr=*fp32", "--stage", "none",
                                 "--width", "200"])
    out = " ".join(result.output.split())
    assert result.exit_code == ExitCode.BAD_KERNEL, out
    assert "vendlib.py:9 runs `nvidia-smi` to find the GPU vendor" in out
    assert "reads VENDLIB_DEVICE" in out and "VENDLIB_DEVICE=cuda" in out
