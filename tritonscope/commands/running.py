"""How a command runs its work: its spinner, its Pipeline (result cache, --timeout, failure report), the
compile of a Config, its Analysis (from the result cache when it holds one), and explain's and passes' runs
with them (the work itself is analyses/'s: explain.run, passes)."""

from __future__ import annotations

from typing import Any, Optional

from tritonscope.core.env import Env
from tritonscope.outputs.cached import analysis_of  # noqa: F401  (the commands' analysis of a compile)


def spinner(env: Env, progress: bool = True):
    """`with spinner(env, progress)(text):` a spinner on stderr while Triton works, on a terminal only."""
    import contextlib

    err = env.console(stderr=True)
    show = progress and err.is_terminal
    return lambda text: err.status(text) if show else contextlib.nullcontext()


def pipeline(env: Env, *, progress: bool = True, cache: bool = True, timeout: Optional[float] = None,
             diagnose: str = "off"):
    """The commands' Pipeline: a spinner, the result cache (`cache=False`: --no-cache, compile afresh and keep the
    fresh result), --timeout, the views loaded while nvdisasm runs, and a failure report on a compile that fails
    inside Triton (`diagnose`: "brief" the report, "full" also what to try, checked; "off" for the candidate
    compiles a command makes for itself)."""
    from tritonscope.pipeline.compile_path import Pipeline

    on_failure = None
    if diagnose != "off":
        from tritonscope.analyses.failure import reporter

        on_failure = reporter(checks=diagnose == "full")
    return Pipeline(status=spinner(env, progress), cache="use" if cache else "refresh", timeout=timeout,
                    meanwhile=_load_views, on_failure=on_failure)


def compile_request(config, env: Env, *, progress: bool = True, cache: bool = True,
                    timeout: Optional[float] = None, diagnose: str = "brief"):
    """A Request (or a Config) -> Compiled: resolved (pipeline/config.resolve), then compile_config."""
    from tritonscope.pipeline.config import resolve

    return compile_config(resolve(config), env, progress=progress, cache=cache, timeout=timeout, diagnose=diagnose)


def compile_config(config, env: Env, *, progress: bool = True, cache: bool = True,
                   timeout: Optional[float] = None, diagnose: str = "brief"):
    """A resolved Config (requests.make_config, explain_config) -> Compiled (pipeline/compile_path.py), with a
    spinner on stderr while Triton works.

    A repeat comes from tritonscope's result cache (result_cache.py), which
    is checked before Triton is imported; `cache=False` (--no-cache) skips
    that look-up and compiles, and the fresh result replaces the kept one.
    A compile that fails inside Triton gets its failure report (`diagnose`).
    """
    pipe = pipeline(env, progress=progress, cache=cache, timeout=timeout, diagnose=diagnose)
    if config.config == "predicted":  # every kept config compiled and predicted (cost/pick.py)
        from tritonscope.cost.pick import compile_predicted

        return compile_predicted(pipe, config)
    return pipe.compile(config)


def _load_views() -> None:
    """Import the analysis and the views, and build the lexers: work that waits for no result, done while
    nvdisasm runs (compile_artifact's `meanwhile`)."""
    import tritonscope.analyses.analysis  # noqa: F401
    from tritonscope.outputs.render.terminal import warm_up

    warm_up()


def run_explain(config, env, *, shapes: list[str], gpu: Optional[str], check_fixes: bool, progress: bool = True,
                triton_banks: bool = True):
    """Config -> (Analysis, Explanation): analyses/explain/run.explain_config with the command's compile (spinner,
    result cache, failure report) and its Pipeline for the candidate fixes."""
    from tritonscope.analyses.explain.run import explain_config

    return explain_config(config, compile=lambda c: compile_config(c, env, progress=progress),
                          fixes=pipeline(env, progress=False), shapes=shapes, gpu=gpu, check_fixes=check_fixes,
                          status=spinner(env, progress), triton_banks=triton_banks)


def explain_analysis(analysis, config, env, *, shapes: list[str], gpu: Optional[str], check_fixes: bool,
                     progress: bool = True, triton_banks: bool = True):
    """The Explanation of a compile of `config` already analysed (`compile --explain` shares it)."""
    from tritonscope.analyses.explain.run import explain_compiled

    return explain_compiled(analysis, config, pipeline(env, progress=False), shapes=shapes, gpu=gpu,
                            check_fixes=check_fixes, status=spinner(env, progress), triton_banks=triton_banks)


def explain_into_report(analysis, request, env, *, shapes: list[str], progress: bool = True):
    """`compile --explain`: the same verdicts (fixes checked), carried by `analysis` into its views and reports."""
    from tritonscope.analyses.explain import attach_explanation

    expl = explain_analysis(analysis, request, env, shapes=shapes, gpu=None, check_fixes=True, progress=progress)
    attach_explanation(analysis, expl.to_dict())
    return expl


def run_explain_found(path: str, kernel: Optional[str], env, *, changes: dict[str, Any], shapes: list[str],
                      gpu: Optional[str], check_fixes: bool, progress: bool = True, triton_banks: bool = True,
                      launches: Optional[list] = None):
    """A kernel found at `path` (as `open` finds it) -> (Analysis, Explanation): analyses/explain/run.explain_found
    with the command's spinner."""
    from tritonscope.analyses.explain.run import explain_found

    return explain_found(path, kernel, changes=changes, shapes=shapes, gpu=gpu, check_fixes=check_fixes,
                         status=spinner(env, progress), triton_banks=triton_banks, launches=launches)


def trace_request(config, env, *, progress: bool = True):
    """`passes` and `compile --passes`: Config -> PassTrace (one compile with every dump on, in a child), with a spinner on stderr.

    The trace carries the compile's Artifact too (`trace.artifact`), so
    `compile --passes` and `passes --save` need no second compile.
    """
    from tritonscope.analyses import passes

    with spinner(env, progress)(f"compiling {config.target} with every pass dumped..."):
        return passes.trace_passes(config, config.arch)
