"""Terminal rendering of a ConfigDiff (tritonscope diff) and a SweepResult (tritonscope sweep)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich import box
from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from tritonscope.analyses.diff import ConfigDiff, StageDiff
from tritonscope.language.dialects import dialect
from tritonscope.measure.sweep import SweepResult, SweepRow, iter_mix_columns

# --------------------------------------------------------------------------
# diff
# --------------------------------------------------------------------------


def diff_summary(d: ConfigDiff) -> Panel:
    """The A-vs-B table, the encodings by tensor role, the story, per-stage counts."""
    head = Table.grid(padding=(0, 1))
    head.add_column(style="bold")
    head.add_column()
    head.add_row("A", d.a_label)
    head.add_row("B", d.b_label)
    if d.config_changes:
        head.add_row("changed", ", ".join(d.config_changes))

    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    t.add_column("")
    t.add_column("A", overflow="fold")
    t.add_column("B", overflow="fold")
    t.add_column("Δ", overflow="fold")
    group = None
    for r in d.rows:
        if r.group == "config":
            continue     # in the header already
        if group and r.group != group:
            t.add_section()
        group = r.group
        style = "bold" if r.changed else "dim"
        t.add_row(Text(r.name, style=style), r.a, r.b, Text(r.delta, style="yellow" if r.changed else ""))

    parts: list = [head, Text(""), t]
    changed_roles = [r for r in d.roles if r.changed]
    if d.roles:
        rt = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, title="encodings by tensor role (TTGIR)",
                   title_justify="left", title_style="bold")
        rt.add_column("role")
        rt.add_column("A", overflow="fold", ratio=1)
        rt.add_column("B", overflow="fold", ratio=1)
        for r in d.roles:
            if r.changed:
                rt.add_row(Text(r.role, style="bold"), r.a or "-", r.b or "-")
        unchanged = [r.role for r in d.roles if not r.changed]
        if changed_roles:
            parts += [Text(""), rt]
        if unchanged:
            parts.append(Text("same encoding on both sides: " + ", ".join(unchanged), style="dim"))

    parts.append(Text(""))
    parts.append(Text("what changed", style="bold"))
    if d.story:
        for line in d.story:
            parts.append(Text("  • " + line))
    elif d.identical:
        parts.append(Text("  nothing: every stage is the same once locations, paths and numbering are ignored"))
    else:
        parts.append(Text("  no change in resources, instruction mix or encodings; see the stage diffs"))

    st = Table.grid(padding=(0, 2))
    st.add_column(style="bold")
    st.add_column()
    for s in d.stages:
        st.add_row(dialect(s.key).title, _stage_count(s))
    parts += [Text(""), Text("stages (noise-normalized)", style="bold"), st]
    return Panel(Group(*parts), title=f"tritonscope diff · {d.kernel}", box=box.ROUNDED, expand=False)


@dataclass(frozen=True)
class Attached:
    """A view a higher layer adds to a diff (versions' loop view, `diff --loop`), already made: its data for
    --json, its terminal renderable, and its HTML for a saved page.  The diff's own views stay here."""

    key: str
    data: dict
    renderable: Any
    html: str


def diff_renderables(d: ConfigDiff, stages, max_lines, divergence=None, attached: tuple = ()):
    """What `diff` prints (and saves as .txt): the summary, views attached to it, where the passes diverge
    (--passes), each changed stage.

    `divergence`: (the first pass that differs or None, whether from the start), from `diff --passes`.
    """
    yield diff_summary(d)
    for a in attached:
        yield a.renderable
    if divergence is not None:
        from tritonscope.outputs.render.passes_view import divergence_view

        yield divergence_view(*divergence, d.a_label, d.b_label)
    for s in d.stages:
        if s.key in stages and not s.identical:
            yield stage_diff_panel(s, max_lines=max_lines)


def diff_data(d: ConfigDiff, divergence=None, attached: tuple = ()) -> dict:
    """The diff as `diff --json` prints it and `--save x.json` writes it (with the pass divergence, if asked)."""
    out = d.to_dict()
    for a in attached:
        out[a.key] = a.data
    if divergence is not None:
        div, from_start = divergence
        out["passes"] = {"divergence": div.to_dict() if div else None, "from_start": from_start}
    return out


def _stage_count(s: StageDiff) -> Text:
    if s.missing:
        return Text(f"only in {'B' if s.missing == 'A' else 'A'}", style="yellow")
    if s.identical:
        return Text(f"identical ({s.a_lines} lines)", style="dim")
    return Text(f"-{s.removed} +{s.added}  ({s.a_lines} -> {s.b_lines} lines)")


def stage_diff_panel(s: StageDiff, *, max_lines: int = 60) -> Panel:
    """A unified diff of one stage; notes from either side shown after ';;'."""
    title = dialect(s.key).title
    if s.missing or s.identical:
        return Panel(_stage_count(s), title=title, box=box.SIMPLE_HEAD, title_align="left")
    out = Text()
    shown = 0
    for d in s.lines:
        if max_lines and shown >= max_lines:
            rest = len(s.lines) - shown
            out.append(f"... {rest} more diff lines (--max-lines 0 shows all)\n", style="dim")
            break
        style = {"-": "red", "+": "green", "@": "cyan"}.get(d.tag, "")
        prefix = "" if d.tag == "@" else d.tag + " "
        out.append(prefix + d.text, style=style)
        if d.notes:
            out.append("  ;; " + "; ".join(d.notes), style="dim")
        out.append("\n")
        shown += 1
    return Panel(out, title=f"{title}  -{s.removed} +{s.added}", box=box.SIMPLE_HEAD, title_align="left")


# --------------------------------------------------------------------------
# sweep
# --------------------------------------------------------------------------

_MIX_SHORT = {"async copy": "cp.async", "async commit": "commit", "async wait": "wait", "tma copy": "tma",
              "ldmatrix": "ldmatrix", "stmatrix": "stmatrix", "mma": "mma", "wgmma": "wgmma", "wgmma sync": "wg.sync",
              "barrier": "bar", "mbarrier": "mbar", "global load": "ld.g", "global store": "st.g",
              "shared load": "ld.s", "shared store": "st.s", "scratch store": "spill.st", "scratch load": "spill.ld",
              "tcgen05 mma": "tcgen05", "tmem load": "ld.tmem", "tmem store": "st.tmem", "tmem alloc": "tmem.alloc",
              "tcgen05 sync": "tc.sync"}


def sweep_table(result: SweepResult, rows: list[SweepRow]):
    """The sweep's table, fitted to the width it is drawn at (render/fit.py): numbers and headers stay whole;
    where even that does not fit, the compile time, then the instruction mix, then the occupancy are left out
    (the caption says so; --json has every figure)."""
    from tritonscope.outputs.render.fit import Col, FittedTable

    mix_cols = iter_mix_columns(rows)
    labels, fixed = _short_labels(rows)
    title = _sweep_title(result, rows) + (f"\nfixed: {fixed}" if fixed else "")
    predicted = any(r.predicted_ms is not None for r in rows)
    # AMD predictions come from datasheet figures only (never measured on an AMD GPU): the column says so
    datasheet = any((r.prediction or {}).get("datasheet_only") for r in rows if r.predicted_ms is not None)
    if datasheet:
        title += "\n* pred ms: datasheet only, not measured on any AMD GPU (expected error doubled)"
    mix_name = "mix" if any(r.arch and r.arch.startswith("gfx") for r in rows) else "PTX mix"
    cols = [Col("config"), Col("shared B", justify="right"), Col("regs", justify="right"),
            Col("spill", justify="right"),
            Col("fits", wrap=True, min_width=22 if any(r.ok and not r.fits for r in rows) else None),
            Col("blocks", justify="right", wrap=True, drop=1), Col(mix_name, wrap=True, drop=2),
            Col("s", justify="right", drop=3)]
    if predicted:
        cols.append(Col("pred ms*" if datasheet else "pred ms", justify="right"))
    for r in rows:
        if not r.ok:
            cells = [labels[r.index], "-", "-", "-", Text("FAILED: " + (r.error or "unknown error"), style="red"),
                     "-", "-", f"{r.compile_seconds:.2f}"]
        else:
            fits = Text("yes", style="green") if r.fits else Text("NO: " + _misfit(r), style="bold red")
            occ = f"{r.blocks_per_sm}/SM {r.limited_by}" if r.blocks_per_sm is not None else "-"
            if r.waves_per_simd is not None:  # AMD: waves per SIMD
                occ = f"{r.waves_per_simd} waves/SIMD {r.limited_by}"
            cells = [labels[r.index], str(r.shared), _n(r.registers), _n(r.spills), fits, occ,
                     " ".join(f"{_MIX_SHORT.get(m, m)}:{r.mix[m]}" for m in mix_cols if r.mix.get(m)),
                     "cache" if r.cached else f"{r.compile_seconds:.2f}"]
        if predicted:
            cells.append(f"{r.predicted_ms:.4g}" if r.ok and r.predicted_ms is not None else "-")
        for c, cell in zip(cols, cells):
            c.cells.append(cell)
    return FittedTable(cols, box=box.SIMPLE_HEAD, title=title, title_justify="left", title_style="bold",
                       show_edge=False, pad_edge=False,
                       left_out="left out at this width: {names} (a wider --width shows them; --json has them)")


def _short_labels(rows: list[SweepRow]) -> tuple[dict[int, str], str]:
    """Each row's config showing only what varies; the fixed part once, for the title."""
    def fields(r: SweepRow) -> list[tuple[str, str]]:
        return [*((k, f"{k}={v}") for k, v in r.constexprs.items()), ("w", f"w{r.num_warps}"),
                ("s", f"s{r.num_stages}"), ("arch", str(r.arch)), ("dtype", str(r.dtype or ""))]

    if len(rows) < 2:
        return {r.index: r.config for r in rows}, ""
    values: dict[str, set] = {}
    for r in rows:
        for k, text in fields(r):
            values.setdefault(k, set()).add(text)
    varying = {k for k, v in values.items() if len(v) > 1}
    labels = {r.index: " ".join(t for k, t in fields(r) if k in varying and t) or r.config for r in rows}
    fixed = " ".join(t for k, t in fields(rows[0]) if k not in varying and t)
    return labels, fixed


def _misfit(r: SweepRow) -> str:
    parts = []
    if r.shared is not None and r.shared_limit is not None and r.shared > r.shared_limit:
        parts.append(f"shared {r.shared} B > {r.shared_limit} B")
    parts += [p for p in r.problems if "shared memory" not in p]
    return "; ".join(parts) or "; ".join(r.problems)


def _n(v) -> str:
    return "?" if v is None else str(v)


def _sweep_title(result: SweepResult, rows: list[SweepRow]) -> str:
    ok = sum(r.ok for r in result.rows)
    fits = sum(bool(r.ok and r.fits) for r in result.rows)
    cached = sum(r.cached for r in result.rows)
    bits = [f"{result.kernel} ({result.target})", f"{result.finished}/{result.requested} configs",
            f"{ok} compiled", f"{fits} fit", f"{result.finished - ok} failed"]
    if cached:
        bits.append(f"{cached} from cache")
    if len(rows) != result.finished:
        bits.append(f"{len(rows)} shown")
    bits.append(f"{result.seconds:.1f} s on {result.workers} worker{'s' if result.workers != 1 else ''}")
    if result.from_autotune:
        bits.append("grid from @triton.autotune configs")
    return "sweep · " + " · ".join(bits)
