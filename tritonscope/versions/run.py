"""Compile a set of kernels under two Tritons, in parallel, each in a child of its own environment.

The jobs of one version are split into batches, one child process each
(worker.compile_batch), and every batch of both versions runs in one pool of
`workers` threads that wait on their children, so both versions compile at
once.  A child that dies (a crash in one kernel) is retried kernel by
kernel, so only that kernel's row says so.  Both versions' caches are used
as they are: Triton's cache (its key covers the Triton version, so the two
never collide) and tritonscope's derived-data cache.
"""

from __future__ import annotations

import os
import re
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, Callable

from tritonscope.versions.envs import TritonEnv

# Variables of this process that must not reach another environment's Python.
_DROP = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "TRITONSCOPE_DEBUG")


@dataclass
class Side:
    """One side of a comparison: a Triton (an environment, or this process's) and environment knobs."""

    name: str                          # "A" / "B"
    env: TritonEnv | None              # None: this process's Python and Triton
    knobs: dict[str, str] = field(default_factory=dict)   # e.g. {"AMDGCN_USE_BUFFER_OPS": "0"}

    @property
    def triton(self) -> str:
        if self.env is not None:
            return self.env.triton
        from tritonscope import triton_api

        return triton_api.triton_version()

    def label(self) -> str:
        return f"triton {self.triton}" + "".join(f" {k}={v}" for k, v in self.knobs.items())

    def child_env(self, backends: set[str]) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in _DROP}
        if self.env is not None:
            env["PYTHONNOUSERSITE"] = "1"
            if "hip" in backends and "TRITON_HIP_LLD_PATH" not in env:
                from tritonscope.versions import lld

                linker, _where = lld.choose(self.env)   # an AMD backend that needs an external ld.lld (3.4)
                if linker:
                    env["TRITON_HIP_LLD_PATH"] = linker
        env.update(self.knobs)
        return env


@dataclass
class Job:
    key: str          # kernel label (sample, file:kernel, capture hash + name)
    arch: str
    payload: dict     # worker job


def _batches(jobs: list[Job], n: int) -> list[list[int]]:
    n = max(1, min(n, len(jobs)))
    return [list(range(i, len(jobs), n)) for i in range(n) if i < len(jobs)]


def compile_all(jobs: list[Job], sides: list[Side], *, workers: int, timeout: float,
                progress: Callable[[str], None] | None = None) -> dict[tuple[int, int], dict]:
    """{(side index, job index): {"artifact": encoded} | {"error": {...}}} for every job under every side."""
    from tritonscope.core.child import ChildDiedError, run_in_child
    from tritonscope.core.errors import TritonscopeError
    from tritonscope.core.model import ARCHES

    backends = {ARCHES[j.arch].backend for j in jobs if j.arch in ARCHES}
    results: dict[tuple[int, int], dict] = {}
    per_version = max(1, workers // len(sides))
    split = _batches(jobs, per_version)
    # interleaved (A0, B0, A1, B1, ...): both versions compile at once
    tasks = [(si, batch) for batch in split for si in range(len(sides))]
    done = 0

    def run(si: int, batch: list[int]) -> list[tuple[int, dict]]:
        side = sides[si]
        payload = {"jobs": [jobs[i].payload for i in batch]}
        python = side.env.python if side.env is not None else None
        what = f"The {side.label()} compile of {len(batch)} kernel(s)"
        try:
            answer = run_in_child("tritonscope.versions.worker:compile_batch", payload, what=what,
                                  env=side.child_env(backends), timeout=timeout * len(batch), python=python)
            return list(zip(batch, answer))
        except ChildDiedError as e:
            if len(batch) == 1:
                return [(batch[0], {"error": _err(e)})]
            out = []
            for i in batch:  # find the kernel that took the child down: one child each
                out += run(si, [i])
            return out
        except TritonscopeError as e:
            return [(i, {"error": _err(e)}) for i in batch]

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = {pool.submit(run, si, batch): si for si, batch in tasks}
        for fut in as_completed(futures):
            si = futures[fut]
            for i, res in fut.result():
                results[(si, i)] = res
                done += 1
                if progress is not None:
                    progress(f"{done}/{len(jobs) * len(sides)} compiled ({sides[si].label()}: {jobs[i].key} "
                             f"{jobs[i].arch})")
    return results


def _err(e) -> dict[str, Any]:
    return {"type": type(e).__name__, "message": e.message, "hint": e.hint, "context": e.context}


def error_line(err: dict | None, side: Side | None = None) -> str:
    """One line for a row: the error's message, with what to install where a known quirk explains it."""
    if not err:
        return ""
    from tritonscope.versions import lld

    said = " ".join(str(err.get(k) or "") for k in ("message", "context", "line"))
    if lld.is_missing_lld(said):   # Triton 3.4's "ROCm linker ... not found": what to do (before its failure report)
        return lld.hint(side.triton if side else "this", side.env if side else None)
    failure = err.get("failure")
    if isinstance(failure, dict) and isinstance(failure.get("one_line"), str) and failure["one_line"] \
            and isinstance(failure.get("error"), str):
        # failed inside Triton (its report came back): the pass, the op and the Python line, then Triton's error
        return f"{failure['one_line']}: {re.sub(r'^RuntimeError: ', '', failure['error'])}"
    msg = (err.get("message") or "").strip().splitlines()[0] if err.get("message") else err.get("type", "error")
    text = " ".join(filter(None, [msg, (err.get("context") or "")]))
    version = side.triton if side else "this"
    # AttributeError: module 'triton.language' has no attribute 'make_tensor_descriptor'
    m = _NO_TL_ATTR_RE.search(text)
    if m:
        return f"the kernel uses tl.{m.group(1)}, which Triton {version} does not have ({msg})"
    # ModuleNotFoundError: No module named 'torch'
    m = _NO_MODULE_RE.search(text)
    if m and side is not None and side.env is not None and side.env.origin == "cache":
        name = m.group(1).split(".")[0]
        extra = " --index-url https://download.pytorch.org/whl/cpu" if name == "torch" else ""  # no CUDA needed
        return (f"{msg} (the Triton {version} environment tritonscope made holds Triton only: install "
                f"{name} there with {side.env.python} -m pip install {name}{extra}, or name a Python that has it)")
    return msg


_NO_TL_ATTR_RE = re.compile(r"module 'triton\.language' has no attribute '(\w+)'")
_NO_MODULE_RE = re.compile(r"No module named '([\w.]+)'")


def current_python_side(name: str) -> Side:
    return Side(name, None)


def this_python() -> str:
    return sys.executable
