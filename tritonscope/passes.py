"""Pass by pass: what each of Triton's compiler passes did to a kernel.

One compile runs in a child process with Triton's per-pass IR dumps
(`MLIR_ENABLE_DUMP`), pass timing (`MLIR_ENABLE_TIMING`) and diagnostics
(`MLIR_ENABLE_DIAGNOSTICS=remarks,warnings`) turned on, in a private
directory with a fresh `TRITON_CACHE_DIR` (a cache hit dumps nothing, and the
user's cache is never touched).  A child, because Triton reads those
variables from the environment and MLIR writes to file descriptor 2: nothing
of it leaks into the caller.  A stage hook points `MLIR_DUMP_PATH` at one file
per stage (ttir, ttgir, llir) and saves each stage's final module, which is
the "after" of the stage's last pass.

The dumps are big (the 128x256x64 grouped matmul on sm_90a gives about 21 MB
and 85,000 lines), so they are streamed: one dump at a time is summarised
(op counts, encodings, shared memory, locations per Python line) and only its
predecessor's line multiset is kept to count lines added and removed.  Step
texts stay in the files and are read back by byte offset when asked for
(`PassTrace.text`), so nothing holds the dump whole, let alone twice.

Triton's remarks are tied to their stage by the child's stderr ranges, and
to the pass that printed them by a second, partial compile that runs only
when there are remarks (attribute_remarks: the dumps go to a buffered file
here, so only dumps on stderr show which pass a diagnostic came from).

Dump headers are read, never matched against a list of pass names:

    3.6: // -----// IR Dump Before Canonicalizer (canonicalize) ('builtin.module' operation) //----- //
    3.9: // -----// IR Dump Before CanonicalizerPass: canonicalize{max-iterations=10 ...} ('tt.func' operation: @k) //----- //

This module returns data and never prints (render/passes_view.py draws it).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Iterator

from tritonscope.errors import CompileError, InputFileError, NotFoundError, TritonscopeError
from tritonscope.remarks import Remark, is_diagnostic_line, parse_remarks

# The stages whose pass managers are dumped, in pipeline order.
MLIR_STAGES = ("ttir", "ttgir", "llir")
STAGE_TITLES = {"ttir": "TTIR", "ttgir": "TTGIR", "llir": "LLVM"}


# --------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------


@dataclass
class DumpSummary:
    """What one dumped module contains, in kernel terms (no text)."""

    ops: Counter = field(default_factory=Counter)          # op kind -> count
    classes: Counter = field(default_factory=Counter)      # "async copy" -> count
    encodings: dict[str, str] = field(default_factory=dict)  # "#mma" -> "#ttg.nvidia_mma<{...}>"
    shared: int | None = None                              # module attribute ttg.shared (bytes)
    max_stage: int | None = None                           # highest loop.stage / scheduled_max_stage
    line_ops: dict[int, Counter] = field(default_factory=dict)  # Python line -> op kinds
    digest: str = ""                                       # hash of the loc-free text
    lines: int = 0                                         # loc-free lines

    def to_dict(self) -> dict:
        return {"ops": dict(self.ops), "classes": dict(self.classes), "encodings": dict(self.encodings),
                "shared": self.shared, "max_stage": self.max_stage, "lines": self.lines}


@dataclass(frozen=True)
class TextRef:
    """Where one dumped module lies: a byte range of a file."""

    path: str
    start: int
    end: int


@dataclass
class Step:
    """One pass run: the IR before it, the IR after it, and what changed.

    `name` and `arg` are as the dump header writes them (3.6: "Canonicalizer",
    "canonicalize"; 3.9: "CanonicalizerPass", "canonicalize{...}").
    `changed` is None when there is no "after" to compare with.
    """

    index: int
    name: str
    arg: str
    anchor: str                      # "builtin.module" or "tt.func @matmul_kernel"
    stage: str                       # ttir | ttgir | llir
    before: TextRef
    after: TextRef | None
    changed: bool | None = None
    lines_added: int = 0
    lines_removed: int = 0
    ops_added: dict[str, int] = field(default_factory=dict)
    ops_removed: dict[str, int] = field(default_factory=dict)
    classes: dict[str, int] = field(default_factory=dict)   # class -> delta (+/-)
    layouts_added: dict[str, str] = field(default_factory=dict)    # alias -> encoding
    layouts_removed: dict[str, str] = field(default_factory=dict)
    shared: tuple[int | None, int | None] | None = None   # (before, after) when it changed
    stages: tuple[int | None, int | None] | None = None   # pipeline stages (before, after) when changed
    seconds: float | None = None
    internal: list[str] = field(default_factory=list)     # pass-internal dumps ("LowerLoops")

    @property
    def title(self) -> str:
        return self.name

    def facts(self) -> list[str]:
        """Short phrases for what changed, in kernel terms (table cells, JSON)."""
        out: list[str] = []
        for alias, enc in self.layouts_added.items():
            if alias in self.layouts_removed:
                out.append(f"{alias} changed")
            else:
                out.append(f"{alias} assigned")
        for alias in self.layouts_removed:
            if alias not in self.layouts_added:
                out.append(f"{alias} gone")
        for cls in CLASS_ORDER:
            delta = self.classes.get(cls, 0)
            if delta:
                out.append(f"{delta:+d} {cls}")
        if self.stages:
            b, a = self.stages
            out.append(f"pipeline stages {a}" if b is None else f"pipeline stages {b}->{a}")
        if self.shared:
            b, a = self.shared
            out.append(f"shared {a} B" if b is None else f"shared {b}->{a} B")
        return out

    def to_dict(self) -> dict:
        d = asdict(self)
        d["before"] = asdict(self.before)
        d["after"] = asdict(self.after) if self.after else None
        for key in ("before", "after"):  # offsets are private to this run
            d.pop(key)
        d["facts"] = self.facts()
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Step":
        """A step of a saved pass table (no texts: `before`/`after` are None)."""
        names = {f for f in cls.__dataclass_fields__} - {"before", "after"}
        kw = {k: v for k, v in d.items() if k in names}
        for key in ("shared", "stages"):
            if kw.get(key) is not None:
                kw[key] = tuple(kw[key])
        return cls(before=None, after=None, **kw)  # type: ignore[arg-type]


@dataclass(frozen=True)
class FindEvent:
    """A step at which the count of a searched op or text changed."""

    step: int
    name: str
    stage: str
    kind: str        # "appears" | "removed" | "changed"
    before: int
    after: int

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class LineEvent:
    """A step that changed the ops one Python line became."""

    step: int
    name: str
    stage: str
    ops_after: dict[str, int]
    added: dict[str, int]
    removed: dict[str, int]

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class PassTrace:
    """Every pass step of one compile, its remarks, and where the texts lie.

    Use as a context manager (or call close()): the dump files live in a
    private temporary directory that is removed at the end.
    """

    kernel: str
    file: str
    arch: str
    label: str
    triton_version: str
    steps: list[Step]
    summaries: dict[TextRef, DumpSummary] = field(repr=False)
    remarks: list[Remark] = field(default_factory=list)
    compile_seconds: float | None = None
    seconds: float | None = None       # whole run: child compile + parse
    warnings: list[str] = field(default_factory=list)
    # The compile's Artifact (model.Artifact, with these remarks), so one
    # compile gives both the pass table and every stage (`compile --passes`).
    artifact: Any = field(default=None, repr=False)
    _workdir: Any = field(default=None, repr=False)

    # --- lifetime -----------------------------------------------------
    def close(self) -> None:
        if self._workdir is not None:
            self._workdir.cleanup()
            self._workdir = None

    def __enter__(self) -> "PassTrace":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- queries --------------------------------------------------------
    @property
    def changed_steps(self) -> list[Step]:
        return [s for s in self.steps if s.changed]

    def step(self, which: str | int) -> Step:
        """A step by number ("37") or pass name (first changed run of it)."""
        text = str(which).strip()
        if text.isdigit():
            n = int(text)
            if not 1 <= n <= len(self.steps):
                raise NotFoundError(f"There is no step {n}: this compile has steps 1-{len(self.steps)}.",
                                    hint="Run `tritonscope passes TARGET` to see the table.")
            return self.steps[n - 1]
        low = text.lower()
        named = [s for s in self.steps if low in (s.name.lower(), s.name.lower().removesuffix("pass"),
                                                  s.arg.split("{")[0].lower())]
        if not named:
            named = [s for s in self.steps if low in s.name.lower()]
        if not named:
            from tritonscope.errors import close_matches

            names = sorted({s.name for s in self.steps})
            raise NotFoundError(f"No pass named {text!r} ran.{close_matches(text, names)}",
                                hint="Give a step number or one of: " + ", ".join(names[:12]) + " ...")
        changed = [s for s in named if s.changed]
        return (changed or named)[0]

    def text(self, ref: TextRef | None) -> str:
        """The module text of one dump (read back from the file by offset)."""
        if ref is None:
            return ""
        if self._workdir is None and not os.path.exists(ref.path):
            raise InputFileError("The pass dumps are gone (the trace was closed).",
                                 hint="Query the trace inside its `with` block.")
        with open(ref.path, "rb") as f:
            f.seek(ref.start)
            return f.read(ref.end - ref.start).decode(errors="replace")

    def summary_of(self, ref: TextRef | None) -> DumpSummary | None:
        return self.summaries.get(ref) if ref is not None else None

    def to_dict(self) -> dict:
        """The pass table as data.  Each remark names its `step` and `pass_name` (0 and "": pass
        unknown); each step lists its remarks as positions in `remarks`."""
        steps = []
        for s in self.steps:
            d = s.to_dict()
            d["remarks"] = [i for i, r in enumerate(self.remarks) if r.step == s.index]
            steps.append(d)
        return {
            "kernel": self.kernel, "file": self.file, "arch": self.arch, "label": self.label,
            "triton_version": self.triton_version, "compile_seconds": self.compile_seconds,
            "seconds": self.seconds, "warnings": list(self.warnings),
            "steps": steps,
            "remarks": [r.to_dict() for r in self.remarks],
        }

    @classmethod
    def from_dict(cls, d: dict) -> "PassTrace":
        """A saved pass table (to_dict()), for the table and remarks views: no texts, no Triton."""
        try:
            trace = cls(kernel=str(d.get("kernel", "?")), file=str(d.get("file", "")), arch=str(d.get("arch", "?")),
                        label=str(d.get("label", "")), triton_version=str(d.get("triton_version", "?")),
                        steps=[Step.from_dict(x) for x in d.get("steps", [])], summaries={},
                        remarks=[Remark.from_dict(r) for r in d.get("remarks", [])],
                        compile_seconds=d.get("compile_seconds"), warnings=list(d.get("warnings", [])))
        except (TypeError, ValueError, AttributeError) as e:
            raise InputFileError(f"The saved pass table is damaged: {type(e).__name__}: {e}",
                                 hint="Save it again with `tritonscope passes ... --save FILE.json`.") from e
        trace.seconds = d.get("seconds")
        return trace


# --------------------------------------------------------------------------
# Reading one dump stream
# --------------------------------------------------------------------------

# // -----// IR Dump Before TritonGPUPipeline: tritongpu-pipeline{num-stages=3} ('builtin.module' operation) //----- //
# // -----// IR Dump Before Canonicalizer (canonicalize) ('tt.func' operation: @matmul_kernel) //----- //
_HEADER_RE = re.compile(r"^// -----// IR Dump (?P<when>Before|After) (?P<rest>.*?) "
                        r"\('(?P<anchor>[^']+)' operation(?:: @(?P<func>.*))?\) //----- //\s*$")
# // -----// SoftwarePipeliner internal IR Dump After: LowerLoops
_INTERNAL_RE = re.compile(r"^// -----// (?P<what>.*?)(?: //----- //)?\s*$")
# #loc37 = loc("/work/k.py":12:20)
_LOC_DEF_RE = re.compile(r"^(#loc\d*) = (loc\(.*\))\s*$")
# #blocked = #ttg.blocked<{sizePerThread = [1, 2], ...}>
_ALIAS_RE = re.compile(r"^(#[\w.$-]+) = (.*?)\s*$")
#     %offs_m_9 = tt.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32> loc(#loc38)
#     %22:3 = scf.for %arg9 = %c0_i32 to %K step %c16_i32 iter_args(...)
#     tt.store %32, %33 : tensor<16x16x!tt.ptr<f32>, #blocked> loc(#loc26)
#     %5 = "tt.reduce"(%4) <{axis = 0 : i32}> ({
_OP_RE = re.compile(r'^\s*(?:%[\w.$#:, %-]+?=\s*)?"?([a-z_][\w$]*\.[a-z_][\w.$]*)"?[\s(<{]')
# loc(#loc35)   loc("a_ptr"(#loc))   loc(callsite(#loc20 at #loc21))   loc("/k.py":8:1)
_LOC_RE = re.compile(r"\s?loc\((?:[^()]|\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\))*\)")
# "/work/main/samples/matmul.py":19:16
_POS_RE = re.compile(r'"([^"]+)":(\d+):(\d+)')
# #loc35 (a reference inside a loc expression)
_LOCREF_RE = re.compile(r"#loc\d*\b")
# module attributes {"ttg.num-warps" = 4 : i32, ttg.shared = 8192 : i32, ...}
_SHARED_RE = re.compile(r"\bttg\.shared = (\d+) : i32")
# {loop.cluster = 1 : i32, loop.stage = 2 : i32}    {tt.scheduled_max_stage = 2 : i32}
_STAGE_RE = re.compile(r"\b(?:loop\.stage|tt\.scheduled_max_stage) = (\d+) : i32")

# Coarse classes of ops, over the three dialects (MLIR ops and LLVM inline asm).
_CLASSES: tuple[tuple[str, re.Pattern], ...] = (
    # ttg.async_copy_global_to_local / ttng.async_tma_copy_global_to_local / cp.async.ca.shared.global
    ("async copy", re.compile(r"async_copy_global_to_local|async_tma_copy|buffer_load_to_local"
                              r"|cp\.async\.(?:ca|cg|bulk)\b|nvvm\.cp\.async\.shared")),
    # ttg.async_commit_group / cp.async.commit_group
    ("async commit", re.compile(r"async_commit_group|cp\.async\.commit[._]group")),
    # ttg.async_wait / ttng.wait_barrier / cp.async.wait_group / ttng.warp_group_dot_wait
    ("wait", re.compile(r"ttg\.async_wait|ttng\.wait_barrier|cp\.async\.wait[._]group|warp_group_dot_wait"
                        r"|wgmma\.wait_group|wgmma_wait_group|async_tma_store_wait|nvvm\.cp\.async\.wait")),
    # gpu.barrier / nvvm.barrier0 / bar.sync / barrier.sync / ttng.barrier_expect
    ("barrier", re.compile(r"\bgpu\.barrier\b|\bttg\.barrier\b|nvvm\.barrier|\bbar\.sync\b|\bbarrier\.sync\b"
                           r"|ttng\.(?:init_barrier|barrier_expect|arrive_barrier)|mbarrier")),
    ("convert_layout", re.compile(r"\bttg\.convert_layout\b")),
    ("shared alloc", re.compile(r"\bttg\.local_alloc\b")),
    ("shared load", re.compile(r"\bttg\.local_load\b|ldmatrix")),
    ("shared store", re.compile(r"\bttg\.local_store\b|stmatrix")),
    ("dot", re.compile(r"\btt\.dot\b|ttng\.warp_group_dot\b|ttng\.tc_gen5_mma|mma\.sync|wgmma\.mma_async"
                       r"|\bnvg\.wgmma\b")),
)
CLASS_ORDER = tuple(name for name, _ in _CLASSES)
_KIND_CLASSES: dict[str, tuple[str, ...]] = {}


def _classes_of(text: str) -> tuple[str, ...]:
    return tuple(cls for cls, rx in _CLASSES if rx.search(text))


def _kind_classes(kind: str) -> tuple[str, ...]:
    """The classes of an op kind (memoized: an op's kind decides its class)."""
    found = _KIND_CLASSES.get(kind)
    if found is None:
        found = _KIND_CLASSES[kind] = _classes_of(kind)
    return found


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
                found = _LOC_RE.findall(line)
                loc = found[-1].strip() if found else ""
                norm = _LOC_RE.sub("", line).rstrip()
        else:
            norm = line.rstrip()
        self.norm[norm] += 1
        self._parts.append(norm)
        s.lines += 1
        m = _OP_RE.match(norm)
        if m:
            kind = m.group(1)
            s.ops[kind] += 1
            if kind == "llvm.inline_asm" or kind.startswith(("nvvm.", "nvgpu.")):
                for cls in _classes_of(norm):  # the asm string says what it is
                    s.classes[cls] += 1
            else:
                for cls in _kind_classes(kind):
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
            for m in _POS_RE.finditer(expr):
                if in_kernel(m.group(1)):
                    found = int(m.group(2))
                    break
            if found is None and depth < 64:
                for ref in _LOCREF_RE.findall(expr):
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
            m = _POS_RE.search(expr)
            if m:
                return m.group(1)
        return None


@dataclass
class _Header:
    name: str
    arg: str
    anchor: str


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

    class _Open:
        def __init__(self, header, start, stage, number):
            self.header, self.start, self.stage, self.number = header, start, stage, number
            self.reader = _DumpReader(kernel_file) if summarize else None
            self.internal: list[str] = []
            self.end: int | None = None      # where the module text ended
            self.state = "module"            # module -> tail (#loc lines) -> other
            self.other: list[str] = []
            self.pm_done = False             # its pass manager's timing report has been printed
            self.loose: list[str] = []       # diagnostics printed after that

        def done(self, end: int) -> _RawDump:
            if self.state == "module":
                what = f"the module dumped before {self.header.name}" if self.header else "the final module"
                raise InputFileError(
                    f"{path} is damaged: {what} (line {self.number}) never closes.",
                    hint="The dump was cut off or edited; compile again to get a whole one.")
            end = self.end if self.end is not None else end
            remarks = parse_remarks(self.other, stage=self.stage)
            timing = [line for line in self.other if _TIMING_RE.match(line)]
            summary, norm = (self.reader.finish(), self.reader.norm) if self.reader else (DumpSummary(), Counter())
            return _RawDump(self.header, self.stage, TextRef(path, self.start, end), summary, norm, self.internal,
                            remarks, timing, parse_remarks(self.loose, stage=self.stage))

    with f as source:
        offset = 0
        stage = ""
        seen = False
        current = _Open(None, 0, "", 1) if final else None
        for number, raw in enumerate(source, 1):
            line_start = offset
            offset += len(raw)
            if raw.startswith(b"// -----//"):
                text = raw.decode(errors="replace").rstrip("\r\n")
                header = parse_header(text)
                if header is not None:
                    if current is not None:
                        yield current.done(line_start)
                    current = _Open(header, offset, stage, number)
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
            line = raw.decode(errors="replace").rstrip("\r\n")
            state = current.state
            if state == "module":
                if current.reader:
                    current.reader.feed(line)
                # the top-level op closes at column 0: "}" or "} loc(#loc)"
                if line[:1] == "}" and (not line[1:].strip() or line[1:].lstrip().startswith("loc(")):
                    current.state = "tail"
                continue
            if state == "tail":
                if not line.strip():
                    continue
                if line.startswith("#loc"):
                    if current.reader:
                        current.reader.feed(line)
                    continue
                if current.end is None:
                    current.end = line_start
                current.state = state = "other"
            # printed while the pass ran (or an internal dump): keep what we read
            if line and not line[0].isspace() and is_diagnostic_line(line):
                (current.loose if current.pm_done else current.other).append(line)
            elif _TIMING_RE.match(line):
                current.other.append(line)
            elif _REPORT_MARK in line:
                current.pm_done = True
        if current is not None:
            yield current.done(offset)
        elif not seen and not final:
            raise InputFileError(f"{path} holds no pass dumps.",
                                 hint="Was it written with MLIR_ENABLE_DUMP=1 (MLIR_DUMP_PATH=FILE)?")


# --------------------------------------------------------------------------
# Steps from dumps
# --------------------------------------------------------------------------


def _content_stage(s: DumpSummary) -> str:
    """ttir / ttgir / llir by what a module holds (for dumps with no stage marks)."""
    if any(k.startswith("llvm.") for k in s.ops) and "tt.func" not in s.ops:
        return "llir"
    if any(k.startswith(("ttg.", "ttng.", "amdgpu.")) for k in s.ops) or any(
            v.startswith(("#ttg.", "#ttng.", "#triton_gpu.")) for v in s.encodings.values()):
        return "ttgir"
    return "ttir"


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

    def starts_next(dump: _RawDump) -> bool:
        rec = plan_at(index)
        if prev is None or rec is None or "final" not in rec:
            return False  # the current stage is still running: this dump is its own
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

#     0.0061 (  1.9%)  TritonGPUPipeline
#     0.0000 (  0.0%)    (A) DominanceInfo
_TIMING_RE = re.compile(r"^\s+(\d+\.\d+) \(\s*[\d.]+%\)(\s+)(.+?)\s*$")


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


# --------------------------------------------------------------------------
# Queries: --find and --line
# --------------------------------------------------------------------------

# ttg.async_copy_global_to_local   tt.dot   llvm.inline_asm
_OP_NAME_RE = re.compile(r"^[a-z_][\w$]*\.[a-z_][\w.$]*$")


def find(trace: PassTrace, query: str) -> list[FindEvent]:
    """Steps at which `query` appears, disappears or changes in count.

    An op name ("ttg.local_alloc") counts ops of that kind; "/regex/"
    counts loc-free lines matching the regex; any other text counts
    loc-free lines containing it ("#mma", "cp.async").
    """
    query = check_query(query)
    if _OP_NAME_RE.match(query) and any(query in s.ops for s in trace.summaries.values()):
        counts = {ref: s.ops.get(query, 0) for ref, s in trace.summaries.items()}
    else:
        if len(query) > 2 and query.startswith("/") and query.endswith("/"):
            match = re.compile(query[1:-1]).search
        else:
            match = lambda line: query in line  # noqa: E731
        counts = {ref: _count_lines(trace, ref, match) for ref in trace.summaries}
    events = []
    for step in trace.steps:
        if step.after is None:
            continue
        b, a = counts.get(step.before, 0), counts.get(step.after, 0)
        if b == a:
            continue
        kind = "appears" if b == 0 else "removed" if a == 0 else "changed"
        events.append(FindEvent(step.index, step.name, step.stage, kind, b, a))
    return events


def _count_lines(trace: PassTrace, ref: TextRef, match) -> int:
    n = 0
    with open(ref.path, "rb") as f:
        f.seek(ref.start)
        left = ref.end - ref.start
        for raw in f:
            if left <= 0:
                break
            left -= len(raw)
            line = raw.decode(errors="replace")
            if line.startswith("#loc"):
                continue
            if "loc(" in line:
                line = _LOC_RE.sub("", line)
            if match(line):
                n += 1
    return n


def check_query(query: str) -> str:
    """A --find query, stripped; UsageError for an empty one or a bad /regex/ (checked before the compile)."""
    from tritonscope.errors import UsageError

    query = query.strip()
    if not query:
        raise UsageError("--find needs an op name or some text.", hint="e.g. --find ttg.local_alloc or --find '#mma'.")
    if len(query) > 2 and query.startswith("/") and query.endswith("/"):
        try:
            re.compile(query[1:-1])
        except re.error as e:
            raise UsageError(f"Bad regular expression {query}: {e}.") from e
    return query


def line_history(trace: PassTrace, line: int) -> list[LineEvent]:
    """The steps that changed what Python line `line` became (ops by kind)."""
    events = []
    first = True
    for step in trace.steps:
        before = trace.summary_of(step.before)
        after = trace.summary_of(step.after)
        if before is None:
            continue
        ops_b = before.line_ops.get(line, Counter())
        if first:
            first = False
            if ops_b:
                events.append(LineEvent(0, "(first dump)", step.stage, dict(sorted(ops_b.items())),
                                        dict(sorted(ops_b.items())), {}))
        if after is None or not step.changed:
            continue  # a pass that only moved locations is not a change to report
        ops_a = after.line_ops.get(line, Counter())
        if ops_a != ops_b:
            events.append(LineEvent(step.index, step.name, step.stage, dict(sorted(ops_a.items())),
                                    dict(sorted((ops_a - ops_b).items())), dict(sorted((ops_b - ops_a).items()))))
    return events


def numbered_lines(text: str) -> list[tuple[int, str]]:
    """(line number in `text`, line) for a dump's lines less locations, #loc definitions and blank lines."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("#loc") and _LOC_DEF_RE.match(line):
            continue
        if "loc(" in line:
            line = _LOC_RE.sub("", line).rstrip()
        if line.strip():
            out.append((number, line))
    return out


def normalized_text(text: str) -> list[str]:
    """A dump's lines less locations and #loc definitions (what --pass diffs)."""
    return [line for _, line in numbered_lines(text)]


def step_diff(trace: PassTrace, step: Step, *, context: int = 3) -> list[str]:
    """Unified diff lines of one step's before and after (locations removed)."""
    import difflib

    if step.after is None:
        return []
    a = normalized_text(trace.text(step.before))
    b = normalized_text(trace.text(step.after))
    return list(difflib.unified_diff(a, b, f"before {step.name}", f"after {step.name}", n=context, lineterm=""))


@dataclass(frozen=True)
class DiffBlock:
    """A run of lines the same on both sides, or replaced, removed or added (difflib's opcodes).

    Lines are (number, text): the number counts the loc-free lines, as the
    unified diff's `@@` headers do.
    """

    tag: str                                  # "equal" | "replace" | "delete" | "insert"
    before: tuple[tuple[int, str], ...]
    after: tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class Hunk:
    header: str                               # "@@ -42,8 +43,12 @@", as the unified diff writes it
    blocks: tuple[DiffBlock, ...]


@dataclass
class PassDiff:
    """One step's before and after, in hunks, with the notes the stage views would put on its lines.

    `before_notes` / `after_notes`: loc-free line number -> model.Note, from
    the MLIR dialect's annotator (encodings, ops) and the remarks this pass
    printed (on the ops with the remark's location).  Both the side-by-side
    and the unified view are drawn from this (render/passes_view.py).
    """

    step: int
    name: str
    stage: str
    hunks: list[Hunk]
    before_notes: dict[int, list[Any]] = field(default_factory=dict)
    after_notes: dict[int, list[Any]] = field(default_factory=dict)


def _unified_range(start: int, stop: int) -> str:
    # as difflib.unified_diff writes a range: "42,8", "43" (one line), "41,0" (none)
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start if not length else start + 1},{length}"


