"""How a tritonscope stage and the same stage from a real run are compared: locations, debug info and file
names stripped (the GPU fidelity tests and the Inductor folder's TTGIR/PTX equality use it)."""

from __future__ import annotations

import re


def _strip_locs(line: str) -> str:
    """Remove every loc(...) (nested parentheses included) from an MLIR line."""
    out, i = [], 0
    while True:
        j = line.find(" loc(", i)
        if j < 0:
            out.append(line[i:])
            return "".join(out)
        out.append(line[i:j])
        depth, k = 0, j + 4
        while k < len(line):
            if line[k] == "(":
                depth += 1
            elif line[k] == ")":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        i = k + 1


def normalize(stage: str, text: str) -> str:
    lines = []
    for line in text.splitlines():
        if stage in ("ttir", "ttgir"):
            if line.startswith("#loc"):
                continue
            line = _strip_locs(line)
        elif stage == "llir":
            if line.startswith("!") or line.startswith("declare void @llvm.dbg"):
                continue
            line = re.sub(r", !dbg !\d+", "", line)
            line = re.sub(r" !dbg !\d+", "", line)
        elif stage == "ptx":
            s = line.strip()
            if s.startswith(".file") or s.startswith(".loc"):
                continue
        lines.append(line.rstrip())
    text = "\n".join(lines)
    if stage == "ptx":  # DWARF sections hold file names and offsets
        text = re.sub(r"\t\.section\t\.debug_\w+\n\t\{.*?\n\t\}\n?", "", text, flags=re.S)
    return text.strip()


def first_difference(a: str, b: str, here: str = "tritonscope", there: str = "real launch") -> str:
    for i, (x, y) in enumerate(zip(a.splitlines(), b.splitlines())):
        if x != y:
            return f"line {i + 1}:\n  {here}: {x}\n  {there}: {y}"
    return f"lengths differ: {len(a.splitlines())} vs {len(b.splitlines())} lines"
