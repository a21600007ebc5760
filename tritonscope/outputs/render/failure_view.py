"""A failure report (analyses/failure.Failure) for people: the terminal, a saved .txt, .md and .html.

The core says what failed, where and what to try; this module only lays it
out.  Sections, in order: the header (kernel, config, Triton), where it
failed (stage, pass, Triton's code), the op with its Python line, what Triton
said (each diagnostic, with its plain words), in plain words, what to try
(each check's mark: compiles, fails too, not tried), the reproducer, and the
IR the pass received around the op.
"""

from __future__ import annotations

import io
import os

from rich.text import Text

from tritonscope.outputs.render.text import TEXT_WIDTH

MARK = {True: ("✓", "green"), False: ("✗", "red"), None: ("·", "dim")}
LABEL = 12  # the width of the left column


def _row(label: str, value: str | Text, style: str = "") -> Text:
    t = Text()
    t.append(f"  {label:<{LABEL}}", style="bold")
    t.append(value if isinstance(value, Text) else Text(value, style=style))
    return t


def _indented(text: str, pad: int = LABEL + 2, style: str = "") -> Text:
    return Text("\n".join(" " * pad + line for line in text.splitlines()), style=style)


def _cut(line: str, width: int) -> str:
    """An IR line cut to the page's width (its types run long; the whole line is in --save and --emit)."""
    return line if len(line) <= width else line[:max(1, width - 1)] + "…"


def _title(text: str) -> Text:
    return Text(f"\n{text}", style="bold underline")


def failure_renderables(f, *, width: int = TEXT_WIDTH, ir: bool = True) -> list:
    """The report's sections as rich renderables; `ir` adds the IR excerpt."""
    out: list = []
    head = Text()
    head.append("Triton failed" if not f.timed_out else "Triton did not finish", style="bold red")
    head.append(f": {f.kernel}", style="bold")
    head.append(f"  {f.label}", style="bold cyan")
    head.append(f"  Triton {f.triton_version}", style="dim")
    out.append(head)
    where = f.failed_in() or "(not known)"
    out.append(_row("failed in" if not f.timed_out else "stopped in", where, "bold yellow"))
    if f.where and f.in_pass:
        out.append(_row("", f"called from {f.where}: {f.where_text}", "dim"))
    elif f.where_text:
        out.append(_row("", f"{f.where}: {f.where_text}", "dim"))
    if f.error:
        out.append(_row("error", f.error))
    if f.timed_out and f.earlier:
        out.append(_row("slowest", ", ".join(f"{name} {sec:.2f} s" for name, sec in f.earlier)
                        + " (passes that finished)", "dim"))
    if f.op is not None:
        op = f.op
        value = Text()
        value.append(op.name, style="bold magenta")
        if op.where():
            value.append(f" at {op.where()}", style="bold")
        value.append(f"  ({op.how})", style="dim")
        out.append(_row("op", value))
        if op.source:
            src = Text(" " * (LABEL + 2))
            src.append(f"{op.line:>5} │ ", style="dim")
            src.append(op.source, style="italic")
            out.append(src)
        if op.count > 1:
            also = f", also at line{'s' if len(op.others) > 1 else ''} {', '.join(map(str, op.others))}" \
                if op.others else f", all from line {op.line}"
            out.append(_row("", f"{op.count} such ops{also}; the first is shown", "dim"))
    if f.diagnostics:
        out.append(_title("What Triton said"))
        for d in f.diagnostics:
            t = Text()
            t.append(f"  {d.severity:<{LABEL}}", style="bold red" if d.severity in ("error", "assertion", "fatal")
                     else "bold")
            where = f"{os.path.basename(d.file)}:{d.line}: " if d.file and d.line else ""
            t.append(f"{where}{d.message}")
            out.append(t)
    if f.explanation:
        out.append(_title("In plain words"))
        for words in f.explanation:
            out.append(Text(f"  - {words}"))
    if f.fixes:
        out.append(_title("What to try" + (" (each checked by compiling the changed config)"
                                           if any(x.tried for x in f.fixes) else "")))
        for x in f.fixes:
            mark, style = MARK[x.compiles if x.tried else None]
            t = Text()
            t.append(f"  {mark} ", style=style)
            if x.flags:
                t.append(f"{x.flags:<25} ", style="bold")
            t.append(x.label)
            said = x.said + (f" ({x.seconds:.1f} s)" if x.seconds is not None else "")
            t.append(f": {said}", style=style if x.tried else "dim")
            out.append(t)
    r = f.reproducer
    if r is not None:
        out.append(_title("Reproducer" + (" of the failing pass alone" if r.local else " of the stage's passes")))
        out.append(_row("run", r.command, "bold"))
        out.append(_row("pipeline", r.pipeline, "dim"))
        if r.needs:
            out.append(_row("needs", r.needs, "dim"))
    elif f.in_pass is False and f.stage_function and not f.timed_out:
        out.append(_title("Reproducer"))
        out.append(Text("  No pass failed (Triton's Python did, after its passes): triton-opt cannot replay it; "
                        "the compile above is the reproducer.", style="dim"))
    if ir and f.ir_excerpt:
        what = "the IR the pass received" if f.in_pass or f.timed_out else \
            f"the IR {f.stage_function or 'Triton'} had"
        around = "around the op" if f.op is not None else "its start"
        out.append(_title(f"{what[0].upper() + what[1:]} ({around}; {f.ir_lines} lines in all: --save or --emit "
                          f"keep them)"))
        out.append(Text("\n".join(_cut(line, width) for line in f.ir_excerpt.splitlines())))
    return out


