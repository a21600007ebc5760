"""Speed and memory of `tritonscope passes` (issue 12) against a plain compile.

    python benchmarks/passes_speed.py [--repeat N]

The 128x256x64 grouped matmul (8 warps, 3 stages) on sm_90a, each run in a
fresh process with fresh caches (Triton's and tritonscope's), so every
compile is real:
- plain:  build_spec + compile_artifact (what `tritonscope compile` pays);
- passes: trace_passes (a child compiles with every dump, timing and
          diagnostic on; this process streams the dump into pass steps).
Goals: passes at most 2x the plain compile; this process's peak RSS under
300 MB while it parses a dump of about 21 MB (the compiling child's own peak
is printed too).  Prints the figures; exits 1 if a goal is missed.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time

REQUEST = dict(target="matmul_grouped", arch="sm_90a",
               constexprs={"BLOCK_M": "128", "BLOCK_N": "256", "BLOCK_K": "64"}, num_warps=8, num_stages=3)


def _child(mode: str) -> None:
    from tritonscope.inputs.kernels import Request

    request = Request(**REQUEST)
    started = time.perf_counter()
    out: dict = {}
    if mode == "plain":
        from tritonscope.pipeline.triton_compile import compile_artifact
        from tritonscope.pipeline.binding import build_spec

        compile_artifact(build_spec(request, "sm_90a"))
    else:
        from tritonscope.analyses import passes

        with passes.trace_passes(request, "sm_90a") as trace:
            stream = trace.steps[0].before.path
            with open(stream, "rb") as f:
                lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
            out.update(steps=len(trace.steps), changed=len(trace.changed_steps),
                       dump_mb=os.path.getsize(stream) / 1e6, dump_lines=lines,
                       child_compile_s=trace.compile_seconds, remarks=len(trace.remarks))
    out["seconds"] = time.perf_counter() - started
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["child_rss_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print("@@" + json.dumps(out))


def run(mode: str) -> dict:
    env = dict(os.environ)
    env["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="ts-bench-")
    env["TRITONSCOPE_CACHE_DIR"] = tempfile.mkdtemp(prefix="ts-bench-derived-")
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, "--child", mode], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    line = next((x for x in proc.stdout.splitlines() if x.startswith("@@")), None)
    if line is None:
        raise SystemExit(f"{mode} run failed:\n{proc.stderr[-3000:]}")
    out = json.loads(line[2:])
    out["wall"] = wall
    return out


def main() -> int:
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 2
    plain = min((run("plain") for _ in range(repeat)), key=lambda r: r["wall"])
    traced = min((run("passes") for _ in range(repeat)), key=lambda r: r["wall"])
    ratio = traced["wall"] / plain["wall"]
    print("tritonscope passes vs plain compile: matmul_grouped 128x256x64, 8 warps, 3 stages, sm_90a")
    print(f"  plain compile (fresh process):   {plain['wall']:.2f} s wall, {plain['seconds']:.2f} s in-process, "
          f"peak RSS {plain['rss_mb']:.0f} MB")
    print(f"  passes (fresh process):          {traced['wall']:.2f} s wall, {traced['seconds']:.2f} s in-process "
          f"(child compile {traced['child_compile_s']:.2f} s)")
    print(f"  ratio passes / plain:            {ratio:.2f}x  (goal <= 2x)")
    print(f"  dump: {traced['dump_mb']:.1f} MB, {traced['dump_lines']} lines, {traced['steps']} pass steps, "
          f"{traced['changed']} changed the IR, {traced['remarks']} remarks")
    print(f"  peak RSS: parsing process {traced['rss_mb']:.0f} MB (goal < 300 MB), "
          f"compiling child {traced['child_rss_mb']:.0f} MB")
    ok = ratio <= 2.0 and traced["rss_mb"] < 300
    print("OK" if ok else "GOAL MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    if "--child" in sys.argv:
        _child(sys.argv[sys.argv.index("--child") + 1])
    else:
        sys.exit(main())
