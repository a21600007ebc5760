"""Issue 23, hostile user: every cache is keyed by what the user's paths name now.

A module the kernel imports through a symlink: after the link is repointed,
a repeat must show the new module's code (the result cache checked the file
the link named when the entry was stored).  Run as the user runs it, one
process per command, so that each compile imports afresh.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

from test_result_cache import HELPER, KERNEL


def _compile(folder, cache) -> subprocess.CompletedProcess:
    env = {**os.environ, "TRITONSCOPE_CACHE_DIR": str(cache), "PYTHONPATH": str(folder), "NO_COLOR": "1"}
    for name in ("TRITONSCOPE_RESULT_CACHE", "TRITON_ALWAYS_COMPILE", "TRITONSCOPE_REPLAY"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "tritonscope", "compile", "k.py:add_kernel", "--arg",
                           "x_ptr=*fp32", "--arg", "out_ptr=*fp32", "--arg", "n=1024", "-c", "BLOCK=128",
                           "--arch", "sm_80", "--stage", "ttir", "--width", "120"],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=300)


def test_a_helper_module_behind_a_symlink_is_read_through_the_link(tmp_path):
    helper = f"hc_helper_{uuid.uuid4().hex[:8]}"
    (tmp_path / "k.py").write_text(KERNEL.format(helper=helper))
    (tmp_path / "times2.py").write_text(HELPER)
    (tmp_path / "times3.py").write_text(HELPER.replace("x * 2", "x * 3"))
    link = tmp_path / f"{helper}.py"
    link.symlink_to(tmp_path / "times2.py")
    cache = tmp_path / "cache"
    first = _compile(tmp_path, cache)
    assert first.returncode == 0, first.stderr
    assert "2.000000e+00" in first.stdout
    link.unlink()
    link.symlink_to(tmp_path / "times3.py")
    again = _compile(tmp_path, cache)
    assert again.returncode == 0, again.stderr
    assert "3.000000e+00" in again.stdout and "2.000000e+00" not in again.stdout, \
        "the cache answered with the module the link named before"
