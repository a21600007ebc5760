"""Reading Triton's per-pass dumps: headers, streamed summaries per dump, steps, pass timing."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Iterable, Iterator

from tritonscope.core.errors import InputFileError
from tritonscope.triton_api.remarks import Remark, is_diagnostic_line, parse_remarks
from tritonscope.analyses.passes.classes import CLASS_ORDER, line_classes, module_stage
from tritonscope.analyses.passes.model import DumpSummary, Step, TextRef
from tritonscope.language.mlir_syntax import FILE_POS, LOC, LOC_REF, OP
from tritonscope.language.dialects.mlir_passes import (  # the pass manager's text
    ALIAS as _ALIAS_RE, HEADER as _HEADER_RE, INTERNAL as _INTERNAL_RE, SHARED as _SHARED_RE,
    STAGE_ATTR as _STAGE_RE, TIMING as _TIMING_RE,
)

# The stages whose pass managers are dumped, in pipeline order.

# --------------------------------------------------------------------------
# Reading one dump stream
# --------------------------------------------------------------------------

class _DumpReader:
    """Summarises one module's lines as they stream past."""

    def __init__(self, kernel_file: str | None):
        self.kernel_file = kernel_file
        self.summary = DumpSummary()
        self.norm: Counter = Counter()
        self.loc_defs: dict[str, str] = {}
        self.op_locs: list[tuple[str, str]] = []  # (op kind, loc expression)
        self._hash = hashlib.blake2b(digest_size=16)
        self._parts: list[str] = []  # loc-free lines not yet hashed

    def feed(self, line: str) -> None:
        if not line or line.isspace():
            return
        first = line[0]
        if first == "#":
            if line.startswith("#loc"):
                name, sep, expr = line.partition(" = ")
                if sep and expr.startswith("loc("):
                    self.loc_defs[name] = expr.rstrip()
                    return
            m = _ALIAS_RE.match(line)
            if m:
                self.summary.encodings[m.group(1)] = m.group(2)
        s = self.summary
        loc = ""
        at = line.find("loc(")
        if at >= 0:
            # fast path, the usual op line: one trailing " loc(#loc12)"
            if at > 0 and line[at - 1] == " " and line.find("loc(", at + 4) < 0 and line.rstrip().endswith(")") \
                    and line.find(")", at) == len(line.rstrip()) - 1:
                loc = line[at:].rstrip()
                norm = line[:at - 1].rstrip()
            else:
                found = LOC.findall(line)
                loc = found[-1].strip() if found else ""
                norm = LOC.sub("", line).rstrip()
        else:
            norm = line.rstrip()
        self.norm[norm] += 1
        self._parts.append(norm)
        s.lines += 1
        m = OP.match(norm)
        if m:
            kind = m.group(1)
            s.ops[kind] += 1
            for cls in line_classes(kind, norm):
                s.classes[cls] += 1
            if loc:
                self.op_locs.append((kind, loc))
        if "ttg.shared" in norm:
            m = _SHARED_RE.search(norm)
            if m:
                s.shared = int(m.group(1))
        if "stage = " in norm:
            for v in _STAGE_RE.findall(norm):
                s.max_stage = max(s.max_stage or 0, int(v))

    def finish(self) -> DumpSummary:
        s = self.summary
        self._hash.update("\n".join(self._parts).encode())
        self._parts = []
        s.digest = self._hash.hexdigest()
        if self.op_locs:
            s.line_ops = self._line_ops()
        return s

    def _line_ops(self) -> dict[int, Counter]:
        memo: dict[str, int | None] = {}
        kernel = self.kernel_file or self._guess_kernel_file()
        real: dict[str, bool] = {}

        def in_kernel(path: str) -> bool:
            if path not in real:
                real[path] = bool(kernel) and (path == kernel or os.path.realpath(path) == os.path.realpath(kernel))
            return real[path]

        def resolve(expr: str, depth: int = 0) -> int | None:
            if expr in memo:
                return memo[expr]
            memo[expr] = None  # cycle guard
            found = None
            for m in FILE_POS.finditer(expr):
                if in_kernel(m.group(1)):
                    found = int(m.group(2))
                    break
            if found is None and depth < 64:
                for ref in LOC_REF.findall(expr):
                    target = self.loc_defs.get(ref)
                    if target is not None:
                        found = resolve(target, depth + 1)
                        if found is not None:
                            break
            memo[expr] = found
            return found

        out: dict[int, Counter] = {}
        for kind, loc in self.op_locs:
            line = resolve(loc)
            if line is not None:
                out.setdefault(line, Counter())[kind] += 1
        return out

    def _guess_kernel_file(self) -> str | None:
        for expr in self.loc_defs.values():
            m = FILE_POS.search(expr)
            if m:
                return m.group(1)
        return None


