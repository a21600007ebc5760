"""Artifact -> Analysis: every stage parsed, annotated and counted.

An Analysis is what every renderer (terminal, HTML, Markdown, JSON) takes,
and what a saved JSON report holds, so `tritonscope show` can re-render it
without Triton.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tritonscope.core.model import Artifact, Note, ParsedStage
from tritonscope.analyses.summary import Summary, summarize


@dataclass
class Analysis:
    artifact: Artifact
    parsed: dict[str, ParsedStage]                  # stage key -> lines with source locations
    notes: list[Note]
    mix: dict[str, dict[str, int]]                  # stage key -> instruction class -> count
    layouts: list[Any] = field(default_factory=list)  # filled on request (see layouts.py)
    # Derived facts (fit, occupancy, spills...), computed once; always set after __init__.
    summary: Summary | None = None
    # The pass table (passes.PassTrace.to_dict()), when the user asked for it
    # (`compile --passes`, `passes --save`); plain data, so `show` replays it.
    passes: dict | None = None
    # explain's verdicts (explain.Explanation.to_dict()), when the user asked for them
    # (`compile --explain`, `explain --save`); plain data, so `show` replays them.
    explain: dict | None = None
    # The predicted time (cost.Prediction.to_dict()), when the user asked for it (`compile --predict`
    # or `--gpu NAME`); plain data, so `show` replays it.
    prediction: dict | None = None
    # Answered from tritonscope's result cache: not compiled in this run (the summary says "replayed", with the
    # time the compile took when it ran); not part of a saved report.
    replayed: bool = False

    def __post_init__(self) -> None:
        if self.summary is None:
            self.summary = summarize(self.artifact, self.mix)

    def notes_for(self, stage: str) -> dict[int, list[Note]]:
        out: dict[int, list[Note]] = {}
        for note in self.notes:
            if note.stage == stage:
                out.setdefault(note.line, []).append(note)
        return out


def analyze(artifact: Artifact) -> Analysis:
    """Each stage through its dialect: parse, annotate, count (Analysis.mix holds the fine names).

    The artifact's text (stages, kernel and file names, warnings) is taken with
    its control characters written out visibly (sanitize.py): a comment or a
    file name can hold an escape sequence, and every view, report and width
    computed from here on sees what the terminal will really show.
    """
    from tritonscope.language.dialects import annotate_stage, dialect, instruction_mix
    from tritonscope.core.sanitize import visible_data

    artifact = visible_data(artifact)

    parsed: dict[str, ParsedStage] = {}
    notes: list[Note] = []
    mix: dict[str, dict[str, int]] = {}
    for key, text in artifact.stages.items():
        stage = dialect(key).parse(text, file=artifact.spec.file, first_line=artifact.python_first_line)
        parsed[key] = stage
        notes.extend(annotate_stage(stage))
        mix[key] = instruction_mix(stage)
    if artifact.remarks:  # Triton's own remarks, on the lines they name in every stage
        from tritonscope.analyses.remarks import remark_notes

        notes.extend(remark_notes(parsed, artifact.remarks, artifact.spec.file))
    return Analysis(artifact, parsed, notes, mix, summary=summarize(artifact, mix))
