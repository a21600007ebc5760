"""The regression report: data (VersionsReport) and its renderers (terminal, Markdown, HTML, JSON, JUnit).

The table's cells are made once (`table_cells`) and every renderer draws
the same ones, so the terminal, the Markdown in a README and the HTML
cannot disagree.  Kernel keys, labels and errors come from the command line,
kernel files or a `--replay` record (anyone's): every renderer escapes them
for where they land (`plain`, then HTML, Markdown, XML or rich markup).
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from typing import Any

from tritonscope.versions.compare import KernelRow, predicted_ratio

COLUMNS = ("kernel", "arch", "status", "regs", "spills", "smem/LDS", "occupancy", "loop waits (drains)",
           "loads buf/glob", "MMA", "predicted B/A")
FORMAT = "tritonscope-versions-report"


@dataclass
class VersionsReport:
    a: str                       # side labels: "triton 3.4.0", "triton 3.6.0 AMDGCN_USE_BUFFER_OPS=0"
    b: str
    rows: list[KernelRow]
    rules: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def regressions(self) -> int:
        return sum(1 for r in self.rows if r.failed_checks)

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "a": self.a, "b": self.b, "rules": self.rules, "notes": self.notes,
                "regressions": self.regressions, "rows": [r.to_dict() for r in self.rows]}


# What UTF-8 cannot encode or XML 1.0 forbids, beyond the control characters sanitize.visible writes out:
# a lone surrogate (json.loads makes one of "\ud800"), U+FFFE, U+FFFF.
_UNWRITABLE = re.compile("[\ud800-\udfff\ufffe\uffff]")


def plain(text) -> str:
    """`text` with no character a file or a terminal should get raw: '\x1b' for ESC, '\ud800' for a surrogate."""
    from tritonscope.core.sanitize import visible

    return _UNWRITABLE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", visible(str(text)))


def _md(text) -> str:
    """Text for a Markdown table cell or list item, as `compile`'s .md escapes it (HTML and Markdown punctuation)."""
    from tritonscope.outputs.render.markdown import _cell

    return _cell(plain(text))


def _pair(a, b, fmt=str) -> str:
    fa = "?" if a is None else fmt(a)
    fb = "?" if b is None else fmt(b)
    return fa if fa == fb else f"{fa} → {fb}"


def _regs(f) -> str | None:
    if f is None or f.registers is None:
        return None
    return f"{f.registers}" + (f"+{f.agprs}a" if f.agprs else "")


def table_cells(r: KernelRow) -> list[str]:
    """The row's cells, in COLUMNS order (plain text)."""
    a, b = r.a, r.b
    status = r.status + (" ✗" if r.failed_checks else "")
    if a is None or b is None:
        err = ("A: " + _short(r.a_error) if r.a_error else "") + ("; " if r.a_error and r.b_error else "") + \
              ("B: " + _short(r.b_error) if r.b_error else "")
        return [r.kernel, r.arch, status, err] + [""] * (len(COLUMNS) - 4)
    la, lb = a.loop, b.loop
    waits = "no loop" if la is None and lb is None else _pair(
        f"{la.memory_waits} ({la.drains})" if la else "no loop", f"{lb.memory_waits} ({lb.drains})" if lb else "no loop")
    ratio = predicted_ratio(a, b)
    pred = f"x{ratio:.2f}" if ratio is not None else "no prediction"
    if ratio is not None and "datasheet only" in f"{a.prediction_gpu} {b.prediction_gpu}":
        pred += " (datasheet only)"  # an AMD prediction: datasheet peaks, not measured on any AMD GPU
    return [r.kernel, r.arch, status, _pair(_regs(a), _regs(b)), _pair(a.spill_bytes, b.spill_bytes),
            _pair(a.shared, b.shared), _pair(a.occupancy_text, b.occupancy_text), waits,
            _pair(f"{a.buffer_loads}/{a.global_loads}", f"{b.buffer_loads}/{b.global_loads}"),
            _pair(sum(a.mma.values()), sum(b.mma.values())), pred]


def _short(err: dict | None, n: int = 160) -> str:
    if not err:
        return ""
    text = err.get("line") or (err.get("message") or err.get("type") or "error").strip().splitlines()[0]
    return text if len(text) <= n else text[: n - 1] + "…"


