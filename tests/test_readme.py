"""Every `tritonscope ...` example in README.md and docs/*.md runs, in order, and prints what the page shows.

The conventions a page follows (write new examples this way):

- An example is a line starting with `tritonscope ` in a ```bash fence (not a `<!-- ci:NAME -->` set-up
  block) or in an indented (4-space) block.  `# exits N` after it names its expected exit code (else 0).
  Commands that need a CUDA GPU (`bench`, `run` without --interpret) must exit 9 (no GPU) here.
  Examples in ```text fences are not run (a real cache's path, a program to capture, a GPU's output).
  Without PyTorch (a bare `pip install -e .`), `run --interpret` examples are skipped with the reason, and so
  are examples that compile a kernel of a project that is not installed (`liger_kernel.ops...:kernel`).
- An output block is a ```text fence right after the line `<!-- output -->`: it shows what the last
  example of the ```bash fence just above it prints, and is compared with it.  `<!-- output: partial -->`
  marks an abridged block: each line it shows must appear in the output, in order (a `...` line is skipped).
- Every example of one page runs in order, in one fresh folder (a later example reads what an earlier
  one saved), with `samples`, `tests` and `benchmarks` linked into it.  All pages share one tritonscope
  cache folder per session (its result cache on), so a compile repeated across pages is compiled once.
- Each command runs for a 100-column colourless terminal (`COLUMNS=100`, `NO_COLOR=1`, and
  `--width 100` where the command takes one and the example gives none).  Before comparing, both
  sides are normalized: seconds (`0.74 s`, `compiled in ...`/`replayed from the cache (...)`, a decimal
  ending a table row: the seconds column of `sweep` and `passes`), the number of sweep workers, 16-digit
  kernel hashes, PTX debug-line counts (they grow with the folder's name), the example folder's, the
  cache's and the repository's absolute paths; then a full block is compared as one run of words (so a
  line wrapped at another place is the same), a partial one line by line with blanks squeezed.
- Outputs are compared only with the Triton they were made with (OUTPUT_TRITON); under another
  Triton the examples still run and their exit codes are checked.
- `pytest tests/test_readme.py --regen` rewrites every output block from real output (a partial block
  is kept while it still matches; an empty or stale one is written whole, to be abridged by hand).
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

import conftest
from conftest import ROOT
from tritonscope.cli import app
from tritonscope.core.errors import ExitCode

OUTPUT_TRITON = "3.9.0"   # the Triton whose output the pages quote
WIDTH = 100
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
MARK = re.compile(r"^<!-- output(: partial)? -->$")


@dataclass
class Block:
    start: int          # index of the first line inside the fence
    end: int            # index of the closing fence
    text: str
    partial: bool


@dataclass
class Example:
    page: Path
    command: str
    output: Block | None = None
    words: list[str] = field(default_factory=list)


def page_examples(page: Path) -> list[Example]:
    """The page's examples in order, each with the output block that follows it."""
    lines = page.read_text().splitlines()
    out: list[Example] = []
    fence, previous, mark, last_bash = None, "", None, None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            if fence is None:
                fence = "ci" if previous.startswith("<!-- ci:") else line.strip()
                if mark is not None:
                    assert fence == "```text", f"{page.name}:{i + 1}: an output mark must precede a ```text fence"
                    assert last_bash is not None, f"{page.name}:{i + 1}: an output block with no example above"
                    end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
                    last_bash.output = Block(i + 1, end, "\n".join(lines[i + 1:end]), mark)
                    mark, last_bash, fence = None, None, None
                    previous = lines[end]
                    i = end + 1
                    continue
                if fence != "```bash":
                    last_bash = None
            else:
                fence = None
            i += 1
            continue
        m = MARK.match(line.strip())
        if fence is None and m:
            mark = bool(m.group(1))
            i += 1
            continue
        if line.strip():
            previous = line
            if fence is None and not line.startswith("    "):
                last_bash = None
        text = line.strip()
        if text.startswith("tritonscope ") and (fence == "```bash" or (fence is None and line.startswith("    "))):
            out.append(Example(page, text))
            last_bash = out[-1] if fence == "```bash" else None
        i += 1
    assert mark is None, f"{page.name}: an output mark at the end of the page"
    return out


