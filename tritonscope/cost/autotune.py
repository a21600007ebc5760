"""The @triton.autotune hook: keep the configs the cost model predicts fastest, run none.

Triton calls `early_config_prune(configs, named_args, **kwargs)` before it
benchmarks; this returns the predicted top-k of `configs`.  The configs are
compiled GPU-less (the same bind and compile the CLI does) in worker
processes forked from the launching one, as `tune` compiles its grid: one
worker per core by default (`jobs=`, else TRITONSCOPE_PRUNE_JOBS), the
kernel object inherited (no file is run again).  A worker disassembles a
config only while the model could still rank it in the top k (cost/ranking.py,
tune's lower-bound pruning).  The compiles land in Triton's own cache under
the launch's key, so the autotuner's compile of the survivors loads them.
Where workers cannot be forked (not Linux), the configs are compiled one by
one in this process.

What is kept: the top k *distinct* kernels (configs whose SASS is the same, such as num_stages of a kernel with
no loop to pipeline, are one kernel: benchmarking both times the same code twice), plus one more when it is
predicted within TIE of the k-th (a tie the model cannot break: on the stored measured groups this keeps the
best within 3% in 57 of 62 groups at 3.5 configs on average, top 3 in 52 at 3, top 4 in 58 at 4).  tritonscope's
modules a call uses are imported when the hook is made (`made_s`), not in the first launch.
"""

from __future__ import annotations

import inspect
import os
import time
from typing import Any

JOBS_ENV = "TRITONSCOPE_PRUNE_JOBS"
# The launch grid Triton hands the pruner (kernel[grid](...) passes it to Autotuner.run, which passes it on).
LAUNCH_GRID = "launch"
_OPTION_WORDS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "ir_override")

# What the forked workers compile: set in the parent just before they fork (they inherit it), None otherwise.
_JOB: dict[str, Any] | None = None
_REMARKS = False   # Triton's remarks are not read here (collecting them costs compile time)
TIE = 0.02         # one config more is kept when predicted within this share of the k-th kept one


