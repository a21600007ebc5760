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

from tritonscope.analysis import Analysis
from tritonscope.model import STAGE_BY_KEY
from tritonscope.render.html import mix_table, python_line_of, summary_rows

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


_FENCE_LANG = {"python": "python", "llir": "llvm", "ptx": "ptx", "ttir": "mlir", "ttgir": "mlir", "sass": ""}


def render_markdown(analysis: Analysis) -> str:
    a = analysis.artifact
    spec = a.spec
    out: list[str] = [f"## tritonscope: {_cell(spec.kernel)} ({_cell(spec.label())})", ""]
    out += ["| | |", "| --- | --- |"]
    out += [f"| **{_cell(label)}** | {_cell(value)} |" for label, value in summary_rows(analysis)]
    out.append("")
    for warning in a.warnings:
        out.append(f"> warning: {_cell(warning)}")
    if a.warnings:
        out.append("")
    stages, rows = mix_table(analysis)
    if rows:
        out += ["**Instruction mix**", "", "| class | " + " | ".join(k.upper() for k in stages) + " |",
                "| --- |" + " ---: |" * len(stages)]
        out += [f"| {_cell(c)} | " + " | ".join(str(n) for n in counts) + " |" for c, counts in rows]
        out.append("")
    for key, stage in analysis.parsed.items():
        info = STAGE_BY_KEY.get(key)
        title = info.title if info else key
        notes = analysis.notes_for(key)
        count = sum(map(len, notes.values()))
        summary = f"{title}: {len(stage.lines)} lines" + (f", {count} notes" if count else "")
        out += ["<details>", f"<summary>{html.escape(summary)}</summary>", ""]
        text = "\n".join(line.text for line in stage.lines)
        out += [_fence(text, _FENCE_LANG.get(key, "")), ""]
        if notes:
            out += ["Notes:", ""]
            by_number = {line.number: line for line in stage.lines}
            for number in sorted(notes):
                line = by_number.get(number)
                py = python_line_of(analysis, key, line) if line else None
                where = f"line {number}" + (f" (Python line {py})" if py is not None and key != "python" else "")
                for note in notes[number]:
                    ref = f" ({_cell(note.reference)})" if note.reference else ""
                    out.append(f"- {where}: **{_cell(note.label)}**: {_cell(note.explanation)}{ref}")
            out.append("")
        out += ["</details>", ""]
    out.append(f"<sub>tritonscope report · Triton {html.escape(a.triton_version)} · kernel hash "
               f"{html.escape(a.kernel_hash[:16])}</sub>")
    return "\n".join(out) + "\n"
