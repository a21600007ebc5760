"""The zoo: real kernels, unedited, compile from the command line as a user types them.

Every entry of tests/zoo/manifest.py (kernels of liger-kernel and fla-core as
pip installs them, by module path, and kernels written here that reproduce
each launch pattern real kernels use) is compiled with
`tritonscope compile TARGET ARGS --arch A --stage none` for sm_90a, sm_100a
and gfx942, and must end with the exit code the manifest expects (0, or the
stated code where the kernel truly does not fit).  The README's zoo table is
made from the same manifest and must match it.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import re
import shlex
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tritonscope.cli import app

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "zoo"))
import manifest  # noqa: E402

runner = CliRunner()
SERIES = ".".join(importlib.metadata.version("triton").split(".")[:2])  # the installed Triton's minor version
HAS_AMD = (Path(importlib.util.find_spec("triton").submodule_search_locations[0]) / "backends" / "amd").is_dir()


def _missing(entry) -> str | None:
    """The package the entry's kernel needs that is not installed (None: all are): its project's own for a
    kernel imported by module path, or one its file imports at the top (torch) for a kernel written here."""
    target = entry["target"].split(":")[0]
    if not target.startswith("tests/"):
        packages = [target.split(".")[0]]
    else:
        tree = ast.parse((ROOT / target).read_text(encoding="utf-8"))
        packages = [a.name.split(".")[0] for n in tree.body if isinstance(n, ast.Import) for a in n.names]
        packages += [n.module.split(".")[0] for n in tree.body if isinstance(n, ast.ImportFrom) and n.module and not n.level]
    beside = ROOT / target if target.startswith("tests/") else ROOT
    local = {p.stem for p in beside.parent.iterdir()}  # a sibling module the kernel's file imports
    return next((p for p in packages if p not in sys.stdlib_module_names and p not in local
                 and importlib.util.find_spec(p) is None), None)


CASES = [(e, arch) for e in manifest.ZOO for arch in manifest.ARCHES]


@pytest.mark.parametrize("entry,arch", CASES, ids=[f"{e['name']}-{a}" for e, a in CASES])
def test_zoo_kernel_compiles_as_typed(entry, arch, monkeypatch):
    missing = _missing(entry)
    if missing:  # an optional dependency: the test extra (pip install -e '.[test]') pins the zoo's projects
        pytest.skip(f"needs {missing}, which is not installed (pip install -e '.[test]' brings it)")
    if arch.startswith("gfx") and not HAS_AMD:
        pytest.skip("this Triton wheel has no AMD backend")
    monkeypatch.chdir(ROOT)
    argv = ["compile", entry["target"], *shlex.split(manifest.args_for(entry, arch)),
            "--arch", arch, "--stage", "none", "--no-color", "--width", "200"]
    predict = arch == "sm_90a" and entry.get("grid")  # where the launch's grid is known, it is predicted too
    if predict:
        argv += ["--grid", entry["grid"], "--predict", "--gpu", "H100"]
    result = runner.invoke(app, argv)
    want = manifest.expect_for(entry, arch, SERIES)
    code = 0 if want == "ok" else want["exit"]
    assert result.exit_code == code, f"tritonscope {shlex.join(argv)}\n{result.output[-3000:]}"
    if code == 0:
        assert f"tritonscope · {entry['target'].split(':')[-1]}" in result.output
    if code == 0 and predict:
        row = next((line for line in result.output.splitlines() if "predicted" in line), "")
        # a figure, or the model's own reason (a loop whose bounds the launch's arguments do not give)
        figure = re.search(r"predicted\s+[\d.]+ (?:ms|us|µs)", row)
        assert figure or entry.get("no_prediction", "§") in row, f"no prediction:\n{result.output[-3000:]}"


def zoo_table() -> str:
    """The README's zoo table, made from the manifest."""
    rows = ["| kernel | from | patterns | " + " | ".join(manifest.ARCHES) + " |",
            "|---|---|---|" + "---|" * len(manifest.ARCHES)]
    for e in manifest.ZOO:
        cells = []
        for arch in manifest.ARCHES:
            want = manifest.expect_for(e, arch)
            cell = "compiles" if want == "ok" else f"exit {want['exit']}: {want['why']}"
            for series, by_arch in sorted(e.get("expect_triton", {}).items()):
                if arch in by_arch:
                    other = by_arch[arch]
                    cell += f" (Triton {series}: " + ("compiles" if other == "ok" else
                                                     f"exit {other['exit']}: {other['why']}") + ")"
            cells.append(cell)
        rows.append(f"| `{e['target']}` | {e['package']} | {', '.join(e['patterns'])} | " + " | ".join(cells) + " |")
    rows += ["", "<details><summary>The command of each (add <code>--arch ARCH</code>)</summary>", "", "```text"]
    for e in manifest.ZOO:
        grid = f" --grid '{e['grid']}'" if e.get("grid") else ""
        rows.append(f"tritonscope compile {e['target']} {manifest.args_for(e, manifest.ARCHES[0])}{grid}")
        for arch in manifest.ARCHES[1:]:
            if manifest.args_for(e, arch) != manifest.args_for(e, manifest.ARCHES[0]):
                rows.append(f"tritonscope compile {e['target']} {manifest.args_for(e, arch)} --arch {arch}")
    rows += ["```", "", "</details>"]
    return "\n".join(rows)


def test_readme_zoo_table_is_the_manifest(regen):
    readme = ROOT / "docs" / "real-kernels.md"
    text = readme.read_text()
    m = re.search(r"<!-- zoo:table -->\n(.*?)<!-- /zoo:table -->", text, re.S)
    assert m, "docs/real-kernels.md has no <!-- zoo:table --> block"
    if regen:
        readme.write_text(text[:m.start(1)] + zoo_table() + "\n" + text[m.end(1):])
        return
    assert m.group(1) == zoo_table() + "\n", "README's zoo table differs from tests/zoo/manifest.py: run pytest --regen"


def test_every_pattern_of_the_issue_has_a_kernel():
    patterns = {p for e in manifest.ZOO for p in e["patterns"]}
    for wanted in ("interleaved-constexpr", "dtype-constexpr", "string-constexpr", "import-time-device-query",
                   "host-tensor-descriptor", "amd-backend-options", "launch-option-constexpr", "sibling-import",
                   "heuristics", "autotune", "module-path", "heuristic-launch-option", "heuristic-reads-own-key",
                   "keyword-pruner", "backend-default-stages", "unsigned-tensor", "fnuz-fp8", "torch-version-gate",
                   "import-time-raw-stream"):
        assert wanted in patterns, wanted
    real = [e for e in manifest.ZOO if e["package"] != manifest.OURS]
    assert len(real) >= 25, len(real)
    wider = [e for e in real if e["package"] not in (manifest.LIGER, manifest.FLA)]
    assert len(wider) >= 25 and len({e["package"] for e in wider}) >= 6, (len(wider), {e["package"] for e in wider})
    assert sum(1 for e in wider if e.get("grid")) >= 20  # the zoo test predicts those on sm_90a