@dataclass
class _Header:
    name: str
    arg: str
    anchor: str


# // -----// IR Dump After ConvertTritonAMDGPUToLLVM Failed: convert-triton-amdgpu-to-llvm{...} ('builtin.module' operation) //----- //
_FAILED_RE = re.compile(r"^// -----// IR Dump After \S+ Failed\b")


def parse_header(line: str) -> _Header | None:
    """The pass named by one dump header line, or None for any other line."""
    m = _HEADER_RE.match(line)
    if not m:
        return None
    rest = m.group("rest").strip()
    name, _, arg = rest.partition(" ")
    if name.endswith(":"):          # 3.9: "CanonicalizerPass: canonicalize{...}"
        name = name[:-1]
    arg = arg.strip()
    if arg.startswith("(") and arg.endswith(")"):  # 3.6: "Canonicalizer (canonicalize)"
        arg = arg[1:-1]
    anchor = m.group("anchor") + (f" @{m.group('func')}" if m.group("func") else "")
    return _Header(name or rest, arg, anchor)


@dataclass
class _RawDump:
    header: _Header | None        # None: a stage's final module (no pass runs after)
    stage: str                    # from the stage marker before it, or ""
    ref: TextRef
    summary: DumpSummary
    norm: Counter
    internal: list[str]
    remarks: list[Remark]         # diagnostics the pass printed while it ran
    timing: list[str]             # execution-time report lines printed after it
    # diagnostics printed after its pass manager's timing report, before the next dump:
    # outside any pass, so tied to no pass ("pass unknown")
    loose: list[Remark] = field(default_factory=list)


# The line that opens MLIR's timing report, printed when a pass manager has run all its passes:
#                          ... Execution time report ...
_REPORT_MARK = "... Execution time report ..."

# Written by the child around each stage (see _install_stage_hook):
# // -----// tritonscope stage ttgir
# // -----// tritonscope stage ttgir end
STAGE_MARK = "// -----// tritonscope stage "


