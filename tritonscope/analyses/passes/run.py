"""Running the compile that dumps every pass: the child, following its dump as it grows, tying remarks to passes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Iterable, Iterator

from tritonscope.core.errors import CompileError, InputFileError, NotFoundError, TritonscopeError
from tritonscope.triton_api.remarks import Remark, is_diagnostic_line, parse_remarks
from tritonscope.analyses.passes.model import MLIR_STAGES, PassTrace, Step
from tritonscope.language.mlir_syntax import FILE_POS
from tritonscope.analyses.passes.read import _RawDump, _TIMING_RE, _unique, parse_timing, read_dumps, steps_from_file

# The stages whose pass managers are dumped, in pipeline order.

# --------------------------------------------------------------------------
# Running the compile (in a child process)
# --------------------------------------------------------------------------


def trace_passes(request, default_arch: str, *, timeout: float = 600, attribute: bool = True) -> PassTrace:
    """Compile `request` (a kernels.Request) once with every dump on; parse it.

    The compile runs in a child process (see the module docstring), in a
    private temporary directory that the returned trace owns: use it as a
    context manager, or close() it.  The dump is parsed while the child
    still compiles (a thread follows the file as it grows), so parsing
    costs little more than the compile itself.  When Triton printed remarks
    and `attribute` is on, each is tied to the pass that printed it
    (attribute_remarks: a second, partial compile, only then).
    """
    started = time.perf_counter()
    workdir_obj = tempfile.TemporaryDirectory(prefix="tritonscope-passes-")
    workdir = Path(workdir_obj.name)
    try:
        try:
            result, parsed = _traced_run(request, default_arch, workdir, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise CompileError(f"The pass-by-pass compile took over {timeout:.0f} s and was stopped.",
                               hint="Try a smaller config.") from e
        trace = _trace_of(workdir, result, *parsed)
        if attribute:
            attribute_remarks(trace, request, default_arch, workdir / "remarks", timeout=timeout)
    except BaseException:
        workdir_obj.cleanup()
        raise
    trace._workdir = workdir_obj
    trace.seconds = time.perf_counter() - started
    return trace


# MLIR's reproducer files, one per stage's pass manager (Triton's TRITON_REPRODUCER_PATH names their stem):
# <stem>.make_ttgir.repro.mlir
REPRODUCER_STEM = "reproducer"


def trace_failure(request, default_arch: str, *, timeout: float = 600,
                  debug_only: str | None = None) -> tuple[PassTrace, dict | None]:
    """The pass-by-pass compile of a config that fails: (the trace of the passes that ran, what failed).

    The same child as trace_passes, with Triton's reproducer on
    (TRITON_REPRODUCER_PATH: before each stage's passes run, and again, for
    the failing pass alone, when one fails) and the compile's error answered
    as data: {"type", "message", "triton_type", "triton_text", "frames"} (see
    child._failing_compile), None when it compiled after all.  The trace's
    last step is the last pass whose "IR Dump Before" was written: the pass
    that failed, when a pass failed.  Its folder (`trace.folder`) holds
    stderr.txt (Triton's diagnostics) and the reproducers.  A compile still
    running after `timeout` seconds is stopped: its trace then ends at the
    last pass whose dump reached the file (MLIR writes it 4 KiB at a time),
    and what failed is {"type": "CompileTimeoutError", ...}.

    `debug_only` ("dialect-conversion"): also LLVM's debug log of that kind,
    into stderr.txt (TRITON_ENABLE_LLVM_DEBUG, TRITON_LLVM_DEBUG_ONLY; Triton's
    wheels are built with it).  It is large, so only a second run asks for it.
    """
    started = time.perf_counter()
    workdir_obj = tempfile.TemporaryDirectory(prefix="tritonscope-failure-")
    workdir = Path(workdir_obj.name)
    try:
        result, parsed = _traced_run(request, default_arch, workdir, timeout=timeout, failure=True,
                                     debug_only=debug_only)
        failed = result.get("failed")
        if result.get("timed_out"):
            failed = {"type": "CompileTimeoutError", "message": f"stopped after {timeout:g} s", "triton_type": "",
                      "triton_text": "", "frames": []}
        trace = _trace_of(workdir, result, *parsed, empty_ok=True)
        if not trace.kernel or trace.kernel == "?":
            trace.kernel = _payload_kernel(request)
    except BaseException:
        workdir_obj.cleanup()
        raise
    trace._workdir = workdir_obj
    trace.seconds = time.perf_counter() - started
    return trace, failed


def _payload_kernel(request) -> str:
    target = str(getattr(request, "target", "") or "")
    return target.rpartition(":")[2] or target or "?"


def _cut_dump(path: Path, plan_at=None):
    """Steps of a dump whose writer was stopped: its last module may be cut off, so it is read up to the
    last header, and that header's pass (the one running) is added as the last step, with no text.
    `plan_at`: the child's stage records (see steps_from_file)."""
    from tritonscope.analyses.passes.read import parse_header

    if not path.exists():
        return [], {}, []
    headers: list[tuple[int, object]] = []
    with open(path, "rb") as f:
        offset = 0
        for raw in f:
            if raw.startswith(b"// -----// IR Dump Before"):
                h = parse_header(raw.decode(errors="replace").rstrip("\r\n"))
                if h is not None:
                    headers.append((offset, h))
            offset += len(raw)
    if not headers:
        return [], {}, []
    last_at, last = headers[-1]
    steps, summaries, remarks = [], {}, []
    if len(headers) > 1:
        with open(path, "rb") as f:
            head = f.read(last_at)
        try:
            steps, summaries, remarks = steps_from_file(str(path), lines=iter(head.splitlines(keepends=True)),
                                                        plan_at=plan_at)
        except InputFileError:
            steps = []
    stage = steps[-1].stage if steps else ""
    if plan_at is not None:  # the stage that was running: the last one the child started
        k = 0
        while (rec := plan_at(k)) is not None:
            stage, k = rec["key"], k + 1
    from tritonscope.analyses.passes.model import TextRef

    steps.append(Step(index=len(steps) + 1, name=last.name, arg=last.arg, anchor=last.anchor, stage=stage,
                      before=TextRef(str(path), last_at, last_at), after=None))
    return steps, summaries, remarks


def _traced_run(request, default_arch: str, workdir: Path, *, timeout: float, failure: bool = False,
                debug_only: str | None = None):
    """Start the dumping child, parse its dump as it grows, wait for it: (its answer, (steps, summaries,
    remarks)).  subprocess.TimeoutExpired when it ran past `timeout` (it is stopped first)."""
    import threading

    proc = _start_child(request, default_arch, workdir, failure=failure, debug_only=debug_only)
    progress = _Progress(workdir)
    parsed: dict[str, Any] = {}

    def parse() -> None:
        try:
            parsed["value"] = steps_from_file(str(workdir / "dump.mlir"), plan_at=progress.plan_at,
                                              lines=_follow(workdir / "dump.mlir", proc))
        except BaseException as e:  # reported after the child's own errors
            parsed["error"] = e

    thread = threading.Thread(target=parse, name="tritonscope-passes-parse", daemon=True)
    thread.start()
    try:
        proc.wait(timeout=timeout)
    except BaseException as e:
        proc.kill()
        proc.wait()
        thread.join()
        if failure and isinstance(e, subprocess.TimeoutExpired):  # the failure run reads what it got so far
            return {"timed_out": True}, _cut_dump(workdir / "dump.mlir", plan_at=progress.plan_at)
        raise
    thread.join()
    result = _child_result(workdir, proc)
    if "error" in parsed:
        if failure and isinstance(parsed["error"], InputFileError):
            return result, _cut_dump(workdir / "dump.mlir")
        raise parsed["error"]
    return result, parsed.get("value") or ([], {}, [])


# --------------------------------------------------------------------------
# Which pass printed each remark
# --------------------------------------------------------------------------
#
# Triton prints diagnostics from its diagnostic handler to llvm::errs()
# (stderr, unbuffered) and the per-pass dumps to MLIR_DUMP_PATH (a buffered
# file) or, without it, to llvm::dbgs(), which is stderr too (3.6 and 3.9:
# python/src/ir.cc, mlir_dumps_or_dbgs and TritonSourceMgrDiagnosticHandler).
# So only dumps sent to stderr sit in order with the diagnostics: a
# diagnostic printed after "IR Dump Before X" and before the next dump was
# printed while X ran.  Dumps on stderr cost a write per token (the 21 MB
# dump of the grouped matmul doubles its compile time), so the main compile
# keeps the file, which only tells each remark's stage, and a second compile
# runs only when there are remarks: with the dumps on stderr for just the
# stages that printed remarks, stopped after the last of them.  Its dump
# headers must match the first compile's steps of those stages one for one;
# where they do not, or the child fails, a remark keeps step 0: pass unknown.


def attribute_remarks(trace: PassTrace, request, default_arch: str, workdir: Path, *,
                      timeout: float = 600) -> None:
    """Set each remark's step and pass (in place, the trace's Artifact too); see the comment above."""
    stages = [s for s in MLIR_STAGES if any(r.stage == s for r in trace.remarks)]
    if not stages or request is None:
        return
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        proc = _start_child(request, default_arch, workdir, attribute=stages)
        try:
            proc.wait(timeout=timeout)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        _child_result(workdir, proc)
        dumps = list(read_dumps(workdir / "stderr.txt", summarize=False))
    except (TritonscopeError, subprocess.TimeoutExpired, OSError) as e:
        trace.warnings.append(f"Triton's remarks could not be tied to passes ({type(e).__name__}: "
                              f"{getattr(e, 'message', e)}); they show their stage only.")
        return
    trace.remarks = remarks_by_pass(trace.steps, trace.remarks, dumps, stages)
    if trace.artifact is not None:
        trace.artifact.remarks = [r.to_dict() for r in trace.remarks]


def remarks_by_pass(steps: list[Step], remarks: list[Remark], dumps: list[_RawDump],
                    stages: Iterable[str]) -> list[Remark]:
    """`remarks` with step and pass set from `dumps` (a stream of dumps and diagnostics in order).

    For each of `stages` whose dumps name the same passes, in the same
    order, as `steps` of that stage, the stage's remarks are replaced by the
    diagnostics the stream shows inside each pass (one per pass that printed
    it; notes stay after their remark).  A remark of the trace that no pass
    printed there, and every remark of another stage, is kept as it was.
    """
    out = list(remarks)
    for stage in stages:
        mine = [s for s in steps if s.stage == stage]
        theirs = [d for d in dumps if d.stage == stage and d.header is not None]
        if not mine or [(h.header.name, h.header.arg, h.header.anchor) for h in theirs] != \
                [(s.name, s.arg, s.anchor) for s in mine]:
            continue  # not the same passes: the order cannot be read (pass unknown)
        known = {_key(r) for r in out if r.stage == stage}
        placed: list[Remark] = []
        seen: set[tuple] = set()
        for step, dump in zip(mine, theirs):
            for r in dump.remarks:
                if _key(r) in known and (_key(r), step.index) not in seen:
                    seen.add((_key(r), step.index))
                    placed.append(replace(r, stage=stage, step=step.index, pass_name=step.name))
        found = {_key(r) for r in placed}
        placed += [r for r in out if r.stage == stage and _key(r) not in found]
        at = next((i for i, r in enumerate(out) if r.stage == stage), len(out))
        out = out[:at] + placed + [r for r in out[at:] if r.stage != stage]
    return out


def _key(r: Remark) -> tuple:
    return (r.file, r.line, r.col, r.severity, r.message)


def refuse_binary(path: str, *, sniff: int = 8192) -> None:
    """InputFileError when `path` is not text (a NUL byte, or bytes that are not UTF-8, in its first KiB):
    a pass dump is MLIR text, and a binary shown as lines is a screenful of replacement characters."""
    try:
        with open(path, "rb") as f:
            head = f.read(sniff)
    except OSError as e:
        raise InputFileError(f"Cannot read the pass dump {path}: {e.strerror or e}.",
                             hint="Give a file written with MLIR_ENABLE_DUMP=1 MLIR_DUMP_PATH=FILE.") from e
    try:
        head.decode("utf-8")
        text = True
    except UnicodeDecodeError as e:
        text = len(head) == sniff and e.start >= len(head) - 3  # a character cut by the sniff's end
    if b"\0" in head or not text:
        raise InputFileError(f"{path} is a binary file, not an MLIR pass dump (which is text).",
                             hint="Give the file a compile wrote with MLIR_ENABLE_DUMP=1 MLIR_DUMP_PATH=FILE.")


def trace_from_dump(path: str | os.PathLike, *, kernel_file: str | None = None) -> PassTrace:
    """A PassTrace from a dump file the user made (MLIR_ENABLE_DUMP=1 MLIR_DUMP_PATH=FILE).

    Stages come from the modules' content; the last step has no "after";
    remarks are those printed into the same file, if any.
    """
    path = str(path)
    if not os.path.isfile(path):
        raise NotFoundError(f"No such dump file: {path}", hint="Give the MLIR_DUMP_PATH file of a compile.")
    refuse_binary(path)
    started = time.perf_counter()
    steps, summaries, remarks = steps_from_file(path, kernel_file=kernel_file, strict=True)
    if kernel_file is None:
        files = Counter(r.file for r in remarks if r.file)
        kernel_file = _kernel_file_of(path) or (files.most_common(1)[0][0] if files else "")
    trace = PassTrace(kernel=os.path.basename(path), file=kernel_file or "", arch="?", label="from a dump file",
                      triton_version="?", steps=steps, summaries=summaries, remarks=remarks)
    trace.seconds = time.perf_counter() - started
    return trace


def _kernel_file_of(path: str) -> str | None:
    """The file of the first `#loc = loc("file.py":l:c)` in a dump (the kernel's def)."""
    with open(path, "rb") as f:
        for number, raw in enumerate(f):
            if number > 2000:
                break
            if raw.startswith(b"#loc"):
                m = FILE_POS.search(raw.decode(errors="replace"))
                if m:
                    return m.group(1)
    return None


def _follow(path: Path, proc, *, poll: float = 0.01) -> Iterator[bytes]:
    """The lines of a file another process is still writing, until it exits.

    Once the process has exited, the file is read to its end once more (the
    child flushes its last buffer as it exits), and that tail is split into
    lines like everything before it.
    """
    while not path.exists():
        if proc.poll() is not None:
            if not path.exists():  # it may have made the file just before exiting
                return
            break
        time.sleep(poll)
    with open(path, "rb") as f:
        rest = b""
        exited = False
        while True:
            chunk = f.read(1 << 20)
            if chunk:
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()
                for line in lines:
                    yield line + b"\n"
                continue
            if exited:
                break
            if proc.poll() is not None:
                exited = True  # one more read: what it wrote before exiting
            else:
                time.sleep(poll)
        if rest:
            yield rest


class _Progress:
    """The child's stage records (stages.jsonl), read as they appear."""

    def __init__(self, workdir: Path):
        self.path = workdir / "stages.jsonl"
        self.stderr = workdir / "stderr.txt"
        self.records: list[dict] = []
        self._offset = 0

    def _refresh(self) -> None:
        try:
            with open(self.path, "rb") as f:
                f.seek(self._offset)
                data = f.read()
        except OSError:
            return
        end = data.rfind(b"\n") + 1
        self._offset += end
        for raw in data[:end].splitlines():
            rec = json.loads(raw)
            if "start" in rec:
                self.records.append({"key": rec["start"]})
            elif "end" in rec and self.records:
                self.records[-1].update(self._stage_end(rec))

    def _stage_end(self, rec: dict) -> dict:
        start, end = rec.get("stderr") or (0, 0)
        try:
            with open(self.stderr, "rb") as f:
                f.seek(start)
                text = f.read(max(0, end - start)).decode(errors="replace")
        except OSError:
            text = ""
        lines = text.splitlines()
        timing = [line for line in lines if _TIMING_RE.match(line)]
        entries = parse_timing(timing)
        return {"final": rec.get("final") or "", "stderr": [start, end], "timing": timing,
                "last": entries[-1][0] if entries else None,
                "remarks": [line for line in lines if is_diagnostic_line(line)]}

    def plan_at(self, k: int) -> dict | None:
        if k >= len(self.records) or "final" not in self.records[k]:
            self._refresh()
        return self.records[k] if k < len(self.records) else None


def _trace_of(workdir: Path, result: dict, steps, summaries, remarks, *, empty_ok: bool = False) -> PassTrace:
    kernel_file = result.get("file") or ""
    # diagnostics printed outside the stages (e.g. while importing the kernel)
    try:
        err = (workdir / "stderr.txt").read_bytes()
    except OSError:
        err = b""
    covered = sorted(tuple(s.get("stderr") or (0, 0)) for s in result.get("stages", []))
    rest, pos = [], 0
    for start, end in covered:
        rest.append(err[pos:start])
        pos = max(pos, end)
    rest.append(err[pos:])
    remarks = _unique(list(remarks) + parse_remarks(b"".join(rest).decode(errors="replace").splitlines()))
    if not steps and not empty_ok:
        raise CompileError("Triton wrote no pass dumps for this compile.",
                           hint="This Triton may not support MLIR_ENABLE_DUMP/MLIR_DUMP_PATH; rerun with --debug.")
    artifact = None
    if isinstance(result.get("artifact"), dict):
        from tritonscope.pipeline.artifact_io import artifact_from_dict

        artifact = artifact_from_dict(result["artifact"], [r.to_dict() for r in remarks])
    return PassTrace(
        kernel=result.get("kernel", "?"), file=kernel_file, arch=result.get("arch", "?"),
        label=result.get("label", ""), triton_version=result.get("triton_version", "?"),
        steps=steps, summaries=summaries, remarks=remarks,
        compile_seconds=result.get("compile_seconds"), warnings=list(result.get("warnings", [])),
        artifact=artifact,
    )


def _start_child(request, default_arch: str, workdir: Path, *, attribute: list[str] | None = None,
                 failure: bool = False, debug_only: str | None = None):
    """The compiling child; with `attribute`, the remarks run (see attribute_remarks); with `failure`, the
    failure run (see trace_failure)."""
    payload = {"request": _request_dict(request), "default_arch": default_arch, "workdir": str(workdir)}
    if attribute:
        payload["attribute"] = list(attribute)
    if failure:
        payload["failure"] = True
    env = dict(os.environ)
    for key in ("MLIR_ENABLE_DUMP", "MLIR_DUMP_PATH", "LLVM_IR_ENABLE_DUMP", "TRITON_KERNEL_OVERRIDE",
                "TRITON_KERNEL_DUMP", "TRITON_DUMP_DIR", "TRITON_REPRODUCER_PATH"):
        env.pop(key, None)
    if not attribute:
        env.update({
            # A file, not stderr: MLIR writes stderr unbuffered, a syscall per
            # token, which doubles the compile time of a big kernel.  The file is
            # opened once per process and flushed at exit, so the child exits
            # normally; stages are told apart with the child's records.
            # (The remarks run sends the dumps of a few stages to stderr, where
            # they sit in order with the diagnostics; the child turns them on.)
            "MLIR_ENABLE_DUMP": "1",
            "MLIR_DUMP_PATH": str(workdir / "dump.mlir"),
        })
    env.update({
        "MLIR_ENABLE_TIMING": "1",
        # the failure run also asks MLIR to print the op a diagnostic is about ("see current operation: ...")
        "MLIR_ENABLE_DIAGNOSTICS": "remarks,warnings" + (",operations" if failure else ""),
        "TRITON_CACHE_DIR": str(workdir / "cache"),
        **({"TRITON_REPRODUCER_PATH": str(workdir / REPRODUCER_STEM)} if failure else {}),
        "TRITON_ALWAYS_COMPILE": "1",
        **({"TRITON_ENABLE_LLVM_DEBUG": "1", "TRITON_LLVM_DEBUG_ONLY": debug_only} if debug_only else {}),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[3]),
                                                    env.get("PYTHONPATH", "")])),
    })
    (workdir / "payload.json").write_text(json.dumps(payload))
    with open(workdir / "stderr.txt", "wb") as err:
        return subprocess.Popen(
            [sys.executable, "-c", "from tritonscope.analyses.passes.child import main; main()",
             str(workdir / "payload.json")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=env)


def _child_result(workdir: Path, proc) -> dict:
    stderr_path = workdir / "stderr.txt"
    try:
        result = json.loads((workdir / "result.json").read_text())
    except (OSError, ValueError):
        try:
            with open(stderr_path, "rb") as f:
                f.seek(max(0, os.path.getsize(stderr_path) - 4000))
                tail = f.read().decode(errors="replace").strip().splitlines()[-8:]
        except OSError:
            tail = []
        raise CompileError(f"The compiler process died (exit {proc.returncode}) before finishing.",
                           context="\n".join(tail) or None,
                           hint="Rerun with --debug; a crash inside Triton shows in the context above.")
    if "error" in result:
        from tritonscope.core.child import _error_from

        raise _error_from(result["error"])  # the child's own error class comes back
    return result["result"]


def _request_dict(request) -> dict:
    if isinstance(request, dict):
        return dict(request)
    return asdict(request) if hasattr(request, "__dataclass_fields__") else dict(vars(request))
