"""Sweep throughput: workers on every core vs serial, and a warm repeat vs a cold sweep.

    python benchmarks/sweep_speed.py            # targets: parallel >= 1.7x serial, warm >= 10x cold

Each measurement runs in a fresh Python process with fresh TRITON_CACHE_DIR
and TRITONSCOPE_CACHE_DIR (cold), except the warm repeat, which reuses the
caches of the parallel run.  The time is that of the whole command
(`tritonscope sweep ...`), start-up included.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

# The issue's own example grid (seed 004's tuning space): 4 x 3 x 3 = 36 configs.
GRID = ["sweep", "matmul", "-c", "BLOCK=16,32,64,128", "--num-warps", "2,4,8", "--num-stages", "1,2,3",
        "--arch", "sm_90", "--json"]


def run(jobs: int, caches: str) -> float:
    env = dict(os.environ, TRITON_CACHE_DIR=os.path.join(caches, "triton"),
               TRITONSCOPE_CACHE_DIR=os.path.join(caches, "tritonscope"))
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tritonscope", *GRID, "--jobs", str(jobs)], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    configs = 4 * 3 * 3
    with tempfile.TemporaryDirectory() as serial_dir, tempfile.TemporaryDirectory() as parallel_dir:
        serial = run(1, serial_dir)
        parallel = run(2, parallel_dir)
        warm = run(2, parallel_dir)
    speedup, warm_x = serial / parallel, parallel / warm
    print(f"grid: {configs} configs of matmul on sm_90a ({os.cpu_count()} cores)")
    print(f"cold, serial (1 worker):    {serial:6.2f} s  {configs / serial:5.2f} configs/s")
    print(f"cold, parallel (2 workers): {parallel:6.2f} s  {configs / parallel:5.2f} configs/s  "
          f"{speedup:.2f}x serial (target >= 1.7x) {'OK' if speedup >= 1.7 else 'MISSED'}")
    print(f"warm repeat (2 workers):    {warm:6.2f} s  {configs / warm:5.2f} configs/s  "
          f"{warm_x:.1f}x the cold sweep (target >= 10x) {'OK' if warm_x >= 10 else 'MISSED'}")


if __name__ == "__main__":
    main()
