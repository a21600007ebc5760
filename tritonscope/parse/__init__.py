"""One parser per dialect: raw stage text -> ParsedStage (lines with source locations)."""

from __future__ import annotations

from tritonscope.model import Line, ParsedStage, SourceLoc


def parse_stage(key: str, text: str, *, first_line: int = 1, file: str = "") -> ParsedStage:
    if key == "python":
        return ParsedStage(key, tuple(
            Line(i + 1, t, t, SourceLoc(file, first_line + i)) for i, t in enumerate(text.splitlines())))
    return ParsedStage(key, tuple(Line(i + 1, t, t) for i, t in enumerate(text.splitlines())))
