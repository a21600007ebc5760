"""Config -> Compiled: the one compile path every command, the Python API, sweeps, bench, run and explain's
fix checks take.

A Pipeline holds what differs between callers (a status line while Triton works, whether
the result cache is read and written, a time limit, a child of another Triton); its one
`compile(config)` gives the artifact with the binding it came from and the result-cache
entry it came from or went into, so that the Analysis made of it can be kept beside it
(outputs/cached.analysis_of) without any table on the side.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, ContextManager

from tritonscope.core.model import Artifact
from tritonscope.inputs.kernels import Loaded
from tritonscope.pipeline.config import Config

# cache=: "use" reads and writes the result cache; "refresh" (--no-cache) compiles and writes;
# "off" neither (the Python API, sweeps and benches, which keep their own results).
CACHE_MODES = ("use", "refresh", "off")


@dataclass
class Compiled:
    """One compile's result: the artifact, its Config, the binding (None when the artifact came from the result
    cache or a child process) and its result-cache entry (None when it is kept in none)."""

    artifact: Artifact
    config: Config | None
    loaded: Loaded | None = None
    entry: Any = None  # result_cache.Entry

    @property
    def spec(self):
        return self.artifact.spec


def _no_status(text: str) -> ContextManager:
    return contextlib.nullcontext()


def _echo_triton_stderr(err: BaseException) -> None:
    """What Triton printed while a compile failed (held back by remarks.collect_remarks for the failure report),
    on stderr, for an error that got no report."""
    import sys

    from tritonscope.triton_api.remarks import STDERR_ATTR

    text = getattr(err.__cause__, STDERR_ATTR, "") if err.__cause__ is not None else ""
    if text.strip():
        from tritonscope.triton_api.remarks import _without_diagnostics

        try:
            sys.stderr.write(_without_diagnostics(text))
            sys.stderr.flush()
        except Exception:
            pass


class Pipeline:
    """How a caller compiles: `status(text)` a context shown while Triton works (a spinner), `cache` one of
    CACHE_MODES, `timeout` seconds (the compile then runs in a child that is stopped when time is up),
    `meanwhile` work done while the SASS is disassembled, `remarks=False` Triton's stderr left alone
    (compile_artifact's: the `passes` children read it whole), `sass=False` no SASS stage unless the SASS cache
    already holds it (nvdisasm not run: `tune`'s first pass, which needs only a lower bound).

    `on_failure(error, config, pipeline)` runs when a compile of a config fails (a CompileError, or a
    CompileTimeoutError under `timeout`), before the error goes on: the commands, the API and sweeps give
    analyses/failure.reporter, which puts the failure report (the pass, the op, the Python line) on the
    error.  Nothing of it runs when the compile succeeds."""

    def __init__(self, *, status: Callable[[str], ContextManager] | None = None, cache: str = "off",
                 timeout: float | None = None, meanwhile: Callable[[], None] | None = None, remarks: bool = True,
                 sass: bool = True, on_failure: Callable[[Exception, Config, "Pipeline"], None] | None = None):
        assert cache in CACHE_MODES, cache
        self.on_failure = on_failure
        assert sass or cache == "off", "a compile without its SASS is never kept in the result cache"
        self.remarks = remarks
        self.sass = sass
        self.status = status or _no_status
        self.cache = cache
        self.timeout = timeout
        self.meanwhile = meanwhile

    def bind(self, config: Config, *, kernel_object: Any = None) -> Loaded:
        """The launch `config` describes, bound as Triton's launcher binds it (no compile)."""
        from tritonscope.pipeline.binding import build_spec

        return build_spec(config, kernel_object=kernel_object)

    def compile(self, config: Config | None, *, loaded: Loaded | None = None, kernel_object: Any = None,
                status: str | None = None) -> Compiled:
        """One compile of `config` (bound already when `loaded` is given: then `config` may be None, and the
        result cache is not used); `status` replaces the status line.  A failure goes to `on_failure` first."""
        from tritonscope.core.errors import CompileError, CompileTimeoutError

        try:
            return self._compile(config, loaded=loaded, kernel_object=kernel_object, status=status)
        except (CompileError, CompileTimeoutError) as e:
            if self.on_failure is not None and config is not None and kernel_object is None:
                self.on_failure(e, config, self)
            if "failure" not in e.data:
                _echo_triton_stderr(e)
            raise

    def _compile(self, config: Config | None, *, loaded: Loaded | None, kernel_object: Any,
                 status: str | None) -> Compiled:
        from tritonscope.pipeline import result_cache

        keep = self.cache != "off" and config is not None and kernel_object is None and result_cache.enabled()
        if keep and self.cache == "use":  # checked before Triton is imported
            entry = result_cache.lookup(config, config.arch)
            if entry is not None:
                from tritonscope import triton_api

                triton_api.stop_key_digest()
                return Compiled(entry.artifact, config, None, entry)
        if self.timeout is not None:
            # the kernel file is imported and compiled in a child process that is stopped when time is up (an
            # import that hangs at module level included), so it is never imported here; the result is therefore
            # not stored in the result cache (its entry lists the files the import loaded)
            from tritonscope.pipeline.child_compile import compile_elsewhere

            with self.status(status or f"compiling {config.target} (at most {self.timeout:g} s)..."):
                return Compiled(compile_elsewhere(config, timeout=self.timeout), config)
        from tritonscope.pipeline.triton_compile import compile_artifact

        loaded = loaded or self.bind(config, kernel_object=kernel_object)
        spec = loaded.spec
        if kernel_object is None and config is not None and may_end_the_process(loaded):
            # Triton's LLVM can end the whole process (exit 1, no message) on such a kernel: compile it in a child,
            # whose death is then said as a compile error; not stored in the result cache (as a --timeout compile)
            from tritonscope.pipeline.child_compile import compile_elsewhere

            with self.status(status or f"compiling {spec.kernel} for {spec.arch} in a child process (inline "
                                       "assembly for an AMD target)..."):
                return Compiled(compile_elsewhere(config, what=f"The compile of {spec.kernel}",
                                                  died=INLINE_ASM_DIED.format(kernel=spec.kernel, arch=spec.arch)),
                                config, loaded)
        with self.status(status or f"compiling {spec.kernel} for {spec.arch} ({spec.label()})..."):
            artifact = compile_artifact(loaded, meanwhile=self.meanwhile, remarks=self.remarks, sass=self.sass)
        entry = result_cache.store(config, config.arch, loaded, artifact) if keep else None
        return Compiled(artifact, config, loaded, entry)


# Triton 3.6's LLVM ends the process (exit 1, nothing on stderr) on NVIDIA inline PTX compiled for an AMD target
# (megatron-core's multimem all-gather, asm constraint 'l'); 3.9 raises a CompileError instead.
INLINE_ASM_DIED = ("Triton ended the compile of {kernel} for {arch} without an error message (its compiler process "
                   "exited). {kernel} has inline assembly (tl.inline_asm_elementwise), which Triton passes to LLVM "
                   "as it is; Triton 3.6's AMD backend is known to end the process this way on NVIDIA (PTX) inline "
                   "assembly.")


def may_end_the_process(loaded: Loaded) -> bool:
    """Whether compiling this kernel may end the process: inline assembly (in the kernel or a @triton.jit function
    it calls) compiled for an AMD target."""
    from tritonscope.core.model import ARCHES

    arch = ARCHES.get(loaded.spec.arch)
    return arch is not None and arch.backend == "hip" and _calls_inline_asm(loaded.jit_fn, set())


def _calls_inline_asm(jit_fn, seen: set[int], depth: int = 0) -> bool:
    import inspect

    from tritonscope import triton_api

    fn = triton_api.python_function(jit_fn) if jit_fn is not None else None
    if fn is None or id(fn) in seen or depth > 8:
        return False
    seen.add(id(fn))
    try:
        if "inline_asm_elementwise" in inspect.getsource(fn):
            return True
    except (OSError, TypeError):
        return False
    code, names = getattr(fn, "__code__", None), getattr(fn, "__globals__", {})
    for name in getattr(code, "co_names", ()):
        callee = names.get(name)
        if callee is not None and triton_api.jit_function(callee) is not None:
            if _calls_inline_asm(triton_api.jit_function(callee), seen, depth + 1):
                return True
    return False