class _OpenDump:
    """One module dump of a stream while it is read: its summary so far and what was printed after it."""

    def __init__(self, path: str, header, start, stage, number, *, kernel_file: str | None, summarize: bool):
        self.path = path
        self.header, self.start, self.stage, self.number = header, start, stage, number
        self.reader = _DumpReader(kernel_file) if summarize else None
        self.internal: list[str] = []
        self.end: int | None = None      # where the module text ended
        self.state = "module"            # module -> tail (#loc lines) -> other
        self.other: list[str] = []
        self.pm_done = False             # its pass manager's timing report has been printed
        self.loose: list[str] = []       # diagnostics printed after that

    def feed(self, line: str, line_start: int) -> None:
        """One line of the module, its #loc tail, or what was printed after it."""
        state = self.state
        if state == "module":
            if self.reader:
                self.reader.feed(line)
            # the top-level op closes at column 0: "}" or "} loc(#loc)"
            if line[:1] == "}" and (not line[1:].strip() or line[1:].lstrip().startswith("loc(")):
                self.state = "tail"
            return
        if state == "tail":
            if not line.strip():
                return
            if line.startswith("#"):
                # #loc definitions, and the LLVM dialect's #di_... attributes printed among them
                if self.reader:
                    self.reader.feed(line)
                return
            if self.end is None:
                self.end = line_start
            self.state = "other"
        # printed while the pass ran (or an internal dump): keep what we read
        if line and not line[0].isspace() and is_diagnostic_line(line):
            (self.loose if self.pm_done else self.other).append(line)
        elif _TIMING_RE.match(line):
            self.other.append(line)
        elif _REPORT_MARK in line:
            self.pm_done = True

    def done(self, end: int) -> _RawDump:
        if self.state == "module":
            what = f"the module dumped before {self.header.name}" if self.header else "the final module"
            raise InputFileError(
                f"{self.path} is damaged: {what} (line {self.number}) never closes.",
                hint="The dump was cut off or edited; compile again to get a whole one.")
        end = self.end if self.end is not None else end
        remarks = parse_remarks(self.other, stage=self.stage)
        timing = [line for line in self.other if _TIMING_RE.match(line)]
        summary, norm = (self.reader.finish(), self.reader.norm) if self.reader else (DumpSummary(), Counter())
        return _RawDump(self.header, self.stage, TextRef(self.path, self.start, end), summary, norm, self.internal,
                        remarks, timing, parse_remarks(self.loose, stage=self.stage))


def read_dumps(path: str | os.PathLike, *, kernel_file: str | None = None, final: bool = False,
               strict: bool = False, orphans: list[str] | None = None,
               lines: Iterable[bytes] | None = None, summarize: bool = True) -> Iterator[_RawDump]:
    """Stream the module dumps of one file, one summarised dump at a time.

    The file is what MLIR printed with MLIR_ENABLE_DUMP.  When the dumps went
    to stderr (no MLIR_DUMP_PATH), diagnostics and timing reports sit between
    the dumps in the order they happened, since MLIR writes all three to the
    same unbuffered stream from one thread: after a dump's module closes,
    a diagnostic up to the next header was printed by that pass while it
    ran, unless its pass manager's timing report ("... Execution time report
    ...") came first (the pass manager had finished: no pass printed it).
    (With MLIR_DUMP_PATH the dumps go to a buffered file and diagnostics to
    stderr, and the order between them is lost; see attribute_remarks.)

    With `final`, the file holds one module with no header (a stage's last
    module).  With `strict` (a file the user gave), text before the first
    header is an error.  Diagnostics printed outside any pass go to `orphans`.
    `lines` replaces reading `path` (e.g. following a file still being
    written); offsets still refer to `path`.  With `summarize=False` the
    modules are only delimited, not summarised (when only the order of
    passes and diagnostics is wanted).  A module that never closes (a cut-off file) and a
    file with no header raise InputFileError: a damaged dump is reported,
    never half-read.
    """
    path = str(path)
    if lines is None:
        try:
            f = open(path, "rb")
        except OSError as e:
            raise InputFileError(f"Cannot read the pass dump {path}: {e.strerror or e}.",
                                 hint="Give a file written with MLIR_ENABLE_DUMP=1 MLIR_DUMP_PATH=FILE.") from e
    else:
        f = contextlib.nullcontext(lines)

    with f as source:
        offset = 0
        stage = ""
        seen = False
        opened = functools.partial(_OpenDump, path, kernel_file=kernel_file, summarize=summarize)
        current = opened(None, 0, "", 1) if final else None
        failed = False  # inside an "IR Dump After X Failed" module: not a pass's input, skipped
        for number, raw in enumerate(source, 1):
            line_start = offset
            offset += len(raw)
            if raw.startswith(b"// -----//"):
                text = raw.decode(errors="replace").rstrip("\r\n")
                failed = False
                if _FAILED_RE.match(text):
                    # "// -----// IR Dump After X Failed: ...": MLIR's dump of what a pass that failed without
                    # crashing left (in generic form); the module X received ends here
                    if current is not None:
                        yield current.done(line_start)
                        current = None
                    failed = seen = True
                    continue
                header = parse_header(text)
                if header is not None:
                    if current is not None:
                        yield current.done(line_start)
                    current = opened(header, offset, stage, number)
                    seen = True
                    continue
                if text.startswith(STAGE_MARK):
                    if current is not None:
                        yield current.done(line_start)
                        current = None
                    words = text[len(STAGE_MARK):].split()
                    stage = "" if not words or words[-1] == "end" else words[0]
                    continue
                m = _INTERNAL_RE.match(text)
                if m and current is not None:
                    # "SoftwarePipeliner internal IR Dump After: LowerLoops": a pass's
                    # own intermediate module, not a pass boundary.  It belongs to
                    # the pass whose "before" dump this is.
                    if current.end is None:
                        current.end = line_start
                    current.state = "internal"
                    current.internal.append(m.group("what").replace(" internal IR Dump After:", ":").strip())
                    continue
            if failed:
                continue
            if current is None:
                if orphans is not None and raw[:1] not in (b" ", b"\n"):
                    line = raw.decode(errors="replace").rstrip("\r\n")
                    if is_diagnostic_line(line):
                        orphans.append(line)
                if strict and not seen and raw.strip():
                    raise InputFileError(
                        f"{path} is not an MLIR pass dump: line {number} comes before any "
                        "`// -----// IR Dump Before ...` header.",
                        context=raw.decode(errors="replace")[:200].rstrip(),
                        hint="Give a file written with MLIR_ENABLE_DUMP=1 MLIR_DUMP_PATH=FILE.")
                continue
            current.feed(raw.decode(errors="replace").rstrip("\r\n"), line_start)
        if current is not None:
            yield current.done(offset)
        elif not seen and not final:
            raise InputFileError(f"{path} holds no pass dumps.",
                                 hint="Was it written with MLIR_ENABLE_DUMP=1 (MLIR_DUMP_PATH=FILE)?")


