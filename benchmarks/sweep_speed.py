"""Sweep throughput: workers on every core vs serial, a Dask cluster, and a warm repeat vs a cold sweep.

    python benchmarks/sweep_speed.py            # targets: parallel >= 1.7x serial, warm >= 10x cold
    python benchmarks/sweep_speed.py --dask     # + the same grid on a Dask LocalCluster of 2 workers
    python benchmarks/sweep_speed.py --dask --small   # a 12-config grid (each run well under a minute)
    python benchmarks/sweep_speed.py --dask --workers 8   # 8 workers (and an 8-worker cluster) on a bigger machine

Each measurement runs in a fresh Python process with fresh TRITON_CACHE_DIR
and TRITONSCOPE_CACHE_DIR (cold), except the warm repeat, which reuses the
caches of the parallel run.  The time is that of the whole command
(`tritonscope sweep ...`), start-up included.  With --dask, two more cold
runs: `--scheduler local` (the command starts a LocalCluster of 2 worker
processes and stops it: start-up included), and `--scheduler tcp://...` to
a LocalCluster of 2 workers this script started beforehand and warmed with
one task (what a standing cluster costs per sweep).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

# The issue's own example grid (seed 004's tuning space): 4 x 3 x 3 = 36 configs.
GRID = ["sweep", "matmul", "-c", "BLOCK=16,32,64,128", "--num-warps", "2,4,8", "--num-stages", "1,2,3",
        "--arch", "sm_90", "--json"]
# 2 x 2 x 3 = 12 configs of the same space.
SMALL = ["sweep", "matmul", "-c", "BLOCK=16,32", "--num-warps", "2,4", "--num-stages", "1,2,3",
         "--arch", "sm_90", "--json"]


def run(grid: list[str], caches: str, *extra: str) -> float:
    env = dict(os.environ, TRITON_CACHE_DIR=os.path.join(caches, "triton"),
               TRITONSCOPE_CACHE_DIR=os.path.join(caches, "tritonscope"))
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tritonscope", *grid, *extra], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def standing_cluster(workers: int):
    """A LocalCluster of `workers` worker processes whose workers have imported Triton (one warm-up task)."""
    import logging

    import distributed

    cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       dashboard_address=":0",
                                       silence_logs=logging.ERROR)
    with distributed.Client(cluster) as client:
        client.run(lambda: __import__("triton") and None)
    return cluster


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dask", action="store_true", help="also run the grid on a Dask LocalCluster")
    parser.add_argument("--small", action="store_true", help="the 12-config grid instead of the 36-config one")
    parser.add_argument("--workers", type=int, default=2, help="workers for --jobs and the Dask clusters")
    opts = parser.parse_args()
    n = str(opts.workers)
    grid = SMALL if opts.small else GRID
    configs = 12 if opts.small else 36
    with tempfile.TemporaryDirectory() as serial_dir, tempfile.TemporaryDirectory() as parallel_dir:
        serial = run(grid, serial_dir, "--jobs", "1")
        parallel = run(grid, parallel_dir, "--jobs", n)
        warm = run(grid, parallel_dir, "--jobs", n)
    speedup, warm_x = serial / parallel, parallel / warm
    print(f"grid: {configs} configs of matmul on sm_90a ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})")
    print(f"cold, serial (1 worker):    {serial:6.2f} s  {configs / serial:5.2f} configs/s")
    print(f"cold, parallel ({n} workers): {parallel:6.2f} s  {configs / parallel:5.2f} configs/s  "
          f"{speedup:.2f}x serial (target >= 1.7x) {'OK' if speedup >= 1.7 else 'MISSED'}")
    print(f"warm repeat ({n} workers):    {warm:6.2f} s  {configs / warm:5.2f} configs/s  "
          f"{warm_x:.1f}x the cold sweep (target >= 10x) {'OK' if warm_x >= 10 else 'MISSED'}")
    if not opts.dask:
        return
    with tempfile.TemporaryDirectory() as local_dir, tempfile.TemporaryDirectory() as standing_dir:
        local = run(grid, local_dir, "--scheduler", "local", "--jobs", n)
        cluster = standing_cluster(opts.workers)
        try:
            standing = run(grid, standing_dir, "--scheduler", cluster.scheduler_address)
        finally:
            cluster.close()
    print(f"cold, Dask --scheduler local ({n} workers, cluster start-up included): {local:6.2f} s  "
          f"{configs / local:5.2f} configs/s  {serial / local:.2f}x serial")
    print(f"cold, Dask standing LocalCluster ({n} workers, tcp://):                {standing:6.2f} s  "
          f"{configs / standing:5.2f} configs/s  {serial / standing:.2f}x serial")


if __name__ == "__main__":
    main()
