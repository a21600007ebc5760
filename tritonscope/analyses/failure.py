"""When Triton fails: the pass, the op, the Python line, the IR the pass received, and what to try.

A failed compile says little ("RuntimeError: PassManager::run failed").  On
such a failure `diagnose` compiles the config once more in a child, through
the `passes` machinery (passes.trace_failure: every pass dumped, Triton's
reproducer on), and reads what that run left:

- the stage and the pass: the last pass whose "IR Dump Before" was written,
  checked against Triton's own note ("Pipeline failed while executing `X`");
  a failure in Triton's Python between passes (a RuntimeError in make_llir)
  names the function and line of Triton's code instead;
- the diagnostics Triton printed (error, notes, a C++ assertion), each in
  plain words where a known pattern (KNOWN) explains it;
- the op: the one Triton's error points at, else one it names (a symbol in
  the message), else the op the pass works on (PASS_OPS, said as such), with
  its location mapped back to the Python line;
- the IR the pass received, trimmed to that op's region (whole in --save and
  --emit), and MLIR's reproducer of the failing pass alone, with the
  triton-opt command that replays it;
- what to try, each checked by compiling the changed config in a child
  (`check_fixes`); a fix that needs a source change is listed as not tried.

A compile stopped by --timeout is read the same way (`diagnose_timeout`): the
pass it was in is the last one whose dump reached the file.

Nothing here runs when a compile succeeds.  This module returns data and
never prints (outputs/render/failure_view.py draws it).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any, Callable

from tritonscope.core.errors import CompileError, CompileTimeoutError, KernelSpecError, OutOfResourcesError

from tritonscope.analyses.failure_model import (  # noqa: F401  (the report as data)
    SCHEMA, SCHEMA_VERSION, EXCERPT_LINES, FailingOp, Diagnostic, FixCheck, Reproducer, Failure, report_dict, failure_from_report,
)
from tritonscope.analyses.failure_op import (  # noqa: F401  (the op and the IR around it)
    CPP_OPS, PASS_OPS, _pattern_ops, excerpt, find_op, module_ops,
)
from tritonscope.analyses.failure_words import KNOWN, Known, explain_text  # noqa: F401  (the known patterns)


# --------------------------------------------------------------------------
# Which errors get a report
# --------------------------------------------------------------------------

def explainable(err: BaseException) -> bool:
    """A compile error that happened inside Triton's pipeline (a pass, or Triton's Python between passes):
    not a frontend error in the kernel's source (that one names its line already), not a misfit config."""
    if isinstance(err, (KernelSpecError, OutOfResourcesError)) or not isinstance(err, CompileError):
        return False
    if err.data.get("in_pipeline"):
        return True
    return str(err.message).startswith("Triton failed while compiling")   # compile_error's wording, from a child


# --------------------------------------------------------------------------
# What Triton printed
# --------------------------------------------------------------------------

# python: /source/llvm-project/mlir/lib/IR/Dominance.cpp:256: bool ...: Assertion `aBlock && bBlock' failed.
_ASSERTION = re.compile(r"^(?:[\w.-]+: )?(?P<file>/\S+?\.(?:cpp|h|hpp)):(?P<line>\d+): .*Assertion .* failed\.?$")
# LLVM ERROR: Cannot select: ...
_FATAL = re.compile(r"^LLVM ERROR: .*$")
# <unknown>:0: error: colStride must be 1, 2, or 4 but got but got 0 (a diagnostic without a location, which
# the remarks reader, wanting file:line:col, leaves out)
_NO_LOCATION = re.compile(r"^<unknown>:0: (?P<sev>error|note|warning): (?P<msg>.*)$")
# Pipeline failed while executing `NVGPUWarpSpecialization` on 'builtin.module' operation: reproducer ...
# Pipeline failed while executing [`TritonAMDGPUCanonicalizePointers` on 'tt.func' operation: @k]: ...
_FAILED_PASS = re.compile(r"Pipeline failed while executing \[?`(\w+)`")
# pipeline: "builtin.module(nvgpu-warp-specialization{dump-intermediate-steps=true num-stages=3})",
_REPRO_PIPELINE = re.compile(r'pipeline:\s*"(.*)"')
# the stage functions of Triton's backends: make_ttgir, make_llir, make_ptx, make_cubin, make_amdgcn, make_hsaco
_STAGE_FN = re.compile(r"^make_(\w+)$")


# --------------------------------------------------------------------------
# Running it
# --------------------------------------------------------------------------

