"""Issue 33, hostile user: a kernel's module cannot plant code, move a write or corrupt --json.

- A recompile of a captured kernel wrote its module to a fixed folder in the
  shared temporary folder and imported whatever file it found there: another
  local user could plant one.
- A kernel module that calls os.chdir() at import sent a relative --save or
  --emit into the folder it changed to.
- A print() at a kernel module's import went to stdout, into --json.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile

import pytest
from typer.testing import CliRunner

from conftest import ROOT
from tritonscope.cli import app

runner = CliRunner()
VECTOR_ADD = (ROOT / "samples" / "vector_add.py").read_text()


def test_a_recompile_never_imports_a_planted_captured_module(tmp_path, monkeypatch):
    from tritonscope.inputs.sources.recompile import _captured_function

    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    digest = hashlib.sha256(VECTOR_ADD.encode()).hexdigest()[:16]
    planted = shared / f"tritonscope-captured-{digest}"  # the name the old code used, known in advance
    planted.mkdir()
    marker = tmp_path / "planted-code-ran"
    (planted / "vector_add.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    record = {"module_text": VECTOR_ADD, "file": str(tmp_path / "gone" / "vector_add.py"),
              "name": "add_kernel", "qualname": "add_kernel"}
    monkeypatch.delitem(sys.modules, f"_tritonscope_captured_{digest}", raising=False)
    try:
        fn = _captured_function(record)
    finally:
        sys.modules.pop(f"_tritonscope_captured_{digest}", None)
    assert not marker.exists()
    assert fn.__name__ == "add_kernel" and "def add_kernel" in fn.src
    assert [p.name for p in shared.iterdir()] == [planted.name]  # its own private folder is gone again


def test_a_chdir_at_import_does_not_move_a_relative_save_or_emit(tmp_path, monkeypatch):
    start, elsewhere = tmp_path / "start", tmp_path / "elsewhere"
    start.mkdir()
    elsewhere.mkdir()
    (start / "moving.py").write_text(f"import os\nos.chdir({str(elsewhere)!r})\n" + VECTOR_ADD)
    monkeypatch.chdir(start)  # and back after the test, wherever the kernel's import went
    result = runner.invoke(app, ["compile", "moving.py:add_kernel", "--arch", "sm_80", "--stage", "none",
                                 "--save", "r.json", "--emit", "out"])
    assert result.exit_code == 0, result.output
    assert (start / "r.json").is_file() and (start / "out").is_dir()
    assert list(elsewhere.iterdir()) == []


# --------------------------------------------------------------------------
# A print() at a kernel module's import goes to stderr: stdout may be --json
# --------------------------------------------------------------------------

NOISY = VECTOR_ADD + '\nprint("hello from the import")\n'


def test_prints_to_stderr_moves_python_prints():
    import io
    from contextlib import redirect_stderr

    from tritonscope.core.console import prints_to_stderr

    out, err = io.StringIO(), io.StringIO()
    with redirect_stderr(err):
        import contextlib

        with contextlib.redirect_stdout(out), prints_to_stderr():
            print("from the module")
        print("ours", file=out)
    assert out.getvalue() == "ours\n" and err.getvalue() == "from the module\n"


def test_prints_to_stderr_moves_writes_to_file_descriptor_1():
    import subprocess

    code = ("import os\nfrom tritonscope.core.console import prints_to_stderr\n"
            "with prints_to_stderr():\n    print('printed')\n    os.write(1, b'written\\n')\nprint('ours')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ours\n" and done.stderr == "printed\nwritten\n"


def test_a_print_at_a_captured_modules_import_goes_to_stderr(tmp_path, capsys):
    from tritonscope.inputs.sources.recompile import _captured_function

    digest = hashlib.sha256(NOISY.encode()).hexdigest()[:16]
    record = {"module_text": NOISY, "file": str(tmp_path / "gone" / "noisy.py"), "name": "add_kernel",
              "qualname": "add_kernel"}
    try:
        _captured_function(record)
    finally:
        sys.modules.pop(f"_tritonscope_captured_{digest}", None)
    captured = capsys.readouterr()
    assert "hello from the import" in captured.err and "hello" not in captured.out


JSON_COMMANDS = {
    "compile": ["--arch", "sm_80", "--stage", "none", "--json"],
    "sweep": ["-c", "BLOCK=64,128", "--arch", "sm_80", "--json"],
    "diff": ["--a", "BLOCK=64", "--b", "BLOCK=128", "--arch", "sm_80", "--stage", "none", "--json"],
    "explain": ["--arch", "sm_80", "--json"],
}


@pytest.mark.parametrize("command", sorted(JSON_COMMANDS))
def test_a_print_at_a_kernel_modules_import_does_not_corrupt_json(tmp_path, command):
    kernel = tmp_path / f"noisy_{command}.py"  # a file per command: each imports it afresh
    kernel.write_text(NOISY)
    result = runner.invoke(app, [command, f"{kernel}:add_kernel", *JSON_COMMANDS[command]])
    assert result.exit_code == 0, result.output
    json.loads(result.stdout)
    assert "hello from the import" in result.stderr
