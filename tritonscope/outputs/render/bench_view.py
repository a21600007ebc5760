"""A BenchReport for the terminal: the table and a bar chart of throughput."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

BAR = 40


def _shape(row) -> str:
    return "x".join(map(str, row.shape)) if row.shape else ""


def _tokens(row, report) -> list[str]:
    label = row.label.replace(f" {report.arch}", "")
    if row.dtype:
        label = label.removesuffix(f" {row.dtype}")
    return label.split()


def common_config(report) -> list[str]:
    """The config settings every row shares (shown once, above the table)."""
    rows = [_tokens(r, report) for r in report.rows]
    if not rows:
        return []
    return [t for t in rows[0] if all(t in other for other in rows[1:])]


def short_config(row, report) -> str:
    """What sets this row's config apart from the others (arch, dtype and shared settings dropped)."""
    shared = set(common_config(report)) if len(report.rows) > 1 else set()
    return " ".join(t for t in _tokens(row, report) if t not in shared) or "as above"


def _throughput(timing):
    """(value, unit) used for bars: TFLOP/s when the launch counts flops, else GB/s."""
    if timing is None:
        return None, ""
    if timing.tflops is not None:
        return timing.tflops, "TFLOP/s"
    return timing.gbs, "GB/s"


def _mix(mix: dict[str, int], n: int = 3) -> str:
    top = sorted(mix.items(), key=lambda kv: -kv[1])[:n]
    return ", ".join(f"{v} {k}" for k, v in top)


STATUS_STYLE = {"ok": "green", "wrong": "bold red", "failed": "red", "out of resources": "yellow",
                "measurement error": "bold red"}


def bench_table(report) -> Table:
    """One row per config; each column holds one unit (the torch figures have columns of their own)."""
    t = Table(title=None, box=None, pad_edge=False, header_style="bold")
    torch_rows = [r.torch for r in report.rows if r.torch]
    torch_cols = (["torch ms"] if torch_rows else []) \
        + (["torch TFLOP/s"] if any(tt.tflops is not None for tt in torch_rows) else []) \
        + (["torch GB/s"] if any(tt.tflops is None and tt.gbs is not None for tt in torch_rows) else [])
    cols = ["config", "shape", "ms", "TFLOP/s", "GB/s", "% peak", *torch_cols, "x torch", "rel err",
            "regs", "shared", "instruction mix (SASS)", "status"]
    # spill bytes per thread (stack frame + local; summary.Spills), only when a row spills
    spills = any(getattr(r, "spills", None) for r in report.rows)
    if spills:
        cols.insert(cols.index("shared"), "spill B")
    for col in cols:
        t.add_column(col, justify="left" if col in ("config", "shape", "instruction mix (SASS)", "status") else "right",
                     overflow="fold")
    for r in report.rows:
        k, tt = r.kernel, r.torch
        why = r.problem or getattr(r, "withheld", None)
        status = r.status if not why else f"{r.status}: {why}"
        style = STATUS_STYLE.get(r.status, "")
        torch_cells = {
            "torch ms": f"{tt.ms:.4f}" if tt else "",
            "torch TFLOP/s": f"{tt.tflops:.1f}" if tt and tt.tflops is not None else "",
            "torch GB/s": f"{tt.gbs:.0f}" if tt and tt.tflops is None and tt.gbs is not None else "",
        }
        cells = [
            short_config(r, report), _shape(r),
            f"{k.ms:.4f}" if k else "",
            f"{k.tflops:.1f}" if k and k.tflops is not None else "",
            f"{k.gbs:.0f}" if k and k.gbs is not None else "",
            f"{r.peak_fraction:.1%}" if r.peak_fraction is not None and r.peak_fraction <= 1.0 else "",
            *(torch_cells[c] for c in torch_cols),
            f"{r.ratio:.2f}x" if r.ratio is not None else "",
            f"{r.check['rel_error']:.1e}" if r.check else "",
            str(r.registers) if r.registers is not None else "",
            f"{r.shared:,}" if r.shared is not None else "",
            _mix(r.mix),
            Text(status, style=style),
        ]
        if spills:
            cells.insert(cols.index("spill B"), _spill(r))
        t.add_row(*cells)
    return t


def _spill(row) -> str:
    """'3,960 (2,981 STL, 3,814 LDL)': the bytes, and the instructions that move them."""
    if row.spills is None:
        return ""
    ops = getattr(row, "spill_stores", None), getattr(row, "spill_loads", None)
    return f"{row.spills:,}" + (f" ({ops[0]:,} STL, {ops[1]:,} LDL)" if row.spills and None not in ops else "")


def bar_chart(report) -> Group:
    """One bar per config and one per torch baseline (per shape), scaled to the best."""
    bars: list[tuple[str, float, str, str]] = []
    seen_torch = set()
    for r in report.rows:
        # only a right result with a possible figure gets a bar
        value, unit = _throughput(r.kernel) if r.status == "ok" else (None, "")
        name = f"{short_config(r, report)} {_shape(r)}".strip()
        if value is None:
            bars.append((name, 0.0, "", r.status))
            continue
        bars.append((name, value, unit, "kernel"))
        tv, tunit = _throughput(r.torch)
        key = (r.shape, r.torch_what)
        if tv is not None and key not in seen_torch:
            seen_torch.add(key)
            bars.append((f"{r.torch_what} {_shape(r)}", tv, tunit, "torch"))
    best = max((v for _, v, _, _ in bars), default=0.0) or 1.0
    width = max((len(n) for n, *_ in bars), default=10)
    lines = [Text("throughput", style="bold")]
    for name, value, unit, kind in bars:
        line = Text(f"{name:<{width}} ")
        if kind in ("kernel", "torch"):
            n = max(1, round(value / best * BAR)) if value else 0
            line.append("█" * n, style="cyan" if kind == "kernel" else "magenta")
            line.append(f" {value:.1f} {unit}")
        else:
            line.append(f"({kind})", style="yellow")
        lines.append(line)
    return Group(*lines)


def bench_view(report) -> Group:
    v = report.versions
    head = Text.assemble(
        ("bench ", "bold"), f"{report.device} ({report.arch})  |  triton {v.get('triton')}  torch {v.get('torch')}"
        f"  cuda {v.get('cuda')}  |  do_bench median, {report.warmup_ms} ms warm-up, {report.rep_ms} ms reps, L2 flushed")
    against = (f"the {report.peak_table} dense peak ({report.peaks_source})" if report.peak_table else
               "no known dense peak (this GPU's datasheet peaks are not in core/gpus.json)")
    notes = [Text(f"% peak: against {against}; "
                  "GB/s = (bytes read + bytes written) / time, each input read once and each output written once.",
                  style="dim")]
    if any(r.tf32 for r in report.rows):
        notes.append(Text("TF32 in play: fp32 inputs to tl.dot are multiplied in TF32 (Triton's default); "
                          "the error and % peak are against TF32.", style="yellow"))
    if any(r.torch_what and "TF32 off" in r.torch_what for r in report.rows):
        notes.append(Text("torch.matmul on fp32 runs in full fp32 (torch.backends.cuda.matmul.allow_tf32 is False), "
                          "so 'x torch' compares TF32 with fp32.", style="yellow"))
    shared = common_config(report)
    config = Text(f"config: {' '.join(shared)}", style="dim") if shared and len(report.rows) > 1 else Text("")
    return Group(head, config, bench_table(report), Text(""), bar_chart(report), *notes)
