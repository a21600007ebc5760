"""Which configs could still rank: the lower-bound pruning that `tune` and the autotune hook share.

A compile worker compiles its config and reads the resource usage (cuobjdump, milliseconds), then runs nvdisasm
(about 0.2 s of CPU, whatever the kernel) only when the config fits and the model's lower bound for it
(features.bound_facts: the prediction with the SASS's side at its least) is at most the shared threshold that
the parent lowers as predictions come in.  `tune` (measure/tune.py, through measure/sweep.compile_row) and
`prune_by_prediction` (cost/autotune.py) both use it; measure/pruning.py re-exports it for tune.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Pruning:
    """A config's SASS is disassembled only when the model could still rank it in the short list.

    The threshold is the parent's `top`-th best prediction so far, widened by the model's largest expected
    error over the best one (math.inf until `top` configs are predicted).  The threshold only falls as
    predictions come in, so a config skipped at any moment has a prediction above the final threshold: it
    could not have been in the short list, nor within the expected error of the best.  The short list is the
    one predicting every config gives (tests/test_cost.py compares the two)."""

    gpu: str
    threshold: Any          # multiprocessing.Value("d"): written by the parent, read by the workers

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
    from tritonscope.cost.model import find_gpu, predict_features

    g = find_gpu(gpu)
    if not features or g is None:
        return None
    p = predict_features(features, g)
    return p.predicted_ms if p.ok else None


class Threshold:
    """The parent's side of a Pruning: the predictions so far, and the shared threshold lowered from them.

    `top`: how many configs the short list keeps; `margin`: the model's largest expected error on the GPU."""

    def __init__(self, pruning: Pruning, top: int, margin: float):
        self.pruning, self.top, self.margin = pruning, top, margin
        self.predicted: list[float] = []

    def add(self, predicted_ms: float | None) -> None:
        if predicted_ms is None:
            return
        self.predicted.append(predicted_ms)
        self.pruning.threshold.value = pruning_threshold(self.predicted, self.top, self.margin)


def new_pruning(gpu, context=None) -> tuple[Pruning, float]:
    """(a Pruning for the cost model's Gpu `gpu`, with a fresh threshold at infinity, its margin): the
    threshold lives in shared memory that workers forked (or started) from `context` inherit."""
    import multiprocessing

    from tritonscope.cost.model import widest_error

    ctx = context or multiprocessing
    return Pruning(gpu.name, ctx.Value("d", math.inf)), widest_error(gpu)


def facts_if_ranked(artifact, summary, pruning: Pruning, *, grid=None, args=None) -> tuple[dict | None, float | None]:
    """(the model's facts, None) for a compiled config that fits and could still rank (its SASS is then
    disassembled here, as nvdisasm reads it), or (None, its lower bound in ms) for one whose lower bound is
    above the threshold (no SASS read).  `grid`/`args`: the launch's, as features_of_artifact takes them.
    The model's NoFeatures and other reading errors go to the caller."""
    from tritonscope.cost.features import features_of_artifact

    bound = bound_ms(features_of_artifact(artifact, summary, grid=grid, args=args, bound=True), pruning.gpu)
    if not pruning.admits(bound):
        return None, bound
    if "sass" not in artifact.stages:
        from tritonscope.analyses.summary import summarize
        from tritonscope.triton_api.cubin import add_sass

        if add_sass(artifact):
            summary = summarize(artifact)   # the spills the SASS counts
    return features_of_artifact(artifact, summary, grid=grid, args=args), None