def diagnose(config, err: BaseException | None = None, *, checks: bool = True, timeout: float = 300,
             status: Callable[[str], Any] | None = None) -> Failure | None:
    """The failure report of `config` (a pipeline Config) that failed with `err`; None when the run that looks
    for it cannot tell more (it compiled this time, or failed before any pass ran).  `checks` compiles what to
    try; `status(text)` is a context shown while it works (a spinner)."""
    import contextlib
    import time

    from tritonscope.analyses.passes import trace_failure

    show = status or (lambda text: contextlib.nullcontext())
    started = time.perf_counter()
    with show(f"{config.target} failed in Triton: rerunning it with every pass dumped..."):
        trace, failed = trace_failure(config, config.arch, timeout=timeout)
    with trace:
        if failed is None:
            return None
        failure = read_failure(trace, failed, config)
    if failure is None:
        return None
    if _conversion_assertion(failure):
        with show(f"{config.target}: an assertion in {failure.pass_name}: rerunning it with the conversion's "
                  "debug log, to find the op..."):
            _op_from_conversion_log(failure, config, timeout=timeout)
    if checks:
        with show(f"checking what to try for {config.target}..."):
            check_fixes(failure, config, timeout=timeout, tuned=(getattr(err, "data", None) or {}).get("tuned"))
    failure.diagnose_seconds = time.perf_counter() - started
    return failure


def _conversion_assertion(f: Failure) -> bool:
    """A C++ assertion ended a dialect conversion (…ToLLVM) and no op was found: LLVM's debug log can tell
    which op the conversion was on."""
    return (f.op is None and f.in_pass and not f.timed_out and bool(f.ir)
            and ("ToLLVM" in f.pass_name or "Convert" in f.pass_name)
            and any(d.severity == "assertion" for d in f.diagnostics))


def _op_from_conversion_log(f: Failure, config, *, timeout: float) -> None:
    """The failing op from a second failure run with LLVM's dialect-conversion debug log on: the kind of the
    last op it began to legalize before the assertion, found in the IR the pass received."""
    from tritonscope.analyses.failure_op import legalizing_op
    from tritonscope.analyses.passes import trace_failure

    try:
        trace, failed = trace_failure(config, config.arch, timeout=timeout, debug_only="dialect-conversion")
    except Exception:  # the report stands without it
        return
    with trace:
        kind = legalizing_op(_read(Path(trace.folder) / "stderr.txt")) if failed and trace.folder else None
    if kind:
        f.op = find_op(f.ir, f, f.error, legalizing=kind)
        f.ir_excerpt = excerpt(f.ir, f.op, kernel_file=f.file)


def diagnose_timeout(config, seconds: float, *, status: Callable[[str], Any] | None = None) -> Failure | None:
    """The report of a compile stopped by --timeout: the same config compiled once more with every pass dumped,
    stopped at the same limit; the pass it was in is the last one whose dump reached the file."""
    import contextlib

    from tritonscope.analyses.passes import trace_failure

    show = status or (lambda text: contextlib.nullcontext())
    with show(f"{config.target} ran past {seconds:g} s: compiling it again with every pass dumped, to find the "
              f"pass (at most {seconds:g} s)..."):
        trace, failed = trace_failure(config, config.arch, timeout=seconds)
    with trace:
        if failed is None or failed.get("type") != "CompileTimeoutError":
            failed = {"type": "CompileTimeoutError", "message": "", "triton_type": "", "triton_text": "",
                      "frames": []}
        failure = read_failure(trace, failed, config)
    if failure is None or not (failure.pass_name or failure.stage):
        return None  # stopped before any stage began (importing the kernel, say): nothing more to tell
    failure.seconds = seconds
    failure.explanation[:1] = [_timeout_words(failure)]
    _describe(failure, config)
    return failure


def _describe(failure: Failure, config) -> None:
    """The kernel, label and Triton version of a run that was stopped before it could say them."""
    if not failure.label and config is not None:
        words = [f"{k}={v}" for k, v in (config.constexprs or {}).items()]
        words += [f"w{config.num_warps}"] * bool(config.num_warps) + [f"s{config.num_stages}"] * (
            config.num_stages is not None) + [config.arch]
        failure.label = " ".join(w for w in words if w)
    if failure.triton_version in ("", "?"):
        try:
            from importlib.metadata import version

            failure.triton_version = version("triton")
        except Exception:
            pass


