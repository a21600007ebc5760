"""The child's side of a versions run: many kernels compiled in one process of one environment.

Runs under the other environment's Python (child.run_in_child with
`python=`), importing tritonscope from the parent's checkout; speaks the
child protocol, so what comes back are encoded Artifacts or typed errors,
one per job, and one kernel that fails does not stop the others.

A job is one of:
  {"kind": "request", "request": {...Request...}, "default_arch": "sm_80"}
      a sample, a user kernel (file.py:kernel, package.module:kernel) compiled as `compile` would;
  {"kind": "found", "path": ..., "key": ..., "arch": ...}
      a kernel found in a capture, a Triton cache or a dump folder, recompiled as `open --arch`
      does (sources.recompile): a captured kernel from its Python function (so this Triton's
      front end runs), anything else from its TTIR.
"""

from __future__ import annotations

import traceback
from typing import Any


def compile_batch(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """Each job compiled here; [{"artifact": ...} | {"error": {type, message, hint, context}}] in order."""
    out = []
    for job in payload["jobs"]:
        try:
            notes: list[str] = []
            answer = {"artifact": compile_job(job, notes)}
            if notes:
                answer["note"] = " ".join(notes)
            out.append(answer)
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # one kernel's failure is its row, not the batch's end
            out.append({"error": error_dict(e)})
    return out


def error_dict(e: BaseException) -> dict[str, Any]:
    from tritonscope.core.errors import TritonscopeError

    if isinstance(e, TritonscopeError):
        out = {"type": type(e).__name__, "message": e.message, "hint": e.hint, "context": e.context}
        failure = e.data.get("failure")
        if failure is not None:  # failed inside Triton: its report (analyses/failure), and its one line
            from tritonscope.analyses.failure import row_error

            out["failure"] = failure.to_dict()
            out["line"] = row_error(e) or ""
            out["hint"] = ("The failure report (the pass, the op, its Python line, what Triton said) is in "
                           "`versions --json` and `--save report.json`; `tritonscope compile` of this kernel "
                           "with that Triton shows it and checks what to try.")
        return out
    return {"type": "TritonscopeError", "message": f"unexpected {type(e).__name__}: {e}",
            "context": traceback.format_exc()[-2000:], "hint": "This is a tritonscope bug. Report the context above."}


def compile_job(job: dict[str, Any], notes: list[str] | None = None) -> dict[str, Any]:
    """One job's compile, encoded; what the row must say about how it was compiled goes into `notes`."""
    from tritonscope.pipeline.result_cache import encode_artifact

    if job["kind"] == "request":
        from tritonscope.analyses.failure import reporter
        from tritonscope.inputs.kernels import Request
        from tritonscope.pipeline.compile_path import Pipeline
        from tritonscope.pipeline.config import resolve

        # the one compile path, without the result cache (this environment's Triton keeps its own cache); a
        # config failing inside Triton gets its failure report (one more compile, with every pass dumped)
        config = resolve(Request(**job["request"]), job["default_arch"])
        return encode_artifact(Pipeline(cache="off", on_failure=reporter(checks=False)).compile(config).artifact)
    if job["kind"] == "found":
        return encode_artifact(recompile_found(job["path"], job["key"], job["arch"], notes))
    raise ValueError(f"unknown job kind {job['kind']!r}")


def captured_constexprs(record: dict[str, Any] | None) -> dict[str, str]:
    """A capture record's constexprs by name ({'BLOCK': '1024'}): given back to recompile unchanged, they make
    it compile from the Python function (this Triton's front end), not from the other Triton's TTIR."""
    if not record or record.get("constants") is None or record.get("module_text") is None:
        return {}
    names = list(record.get("signature") or {})
    out = {}
    for path, value in record["constants"]:
        if len(path) == 1 and path[0] < len(names) and record["signature"][names[path[0]]] == "constexpr" \
                and isinstance(value, (int, float, bool, str)):
            out[names[path[0]]] = str(value)
    return out


def recompile_found(path: str, key: str, arch: str, notes: list[str] | None = None):
    """A found kernel recompiled by this Triton: a captured one from its Python function (its constexprs given
    back, so a front-end failure of this Triton is the row's error, not hidden by another Triton's TTIR).

    When the captured module does not import here (an environment tritonscope made holds Triton only, and the
    module imports torch), it is compiled from the TTIR the capture recorded, as `open --recompile` does, and
    `notes` says so: the row then compares this Triton's passes from that TTIR on, not its front end."""
    from tritonscope.core.errors import InputFileError
    from tritonscope.inputs.sources import find_entry, load_artifact, open_source, recompile

    source = open_source(path)
    entry = find_entry(source, key)
    original = load_artifact(entry)
    constexprs = captured_constexprs(entry.record)
    try:
        return recompile(entry, original, arch=arch, constexprs=constexprs or None)
    except InputFileError as e:
        if not constexprs or "does not import here" not in e.message:
            raise
        why = e.message.split("does not import here: ", 1)[-1].rstrip(".")
    # without constexprs recompile falls back on the IR itself when the module does not import (said in its warnings)
    artifact = recompile(entry, original, arch=arch)
    if notes is not None:
        ir = "pre-pass TTIR (.source)" if "source" in entry.files else "TTIR"
        notes.append(f"compiled from the capture's recorded {ir}, not its Python function: the captured module does "
                     f"not import in this environment ({why})")
    return artifact


def sweep_batch(payload: dict) -> list[dict]:
    """The child's side of a sweep under another Triton: each config compiled and reduced to a row, as
    `sweep` does in its workers (sweep.compile_row: a failed config is a row with its error)."""
    from dataclasses import asdict

    from tritonscope.inputs.kernels import Request
    from tritonscope.measure.sweep import compile_row

    return [asdict(compile_row(i, Request(**req), payload["default_arch"])) for i, req in payload["rows"]]
