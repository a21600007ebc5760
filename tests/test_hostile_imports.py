"""Issue 33, hostile user: a kernel's module cannot plant code, move a write or corrupt --json.

- A recompile of a captured kernel wrote its module to a fixed folder in the
  shared temporary folder and imported whatever file it found there: another
  local user could plant one.
"""

from __future__ import annotations

import hashlib
import sys
import tempfile

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