def read_failure(trace, failed: dict, config=None) -> Failure | None:
    """A Failure from the failure run's trace (passes.trace_failure) and what failed."""
    folder = Path(trace.folder) if trace.folder else None
    stderr = _read(folder / "stderr.txt") if folder else ""
    timed_out = failed.get("type") == "CompileTimeoutError"
    text = failed.get("triton_text") or ""
    error = f"{failed.get('triton_type')}: {text.splitlines()[0]}" if failed.get("triton_type") and text else \
        (failed.get("message") or "")
    f = Failure(kernel=trace.kernel, file=trace.file, arch=trace.arch if trace.arch != "?" else getattr(config, "arch", ""),
                label=trace.label, triton_version=trace.triton_version, error=error, timed_out=timed_out)
    frames = failed.get("frames") or []
    _read_stage(f, frames, folder)
    f.diagnostics = _diagnostics(trace, stderr, f.file)
    named = next((m.group(1) for d in f.diagnostics for m in [_FAILED_PASS.search(d.message)] if m), "")
    f.in_pass = bool(named) or "PassManager::run failed" in text
    steps = [s for s in trace.steps if not f.stage or s.stage in (f.stage, "")] or trace.steps
    f.steps = len(trace.steps)
    step = None
    if steps:
        step = steps[-1]
        if named and step.name != named:  # Triton's note is the authority; the dump says where it ran
            step = next((s for s in reversed(trace.steps) if s.name == named), step)
        f.pass_name, f.pass_arg, f.step = step.name, step.arg, step.index
        f.stage = f.stage or step.stage
        f.stage_step = sum(1 for s in trace.steps if s.stage == step.stage and s.index <= step.index)
    elif named:
        f.pass_name = named
    if timed_out:
        f.earlier = sorted(((s.name, s.seconds) for s in trace.steps if s.seconds), key=lambda x: -x[1])[:3]
    # plain words: the error, the diagnostics, the pass
    for d in f.diagnostics:
        d.plain = explain_text(f"{d.file}:{d.line}: {d.message}" if d.severity == "assertion" else d.message)
    said = [explain_text(text)] + [d.plain for d in f.diagnostics] + _pass_words(f.pass_name if f.in_pass else "")
    f.explanation = [w for w in dict.fromkeys(said) if w]
    if timed_out:
        f.explanation.insert(0, _timeout_words(f))
    ir = trace.text(step.before) if step is not None and step.before.end > step.before.start else ""
    if not ir and step is not None and f.in_pass and folder is not None:
        ir = _received_ir(folder / "dump.mlir", step.name)
        if ir and step.stage != f.stage:   # a cut of the dump, read without its stages: no place in the stage
            f.stage_step = 0
    if not ir and step is not None and not f.in_pass and folder is not None:
        ir = _stage_final(folder, f.stage)
    f.ir = ir
    f.ir_lines = ir.count("\n")
    f.op = find_op(ir, f, text)
    f.ir_excerpt = excerpt(ir, f.op, kernel_file=f.file)
    f.reproducer = _reproducer(folder, f) if folder else None
    return f


def _received_ir(dump: Path, name: str) -> str:
    """The module of the last "IR Dump Before <name>" in a pass dump, up to the next dump's header (an "IR Dump
    After X Failed" one included): for a run whose dump the steps reader could not take whole (a damaged or cut
    dump), '' when there is none."""
    text = _read(dump)
    at = max(text.rfind(f"// -----// IR Dump Before {name}:"), text.rfind(f"// -----// IR Dump Before {name} ("))
    if at < 0:
        return ""
    start = text.find("\n", at) + 1
    end = text.find("// -----// IR Dump", start)
    return text[start:end if end >= 0 else len(text)].rstrip() + "\n" if start > 0 else ""


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _read_stage(f: Failure, frames: list[dict], folder: Path | None) -> None:
    """The stage function Triton was in (make_ttgir) and the line of Triton's code that raised."""
    for frame in reversed(frames):
        m = _STAGE_FN.match(frame.get("function", ""))
        if m:
            f.stage_function = frame["function"]
            key = m.group(1)
            f.stage = {"ttgir_early": "ttgir"}.get(key, key)
            break
    if frames:
        inner = frames[-1]
        f.where, f.where_text = f"{inner['file']}:{inner['line']}", inner.get("text", "")
    if not f.stage and folder is not None:
        # a run stopped by its time limit has no traceback: the child's stage records say which stage ran
        starts = re.findall(r'"start": "(\w+)"', _read(folder / "stages.jsonl"))
        ends = re.findall(r'"end": "(\w+)"', _read(folder / "stages.jsonl"))
        if starts:
            f.stage = starts[-1]
            if len(ends) >= len(starts):
                f.stage_function = f"the stages after make_{starts[-1]}"


def _stage_final(folder: Path, stage: str) -> str:
    """The module a stage ended with (the failure came after its last pass): the IR Triton's code then had."""
    for path in sorted(folder.glob(f"*-{stage}*.final.mlir")):
        return _read(path)
    return ""


def _timeout_words(f: Failure) -> str:
    where = f"in pass {f.pass_name} ({f.stage})" if f.pass_name and not f.stage_function else \
        (f"in {f.stage_function}" if f.stage_function else "")
    limit = f" in {f.seconds:g} s" if f.seconds else ""
    return (f"The compile did not finish{limit}. Compiled again with every pass dumped (which is slower) and "
            f"stopped at the same limit, it was {where or 'in no pass yet'}: the last pass whose dump was written "
            f"(MLIR writes it 4 KiB at a time).")