# --------------------------------------------------------------------------
# Steps from dumps
# --------------------------------------------------------------------------


def _content_stage(s: DumpSummary) -> str:
    """ttir / ttgir / llir by what a module holds (for dumps with no stage marks): the MLIR dialect says."""
    return module_stage(s.ops, s.encodings.values())


def _compare(step: Step, a: DumpSummary, b: DumpSummary, norm_a: Counter, norm_b: Counter) -> None:
    step.changed = a.digest != b.digest
    if not step.changed:
        return
    step.lines_added = sum((norm_b - norm_a).values())
    step.lines_removed = sum((norm_a - norm_b).values())
    step.ops_added = dict(sorted((b.ops - a.ops).items()))
    step.ops_removed = dict(sorted((a.ops - b.ops).items()))
    step.classes = {c: b.classes.get(c, 0) - a.classes.get(c, 0) for c in CLASS_ORDER
                    if b.classes.get(c, 0) != a.classes.get(c, 0)}
    enc_a = {v: k for k, v in a.encodings.items() if _is_layout(v)}
    enc_b = {v: k for k, v in b.encodings.items() if _is_layout(v)}
    step.layouts_added = {enc_b[v]: v for v in enc_b if v not in enc_a}
    step.layouts_removed = {enc_a[v]: v for v in enc_a if v not in enc_b}
    if a.shared != b.shared and b.shared is not None:
        step.shared = (a.shared, b.shared)
    # loop.stage attributes live from the loop scheduler to the pipeliner, which
    # consumes them: report the stages when they are set, not when they go.
    sa = None if a.max_stage is None else a.max_stage + 1
    sb = None if b.max_stage is None else b.max_stage + 1
    if sa != sb and sb is not None:
        step.stages = (sa, sb)


def _is_layout(value: str) -> bool:
    # #ttg.blocked<{...}>  #ttg.nvidia_mma<{...}>  #ttg.swizzled_shared<{...}>  (not #ttg.shared_memory)
    return value.startswith("#") and "<" in value and not value.startswith("#loc")