EXAMPLES = [e for page in PAGES for e in page_examples(page)]


def _example_id(e: Example, i: int) -> str:
    words = re.sub(r"[^A-Za-z0-9_.=,-]+", "_", e.command.partition(" #")[0].removeprefix("tritonscope ").strip())
    return f"{e.page.stem}-{i:02d}-{words[:50]}"


def test_pages_have_examples_and_outputs():
    readme = [e for e in EXAMPLES if e.page.name == "README.md"]
    assert len(readme) >= 10 and any(e.output for e in readme), "the README shows commands and their output"
    assert any(e.command.startswith("tritonscope compile matmul --block 16") for e in readme)
    assert len(EXAMPLES) > 100 and sum(1 for e in EXAMPLES if e.output) >= 20
    commands = {p.stem for p in PAGES[1:] if any(e.output for e in page_examples(p))}
    assert {"compile", "explain-check", "layouts", "sweep-diff", "run-bench"} <= commands, commands


def _needs_gpu(words: list[str]) -> bool:
    return words[1] == "bench" or (words[1] == "run" and "--interpret" not in words)


def _missing_project(words: list[str]) -> str | None:
    """The package of an installed project's kernel (`package.module:kernel`) that the example names and that
    is not installed here, else None."""
    for word in words[2:]:
        module, colon, _ = word.partition(":")
        if colon and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+", module) \
                and not module.endswith(".py"):
            return conftest.missing_package(module.split(".")[0])
    return None


def _has_matplotlib() -> bool:
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


def _takes_width() -> set[str]:
    import typer.main

    group = typer.main.get_command(app)
    return {name for name, cmd in group.commands.items() if any("--width" in p.opts for p in cmd.params)}


TAKES_WIDTH = _takes_width()


def _places(text: str, places: list[Path]) -> str:
    """Absolute paths of the example folder, the cache and the repository, written relative."""
    for place in places:
        text = text.replace(str(place) + "/", "").replace(str(place), ".")
    return text


def normalize(text: str, places: list[Path]) -> list[str]:
    """The lines compared: volatile figures and places replaced, blanks squeezed."""
    text = _places(text, places)
    text = re.sub(r"replayed from the cache \(the compile took \d+(\.\d+)? s\)", "compiled in <T>", text)
    text = re.sub(r"\breplayed\b", "compiled in <T>", text)
    text = re.sub(r"\b\d+(\.\d+)? s\b", "<T>", text)
    text = re.sub(r"\bon \d+ workers?\b", "on <N> workers", text)
    text = re.sub(r"\b[0-9a-f]{16}\b", "<hash>", text)
    text = re.sub(r"\b\d+ debug lines\b", "N debug lines", text)
    lines = []
    for line in text.splitlines():
        line = re.sub(r"(\s)\d+\.\d+(\s*[│|]?)$", r"\1<T>\2", line.rstrip())
        lines.append(re.sub(r"\s+", " ", line).strip())
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _shown_in_order(shown: list[str], got: list[str]) -> bool:
    it = iter(got)
    return all(any(line == g for g in it) for line in shown if line not in ("...", "…"))


@pytest.fixture(scope="session")
def docs_cache():
    """One tritonscope cache for every page's examples (result cache on): repeated compiles are shared,
    also by the pages that other pytest-xdist workers of this run take (tests/conftest.py spreads the pages)."""
    folder = Path(conftest.CACHE) / "docs"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


_FOLDERS: dict[Path, Path] = {}
_REGEN: dict[Path, list[tuple[Block, str]]] = {}


@pytest.fixture
def page_dir(tmp_path_factory):
    def get(page: Path) -> Path:
        if page not in _FOLDERS:
            folder = tmp_path_factory.mktemp(f"docs-{page.stem}")
            for name in ("samples", "tests", "benchmarks"):
                (folder / name).symlink_to(ROOT / name)
            _FOLDERS[page] = folder
        return _FOLDERS[page]
    return get


