"""TTIR and TTGIR (MLIR): parser, noise, diff normalizer, op classifier and op/encoding notes.

Locations.  MLIR writes them as trailing `loc(...)` attributes, mostly through
aliases defined at the end of the module:

    %a = tt.load %p : tensor<16x16x!tt.ptr<f16>> loc(#loc12)
    #loc12 = loc("a"(#loc3))                      named: a variable name around a location
    #loc3 = loc("./matmul.py":17:21)              a file location
    #loc40 = loc(callsite(#loc5 at #loc59))       inlined code: callee at caller
    #loc41 = loc(fused[#loc7, #loc8])             several locations merged

The aliases are collected first, then each op's location is resolved by
following the chain (with a visited set: a malformed cycle must not hang).
The displayed text has every `loc(...)` removed and the alias lines dropped.

Notes (written in _mlir_ops.py).  One note per op tritonscope knows (unknown ops get none, never an
error), with the numbers read from the line itself, and one per layout
encoding (explained by tritonscope's encodings module).  Every note carries
its facts (op, shapes, element types, bytes, encoding fields) so the
walkthrough and the diff never read the English back.
"""

from __future__ import annotations

import functools
import os
import re

from tritonscope.language.dialects import Dialect, Instr, Renamer, ssa_spelling
from tritonscope.language.dialects._mlir_ops import annotate  # the notes (one writer per op family)
from tritonscope.language.mlir_syntax import FILE_POS, FIRST_FILE_LOC, LOC_DEF, LOC_REF, OP, split_top, strip_locs
from tritonscope.core.model import Line, ParsedStage, SourceLoc


# --------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------

# #loc12 = loc("a"(#loc3))  and  "./matmul.py":17:21 : LOC_DEF and FILE_POS (mlir_syntax, shared with passes)
# "a"(#loc3)   or   "a"("./f.py":1:2)
_NAMED = re.compile(r'^"((?:[^"\\]|\\.)*)"\((.*)\)$', re.S)
# callsite(#loc5 at #loc59)
_CALLSITE = re.compile(r"^callsite\((.*) at (.*)\)$", re.S)
# fused[#loc7, #loc8]   or   fused<"tag">[#loc7, #loc8]
_FUSED = re.compile(r"^fused(?:<[^>]*>)?\[(.*)\]$", re.S)


class _Resolver:
    """Resolves location expressions, preferring frames in the kernel's own file."""

    def __init__(self, aliases: dict[str, str], kernel_file: str):
        self.aliases = aliases
        self.kernel_base = os.path.basename(kernel_file) if kernel_file else ""
        self.cache: dict[str, SourceLoc | None] = {}

    def frames(self, expr: str, visited: frozenset[str] = frozenset()) -> list[SourceLoc]:
        """Every file location an expression stands for, innermost (callee) first."""
        expr = expr.strip()
        if LOC_REF.fullmatch(expr):
            if expr in visited or expr not in self.aliases:
                return []
            return self.frames(self.aliases[expr], visited | {expr})
        m = FILE_POS.match(expr)
        if m:
            return [SourceLoc(m.group(1), int(m.group(2)), int(m.group(3)))]
        m = _NAMED.match(expr)
        if m:
            return self.frames(m.group(2), visited)
        m = _CALLSITE.match(expr)
        if m:
            return self.frames(m.group(1), visited) + self.frames(m.group(2), visited)
        m = _FUSED.match(expr)
        if m:
            out: list[SourceLoc] = []
            for part in split_top(m.group(1)):
                out += self.frames(part, visited)
            return out
        return []  # unknown, NameLoc without child, or loc(unknown)

    def resolve(self, expr: str) -> SourceLoc | None:
        if expr in self.cache:
            return self.cache[expr]
        frames = self.frames(expr)
        loc = None
        if frames:
            own = [f for f in frames if self.kernel_base and os.path.basename(f.file) == self.kernel_base]
            # For inlined library code (tl.cdiv), the caller's line in the kernel is what the user wrote.
            loc = own[0] if own else frames[-1]
        self.cache[expr] = loc
        return loc


