"""Words and layout for explain's verdicts and check's results (terminal, text, JUnit).

The core (the tritonscope/analyses/explain package) returns Verdicts as data; this module only
lays them out.  Severity decides the mark and colour: ok, info, warn, bad;
a verdict that could not be judged (its input is missing) is listed with
"-" and the reason.  A compile report's Explain section is written by each
report renderer (render/html.py, render/markdown.py) with the helpers here.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from rich.console import Group
from rich.table import Table
from rich.text import Text

from tritonscope.language.dialects import is_source

MARK = {"ok": "✓", "info": "·", "warn": "!", "bad": "✗"}
STYLE = {"ok": "green", "info": "cyan", "warn": "yellow", "bad": "bold red"}
SKIP_MARK = "-"
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
    for line in source_lines(expl):
        t.append(f"\n{line}", style="dim")
    return t


def source_lines(expl) -> list[str]:
    """'from: capture ...' and 'lacks: ...' for a kernel found on disk (nothing for a compile)."""
    if not expl.source:
        return []
    out = [f"from: {expl.source}"]
    if expl.lacks:
        out.append("lacks: " + ", ".join(expl.lacks))
    return out


def tally(expl) -> list[tuple[str, int]]:
    """[('bad', 1), ('warn', 2), ..., ('not judged', 3)]: the counts worth printing."""
    counts = [(s, sum(1 for v in expl.verdicts if v.severity == s)) for s in ("bad", "warn", "info", "ok")]
    counts.append(("not judged", len(expl.skipped)))
    return [(s, n) for s, n in counts if n]


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
        t.append(shown, style="italic" if is_source(stage) else "")
    if v.fix:
        t.append("\n    fix", style="bold")
        t.append(" (checked)" if v.fix_checked else "", style="green")
        t.append(f": {v.fix}")
    return t


def skipped_text(item, width: int = 100) -> Text:
    """One verdict that could not be judged: its kind and why."""
    t = Text()
    t.append(f"{SKIP_MARK} ", style="dim")
    t.append(f"{item['kind']:<15}", style="bold dim")
    t.append(f"not judged: {item['reason']}", style="dim")
    return t


def explain_renderable(expl, width: int = 100, *, title: str | None = None):
    """The verdicts as the terminal shows them; `title` heads them (a compile's or report's Explain section)."""
    parts = ([Text(title, style="bold")] if title else []) + [header_text(expl), Text("")]
    if not expl.verdicts and not expl.skipped:
        parts.append(Text("nothing to report"))
    for v in expl.verdicts:
        parts.append(verdict_text(v, width))
    for item in expl.skipped:
        parts.append(skipped_text(item, width))
    counts = Text("\n")
    for s, n in tally(expl):
        counts.append(f"{n} {s}  ", style=STYLE.get(s, "dim"))
    parts.append(counts)
    return Group(*parts)


def explanation_text(expl, width: int = 120) -> str:
    """The verdicts as plain text (explain --save FILE.txt, and the Explain section of a .txt report)."""
    import io

    from tritonscope.core.sanitize import SafeConsole, visible

    console = SafeConsole(file=io.StringIO(), width=width, no_color=True, color_system=None, highlight=False,
                          record=True, soft_wrap=False)
    console.print(explain_renderable(expl, width))
    return visible(console.export_text(styles=False))


def where(stage: str, line: int) -> str:
    """'ttgir:54', 'python:23', 'remark L29' or 'sass' (a whole-kernel fact): an evidence line's place."""
    return _where(stage, line)


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
