"""Issue 23, hostile user: a compile that hangs or is interrupted stops when asked, at once."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from tritonscope.cli import app
from tritonscope.core.errors import ExitCode

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


def test_emit_on_a_full_disk_writes_nothing(tmp_path, monkeypatch):
    """Issue 23: --emit on a full disk left 3 of 8 files, a folder `open` then accepted as a kernel."""
    import errno

    from tritonscope.core import output

    real = output._write_via_temp
    calls = []

    def disk_fills_up(path, data, **kw):
        if str(tmp_path) in str(path):
            calls.append(path.name)
            if len(calls) == 4:
                raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, data, **kw)

    monkeypatch.setattr(output, "_write_via_temp", disk_fills_up)
    out = tmp_path / "new" / "out"
    result = runner.invoke(app, ["compile", "matmul", "--block", "16", "--arch", "sm_80", "--stage", "none",
                                 "--emit", str(out)])
    assert result.exit_code == ExitCode.OUTPUT_ERROR, result.output
    said = " ".join(result.output.split())
    assert f"Cannot write into {out}" in said and "No space left on device" in said and "Nothing was written" in said
    assert ".partial" not in said
    assert len(calls) == 4 and not (tmp_path / "new").exists(), list(tmp_path.rglob("*"))

    # into a folder that was there, beside a file of the user's: that file stays, nothing is added
    out.mkdir(parents=True)
    (out / "mine.txt").write_text("mine")
    calls.clear()
    result = runner.invoke(app, ["compile", "matmul", "--block", "16", "--arch", "sm_80", "--stage", "none",
                                 "--emit", str(out)])
    assert result.exit_code == ExitCode.OUTPUT_ERROR, result.output
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt"]

    monkeypatch.setattr(output, "_write_via_temp", real)
    result = runner.invoke(app, ["compile", "matmul", "--block", "16", "--arch", "sm_80", "--stage", "none",
                                 "--emit", str(out)])
    assert result.exit_code == 0, result.output
    assert len(list(out.iterdir())) >= 8 and not list(out.glob(".*"))
