"""Every `tritonscope ...` example in README.md runs, in order, with the exit code it promises.

Examples live in ```bash fences and in indented blocks.  `# exits N` after
an example names its expected exit code; commands that need a CUDA GPU
(`bench`, `run` without --interpret) must exit 9 (no GPU) on this machine.
"""

from __future__ import annotations

import re
import shlex

import pytest
from typer.testing import CliRunner

from conftest import ROOT
from tritonscope.cli import app
from tritonscope.core.errors import ExitCode


def readme_examples() -> list[str]:
    """`tritonscope ...` lines from ```bash fences (not the ci: set-up blocks) and indented blocks."""
    out, fence, previous = [], None, ""
    for line in (ROOT / "README.md").read_text().splitlines():
        if line.startswith("```"):
            if fence is None:
                fence = "ci" if previous.startswith("<!-- ci:") else line.strip()
            else:
                fence = None
            continue
        previous = line if line.strip() else previous
        text = line.strip()
        if text.startswith("tritonscope ") and (fence == "```bash" or (fence is None and line.startswith("    "))):
            out.append(text)
    return out


EXAMPLES = readme_examples()


def test_readme_has_examples():
    assert len(EXAMPLES) > 20
    assert "tritonscope compile matmul --block 16" in [e.split("#")[0].strip() for e in EXAMPLES]


def _needs_gpu(words: list[str]) -> bool:
    return words[1] == "bench" or (words[1] == "run" and "--interpret" not in words)


def _has_matplotlib() -> bool:
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


@pytest.fixture(scope="module")
def readme_dir(tmp_path_factory):
    """One folder for all the examples: a later one reads what an earlier one saved (`show r.json`)."""
    folder = tmp_path_factory.mktemp("readme")
    (folder / "samples").symlink_to(ROOT / "samples")
    return folder


def _example_id(i: int, example: str) -> str:
    words = re.sub(r"[^A-Za-z0-9_.=,-]+", "_", example.partition(" #")[0].removeprefix("tritonscope ").strip())
    return f"{i:02d}-{words[:60]}"


# Each example is its own test (one failure never hides the next).  They run in README order and in one
# process, because later examples read what earlier ones saved: the README's test command spreads the
# suite over workers file by file (`pytest -n auto --dist loadfile`).
@pytest.mark.parametrize("example", EXAMPLES, ids=[_example_id(i, e) for i, e in enumerate(EXAMPLES)])
def test_readme_example(example, readme_dir, monkeypatch):
    monkeypatch.chdir(readme_dir)
    monkeypatch.setattr("tritonscope.triton_api.local_gpu_capability", lambda: None)
    code_text, _, comment = example.partition(" #")
    words = shlex.split(code_text)
    expected = re.search(r"exits (\d+)", comment)
    want = int(expected.group(1)) if expected else 0
    if _needs_gpu(words):
        want = int(ExitCode.NO_GPU)
        if re.search(r"--save \S+\.(png|svg)", code_text) and not _has_matplotlib():
            want = int(ExitCode.USAGE)  # refused up front: the plot extra is missing
    result = CliRunner().invoke(app, words[1:] + ([] if "--width" in words else ["--width", "120"])
                                if words[1] in ("compile", "show") else words[1:])
    assert result.exit_code == want, f"{example}\n  exit {result.exit_code}, wanted {want}\n  {result.output[-600:]}"


def test_every_command_is_registered_and_documented():
    """cli.COMMANDS is the one list of commands; each has --help and is in the README."""
    from tritonscope.cli import COMMANDS

    runner = CliRunner()
    readme = (ROOT / "README.md").read_text()
    for name in COMMANDS:
        result = runner.invoke(app, [name, "--help"])
        assert result.exit_code == 0 and "Usage:" in result.output, name
        assert f"tritonscope {name}" in readme, f"README never mentions `tritonscope {name}`"
    listed = runner.invoke(app, ["--help"]).output
    assert all(name in listed for name in COMMANDS)