class PredictedPrune:
    def __init__(self, top_k: int, *, compile_fn, describe_arg, grid=None, gpu: str | None = None,
                 kernel: Any = None, arch: str | None = None, jobs: int | None = None):
        """`compile_fn` and `describe_arg` are the Python API's compile and argument description (api.py
        hands them over, so this module, which the API imports, does not import the API).

        Every argument is checked here, at decoration time (TypeError for a value of the wrong kind,
        ValueError for one out of range, NotFoundError for an unknown arch, UsageError for an unknown GPU):
        a hook that cannot predict must not quietly prune nothing at every launch.

        `grid="launch"`: the grid the launch itself passes (`kernel[grid](...)`; Triton hands it to the pruner).
        `jobs`: compile workers (default: TRITONSCOPE_PRUNE_JOBS, else one per core)."""
        self.top_k = _top_k(top_k)
        self.jobs = _jobs(jobs)
        if grid is None:
            raise TypeError("prune_by_prediction needs grid=: the launch grid, a function of the arguments and "
                            "the config's constexprs (grid=lambda meta: (triton.cdiv(meta['n'], meta['BLOCK']),)), "
                            "a fixed grid, or grid=\"launch\" for the launch's own; without it no config can be "
                            "predicted and none would be pruned.")
        if not callable(grid) and grid != LAUNCH_GRID:
            grid = launch_grid(grid)
            from tritonscope.inputs.grid import MAX_DIM

            if not all(1 <= d <= MAX_DIM for d in grid):  # a fixed grid no launch runs: no config could be predicted
                raise ValueError(f"prune_by_prediction: grid={_shown(grid)}; a launch runs 1 to {MAX_DIM} programs "
                                 "along each dimension.")
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
        made = time.perf_counter()
        warm_soon()   # Triton's cache key hashed on a thread while the program sets itself up
        _import_now()  # tritonscope's modules the call uses (about 0.3-0.5 s), here rather than in the first launch
        self.made_s = time.perf_counter() - made
        self.last: list[dict[str, Any]] = []   # what the last call predicted: config, predicted_ms or why
        self.seconds = 0.0                      # the last call's wall time
        self.phases: dict[str, float] = {}      # the last parallel call's: seconds from its start to each step
        self._memo: dict[str, dict[str, float | None]] = {}   # perf_model: launch -> config -> predicted ms

    def _find_kernel(self):
        if self.kernel is not None:
            return self.kernel
        tuner = _calling_tuner()   # the Autotuner that called us tunes this function
        return tuner.fn if tuner is not None else None

    def __call__(self, configs, named_args, **kwargs):
        """Triton's `early_config_prune(configs, nargs, **kwargs)`: the predicted top-k of `configs`, then the
        configs the model cannot judge (kept, never pruned on a guess).  A keyword launch passes its
        arguments in `kwargs`, a positional one in `named_args`: both are read."""
        configs = _configs(configs)
        self.last = []
        kernel = self._find_kernel()
        if kernel is None or len(configs) <= self.top_k:
            return configs
        started = self._started = time.perf_counter()
        scored, kept = [], []
        for i, (cfg, (ms, row)) in enumerate(zip(configs, self.predict_all(kernel, {**dict(named_args), **kwargs},
                                                                            configs))):
            self.last.append({"config": str(cfg), **row})
            if ms is not None:
                scored.append((ms, i))
            elif row.get("why") != "does not fit" and "bound_ms" not in row:   # a bound above the top k: out
                kept.append(cfg)
        self.seconds = time.perf_counter() - started
        if not scored:
            return configs
        chosen = short_list(scored, [r.get("sass_digest") for r in self.last], self.top_k)
        for i in chosen:
            self.last[i]["kept"] = True
        return [configs[i] for i in chosen] + kept

    def predict_all(self, kernel, values: dict[str, Any], configs: list) -> list[tuple[float | None, dict[str, Any]]]:
        """(predicted ms or None, what to record) per config, in order: compiled in forked workers (one per
        core, or `jobs`), each disassembled only while it could still rank in the top k (a config whose lower
        bound is above the threshold gets `bound_ms` and no prediction); one by one here where no worker can
        be forked."""
        import sys

        if not sys.platform.startswith("linux"):
            return [self._predict_one(kernel, values, dict(cfg.kwargs), num_warps=cfg.num_warps,
                                      num_stages=cfg.num_stages) for cfg in configs]
        return _predict_in_workers(self, kernel, values, configs)

    def perf_model(self, **launch: Any) -> float:
        """Triton's `prune_configs_by={"perf_model": ..., "top_k": k}` slot: Triton calls it once per config
        with `**nargs, **kwargs, **config.all_kwargs()` and keeps the k lowest.  The predicted milliseconds;
        0.0 for a config the model cannot judge (so it is kept, never pruned on a guess) and infinity for one
        that does not fit.  Inside an Autotuner, its first call for a launch predicts all the tuner's configs
        at once (in workers, as the pruner does) and the later calls read the answers."""
        kernel = self._find_kernel()
        if kernel is None:
            return 0.0
        tuner = _calling_tuner()
        configs = list(getattr(tuner, "configs", None) or [])
        tuned = {k for cfg in configs for k in cfg.kwargs} | set(_OPTION_WORDS)
        mine = next((c for c in configs if all(launch.get(k) == v for k, v in c.all_kwargs().items())), None)
        if mine is not None:
            values = {k: v for k, v in launch.items() if k not in tuned}
            key = repr(sorted((k, repr(self._describe_arg(v))) for k, v in values.items()))
            if key not in self._memo:
                self.last = []
                answers = {}
                for cfg, (ms, row) in zip(configs, self.predict_all(kernel, values, configs)):
                    self.last.append({"config": str(cfg), **row})
                    answers[str(cfg)] = ms if ms is not None else \
                        (float("inf") if row.get("why") == "does not fit" or "bound_ms" in row else 0.0)
                seen: set[str] = set()   # a config whose SASS an earlier-ranked one has scores after the distinct ones
                for ms, i in sorted((ms, i) for i, ms in enumerate(answers.values()) if 0.0 < ms < float("inf")):
                    digest = self.last[i].get("sass_digest")
                    if digest is not None and digest in seen:
                        answers[str(configs[i])] = DUPLICATE_MS + ms
                    seen.add(digest)
                self._memo = {key: answers}   # the last launch's only
            return self._memo[key][str(mine)]
        words = {k: launch.pop(k) for k in _OPTION_WORDS if k in launch}
        ms, row = self._predict_one(kernel, launch, {}, num_warps=words.get("num_warps", 4),
                                    num_stages=words.get("num_stages", 3))
        self.last.append(row)
        if ms is None:
            return float("inf") if row.get("why") == "does not fit" else 0.0
        return ms

    def grid_for(self, meta: dict[str, Any]) -> tuple[tuple[int, ...] | None, str | None]:
        """(this config's launch grid, None) or (None, why it has none): grid= (or the launch's own grid) at
        the config's values."""
        grid = meta.get("grid") if self.grid == LAUNCH_GRID else self.grid
        if grid is None:
            return None, "not predicted: grid=\"launch\", but the launch passed no grid to the pruner"
        try:
            grid = grid(meta) if callable(grid) else grid
        except Exception as e:  # the grid function cannot answer for this config: keep it, unjudged
            return None, f"not predicted: grid= raised {type(e).__name__}: {e}"
        grid = launch_grid(grid)  # an int is a 1-D grid; anything else that is no grid: TypeError
        from tritonscope.inputs.grid import MAX_DIM

        if not all(1 <= d <= MAX_DIM for d in grid):  # (0,) ended in the model's ZeroDivisionError
            return None, (f"not predicted: grid= gave {_shown(grid)} for this config; a launch runs 1 to {MAX_DIM} "
                          "programs along each dimension")
        return grid, None

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
        grid, why = self.grid_for(meta)
        if grid is None:
            return None, {"why": why}
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


