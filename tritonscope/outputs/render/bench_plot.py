"""A BenchReport as a PNG/SVG figure (matplotlib, the optional 'plot' extra).

One config: throughput per shape, kernel beside torch.  A sweep: throughput
per config, with each config's shared memory, registers and instruction mix
below it (seed 002's third objective); configs that do not fit are marked.
"""

from __future__ import annotations

import io


def plot_bytes(report, fmt: str) -> bytes:
    """The figure as PNG or SVG bytes (the caller writes them atomically)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tritonscope.core.model import ARCHES
    from tritonscope.outputs.render.bench_view import _throughput, short_config

    rows = report.rows
    names = [f"{short_config(r, report)}\n{'x'.join(map(str, r.shape or ()))}" for r in rows]
    values = [(_throughput(r.kernel)[0] or 0.0) if r.status == "ok" else 0.0 for r in rows]  # no bar for a wrong row
    unit = next((_throughput(r.kernel)[1] for r in rows if r.kernel), "TFLOP/s")
    torch_values = [(_throughput(r.torch)[0] or 0.0) for r in rows]
    x = range(len(rows))
    sweep = len({short_config(r, report) for r in rows}) > 1

    fig, axes = plt.subplots(4 if sweep else 1, 1, figsize=(max(6, 1.6 * len(rows)), 12 if sweep else 4.5),
                             squeeze=False)
    ax = axes[0][0]
    ax.bar([i - 0.2 for i in x], values, width=0.4, label="kernel", color="tab:blue")
    if any(torch_values):
        ax.bar([i + 0.2 for i in x], torch_values, width=0.4, label="torch", color="tab:purple")
    for i, r in enumerate(rows):
        if r.kernel is None:
            ax.text(i, 0, r.status, rotation=90, ha="center", va="bottom", color="tab:red", fontsize=8)
        elif r.ratio is not None:
            ax.text(i - 0.2, values[i], f"{r.ratio:.2f}x", ha="center", va="bottom", fontsize=8)
    ax.set_ylabel(unit)
    ax.set_title(f"{report.target} on {report.device}, triton {report.versions.get('triton')}"
                 f" (x: torch time / kernel time)", fontsize=9)
    ax.legend(fontsize=8)
    ax.set_xticks(list(x), names if not sweep else [""] * len(rows), fontsize=7)
    if sweep:
        arch = ARCHES.get(report.arch)
        ax = axes[1][0]
        shared = [(r.shared or 0) / 1024 for r in rows]
        ax.bar(list(x), shared, color=["tab:red" if r.status == "out of resources" else "tab:green" for r in rows])
        if arch:
            ax.axhline(arch.max_shared_per_block / 1024, color="tab:red", linestyle="--", linewidth=1,
                       label=f"{arch.name} limit {arch.max_shared_per_block // 1024} KiB")
            ax.legend(fontsize=8)
        ax.set_ylabel("shared KiB")
        ax.set_xticks(list(x), [""] * len(rows))
        ax = axes[2][0]
        ax.bar(list(x), [r.registers or 0 for r in rows], color="tab:orange")
        ax.set_ylabel("registers/thread")
        ax.set_xticks(list(x), [""] * len(rows))
        ax = axes[3][0]
        classes = sorted({k for r in rows for k in r.mix}, key=lambda k: -sum(r.mix.get(k, 0) for r in rows))[:8]
        bottom = [0] * len(rows)
        for k in classes:
            vals = [r.mix.get(k, 0) for r in rows]
            ax.bar(list(x), vals, bottom=bottom, label=k)
            bottom = [b + v for b, v in zip(bottom, vals)]
        ax.set_ylabel("SASS instructions")
        ax.legend(fontsize=6, ncol=2)
        ax.set_xticks(list(x), names, fontsize=7)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt)
    plt.close(fig)
    return buffer.getvalue()
