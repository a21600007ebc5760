"""SASS from `nvdisasm -c -g` -> lines with source locations.

nvdisasm -g writes a marker before each run of instructions from one line:

    	//## File "./matmul.py", line 17
    	//## File "/x/triton/language/standard.py", line 41 inlined at "./matmul.py", line 9
            /*0290*/                   LDGSTS.E [R24], [R4.64], P1 ;

The marker applies to the instructions that follow it, and is dropped from
the displayed text.
"""

from __future__ import annotations

import re

from tritonscope.model import Line, ParsedStage, SourceLoc

# //## File "./matmul.py", line 17  [inlined at "./matmul.py", line 9]
_MARKER = re.compile(r'^\s*//##\s*File\s+"([^"]*)",\s*line\s+(\d+)(?:.*inlined at\s+"([^"]*)",\s*line\s+(\d+))?')
# /*0290*/ ...
_INSTR = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/")


def parse(key: str, text: str, *, file: str = "") -> ParsedStage:
    lines = []
    current: SourceLoc | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        if "//##" in raw:
            m = _MARKER.match(raw)
            if m:
                if m.group(3):
                    current = SourceLoc(m.group(3), int(m.group(4)))
                else:
                    current = SourceLoc(m.group(1), int(m.group(2)))
                continue
        if _INSTR.match(raw):
            lines.append(Line(number, raw, raw, current))
        else:
            if raw.strip().startswith((".section", "//----")):
                current = None
            lines.append(Line(number, raw, raw, None))
    return ParsedStage(key, tuple(lines))