DUPLICATE_MS = 1e9   # perf_model's score of a config whose SASS a faster-predicted config has (after every other)


def short_list(scored: list[tuple[float, int]], digests: list[str | None], top_k: int) -> list[int]:
    """The indexes kept, fastest first: from (predicted ms, index) pairs, the top_k distinct kernels (a config
    whose SASS digest an earlier-ranked one has is skipped), plus one more when it is predicted within TIE of
    the top_k-th (a tie the model cannot break)."""
    out: list[int] = []
    seen: set[str] = set()
    for ms, i in sorted(scored):
        digest = digests[i] if i < len(digests) else None
        if digest is not None and digest in seen:
            continue
        if digest is not None:
            seen.add(digest)
        if len(out) < top_k:
            out.append(i)
        elif len(out) == top_k and ms <= (1 + TIE) * next(m for m, j in scored if j == out[-1]):
            out.append(i)
            break
        else:
            break
    return out


def _import_now() -> None:
    """tritonscope's modules a hook call and its workers use, imported when the hook is made (Triton's own, which
    a plain autotune's first compile imports too, stay in the call: _warm)."""
    try:
        import tritonscope.analyses.explain  # noqa: F401
        import tritonscope.analyses.summary  # noqa: F401
        import tritonscope.cost.features  # noqa: F401
        import tritonscope.cost.ranking  # noqa: F401
        import tritonscope.inputs.kernels  # noqa: F401
        import tritonscope.pipeline.binding  # noqa: F401
        import tritonscope.pipeline.compile_path  # noqa: F401
        import tritonscope.pipeline.config  # noqa: F401
        import tritonscope.pipeline.result_cache  # noqa: F401
    except Exception:  # an optimisation only: the call imports what it needs
        pass


def _calling_tuner():
    """The triton Autotuner (or a library's subclass of it, such as fla's CachedAutotuner) whose prune_configs
    called us (up the stack), or None."""
    try:
        from triton.runtime.autotuner import Autotuner
    except ImportError:
        return None
    frame = inspect.currentframe()
    while frame is not None:
        me = frame.f_locals.get("self")
        if isinstance(me, Autotuner) and hasattr(me, "fn"):
            return me
        frame = frame.f_back
    return None


