"""tune's compile: disassemble a config only while the cost model could still rank it in the short list.

The shared threshold the parent lowers as predictions come in, and the lower bound a worker compares with it
(sweep.compile_row applies them; measure/tune.py keeps the threshold).  They live in cost/ranking.py, which
the @triton.autotune hook (cost/autotune.py) shares; this module keeps tune's and sweep's names.
"""

from __future__ import annotations

from tritonscope.cost.ranking import Pruning, Threshold, bound_ms, new_pruning, pruning_threshold  # noqa: F401

__all__ = ["Pruning", "Threshold", "bound_ms", "new_pruning", "pruning_threshold"]
