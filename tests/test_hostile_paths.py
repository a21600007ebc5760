"""Issue 23, hostile user: no absolute path in a saved report unless --keep-paths.

Two leaks: a `compile --passes` report kept MLIR_DUMP_PATH, a temporary
folder, in its metadata; a kernel folder whose name holds an escape sequence
kept its full path in PTX `.file` and SASS `//## File` lines, which write
the control character as octal (`e\\033[31mx`) while the report knew the
folder only by its sanitized name (`e\\x1b[31mx`).
"""

from __future__ import annotations

import json
import tempfile

from typer.testing import CliRunner

from conftest import ROOT
from tritonscope.cli import app

runner = CliRunner()
VECTOR_ADD = (ROOT / "samples" / "vector_add.py").read_text()


def test_a_passes_report_keeps_no_temporary_folder(tmp_path):
    out = tmp_path / "p.json"
    result = runner.invoke(app, ["compile", "matmul", "--block", "16", "--arch", "sm_80", "--passes", "--stage",
                                 "none", "--save", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    meta = json.loads(text)["artifact"]["metadata"]
    assert "MLIR_DUMP_PATH" not in meta or meta["MLIR_DUMP_PATH"].startswith("<tmp>/"), meta.get("MLIR_DUMP_PATH")
    assert tempfile.gettempdir() + "/" not in text


def test_a_folder_named_with_an_escape_sequence_is_written_relative(tmp_path):
    folder = tmp_path / "e\x1b[31mx"
    folder.mkdir()
    (folder / "vector_add.py").write_text(VECTOR_ADD)
    spellings = [str(tmp_path), str(tmp_path).replace("\x1b", "\\033")]
    for ext in ("json", "html", "md", "txt"):
        out = tmp_path / f"r.{ext}"
        result = runner.invoke(app, ["compile", f"{folder}/vector_add.py", "--arch", "sm_80", "--stage", "none",
                                     "--save", str(out)])
        assert result.exit_code == 0, result.output
        text = out.read_text()
        for spelling in spellings:
            assert spelling not in text, (ext, spelling)
        if ext == "json":
            stages = json.loads(text)["artifact"]["stages"]
            assert '.file\t1 "./vector_add.py"' in stages["ptx"].replace("\\\\", "\\") or \
                   './vector_add.py"' in stages["ptx"]
            assert '//## File "./vector_add.py"' in stages["sass"]
    kept = tmp_path / "kept.json"
    assert runner.invoke(app, ["compile", f"{folder}/vector_add.py", "--arch", "sm_80", "--stage", "none",
                               "--save", str(kept), "--keep-paths"]).exit_code == 0
    assert str(tmp_path).replace("\x1b", "\\033") + "/e\\033[31mx" in json.loads(kept.read_text())["artifact"]["stages"]["sass"]
