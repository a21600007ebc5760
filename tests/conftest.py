"""Shared test fixtures.

Golden files: `pytest --regen` rewrites tests/golden/ and tests/data/ from
real compiles with the installed Triton; a reviewer reads the diff.  It is
the only way a golden is written: a missing golden fails the test (so a new
Triton release cannot pass vacuously), and test_imports.py checks that the
switch is off by default.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pytest

# A private Triton cache per test session.  Triton's cache key ignores the
# file a kernel came from, so a shared cache would hand one test the IR of
# an identical kernel compiled from another path (with that path in loc()).
# Under pytest-xdist (`-n`), the workers of one run share it (Triton and
# tritonscope write their caches atomically), so a kernel is compiled once
# per run, not once per worker.
_RUN = os.environ.get("PYTEST_XDIST_TESTRUNUID")
if _RUN:
    _CACHE = os.path.join(tempfile.gettempdir(), f"tritonscope-tests-{_RUN[:16]}")
    os.makedirs(_CACHE, exist_ok=True)
else:
    _CACHE = tempfile.mkdtemp(prefix="tritonscope-tests-")
CACHE = _CACHE   # this run's cache folder (shared by its workers)
os.environ["TRITON_CACHE_DIR"] = os.path.join(_CACHE, "triton")
os.environ["TRITONSCOPE_CACHE_DIR"] = os.path.join(_CACHE, "tritonscope")
# tritonscope's own result cache would answer a repeated `compile` without
# reaching Triton, so a test that fakes a Triton failure could see an earlier
# success: off here, on in tests/test_result_cache.py (which tests it).
os.environ["TRITONSCOPE_RESULT_CACHE"] = "0"


def _build_command_once() -> None:
    """typer's CliRunner builds the whole click command tree from the command functions' signatures on every
    invoke (about 0.2 s for tritonscope's 15 commands, over 2,000 invokes in the suite): build it once per
    app object.  The tree holds no state of one run (options are parsed into a fresh context each time)."""
    import typer.testing

    build = getattr(typer.testing, "_get_command", None)
    if build is None or getattr(build, "built_once", False):
        return
    built: dict[int, tuple] = {}

    def command_of(app):
        got = built.get(id(app))
        if got is None or got[0] is not app:
            got = built[id(app)] = (app, build(app))
        return got[1]

    command_of.built_once = True
    typer.testing._get_command = command_of


_build_command_once()

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
GOLDEN = ROOT / "tests" / "golden"


REGEN_OPTION = {"action": "store_true", "default": False,
                "help": "Rewrite golden files from real compiles (the only way a golden is written)."}


def pytest_addoption(parser):
    parser.addoption("--regen", **REGEN_OPTION)


# What an optional package's test needs installed, and the extra that brings it (pyproject.toml).
OPTIONAL_EXTRAS = {"torch": "run", "numpy": "run", "distributed": "dask", "matplotlib": "plot", "mkdocs": "docs"}


def pytest_configure(config):
    config.addinivalue_line("markers", "needs(*packages): the test needs these optional packages; where one "
                                       "is not installed it is skipped, with the reason (tests/conftest.py)")


def missing_package(*packages: str) -> str | None:
    """The first of `packages` that is not installed (found without importing it), else None."""
    import importlib.util

    return next((p for p in packages if importlib.util.find_spec(p) is None), None)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """A test marked needs("torch", ...) is skipped, with what to install, where one of them is missing:
    a bare `pip install -e .` runs the rest of the suite."""
    for mark in item.iter_markers("needs"):
        missing = missing_package(*mark.args)
        if missing:
            pytest.skip(f"needs {missing}, which is not installed "
                        f"(pip install -e '.[{OPTIONAL_EXTRAS.get(missing, 'test')}]' brings it)")


# How `-n N --dist loadfile` spreads the suite: one file is one unit of work (its module-scoped
# compiles are shared by its tests), except the zoo (one unit per arch, below) and the docs examples
# (test_readme.py), whose unit is one page:
# a page's examples run in order on one worker, and the pages spread over the workers.  The slowest
# units start first, so a long one never starts last.
DOCS_EXAMPLE = re.compile(r"^tests/test_readme\.py::test_doc_example\[(?P<page>[A-Za-z0-9_]+(?:-[A-Za-z_][A-Za-z0-9_]*)*)-\d+-")
# The zoo's compiles (about 100 real kernels for each of 3 arches, each test on its own) are one unit per
# arch: as one file they were the longest unit of the run, longer than all the rest on the other worker.
ZOO_CASE = re.compile(r"^tests/test_zoo\.py::test_zoo_kernel_compiles_as_typed\[.+-(?P<arch>sm_\d+a?|gfx\d+)\]$")
# Units that take a minute or more (Triton 3.9, `--durations`, slowest first): they start first.  A unit
# missing here only starts later; a name that no longer matches is ignored.
SLOW_FIRST = (
    "tests/test_zoo.py::sm_90a",                # about 100 real-kernel compiles each, with predictions on sm_90a
    "tests/test_zoo.py::sm_100a",
    "tests/test_zoo.py::gfx942",
    "tests/test_readme.py::sweep-diff",
    "tests/test_explain.py",
    "tests/test_compile.py",
    "tests/test_readme.py::passes",
    "tests/test_readme.py::explain-check",
    "tests/test_layout_issue23.py",
    "tests/test_readme.py::predict-tune",
    "tests/test_readme.py::amd-blackwell",
    "tests/test_fuzz.py",
    "tests/test_cost.py",
    "tests/test_launch_exact.py",
    "tests/test_readme.py::compile",
    "tests/test_readme.py::README",
)


def work_unit(nodeid: str) -> str:
    """The unit of work that a test id belongs to under `--dist loadfile` (see above)."""
    m = DOCS_EXAMPLE.match(nodeid)
    if m:
        return f"tests/test_readme.py::{m.group('page')}"
    m = ZOO_CASE.match(nodeid)
    return f"tests/test_zoo.py::{m.group('arch')}" if m else nodeid.split("::", 1)[0]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class PagesAndFiles(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

        def _assign_work_unit(self, node) -> None:
            if not getattr(self, "_slow_first", False):
                # the units SLOW_FIRST names first, in its order, then the others in xdist's order (most
                # tests first); only the queue is reordered: the workers' collections are indexed as sent
                self._slow_first = True
                rank = {unit: i for i, unit in enumerate(SLOW_FIRST)}
                units = sorted(self.workqueue.items(), key=lambda u: rank.get(u[0], len(rank)))
                self.workqueue.clear()
                self.workqueue.update(units)
            super()._assign_work_unit(node)

    return PagesAndFiles(config, log)


@pytest.fixture(scope="session")
def regen(request) -> bool:
    return bool(request.config.getoption("--regen"))


@pytest.fixture(autouse=True)
def _plain_terminal(monkeypatch):
    """Tests render for a fixed, colorless terminal regardless of the caller's env."""
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("TERM", "dumb")


def triton_series() -> str:
    """'3.6' or '3.9': golden stage text depends on the Triton release."""
    from tritonscope import triton_api

    return ".".join(map(str, triton_api.triton_series()))


@pytest.fixture(scope="session")
def compiled():
    """compiled(target, **request) -> Artifact, memoized for the session."""
    from tritonscope.pipeline.triton_compile import compile_artifact
    from tritonscope.inputs.kernels import Request
    from tritonscope.pipeline.binding import build_spec

    cache = {}

    def get(target: str = "matmul", **kw):
        key = (target, repr(sorted(kw.items())))
        if key not in cache:
            kw.setdefault("arch", "sm_90a")
            cache[key] = compile_artifact(build_spec(Request(target, **kw), "sm_90a"))
        return cache[key]

    return get


def check_golden(path: Path, actual: str, regen: bool) -> None:
    """Compare with a golden file, or write it under --regen (and only then)."""
    if regen:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual)
        return
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    if not path.exists():
        pytest.fail(f"golden file {shown} is missing; run `pytest --regen` "
                    "(with this test's -k) and review and commit it")
    expected = path.read_text()
    assert actual == expected, f"{shown} differs; if the change is right, run pytest --regen"
