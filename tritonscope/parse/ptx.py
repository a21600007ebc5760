"""PTX -> lines with source locations (`.file N "path"` and `.loc N line col`).

A `.loc` applies to every instruction after it until the next `.loc`; a new
function body or a label does not reset it, as in DWARF line tables.
"""

from __future__ import annotations

import re

from tritonscope.model import Line, ParsedStage, SourceLoc

# .file	1 "./matmul.py"     (ptxas also accepts: .file 1 "x.py", 1712345678, 1234)
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"')
# .loc	1 17 21                         // matmul.py:17:21
# .loc	1 17 21, function_name $L__info_string0, inlined_at 1 9 3
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?:.*\binlined_at\s+(\d+)\s+(\d+)\s+(\d+))?")


def parse(key: str, text: str, *, file: str = "") -> ParsedStage:
    raw_lines = text.splitlines()
    files: dict[str, str] = {}
    for raw in raw_lines:
        if ".file" in raw:
            m = _FILE.match(raw)
            if m:
                files[m.group(1)] = m.group(2)
    lines = []
    current: SourceLoc | None = None
    for number, raw in enumerate(raw_lines, 1):
        if ".loc" in raw:
            m = _LOC.match(raw)
            if m:
                fid, line, col = m.group(1), int(m.group(2)), int(m.group(3))
                if m.group(4):  # inlined: the kernel's own line is where it was inlined
                    fid, line, col = m.group(4), int(m.group(5)), int(m.group(6))
                current = SourceLoc(files.get(fid, file), line, col) if line else None
                continue
        stripped = raw.strip()
        is_code = bool(stripped) and not stripped.startswith(("//", ".file", "{", "}", "$", "."))
        lines.append(Line(number, raw, raw, current if is_code else None))
        if stripped.startswith("}") and not raw.startswith("\t"):
            current = None  # end of a function
    return ParsedStage(key, tuple(lines))