def _said(f: Failure) -> str:
    """Triton's error and diagnostics as the KNOWN patterns read them (an assertion with its C++ file)."""
    return "\n".join([f.error] + [f"{d.file}:{d.line}: {d.message}" if d.severity == "assertion" else d.message
                                   for d in f.diagnostics])


def _warp_specialization(name: str) -> bool:
    """A pass of warp specialization: NVGPUWarpSpecialization (Hopper), TritonGPUAutomaticWarpSpecialization
    (sm_100 and up, sm_120 too) and the NVWS passes that one runs inside it (NVWSInsertAref, ...)."""
    return "WarpSpecializ" in name or name.startswith("NVWS")


def _pass_words(name: str) -> list[str]:
    if name.startswith("NVWS"):
        return ["Warp specialization (tl.range(..., warp_specialize=True)) splits the loop into producer and "
                "consumer warp groups; this pass is a step of it (Triton runs the NVWS passes inside "
                "TritonGPUAutomaticWarpSpecialization, for sm_100 and newer, sm_120 included) and failed on that "
                "loop."]
    if "WarpSpecializ" in name:
        return ["Warp specialization (tl.range(..., warp_specialize=True)) splits the loop into producer and "
                "consumer warp groups; this pass failed on that loop."]
    if "BufferOps" in name:
        return ["The AMD buffer-ops pass turns global loads and stores into buffer instructions; "
                "AMDGCN_USE_BUFFER_OPS=0 turns it off."]
    if "CanonicalizePointers" in name:
        return ["The AMD pass that rewrites pointer arithmetic as a base and an offset runs to prepare buffer ops; "
                "AMDGCN_USE_BUFFER_OPS=0 turns both off."]
    if "Pipeline" in name or "ScheduleLoops" in name or "AssignLatencies" in name:
        return ["This pass software-pipelines the kernel's loops (num_stages); fewer stages avoid it."]
    return []


def _diagnostics(trace, stderr: str, kernel_file: str) -> list[Diagnostic]:
    """Triton's errors, notes and warnings of the failure (remarks of passes that worked are left out), and a
    C++ assertion or LLVM error it printed."""
    out: list[Diagnostic] = []
    for line in stderr.splitlines():
        m = _ASSERTION.match(line)
        if m:
            said = line[line.find("Assertion"):]
            function = line[m.end("line") + 2:line.find(": Assertion")].strip()
            out.append(Diagnostic("assertion", said + (f" (in {_short_function(function)})" if function else ""),
                                  file=m.group("file"), line=int(m.group("line"))))
        elif _FATAL.match(line):
            out.append(Diagnostic("fatal", line))
        else:   # `<unknown>:0: error: colStride must be ...`: an attribute's verifier, which has no location
            m = _NO_LOCATION.match(line)
            if m:
                out.append(Diagnostic(m.group("sev"), m.group("msg").strip()))
    for r in trace.remarks:
        if r.severity in ("error", "note") or (r.severity == "warning" and not r.step):
            message = r.message
            if any(d.message == message and not d.file for d in out):
                continue
            out.append(Diagnostic(r.severity, _without_temp_paths(message), file=r.file, line=r.line, col=r.col))
    return out


def _short_function(signature: str) -> str:
    """'mlir::detail::DominanceInfoBase<false>::properlyDominatesImpl' of a C++ signature with its return type,
    arguments and template list ('bool mlir::...::properlyDominatesImpl(Block *, ...) const [IsPostDom = false]')."""
    head = signature.replace("(anonymous namespace)::", "").split("(")[0].split()
    return head[-1] if head else signature


def _without_temp_paths(message: str) -> str:
    # "reproducer generated at `/tmp/tritonscope-failure-x/reproducer.make_ttgir.repro.mlir`": that folder is gone
    return re.sub(r"`[^`]*tritonscope-failure-[^`]*`", "`reproducer.mlir` (--emit DIR writes it)", message)


# --------------------------------------------------------------------------
# The reproducer
# --------------------------------------------------------------------------

def triton_opt() -> str | None:
    """triton-opt, when this machine has it (Triton's wheels do not ship it): $TRITON_OPT, else on PATH."""
    found = os.environ.get("TRITON_OPT") or shutil.which("triton-opt")
    return found if found and os.path.isfile(found) else None