def change_lines(r: KernelRow) -> list[str]:
    """What changed, one line each: `VGPRs: 128 → 164 (+36 (+28%))`, worse ones marked."""
    out = []
    for c in r.changes:
        mark = {True: "worse", False: "better", None: ""}[c.worse]
        if c.what in ("new remark", "lost remark"):
            out.append(f"{c.what}: {c.b if c.b is not None else c.a}")
        elif c.what == "predicted time" and c.a == "no prediction":
            out.append(f"predicted time: no prediction {c.delta}")
        else:
            out.append(f"{c.what}: {c.a} → {c.b} ({c.delta})" + (f" [{mark}]" if mark else ""))
    la, lb = (r.a.loop if r.a else None), (r.b.loop if r.b else None)
    if la and lb and (la.waits_text != lb.waits_text) and (la.memory_waits or lb.memory_waits):
        out.append(f"loop waits A: {'; '.join(la.waits_text) or 'none'}")
        out.append(f"loop waits B: {'; '.join(lb.waits_text) or 'none'}")
    for e, side in ((r.a_error, "A"), (r.b_error, "B")):
        if e:
            out.append(f"{side} fails: {_short(e, 400)}")
    if r.failed_checks:
        out.append("breaks --fail-on: " + ", ".join(r.failed_checks))
    if r.unchecked:
        out.append("could not check (a figure is unknown): " + ", ".join(r.unchecked))
    return out


def markdown(rep: VersionsReport, *, details: bool = True) -> str:
    lines = [f"A: {_md(rep.a)}  \nB: {_md(rep.b)}", "", "| " + " | ".join(COLUMNS) + " |",
             "|" + "---|" * len(COLUMNS)]
    for r in rep.rows:
        lines.append("| " + " | ".join(_md(c) for c in table_cells(r)) + " |")
    if details:
        for r in rep.rows:
            ch = change_lines(r)
            if ch:
                lines += ["", f"**{_md(r.kernel)}** ({_md(r.arch)}, {_md(r.status)})", ""] + [f"- {_md(x)}"
                                                                                          for x in ch]
    for n in rep.notes:
        lines += ["", f"note: {_md(n)}"]
    return "\n".join(lines) + "\n"


def html_page(rep: VersionsReport) -> str:
    def e(text) -> str:
        return html.escape(plain(text))

    head = "".join(f"<th>{e(c)}</th>" for c in COLUMNS)
    body = []
    for r in rep.rows:
        cls = "bad" if r.failed_checks or r.status in ("worse", "fails in B") else ""
        body.append(f"<tr class='{cls}'>" + "".join(f"<td>{e(c)}</td>" for c in table_cells(r)) + "</tr>")
        ch = change_lines(r)
        if ch:
            body.append(f"<tr><td colspan='{len(COLUMNS)}'><ul>" + "".join(f"<li>{e(x)}</li>" for x in ch)
                        + "</ul></td></tr>")
    return ("<!doctype html><html><head><meta charset='utf-8'><title>tritonscope versions</title>"
            "<style>body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
            "padding:3px 6px;font-size:13px}tr.bad td{background:#fde8e8}</style></head><body>"
            f"<h1>{e(rep.a)} vs {e(rep.b)}</h1><p>{rep.regressions} regression(s)"
            + (f" against {e(', '.join(rep.rules))}" if rep.rules else "") + "</p>"
            f"<table><tr>{head}</tr>{''.join(body)}</table>"
            + "".join(f"<p>note: {e(n)}</p>" for n in rep.notes) + "</body></html>\n")


def text(rep: VersionsReport) -> str:
    import io

    from tritonscope.core.sanitize import SafeConsole

    console = SafeConsole(width=160, file=io.StringIO(), color_system=None, force_terminal=False)
    print_report(console, rep)
    return console.file.getvalue()


