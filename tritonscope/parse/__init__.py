"""One parser per dialect: raw stage text -> ParsedStage (lines with source locations).

Every parser returns the same shape: the lines to show (location noise such
as `loc(...)`, `!dbg`, `.loc` and `//## File` removed) with their 1-based
line number in the raw text, the raw line, and the Python location when the
compiler recorded one.  The raw stage text itself stays in the Artifact.
"""

from __future__ import annotations

from tritonscope.model import Line, ParsedStage, SourceLoc
from tritonscope.parse import llvm, mlir, ptx, sass

# stage key -> parser(key, text, file=)
PARSERS = {
    "ttir": mlir.parse,
    "ttgir": mlir.parse,
    "llir": llvm.parse,
    "ptx": ptx.parse,
    "sass": sass.parse,
}


def parse_python(text: str, *, first_line: int = 1, file: str = "") -> ParsedStage:
    return ParsedStage("python", tuple(
        Line(i + 1, t, t, SourceLoc(file, first_line + i)) for i, t in enumerate(text.splitlines())))


def parse_stage(key: str, text: str, *, first_line: int = 1, file: str = "") -> ParsedStage:
    if key == "python":
        return parse_python(text, first_line=first_line, file=file)
    parser = PARSERS.get(key)
    if parser is None:  # a stage we have no parser for: show it as is
        return ParsedStage(key, tuple(Line(i + 1, t, t) for i, t in enumerate(text.splitlines())))
    return parser(key, text, file=file)
