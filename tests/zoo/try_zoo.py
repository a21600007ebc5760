"""Try every zoo command as a user types it and print one line per (kernel, arch).

    python tests/zoo/try_zoo.py [--arch sm_90a,...] [--only NAME,...] [--jobs N]

Runs `tritonscope compile TARGET ARGS --arch A --stage none` from the repository root
(the venv's tritonscope beside this interpreter) and compares the exit code with the
manifest's expectation. A developer tool for tests/zoo/STATUS.md, not a test.
"""
import argparse
import concurrent.futures
import os
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import manifest  # noqa: E402


def run_one(entry, arch, timeout):
    exe = os.path.join(os.path.dirname(sys.executable), "tritonscope")
    cmd = [exe, "compile", entry["target"], *shlex.split(manifest.args_for(entry, arch)),
           "--arch", arch, "--stage", "none", "--no-color", "--width", "200"]
    start = time.time()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
        code, out = proc.returncode, (proc.stdout + proc.stderr)
    except subprocess.TimeoutExpired:
        code, out = "timeout", ""
    want = manifest.expect_for(entry, arch)
    want_code = 0 if want == "ok" else want["exit"]
    return entry["name"], arch, code, want_code, time.time() - start, _message(out, code)


def _message(out, code):
    """The error paragraph (wrapped lines joined), or the summary's first line on success."""
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line.lower().startswith("error"):
            text = [line.strip()]
            for more in lines[i + 1:]:
                if more.lower().startswith("hint") or not more.strip():
                    break
                text.append(more.strip())
            return [" ".join(text)]
    return [] if code == 0 else [ln.strip() for ln in lines[-2:]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default=",".join(manifest.ARCHES))
    ap.add_argument("--only", default="")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=300)
    opts = ap.parse_args()
    only = set(filter(None, opts.only.split(",")))
    jobs = [(e, a) for a in opts.arch.split(",") for e in manifest.ZOO if not only or e["name"] in only]
    with concurrent.futures.ThreadPoolExecutor(opts.jobs) as pool:
        for name, arch, code, want, secs, msg in pool.map(lambda j: run_one(*j, opts.timeout), jobs):
            verdict = "PASS" if code == want else "FAIL"
            print(f"{verdict} {name} {arch} exit={code} want={want} {secs:.0f}s :: {' | '.join(msg)}", flush=True)


if __name__ == "__main__":
    main()
