"""The @triton.autotune hook: keep the configs the cost model predicts fastest, run none.

Triton calls `early_config_prune(configs, named_args, **kwargs)` before it
benchmarks; this returns the predicted top-k of `configs`.  Each config is
compiled GPU-less through the API's compile (the same compile the CLI
does), so the hook costs compiles, not GPU time.
"""

from __future__ import annotations

import inspect
from typing import Any


class PredictedPrune:
    def __init__(self, top_k: int, *, compile_fn, describe_arg, grid=None, gpu: str | None = None,
                 kernel: Any = None, arch: str | None = None):
        """`compile_fn` and `describe_arg` are the Python API's compile and argument description (api.py
        hands them over, so this module, which the API imports, does not import the API)."""
        from tritonscope.core.errors import UsageError

        if top_k < 1:
            raise UsageError(f"top_k must be at least 1, got {top_k}.")
        if gpu is not None:
            from tritonscope.cost import resolve_gpu

            resolve_gpu(gpu, None)  # an unknown name fails here, at decoration time
        self.top_k, self.grid, self.gpu, self.kernel, self.arch = top_k, grid, gpu, kernel, arch
        self._compile, self._describe_arg = compile_fn, describe_arg
        self.last: list[dict[str, Any]] = []   # what the last call predicted: config, predicted_ms or why

    def _find_kernel(self):
        if self.kernel is not None:
            return self.kernel
        frame = inspect.currentframe()
        while frame is not None:  # the Autotuner that called us tunes this function
            me = frame.f_locals.get("self")
            if me is not None and type(me).__name__ == "Autotuner" and hasattr(me, "fn"):
                return me.fn
            frame = frame.f_back
        return None

    def __call__(self, configs, named_args, **kwargs):
        from tritonscope.cost import predict
        from tritonscope.core.errors import OutOfResourcesError, TritonscopeError

        kernel = self._find_kernel()
        configs = list(configs)
        self.last = []
        if kernel is None or self.grid is None or len(configs) <= self.top_k:
            return configs
        args = {k: self._describe_arg(v) for k, v in dict(named_args).items() if not callable(v)}
        scored, kept = [], []
        for cfg in configs:
            meta = {**dict(named_args), **kwargs, **dict(cfg.kwargs)}
            try:
                grid = self.grid(meta) if callable(self.grid) else self.grid
                result = self._compile(kernel, constexprs=dict(cfg.kwargs), args=args, num_warps=cfg.num_warps,
                                     num_stages=cfg.num_stages, arch=self.arch)
            except OutOfResourcesError:
                self.last.append({"config": str(cfg), "why": "does not fit"})
                continue  # never ranked
            except (TritonscopeError, Exception) as e:  # cannot judge it: keep it, never prune on a guess
                kept.append(cfg)
                self.last.append({"config": str(cfg), "why": f"not predicted: {e}"})
                continue
            p = predict(result.analysis, gpu=self.gpu, grid=tuple(grid), args=args)
            if p.ok:
                scored.append((p.predicted_ms, cfg))
                self.last.append({"config": str(cfg), "predicted_ms": p.predicted_ms, "regime": p.regime})
            else:
                kept.append(cfg)
                self.last.append({"config": str(cfg), "why": p.why})
        if not scored:
            return configs
        scored.sort(key=lambda x: x[0])
        return [c for _, c in scored[:self.top_k]] + kept