def _reproducer(folder: Path, f: Failure) -> Reproducer | None:
    """MLIR's reproducer of the failing pass (the failing stage's file, rewritten with that pass alone)."""
    if not f.in_pass:
        return None
    stem = "reproducer"
    names = [f"{stem}.{f.stage_function}.repro.mlir"] if f.stage_function else []
    names += [p.name for p in sorted(folder.glob(f"{stem}.*{f.stage}*.repro.mlir"))]
    for name in names:
        # the failure run dumps every pass, so passes that print their own steps were told to: not the replay
        text = _read(folder / name).replace("dump-intermediate-steps=true", "dump-intermediate-steps=false")
        if not text:
            continue
        m = _REPRO_PIPELINE.search(text)
        pipeline = m.group(1) if m else ""
        inner = pipeline[pipeline.find("(") + 1:pipeline.rfind(")")] if "(" in pipeline else pipeline
        local = bool(inner) and len(_top_level(inner)) == 1
        exe = triton_opt()
        command = f"{exe or 'triton-opt'} --run-reproducer reproducer.mlir"
        needs = "" if exe else (
            f"triton-opt, which Triton's wheels do not ship: build Triton {f.triton_version} from source "
            f"(`pip install -e .` in a checkout of its tag builds build/cmake.*/bin/triton-opt) and set "
            f"TRITON_OPT to it, or run the command there. `--emit DIR` writes reproducer.mlir.")
        return Reproducer("reproducer.mlir", pipeline, local, command, exe is not None, needs, text)
    return None


def _top_level(text: str) -> list[str]:
    from tritonscope.language.mlir_syntax import split_top

    return [p for p in split_top(text) if p.strip()]


# --------------------------------------------------------------------------
# What to try, checked
# --------------------------------------------------------------------------

# warp_specialize=warp_specialize   warp_specialize=WS   (the name a tl.range call takes it from)
_WS_ARG = re.compile(r"warp_specialize\s*=\s*([A-Za-z_]\w*)")


def candidate_fixes(failure: Failure, config, scratch: Path | None = None,
                    tuned: dict | None = None) -> list[tuple[FixCheck, Any, dict | None]]:
    """What to try for this failure: (the check, the changed Config or None when it cannot be checked, the
    environment changes).  A source change KNOWN can make is checked on a copy of the kernel's file written
    into `scratch`.  `tuned` (see check_fixes) makes a --config N compile's changed launch the user's own config."""
    out: list[tuple[FixCheck, Any, dict | None]] = []
    name = failure.pass_name if failure.in_pass or failure.timed_out else ""
    words = _said(failure)
    for known in KNOWN:
        if known.source_fix and known.pattern.search(words):
            changed = _rewritten(config, failure.file, known.rewrite, scratch) if known.rewrite else None
            if known.line_rewrite and failure.op is not None and failure.op.line:
                changed = _rewritten(config, failure.op.file, known.line_rewrite, scratch, line=failure.op.line)
            out.append((FixCheck(f"change the source: {known.source_fix}" +
                                 (" (checked on a copy of the file so changed)" if changed is not None else ""), "",
                                 said="" if changed is not None else "not tried: a change to the kernel's source"),
                        changed, None))
    # both passes run only with buffer ops on (triton/backends/amd/compiler.py: `if knobs.amd.use_buffer_ops:`)
    if "BufferOps" in name or "CanonicalizePointers" in name or \
            ("buffer" in words.lower() and failure.arch.startswith("gfx")):
        out.append((FixCheck("turn off AMD buffer ops", "AMDGCN_USE_BUFFER_OPS=0"), config,
                    {"AMDGCN_USE_BUFFER_OPS": "0"}))
    if _warp_specialization(name):
        source = _read(Path(failure.file)) if failure.file else ""
        names = [n for n in dict.fromkeys(_WS_ARG.findall(source)) if n not in ("True", "False")]
        given = [n for n in names if n in (config.constexprs or {})]
        if given:
            n = given[0]
            out.append((FixCheck(f"no warp specialization ({n}=False)", f"-c {n}=False"),
                        config.with_values(constexprs={n: "False"}), None))
        else:  # a literal in the source: checked on a copy of the file with it False
            changed = _rewritten(config, failure.file, ((r"\bwarp_specialize\s*=\s*True\b", "warp_specialize=False"),),
                                 scratch)
            out.append((FixCheck("no warp specialization: tl.range(..., warp_specialize=False) in the source" +
                                 (" (checked on a copy of the file so changed)" if changed is not None else ""), "",
                                 said="" if changed is not None else "not tried: a change to the kernel's source"),
                        changed, None))
    out += _other_tritons(failure, config)
    if failure.in_pass or failure.timed_out:
        base, words, of = _own_config(config, tuned)
        stages = base.num_stages
        warps = base.num_warps or 4
        other = 8 if warps <= 4 else 4
        if stages is None or stages > 1:
            out.append((FixCheck(f"fewer stages (num_stages=1{of})", f"{words}-w {warps} -s 1" if of else "-s 1"),
                        base.with_launch(num_stages=1), None))
        out.append((FixCheck(f"another num_warps ({other}{of})", f"{words}-w {other} -s {stages}" if of else
                             f"-w {other}"), base.with_launch(num_warps=other), None))
    return out


