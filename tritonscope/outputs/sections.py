"""The report's sections, assembled once: which sections, in which order, with their data.

Every view of an Analysis draws this one list: the terminal (`compile`,
`show`), and the saved text, Markdown and HTML reports (save.py).  A
renderer decides only how a section looks, or that it has no look of its
own there (the terminal writes the instruction mix and Triton's remarks
into its summary panel and onto the lines; Markdown and text draw no
layouts).  JSON is the schema itself (report.analysis_to_dict): it holds the
whole Analysis, whatever the view options, so it is not a view of this list.

The order, for every format: the summary, explain's verdicts, Triton's
remarks, the pass table, the instruction mix, the body (each stage, or in
the terminal the one view asked for), the layouts.  HTML places the same
list on its page: summary, verdicts, remarks and mix in the top box, the
other sections below it, the stages as panes under its toggles.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tritonscope.analyses.analysis import Analysis
from tritonscope.core.model import Line
from tritonscope.language.dialects import compiled, dialect

# The section kinds, in the order they come in: the body (one view, or one section per stage) before the layouts.
KINDS = ("summary", "explain", "remarks", "passes", "mix",
         "stage", "line", "side-by-side", "walkthrough", "mix-view", "layouts")


@dataclass(frozen=True)
class Section:
    """One section of a report: its kind (KINDS) and what it shows (one of the records below, or a stage key)."""
    kind: str
    data: Any = None


@dataclass(frozen=True)
class Summary:
    """The summary's (label, value) rows (render/summary_text.py) and the compiler's warnings."""
    rows: tuple[tuple[str, str], ...]
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class Remarks:
    """Triton's remarks, each with its details (remarks.grouped), and the kernel's lines they may point at."""
    said: tuple
    source: dict[int, str]  # Python line number -> its text


@dataclass(frozen=True)
class Mix:
    """The instruction mix of each stage that counts one: ((stage key, {class: count}), ...)."""
    per_stage: tuple[tuple[str, dict[str, int]], ...]

    def table(self) -> tuple[list[str], list[tuple[str, list[int]]]]:
        """(stage keys, [(class, counts per stage)]): every class once, in the order first met."""
        stages = [k for k, _ in self.per_stage]
        classes: list[str] = []
        for _, counts in self.per_stage:
            classes += [c for c in counts if c not in classes]
        return stages, [(c, [counts.get(c, 0) for _, counts in self.per_stage]) for c in classes]


@dataclass(frozen=True)
class LineQuery:
    """`--line N`: Python line N in the stages named (None: every stage but the source)."""
    number: int
    stages: tuple[str, ...] | None


@dataclass(frozen=True)
class Page:
    """The sections of one view of an Analysis, and what every renderer of them looks up."""
    sections: tuple[Section, ...]
    kernel_files: frozenset[str]  # the kernel's file as named and as compiled (paths.kernel_files)

    def python_line_of(self, analysis: Analysis, key: str, line: Line) -> int | None:
        return python_line_of(analysis, key, line, self.kernel_files)


def build(analysis: Analysis, *, view: str = "stages", stages: tuple[str, ...] | None = None,
          line: int | None = None, layouts: bool = True) -> Page:
    """The sections of `analysis` for a view.

    `stages`: the stages named (`--stage`), None for the view's default (every
    stage; side-by-side: the TTGIR and the machine code).  `line`: `--line N`,
    which is the whole body (no verdicts or pass table above it).  `layouts`:
    draw the layouts (the terminal's `--layouts`; the saved reports say True).
    """
    from tritonscope.pipeline.paths import kernel_files

    sections = [Section("summary", Summary(tuple(_summary_rows(analysis)), tuple(analysis.artifact.warnings)))]
    if line is None:
        sections += _annexes(analysis)
    sections += _body(analysis, view, stages, line)
    if layouts and analysis.layouts:
        sections.append(Section("layouts", tuple(analysis.layouts)))
    return Page(tuple(sections), frozenset(kernel_files(analysis)))


def _summary_rows(analysis: Analysis) -> list[tuple[str, str]]:
    from tritonscope.outputs.render.summary_text import summary_rows

    return summary_rows(analysis)


def _annexes(analysis: Analysis) -> list[Section]:
    """The sections between the summary and the body, each only when the analysis has it."""
    from tritonscope.analyses.explain import Explanation, explanation_of
    from tritonscope.analyses.remarks import grouped

    out = []
    explained = explanation_of(analysis)
    if explained is not None:  # `compile --explain`, `explain --save`, or a report saved with them
        out.append(Section("explain", Explanation.from_dict(explained)))
    said = grouped(analysis.artifact.remarks)
    if said:
        out.append(Section("remarks", Remarks(tuple(said), python_source(analysis))))
    if analysis.passes:  # the pass table a --passes compile or a report carries
        from tritonscope.analyses.passes import PassTrace

        out.append(Section("passes", PassTrace.from_dict(analysis.passes)))
    per_stage = tuple((k, counts) for k, counts in analysis.mix.items() if counts)
    if per_stage:
        out.append(Section("mix", Mix(per_stage)))
    return out


def _body(analysis: Analysis, view: str, stages: tuple[str, ...] | None, line: int | None) -> list[Section]:
    """The view asked for: `--line N`, side by side, the walkthrough, the mix, or each stage."""
    if line is not None:
        return [Section("line", LineQuery(line, None if stages is None else tuple(compiled(stages))))]
    if view == "side-by-side":
        from tritonscope.language.dialects import machine_stage

        default = ("ttgir", machine_stage(analysis.parsed) or "ptx")
        return [Section("side-by-side", tuple(compiled(default if stages is None else stages)))]
    if view in ("walkthrough", "mix"):
        return [Section("walkthrough" if view == "walkthrough" else "mix-view")]
    return [Section("stage", key) for key in (stages if stages is not None else analysis.parsed)
            if key in analysis.parsed]


def python_source(analysis: Analysis) -> dict[int, str]:
    """The kernel's Python lines by their number in its file (empty when the report has no source)."""
    if "python" not in analysis.parsed:
        return {}
    return {ln.loc.line: ln.text for ln in analysis.parsed["python"].lines if ln.loc}


def python_line_of(analysis: Analysis, key: str, line: Line, kernel_files: frozenset[str] | set[str]) -> int | None:
    """The kernel-file line a stage line comes from (None when elsewhere or unknown).

    `kernel_files`: paths.kernel_files(analysis), looked up once per page (Page.kernel_files).
    """
    if dialect(key).is_source:
        return line.loc.line if line.loc else analysis.artifact.python_first_line + line.number - 1
    if line.loc and line.loc.file in kernel_files:
        return line.loc.line
    return None
