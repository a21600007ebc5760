"""Predicted times (the cost model) on a sweep's rows: the pick and the short list worth measuring."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from tritonscope.measure.sweep.rows import SweepRow


@dataclass
class Shortlist:
    gpu: str | None
    calibration: str = ""
    pick: int | None = None            # row index of the predicted fastest config
    indexes: list[int] = field(default_factory=list)   # the short list, fastest first
    widened: bool = False              # the top configs are closer than the expected error: more were added
    expected_error: float | None = None
    predicted: int = 0                 # rows with a prediction
    bounded: int = 0                   # rows a Pruning left with a lower bound only (they could not rank)
    no_prediction: dict[str, int] = field(default_factory=dict)   # reason -> rows

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def attach_predictions(rows: list[SweepRow], gpu: str | None, *, top: int = 3) -> Shortlist:
    """Each compiled row's predicted time on `gpu` (None: each row's arch's reference GPU), and the short list.

    Only rows that compiled and fit are predicted (a config that does not fit is never ranked).  The
    short list is the `top` fastest predictions, widened to every config whose prediction is within the
    expected error of the best (they cannot be told apart by the model, so each is worth measuring)."""
    from tritonscope.cost import find_gpu, predict_features, resolve_gpu

    out = Shortlist(gpu=None)
    timed: list[tuple[float, SweepRow]] = []
    for r in rows:
        r.predicted_ms, r.prediction = None, None
        if not (r.ok and r.fits):
            continue
        if r.bound_ms is not None and r.cost_features is None:   # pruned (Pruning): it could not rank
            out.bounded += 1
            continue
        if r.cost_features is None:
            out.no_prediction[r.cost_why or "no compiled facts"] = out.no_prediction.get(r.cost_why or "?", 0) + 1
            continue
        g = find_gpu(gpu) if gpu else resolve_gpu(None, r.arch)
        if g is None:
            why = f"no GPU known for {r.arch} (name one with --gpu)"
            out.no_prediction[why] = out.no_prediction.get(why, 0) + 1
            continue
        p = predict_features(r.cost_features, g)
        r.prediction = p.to_dict()
        out.gpu, out.calibration = g.name, p.calibration
        if not p.ok:
            out.no_prediction[p.why or "?"] = out.no_prediction.get(p.why or "?", 0) + 1
            continue
        r.predicted_ms = round(p.predicted_ms, 6)
        timed.append((p.predicted_ms, r))
    out.predicted = len(timed)
    if not timed:
        return out
    timed.sort(key=lambda x: x[0])
    best_ms, best = timed[0]
    out.pick = best.index
    err = (best.prediction or {}).get("expected_error") or 0.0
    out.expected_error = err
    out.calibration = (best.prediction or {}).get("calibration") or out.calibration   # the pick's (its error)
    chosen = [r.index for _, r in timed[:max(1, top)]]
    close = [r.index for ms, r in timed if ms <= best_ms * (1 + err) and r.index not in chosen][:2 * max(1, top)]
    out.widened = bool(close)
    out.indexes = chosen + close
    return out
