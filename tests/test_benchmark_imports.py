"""The benchmark scripts are run by hand (figures, not timed tests), so nothing else would notice when a
refactor moves what they import: every `from tritonscope... import name` in benchmarks/ must resolve."""

from __future__ import annotations

import ast
import importlib

import pytest

from conftest import ROOT

SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))


def tritonscope_imports(source: str) -> list[tuple[str, str | None]]:
    """(module, name or None) of every tritonscope import in `source`, at any depth (lazy ones too)."""
    out: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "tritonscope" \
                and not node.level:
            out += [(node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(a.name, None) for a in node.names if a.name.split(".")[0] == "tritonscope"]
    return out


def test_the_walker_sees_a_lazy_import_of_a_moved_name():
    source = "def main():\n    from tritonscope.commands._common import DEFAULT_MAX_LINES\n"
    assert tritonscope_imports(source) == [("tritonscope.commands._common", "DEFAULT_MAX_LINES")]


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_what_a_benchmark_imports_from_tritonscope_exists(script):
    for module, name in tritonscope_imports(script.read_text(encoding="utf-8")):
        mod = importlib.import_module(module)
        if name is not None and not hasattr(mod, name):
            importlib.import_module(f"{module}.{name}")  # a submodule, else ModuleNotFoundError names it
