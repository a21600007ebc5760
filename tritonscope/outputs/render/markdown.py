"""Analysis -> Markdown for pasting into a GitHub issue.

A summary table, the instruction mix, then each stage in a collapsible
<details> block: its code in a fence, then its notes.  GitHub renders the
HTML in Markdown, so every piece of kernel or compiler text is escaped for
where it lands: table cells and <summary> text as HTML, code in a fence
longer than any backtick run inside it.
"""

from __future__ import annotations

import html
import re

from tritonscope.analyses.analysis import Analysis
from tritonscope.language.dialects import dialect

# Markdown punctuation that could start a link, emphasis, code span or end a table cell.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def _cell(text) -> str:
    """Text safe inside a table cell or a list item: HTML-escaped, Markdown punctuation escaped."""
    text = html.escape(str(text), quote=False).replace("\n", " ")
    return _MD_SPECIAL.sub(r"\\\1", text)


def _fence(text: str, lang: str = "") -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _remarks(analysis: Analysis, remarks) -> list[str]:
    """Triton's remarks as a list: place, severity, stage, message, the Python line."""
    from tritonscope.analyses.remarks import made_by

    said, src = remarks.said, remarks.source
    out = ["**Triton's remarks**", ""]
    for r, details in said:
        by = f" ({made_by(r)})" if r.stage else ""
        line = f"- {_cell(r.where())} **{_cell(r.severity)}**{_cell(by)}: {_cell(r.said)}"
        line += "".join(f" (note: {_cell(d.said)})" for d in details)
        if r.line in src:
            line += f" — Python line {r.line}: `{_cell(src[r.line].strip()).replace('`', '')}`"
        out.append(line)
    return out + [""]


def _passes(analysis: Analysis, trace) -> list[str]:
    """The pass table a `--passes` compile carries, folded as in the terminal, in a <details> block."""
    from tritonscope.outputs.render.passes_view import table_rows, table_title

    out = ["<details>", f"<summary>Compiler passes: {html.escape(table_title(trace))}</summary>", "",
           "| step | pass | stage | +lines | -lines | what changed | ms |",
           "| ---: | --- | --- | ---: | ---: | --- | ---: |"]
    for row in table_rows(trace):
        name = f"_{_cell(row['pass'])}_" if row["folded"] else _cell(row["pass"])
        out.append(f"| {_cell(row['step'])} | {name} | {_cell(row['stage'])} | {row['added']} | {row['removed']} "
                   f"| {_cell(row['what'])} | {row['ms']} |")
    return out + ["", "</details>", ""]


def _explain(analysis: Analysis, expl) -> list[str]:
    """explain's verdicts (`compile --explain`, `explain --save`): each with its evidence in a fence and its fix."""
    from tritonscope.outputs.render.explain_view import MARK, SKIP_MARK, source_lines, tally, where

    head = f"`{_cell(expl.label)}` · Triton {_cell(expl.triton_version)}"
    if expl.checked_compiles:
        head += f" · {expl.checked_compiles} candidate compile{'s' if expl.checked_compiles != 1 else ''} to check fixes"
    out = ["### Explain", "", head, ""]
    out += [f"- {_cell(line)}" for line in source_lines(expl)] + ([""] if expl.source else [])
    for v in expl.verdicts:
        out += [f"#### {MARK.get(v.severity, '?')} {_cell(v.kind)}: {_cell(v.title)}", ""]
        if v.evidence:
            out += [_fence("\n".join(f"{where(stage, line):<14} {text}" for stage, line, text in v.evidence), "text"),
                    ""]
        if v.fix:
            out += [f"**fix{' (checked)' if v.fix_checked else ''}:** {_cell(v.fix)}", ""]
    if expl.skipped:
        out += ["**Not judged**", ""]
        out += [f"- {SKIP_MARK} **{_cell(x['kind'])}**: {_cell(x['reason'])}" for x in expl.skipped]
        out.append("")
    out += [" · ".join(f"{n} {s}" for s, n in tally(expl)) or "nothing to report", ""]
    return out


