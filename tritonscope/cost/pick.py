"""`--config predicted`: the autotune config the cost model predicts fastest for this launch.

A real launch times every config its pruning keeps and takes the fastest, which needs a GPU.  Here each
kept config is bound (through the kernel's own launch path, binding.py) and compiled, the GPU-less cost
model predicts each at its own launch grid, and the fastest prediction is the pick.  The spec records it
(`autotune["chosen_by"] == "predicted"`), with every config's prediction and the model's expected error,
so the summary says it is a prediction, not a timing.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tritonscope.core.errors import TritonscopeError, UsageError
from tritonscope.core.words import field_data, said, terms
from tritonscope.pipeline.config import Config

PREDICTED = "predicted"


def compile_predicted(pipeline, config: Config, *, kernel_object: Any = None):
    """compiler.Compiled of the config the model predicts fastest (every kept config is compiled once)."""
    from tritonscope.analyses.analysis import analyze
    from tritonscope.cost import predict
    from tritonscope.pipeline.compile_path import Compiled

    first = pipeline.bind(dataclasses.replace(config, config=None), kernel_object=kernel_object)
    tuned = first.spec.autotune
    if tuned is None:
        from tritonscope.triton_api.launch import tuners_and_heuristics

        has_tuner = tuners_and_heuristics(first.obj)[0] is not None
        raise UsageError(f"{said('config', 'predicted')}: {first.spec.kernel} "
                         + ("compiles no autotune config here (every tuned constexpr is given)" if has_tuner
                            else "has no @triton.autotune") + ", so there is nothing to pick.",
                         hint=f"Leave out the {said('constexprs')} values its configs set." if has_tuner
                         else f"Leave {said('config')} out.", data=field_data("config", "predicted"))
    rows: list[dict[str, Any]] = []
    best = None
    for index in range(1, tuned["count"] + 1):
        loaded = first if index == 1 else pipeline.bind(dataclasses.replace(config, config=index),
                                                        kernel_object=kernel_object)
        if loaded.spec.grid is None:
            raise UsageError(f"{said('config', 'predicted')} needs the launch grid to predict each config at.",
                             hint="Give it with --grid, e.g. --grid 'cdiv(n, BLOCK)'." if terms() == "cli"
                             else "Compile it from the command line with --grid, or give the file an EXAMPLES "
                                  "launch.", data=field_data("config", "predicted"))
        try:
            compiled = pipeline.compile(None, loaded=loaded, status=f"config {index} of {tuned['count']}: compiling "
                                                                    f"{loaded.spec.label()} to predict it...")
        except TritonscopeError as e:  # a config that does not compile is one a tuner skips
            rows.append({"index": index, "label": loaded.spec.label(), "predicted_ms": None,
                         "why": f"{type(e).__name__}: {e.message}"})
            continue
        analysis = analyze(compiled.artifact)
        if analysis.summary.fit is not None and analysis.summary.fit.problems:
            rows.append({"index": index, "label": loaded.spec.label(), "predicted_ms": None,
                         "why": "does not fit: " + "; ".join(analysis.summary.fit.problems)})
            continue
        p = predict(analysis, gpu=config.gpu)
        rows.append({"index": index, "label": loaded.spec.label(), "predicted_ms": p.predicted_ms, "why": p.why,
                     "gpu": p.gpu, "expected_error": getattr(p, "expected_error", None)})
        if p.predicted_ms is not None and (best is None or p.predicted_ms < best[0]):
            best = (p.predicted_ms, index, compiled, p)
    if best is None:
        reasons = "; ".join(f"config {r['index']}: {r['why']}" for r in rows)
        raise UsageError(f"{said('config', 'predicted')}: no config of {first.spec.kernel} could be predicted "
                         f"({reasons}).", hint=f"Pick one with {said('config', 'N')} instead.",
                         data=field_data("config", "predicted"))
    _, index, compiled, p = best
    spec = compiled.artifact.spec
    info = {**(spec.autotune or {}), "chosen_by": PREDICTED, "predictions": rows,
            "gpu": p.gpu, "expected_error": getattr(p, "expected_error", None)}
    spec = dataclasses.replace(spec, autotune=info)
    artifact = dataclasses.replace(compiled.artifact, spec=spec)
    loaded = dataclasses.replace(compiled.loaded, spec=spec) if compiled.loaded is not None else None
    return Compiled(artifact, config, loaded, None)
