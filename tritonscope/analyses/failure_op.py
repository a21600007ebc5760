"""When Triton fails: the op the compile failed on, its Python line, and the IR around it (analyses/failure.py).

The op is the one Triton's error points at, else one it names (an op, or a symbol such as __nv_rsqrtf), else
the op of a C++ assertion's lowering (MFMA.cpp: tt.dot) or rewrite pattern (ConvertSCFIfOp: scf.if), else the
op the failing pass works on (PASS_OPS), each said as such.
"""

from __future__ import annotations

import linecache
import os
import re
from dataclasses import dataclass
from typing import Any

from tritonscope.analyses.failure_model import EXCERPT_LINES, FailingOp, Failure

# Passes and the ops they work on: the op a pass most likely failed on when Triton's error names none.
# (a substring of the pass's name, the op kinds, a word its line must hold, what to call it)
PASS_OPS: tuple[tuple[str, tuple[str, ...], str, str], ...] = (
    ("WarpSpecializ", ("scf.for",), "tt.warp_specialize", "the loop it warp-specializes"),
    # NVWSInsertAref, NVWSLowerAref, ...: the passes TritonGPUAutomaticWarpSpecialization runs inside it
    ("NVWS", ("scf.for",), "tt.warp_specialize", "the loop being warp-specialized (this pass is one step of "
                                                 "TritonGPUAutomaticWarpSpecialization)"),
    ("BufferOps", ("tt.load", "tt.store", "tt.atomic_rmw", "tt.atomic_cas"), "", "a global load or store it "
                                                                                  "turns into a buffer op"),
    ("CanonicalizePointers", ("tt.addptr", "tt.load", "tt.store"), "", "the pointer arithmetic it rewrites"),
    ("Pipeline", ("scf.for",), "", "the loop it pipelines"),
    ("ScheduleLoops", ("scf.for",), "", "the loop it schedules"),
    ("AssignLatencies", ("scf.for",), "", "the loop it schedules"),
    ("FuseNestedLoops", ("scf.for",), "", "the loops it fuses"),
    ("AccelerateMatmul", ("tt.dot", "tt.dot_scaled"), "", "the dot it maps to MMA instructions"),
    ("OptimizeDotOperands", ("tt.dot", "tt.dot_scaled"), "", "the dot whose operands it places"),
    ("MMALowering", ("ttng.warp_group_dot", "ttng.tc_gen5_mma"), "", "the MMA it lowers"),
    ("TMALowering", ("tt.descriptor_load", "tt.descriptor_store"), "", "the descriptor access it lowers"),
)

# A C++ source file of a lowering (in an assertion) and the ops it lowers.
CPP_OPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("DotOp", ("tt.dot", "ttng.warp_group_dot", "tt.dot_scaled")),
    ("MFMA", ("tt.dot", "tt.dot_scaled")),
    ("WMMA", ("tt.dot",)),
    ("MMAv", ("tt.dot", "ttng.warp_group_dot")),
    ("LoadStoreOp", ("tt.load", "tt.store", "tt.atomic_rmw", "tt.atomic_cas")),
    ("ReduceOp", ("tt.reduce",)),
    ("ScanOp", ("tt.scan",)),
    ("ConvertLayoutOp", ("ttg.convert_layout",)),
    ("HistogramOp", ("tt.histogram",)),
    ("GatherOp", ("tt.gather",)),
)

# Words of Triton's error (a diagnostic's message with its C++ file) that say which kind of op it failed on, when
# it names none: (the words, the op kinds, a word the op holding them must carry, what to call the op).
MESSAGE_OPS: tuple[tuple[re.Pattern, tuple[str, ...], str, str], ...] = (
    # 3.9: LLVM ERROR: unsupported load type for producer commit; 3.6: WSLowerToken.cpp ... processProducerCommitOp
    (re.compile(r"unsupported load type for producer commit|processProducerCommitOp"),
     ("tt.load",), "tt.warp_specialize",
     "a load through pointers in the warp-specialized loop: the load type Triton's error is about (its producer "
     "commit signals only TMA loads); Triton names no op"),
)