def steps_from_file(path: str, *, plan: list[dict] | None = None, plan_at=None, kernel_file: str | None = None,
                    strict: bool = False, lines: Iterable[bytes] | None = None,
                    ) -> tuple[list[Step], dict[TextRef, DumpSummary], list[Remark]]:
    """Steps, dump summaries and remarks from one dump file.

    The stages come from the child's records, in order (`plan`, or
    `plan_at(k)` when they are still being written: None until stage k has
    started, then {"key"}, and once it has ended also "final" (a file
    holding its last module), "last" (the last pass its timing report
    names), "timing" and "remarks" (its slice of stderr)).  A dump starts
    the next stage when the current stage has ended, the dump before it ran
    the stage's last pass, and the dump holds the module the stage ended
    with.  Without records, stage marks in the stream or the modules'
    content decide.

    Step i's "after" is step i+1's "before" within a stage; the last step of
    a stage compares with the stage's final module when there is one, else
    it has no "after".
    """
    if plan is not None:
        fixed = list(plan)
        plan_at = (lambda k: fixed[k] if 0 <= k < len(fixed) else None)  # noqa: E731
    steps: list[Step] = []
    summaries: dict[TextRef, DumpSummary] = {}
    remarks: list[Remark] = []
    timings: dict[str, list[str]] = {}
    finals: dict[int, _RawDump | None] = {}
    prev: _RawDump | None = None
    prev_step: Step | None = None
    index = 0

    def final_of(i: int) -> _RawDump | None:
        if i not in finals:
            rec = plan_at(i) if plan_at else None
            got = None
            if rec and rec.get("final") and os.path.exists(rec["final"]):
                try:
                    got = next(read_dumps(rec["final"], kernel_file=kernel_file, final=True))
                except InputFileError:
                    got = None
            if rec is None or "final" not in rec:
                return got  # not ended yet: ask again later
            finals[i] = got
        return finals[i]

    def close_stage(i: int) -> None:
        final = final_of(i)
        if final is not None and prev_step is not None and prev is not None:
            summaries[final.ref] = final.summary
            prev_step.after = final.ref
            _compare(prev_step, prev.summary, final.summary, prev.norm, final.norm)

    seen: list[str] = []  # the passes the current stage's dumps name, in order
    timed: dict[int, list[str]] = {}  # stage index -> the passes its timing report names, once it has ended

    def starts_next(dump: _RawDump) -> bool:
        rec = plan_at(index)
        if prev is None or rec is None or "final" not in rec:
            return False  # the current stage is still running: this dump is its own
        if index not in timed:
            timed[index] = [name for name, _ in parse_timing(rec.get("timing") or [])]
        ended = _stage_ended(timed[index], seen, dump.header.name)
        if ended is not None:
            # MLIR's report times each pass the stage ran, in order: the stage has ended once its dumps have
            # named all of them (a module equal to the stage's last one is no proof: for a small kernel the
            # last tens of passes of a stage may change nothing)
            return ended
        last = rec.get("last")
        if last and prev.header.name != last:
            return False
        final = final_of(index)
        return final is None or final.summary.digest == dump.summary.digest

    orphans: list[str] = []
    for dump in read_dumps(path, kernel_file=kernel_file, strict=strict, orphans=orphans, lines=lines):
        summaries[dump.ref] = dump.summary
        if plan_at is not None:
            if starts_next(dump):
                close_stage(index)
                index += 1
                prev = prev_step = None
                seen.clear()
            seen.append(dump.header.name)
            rec = plan_at(index)
            stage = rec["key"] if rec else ""
        else:
            stage = dump.stage or _content_stage(dump.summary)
            if prev is not None and dump.stage != prev.stage:
                prev = prev_step = None
        if prev is not None and prev_step is not None:
            prev_step.after = dump.ref
            _compare(prev_step, prev.summary, dump.summary, prev.norm, dump.norm)
            if plan_at is None and not dump.stage:
                prev_step.stage = _content_stage(dump.summary)
        h = dump.header
        step = Step(index=len(steps) + 1, name=h.name, arg=h.arg, anchor=h.anchor, stage=stage,
                    before=dump.ref, after=None, internal=list(dump.internal))
        steps.append(step)
        for r in dump.remarks:
            remarks.append(Remark(r.file, r.line, r.col, r.severity, r.message, stage, step.index, step.name))
        remarks.extend(replace(r, stage=stage) for r in dump.loose)
        timings.setdefault(stage, []).extend(dump.timing)
        if prev is not None:
            prev.norm = Counter()  # free what is no longer needed
        prev, prev_step = dump, step
    if plan_at is not None:
        close_stage(index)
        k = 0
        while (rec := plan_at(k)) is not None:
            timings.setdefault(rec["key"], []).extend(rec.get("timing", []))
            remarks.extend(parse_remarks(rec.get("remarks", []), stage=rec["key"]))
            k += 1
    for stage, tlines in timings.items():
        assign_times([s for s in steps if s.stage == stage], parse_timing(tlines))
    remarks.extend(parse_remarks(orphans))
    return steps, summaries, _unique(remarks)


