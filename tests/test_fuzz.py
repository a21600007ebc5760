"""A few hundred fuzz cases per run: damaged real stages never crash parse, annotate or render.

benchmarks/fuzz.py runs the same harnesses at 10,000 cases (--found for found kernels).
"""

from __future__ import annotations

import sys

from conftest import ROOT, triton_series

sys.path.insert(0, str(ROOT / "benchmarks"))
import fuzz  # noqa: E402


def test_damaged_stages_never_crash():
    result = fuzz.fuzz(cases=200, seed=7, series=triton_series(), limit=20.0)
    assert result["crashes"] == 0, "\n\n".join(result["first"])


def test_damaged_found_kernels_never_crash():
    """Caches, dumps, captures, mixed folders and lone files, damaged and oddly named, through open and explain."""
    result = fuzz.fuzz_found(cases=200, seed=11, limit=20.0)
    assert result["crashes"] == 0, "\n\n".join(result["first"])
    assert set(result["kinds"]) == set(fuzz.FOUND_KINDS)
    assert result["explained"] > 50 and result["refused"] > 10   # both paths are walked, not only refusals