def parse(text: str, *, file: str = "", first_line: int = 1, key: str = "ttgir") -> ParsedStage:
    raw_lines = text.splitlines()
    aliases: dict[str, str] = {}
    for raw in raw_lines:
        if raw.startswith("#loc"):
            m = LOC_DEF.match(raw)
            if m:
                aliases[m.group(1)] = m.group(2)
    resolver = _Resolver(aliases, file)
    lines = []
    for number, raw in enumerate(raw_lines, 1):
        if raw.startswith("#loc") and LOC_DEF.match(raw):
            continue
        shown, bodies = strip_locs(raw)
        # The op's own location is the last loc(...) on the line; earlier ones
        # belong to function arguments.
        loc = resolver.resolve(bodies[-1]) if bodies else None
        lines.append(Line(number, shown, raw, loc))
    return ParsedStage(key, tuple(lines))


def noise(raw: str) -> str | None:
    """`#loc` alias definitions are debug info; `//` lines are comments."""
    s = raw.lstrip()
    if s.startswith("#loc") and LOC_DEF.match(raw):
        return "debug"
    if s.startswith("//"):
        return "comment"
    return None


# --------------------------------------------------------------------------
# Diff normalizer
# --------------------------------------------------------------------------

# MLIR SSA values: %acc_57 (also in %acc_57#0, %acc_57:7)
_SSA = re.compile(r"%[A-Za-z_$.][\w$.-]*?(?=[^\w$.-]|$)|%\d+")


def _family(token: str) -> str:
    # %offs_m_2 -> %offs_m ; %cst_0 -> %cst ; %c64_i32 -> %c64_i32 ; %arg7 -> %arg ; %12 -> %
    name = token[1:]
    if name.isdigit():
        return "%"
    if re.fullmatch(r"arg\d+", name):
        return "%arg"
    return "%" + re.sub(r"_\d+$", "", name)


def normalize(text: str) -> list[tuple[int, str]]:
    """Locations dropped, SSA names renumbered by first appearance; constants' values kept."""
    ren = Renamer(_family, ssa_spelling)
    out: list[tuple[int, str]] = []
    for i, raw in enumerate(text.splitlines(), 1):
        if raw.startswith("#loc"):
            continue        # #loc12 = loc("/path/file.py":17:13)
        line = strip_locs(raw)[0].rstrip()
        line = _SSA.sub(ren, line)
        if line.strip():
            out.append((i, line))
    return out


# --------------------------------------------------------------------------
# Classifier
# --------------------------------------------------------------------------

# An op line's name: mlir_syntax.OP (the one op-name pattern; explain and passes use it too)
_OP = OP


def classify(text: str) -> Instr | None:
    """The op a line holds ("tt.dot"), or None for attributes, braces and blank lines.

    MLIR ops have no class yet: the instruction mix counts the machine stages.
    """
    m = _OP.match(text)
    return Instr(m.group(1)) if m else None


# --------------------------------------------------------------------------
# Stage-file recognition
# --------------------------------------------------------------------------

# tt.func public @matmul_kernel(      module attributes {...} {      (a Triton module, TTIR or TTGIR)
_SIGNS = re.compile(r"\btt\.func\b|^module\b", re.M)
# "ttg.num-warps" = 4     #ttg.blocked<...>     (3.x before 3.2: triton_gpu.)   (what makes a module TTGIR)
_TTGIR_MARKS = re.compile(r"\bttg\.|#ttg\.|\btriton_gpu\.|#triton_gpu\.")
# tt.func public @matmul_kernel(
_KERNEL_NAME = re.compile(r"tt\.func\s+(?:public\s+)?@([\w$.]+)")


def def_location(text: str) -> tuple[str, int]:
    """(file, line) the module's first `#loc` names: the kernel's def; ('', 0) when there is none."""
    m = FIRST_FILE_LOC.search(text)
    return (m.group(1), int(m.group(2))) if m else ("", 0)


def _dialect(key: str, title: str, order: int, **recognition) -> Dialect:
    return Dialect(key=key, title=title, ext=key, lexer="mlir", fence="mlir", order=order, backends=("cuda", "hip"),
                   parse=functools.partial(parse, key=key), normalize=normalize, classify=classify,
                   annotate=annotate, noise=noise, kind="mlir", signs=_SIGNS, kernel_name=_KERNEL_NAME,
                   def_location=def_location, **recognition)


DIALECTS = (
    # .source: the TTIR before any pass (Triton's cache keeps it for recompiles)
    _dialect("ttir", "Triton IR (TTIR)", 10, suffixes=(".mlir", ".source"), pass_title="TTIR"),
    _dialect("ttgir", "Triton GPU IR (TTGIR)", 20, suffixes=(".mlir",), marks=_TTGIR_MARKS, pass_title="TTGIR"),
)