def _stage_ended(timed: list[str], dumped: list[str], name: str) -> bool | None:
    """Whether a dump of pass `name` starts the next stage, by the passes the stage's timing report names in
    order (`timed`) and those its dumps named so far (`dumped`; a pass dumped again right after itself is one
    pass over several functions): True when the dumps named them all and `name` is not the last again, False
    when `name` goes on with them; None when the report names none or the dumps leave its order (a timed pass
    that dumped nothing): the caller decides otherwise then."""
    if not timed:
        return None
    at = 0
    for i, dumped_name in enumerate(dumped + [name]):
        if at < len(timed) and dumped_name == timed[at]:
            at += 1
        elif at and dumped_name == timed[at - 1]:
            continue
        elif i == len(dumped) and at == len(timed):
            return True  # every timed pass dumped, and this one is another's: the next stage's first
        else:
            return None
    return False


def _unique(remarks: list[Remark]) -> list[Remark]:
    seen: set[tuple] = set()
    out = []
    for r in remarks:
        key = (r.file, r.line, r.col, r.severity, r.message)
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def parse_dump(path: str | os.PathLike, *, kernel_file: str | None = None) -> list[Step]:
    """Steps of one dump file (e.g. a user's own MLIR_DUMP_PATH file).

    Stages are told apart by content; the last step has no "after".
    """
    steps, _, _ = steps_from_file(str(path), kernel_file=kernel_file, strict=True)
    return steps


# --------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------

def parse_timing(lines: Iterable[str]) -> list[tuple[str, float]]:
    """[(pass name, seconds)] from MLIR's execution time reports, in order.

    Analyses ("(A) ..."), nested pipeline headers ("'tt.func' Pipeline") and
    the Rest/Total lines are left out.
    """
    out = []
    for line in lines:
        m = _TIMING_RE.match(line)
        if not m:
            continue
        name = m.group(3)
        if name.startswith("(A)") or name.endswith(" Pipeline") or name in ("Rest", "Total"):
            continue
        out.append((name, float(m.group(1))))
    return out


def assign_times(steps: list[Step], timings: list[tuple[str, float]], *, window: int = 4) -> None:
    """Give each step the time of the next timing entry with its name.

    MLIR reports one time per pass instance and pipeline nesting level, in
    order; a nested pass that ran over several functions dumps once per
    function but is timed once, so matching is greedy and in order, looking
    a few entries ahead.  Steps with no match keep `seconds = None`.
    """
    cursor = 0
    for step in steps:
        for j in range(cursor, min(cursor + window, len(timings))):
            if timings[j][0] == step.name:
                step.seconds = timings[j][1]
                cursor = j + 1
                break
