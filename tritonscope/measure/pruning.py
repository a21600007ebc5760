"""tune's compile: disassemble a config only while the cost model could still rank it in the short list.

The shared threshold the parent lowers as predictions come in, and the lower bound a worker compares with it
(sweep.compile_row applies them; commands/tune.py keeps the threshold).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Pruning:
    """tune's compile: a config's SASS is disassembled only when the model could still rank it in the short list.

    Each worker compiles its config and reads the resource usage (cuobjdump, milliseconds), then runs nvdisasm
    (about 0.2 s of CPU, whatever the kernel) only when the config fits and the model's lower bound for it
    (cost.features.bound_facts: the prediction with the SASS's side at its least) is at most `threshold`:
    the parent's `top`-th best prediction so far, widened by the model's largest expected error over the best
    one (math.inf until `top` configs are predicted).  The threshold only falls as predictions come in, so a
    config skipped at any moment has a prediction above the final threshold: it could not have been in the
    short list, nor within the expected error of the best.  The short list is the one predicting every config
    gives (tests/test_cost.py compares the two)."""

    gpu: str
    threshold: Any          # multiprocessing.Value("d"): written by the parent (tune._Early), read by workers

    def admits(self, bound_ms: float | None) -> bool:
        return bound_ms is None or bound_ms <= self.threshold.value


def pruning_threshold(predicted: list[float], top: int, margin: float) -> float:
    """The threshold of Pruning from the predictions so far: the top-th best, or the best widened by `margin`
    (the largest expected error) when that is higher; math.inf until `top` configs are predicted."""
    if len(predicted) < top:
        return math.inf
    ranked = sorted(predicted)
    return max(ranked[top - 1], ranked[0] * (1 + margin))


def bound_ms(features: dict[str, Any] | None, gpu: str) -> float | None:
    """The model's lower bound (ms) from bound facts; None when the model cannot tell."""
    from tritonscope.cost import find_gpu, predict_features

    g = find_gpu(gpu)
    if not features or g is None:
        return None
    p = predict_features(features, g)
    return p.predicted_ms if p.ok else None
