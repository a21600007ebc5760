"""The kernel's Python source: the stage every other stage maps back to.

Its lines are the source itself, so each line's location is its own line in
the kernel's file (`first_line` is where the kernel starts).
"""

from __future__ import annotations

import re

from tritonscope.language.dialects import Dialect, plain_normalize
from tritonscope.core.model import Line, ParsedStage, SourceLoc


# acc = tl.dot(a, b, acc)      c = tl.dot_scaled(a, sa, "e2m1", b, sb, "e2m1")      acc += dot(a, b)
DOT_CALL = re.compile(r"\bdot(?:_scaled)?\s*\(")


def parse(text: str, *, file: str = "", first_line: int = 1) -> ParsedStage:
    return ParsedStage("python", tuple(
        Line(i + 1, t, t, SourceLoc(file, first_line + i)) for i, t in enumerate(text.splitlines())))


def classify(text: str):
    return None  # Python lines are not instructions; the views read the source itself


def annotate(stage: ParsedStage) -> list:
    return []


DIALECTS = (
    Dialect(key="python", title="Python source", ext="py", lexer="python", fence="python", order=0,
            backends=("cuda", "hip"), parse=parse, normalize=plain_normalize, classify=classify,
            annotate=annotate, kind="source"),
)
