"""What `tritonscope capture` costs a program (issue 11).  Needs a CUDA GPU.

Runs `tests/gpu/capture_programs.py launches N` (N launches of one small
kernel, timed inside the program after warm-up) plain and under capture,
three times each, and prints the per-launch overhead and the wall time of
the whole run (Python start, imports and the compile included).

    python benchmarks/capture_overhead.py [N]
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = [sys.executable, str(ROOT / "tests" / "gpu" / "capture_programs.py"), "launches"]


def run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    started = time.perf_counter()
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True, cwd=ROOT)
    wall = time.perf_counter() - started
    line = next(l for l in out.stdout.splitlines() if l.startswith("LAUNCHES"))
    _, count, seconds = line.split()
    return float(seconds) / int(count), wall


def main() -> None:
    n = sys.argv[1] if len(sys.argv) > 1 else "20000"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    plain, captured = [], []
    with tempfile.TemporaryDirectory(prefix="tritonscope-overhead-") as tmp:
        env["TRITON_CACHE_DIR"] = str(Path(tmp) / "triton")
        run(PROGRAM + [n], env)  # warm Triton's cache: both sides load the kernel from it
        for i in range(3):
            plain.append(run(PROGRAM + [n], env))
            folder = Path(tmp) / f"cap{i}"
            captured.append(run([sys.executable, "-m", "tritonscope", "capture", "-o", str(folder), "--"]
                                + PROGRAM + [n], env))
            shutil.rmtree(folder)
    per_plain = statistics.median(p for p, _ in plain) * 1e6
    per_cap = statistics.median(p for p, _ in captured) * 1e6
    wall_plain = statistics.median(w for _, w in plain)
    wall_cap = statistics.median(w for _, w in captured)
    print(f"capture overhead: {per_plain:.2f} us/launch plain, {per_cap:.2f} us/launch captured "
          f"(+{per_cap - per_plain:.2f} us, {per_cap / per_plain:.2f}x); "
          f"whole run {wall_plain:.2f} s plain, {wall_cap:.2f} s captured ({n} launches, median of 3)")


if __name__ == "__main__":
    main()
