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
