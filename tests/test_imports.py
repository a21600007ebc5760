"""The package's import graph: no cycles, and the light commands stay light.

The graph is read from the source (ast), imports inside functions included:
a lazy import still ties two modules together, and a cycle between them is a
design knot even when it happens not to fail at import time.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGE = ROOT / "tritonscope"


def module_graph(root: Path = PACKAGE, *, child_names: bool = False) -> dict[str, set[str]]:
    """{module: modules of the package it imports} for every .py file under root; with `child_names`, also the
    modules it has a child process import (see imported_by)."""
    files = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        files[name] = path
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        graph[module] = imported_by(path.read_text(encoding="utf-8"), package, set(files),
                                    child_names=child_names) - {module}
    return graph


def _by_name(node: ast.AST) -> str | None:
    """The module a call imports by a literal name: importlib.import_module("a.b"), import_module("a.b"),
    __import__("a.b", ...); None for any other node (or a name that is not a literal)."""
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)):
        return None
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return node.args[0].value if called in ("import_module", "__import__") else None


def imported_by(source: str, package: str, modules: set[str], *, child_names: bool = False) -> set[str]:
    """The modules (of `modules`) that `source`, a module of `package`, imports: import statements and
    imports by a literal name (importlib.import_module, __import__); with `child_names`, also the module of
    each "pkg.module:function" string (a function a child process imports by name: core/child.run_in_child).
    Those count for the layer order, not for cycles: the child is another process, and a module may name its
    own function through its package."""
    root = package.split(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            # `from pkg import sub` imports the submodule; `from pkg import name` the package
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        elif _by_name(node):
            names = [_by_name(node)]
        elif child_names and isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and re.fullmatch(rf"{root}(\.\w+)*:\w+", node.value):
            names = [node.value.partition(":")[0]]
        else:
            continue
        found.update(n for n in names if n in modules)
    return found


def test_imports_by_name_count():
    """importlib.import_module, __import__ and a child's "module:function" are imports like any other."""
    modules = {"pkg", "pkg.low", "pkg.high", "pkg.high.job"}
    source = textwrap.dedent("""
        import importlib
        def f():
            return importlib.import_module("pkg.high")
        def g():
            return __import__("pkg.high.job", fromlist=["x"])
        importlib.import_module("elsewhere.module")
        importlib.import_module(some_name)
    """)
    assert imported_by(source, "pkg", modules) == {"pkg.high", "pkg.high.job"}
    assert imported_by('run_in_child("pkg.high.job:work", {})', "pkg", modules) == set()
    assert imported_by('run_in_child("pkg.high.job:work", {})', "pkg", modules, child_names=True) == \
        {"pkg.high.job"}
    assert imported_by("from importlib import import_module\nimport_module('pkg.high')\n", "pkg", modules) == \
        {"pkg.high"}
    assert imported_by("x = 'pkg.high: not a module name'\n", "pkg", modules, child_names=True) == set()


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each cycle once, as [a, b, ..., a] (depth-first, back edges)."""
    state: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(u: str) -> None:
        state[u] = 1
        stack.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == 1:
                found.append(stack[stack.index(v):] + [v])
            elif v not in state:
                visit(v)
        stack.pop()
        state[u] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    return found


def test_the_walker_sees_cycles_and_lazy_imports(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg import b\n")
    (pkg / "b.py").write_text("def f():\n    from .sub import c\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text("import pkg.a\n")
    (pkg / "d.py").write_text("from pkg.sub.c import x\n")
    graph = module_graph(pkg)
    assert graph["pkg.b"] == {"pkg.sub.c"} and graph["pkg.d"] == {"pkg.sub.c"}
    assert find_cycles(graph) == [["pkg.a", "pkg.b", "pkg.sub.c", "pkg.a"]]


def test_no_import_cycles():
    graph = module_graph()
    assert "tritonscope.cli" in graph and "tritonscope.commands.compile" in graph
    cycles = find_cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


# The packages, lowest first: each imports only packages before it (and itself).
# The order is the design: core records and errors, the Triton seam, the
# language of the stages, what comes in, the pipeline that compiles it, what
# is derived from it, what is measured, what goes out, and the shells on top.
# Each package's __init__ says the same in words.
LAYERS = ["_version", "core", "triton_api", "language", "inputs", "pipeline", "analyses", "cost", "measure",
          "outputs", "versions", "api", "commands", "cli", "launch", "__main__", "_capture_boot", ""]


def upward_imports(graph: dict[str, set[str]], layers: list[str], root: str = "tritonscope") -> list[str]:
    """Each import of a package later in `layers` than the importer's own, as 'a -> b'."""
    def layer(module: str) -> int:
        top = module[len(root) + 1:].split(".")[0] if module != root else ""
        return layers.index(top)

    return sorted(f"{a} -> {b}" for a, imports in graph.items() for b in imports if layer(b) > layer(a))


