"""Hostile review, round 11: failure reports (analyses/failure_model.py, outputs/portable.py, commands/show.py).

- A saved failure report edited by hand (a field of the wrong type, `failure: {}`) is reopened by `show` as a
  damaged report: one message naming the field, exit 7 (was exit 1: TypeError from Failure.from_dict).
- A saved failure report names no absolute path unless `--keep-paths` (was: `failure.file` and the IR's
  loc("/abs/...") kept), in every format; --json on stdout keeps them, as a compile's --json does.

The report is a real one: libdevice_on_amd.py fails in make_llir on Triton 3.6 and 3.9 (tests/test_failure.py).
"""

from __future__ import annotations

import copy
import json
import os

import pytest
from typer.testing import CliRunner

from conftest import DATA
from tritonscope import triton_api
from tritonscope.cli import app
from tritonscope.core.errors import ExitCode

runner = CliRunner()
KERNEL = DATA / "failing" / "libdevice_on_amd.py"
LIBDEVICE = [f"{KERNEL}:rsqrt_kernel", "--arch", "gfx942", "--arg", "x_ptr=*fp32", "--arg", "out_ptr=*fp32",
             "--arg", "n=1024", "-c", "BLOCK=256"]
FOLDER = str(KERNEL.parent)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """One failing compile, saved in every format, without and with --keep-paths; and its --json."""
    if not triton_api.has_backend("amd"):
        pytest.skip("this Triton has no amd backend")
    folder = tmp_path_factory.mktemp("failure")
    out = {}
    result = runner.invoke(app, ["compile", *LIBDEVICE, "--save", str(folder / "r.json"), "--json"])
    assert result.exit_code == ExitCode.COMPILE_ERROR, result.output
    out["stdout.json"] = result.stdout
    out["r.json"] = (folder / "r.json").read_text()
    kept = runner.invoke(app, ["compile", *LIBDEVICE, "--save", str(folder / "k.json"), "--keep-paths", "--json"])
    assert kept.exit_code == ExitCode.COMPILE_ERROR, kept.output
    out["k.json"] = (folder / "k.json").read_text()
    for ext in ("txt", "md", "html"):  # show saves it again (compile's --save is one path)
        for name, keep in ((f"r.{ext}", []), (f"k.{ext}", ["--keep-paths"])):
            again = runner.invoke(app, ["show", str(folder / "k.json"), "--save", str(folder / name), *keep])
            assert again.exit_code == 0, again.output
            out[name] = (folder / name).read_text()
    return out


# --- 1. a damaged report is exit 7, one message naming the field ---------------------------------------------

DAMAGED = [(field, value) for field in ("op", "diagnostics", "fixes", "reproducer", "earlier", "explanation")
           for value in (5, "x", [5])]


def _show(tmp_path, data) -> "object":
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(data))
    return runner.invoke(app, ["show", str(path)])


@pytest.mark.parametrize("field,value", DAMAGED, ids=[f"{f}={json.dumps(v)}" for f, v in DAMAGED])
def test_a_field_of_the_wrong_type_is_a_damaged_report(saved, tmp_path, field, value):
    data = json.loads(saved["r.json"])
    data["failure"][field] = value
    result = _show(tmp_path, data)
    assert result.exit_code == ExitCode.BAD_INPUT_FILE, result.output
    said = " ".join(result.stderr.split())
    assert "is a damaged failure report" in said and f"failure.{field}" in said, said
    assert "Traceback" not in result.output


@pytest.mark.parametrize("change,words", [
    (lambda f: f.clear(), "failure has no 'kernel'"),
    (lambda f: f.update(stage=5), "failure.stage is int 5, not a string"),
    (lambda f: f.update(file=None), "failure.file is null"),
    (lambda f: f["diagnostics"].append({"severity": "note"}), "has no 'message'"),
    (lambda f: f["diagnostics"].append({"severity": "note", "message": "m", "line": True}), "line is bool True"),
    (lambda f: f["fixes"].append({"label": "x", "flags": "-s 1", "compiles": "yes"}), "compiles is a string"),
    (lambda f: f.update(earlier=[["pass", "slow"]]), "failure.earlier[0] is not a pass's name"),
], ids=["failure={}", "stage=5", "file=null", "diagnostic-without-message", "line=true", "compiles=yes",
        "earlier-seconds-str"])
