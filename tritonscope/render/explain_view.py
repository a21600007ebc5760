"""Words and layout for explain's verdicts and check's results (terminal, text, Markdown, HTML, JUnit).

The core (tritonscope/explain.py) returns Verdicts as data; this module only
lays them out.  Severity decides the mark and colour: ok, info, warn, bad.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from rich.console import Group
from rich.table import Table
from rich.text import Text

MARK = {"ok": "✓", "info": "·", "warn": "!", "bad": "✗"}
STYLE = {"ok": "green", "info": "cyan", "warn": "yellow", "bad": "bold red"}
STAGE_TITLE = {"python": "python", "ttir": "ttir", "ttgir": "ttgir", "llir": "llir", "ptx": "ptx", "sass": "sass",
               "remark": "remark"}


def header_text(expl) -> Text:
    t = Text()
    t.append(expl.kernel, style="bold")
    t.append(f"  {expl.label}", style="bold cyan")
    extra = f"  Triton {expl.triton_version}"
    if expl.checked_compiles:
        extra += f"; {expl.checked_compiles} candidate compile{'s' if expl.checked_compiles != 1 else ''} to check fixes"
    t.append(extra, style="dim")
    return t


def _where(stage: str, line: int) -> str:
    if stage == "remark":
        return f"remark L{line}"
    if line <= 0:
        return stage
    return f"{STAGE_TITLE.get(stage, stage)}:{line}"


def verdict_text(v, width: int = 100) -> Text:
    """One verdict: mark, kind, title; evidence lines; the fix."""
    t = Text()
    t.append(f"{MARK.get(v.severity, '?')} ", style=STYLE.get(v.severity, ""))
    t.append(f"{v.kind:<15}", style="bold")
    t.append(v.title)
    for stage, line, text in v.evidence:
        where = _where(stage, line)
        room = max(20, width - 4 - 14 - 2)
        shown = text if len(text) <= room else text[:room - 1] + "…"
        t.append(f"\n    {where:<14}", style="dim")
        t.append(shown, style="italic" if stage == "python" else "")
    if v.fix:
        t.append("\n    fix", style="bold")
        t.append(" (checked)" if v.fix_checked else "", style="green")
        t.append(f": {v.fix}")
    return t


def explain_renderable(expl, width: int = 100):
    parts = [header_text(expl), Text("")]
    if not expl.verdicts:
        parts.append(Text("nothing to report"))
    for v in expl.verdicts:
        parts.append(verdict_text(v, width))
    counts = {s: sum(1 for v in expl.verdicts if v.severity == s) for s in ("bad", "warn", "info", "ok")}
    tally = Text("\n")
    for s in ("bad", "warn", "info", "ok"):
        if counts[s]:
            tally.append(f"{counts[s]} {s}  ", style=STYLE[s])
    parts.append(tally)
    return Group(*parts)


def explain_markdown(expl) -> str:
    out = [f"# explain: {expl.kernel}", "", f"`{expl.label}` · Triton {expl.triton_version}", ""]
    for v in expl.verdicts:
        out.append(f"## {MARK.get(v.severity, '?')} {v.kind}: {v.title}")
        out.append("")
        if v.evidence:
            out.append("```text")
            for stage, line, text in v.evidence:
                out.append(f"{_where(stage, line):<14} {text}")
            out.append("```")
            out.append("")
        if v.fix:
            out.append(f"**fix{' (checked by compiling)' if v.fix_checked else ''}:** {v.fix}")
            out.append("")
    return "\n".join(out) + "\n"


def render_explanation(expl, fmt: str, width: int = 100) -> str:
    """The saved file's text: json, text, markdown or html."""
    import json

    if fmt == "json":
        return json.dumps(expl.to_dict(), indent=1) + "\n"
    if fmt == "markdown":
        return explain_markdown(expl)
    from rich.console import Console

    console = Console(record=True, width=width, file=_Null(), color_system="truecolor" if fmt == "html" else None,
                      highlight=False)
    console.print(explain_renderable(expl, width))
    if fmt == "html":
        return console.export_html(inline_styles=True)
    return console.export_text()


class _Null:
    def write(self, _):
        return 0

    def flush(self):
        pass


# -------------------------------------------------------------- check


def check_table(results) -> Table:
    table = Table(title="tritonscope check", title_justify="left", show_lines=False)
    table.add_column("", no_wrap=True)
    table.add_column("arch", no_wrap=True)
    table.add_column("expectation", no_wrap=True)
    table.add_column("actual")
    for r in results:
        table.add_row(Text("✓" if r.held else "✗", style="green" if r.held else "bold red"), r.arch, r.expr,
                      r.actual + (f" ({r.detail})" if r.detail else ""))
    return table


def check_summary(results) -> Text:
    failed = [r for r in results if not r.held]
    if not failed:
        return Text(f"all {len(results)} expectations hold", style="green")
    return Text(f"{len(failed)} of {len(results)} expectations failed", style="bold red")


def junit_xml(results, suite: str) -> str:
    """JUnit XML (one testcase per arch and expectation) for CI systems."""
    by_arch: dict[str, list] = {}
    for r in results:
        by_arch.setdefault(r.arch, []).append(r)
    failures = sum(1 for r in results if not r.held)
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f"<testsuites name={quoteattr('tritonscope check')} tests=\"{len(results)}\" failures=\"{failures}\">"]
    for arch, rs in by_arch.items():
        f = sum(1 for r in rs if not r.held)
        out.append(f"  <testsuite name={quoteattr(f'{suite} {arch}')} tests=\"{len(rs)}\" failures=\"{f}\">")
        for r in rs:
            out.append(f"    <testcase classname={quoteattr(f'tritonscope.check.{arch}')} name={quoteattr(r.expr)}>")
            if not r.held:
                out.append(f"      <failure message={quoteattr(r.actual)}>{escape(r.detail or r.actual)}</failure>")
            else:
                out.append(f"      <system-out>{escape(r.actual)}</system-out>")
            out.append("    </testcase>")
        out.append("  </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"