# ... failed. (in mlir::ConvertSCFIfOp::matchAndRewrite_): the rewrite pattern an assertion failed in
_PATTERN_FUNCTION = re.compile(r"\(in (?:[\w:]+::)?(\w+Op)::matchAndRewrite\w*\)")
# see current operation: %12 = "tt.dot"(%a, %b, %c) ...
_CURRENT_OP = re.compile(r"see current operation:\s*(.*)")
# 'tt.dot' op ...
_OP_IN_MESSAGE = re.compile(r"'([a-z_]\w*\.[\w.]+)' op\b")
# a symbol Triton's text names: __nv_rsqrtf
_SYMBOL = re.compile(r"\b(__[a-z]+_\w+)\b")

# --------------------------------------------------------------------------
# The op, and the IR around it
# --------------------------------------------------------------------------

def _parsed(ir: str, kernel_file: str):
    from tritonscope.language.dialects.mlir import parse

    return parse(ir, file=kernel_file, key="ttgir").lines


@dataclass(frozen=True)
class _Op:
    """One op of a module: its name, its first line's text, its location and its attributes' text (an op with
    a region prints both after the region: `} {tt.warp_specialize} loc(#loc190)`)."""

    name: str
    text: str
    loc: Any
    raw: str
    at: int = -1      # its place among the module's non-empty lines, and the line of its region's end
    end: int = -1


def module_ops(ir: str, kernel_file: str) -> list[_Op]:
    """The ops of a module's text, each with its location resolved (SourceLoc, or None)."""
    from tritonscope.language.mlir_syntax import op_name

    lines = [ln for ln in _parsed(ir, kernel_file) if ln.text.strip()]
    texts = [ln.text for ln in lines]
    out = []
    for i, ln in enumerate(lines):
        name = op_name(ln.text)
        if not name:
            continue
        loc, raw, end = ln.loc, ln.raw, i
        if texts[i].rstrip().endswith("{"):
            _, hi = _region(texts, i)
            if hi != i:
                loc, raw, end = lines[hi].loc or loc, ln.raw + "\n" + lines[hi].raw, hi
        out.append(_Op(name, ln.text.strip(), loc, raw, i, end))
    return out