def default_jobs() -> int:
    """Compile workers by default: TRITONSCOPE_PRUNE_JOBS (checked at decoration), else one per core."""
    env = _jobs_from_env()
    if env is not None:
        return env
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def _predict_in_workers(hook: PredictedPrune, kernel, values: dict[str, Any],
                        configs: list) -> list[tuple[float | None, dict[str, Any]]]:
    """PredictedPrune.predict_all on forked workers (see the module docstring); rows in `configs` order."""
    global _JOB
    import concurrent.futures as cf
    import multiprocessing
    import warnings

    from tritonscope import triton_api
    from tritonscope.cost import find_gpu, predict_features, resolve_gpu
    from tritonscope.cost.ranking import Threshold, new_pruning
    from tritonscope.inputs.kernels import Request, held_kernel
    from tritonscope.pipeline.config import resolve

    called = getattr(hook, "_started", None) or time.perf_counter()
    jit_fn = triton_api.jit_function(kernel)
    params = triton_api.kernel_params(jit_fn) if jit_fn is not None else []
    constexpr_names = {name for name, is_const, _ in params if is_const}
    args = {k: hook._describe_arg(v) for k, v in values.items() if k in {n for n, c, _ in params if not c}}
    path, _, name, _, _ = held_kernel(kernel)
    arch = hook.arch or _launch_arch()   # asked once (resolve would ask nvidia-smi once per config)
    out: list[tuple[float | None, dict[str, Any]] | None] = [None] * len(configs)
    todo: dict[int, tuple[Any, tuple[int, ...]]] = {}
    for i, cfg in enumerate(configs):
        config = dict(cfg.kwargs)
        grid, why = hook.grid_for({**values, **config, "num_warps": cfg.num_warps, "num_stages": cfg.num_stages})
        if grid is None:
            out[i] = (None, {"why": why})
            continue
        keywords = {k: v for k, v in values.items() if k in constexpr_names and k not in config}
        keywords.update({k: v for k, v in config.items() if k in constexpr_names})
        if getattr(cfg, "maxnreg", None) is not None:   # launch options the autotuner's launch passes too
            keywords["maxnreg"] = cfg.maxnreg
        if (getattr(cfg, "num_ctas", 1) or 1) != 1:
            keywords["num_ctas"] = cfg.num_ctas
        try:
            todo[i] = (resolve(Request(target=f"{path}:{name}", constexprs=keywords, args=args,
                                       num_warps=cfg.num_warps, num_stages=cfg.num_stages, arch=arch)), grid)
        except Exception as e:  # a value the request checks refuse: cannot judge it, keep it
            out[i] = (None, {"why": f"not predicted: {e}"})
    if todo:
        arch = next(iter(todo.values()))[0].arch
        g = find_gpu(hook.gpu) if hook.gpu else resolve_gpu(None, arch)
        if g is None:
            for i in todo:
                out[i] = (None, {"why": f"not predicted: no GPU known for {arch} (name one with gpu=)"})
            todo = {}
    if not todo:
        return out  # type: ignore[return-value]
    ctx = multiprocessing.get_context("fork")
    pruning, margin = new_pruning(g, ctx)
    threshold = Threshold(pruning, hook.top_k, margin)
    t0 = time.perf_counter()
    phases = hook.phases = {"prepare_s": t0 - called}   # the requests resolved, since the call began
    _warm()
    phases["warm_s"] = time.perf_counter() - t0
    _JOB = {"kernel": kernel, "todo": todo, "args": args, "pruning": pruning}
    pool = None
    try:
        with warnings.catch_warnings():  # Python 3.12 warns of fork() in a process with threads: the workers
            warnings.simplefilter("ignore", DeprecationWarning)  # run no thread of the parent's, and no CUDA
            pool = cf.ProcessPoolExecutor(max_workers=min(hook.jobs or default_jobs(), len(todo)), mp_context=ctx,
                                          initializer=_worker_init)
            futures = {pool.submit(_compile_config, i): i for i in todo}
        phases["start_s"] = time.perf_counter() - t0
        for fut in cf.as_completed(futures):
            i = futures[fut]
            try:
                got = fut.result()
            except Exception as e:  # the worker died (BrokenProcessPool) or could not send its answer
                got = {"why": f"not predicted: the compile worker failed ({type(e).__name__}: {e})"}
            row = {k: got[k] for k in ("worker", "compile_s", "stages", "sass_digest") if k in got}
            phases.setdefault("first_result_s", time.perf_counter() - t0)
            ms = None
            if got.get("facts") is not None:
                p = predict_features(got["facts"], g)
                if p.ok:
                    ms = p.predicted_ms
                    row.update(predicted_ms=ms, regime=p.regime)
                    threshold.add(ms)
                else:
                    row["why"] = p.why
            elif got.get("bound_ms") is not None:
                row.update(bound_ms=got["bound_ms"], why="not predicted: its lower bound is above the top k's")
            else:
                row["why"] = got.get("why") or "not predicted"
            out[i] = (ms, row)
    except KeyboardInterrupt:
        if pool is not None:
            _stop(pool)
        raise
    finally:
        phases["results_s"] = time.perf_counter() - t0
        if pool is not None:
            pool.shutdown(wait=True)
        phases["done_s"] = time.perf_counter() - t0
        _JOB = None
    return out  # type: ignore[return-value]


