"""Predicted time, GPU-less: a kernel's time for a problem on a chosen GPU, from its compiled code.

    features.py   compiled facts for one config at one problem (TTGIR loops and trip counts, SASS per loop)
    model.py      facts + GPU -> Prediction (terms, regime, expected error, roofline bound)
    (the GPUs' datasheet figures are core/gpus.json, read through core/gpus.py)
    calibration.json  constants fitted on measured groups (device, driver, Triton, date)

`predict(analysis, gpu=...)` is the one entry point for commands; it never
raises for a kernel it does not cover: it returns a Prediction whose
`predicted_ms` is None and whose `why` says why.

Imports core, triton_api, language, inputs, pipeline and analyses (layers: tests/test_imports.py).
"""

from __future__ import annotations

from typing import Any

from tritonscope.cost.model import (Gpu, Prediction, calibration, constants_for, find_gpu, gpu_names,  # noqa: F401
                                    gpu_table, predict_features, reference_gpu, widest_error)


def resolve_gpu(name: str | None, arch: str | None) -> Gpu | None:
    """--gpu NAME (None: the arch's reference GPU).  Unknown names raise UsageError (exit 2)."""
    from tritonscope.core.gpus import gpu_or_refuse

    if name:
        return gpu_or_refuse(name)
    local = local_gpu()
    if local is not None and (arch is None or arch in local.arches):
        return local
    return reference_gpu(arch or "")


def local_gpu() -> Gpu | None:
    """The GPU this machine has, when torch is already imported and sees one (never imports torch)."""
    import sys

    torch = sys.modules.get("torch")
    try:
        if torch is None or not torch.cuda.is_available():
            return None
        name = torch.cuda.get_device_name(0)
    except Exception:
        return None
    from tritonscope.core.gpus import gpu_for_device

    return gpu_for_device(name)


def predict(analysis, *, gpu: Gpu | str | None = None, grid: tuple[int, ...] | None = None,
            args: dict[str, Any] | None = None) -> Prediction:
    """The predicted time of one compiled config (at its own launch, or `grid`/`args`)."""
    from tritonscope.cost.features import NoFeatures, features_of

    arch = analysis.artifact.spec.arch
    g = find_gpu(gpu) if isinstance(gpu, str) else (gpu or resolve_gpu(None, arch))
    if g is None:
        from tritonscope.core.gpus import known_gpus

        return Prediction(None, str(gpu or "?"), why=f"no GPU known for {arch}: name one with --gpu ({known_gpus()})")
    try:
        f = features_of(analysis, grid, args)
    except NoFeatures as e:
        return Prediction(None, g.name, why=str(e))
    return predict_features(f, g)
