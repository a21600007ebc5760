"""`capture --arch ARCH` with no GPU: the program runs on the CPU and every Triton launch is compiled, not run.

Started by sitecustomize in each Python process of the program when TRITONSCOPE_CAPTURE_ARCH is set:

- torch (when the program imports it): `cuda` tensors live in CPU memory (cuda_standin.py), and torch.cuda
  answers as one device of the target;
- Triton (when the program imports it): its driver answers as the target's reference GPU (or --gpu), as
  `compile` does (triton_api.device_answers), for the whole run.  A launch, `kernel[grid](...)`, runs the
  kernel's own decorator stack (Heuristics, the Autotuner's key and pruning) and reaches
  `JITFunction.run`, which is Triton's own: it binds and specializes the real arguments (a pointer's
  16-byte divisibility from its address, an integer's value) and compiles for the target, as a launch on
  that GPU would; the one change is `warmup=True`, so it stops before loading and launching the kernel.
  The capture's hooks then record the compile (the compilation listener) and the launch (arguments, grid)
  as they do on a GPU; the launch count is counted here, since no launch hook fires.
- torch.compile (inductor_gpuless.py): Dynamo's graphs go to Inductor as graphs on `cuda`; Inductor writes
  its kernel files and Triton compiles each for the target (recorded by the same listener); no binary is
  loaded and nothing runs: the compiled graph returns `cuda` tensors whose values are not computed.
- An Autotuner cannot time its configs.  Its `_bench` (the one step that needs a GPU) is replaced: each
  config its pruning keeps is compiled (as benchmarking it would), and the cost model predicts its time at
  its own grid where it can (`tritonscope.cost.predict`, as `explain --predict`); Triton's own
  `Autotuner.run` then takes the fastest prediction, or the first config when none could be predicted.
  The capture records every config, that none was timed, and each one's prediction or why there is none.

The kernels' outputs are not computed: whatever a kernel would have written keeps what the buffer held.
"""

from __future__ import annotations

import math
import os
import sys
import threading
from pathlib import Path
from typing import Any

ENV_ARCH = "TRITONSCOPE_CAPTURE_ARCH"
ENV_GPU = "TRITONSCOPE_CAPTURE_GPU"

_state = threading.local()
_kept: list = []
_started = False


def start() -> None:
    """Install the CPU device for torch and the GPU-less launch for Triton, each when the program imports it."""
    global _started
    arch = os.environ.get(ENV_ARCH)
    if not arch or _started:
        return
    _started = True
    from tritonscope.inputs import capture

    gpu = os.environ.get(ENV_GPU) or None

    def torch_ready() -> None:
        # torch.cuda's answers (is_available, the capability) come with Triton's stand-in driver: both are up
        # before the program's next line, whichever of torch and triton it imports first
        import triton  # noqa: F401

        from tritonscope._capture_boot import cuda_standin

        cuda_standin.install(sys.modules["torch"])
        from tritonscope._capture_boot import inductor_gpuless

        inductor_gpuless.install(sys.modules["torch"])

    def triton_ready() -> None:
        _answer_as_target(arch, gpu)
        _patch_launch()
        _patch_autotuner()
        capture.install(os.environ[capture.ENV_DIR], gpuless={"arch": arch, "gpu": gpu})

    capture.after_import("torch", torch_ready)
    capture.after_import("triton", triton_ready)


def _answer_as_target(arch: str, gpu: str | None) -> None:
    """Triton's driver (and torch.cuda's device questions) answer as the target, for the rest of the process."""
    from tritonscope.inputs.kernels import answering

    context, answers = answering(arch, gpu)
    if answers is None:
        raise RuntimeError(f"this Triton cannot compile for {arch} (its backend is not installed)")
    context.__enter__()  # never left: the whole program runs as on the target
    _kept.append(context)  # a generator context that is collected would run its `finally` and undo the answers


def _patch_launch() -> None:
    from triton.runtime.jit import JITFunction

    original = JITFunction.run

    def run(self, *args, grid, warmup, **kwargs):
        kernel = original(self, *args, grid=grid, warmup=True, **kwargs)
        if not warmup and kernel is not None:
            if hasattr(kernel, "result"):  # an async compile's future
                kernel = kernel.result()
            _state.last = kernel
            from tritonscope.inputs import capture

            recorder = capture.current()
            if recorder is not None:
                recorder.count_launch(kernel)
        return kernel

    JITFunction.run = run


def _patch_autotuner() -> None:
    from triton.runtime.autotuner import Autotuner

    Autotuner._bench = _bench
    if hasattr(Autotuner, "check_disk_cache"):  # a tuning result on disk was timed on some GPU: not used here
        def check_disk_cache(self, tuning_key, configs, bench_fn):
            bench_fn()
            return False

        Autotuner.check_disk_cache = check_disk_cache


def _bench(self, *args, config, **meta):
    """Autotuner._bench with no GPU: compile the config (its launch recorded, nothing run) and predict its time.

    Returns what Triton's `_bench` returns, [median, p20, p80] in ms: the prediction three times, or inf when
    there is none (Triton's own value for a config that cannot run), so Triton's `min` picks the fastest
    prediction, or the first config when nothing could be predicted."""
    from tritonscope.inputs import capture

    conflicts = meta.keys() & config.kwargs.keys()
    if conflicts:  # as Triton's own _bench refuses it
        raise ValueError(f"Conflicting meta-parameters: {', '.join(conflicts)}."
                         " Make sure that you don't re-define auto-tuned symbols.")
    current = dict(meta, **config.all_kwargs())
    full_nargs = {**self.nargs, **current}
    recorder = capture.current()
    _state.last = None
    try:
        if config.pre_hook:
            config.pre_hook(full_nargs)
        self.pre_hook(full_nargs)
        self.fn.run(*args, **current)
        self.post_hook(full_nargs, exception=None)
    except Exception as e:
        if type(e).__name__ not in ("OutOfResources", "CompileTimeAssertionFailure", "PTXASError"):
            raise
        _note(recorder, config, None, f"does not compile for the target: {type(e).__name__}: {e}")
        return [math.inf] * 3
    kernel = getattr(_state, "last", None)
    ms, why = _predict(kernel, recorder)
    _note(recorder, config, ms, why)
    return [math.inf] * 3 if ms is None else [ms] * 3


def _note(recorder, config, ms: float | None, why: str | None) -> None:
    if recorder is not None:
        recorder.predictions[id(config)] = {"predicted_ms": ms, "why": why}


def _predict(kernel, recorder) -> tuple[float | None, str | None]:
    """(the cost model's time for this compiled config at its recorded grid, else None and why)."""
    if kernel is None or recorder is None:
        return None, "the config was not compiled"
    key = str(getattr(getattr(kernel, "metadata", None), "hash", "") or "")
    grid = recorder.last_grid.get(key)
    if grid is None:
        return None, "its launch grid is not known"
    try:
        from tritonscope.analyses.analysis import analyze
        from tritonscope.cost import predict
        from tritonscope.inputs.sources import load_artifact, open_source

        folder = Path(recorder.folder) / "kernels" / key
        source = open_source(folder)
        entry = source.entries[0]
        artifact = load_artifact(entry, target=str(folder))
        p = predict(analyze(artifact), gpu=os.environ.get(ENV_GPU) or None, grid=tuple(grid),
                    args=dict(recorder.last_scalars.get(key) or {}))
    except Exception as e:  # a prediction is extra: never break the program
        return None, f"no prediction: {type(e).__name__}: {e}"
    return p.predicted_ms, (None if p.predicted_ms is not None else p.why)