def pass_diff(trace: PassTrace, step: Step, *, context: int = 3, notes: bool = True) -> PassDiff:
    """One step's before/after as hunks (the same hunks as step_diff) with the lines' notes."""
    import difflib

    out = PassDiff(step.index, step.name, step.stage, [])
    if step.after is None:
        return out
    before_text, after_text = trace.text(step.before), trace.text(step.after)
    a, b = numbered_lines(before_text), numbered_lines(after_text)
    matcher = difflib.SequenceMatcher(None, [t for _, t in a], [t for _, t in b])
    for group in matcher.get_grouped_opcodes(context):
        header = (f"@@ -{_unified_range(group[0][1], group[-1][2])} "
                  f"+{_unified_range(group[0][3], group[-1][4])} @@")
        blocks = tuple(DiffBlock(tag, tuple((i + 1, a[i][1]) for i in range(i1, i2)),
                                 tuple((j + 1, b[j][1]) for j in range(j1, j2)))
                       for tag, i1, i2, j1, j2 in group)
        out.hunks.append(Hunk(header, blocks))
    if notes and out.hunks:
        mine = [r for r in trace.remarks if r.step == step.index]
        out.before_notes = _line_notes(before_text, a, step.stage, trace.file, mine)
        out.after_notes = _line_notes(after_text, b, step.stage, trace.file, mine)
    return out