@pytest.fixture(scope="module", autouse=True)
def _write_regenerated(regen):
    """Under --regen, rewrite each page's output blocks once its examples have run."""
    yield
    if not regen:
        return
    for page, blocks in _REGEN.items():
        lines = page.read_text().splitlines()
        for block, text in sorted(blocks, key=lambda b: -b[0].start):
            lines[block.start:block.end] = text.splitlines()
        page.write_text("\n".join(lines) + "\n")


def _as_written(output: str, places: list[Path]) -> str:
    return "\n".join(line.rstrip() for line in _places(output, places).rstrip().splitlines())


@pytest.mark.parametrize("example", EXAMPLES, ids=[_example_id(e, i) for i, e in enumerate(EXAMPLES)])
def test_doc_example(example, page_dir, docs_cache, regen, monkeypatch):
    folder = page_dir(example.page)
    monkeypatch.chdir(folder)
    monkeypatch.setattr("tritonscope.triton_api.local_gpu_capability", lambda: None)
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(docs_cache))
    monkeypatch.setenv("TRITONSCOPE_RESULT_CACHE", "1")
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    monkeypatch.setenv("NO_COLOR", "1")
    code_text, _, comment = example.command.partition(" #")
    words = shlex.split(code_text)
    if words[1] == "run" and "--interpret" in words and conftest.missing_package("torch"):
        pytest.skip("needs torch, which is not installed (pip install -e '.[run]' brings it): `run --interpret` "
                    "checks the kernel against a PyTorch reference")
    expected = re.search(r"exits (\d+)", comment)
    want = int(expected.group(1)) if expected else 0
    missing = _missing_project(words)
    if missing and want != int(ExitCode.NOT_FOUND):
        pytest.skip(f"needs {missing}, which is not installed (pip install -e '.[test]' brings it): the example "
                    "compiles one of its kernels")
    if _needs_gpu(words):
        want = int(ExitCode.NO_GPU)
        if re.search(r"--save \S+\.(png|svg)", code_text) and not _has_matplotlib():
            want = int(ExitCode.USAGE)  # refused up front: the plot extra is missing
    args = words[1:]
    if words[1] in TAKES_WIDTH and "--width" not in words and "--" not in words:
        args += ["--width", str(WIDTH)]
    result = CliRunner().invoke(app, args)
    where = f"{example.page.relative_to(ROOT)}: {example.command}"
    assert result.exit_code == want, f"{where}\n  exit {result.exit_code}, wanted {want}\n  {result.output[-800:]}"
    block = example.output
    if block is None:
        return
    import triton

    if triton.__version__ != OUTPUT_TRITON:
        return
    places = [folder, docs_cache, ROOT]
    got = normalize(result.output, places)
    shown = normalize(block.text, [])
    # a full block is compared as one run of words (a line wrapped elsewhere is the same output)
    same = _shown_in_order(shown, got) if block.partial else " ".join(shown) == " ".join(got)
    if regen:
        if not same or not shown:
            _REGEN.setdefault(example.page, []).append((block, _as_written(result.output, places)))
        return
    assert same, (f"{where}\n  printed something else than the page shows (pytest {Path(__file__).name} --regen "
                  f"rewrites it):\n" + "\n".join(got))


def test_every_command_is_registered_and_documented():
    """cli.COMMANDS is the one list of commands; each has --help, is in the README and has a docs page."""
    from tritonscope.cli import COMMANDS

    runner = CliRunner()
    readme = (ROOT / "README.md").read_text()
    docs = "\n".join(p.read_text() for p in PAGES[1:])
    for name in COMMANDS:
        result = runner.invoke(app, [name, "--help"])
        assert result.exit_code == 0 and "Usage:" in result.output, name
        assert f"tritonscope {name}" in readme, f"README never mentions `tritonscope {name}`"
        assert f"tritonscope {name}" in docs, f"no docs page shows `tritonscope {name}`"
    listed = runner.invoke(app, ["--help"]).output
    assert all(name in listed for name in COMMANDS)


def test_every_page_is_in_the_site():
    """mkdocs.yml's nav names every page under docs/ (mkdocs --strict then builds them all)."""
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in PAGES[1:]:
        assert f" {page.name}" in nav, f"{page.name} is not in mkdocs.yml's nav"
