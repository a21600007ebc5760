"""A few hundred fuzz cases per run: damaged real stages never crash parse, annotate or render.

benchmarks/fuzz.py runs the same harness at 10,000 cases.
"""

from __future__ import annotations

import sys

from conftest import ROOT, triton_series

sys.path.insert(0, str(ROOT / "benchmarks"))
import fuzz  # noqa: E402


def test_damaged_stages_never_crash():
    result = fuzz.fuzz(cases=200, seed=7, series=triton_series(), limit=20.0)
    assert result["crashes"] == 0, "\n\n".join(result["first"])
