"""Pure functions: ParsedStage -> notes.  Unknown ops get no note, never an error.

Each dialect has its own annotator; this table is the only dispatch.
"""

from __future__ import annotations

from tritonscope.annotate import mlir, ptx, sass
from tritonscope.model import Note, ParsedStage

ANNOTATORS = {
    "ttir": mlir.annotate,
    "ttgir": mlir.annotate,
    "ptx": ptx.annotate,
    "sass": sass.annotate,
}


def annotate_stage(stage: ParsedStage) -> list[Note]:
    fn = ANNOTATORS.get(stage.key)
    if fn is None:
        return []
    try:
        return fn(stage)
    except Exception:  # an annotator bug must never break showing the stage
        return []
