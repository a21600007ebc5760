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
        hands them over, so this module, which the API imports, does not import the API).

        Every argument is checked here, at decoration time (TypeError for a value of the wrong kind,
        ValueError for one out of range, NotFoundError for an unknown arch, UsageError for an unknown GPU):
        a hook that cannot predict must not quietly prune nothing at every launch."""
        self.top_k = _top_k(top_k)
        if grid is None:
            raise TypeError("prune_by_prediction needs grid=: the launch grid, a function of the arguments and "
                            "the config's constexprs (grid=lambda meta: (triton.cdiv(meta['n'], meta['BLOCK']),)), "
                            "or a fixed grid; without it no config can be predicted and none would be pruned.")
        if not callable(grid):
            grid = launch_grid(grid)
        if kernel is not None and not isinstance(kernel, str):
            from tritonscope import triton_api

            if triton_api.jit_function(kernel) is None:
                raise TypeError(f"prune_by_prediction: kernel= is the @triton.jit function the configs are for "
                                f"(or leave it out for the one the calling autotuner tunes), not "
                                f"{_shown(kernel)} (a {type(kernel).__name__}).")
        if arch is not None:
            from tritonscope.inputs.kernels import canonical_arch

            if not isinstance(arch, str) or not arch.strip():
                raise TypeError(f"prune_by_prediction: arch= names a target such as 'sm_90a' or 'gfx942', "
                                f"not {_shown(arch)}.")
            arch = canonical_arch(arch)  # 'sm_99': NotFoundError, naming the arches there are
        if gpu is not None:
            from tritonscope.cost import resolve_gpu

            if not isinstance(gpu, str) or not gpu.strip():
                raise TypeError(f"prune_by_prediction: gpu= names a GPU such as 'H100', not {_shown(gpu)} "
                                "(leave it out for the local GPU, else the arch's reference GPU).")
            g = resolve_gpu(gpu, None)  # an unknown name fails here, at decoration time
            if arch is not None and arch not in g.arches:
                raise ValueError(f"prune_by_prediction: gpu={gpu!r} is no {arch} GPU (the {g.name} is "
                                 f"{', '.join(g.arches)}): name a GPU of arch=, or leave one of them out.")
        self.grid, self.gpu, self.kernel, self.arch = grid, gpu, kernel, arch
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
        """Triton's `early_config_prune(configs, nargs, **kwargs)`: the predicted top-k of `configs`, then the
        configs the model cannot judge (kept, never pruned on a guess).  A keyword launch passes its
        arguments in `kwargs`, a positional one in `named_args`: both are read."""
        configs = list(configs)
        self.last = []
        kernel = self._find_kernel()
        if kernel is None or len(configs) <= self.top_k:
            return configs
        scored, kept = [], []
        for cfg in configs:
            ms, row = self._predict_one(kernel, {**dict(named_args), **kwargs}, dict(cfg.kwargs),
                                        num_warps=cfg.num_warps, num_stages=cfg.num_stages)
            self.last.append({"config": str(cfg), **row})
            if ms is not None:
                scored.append((ms, cfg))
            elif row.get("why") != "does not fit":
                kept.append(cfg)
        if not scored:
            return configs
        scored.sort(key=lambda x: x[0])
        return [c for _, c in scored[:self.top_k]] + kept

    def perf_model(self, **launch: Any) -> float:
        """Triton's `prune_configs_by={"perf_model": ..., "top_k": k}` slot: Triton calls it once per config
        with `**nargs, **kwargs, **config.all_kwargs()` and keeps the k lowest.  The predicted milliseconds;
        0.0 for a config the model cannot judge (so it is kept, never pruned on a guess) and infinity for one
        that does not fit."""
        kernel = self._find_kernel()
        if kernel is None:
            return 0.0
        words = {k: launch.pop(k) for k in ("num_warps", "num_stages", "num_ctas", "maxnreg", "ir_override")
                 if k in launch}
        ms, row = self._predict_one(kernel, launch, {}, num_warps=words.get("num_warps", 4),
                                    num_stages=words.get("num_stages", 3))
        self.last.append(row)
        if ms is None:
            return float("inf") if row.get("why") == "does not fit" else 0.0
        return ms

    def _predict_one(self, kernel, values: dict[str, Any], config: dict[str, Any], *, num_warps: int,
                     num_stages: int) -> tuple[float | None, dict[str, Any]]:
        """(predicted ms or None, what to record) for one config: the launch's values split into the kernel's
        runtime arguments and constexprs (the config's own constexprs win), compiled GPU-less and predicted
        at the grid= of this config."""
        from tritonscope import triton_api
        from tritonscope.core.errors import OutOfResourcesError, TritonscopeError
        from tritonscope.cost import predict

        jit_fn = triton_api.jit_function(kernel)
        params = triton_api.kernel_params(jit_fn) if jit_fn is not None else []
        constexpr_names = {name for name, is_const, _ in params if is_const}
        runtime_names = {name for name, is_const, _ in params if not is_const}
        args = {k: self._describe_arg(v) for k, v in values.items() if k in runtime_names}
        constexprs = {k: v for k, v in values.items() if k in constexpr_names and k not in config}
        constexprs.update({k: v for k, v in config.items() if k in constexpr_names})
        meta = {**values, **config, "num_warps": num_warps, "num_stages": num_stages}
        try:
            grid = self.grid(meta) if callable(self.grid) else self.grid
        except Exception as e:  # the grid function cannot answer for this config: keep it, unjudged
            return None, {"why": f"not predicted: grid= raised {type(e).__name__}: {e}"}
        grid = launch_grid(grid)  # an int is a 1-D grid; anything else that is no grid: TypeError, said so
        try:
            result = self._compile(kernel, constexprs=constexprs, args=args, num_warps=num_warps,
                                   num_stages=num_stages, arch=self.arch)
        except OutOfResourcesError:
            return None, {"why": "does not fit"}
        except (TritonscopeError, Exception) as e:  # cannot judge it: keep it, never prune on a guess
            return None, {"why": f"not predicted: {e}"}
        p = predict(result.analysis, gpu=self.gpu, grid=grid, args=args)
        if not p.ok:
            return None, {"why": p.why}
        return p.predicted_ms, {"predicted_ms": p.predicted_ms, "regime": p.regime}


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:50] + "..."


def _top_k(value: Any) -> int:
    """top_k: a whole number of configs, at least 1 ('3', 2.5, nan and True are refused)."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"prune_by_prediction: top_k is how many configs to keep, a whole number (an int), "
                        f"not {_shown(value)} (a {type(value).__name__}).")
    if value < 1:
        raise ValueError(f"prune_by_prediction: top_k must be at least 1, got {value}.")
    return int(value)


def launch_grid(value: Any) -> tuple[int, ...]:
    """A launch grid as Triton takes one: an int (a 1-D grid) or a tuple/list of 1 to 3 ints, each 0 or more;
    anything else is a TypeError (ValueError for a negative size) that says what a grid is."""
    import numbers

    dims = (value,) if isinstance(value, numbers.Integral) and not isinstance(value, bool) else value
    if not isinstance(dims, (tuple, list)) or not 1 <= len(dims) <= 3 or \
            any(isinstance(d, bool) or not isinstance(d, numbers.Integral) for d in dims):
        raise TypeError(f"prune_by_prediction: grid= gave {_shown(value)}; a launch grid is an int or a tuple of "
                        "1 to 3 ints, e.g. (triton.cdiv(meta['n'], meta['BLOCK']),).")
    if any(d < 0 for d in dims):
        raise ValueError(f"prune_by_prediction: grid= gave {_shown(value)}; a grid's sizes are 0 or more.")
    return tuple(int(d) for d in dims)