def _own_config(config, tuned: dict | None):
    """(the config a changed launch starts from, the flags that set it, words for the label): `config` itself,
    or for a --config N compile the autotune config's own values as the user's config (a launch refuses -s/-w
    beside a tuner's config), its tuned constexprs said with -c."""
    from dataclasses import replace

    if getattr(config, "config", None) is None or not isinstance(tuned, dict):
        return config, "", ""
    given = config.constexprs or {}
    extra = {k: v for k, v in (tuned.get("constexprs") or {}).items() if k not in given}
    base = replace(config, config=None, constexprs={**given, **extra},
                   num_warps=tuned.get("num_warps"), num_stages=tuned.get("num_stages"))
    flags = "".join(f"-c {k}={v} " for k, v in extra.items())
    return base, flags, f", the rest as autotune config {tuned.get('index', config.config)}"


# Variables of this process that must not reach another environment's Python (as versions/run.py's sides).
_OTHER_ENV_DROP = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "TRITONSCOPE_DEBUG")


def other_tritons(version: str) -> list[tuple[str, str]]:
    """[(Triton version, its Python)] of the environments `tritonscope versions` made (its cache's triton-envs
    folder; files only, nothing is started), other than `version`, newest first.  An environment whose record
    or Python is missing is left out (versions --envs says why)."""
    import json

    from tritonscope.core.env import cache_dir

    root = cache_dir() / "triton-envs"
    found = []
    try:
        folders = sorted(p for p in root.iterdir() if p.name.startswith("triton-"))
    except OSError:
        return []
    for folder in folders:
        try:
            meta = json.loads((folder / "tritonscope-env.json").read_text())
        except (OSError, ValueError):
            continue
        python = folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
        have = meta.get("triton") if isinstance(meta, dict) else None
        if isinstance(have, str) and have and have != version and python.exists():
            found.append((have, str(python)))

    def key(item):
        return [int(x) if x.isdigit() else -1 for x in re.split(r"[.+]", item[0])[:3]]

    return sorted(found, key=key, reverse=True)


def _other_tritons(failure: Failure, config) -> list[tuple[FixCheck, Any, dict | None]]:
    """Another Triton as a thing to try: each environment `versions` made (checked by compiling the config with
    its Python, as `compile --triton` does), or, with none, the command that makes one (not tried)."""
    others = other_tritons(failure.triton_version)
    if not others:
        return [(FixCheck("another Triton version", "--triton VERSION",
                          said="not tried: no other Triton environment here (`tritonscope versions --add VERSION` "
                               "makes one; `tritonscope versions TARGET --a VERSION` compares the two)"), None, None)]
    env = {k: v for k, v in os.environ.items() if k not in _OTHER_ENV_DROP}
    env["PYTHONNOUSERSITE"] = "1"
    return [(FixCheck(f"Triton {version} (an environment `versions` made)", f"--triton {version}"), config,
             {"__python__": python, **env}) for version, python in others[:2]]


def check_fixes(failure: Failure, config, *, timeout: float = 300, limit: int = 4, tuned: dict | None = None) -> None:
    """Compile each candidate fix (at most `limit`) in a child process, a few at once, and say which compile; a
    fix that needs a source change is listed as not tried.  `tuned`: the autotune config's values the failed
    compile used (compile_errors._tuned), for a changed launch of a --config N compile."""
    from concurrent.futures import ThreadPoolExecutor

    import tempfile

    with tempfile.TemporaryDirectory(prefix="tritonscope-fix-") as scratch:
        candidates = candidate_fixes(failure, config, Path(scratch), tuned=tuned)
        runnable = [(c, changed, env) for c, changed, env in candidates if changed is not None][:limit]
        workers = max(1, min(len(runnable), os.cpu_count() or 1, 3))
        if runnable:
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tritonscope-check") as pool:
                list(pool.map(lambda job: _check_one(*job, timeout=timeout), runnable))
    for check, changed, _ in candidates:
        if changed is not None and not check.tried:
            check.said = "not tried (enough checks ran)"
        failure.fixes.append(check)


def _rewritten(config, file: str, rewrite, scratch: Path | None, *, line: int = 0):
    """`config` compiling a copy of the kernel's file with `rewrite` applied, written into `scratch`; None when
    the target is no file of its own (a module of a package: its copy would lose its package), or nothing
    changes.  With `line`, only that line (1-based) changes: by the first (regex, replacement) that matches it,
    once."""
    from dataclasses import replace

    path, sep, kernel = (config.target or "").rpartition(":")
    if scratch is None or not sep or not path.endswith(".py") or not file or \
            os.path.realpath(path) != os.path.realpath(file):
        return None
    source = _read(Path(file))
    text = source
    if line:
        lines = source.splitlines(keepends=True)
        if not 0 < line <= len(lines):
            return None
        for pattern, replacement in rewrite:
            changed = re.sub(pattern, replacement, lines[line - 1], count=1)
            if changed != lines[line - 1]:
                text = "".join(lines[:line - 1] + [changed] + lines[line:])
                break
    for pattern, replacement in () if line else rewrite:
        text = re.sub(pattern, replacement, text)
    if not source or text == source:
        return None
    copy = scratch / os.path.basename(file)
    copy.write_text(text)
    return replace(config, target=f"{copy}:{kernel}")