def find_op(ir: str, f: Failure, error_text: str, stderr: str = "", *,
            legalizing: str | None = None) -> FailingOp | None:
    """The op the compile failed on: where Triton's error points, the op it names, else the op the pass works
    on.  None when the IR holds none of them.  `legalizing`: the op kind a dialect conversion was legalizing
    when Triton's assertion failed (from LLVM's debug log: see legalizing_op)."""
    if not ir:
        return None
    kernel = os.path.realpath(f.file) if f.file else ""
    ops = [op for op in module_ops(ir, f.file)
           if op.loc is not None and (not kernel or os.path.realpath(op.loc.file) == kernel)]

    def make(cands: list[_Op], how: str) -> FailingOp | None:
        if not cands:
            return None
        first = cands[0]
        loc = first.loc
        src = linecache.getline(loc.file, loc.line).strip()
        return FailingOp(first.name, first.text, loc.file, loc.line, loc.col, src, how, len(cands),
                         sorted({c.loc.line for c in cands[1:]} - {loc.line}))

    # 1. an error at an op's location (not the kernel's def line, where module-level errors point)
    def_line = next((op.loc.line for op in ops if op.name == "tt.func"), 0)
    for d in f.diagnostics:
        if d.severity == "error" and d.line and d.line != def_line and \
                (not kernel or os.path.realpath(d.file) == kernel):
            named = _OP_IN_MESSAGE.search(d.message)
            found = make([op for op in ops if op.loc.line == d.line and (not named or op.name == named.group(1))],
                         "where Triton's error points")
            if found:
                return found
    # 2. an op an error names ('tt.dot' op ...), or the one MLIR printed with it (see current operation: ...)
    from tritonscope.language.mlir_syntax import op_name

    for d in f.diagnostics:
        named = _OP_IN_MESSAGE.search(d.message)
        current = _CURRENT_OP.search(d.message)
        kind = named.group(1) if named else (op_name(current.group(1)) if current else None)
        if kind:
            found = make([op for op in ops if op.name == kind], "the op Triton's error names")
            if found:
                return found
    # 3. a symbol Triton's error names (__nv_rsqrtf): the op that uses it
    for sym in dict.fromkeys(_SYMBOL.findall(error_text)):
        users = [op for op in ops if f"@{sym}" in op.text or f'"{sym}"' in op.text]
        # the calls, not the declaration they call (llvm.func @__nv_rsqrtf(f32) -> f32)
        found = make([op for op in users if not op.name.endswith(".func")] or users,
                     f"the op that calls {sym}, which Triton's error names")
        if found:
            return found
    # 3b. words of Triton's error that say which kind of op (MESSAGE_OPS), inside the op that carries the mark
    said = "\n".join(f"{d.file} {d.message}" for d in f.diagnostics)
    for words, kinds, mark, what in MESSAGE_OPS:
        if words.search(said):
            outer = [op for op in ops if mark in op.raw and op.end > op.at]
            found = make([op for op in ops if op.name in kinds and "!tt.ptr" in op.text
                          and any(o.at < op.at < o.end for o in outer)], what)
            if found:
                return found
    # 4. a C++ assertion in a lowering named after its op (DotOpToLLVM/MFMA.cpp): that op
    for d in f.diagnostics:
        if d.severity == "assertion":
            for word, kinds in CPP_OPS:
                if word in d.file:
                    found = make([op for op in ops if op.name in kinds],
                                 f"the op {os.path.basename(d.file)} lowers, where Triton's assertion failed; "
                                 "Triton names no op")
                    if found:
                        return found
    # 4b. a C++ assertion in a rewrite pattern named after its op (ConvertSCFIfOp::matchAndRewrite: scf.if)
    for d in f.diagnostics:
        pattern = _PATTERN_FUNCTION.search(d.message) if d.severity == "assertion" else None
        if pattern:
            cands = [op for op in ops if op.name in _pattern_ops(pattern.group(1), {o.name for o in ops})]
            if "ptr" in d.message.lower():   # an assertion about pointers: the ops of that kind that carry one
                cands = [op for op in cands if "!tt.ptr" in op.text] or cands
            found = make(cands, f"the op {pattern.group(1)} rewrites, where Triton's assertion failed; "
                                "Triton names no op")
            if found:
                return found
    # 4c. the op a dialect conversion was legalizing when an assertion ended it (its debug log says which kind)
    if legalizing:
        found = make([op for op in ops if op.name == legalizing],
                     "the op the conversion was legalizing when Triton's assertion failed (LLVM's debug log of a "
                     "second run); Triton names no op")
        if found:
            return found
    # 5. the op the pass works on
    if f.in_pass or f.timed_out:
        for word, kinds, mark, what in PASS_OPS:
            if word in f.pass_name:
                found = make([op for op in ops if op.name in kinds and (not mark or mark in op.raw)],
                             f"{what}: Triton names no op, and this is the op the pass works on")
                if found:
                    return found
    return None


