"""Speed check for issue 23: how long the slowest layout drawing takes, up to 256x256.

    python benchmarks/layout_speed.py

Draws every encoding/shape of Triton's lit tests kept under
tests/data/layout_corpus (lit_encodings.json and lit_issue23.json) plus the
dot operands of #blocked accumulators that Triton's accelerate-matmul tests
use at 128x128 to 128x256 (each element held by up to 128 threads: the case
that took 12 s as text and 12 s as SVG when the drawing walked every owner),
at every shape up to 256 per dimension.  For each: the time to compute the
layout (describe), to draw it as text (the panel, --hardware included) and
as SVG.  Prints the slowest few and the slowest drawing time; exits 1 if any
drawing takes a second or more.  Not a timed test: run it by hand.
"""

from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path

from rich.console import Console

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tritonscope.core.errors import UsageError  # noqa: E402
from tritonscope.language.layouts import describe, parse_encoding  # noqa: E402
from tritonscope.outputs.render.layout_view import layout_panel, layout_svg  # noqa: E402

LIMIT_S = 1.0
CORPUS = ROOT / "tests" / "data" / "layout_corpus"
# From test/TritonGPU/accelerate-matmul.mlir, combine.mlir and Hopper/WarpSpecialization/ws_code_partition.mlir
FMA_OPERANDS = [
    ("#ttg.dot_op<{opIdx = 0, parent = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 64], "
     "warpsPerCTA = [2, 2], order = [1, 0]}>}>", (128, 128)),
    ("#ttg.dot_op<{opIdx = 0, parent = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], "
     "warpsPerCTA = [1, 4], order = [1, 0]}>}>", (128, 128)),
    ("#ttg.dot_op<{opIdx = 0, parent = #ttg.blocked<{sizePerThread = [4, 4], threadsPerWarp = [1, 32], "
     "warpsPerCTA = [4, 1], order = [1, 0]}>}>", (128, 256)),
    ("#ttg.dot_op<{opIdx = 1, parent = #ttg.blocked<{sizePerThread = [4, 4], threadsPerWarp = [1, 32], "
     "warpsPerCTA = [32, 1], order = [1, 0]}>}>", (128, 128)),
    ("#ttg.dot_op<{opIdx = 0, parent = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], "
     "warpsPerCTA = [4, 1], order = [1, 0]}>}>", (256, 256)),
]


def cases() -> list[tuple[str, tuple[int, ...]]]:
    out = list(FMA_OPERANDS)
    for c in json.loads((CORPUS / "lit_encodings.json").read_text())["cases"]:
        out += [(c["text"], tuple(s)) for s in c["shapes"]]
    issue = json.loads((CORPUS / "lit_issue23.json").read_text())
    out += [(c["text"], tuple(c["shape"])) for c in issue["differences"] + issue["families"]]
    return [(t, s) for t, s in out if max(s) <= 256]


def main() -> int:
    rows = []
    for text, shape in cases():
        enc = parse_encoding(text, known_only=False)
        t0 = time.perf_counter()
        try:
            use = describe(enc, shape)
        except UsageError:
            continue
        t1 = time.perf_counter()
        console = Console(file=io.StringIO(), width=120, color_system=None)
        console.print(layout_panel(use, width=120, hardware=True))
        t2 = time.perf_counter()
        layout_svg(use)
        t3 = time.perf_counter()
        rows.append((max(t2 - t1, t3 - t2), t1 - t0, t2 - t1, t3 - t2, "x".join(map(str, shape)), text))
    rows.sort(reverse=True)
    print(f"{len(rows)} drawings (text and SVG), shapes up to 256x256")
    for worst, comp, txt, svg, shape, text in rows[:5]:
        print(f"  compute {comp:6.3f} s  text {txt:6.3f} s  svg {svg:6.3f} s  {shape:>9}  {text[:90]}")
    slowest = rows[0][0] if rows else 0.0
    print(f"slowest drawing: {slowest:.3f} s (limit {LIMIT_S:.1f} s)")
    return 0 if slowest < LIMIT_S else 1


if __name__ == "__main__":
    sys.exit(main())