def _check_one(check: FixCheck, changed, env: dict | None, *, timeout: float) -> None:
    """One check: the changed config compiled in a child (its own Triton cache entry, its output held)."""
    import time

    from tritonscope.core.errors import TritonscopeError
    from tritonscope.pipeline.child_compile import compile_elsewhere

    started = time.perf_counter()
    python = (env or {}).get("__python__")
    if python is not None:   # another Triton's Python: `env` is that child's whole environment
        env = {k: v for k, v in env.items() if k != "__python__"}
    try:
        compile_elsewhere(changed, timeout=timeout, what=f"The check '{check.flags}'", python=python,
                          env=env if python is not None else ({**os.environ, **env} if env else None))
        check.compiles, check.said = True, "compiles"
    except CompileTimeoutError:
        check.compiles, check.said = False, f"did not finish in {timeout:g} s"
    except TritonscopeError as e:
        check.compiles = False
        check.said = "fails too: " + _short(e.message)
    check.tried = True
    check.seconds = time.perf_counter() - started


def _short(message: str) -> str:
    first = (message or "").strip().splitlines()[0] if message else ""
    m = re.search(r"(RuntimeError|CompilationError|AssertionError|ValueError): (.*)", first)
    return (m.group(0) if m else first)[:160]


# --------------------------------------------------------------------------
# On the error path
# --------------------------------------------------------------------------

def attach(err: BaseException, config, *, checks: bool = True, timeout: float | None = None,
           status: Callable[[str], Any] | None = None) -> Failure | None:
    """Diagnose the failed (or timed-out) compile of `config` and put the report on `err`: err.data["failure"],
    and its message in one line that names the pass, the op and the Python line.  Whatever goes wrong while
    diagnosing leaves the error as it was (said in err.data["failure_error"]): the report never hides it."""
    if config is None or not isinstance(err, (CompileError, CompileTimeoutError)) or "failure" in err.data:
        return None
    if isinstance(err, CompileTimeoutError) and not timeout:
        return None
    if isinstance(err, CompileError) and not explainable(err):
        return None
    try:
        if isinstance(err, CompileTimeoutError):
            failure = diagnose_timeout(config, timeout, status=status)
        else:
            failure = diagnose(config, err, checks=checks, timeout=max(60.0, timeout or 300.0), status=status)
    except KeyboardInterrupt:
        raise
    except Exception as e:  # the report is extra: the compile's own error is what the user must see
        err.data["failure_error"] = f"{type(e).__name__}: {getattr(e, 'message', e)}"
        return None
    if failure is None:
        return None
    err.data["failure"] = failure
    where = failure.one_line()
    if where:
        if isinstance(err, CompileTimeoutError):
            err.message = f"{err.message} Compiled again with every pass dumped, it was in {where} at the limit."
        else:
            err.message = f"Triton failed while compiling {failure.kernel} in {where}: {failure.error}"
            ok = [x.flags or x.label for x in failure.fixes if x.compiles]
            tried = [x.flags or x.label for x in failure.fixes if x.tried]
            err.hint = (f"These compile: {', '.join(ok)} (see 'What to try')." if ok else
                        f"No fix found: none of what was tried compiles ({', '.join(tried)}); see the failure "
                        "report above for what Triton said, in plain words." if tried else
                        "See the failure report above: what Triton said, in plain words, and what was tried.")
    return failure


