"""Every `tritonscope ...` example in README.md runs, in order, with the exit code it promises.

Examples live in ```bash fences and in indented blocks.  `# exits N` after
an example names its expected exit code; commands that need a CUDA GPU
(`bench`, `run` without --interpret) must exit 9 (no GPU) on this machine.
"""

from __future__ import annotations

import re
import shlex

from typer.testing import CliRunner

from conftest import ROOT
from tritonscope.cli import app
from tritonscope.errors import ExitCode


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


def test_readme_examples_run(tmp_path, monkeypatch):
    (tmp_path / "samples").symlink_to(ROOT / "samples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("tritonscope.triton_api.local_gpu_capability", lambda: None)
    runner = CliRunner()
    failures = []
    for example in EXAMPLES:
        code_text, _, comment = example.partition(" #")
        words = shlex.split(code_text)
        expected = re.search(r"exits (\d+)", comment)
        want = int(expected.group(1)) if expected else 0
        if _needs_gpu(words):
            want = int(ExitCode.NO_GPU)
            if re.search(r"--save \S+\.(png|svg)", code_text) and not _has_matplotlib():
                want = int(ExitCode.USAGE)  # refused up front: the plot extra is missing
        result = runner.invoke(app, words[1:] + ([] if "--width" in words else ["--width", "120"])
                               if words[1] in ("compile", "show") else words[1:])
        if result.exit_code != want:
            failures.append(f"{example}\n  exit {result.exit_code}, wanted {want}\n  {result.output[-600:]}")
    assert not failures, "\n\n".join(failures)


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