def _launch_arch() -> str | None:
    """The arch the launching process compiles for (its active Triton driver's target), None when unknown (then
    resolve finds the local GPU's)."""
    try:
        from triton.runtime import driver

        target = driver.active.get_current_target()
        from tritonscope.core.model import ARCHES, arch_for_capability

        if target.backend == "cuda":
            found = arch_for_capability(int(target.arch))
            return found.name if found else None
        return str(target.arch) if str(target.arch) in ARCHES else None
    except Exception:  # no driver (a machine without a GPU): resolve decides
        return None


def _stop(pool) -> None:
    """Cancel what has not started and end the workers (they ignore SIGINT)."""
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        if proc.is_alive():
            proc.terminate()


def warm_soon() -> None:
    """Start hashing Triton's library for its cache key (the slow part of triton_key, SHA-256 over 500 MB) on a
    daemon thread now, when the hook is made with its kernel: the program then makes its inputs before the first
    launch calls the hook, which finds the digest done.  The thread imports nothing that the program may be
    importing meanwhile (a second thread importing Triton's modules broke fla's import: 'partially initialized
    module triton.compiler'); the imports stay in the call (_warm).  TRITONSCOPE_PRUNE_WARM=0 turns it off."""
    if os.environ.get("TRITONSCOPE_PRUNE_WARM", "").strip() == "0":
        return
    from tritonscope.triton_api.key import start_key_digest

    start_key_digest()


def _warm() -> None:
    """What every forked worker would otherwise do before its first compile, done once here: the modules a
    compile and the model use, and Triton's cache key (from the digest warm_soon started, else computed now;
    the launch needs it anyway)."""
    try:
        _warm_modules()
    except Exception:  # an optimisation only: the workers import what they need themselves
        pass


def _warm_modules() -> None:
    import tritonscope.analyses.explain  # noqa: F401  (imported for the forked workers: about 1 s each, else)
    import tritonscope.analyses.summary  # noqa: F401
    import tritonscope.cost.features  # noqa: F401
    import tritonscope.pipeline.binding  # noqa: F401
    import tritonscope.pipeline.compile_path  # noqa: F401
    import tritonscope.pipeline.result_cache  # noqa: F401
    import tritonscope.pipeline.triton_compile  # noqa: F401

    try:
        # what Triton's first compile in a process imports (the launch's own compile would import them too)
        import triton.compiler.code_generator  # noqa: F401
        import triton.experimental.gluon  # noqa: F401
        import triton.runtime.cache as cache
        import triton.tools.tensor_descriptor  # noqa: F401

        from tritonscope.triton_api.key import _install_key

        _install_key()
        cache.triton_key()
    except Exception:  # an optimisation only: the workers do it themselves if this fails
        pass


