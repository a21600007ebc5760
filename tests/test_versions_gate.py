"""Issue 33: `versions` reports are safe with hostile kernel keys, and its CI gate never passes on a typo.

- A `--replay` record is anyone's file: its kernel keys, labels and errors reach every format escaped
  (no raw `<script>`, ESC or NUL), and the JUnit XML stays well-formed.
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tritonscope.cli import app

DATA = Path(__file__).parent / "data" / "versions"
MOE = DATA / "moe_gfx950_3.4_3.6"
HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>\x1b]52;c;SGVsbG8=\x07\x00[/bold]|`*_\ud800\uffff"


def invoke(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture
def hostile_record(tmp_path):
    """The MOE record, its kernel keys, labels and an error replaced by hostile text."""
    folder = tmp_path / "rec"
    shutil.copytree(MOE, folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["sides"][0]["label"] += HOSTILE
    job = manifest["jobs"][0]
    job["key"] = "k" + HOSTILE
    failing = {"message": "boom " + HOSTILE, "line": "boom " + HOSTILE, "context": HOSTILE}
    manifest["jobs"].append({"key": "both" + HOSTILE, "arch": "gfx950",
                             "sides": [{"error": failing}, {"error": failing}]})
    manifest["jobs"].append({"key": "b-only" + HOSTILE, "arch": "gfx950",
                             "sides": [{"artifact": job["sides"][0]["artifact"]}, {"error": failing}]})
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


@pytest.mark.parametrize("ext", ["md", "html", "txt", "json"])
def test_a_hostile_record_is_escaped_in_every_format(hostile_record, tmp_path, ext):
    out = tmp_path / f"v.{ext}"
    junit = tmp_path / "v.xml"
    result = invoke("versions", "--replay", hostile_record, "--fail-on", "drains>+0", "--save", out,
                    "--junit", junit)
    assert result.exit_code == 10, result.output  # B fails where A compiles: a regression
    raw = out.read_bytes()
    for bad in (b"\x1b", b"\x00", b"\x07") + ((b"<script", b"<img") if ext in ("md", "html") else ()):
        assert bad not in raw, (ext, bad)  # tags are only markup in Markdown and HTML
    text = raw.decode("utf-8")  # a lone surrogate was written out, not an encoding error
    if ext == "json":
        rows = json.loads(text)["rows"]
        assert any(r["kernel"].startswith("k<script>") for r in rows)  # JSON keeps the data, escaped by JSON
    else:
        assert "script" in text and "alert(1)" in text  # shown, as text
    if ext == "md":
        assert "&lt;script&gt;" in text and "\\|" in text and "\\x1b" in text
    suite = ET.parse(junit).getroot()  # well-formed despite the control characters
    names = [c.get("name") for c in suite.iter("testcase")]
    assert any(n.startswith("k<script>") and "\\x1b" in n and "\\x00" in n for n in names)
    assert "\x1b" not in result.output and "\x00" not in result.output  # the terminal: no raw controls


# --------------------------------------------------------------------------
# The CI gate: a typo exits 3 before any environment is made; failing in both versions breaks --fail-on
# --------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["./kernels/", "nothere.py:k", "matmull", "nothere/more.py"])
def test_a_missing_target_exits_3_before_any_environment_work(tmp_path, monkeypatch, target):
    from tritonscope.versions import envs as E

    made = []

    def resolve(version, **kw):  # making an environment would run pip: it must not be reached
        made.append(version)
        raise AssertionError("an environment was made for a target that is not there")

    monkeypatch.setattr(E, "resolve", resolve)
    monkeypatch.chdir(tmp_path)
    result = invoke("versions", target, "--a", "3.4.0", "--b", "3.6.0", "--fail-on", "spills>0",
                    "--junit", "v.xml")
    assert result.exit_code == 3, result.output
    assert made == [] and not (tmp_path / "v.xml").exists()
    if target == "matmull":
        assert "Unknown sample" in result.output and "matmul" in result.output


def test_a_kernel_failing_in_both_versions_breaks_fail_on(tmp_path):
    """matmul_persistent uses tl.make_tensor_descriptor, which neither Triton 3.2 nor 3.3 has."""
    junit = tmp_path / "v.xml"
    result = invoke("versions", "--replay", DATA / "matmul_3.2_3.3", "--fail-on", "spills>0", "--junit", junit)
    assert result.exit_code == 10, result.output
    suite = ET.parse(junit).getroot()
    failed = {c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None}
    assert failed == {"matmul_persistent [sm_90a]", "matmul_persistent [gfx942]"}
    assert suite.get("failures") == "2"
    assert invoke("versions", "--replay", DATA / "matmul_3.2_3.3").exit_code == 0  # no gate: the report only