def diagnose_found(err: BaseException, *, timeout: float = 300,
                   status: Callable[[str], Any] | None = None) -> Failure | None:
    """The failure report of a found kernel's recompile (`open --recompile`) that failed inside Triton, put on
    `err` as `attach` does.  The recompile's compile (err.data["recompile"]: what inputs/sources/recompile
    compiled, and for which arch) runs once more with every pass dumped.  What to try is not checked: a found
    kernel has no config to change here (`tritonscope compile` of its file does check it).  None, and `err` as
    it was, when there is nothing more to tell or diagnosing fails."""
    import contextlib

    from tritonscope.analyses.passes import trace_failure

    job = getattr(err, "data", {}).get("recompile")
    if not isinstance(err, CompileError) or not isinstance(job, dict) or "failure" in err.data or \
            not err.data.get("in_pipeline"):
        return None
    show = status or (lambda text: contextlib.nullcontext())
    try:
        with show(f"{job.get('kernel', 'the kernel')} failed in Triton: recompiling it with every pass dumped..."):
            trace, failed = trace_failure({"recompile": job}, job.get("arch_name") or "", timeout=timeout)
        with trace:
            failure = read_failure(trace, failed, None) if failed is not None else None
    except KeyboardInterrupt:
        raise
    except Exception as e:  # the report is extra: the recompile's own error is what the user must see
        err.data["failure_error"] = f"{type(e).__name__}: {getattr(e, 'message', e)}"
        return None
    if failure is None:
        return None
    words = _said(failure)
    failure.fixes += [FixCheck(f"change the source: {k.source_fix}", "", said="not tried: a change to the kernel's "
                               "source") for k in KNOWN if k.source_fix and k.pattern.search(words)]
    root = _inductor_cache(failure)
    if root is not None:   # its Python is Inductor's, here: compiled from it, libdevice is the target's
        with show(f"checking what to try for {failure.kernel}..."):
            failure.fixes.append(_check_inductor_source(failure, root, timeout=timeout))
    else:
        failure.fixes.append(FixCheck("what to try, checked", "",
                                      said="not tried: a found kernel's recompile has no config to change here; "
                                           "`tritonscope compile FILE.py:KERNEL` with its arguments checks what to "
                                           "try"))
    err.data["failure"] = failure
    if failure.one_line():
        err.message = f"{err.message.split(': Triton failed while compiling')[0]}: Triton failed while compiling " \
                      f"{failure.kernel} in {failure.one_line()}: {failure.error}"
    ok = [x.flags for x in failure.fixes if x.compiles]
    if ok:
        err.hint = f"This compiles: {ok[0]} (see 'What to try')."
    return failure


def _inductor_cache(failure: Failure) -> Path | None:
    """The Inductor cache folder a found kernel's Python file was generated into (<root>/<xx>/c<xx>....py, a file
    of torch._inductor's), when that file is on this machine; None otherwise."""
    path = Path(failure.file) if failure.file else None
    if path is None or path.suffix != ".py" or not path.is_file() or len(path.parent.name) != 2 or \
            path.name[1:3] != path.parent.name or "torch._inductor" not in _read(path)[:4000]:
        return None
    return path.parent.parent


def _check_inductor_source(failure: Failure, root: Path, *, timeout: float) -> FixCheck:
    """Compile the found kernel from its Inductor file for the same arch, as `tritonscope compile ROOT -k KERNEL
    --arch ARCH` does (in a child; Inductor's `libdevice` resolves to the target's library there, where the
    recompiled IR holds CUDA's)."""
    import subprocess
    import sys
    import time

    check = FixCheck("compile it from its Inductor source, whose libdevice is the target's",
                     f"tritonscope compile {root} -k {failure.kernel} --arch {failure.arch}")
    started = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "tritonscope", "compile", str(root), "-k", failure.kernel,
                               "--arch", failure.arch, "--stage", "none", "--width", "200"],
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        check.compiles = done.returncode == 0
        said = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
        check.said = "compiles" if check.compiles else \
            "fails too: " + _short(said[-1][len("error:"):].strip() if said else f"exit {done.returncode}")
    except subprocess.TimeoutExpired:
        check.compiles, check.said = False, f"did not finish in {timeout:g} s"
    check.tried, check.seconds = True, time.perf_counter() - started
    return check


def reporter(*, checks: bool) -> Callable[[BaseException, Any, Any], None]:
    """A Pipeline's on_failure: `attach` with the pipeline's time limit and status line; `checks` compiles
    what to try (the compile command), or not (a sweep's rows, the API)."""
    def on_failure(err: BaseException, config, pipeline) -> None:
        attach(err, config, checks=checks, timeout=getattr(pipeline, "timeout", None),
               status=getattr(pipeline, "status", None))

    return on_failure


def row_error(err: BaseException) -> str | None:
    """The one line a sweep or versions row shows for a failure with a report: 'pass X (...) on op at f.py:N:
    error'; None without a report."""
    failure = getattr(err, "data", {}).get("failure")
    if failure is None:
        return None
    error = re.sub(r"^RuntimeError: ", "", failure.error)
    return f"{failure.one_line()}: {error}" if failure.one_line() else None


def load_failure(path: str | os.PathLike) -> Failure | None:
    """The Failure a saved report holds (--save FILE.json of a failed compile), or None when it holds none."""
    import json

    from tritonscope.core.sanitize import visible_data

    try:
        with open(path, encoding="utf-8") as fh:
            head = fh.read(200)
            if SCHEMA not in head:
                return None
            fh.seek(0)
            data = visible_data(json.load(fh))  # as a reopened compile's report: no control char, no lone surrogate
    except (OSError, ValueError, RecursionError):  # too deep: load_analysis says so (exit 7), not exit 1
        return None
    return failure_from_report(data, str(path))

