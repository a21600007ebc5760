"""Start-up cost of `tritonscope compile`: cold, warm, and a warm repeat, against a bare Triton compile.

    python benchmarks/warm_speed.py             # 5 rounds; goals: warm repeat <= 0.25x, cold <= 1.2x
    python benchmarks/warm_speed.py --rounds 9
    python benchmarks/warm_speed.py --against /tmp/old   # also an older checkout, interleaved

With --against DIR (another checkout of tritonscope, e.g. `git worktree add
/tmp/old REV`), the cold and warm kinds also run from DIR's code in the same
rounds, so a refactoring is judged before/after on one machine at one load.

The yardstick is a *cold bare compile*: a fresh `python -c` that only
imports Triton, loads samples/matmul.py and calls `triton.compile` for the
same specialization (BLOCK=16, 4 warps, 3 stages, sm_90a), with an empty
Triton cache.  A second yardstick, "bare cold + SASS", also asks Triton
for the kernel's SASS (`kernel.asm["sass"]`), as a user who wants to read
it would: Triton runs cuobjdump -sass, whose set-up costs what nvdisasm's
does.  Against them, each in a fresh process running
`tritonscope compile matmul --block 16 --arch sm_90` (output to a file):

- cold:        both caches empty (Triton's and tritonscope's);
- cold, key not early: the same, through the typer app alone (no entry
                 point, so Triton hashes its own key when it compiles);
- warm, no own cache: Triton's cache warm, `--no-cache` (what every repeat
                 cost before the result cache: Triton's JIT hashes libtriton);
- result cache: both caches warm, replay off (TRITONSCOPE_REPLAY=0): the
                 result cache answers before Triton is imported, and the
                 output is drawn again;
- warm repeat: both caches warm: the kept output of the same command line
                 is written back before typer, rich or Triton load (replay.py).

The kinds run interleaved, round after round, and each figure is the median
of its rounds, so a busy machine slows them alike.  Bytecode is cached (in a
temporary PYTHONPYCACHEPREFIX) as on a user's machine, after one unmeasured
round.  CPU time (user + system, children included) is printed beside the
wall time: on a shared machine it is the steadier of the two.

Where a cold run's time goes (2-core machine, Triton 3.9.0, typer 0.28,
2026-11-22; wall seconds from a timeline of single cold runs): Python and
tritonscope's command line (typer, rich) 0.19; parsing the options 0.03;
loading the kernel, which imports Triton, 0.13; waiting for Triton's cache
key 0.01-0.08 (it is hashed on a thread since launch, see
triton_api.start_key_digest; Triton's own hashing of its 500 MB library
takes 0.31-0.35 s in the bare compile); the compile 0.18-0.23; nvdisasm and
cuobjdump 0.34-0.36 (the views' modules and lexers load meanwhile, 0.08);
the analysis 0.07; drawing 0.06.

Why the cold goal (1.2x) is out of reach here: once Triton can compile, a
cold run still has the compile, nvdisasm and the output in sequence, each
needing the one before (0.18 + 0.33 + 0.13 = 0.64 s), and before it Triton
must be imported and its key made (at least 0.3 s, the hash alone, even on
a second core).  That is about 1.0 s, 1.4x a 0.7 s bare compile, however
the rest is overlapped.  nvdisasm's 0.3 s is its own set-up for the arch:
it reads the cubin first, then computes for 0.3 s whatever the cubin's
size; it needs a regular file (a FIFO fails: "Memory allocation failure"),
so it cannot be started before the cubin exists; `cuobjdump -sass` costs
the same.

Tried, measured and kept: the key's digest on a thread from launch (the
"cold, key not early" row is the same run without it; a result-cache answer pays up to 0.25 s of CPU on the other core for a
digest it then does not need); nvdisasm and cuobjdump at once, with the
views loading meanwhile (about -0.08 s); typer < 0.29 (0.29 imports
pydantic and builds an adapter per option: -0.18 s on every start that is
not a replay).  Tried and dropped: calling Triton's triton_key() on a
thread (the thread's import of Triton and typer take turns on the GIL:
slower); hashing in 8 MB pieces (between pieces the thread waits up to
5 ms for the GIL: 1.5 s instead of 0.3 s; 64 MB pieces over a mapping of
the file take 0.33 s).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMAND = ["-m", "tritonscope", "compile", "matmul", "--block", "16", "--arch", "sm_90"]
# The same command through the typer app alone, skipping the entry point (launch.py): no replay, and
# Triton hashes its own key when it compiles (no early digest).
LATE_KEY = ["-c", "from tritonscope.cli import main; main()", *COMMAND[2:]]

# What `tritonscope compile matmul --block 16 --arch sm_90` compiles, as plain Triton.
BARE = """
import importlib.util, sys, warnings
warnings.filterwarnings("ignore")
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
spec = importlib.util.spec_from_file_location("matmul_sample", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
aligned = [["tt.divisibility", 16]]
src = ASTSource(fn=module.matmul_kernel,
                signature={"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "M": "i32", "N": "i32",
                           "K": "i32", "BLOCK": "constexpr"},
                constexprs={(6,): 16}, attrs={(i,): aligned for i in range(6)})
kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "num_stages": 3})
assert kernel.asm["cubin"]
"""
# The same, plus the SASS as Triton itself gives it (CompiledKernel.asm["sass"]: cuobjdump -sass).
BARE_SASS = BARE + 'assert "HMMA" in kernel.asm["sass"]\n'


def timed(argv: list[str], env: dict[str, str], cwd: Path = ROOT) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) for one run; `python -m` imports tritonscope from `cwd`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with open(os.devnull, "w") as out:
        subprocess.run([sys.executable, *argv], env=env, check=True, stdout=out, cwd=cwd)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--against", type=Path, default=None,
                        help="another tritonscope checkout whose cold and warm runs interleave with this one's")
    args = parser.parse_args()
    rounds, against = args.rounds, args.against
    if against is not None and not (against / "tritonscope" / "__init__.py").is_file():
        parser.error(f"--against {against}: no tritonscope package there")

    work = Path(tempfile.mkdtemp(prefix="tritonscope-warm-"))
    base = {k: v for k, v in os.environ.items()
            if k not in ("PYTHONDONTWRITEBYTECODE", "TRITON_ALWAYS_COMPILE", "TRITON_CACHE_DIR",
                         "TRITONSCOPE_CACHE_DIR")}
    base["PYTHONPYCACHEPREFIX"] = str(work / "pyc")
    sample = str(ROOT / "samples" / "matmul.py")
    kinds = ("bare cold", "bare cold + SASS", "cold", "cold, key not early", "warm, no own cache", "result cache", "warm repeat")
    compared = ("cold", "warm, no own cache", "result cache", "warm repeat")
    if against is not None:
        kinds += tuple(f"{k} (against)" for k in compared)
    results: dict[str, list[tuple[float, float]]] = {k: [] for k in kinds}
    try:
        for n in range(rounds + 1):  # round 0 fills the bytecode cache and is not counted
            triton_cache, own_cache = work / f"t{n}", work / f"s{n}"
            fresh = dict(base, TRITON_CACHE_DIR=str(work / f"b{n}"))
            both = dict(base, TRITON_CACHE_DIR=str(triton_cache), TRITONSCOPE_CACHE_DIR=str(own_cache))
            figures = {
                "bare cold": timed(["-c", BARE, sample], fresh),
                "bare cold + SASS": timed(["-c", BARE_SASS, sample], dict(fresh, TRITON_CACHE_DIR=str(work / f"c{n}"))),
                "cold": timed(COMMAND, both),
                "cold, key not early": timed(LATE_KEY, dict(base, TRITON_CACHE_DIR=str(work / f"l{n}"),
                                                            TRITONSCOPE_CACHE_DIR=str(work / f"m{n}"))),
                "warm, no own cache": timed(COMMAND + ["--no-cache"], both),
                "result cache": timed(COMMAND, dict(both, TRITONSCOPE_REPLAY="0")),
                "warm repeat": timed(COMMAND, both),
            }
            if against is not None:
                old = dict(base, TRITON_CACHE_DIR=str(work / f"ot{n}"), TRITONSCOPE_CACHE_DIR=str(work / f"os{n}"))
                figures["cold (against)"] = timed(COMMAND, old, against)
                figures["warm, no own cache (against)"] = timed(COMMAND + ["--no-cache"], old, against)
                figures["result cache (against)"] = timed(COMMAND, dict(old, TRITONSCOPE_REPLAY="0"), against)
                figures["warm repeat (against)"] = timed(COMMAND, old, against)
            if n:
                for kind, figure in figures.items():
                    results[kind].append(figure)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    wall = {k: statistics.median(w for w, _ in v) for k, v in results.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in results.items()}
    bare_wall, bare_cpu = wall["bare cold"], cpu["bare cold"]
    goals = {"cold": 1.2, "warm repeat": 0.25}
    print(f"tritonscope compile matmul --block 16 --arch sm_90: median of {rounds} rounds, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    print(f"{'':30} {'wall s':>7} {'x bare':>7} {'cpu s':>7} {'x bare':>7}")
    for kind in kinds:
        line = (f"{kind:30} {wall[kind]:7.3f} {wall[kind] / bare_wall:6.2f}x "
                f"{cpu[kind]:7.3f} {cpu[kind] / bare_cpu:6.2f}x")
        if kind in goals:
            ok = wall[kind] / bare_wall <= goals[kind]
            line += f"   goal <= {goals[kind]}x (wall): {'OK' if ok else 'MISSED'}"
        print(line)
    print(f"cold against a bare compile that also asks Triton for its SASS: "
          f"{wall['cold'] / wall['bare cold + SASS']:.2f}x wall, {cpu['cold'] / cpu['bare cold + SASS']:.2f}x CPU")
    if against is not None:
        print(f"this checkout against {against}: " + ", ".join(
            f"{k} {wall[k] / wall[k + ' (against)']:.2f}x wall ({cpu[k] / cpu[k + ' (against)']:.2f}x CPU)" for k in compared))


if __name__ == "__main__":
    main()