def test_the_layer_check_sees_an_upward_import(tmp_path):
    pkg = tmp_path / "pkg"
    for sub in ("low", "high"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "high" / "a.py").write_text("from pkg.low import b\n")
    (pkg / "low" / "b.py").write_text("def f():\n    import pkg.high.a\n")
    assert upward_imports(module_graph(pkg), ["low", "high", ""], root="pkg") == ["pkg.low.b -> pkg.high.a"]
    # the reach-up the layer test once missed: a module imported by its name, not by an import statement
    (pkg / "low" / "b.py").write_text("import importlib\n\ndef f():\n    return importlib.import_module('pkg.high.a')\n")
    (pkg / "low" / "c.py").write_text("def f():\n    return __import__('pkg.high', fromlist=['a'])\n")
    assert upward_imports(module_graph(pkg), ["low", "high", ""], root="pkg") == \
        ["pkg.low.b -> pkg.high.a", "pkg.low.c -> pkg.high"]


def test_packages_import_only_downwards():
    graph = module_graph(child_names=True)
    tops = {m.split(".")[1] if "." in m else "" for m in graph}
    assert tops <= set(LAYERS), f"a package is missing from LAYERS: {sorted(tops - set(LAYERS))}"
    assert "tritonscope.pipeline.triton_compile" in graph and "tritonscope.core.model" in graph
    wrong = upward_imports(graph, LAYERS)
    assert not wrong, "imports against the layer order:\n" + "\n".join(wrong)


def test_no_flat_modules_but_the_shell():
    """Every module lives in the package of its layer; only the shell stays at the top."""
    flat = sorted(p.stem for p in PACKAGE.glob("*.py"))
    assert flat == ["__init__", "__main__", "_version", "api", "cli", "launch"], flat


def test_commands_do_not_import_the_cli():
    """cli.py registers the commands; a command never reaches back into it."""
    graph = module_graph()
    for module, imports in graph.items():
        if module.startswith("tritonscope.commands"):
            assert "tritonscope.cli" not in imports, module


# --------------------------------------------------------------------------
# What each light path imports (in a fresh interpreter)
# --------------------------------------------------------------------------

REPORT = ROOT / "tests" / "data" / "report_small.json"
LAYOUT = "#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"


def _imported_after(args: list[str], tmp_path) -> list[str]:
    """The heavy top-level modules (triton, torch) loaded by `tritonscope ARGS`."""
    code = textwrap.dedent(f"""
        import sys
        from typer.testing import CliRunner
        from tritonscope.cli import app
        r = CliRunner().invoke(app, {args!r})
        assert r.exit_code == 0, r.output
        print(sorted({{m.split('.')[0] for m in sys.modules}} & {{'triton', 'torch'}}))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return eval(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("args", [
    ["--help"],
    ["compile", "--help"],
    ["samples"],
    ["layout", LAYOUT, "--shape", "16x16", "--svg", "l.svg"],
    ["show", str(REPORT), "--stage", "none", "--save", "r.md"],
], ids=["help", "compile-help", "samples", "layout", "show"])
def test_light_commands_import_neither_triton_nor_torch(args, tmp_path):
    assert _imported_after(args, tmp_path) == []


def test_compile_imports_triton_but_never_torch(tmp_path):
    assert _imported_after(["compile", "vector_add", "--stage", "none", "--arch", "sm_80"], tmp_path) == ["triton"]


# --------------------------------------------------------------------------
# Golden files: written only under --regen
# --------------------------------------------------------------------------


def test_regen_switch_is_off_by_default():
    import conftest

    assert conftest.REGEN_OPTION["default"] is False and conftest.REGEN_OPTION["action"] == "store_true"


def test_missing_golden_fails_and_writes_nothing(tmp_path, monkeypatch):
    from conftest import check_golden

    monkeypatch.setenv("CI", "")  # the old escape hatch: a missing golden was written unless CI was set
    missing = tmp_path / "golden" / "new.txt"
    with pytest.raises(pytest.fail.Exception, match="missing; run `pytest --regen`"):
        check_golden(missing, "text", regen=False)
    assert not missing.exists()
    check_golden(missing, "text", regen=True)
    assert missing.read_text() == "text"
    check_golden(missing, "text", regen=False)
    with pytest.raises(AssertionError):
        check_golden(missing, "other", regen=False)
