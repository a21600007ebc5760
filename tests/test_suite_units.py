"""How the suite is spread over pytest-xdist workers (tests/conftest.py): files, the zoo by arch, docs pages."""

from __future__ import annotations

import sys

from conftest import ROOT, SLOW_FIRST, work_unit

sys.path.insert(0, str(ROOT / "tests" / "zoo"))
import manifest  # noqa: E402


def test_a_zoo_case_is_a_unit_of_its_arch_and_the_rest_of_the_file_one_unit():
    assert work_unit("tests/test_zoo.py::test_zoo_kernel_compiles_as_typed[liger_rms_norm_fwd-sm_90a]") \
        == "tests/test_zoo.py::sm_90a"
    assert work_unit("tests/test_zoo.py::test_zoo_kernel_compiles_as_typed[fla-chunk-gla-gfx942]") \
        == "tests/test_zoo.py::gfx942"
    assert work_unit("tests/test_zoo.py::test_readme_zoo_table_is_the_manifest") == "tests/test_zoo.py"
    assert work_unit("tests/test_readme.py::test_doc_example[sweep-diff-03-sweep_matmul]") == \
        "tests/test_readme.py::sweep-diff"
    assert work_unit("tests/test_compile.py::test_x[a-sm_90a]") == "tests/test_compile.py"


def test_every_zoo_arch_is_a_slow_unit_that_starts_first():
    units = {f"tests/test_zoo.py::{arch}" for arch in manifest.ARCHES}
    assert units <= set(SLOW_FIRST[:len(units)])
    ids = [f"tests/test_zoo.py::test_zoo_kernel_compiles_as_typed[{e['name']}-{a}]"
           for e in manifest.ZOO for a in manifest.ARCHES]
    assert {work_unit(i) for i in ids} == units
