"""`compile --triton/--python` and `sweep --triton`: another Triton as the side of a single compile.

No test installs a Triton.  The child protocol runs end to end with an environment pointed to by path: this
very Python (always there), and /work/venv36 (Triton 3.6) where it exists (skipped elsewhere, with the reason).
Bad input (a value that is no version, too old a version, a missing or broken Python, an unknown version pip
does not have, combinations that cannot work) is checked without any network.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tritonscope.core.errors import UsageError
from tritonscope.versions import envs as E
from tritonscope.versions import sides

VENV36 = Path("/work/venv36/bin/python")


@pytest.fixture
def run_cli():
    from typer.testing import CliRunner

    from tritonscope.cli import app

    return lambda *args: CliRunner().invoke(app, list(args))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_triton_choice():
    assert sides.triton_choice(None, None) is None
    assert sides.triton_choice("3.6.0", None) == "3.6.0"
    assert sides.triton_choice(None, "./venv/bin/python") == "./venv/bin/python"
    with pytest.raises(UsageError, match="not both"):
        sides.triton_choice("3.6.0", "/x/python")
    with pytest.raises(UsageError, match="not a path"):
        sides.triton_choice(None, "3.6.0")
    with pytest.raises(UsageError):
        sides.triton_choice("  ", None)


def test_bad_values_fail_before_any_compile(run_cli, cache, tmp_path):
    r = run_cli("compile", "matmul", "--triton", "banana", "--stage", "none")
    assert r.exit_code == 2 and "not a Triton version" in r.output
    r = run_cli("compile", "matmul", "--triton", "3.1.0", "--stage", "none")
    assert r.exit_code == 2 and "3.2 or newer" in r.output
    r = run_cli("compile", "matmul", "--triton", str(tmp_path / "nope" / "python"), "--stage", "none")
    assert r.exit_code == 3 and "no such file" in r.output
    broken = tmp_path / "py"
    broken.write_text("#!/bin/sh\necho 'ModuleNotFoundError: No module named triton' >&2; exit 1\n")
    broken.chmod(0o755)
    r = run_cli("compile", "matmul", "--python", str(broken), "--stage", "none")
    assert r.exit_code == 3 and "cannot import triton" in r.output
    r = run_cli("compile", "matmul", "--triton", "3.6.0", "--passes", "--stage", "none")
    assert r.exit_code == 2 and "--passes" in r.output
    r = run_cli("compile", "matmul", "--triton", "3.6.0", "--python", "/x/python")
    assert r.exit_code == 2
    r = run_cli("sweep", "matmul", "-c", "BLOCK=16,32", "--triton", "3.6.0", "--scheduler", "local")
    assert r.exit_code == 2 and "--scheduler" in r.output
    assert not (cache / "triton-envs").exists() or list((cache / "triton-envs").iterdir()) == []


def test_unknown_version_is_one_line_and_leaves_nothing(run_cli, cache, monkeypatch):
    """pip has no such release (pip faked: no network): exit 3, the versions pip offers, no half environment."""
    import venv

    def create(self, path):
        os.makedirs(f"{path}/bin", exist_ok=True)
        Path(f"{path}/bin/python").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
        os.chmod(f"{path}/bin/python", 0o755)

    monkeypatch.setattr(venv.EnvBuilder, "create", create)
    real = subprocess.Popen
    said = ("ERROR: Could not find a version that satisfies the requirement triton==3.2.7 (from versions: 3.2.0, "
            "3.3.1, 3.6.0)\nERROR: No matching distribution found for triton==3.2.7")

    def popen(cmd, *a, **k):
        if "pip" in cmd and "install" in cmd:
            cmd = [sys.executable, "-c", f"import sys; print({said!r}); sys.exit(1)"]
        return real(cmd, *a, **k)

    monkeypatch.setattr(E.subprocess, "Popen", popen)
    r = run_cli("compile", "vector_add", "--triton", "3.2.7", "--stage", "none")
    assert r.exit_code == 3 and "no such release" in r.output and "Traceback" not in r.output
    assert list((cache / "triton-envs").iterdir()) == []


def _compile_json(run_cli, *args) -> dict:
    r = run_cli("compile", "vector_add", "--arch", "sm_90a", "--json", *args)
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_compile_with_this_python_by_path(run_cli, cache):
    """--python PATH: the compile runs in a child of that interpreter and comes back as an ordinary report."""
    data = _compile_json(run_cli, "--python", sys.executable)
    import triton

    assert data["artifact"]["triton_version"] == triton.__version__
    assert "sass" in data["artifact"]["stages"] or "ptx" in data["artifact"]["stages"]


@pytest.mark.skipif(not VENV36.exists(), reason="no Triton 3.6 environment at /work/venv36 on this machine")
def test_compile_and_sweep_with_triton_36_by_path(run_cli, cache):
    data = _compile_json(run_cli, "--triton", str(VENV36))
    assert data["artifact"]["triton_version"] == "3.6.0"
    r = run_cli("sweep", "vector_add", "-c", "BLOCK=256,1024", "--arch", "gfx942", "--triton", str(VENV36),
                "--jobs", "2", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["triton"]["version"] == "3.6.0"
    assert [row["ok"] for row in out["rows"]] == [True, True] and out["rows"][0]["registers"]


def test_sweep_with_this_python_by_path(run_cli, cache):
    r = run_cli("sweep", "vector_add", "-c", "BLOCK=256,1024", "--arch", "sm_90a", "--python", sys.executable,
                "--jobs", "1", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert [row["ok"] for row in out["rows"]] == [True, True]
    assert out["rows"][0]["config"].startswith("BLOCK=256") and out["rows"][1]["registers"]
