"""How long `tritonscope versions` takes on 100 kernels under two Tritons, cold and warm, and its peak memory.

    python benchmarks/versions_speed.py --a /path/to/triton-3.6/bin/python [--b 3.9.0] [--jobs 2]

The 100 kernels are the samples, each for sm_80, sm_90a, gfx942 and gfx950
with num_warps 2, 4 and 8 (the first 100 of those).  The first run uses
empty caches (Triton's and tritonscope's, in a temporary folder): every
kernel compiles under both versions; the second run reuses them.  Peak
memory is the largest resident set of any one process (this one, or a
compile child: ru_maxrss of RUSAGE_CHILDREN), and the sum over the children
that can run at once is at most --jobs times that.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from dataclasses import asdict


def jobs_100():
    from tritonscope.inputs.kernels import Request, list_samples
    from tritonscope.versions.run import Job

    out = []
    for s in list_samples():
        for arch in ("sm_80", "sm_90a", "gfx942", "gfx950"):
            for w in (2, 4, 8):
                req = Request(target=s.name, arch=arch, num_warps=w)
                out.append(Job(f"{s.name} w{w}", arch, {"kind": "request", "request": asdict(req),
                                                         "default_arch": "sm_90a"}))
    return out[:100]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="side A: a Triton version or a Python path")
    ap.add_argument("--b", default=None, help="side B (default: this environment's Triton)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tritonscope-bench-") as tmp:
        os.environ["TRITON_CACHE_DIR"] = os.path.join(tmp, "triton")
        os.environ["TRITONSCOPE_CACHE_DIR"] = os.path.join(tmp, "ts")
        envs_home = os.path.join(os.path.expanduser("~/.cache"), "tritonscope")
        from tritonscope import versions as V
        from tritonscope.versions import envs as E

        # the environments themselves come from the usual cache (made once, not timed)
        os.environ["TRITONSCOPE_CACHE_DIR"] = envs_home
        sides = [V.Side("A", E.resolve(args.a)), V.Side("B", E.resolve(args.b) if args.b else None)]
        os.environ["TRITONSCOPE_CACHE_DIR"] = os.path.join(tmp, "ts")
        jobs = jobs_100()
        for run in ("cold", "warm"):
            t = time.perf_counter()
            rep = V.compare_versions(jobs, sides[0], sides[1], workers=args.jobs, timeout=600)
            wall = time.perf_counter() - t
            failed = sum(1 for r in rep.rows if r.a is None or r.b is None)
            kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"{run}: {len(jobs)} kernels x 2 versions ({sides[0].label()} vs {sides[1].label()}), "
                  f"--jobs {args.jobs}: {wall:.1f} s wall, {failed} row(s) with an error; peak RSS: "
                  f"this process {me:.0f} MiB, largest child {kids:.0f} MiB", flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