def _line_notes(text: str, numbered: list[tuple[int, str]], stage: str, file: str,
                remarks: list[Remark]) -> dict[int, list[Any]]:
    """{loc-free line number: notes}: the stage views' annotations of one dumped module, and `remarks`."""
    from tritonscope.dialects import annotate_stage, parse_stage
    from tritonscope.remarks import remark_notes

    # every dump is MLIR; the LLVM stage's passes work on MLIR's llvm dialect until translation
    key = "ttir" if stage == "ttir" else "ttgir"
    parsed = parse_stage(key, text, file=file)
    found = annotate_stage(parsed)
    if remarks:
        found += remark_notes({key: parsed}, remarks, file)
    index = {raw: n for n, (raw, _) in enumerate(numbered, 1)}
    out: dict[int, list[Any]] = {}
    for note in found:
        n = index.get(note.line)
        if n is not None:
            out.setdefault(n, []).append(note)
    return out


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
    import threading

    started = time.perf_counter()
    workdir_obj = tempfile.TemporaryDirectory(prefix="tritonscope-passes-")
    workdir = Path(workdir_obj.name)
    try:
        proc = _start_child(request, default_arch, workdir)
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
        except subprocess.TimeoutExpired as e:
            proc.kill()
            proc.wait()
            raise CompileError(f"The pass-by-pass compile took over {timeout:.0f} s and was stopped.",
                               hint="Try a smaller config.") from e
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        finally:
            thread.join()
        result = _child_result(workdir, proc)
        if "error" in parsed:
            raise parsed["error"]
        trace = _trace_of(workdir, result, *parsed["value"])
        if attribute:
            attribute_remarks(trace, request, default_arch, workdir / "remarks", timeout=timeout)
    except BaseException:
        workdir_obj.cleanup()
        raise
    trace._workdir = workdir_obj
    trace.seconds = time.perf_counter() - started
    return trace


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
                m = _POS_RE.search(raw.decode(errors="replace"))
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