def _summary(analysis: Analysis, summary) -> list[str]:
    """The title, the summary's rows as a table, the compiler's warnings as quotes."""
    spec = analysis.artifact.spec
    out = [f"## tritonscope: {_cell(spec.kernel)} ({_cell(spec.label())})", ""]
    out += ["| | |", "| --- | --- |"]
    out += [f"| **{_cell(label)}** | {_cell(value)} |" for label, value in summary.rows]
    out.append("")
    for warning in summary.warnings:
        out.append(f"> warning: {_cell(warning)}")
    return out + ([""] if summary.warnings else [])


def _mix(analysis: Analysis, mix) -> list[str]:
    """The instruction mix as one table: a row per class, a column per stage."""
    stages, rows = mix.table()
    if not rows:
        return []
    out = ["**Instruction mix**", "", "| class | " + " | ".join(k.upper() for k in stages) + " |",
           "| --- |" + " ---: |" * len(stages)]
    out += [f"| {_cell(c)} | " + " | ".join(str(n) for n in counts) + " |" for c, counts in rows]
    return out + [""]


def _stage(analysis: Analysis, key: str, hide: frozenset[str] | None, kernel_files: frozenset[str]) -> list[str]:
    """A stage in a <details> block: its code in a fence (noise folded, with a line saying how much), its notes."""
    from tritonscope.outputs.render import noise
    from tritonscope.outputs.sections import python_line_of

    stage = analysis.parsed[key]
    info = dialect(key)
    notes = analysis.notes_for(key)
    count = sum(map(len, notes.values()))
    summary = f"{info.title}: {len(stage.lines)} lines" + (f", {count} notes" if count else "")
    out = ["<details>", f"<summary>{html.escape(summary)}</summary>", ""]
    folded = noise.fold(analysis, key, hide)
    out += [_fence("\n".join(line.text for line in folded.shown), info.fence), ""]
    if folded.hidden:
        out += [f"<sub>{html.escape(noise.message(folded.hidden, 'saving with --raw keeps them'))}</sub>", ""]
    if notes:
        out += ["Notes:", ""]
        by_number = {line.number: line for line in stage.lines}
        for number in sorted(notes):
            line = by_number.get(number)
            py = python_line_of(analysis, key, line, kernel_files) if line else None
            where = f"line {number}" + (f" (Python line {py})" if py is not None and not dialect(key).is_source else "")
            for note in notes[number]:
                ref = f" ({_cell(note.reference)})" if note.reference else ""
                out.append(f"- {where}: **{_cell(note.label)}**: {_cell(note.explanation)}{ref}")
        out.append("")
    return out + ["</details>", ""]


# How each section looks in Markdown (layouts are drawings: the Markdown report has none).
_SECTIONS = {"summary": _summary, "explain": _explain, "remarks": _remarks, "passes": _passes, "mix": _mix}


def render_markdown(analysis: Analysis, *, hide: frozenset[str] | None = None, page=None) -> str:
    """The report: the sections of `page` (default: sections.build's report page, without layouts).

    Noise lines of a kind in `hide` (default: all, none with --raw) are left out of the code blocks, with
    one line per stage saying how many (line numbers in the notes stay real)."""
    from tritonscope.outputs import sections

    page = page or sections.build(analysis, layouts=False)
    out: list[str] = []
    for section in page.sections:
        if section.kind == "stage":
            out += _stage(analysis, section.data, hide, page.kernel_files)
        elif section.kind in _SECTIONS:
            out += _SECTIONS[section.kind](analysis, section.data)
    a = analysis.artifact
    out.append(f"<sub>tritonscope report · Triton {html.escape(a.triton_version)} · kernel hash "
               f"{html.escape(a.kernel_hash[:16])}</sub>")
    return "\n".join(out) + "\n"
