"""TTIR / TTGIR (MLIR) -> lines with source locations.

MLIR writes locations as trailing `loc(...)` attributes, mostly through
aliases defined at the end of the module:

    %a = tt.load %p : tensor<16x16x!tt.ptr<f16>> loc(#loc12)
    #loc12 = loc("a"(#loc3))                      named: a variable name around a location
    #loc3 = loc("./matmul.py":17:21)              a file location
    #loc40 = loc(callsite(#loc5 at #loc59))       inlined code: callee at caller
    #loc41 = loc(fused[#loc7, #loc8])             several locations merged

The aliases are collected first, then each op's location is resolved by
following the chain (with a visited set: a malformed cycle must not hang).
The displayed text has every `loc(...)` removed and the alias lines dropped.
"""

from __future__ import annotations

import os
import re

from tritonscope.model import Line, ParsedStage, SourceLoc

# #loc12 = loc("a"(#loc3))
_ALIAS_DEF = re.compile(r"^\s*(#loc\d*)\s*=\s*loc\((.*)\)\s*$")
# "./matmul.py":17:21   (3.9 may also write a range: "f.py":17:21 to 17:30)
_FILE_LOC = re.compile(r'^"((?:[^"\\]|\\.)*)":(\d+):(\d+)')
# "a"(#loc3)   or   "a"("./f.py":1:2)
_NAMED = re.compile(r'^"((?:[^"\\]|\\.)*)"\((.*)\)$', re.S)
# callsite(#loc5 at #loc59)
_CALLSITE = re.compile(r"^callsite\((.*) at (.*)\)$", re.S)
# fused[#loc7, #loc8]   or   fused<"tag">[#loc7, #loc8]
_FUSED = re.compile(r"^fused(?:<[^>]*>)?\[(.*)\]$", re.S)
# #loc12
_ALIAS_REF = re.compile(r"^#loc\d*$")


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Split on `sep` outside parentheses, brackets and strings."""
    out, depth, cur, in_str = [], 0, [], False
    i = 0
    while i < len(text):
        ch = text[i]
        if in_str:
            cur.append(ch)
            if ch == "\\" and i + 1 < len(text):
                cur.append(text[i + 1])
                i += 1
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
            cur.append(ch)
        elif ch in "([{<":
            depth += 1
            cur.append(ch)
        elif ch in ")]}>":
            depth -= 1
            cur.append(ch)
        elif ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    if cur:
        out.append("".join(cur).strip())
    return out


def strip_locs(line: str) -> tuple[str, list[str]]:
    """Remove every ` loc(...)` (balanced) from a line; return the text and the loc bodies."""
    if "loc(" not in line:
        return line, []
    out, bodies, i = [], [], 0
    while True:
        j = line.find("loc(", i)
        if j < 0 or (j > 0 and (line[j - 1].isalnum() or line[j - 1] in "_#.")):
            if j < 0:
                out.append(line[i:])
                break
            out.append(line[i:j + 4])
            i = j + 4
            continue
        # walk to the matching parenthesis, skipping strings
        depth, k, in_str = 0, j + 3, False
        while k < len(line):
            ch = line[k]
            if in_str:
                if ch == "\\":
                    k += 1
                elif ch == '"':
                    in_str = False
            elif ch == '"':
                in_str = True
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        start = j
        while start > i and line[start - 1] == " ":
            start -= 1
        out.append(line[i:start])
        bodies.append(line[j + 4:k])
        i = k + 1
    return "".join(out).rstrip(), bodies


class _Resolver:
    """Resolves location expressions, preferring frames in the kernel's own file."""

    def __init__(self, aliases: dict[str, str], kernel_file: str):
        self.aliases = aliases
        self.kernel_base = os.path.basename(kernel_file) if kernel_file else ""
        self.cache: dict[str, SourceLoc | None] = {}

    def frames(self, expr: str, visited: frozenset[str] = frozenset()) -> list[SourceLoc]:
        """Every file location an expression stands for, innermost (callee) first."""
        expr = expr.strip()
        if _ALIAS_REF.match(expr):
            if expr in visited or expr not in self.aliases:
                return []
            return self.frames(self.aliases[expr], visited | {expr})
        m = _FILE_LOC.match(expr)
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
            for part in _split_top(m.group(1)):
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


def parse(key: str, text: str, *, file: str = "") -> ParsedStage:
    raw_lines = text.splitlines()
    aliases: dict[str, str] = {}
    for raw in raw_lines:
        if raw.startswith("#loc"):
            m = _ALIAS_DEF.match(raw)
            if m:
                aliases[m.group(1)] = m.group(2)
    resolver = _Resolver(aliases, file)
    lines = []
    for number, raw in enumerate(raw_lines, 1):
        if raw.startswith("#loc") and _ALIAS_DEF.match(raw):
            continue
        shown, bodies = strip_locs(raw)
        # The op's own location is the last loc(...) on the line; earlier ones
        # belong to function arguments.
        loc = resolver.resolve(bodies[-1]) if bodies else None
        lines.append(Line(number, shown, raw, loc))
    return ParsedStage(key, tuple(lines))