def _trace_of(workdir: Path, result: dict, steps, summaries, remarks) -> PassTrace:
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
    if not steps:
        raise CompileError("Triton wrote no pass dumps for this compile.",
                           hint="This Triton may not support MLIR_ENABLE_DUMP/MLIR_DUMP_PATH; rerun with --debug.")
    artifact = None
    if isinstance(result.get("artifact"), dict):
        from tritonscope.artifact_io import artifact_from_dict

        artifact = artifact_from_dict(result["artifact"], [r.to_dict() for r in remarks])
    return PassTrace(
        kernel=result.get("kernel", "?"), file=kernel_file, arch=result.get("arch", "?"),
        label=result.get("label", ""), triton_version=result.get("triton_version", "?"),
        steps=steps, summaries=summaries, remarks=remarks,
        compile_seconds=result.get("compile_seconds"), warnings=list(result.get("warnings", [])),
        artifact=artifact,
    )


def _start_child(request, default_arch: str, workdir: Path, *, attribute: list[str] | None = None):
    """The compiling child; with `attribute`, the remarks run (see attribute_remarks)."""
    payload = {"request": _request_dict(request), "default_arch": default_arch, "workdir": str(workdir)}
    if attribute:
        payload["attribute"] = list(attribute)
    env = dict(os.environ)
    for key in ("MLIR_ENABLE_DUMP", "MLIR_DUMP_PATH", "LLVM_IR_ENABLE_DUMP", "TRITON_KERNEL_OVERRIDE",
                "TRITON_KERNEL_DUMP", "TRITON_DUMP_DIR"):
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
        "MLIR_ENABLE_DIAGNOSTICS": "remarks,warnings",
        "TRITON_CACHE_DIR": str(workdir / "cache"),
        "TRITON_ALWAYS_COMPILE": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parent.parent),
                                                    env.get("PYTHONPATH", "")])),
    })
    (workdir / "payload.json").write_text(json.dumps(payload))
    with open(workdir / "stderr.txt", "wb") as err:
        return subprocess.Popen(
            [sys.executable, "-c", "from tritonscope.passes_child import main; main()",
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
        from tritonscope.child import _error_from

        raise _error_from(result["error"])  # the child's own error class comes back
    return result["result"]


def _request_dict(request) -> dict:
    if isinstance(request, dict):
        return dict(request)
    return asdict(request) if hasattr(request, "__dataclass_fields__") else dict(vars(request))


# --------------------------------------------------------------------------
# diff --passes: the first pass where two configs part ways
# --------------------------------------------------------------------------
#
# Two configs of one kernel (BLOCK 16 vs 64, 4 vs 8 warps) give IR that
# differs everywhere in numbers: shapes, constants, layout parameters, how
# many copies of a per-element sequence the lowering writes.  Those
# differences are the config itself.  What the user wants is the first pass
# that *does something different* to the two kernels.  The rule:
#
# 1. Each dump is read as a skeleton: locations dropped, SSA names -> `%`,
#    digits in symbol names -> `N` (Triton mangles constexprs into the
#    names of the functions it inlines: `zeros__Tc16_c16T_cfp32`),
#    layout aliases -> their kind (`#blocked3` -> `#blocked`), layout
#    definitions dropped (their parameters follow from the shapes), every
#    number (shapes, constants, attributes) -> `N`, the allocation shape of
#    a shared-memory view dropped (a tile cut from a bigger buffer is the
#    tile size speaking), and runs of one repeated item (`f32, f32, f32`)
#    -> `f32, ...`.
# 2. A step's effect is the set of distinct skeleton lines it adds and the
#    set it removes (sets, not counts: 4 more identical convert_layouts is
#    the tile size speaking, a convert_layout on one side only is not).
# 3. Steps are paired by pass name in order (difflib over the name lists,
#    so a pass only one side runs is seen).  The first pair whose effects
#    differ, or the first pass one side runs alone that changes its IR, is
#    where the configs diverge.  Unchanged steps on both sides are skipped
#    without reading any text.
#
# Whether the first dumps already differ (a constexpr that switches code on
# or off in the source) is reported too, as `from_start`.

# %offs_m_9   %22:3   %arg9   %c16_i32   %0#1
_SSA_RE = re.compile(r"%[\w.$-]+(?::\d+)?(?:#\d+)?")
# @triton.language.standard.zeros__Tc16_c16T_cfp32   (3.9: Triton mangles constexprs into names)
# @"triton.language.standard.zeros____(0, 0)cconstexpr_16__(1,)cconstexpr_fp32_"   (3.6, quoted)
_SYMBOL_RE = re.compile(r'@"[^"]*"|@[\w.$-]+')
# #blocked3   #mma1   #shared2   (not #loc, which is gone already)
_ALIAS_USE_RE = re.compile(r"#([a-z_]+?)\d+\b")
# tensor<16x16xf16>   memdesc<3x16x16xf16, #shared, #smem, mutable, 64x64>   ->  the dims
_DIM_RE = re.compile(r"(?<![\w.])\d+(?:x\d+)*x(?=[a-z!])|(?<![\w.])\d+(?:x\d+)+(?![\w.])")
# 16   -1   0.000000e+00   2.5   (not inside a name such as f16, i32, %c1)
_NUM_RE = re.compile(r"(?<![\w.#%^$])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\w.])")
# !ttg.memdesc<NxNxf16, #shared, #smem, mutable, NxN>: the shape of the buffer a view is cut from
_ALLOC_SHAPE_RE = re.compile(r", N(?:xN)+>")
# f32, f32, f32   ->  f32, ...        %, %, %  ->  %, ...
_RUN_RE = re.compile(r"(?<![\w.%])([\w.!<>%]+)(?:, \1(?![\w.]))+")


def skeleton(text: str) -> list[str]:
    """A dump's lines with what a config changes (numbers, names, layout parameters) taken out (rule above)."""
    out = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue  # #loc and layout definitions
        if "loc(" in line:
            line = _LOC_RE.sub("", line)
        line = _SSA_RE.sub("%", line)
        if "@" in line:
            line = _SYMBOL_RE.sub(lambda m: re.sub(r"\d+", "N", m.group(0)), line)
        line = _ALIAS_USE_RE.sub(r"#\1", line)
        line = _DIM_RE.sub(lambda m: re.sub(r"\d+", "N", m.group(0)), line)
        line = _NUM_RE.sub("N", line)
        if "memdesc<" in line:
            line = _ALLOC_SHAPE_RE.sub(">", line)
        line = _RUN_RE.sub(r"\1, ...", line)
        out.append(line.rstrip())
    return out


@dataclass(frozen=True)
class Divergence:
    """Where two pass traces first part ways (see the rule above)."""

    name: str                       # the pass
    stage: str                      # ttir | ttgir | llir
    step_a: int | None              # its step on side A (None: only B runs it)
    step_b: int | None
    only_a: tuple[str, ...]         # skeleton lines A's step adds (+) or removes (-) and B's does not
    only_b: tuple[str, ...]
    ops_a: dict[str, int] = field(default_factory=dict)   # A's op-count changes at that step (+/-)
    ops_b: dict[str, int] = field(default_factory=dict)
    from_start: bool = False        # the first dumps already differ beyond the config
    compared: int = 0               # step pairs compared before it
    # Triton's remarks from that stage's passes that only one side got (remarks are tied to a stage, not a pass)
    remarks_a: tuple[str, ...] = ()
    remarks_b: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        d = asdict(self)
        for key in ("only_a", "only_b", "remarks_a", "remarks_b"):
            d[key] = list(d[key])
        return d


def _op_deltas(step: Step | None) -> dict[str, int]:
    if step is None:
        return {}
    out = {k: v for k, v in step.ops_added.items()}
    for k, v in step.ops_removed.items():
        out[k] = out.get(k, 0) - v
    return dict(sorted(out.items()))


def first_divergence(a: PassTrace, b: PassTrace, *, shown: int = 8) -> tuple[Divergence | None, bool]:
    """(where A and B first diverge, whether their first dumps already differ); (None, ...) if they never do.

    Both traces must still be open (their dump texts are read).
    """
    import difflib

    cache: dict[tuple[int, TextRef], list[str]] = {}

    def skel(trace: PassTrace, ref: TextRef) -> list[str]:
        key = (id(trace), ref)
        if key not in cache:
            cache[key] = skeleton(trace.text(ref))
        return cache[key]

    def effect(trace: PassTrace, step: Step) -> tuple[frozenset, frozenset]:
        if not step.changed or step.after is None:
            return frozenset(), frozenset()
        before, after = set(skel(trace, step.before)), set(skel(trace, step.after))
        return frozenset(after - before), frozenset(before - after)

    def lines(mine, theirs) -> tuple[str, ...]:
        added = sorted(mine[0] - theirs[0])
        removed = sorted(mine[1] - theirs[1])
        return tuple([f"+ {x.strip()}" for x in added][:shown] + [f"- {x.strip()}" for x in removed][:shown])

    def said(div: Divergence) -> Divergence:
        from dataclasses import replace

        ra = {f"{r.severity}: {r.said}" for r in a.remarks if r.stage == div.stage and r.severity != "note"}
        rb = {f"{r.severity}: {r.said}" for r in b.remarks if r.stage == div.stage and r.severity != "note"}
        return replace(div, remarks_a=tuple(sorted(ra - rb)), remarks_b=tuple(sorted(rb - ra)))

    from_start = bool(a.steps and b.steps) and skel(a, a.steps[0].before) != skel(b, b.steps[0].before)
    names_a = [(s.stage, s.name) for s in a.steps]
    names_b = [(s.stage, s.name) for s in b.steps]
    compared = 0
    matcher = difflib.SequenceMatcher(None, names_a, names_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for sa, sb in zip(a.steps[i1:i2], b.steps[j1:j2]):
                if not sa.changed and not sb.changed:
                    continue
                compared += 1
                ea, eb = effect(a, sa), effect(b, sb)
                if ea != eb:
                    return said(Divergence(sa.name, sa.stage, sa.index, sb.index, lines(ea, eb), lines(eb, ea),
                                           _op_deltas(sa), _op_deltas(sb), from_start, compared)), from_start
            continue
        # a run of passes only one side runs (or runs in another order): the
        # first of them that changes the IR is a divergence
        alone = [(s, None) for s in a.steps[i1:i2] if s.changed] + [(None, s) for s in b.steps[j1:j2] if s.changed]
        if alone:
            sa, sb = min(alone, key=lambda p: (p[0] or p[1]).index)
            step = sa or sb
            trace = a if sa else b
            e = effect(trace, step)
            only = lines(e, (frozenset(), frozenset()))
            return said(Divergence(step.name, step.stage, sa.index if sa else None, sb.index if sb else None,
                                   only if sa else (), only if sb else (), _op_deltas(sa), _op_deltas(sb),
                                   from_start, compared)), from_start
    return None, from_start


def trace_both(request_a, request_b, default_arch: str) -> tuple[PassTrace, PassTrace]:
    """trace_passes for two requests at once (two child processes; the parsing overlaps too).

    Remarks keep their stage only (no second compile to tie them to passes):
    the divergence compares a stage's remarks.
    """
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="tritonscope-passes") as pool:
        fa = pool.submit(trace_passes, request_a, default_arch, attribute=False)
        fb = pool.submit(trace_passes, request_b, default_arch, attribute=False)
        try:
            ta = fa.result()
        except BaseException:
            with contextlib.suppress(BaseException):
                fb.result().close()
            raise
        try:
            tb = fb.result()
        except BaseException:
            ta.close()
            raise
    return ta, tb
