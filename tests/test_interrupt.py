"""Ctrl-C stops at once (exit 130), even while the main thread is inside C++ code (Triton's passes)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

# A stand-in for Triton's compiler: C code that releases the GIL and never checks for signals
# (OpenSSL's PBKDF2, about 10 s here), under the CLI's guard, with Ctrl-C pressed 0.3 s in.
INSIDE_C = """
import hashlib, os, signal, threading, time
from tritonscope.pipeline.interrupt import prompt_interrupt
threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
with prompt_interrupt():
    hashlib.pbkdf2_hmac("sha256", b"x", b"y", 30_000_000)
print("finished")
"""


def test_ctrl_c_inside_c_code_stops_within_a_second():
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", INSIDE_C], capture_output=True, text=True, timeout=120)
    took = time.perf_counter() - started
    assert proc.returncode == 130, proc.stderr
    assert "interrupted: stopped inside the compiler; nothing was written." in proc.stderr
    assert "finished" not in proc.stdout
    assert took < 5, f"{took:.1f} s"  # without the guard: the whole 10 s of C code, then KeyboardInterrupt


def test_ctrl_c_during_a_real_compile_exits_130(tmp_path):
    env = {**os.environ, "TRITON_CACHE_DIR": str(tmp_path / "triton"), "TRITONSCOPE_CACHE_DIR": str(tmp_path / "ts")}
    # a 256x256 tile over 2 warps for sm_80: about 13 s (Triton 3.6) to 20 s (3.9) of compiling here
    proc = subprocess.Popen([sys.executable, "-m", "tritonscope", "compile", "matmul", "--block", "256",
                             "--arch", "sm_80", "-w", "2", "--stage", "none", "--no-cache"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(4)  # inside the compile
    sent = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert time.perf_counter() - sent < 10