def _worker_init() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)   # Ctrl-C goes to the process group; the parent decides
    from tritonscope import triton_api

    triton_api.quiet_known_warnings()


def _compile_config(index: int) -> dict[str, Any]:
    """In a worker: compile one config of _JOB GPU-less (into Triton's cache, under the launch's key) and
    return the model's facts, or its lower bound when it cannot rank (cost/ranking.py), or why neither."""
    from tritonscope.analyses.summary import summarize
    from tritonscope.cost.ranking import facts_if_ranked
    from tritonscope.pipeline.compile_path import Pipeline

    job = _JOB
    assert job is not None, "a prune worker runs only inside _predict_in_workers"
    config, grid = job["todo"][index]
    started = time.perf_counter()
    out: dict[str, Any] = {"worker": os.getpid()}
    stages = out["stages"] = {}
    try:
        pipe = Pipeline(sass=False, remarks=_REMARKS)
        loaded = pipe.bind(config, kernel_object=job["kernel"])
        stages["bind"] = round(time.perf_counter() - started, 4)
        artifact = pipe.compile(config, loaded=loaded).artifact
        summary = summarize(artifact)
        stages["compile"] = round(time.perf_counter() - started - stages["bind"], 4)
        if summary.fit is not None and summary.fit.problems:
            out["why"] = "does not fit"
        else:
            facts, bound = facts_if_ranked(artifact, summary, job["pruning"], grid=grid, args=job["args"])
            out.update({"facts": facts} if facts is not None else {"bound_ms": bound})
            if facts is not None and artifact.stages.get("sass"):   # one kernel, whatever config made it
                import hashlib

                out["sass_digest"] = hashlib.sha1(f"{config.num_warps} {getattr(config, 'num_ctas', 1)}\n"
                                                  f"{artifact.stages['sass']}".encode()).hexdigest()[:16]
            stages["facts"] = round(time.perf_counter() - started - stages["bind"] - stages["compile"], 4)
    except Exception as e:  # cannot judge it (a compile error, a kernel the model cannot read): keep it
        out["why"] = f"not predicted: {getattr(e, 'message', None) or f'{type(e).__name__}: {e}'}"
    out["compile_s"] = round(time.perf_counter() - started, 4)
    return out


def _jobs_from_env() -> int | None:
    text = os.environ.get(JOBS_ENV, "").strip()
    if not text:
        return None
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"{JOBS_ENV}={text!r}: the compile workers prune_by_prediction starts, a whole number "
                         f"of 1 or more (unset: one per core).")
    return n


def _jobs(value: Any) -> int | None:
    """jobs=: a whole number of workers, at least 1; None: TRITONSCOPE_PRUNE_JOBS (checked now), else the cores."""
    import numbers

    if value is None:
        _jobs_from_env()
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"prune_by_prediction: jobs is how many compile workers to start, a whole number (an "
                        f"int), not {_shown(value)} (a {type(value).__name__}).")
    if value < 1:
        raise ValueError(f"prune_by_prediction: jobs must be at least 1, got {value}.")
    return int(value)


def _configs(configs: Any) -> list:
    """The configs Triton hands the pruner, as a list; a value that is no triton.Config (a dict, None) is a
    TypeError naming its place (it was "'dict' object has no attribute 'kwargs'", from deep in the hook)."""
    try:
        out = list(configs)
    except TypeError:
        raise TypeError(f"prune_by_prediction: the configs are a list of triton.Config, not {_shown(configs)} "
                        f"(a {type(configs).__name__}).") from None
    for i, cfg in enumerate(out):
        if not all(hasattr(cfg, word) for word in ("kwargs", "num_warps", "num_stages", "all_kwargs")):
            raise TypeError(f"prune_by_prediction: configs[{i}] is {_shown(cfg)} (a {type(cfg).__name__}), not a "
                            "triton.Config: write it triton.Config({'BLOCK': 128}, num_warps=4).")
    return out


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