def failure_text(f, width: int = TEXT_WIDTH) -> str:
    """The report as plain text (a saved .txt; the terminal's look without colour)."""
    from tritonscope.core.sanitize import SafeConsole

    console = SafeConsole(file=io.StringIO(), width=width, no_color=True, color_system=None, highlight=False,
                          record=True, soft_wrap=False)
    for renderable in failure_renderables(f, width=width):
        console.print(renderable)
    return console.export_text(styles=False)


def _code(text: str) -> str:
    """Inline code in Markdown, whatever backticks the text holds (MLIR's notes quote pass names with them)."""
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def failure_markdown(f) -> str:
    """The report as Markdown: the text report in sections, with the IR and reproducer in code blocks."""
    from tritonscope.core.sanitize import visible

    lines = [f"# Triton {'failed' if not f.timed_out else 'did not finish'}: `{f.kernel}`", "",
             f"{f.label}, Triton {f.triton_version}", ""]
    lines.append(f"- **{'failed in' if not f.timed_out else 'stopped in'}**: {f.failed_in() or '(not known)'}")
    if f.where:
        lines.append(f"- **Triton's code**: `{f.where}`: `{f.where_text}`")
    if f.error:
        lines.append(f"- **error**: {_code(f.error)}")
    if f.op is not None:
        lines.append(f"- **op**: `{f.op.name}` at {f.op.where()} ({f.op.how})")
        if f.op.source:
            lines += ["", "```python", f"{f.op.line:>5} | {f.op.source}", "```"]
    if f.diagnostics:
        lines += ["", "## What Triton said", ""]
        lines += [f"- **{d.severity}** {d.where() + ': ' if d.where() else ''}{_code(d.message)}" for d in f.diagnostics]
    if f.explanation:
        lines += ["", "## In plain words", ""] + [f"- {w}" for w in f.explanation]
    if f.fixes:
        lines += ["", "## What to try", ""]
        for x in f.fixes:
            mark = MARK[x.compiles if x.tried else None][0]
            lines.append(f"- {mark} {'`' + x.flags + '` ' if x.flags else ''}{x.label}: {x.said}")
    if f.reproducer is not None:
        r = f.reproducer
        lines += ["", "## Reproducer", "", "```sh", r.command, "```", "", f"Pipeline: `{r.pipeline}`"]
        if r.needs:
            lines += ["", r.needs]
    if f.ir or f.ir_excerpt:
        lines += ["", "## The IR the pass received" if f.in_pass else "## The IR", "", "```mlir",
                  (f.ir or f.ir_excerpt).rstrip(), "```"]
    return visible("\n".join(lines) + "\n")


def failure_html(f) -> str:
    """The report as one HTML page (the terminal's colours), with the whole IR after it."""
    from html import escape

    from tritonscope.core.sanitize import SafeConsole

    console = SafeConsole(file=io.StringIO(), width=TEXT_WIDTH, record=True, force_terminal=True,
                          color_system="truecolor", soft_wrap=False)
    for renderable in failure_renderables(f, width=TEXT_WIDTH, ir=False):
        console.print(renderable)
    page = console.export_html(inline_styles=True)
    extra = ""
    if f.ir:
        extra += f"<h2>The IR the pass received</h2><pre>{escape(f.ir)}</pre>"
    if f.reproducer is not None and f.reproducer.text:
        extra += f"<h2>Reproducer ({escape(f.reproducer.file)})</h2><pre>{escape(f.reproducer.text)}</pre>"
    return page.replace("</body>", extra + "</body>", 1)


def failure_files(f, *, report=None, keep_paths: bool = True) -> dict[str, str]:
    """--emit DIR of a failed compile: {file name: text}: the report (.txt, .json, written from `report`, the
    failure with its paths made relative unless `keep_paths`; outputs/save.failure_files), the IR the pass
    received (before-<Pass>.mlir, whole) and MLIR's reproducer (reproducer.mlir), as Triton wrote them."""
    import json

    from tritonscope.analyses.failure import report_dict

    report = f if report is None else report
    data = report_dict(report)
    data["paths"] = "absolute" if keep_paths else "relative to the kernel's folder"
    files = {"failure.txt": failure_text(report), "failure.json": json.dumps(data, indent=1) + "\n"}
    if f.ir:
        name = f"before-{f.pass_name}.mlir" if f.in_pass and f.pass_name else f"{f.stage or 'ir'}.mlir"
        files[name] = f.ir
    if f.reproducer is not None and f.reproducer.text:
        files[f.reproducer.file] = f.reproducer.text
    return files


def render_failure(f, fmt: str, *, keep_paths: bool = True) -> str:
    """A saved report of a failed compile in one format ('json', 'text', 'markdown', 'html'); its JSON says
    whether its paths are absolute (`keep_paths`) or were made relative (outputs/save.save_failure)."""
    import json

    from tritonscope.analyses.failure import report_dict

    if fmt == "json":
        data = report_dict(f, full=True)
        data["paths"] = "absolute" if keep_paths else "relative to the kernel's folder"
        return json.dumps(data, indent=1) + "\n"
    if fmt == "markdown":
        return failure_markdown(f)
    if fmt == "html":
        return failure_html(f)
    return failure_text(f)
