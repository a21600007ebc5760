"""The child process of `tritonscope passes`: one compile with every dump on.

passes.trace_passes starts `python -c "from tritonscope.analyses.passes.child import
main; main()" payload.json` with the dump variables set (see
passes._start_child); this module runs the compile there, records each
stage's slice of stderr and final module for the parent, which parses the
dump while it grows, and writes the answer to result.json.  It is a module
of its own so that passes.py (which reports and the HTML renderer read)
does not import the compile.

With "attribute" in the payload it is the remarks run instead
(passes.attribute_remarks): the dumps of a few stages on stderr, in order
with Triton's diagnostics, and the compile stopped after them.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path

from tritonscope import triton_api
from tritonscope.analyses.passes import MLIR_STAGES, STAGE_MARK
from tritonscope.language.dialects import is_mlir


def main() -> None:
    """Entry point of the child process (the payload file is argv[1]).

    The answer is child.py's ({"result"} or {"error": {type, message, hint,
    context}}), written to result.json rather than stdout, and the process
    exits normally, not with child.py's os._exit (see below): that is why
    this is not child.run_in_child, which also waits instead of letting the
    parent read the dump while it grows.
    """
    from tritonscope.core.child import _answer

    payload = json.loads(Path(sys.argv[1]).read_text())
    workdir = Path(payload["workdir"])
    out = _answer("tritonscope.analyses.passes.child:job", payload)
    tmp = workdir / "result.json.tmp"
    tmp.write_text(json.dumps(out))
    os.replace(tmp, workdir / "result.json")
    # A normal exit (not os._exit): MLIR's dump stream is flushed by a static
    # destructor, and a cut-off dump would read as damaged.


def job(payload: dict) -> dict:
    if payload.get("attribute"):
        return _remarks_compile(payload)
    if payload.get("failure"):
        return _failing_compile(payload, Path(payload["workdir"]))
    return _child_compile(payload, Path(payload["workdir"]))


def _failing_compile(payload: dict, workdir: Path) -> dict:
    """The failure run (passes.trace_failure): the same compile, whose error is the answer, not an error.

    A compile that fails answers {"failed": {...}}: the typed error, Triton's
    own exception (its type, its text and the frames of Triton's code it was
    raised in, innermost last) and the stage that was running; one that
    compiles answers as `_child_compile` does, with "failed" None.
    """
    from tritonscope.core.errors import TritonscopeError

    seen: dict = {}
    try:
        out = _child_compile(payload, workdir, seen)
        out["failed"] = None
        return out
    except TritonscopeError as e:
        cause = e.__cause__ or e
        return {**seen, "failed": {"type": type(e).__name__, "message": e.message, "hint": e.hint, "context": e.context,
                           "triton_type": type(cause).__name__, "triton_text": str(cause),
                           "frames": _triton_frames(cause)}}


def _triton_frames(e: BaseException) -> list[dict]:
    """[{file, line, function, text}] of the traceback's frames in Triton's own package, innermost last."""
    import traceback

    import triton

    root = os.path.dirname(os.path.abspath(triton.__file__))
    out = []
    for frame in traceback.extract_tb(e.__traceback__):
        path = os.path.abspath(frame.filename)
        if path.startswith(root + os.sep):
            out.append({"file": os.path.relpath(path, os.path.dirname(root)), "line": frame.lineno,
                        "function": frame.name, "text": (frame.line or "").strip()})
    return out


class _Enough(Exception):
    """Raised after the last stage the remarks run needs: the rest of the compile is not wanted."""


def _remarks_compile(payload: dict) -> dict:
    """The remarks run (passes.attribute_remarks): the dumps of the stages that printed remarks, on stderr.

    MLIR_ENABLE_DUMP is set for those stages only (Triton reads it when a
    stage builds its pass manager) and MLIR_DUMP_PATH is unset, so their dumps
    go to stderr, in order with the diagnostics; a mark on stderr opens and
    closes each stage.  The compile stops after the last of those stages.
    """
    from tritonscope.inputs.kernels import Request
    from tritonscope.pipeline.compile_path import Pipeline
    from tritonscope.pipeline.config import resolve

    wanted = [k for k in MLIR_STAGES if k in payload["attribute"]]
    pipe = Pipeline(remarks=False)  # remarks=False: stderr stays the parent's file
    loaded = pipe.bind(resolve(Request(**payload["request"]), payload["default_arch"]))
    state = {"stopped": False}
    _install_remarks_hook(wanted, state)
    try:
        pipe.compile(None, loaded=loaded)
    except Exception:
        if not state["stopped"]:
            raise
    return {"stages": wanted, "stopped": state["stopped"]}


def _install_remarks_hook(wanted: list[str], state: dict) -> None:
    last = wanted[-1]

    def mark(text: str) -> None:
        sys.stderr.flush()
        os.write(2, text.encode())  # fd 2 itself: in order with what MLIR writes there

    def wrap(key: str, fn):
        def run(src, metadata):
            if key in wanted:
                os.environ["MLIR_ENABLE_DUMP"] = "1"
            mark(f"{STAGE_MARK}{key}\n")
            try:
                out = fn(src, metadata)
            finally:
                os.environ.pop("MLIR_ENABLE_DUMP", None)
                mark(f"{STAGE_MARK}{key} end\n")
            if key == last:
                state["stopped"] = True
                raise _Enough(key)
            return out
        return run

    triton_api.wrap_stages(wrap, MLIR_STAGES, cache_part="tritonscope-passes")


def _child_compile(payload: dict, workdir: Path, seen: dict | None = None) -> dict:
    """The compile with every dump on; `seen` gets the kernel's name, file, arch, label and Triton's version
    once it is bound (what the failure run answers with when the compile fails)."""
    from tritonscope.inputs.kernels import Request
    from tritonscope.pipeline.compile_path import Pipeline
    from tritonscope.pipeline.config import resolve

    if "recompile" in payload["request"]:
        return _recompile_compile(payload["request"]["recompile"], workdir, seen)
    pipe = Pipeline(remarks=False)
    loaded = pipe.bind(resolve(Request(**payload["request"]), payload["default_arch"]))
    if seen is not None:
        spec = loaded.spec
        seen.update({"kernel": spec.kernel, "file": str(spec.file), "arch": spec.arch, "label": spec.label(),
                     "triton_version": triton_api.triton_version()})
    stages: list[dict] = []
    _install_stage_hook(workdir, stages)
    started = time.perf_counter()
    # remarks=False: this process's stderr is the parent's file, whose ranges
    # per stage tie each remark to its stage (see _install_stage_hook)
    artifact = pipe.compile(None, loaded=loaded).artifact
    seconds = time.perf_counter() - started
    spec = loaded.spec
    label = spec.label() if hasattr(spec, "label") else ""
    return {
        "kernel": spec.kernel, "file": str(spec.file), "arch": spec.arch, "label": label,
        "triton_version": getattr(artifact, "triton_version", ""),
        "compile_seconds": seconds, "stages": stages,
        "warnings": list(getattr(artifact, "warnings", []) or []),
        "artifact": asdict(artifact),
    }


def _recompile_compile(job: dict, workdir: Path, seen: dict | None) -> dict:
    """A found kernel's recompile (inputs/sources/recompile: from its captured Python function or its IR) with
    every dump on: the failure run of `open --recompile` (analyses/failure.diagnose_found).  A Triton error is
    typed as the recompile types it."""
    from types import SimpleNamespace

    from tritonscope.core.errors import TritonscopeError
    from tritonscope.inputs.compile_errors import compile_error
    from tritonscope.inputs.sources.recompile import _compile_now

    facts = {"kernel": job.get("kernel", "?"), "file": job.get("file") or "", "arch": job.get("arch_name", "?"),
             "label": job.get("label", ""), "triton_version": triton_api.triton_version()}
    if seen is not None:
        seen.update(facts)
    stages: list[dict] = []
    _install_stage_hook(workdir, stages)
    started = time.perf_counter()
    try:
        _compile_now(job)
    except TritonscopeError:
        raise
    except Exception as e:
        raise compile_error(e, SimpleNamespace(kernel=facts["kernel"], file=facts["file"])) from e
    return {**facts, "compile_seconds": time.perf_counter() - started, "stages": stages, "warnings": []}


def _stderr_size() -> int:
    try:
        sys.stderr.flush()
        return os.fstat(2).st_size
    except (OSError, ValueError):
        return 0


def _progress(workdir: Path, record: dict) -> None:
    """Append one stage record for the parent, which parses while we compile."""
    with open(workdir / "stages.jsonl", "a") as f:
        f.write(json.dumps(record) + "\n")


def _install_stage_hook(workdir: Path, stages: list[dict]) -> None:
    """Record each stage's slice of stderr and save its last module.

    Uses Triton's public `knobs.runtime.add_stages_inspection_hook` (3.6 and
    3.9 call it with the stage table; 3.9 first calls it with no arguments
    for a cache-key part).  stderr is a file the parent opened, and MLIR
    writes diagnostics and timing reports to it unbuffered, so its size
    before and after a stage brackets that stage's remarks and timings.  The
    saved module is the "after" of the stage's last pass, which no dump
    shows.
    """
    def wrap(key: str, fn):
        def run(src, metadata):
            n = sum(1 for s in stages if s["key"] == key)
            final = workdir / f"{len(stages):02d}-{key}{'-' + str(n) if n else ''}.final.mlir"
            record = {"key": key, "final": str(final), "stderr": [_stderr_size(), 0]}
            stages.append(record)
            _progress(workdir, {"start": key})
            try:
                out = fn(src, metadata)
            finally:
                record["stderr"][1] = _stderr_size()
            try:
                # ttir/ttgir return the module; llir lowers `src` in place, then
                # translates it: `src` is then the LLVM-dialect module.
                module = out if is_mlir(key) else src
                final.write_text(str(module))
            except Exception:
                record["final"] = ""
            _progress(workdir, {"end": key, "final": record["final"], "stderr": record["stderr"]})
            return out
        return run

    triton_api.wrap_stages(wrap, MLIR_STAGES, cache_part="tritonscope-passes")
