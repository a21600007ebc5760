"""Pure functions: ParsedStage -> notes.  Unknown ops get no note, never an error."""

from __future__ import annotations

from tritonscope.model import Note, ParsedStage


def annotate_stage(stage: ParsedStage) -> list[Note]:
    return []
