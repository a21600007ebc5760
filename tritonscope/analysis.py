"""Artifact -> Analysis: every stage parsed, annotated and counted.

An Analysis is what every renderer (terminal, HTML, Markdown, JSON) takes,
and what a saved JSON report holds, so `tritonscope show` can re-render it
without Triton.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tritonscope.model import Artifact, Note, ParsedStage


@dataclass
class Analysis:
    artifact: Artifact
    parsed: dict[str, ParsedStage]                  # stage key -> lines with source locations
    notes: list[Note]
    mix: dict[str, dict[str, int]]                  # stage key -> instruction class -> count
    layouts: list[Any] = field(default_factory=list)  # filled on request (see layouts.py)

    def notes_for(self, stage: str) -> dict[int, list[Note]]:
        out: dict[int, list[Note]] = {}
        for note in self.notes:
            if note.stage == stage:
                out.setdefault(note.line, []).append(note)
        return out


def analyze(artifact: Artifact) -> Analysis:
    from tritonscope.annotate import annotate_stage
    from tritonscope.annotate.mix import instruction_mix
    from tritonscope.parse import parse_stage

    parsed = {key: parse_stage(key, text, first_line=artifact.python_first_line, file=artifact.spec.file)
              for key, text in artifact.stages.items()}
    notes: list[Note] = []
    for key, stage in parsed.items():
        notes.extend(annotate_stage(stage))
    mix = {key: instruction_mix(stage) for key, stage in parsed.items()}
    return Analysis(artifact, parsed, notes, mix)