def _pattern_ops(pattern: str, names: set[str]) -> set[str]:
    """The op names of `names` a rewrite pattern's class is named after: ConvertSCFIfOp -> scf.if,
    ConvertSCFForOp -> scf.for, ConvertAddPtrOp -> tt.addptr (MLIR's patterns are named <verb><Dialect><Op>Op)."""
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z][a-z0-9]*", pattern[:-2])   # ConvertSCFIf -> Convert, SCF, If
    out = set()
    for start in range(1, len(words)):          # words[0] is the verb (Convert, Lower, Fold, ...)
        dialect = words[start].lower() if start + 1 < len(words) else ""
        for rest, want in ((words[start + 1:] if dialect else [], dialect), (words[start:], "")):
            if not rest:
                continue
            snake, joined = "_".join(w.lower() for w in rest), "".join(w.lower() for w in rest)
            for name in names:
                d, _, op = name.partition(".")
                if op in (snake, joined) and (not want or d == want):
                    out.add(name)
        if out:
            return out
    return out


def excerpt(ir: str, op: FailingOp | None, *, kernel_file: str = "", limit: int = EXCERPT_LINES) -> str:
    """The IR around the failing op: its region (the op's own when it has one, else the one that holds it),
    at most `limit` lines around the op; the op's line is marked '> '.  Without an op, the kernel's function
    up to `limit` lines.  Locations are left out (the Python line is said above it)."""
    if not ir:
        return ""
    lines = [ln.text for ln in _parsed(ir, kernel_file)]
    lines = [t for t in lines if t.strip() and not t.startswith("#")]   # no #loc, #di_... or layout aliases
    at = None
    if op is not None:
        at = next((i for i, t in enumerate(lines) if t.strip() == op.text), None)
    if at is None:
        start = next((i for i, t in enumerate(lines) if t.lstrip().startswith(("tt.func", "llvm.func"))), 0)
        picked: list[int | str] = list(range(start, min(len(lines), start + limit)))
        if len(lines) > start + limit:
            picked.append(f"... ({len(lines) - start - limit} more lines)")
    else:
        lo, hi = _region(lines, at)
        if hi - lo + 1 <= limit:
            picked = list(range(lo, hi + 1))
        else:  # the region's first and last lines, and a window around the op between them
            a = max(lo + 1, at - limit // 2)
            b = min(hi - 1, a + limit - 1)
            a = max(lo + 1, b - limit + 1)
            picked = [lo] + ([f"... ({a - lo - 1} lines)"] if a > lo + 1 else []) + list(range(a, b + 1)) \
                + ([f"... ({hi - 1 - b} lines)"] if b < hi - 1 else []) + [hi]
    cut = min((_indent(lines[i]) for i in picked if isinstance(i, int)), default=0)
    return "\n".join(("> " if i == at else "  ") + lines[i][cut:] if isinstance(i, int) else "  " + i
                     for i in picked)


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _region(lines: list[str], at: int) -> tuple[int, int]:
    """(first, last) line of the op's region: the op and its body when it opens one, else its parent's."""
    def close_of(i: int) -> int:
        ind = _indent(lines[i])
        for j in range(i + 1, len(lines)):
            text = lines[j].strip()   # `} else {` (scf.if), `} do {` (scf.while): the same op goes on
            if _indent(lines[j]) <= ind and text.startswith("}") and not text.endswith("{"):
                return j
        return len(lines) - 1

    if lines[at].rstrip().endswith("{"):
        return at, close_of(at)
    ind = _indent(lines[at])
    for i in range(at - 1, -1, -1):
        if _indent(lines[i]) < ind and lines[i].rstrip().endswith("{"):
            return i, close_of(i)
    return 0, len(lines) - 1


_LEGALIZING = re.compile(r"^\[dialect-conversion:\d+\] Legalizing operation : '([\w.]+)'")


def legalizing_op(log: str) -> str | None:
    """The kind of the last top-level op a dialect conversion began to legalize in LLVM's debug log
    (`[dialect-conversion:1] Legalizing operation : 'tt.dot' (0x...) {`), before the first assertion; ops it
    creates while converting one are logged indented and are not it.  None when the log has none (a Triton
    built without LLVM's debug output)."""
    cut = log.find("Assertion `")
    found = None
    for line in (log if cut < 0 else log[:cut]).splitlines():
        m = _LEGALIZING.match(line)
        if m:
            found = m.group(1)
    return found