def test_other_damage_is_a_damaged_report(saved, tmp_path, change, words):
    data = json.loads(saved["r.json"])
    change(data["failure"])
    result = _show(tmp_path, data)
    assert result.exit_code == ExitCode.BAD_INPUT_FILE, result.output
    assert words in " ".join(result.stderr.split())


def test_unknown_keys_and_nested_notes_are_left_out(saved, tmp_path):
    """A key this version does not know (a diagnostic's nested `notes`, deep) is not read: the report shows."""
    data = json.loads(saved["r.json"])
    deep: list = []
    for _ in range(200):
        deep = [{"notes": deep}]
    data["failure"]["diagnostics"].append({"severity": "error", "message": "tampered", "notes": deep})
    data["failure"]["op"] = None  # an optional field left out
    result = _show(tmp_path, data)
    assert result.exit_code == 0, result.output
    assert "make_llir" in result.stdout and "rsqrt_kernel" in result.stdout and "tampered" in result.stdout


def test_the_untouched_report_shows(saved, tmp_path):
    result = _show(tmp_path, json.loads(saved["r.json"]))
    assert result.exit_code == 0, result.output
    assert "make_llir" in result.stdout


# --- 2. no absolute path in a saved failure report unless --keep-paths ---------------------------------------

@pytest.mark.parametrize("name", ["r.json", "r.txt", "r.md", "r.html"])
def test_a_saved_failure_report_names_no_absolute_path(saved, name):
    text = saved[name]
    assert FOLDER not in text, [ln for ln in text.splitlines() if FOLDER in ln][:3]
    assert "libdevice_on_amd.py" in text
    if name == "r.json":
        d = json.loads(text)
        assert d["paths"] == "relative to the kernel's folder"
        assert d["failure"]["file"] == "./libdevice_on_amd.py"
        assert 'loc("./libdevice_on_amd.py"' in d["failure"]["ir"]


def test_keep_paths_keeps_them(saved):
    d = json.loads(saved["k.json"])
    assert d["paths"] == "absolute" and d["failure"]["file"] == os.path.join(FOLDER, "libdevice_on_amd.py")
    assert f'loc("{FOLDER}/libdevice_on_amd.py"' in d["failure"]["ir"]
    # show --keep-paths of it keeps them too, where a format writes the IR whole (.txt shows an excerpt)
    assert FOLDER in saved["k.html"] or FOLDER in saved["k.md"]


def test_json_on_stdout_keeps_paths_as_a_compiles_json_does(saved):
    d = json.loads(saved["stdout.json"])
    assert d["failure"]["file"] == os.path.join(FOLDER, "libdevice_on_amd.py")


def test_a_relative_report_reopens_and_saves_the_same(saved, tmp_path):
    path = tmp_path / "r.json"
    path.write_text(saved["r.json"])
    again = runner.invoke(app, ["show", str(path), "--save", str(tmp_path / "again.json")])
    assert again.exit_code == 0, again.output
    assert "libdevice_on_amd.py" in again.stdout
    assert json.loads((tmp_path / "again.json").read_text())["failure"] == json.loads(saved["r.json"])["failure"]


# --- 3. compile --line past the end of the kernel's file: exit 2 before the compile -----------------------------

@pytest.mark.parametrize("line", ["500", str(10**23)])
def test_line_past_the_file_is_refused_before_the_compile(line):
    result = runner.invoke(app, ["compile", "vector_add", "--line", line, "--stage", "none"])
    assert result.exit_code == ExitCode.USAGE, result.output
    assert f"--line {line}: vector_add.py has" in " ".join(result.stderr.split())
    assert "compiled in" not in result.stdout and "add_kernel" not in result.stdout  # no summary: no compile


def test_line_in_the_file_outside_the_kernel_is_still_refused_after_reading_it():
    result = runner.invoke(app, ["compile", "vector_add", "--line", "2", "--stage", "none"])
    assert result.exit_code == ExitCode.USAGE, result.output
    assert "Line 2 is not part of add_kernel" in " ".join(result.stderr.split())
