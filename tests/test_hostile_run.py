"""Issue 23, hostile user: a compile that hangs or is interrupted stops when asked, at once."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from tritonscope.cli import app
from tritonscope.errors import ExitCode

runner = CliRunner()

HANGING_IMPORT = """\
import time

import triton
import triton.language as tl

time.sleep(3600)  # a module-level call that never returns


@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
"""


def test_timeout_covers_the_kernel_files_import(tmp_path):
    kernel = tmp_path / "hang.py"
    kernel.write_text(HANGING_IMPORT)
    out = tmp_path / "r.json"
    started = time.perf_counter()
    try:  # in a process of its own: before the fix, the import hung this one
        proc = subprocess.run([sys.executable, "-m", "tritonscope", "compile", f"{kernel}:k", "--arg", "x_ptr=*fp32",
                               "-c", "BLOCK=16", "--timeout", "2", "--stage", "none", "--save", str(out)],
                              capture_output=True, text=True, timeout=60, start_new_session=True)
    except subprocess.TimeoutExpired:
        pytest.fail("--timeout 2 did not stop a kernel file whose import hangs")
    assert proc.returncode == ExitCode.TIMEOUT, proc.stderr
    assert "did not finish within 2 s" in " ".join(proc.stderr.split())
    assert time.perf_counter() - started < 30
    assert not out.exists()