def junit(rep: VersionsReport) -> str:
    """One testcase per kernel and arch; a failure where a --fail-on rule (or B's compile) broke."""
    from xml.sax.saxutils import quoteattr, escape

    cases = []
    for r in rep.rows:
        name = quoteattr(plain(f"{r.kernel} [{r.arch}]"))  # plain: no character XML 1.0 forbids
        if r.failed_checks:
            detail = escape(plain("\n".join(change_lines(r))))
            cases.append(f"  <testcase classname=\"tritonscope.versions\" name={name}>"
                         f"<failure message={quoteattr(plain('; '.join(r.failed_checks)))}>{detail}</failure>"
                         "</testcase>")
        elif r.a is None and r.b is None:
            cases.append(f"  <testcase classname=\"tritonscope.versions\" name={name}><skipped message="
                         f"{quoteattr(plain('fails with both versions: ' + _short(r.b_error)))}/></testcase>")
        else:
            cases.append(f"  <testcase classname=\"tritonscope.versions\" name={name}/>")
    skipped = sum(1 for r in rep.rows if r.a is None and r.b is None and not r.failed_checks)
    suite = quoteattr(plain(f"tritonscope versions: {rep.a} vs {rep.b}"))
    return ("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
            f"<testsuite name={suite} tests=\"{len(rep.rows)}\" "
            f"failures=\"{rep.regressions}\" errors=\"0\" skipped=\"{skipped}\">\n" + "\n".join(cases)
            + "\n</testsuite>\n")


# The terminal's headers (shorter than COLUMNS', which the saved reports keep) and the order columns are left out
# in when a table cannot fit whole (0: never; render/fit.py).
TERMINAL = (("kernel", 0), ("arch", 0), ("status", 0), ("regs", 0), ("spills", 0), ("smem", 5), ("occupancy", 3),
            ("waits (drains)", 0), ("buf/glob loads", 4), ("MMA", 6), ("pred B/A", 0))


def terminal_table(rep: VersionsReport):
    """The report's table for the terminal, fitted to its width (no number split, headers whole; columns
    left out are named under it).  A failing side's error is the line under the table, not a cell."""
    from tritonscope.outputs.render.fit import Col, FittedTable

    cols = [Col(name, drop=drop, wrap=name in ("status", "smem", "occupancy", "waits (drains)", "pred B/A"),
                fold=name == "kernel", min_width=16 if name == "kernel" else None,
                justify="left" if name in ("kernel", "arch", "status", "occupancy") else "right")
            for name, drop in TERMINAL]
    styles = []
    for r in rep.rows:
        cells = table_cells(r)
        if r.a is None or r.b is None:   # the error is said under the table, in one line per side
            cells = cells[:3] + ["-"] * (len(COLUMNS) - 3)
        for c, cell in zip(cols, cells):
            c.cells.append(_esc_text(cell))
        styles.append("red" if r.failed_checks or r.status in ("worse", "fails in B") else (
            "green" if r.status in ("better", "fails in A") else None))
    from rich import box

    return FittedTable(cols, row_styles=styles, title=f"A: {_esc(rep.a)}   B: {_esc(rep.b)}", title_justify="left",
                       box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, left_out="left out at this width: {names} (a wider --width, --json or --save report.md "
                                "has them)")


def print_report(console, rep: VersionsReport, *, details: int = 20) -> None:
    console.print(terminal_table(rep))
    shown = 0
    for r in rep.rows:
        ch = change_lines(r)
        if ch and shown < details:
            shown += 1
            console.print(f"[bold]{_esc(r.kernel)}[/bold] ({_esc(r.arch)}, {_esc(r.status)})")
            for x in ch:
                console.print("  " + _esc(x))
    hidden = sum(1 for r in rep.rows if change_lines(r)) - shown
    if hidden > 0:
        console.print(f"({hidden} more kernel(s) with changes: --details N, or --save report.md)")
    for n in rep.notes:
        console.print("note: " + _esc(n))
    if rep.rules:
        console.print(f"{rep.regressions} regression(s) against --fail-on {_esc(', '.join(rep.rules))}")


def _esc_text(s: str):
    """A cell as rich Text (no markup read), with no raw control character."""
    from rich.text import Text

    return Text(plain(s))


def _esc(s: str) -> str:
    """Text for rich markup: its brackets escaped, no raw control character (the console may not be a SafeConsole)."""
    from rich.markup import escape

    return escape(plain(s))


def dumps(rep: VersionsReport) -> str:
    return json.dumps(rep.to_dict(), indent=1) + "\n"


def render(rep: VersionsReport, fmt: str) -> str:
    """The report's text in one of outputs/save.VERSIONS' formats ('html', 'markdown', 'json', 'text'):
    versions --save, written by outputs/save.write."""
    return {"html": html_page, "markdown": markdown, "json": dumps, "text": text}[fmt](rep)
