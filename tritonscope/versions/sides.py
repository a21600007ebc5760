"""Another Triton as the side of a single-compile command: `compile --triton 3.6.0`, `sweep --triton ...`,
`diff --a triton=...`.

The value is what a `versions` side takes: a version (an environment tritonscope makes with pip and caches,
envs.py) or the Python of an environment with Triton.  It is resolved before any compile (a bad version,
a missing or broken environment is one line and its exit code), and the compile runs in a child of that
environment's Python that speaks the usual child protocol (child.run_in_child); what comes back is an
ordinary Artifact, so every view, report and the cost model work on it unchanged.

Checked first, with no environment touched: a value that is neither a version nor a path (exit 2), a version
older than 3.2 (exit 2), a path that does not exist (exit 3).  Then: a version with no environment yet is
made (unless `install=False`: exit 3 with the command that makes it); a version pip does not have, no
network, or an environment whose Python cannot import triton is an envs.EnvError (exit 3).
"""

from __future__ import annotations

from typing import Callable

from tritonscope.core.errors import UsageError



def triton_choice(triton: str | None, python: str | None) -> str | None:
    """The one value of --triton / --python; both, an empty value, or a version given to --python: exit 2."""
    from tritonscope.versions.envs import is_python_path

    if triton is not None and python is not None:
        raise UsageError("Give --triton or --python, not both.",
                         hint="--triton takes a version or a Python; --python only a Python.")
    if python is not None:
        if not python.strip():
            raise UsageError("--python: give the path of a Python interpreter.")
        if not is_python_path(python):
            raise UsageError(f"--python {python}: not a path to a Python.",
                             hint=f"For a Triton version use --triton {python}; for a Python give its path "
                                  "(./venv/bin/python).")
        return python
    if triton is not None and not triton.strip():
        raise UsageError("--triton: give a version (3.6.0) or the path of a Python.")
    return triton


def check_value(text: str) -> None:
    """The cheap checks of a side's value, before anything slow (no pip, no child)."""
    from tritonscope.versions.envs import check_version, is_python_path

    if not is_python_path(text):
        check_version(text)


def resolve(text: str, *, install: bool = True, progress: Callable[[str], None] | None = None):
    """The TritonEnv for a side's value (envs.resolve), made when it is a version not cached yet."""
    from tritonscope.versions import envs

    check_value(text)
    return envs.resolve(text, install=install, progress=progress)


def say(env) -> Callable[[str], None]:
    """Progress lines (the environment being made) on stderr."""
    console = env.console(stderr=True)

    def line(text: str) -> None:
        from rich.markup import escape

        console.print(escape(text), highlight=False)
    return line


def refuse_with(flag: str, what: str) -> None:
    raise UsageError(f"--triton/--python cannot be combined with {flag}: {what}",
                     hint=f"Run `tritonscope` inside that environment for {flag}, or leave {flag} out.")


def compile_with_triton(config, triton_env, *, what: str = "The compile", timeout: float | None = None):
    """`config` (a resolved pipeline Config) compiled in a child of `triton_env`'s Python, as an Artifact, through
    the pipeline's one way of compiling elsewhere (no result cache: Triton's own cache, keyed by its version, makes a
    repeat fast; --timeout stops it, exit 11)."""
    from tritonscope.core.model import ARCHES
    from tritonscope.pipeline.child_compile import compile_elsewhere
    from tritonscope.versions.run import Side

    from tritonscope.core.errors import TritonscopeError
    from tritonscope.versions import lld

    side = Side("A", triton_env)
    backend = ARCHES[config.arch].backend if config.arch in ARCHES else "cuda"
    try:
        return compile_elsewhere(config, timeout=timeout, what=f"{what} with {side.label()}",
                                 env=side.child_env({backend}), python=triton_env.python)
    except TritonscopeError as e:   # Triton 3.4's "ROCm linker ... not found": what to do, as `versions` says
        if backend == "hip" and lld.is_missing_lld(f"{e.message} {e.context or ''}"):
            e.message, e.hint, e.context = lld.missing(triton_env.triton), lld.what_to_do(triton_env), e.message
        raise


def run_sweep_with_triton(requests: list, triton_env, *, default_arch: str, jobs: int, kernel: str = "",
                          target: str = "", from_autotune: bool = False, on_row=None, timeout: float = 600):
    """`sweep`'s grid compiled under another Triton: the configs split into `jobs` batches, one child of that
    environment each, run at once.  No row cache (sweep's is keyed on this environment's Triton); Triton's own
    cache makes a repeat fast.  A child that dies makes its configs rows with that error."""
    import time
    from concurrent.futures import ThreadPoolExecutor, as_completed
    from dataclasses import asdict

    from tritonscope.core.child import run_in_child
    from tritonscope.core.errors import TritonscopeError
    from tritonscope.inputs.kernels import canonical_arch
    from tritonscope.core.model import ARCHES
    from tritonscope.measure.sweep import SweepResult, SweepRow, row_shell
    from tritonscope.versions.run import Side

    started = time.perf_counter()
    side = Side("A", triton_env)
    backends = {ARCHES[a].backend for a in (canonical_arch(r.arch) if r.arch else default_arch for r in requests)
                if a in ARCHES}
    n = max(1, min(jobs, len(requests)))
    batches = [list(range(i, len(requests), n)) for i in range(n)]
    result = SweepResult(kernel=kernel, target=target, rows=[], requested=len(requests), from_autotune=from_autotune,
                         workers=n)

    def run(batch: list[int]) -> list[SweepRow]:
        payload = {"default_arch": default_arch, "rows": [(i, asdict(requests[i])) for i in batch]}
        try:
            rows = run_in_child("tritonscope.versions.worker:sweep_batch", payload,
                                what=f"A sweep batch with {side.label()}", env=side.child_env(backends),
                                timeout=timeout * len(batch), python=triton_env.python)
            return [SweepRow(**r) for r in rows]
        except TritonscopeError as e:
            out = []
            for i in batch:
                row = row_shell(i, requests[i])
                row.error, row.error_kind = e.message, type(e).__name__
                out.append(row)
            return out

    with ThreadPoolExecutor(max_workers=n) as pool:
        for fut in as_completed([pool.submit(run, b) for b in batches if b]):
            for row in fut.result():
                result.rows.append(row)
                if on_row:
                    on_row(row)
    result.rows.sort(key=lambda r: r.index)
    result.seconds = time.perf_counter() - started
    return result
