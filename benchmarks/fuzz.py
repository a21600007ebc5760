"""Fuzz parse, annotate and render with mutated real stages.

    python benchmarks/fuzz.py [--cases 10000] [--seed 1] [--series 3.9] [--jobs 4]

Each case takes the checked-in real stages of one compile (tests/data/stages),
damages one or more of them (lines deleted, duplicated, swapped or cut short;
brackets, numbers, quotes and control characters injected; lines spliced in
from another stage) and runs the whole pipeline a saved report or a hand-fed
IR file would go through: analyze (parse + annotate + mix + summary), every
terminal view, the HTML and Markdown reports, the JSON round trip and a diff
against the undamaged compile.  A crash is any exception (a hostile input
may be refused with a typed TritonscopeError, but analysis and rendering of
a damaged stage must never raise at all) and any case that takes longer than
`--limit` seconds (a regex that backtracks without end).

`--jobs N` splits the cases over N processes (case n of shard j uses seed
`seed * 1000 + j`), so a 10,000-case run takes minutes on a many-core
machine; the figures are summed.  Prints the number of cases, crashes (with the first few tracebacks) and
cases per second; exits 1 on a crash.  tests/test_fuzz.py runs a few hundred
cases of the same harness.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import signal
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STAGES_DIR = ROOT / "tests" / "data" / "stages"
ORDER = ("python", "ttir", "ttgir", "llir", "ptx", "sass")

# What damage looks like: MLIR/PTX/SASS punctuation, numbers at the edges,
# escapes, multi-byte text and the characters our parsers split on.
_SNIPPETS = ["<", ">", "{", "}", "[", "]", "(", ")", "#", "%", '"', "!", ":", ",", "=", "x", ".", ";", "@",
             "loc(", "#loc", "loc(#loc99)", "#ttg.blocked<{", "tensor<", "x0x", "-1", "0", "4294967296",
             "99999999999999999999", "\x1b[2J", "\x1b]52;c;AAAA\x07", "\u202e", "é", "\t", "\\", "//##",
             ".loc 1 0 0", ".file 9 \"", "!dbg !", "/*0000*/", "sizePerThread = [", "order = [1, 0]",
             "#ttg.nvidia_mma<{versionMajor = 9", "cp.async.ca.shared.global [", "mma.sync.aligned.m16n8k",
             "ldmatrix.sync.aligned.m8n8.x", "HMMA.", "LDGSTS.E.BYPASS.", "STL.128", "scf.for", "tt.dot"]


def load_cases(series: str) -> list[tuple[dict, dict[str, str]]]:
    out = []
    for case in sorted((STAGES_DIR / series).iterdir()):
        if not case.is_dir():
            continue
        meta = json.loads((case / "meta.json").read_text())
        stages = {k: (case / k).read_text() for k in ORDER if (case / k).exists()}
        out.append((meta, stages))
    return out


def artifact_of(meta: dict, stages: dict[str, str]):
    from tritonscope.model import Artifact, KernelSpec, Resources

    spec = KernelSpec(target=meta["target"], kernel=meta["kernel"], file=meta["file"], args=meta["args"],
                      constexprs=meta["constexprs"], num_warps=meta["num_warps"], num_stages=meta["num_stages"],
                      arch=meta["arch"], shape=tuple(meta["shape"]) if meta["shape"] else None,
                      dtype=meta["dtype"], grid=tuple(meta["grid"]) if meta["grid"] else None)
    return Artifact(spec=spec, triton_version=meta["triton"], kernel_hash="0" * 16, stages=dict(stages),
                    python_first_line=meta["first_line"], metadata={}, resources=Resources(), specialization=[])


def mutate(rng: random.Random, text: str, donor: str) -> str:
    lines = text.splitlines()
    if not lines:
        return rng.choice(_SNIPPETS)
    for _ in range(rng.randint(1, 6)):
        if not lines:
            break
        i = rng.randrange(len(lines))
        kind = rng.randrange(9)
        if kind == 0:
            del lines[i]
        elif kind == 1:
            lines.insert(i, lines[i])
        elif kind == 2:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == 3:
            lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
        elif kind == 4:
            s = lines[i]
            k = rng.randrange(len(s) + 1)
            lines[i] = s[:k] + rng.choice(_SNIPPETS) + s[k:]
        elif kind == 5:
            lines[i] = "".join(rng.choice(_SNIPPETS) for _ in range(rng.randint(1, 8)))
        elif kind == 6:
            d = donor.splitlines()
            if d:
                lines.insert(i, rng.choice(d))
        elif kind == 7:
            # numbers to the edges: 0, negative, huge
            import re
            lines[i] = re.sub(r"\d+", lambda m: rng.choice(["0", "-1", "65536", "99999999999999999999", m.group(0)]),
                              lines[i])
        else:
            lines = lines[: i + 1]  # truncated file
    return "\n".join(lines)


class _Slow(Exception):
    pass


def _alarm(signum, frame):
    raise _Slow()


def run_case(meta: dict, stages: dict[str, str], base, damaged: tuple[str, ...] = (),
             rng: random.Random | None = None) -> None:
    """Analyze one (damaged) compile and show it the ways a user could see it.

    Every case analyzes, prints the summary and the damaged stages; then two
    of the other outputs, picked at random, so a long run covers them all
    without paying for every renderer on every case.
    """
    from rich.console import Console

    from tritonscope.analysis import analyze
    from tritonscope.diff import diff_analyses
    from tritonscope.render import views
    from tritonscope.render.html import render_html
    from tritonscope.render.markdown import render_markdown
    from tritonscope.render.terminal import stage_panel, summary_panel
    from tritonscope.report import analysis_from_dict, analysis_to_dict

    an = analyze(artifact_of(meta, stages))
    con = Console(file=io.StringIO(), width=100, color_system=None, highlight=False)
    con.print(summary_panel(an))
    for key in damaged or tuple(an.parsed):
        if key in an.parsed:
            con.print(stage_panel(an, key, width=100, max_lines=0))

    def line_view():
        py = views.python_lines(an)
        if py:
            con.print(views.line_view(an, sorted(py)[len(py) // 2], views.PIPELINE))

    outputs = [
        lambda: con.print(views.walkthrough(an)),
        lambda: con.print(views.mix_view(an)),
        lambda: con.print(views.side_by_side(an, ("ttgir", "ptx", "sass"), 100)),
        line_view,
        lambda: render_html(an),
        lambda: render_markdown(an),
        lambda: analysis_from_dict(json.loads(json.dumps(analysis_to_dict(an)))),
        lambda: diff_analyses(base, an, force_different=True),
    ]
    for out in (rng.sample(outputs, 2) if rng else outputs):
        out()


def fuzz(cases: int, seed: int, series: str, limit: float = 20.0, show: int = 3) -> dict:
    from tritonscope.analysis import analyze
    from tritonscope.errors import TritonscopeError

    rng = random.Random(seed)
    corpus = load_cases(series)
    bases = [analyze(artifact_of(m, s)) for m, s in corpus]
    crashes: list[str] = []
    slow = 0
    old = signal.signal(signal.SIGALRM, _alarm)
    start = time.perf_counter()
    try:
        for n in range(cases):
            ci = rng.randrange(len(corpus))
            meta, stages = corpus[ci]
            damaged = dict(stages)
            keys = [k for k in ORDER if k in stages]
            hit = rng.sample(keys, rng.randint(1, min(3, len(keys))))
            for key in hit:
                damaged[key] = mutate(rng, stages[key], stages[rng.choice(keys)])
            signal.setitimer(signal.ITIMER_REAL, limit)
            try:
                run_case(meta, damaged, bases[ci], tuple(hit), rng)
            except TritonscopeError:
                pass  # a typed refusal is an answer, not a crash
            except _Slow:
                slow += 1
                crashes.append(f"case {n}: slower than {limit} s")
            except Exception:
                crashes.append(f"case {n} ({meta['kernel']} {meta['arch']}):\n{traceback.format_exc()}")
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, old)
    seconds = time.perf_counter() - start
    return {"cases": cases, "crashes": len(crashes), "slow": slow, "seconds": seconds,
            "first": crashes[:show]}


def _shard(job: tuple[int, int, str, float]) -> dict:
    cases, seed, series, limit = job
    return fuzz(cases, seed, series, limit)


def fuzz_parallel(cases: int, seed: int, series: str, limit: float, jobs: int) -> dict:
    """fuzz() over `jobs` processes, shard j with seed `seed * 1000 + j`; the figures summed."""
    import multiprocessing

    shares = [cases // jobs + (1 if j < cases % jobs else 0) for j in range(jobs)]
    work = [(n, seed * 1000 + j, series, limit) for j, n in enumerate(shares) if n]
    with multiprocessing.get_context("fork").Pool(len(work)) as pool:
        parts = pool.map(_shard, work)
    return {"cases": sum(p["cases"] for p in parts), "crashes": sum(p["crashes"] for p in parts),
            "slow": sum(p["slow"] for p in parts), "seconds": max(p["seconds"] for p in parts),
            "first": [c for p in parts for c in p["first"]][:3]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--series", default=None, help="3.6 or 3.9 (default: the installed Triton's)")
    ap.add_argument("--limit", type=float, default=20.0, help="seconds before a case counts as a hang")
    ap.add_argument("--jobs", type=int, default=1, help="processes to split the cases over")
    args = ap.parse_args()
    series = args.series
    if series is None:
        from tritonscope import triton_api

        series = ".".join(map(str, triton_api.triton_series()))
    started = time.perf_counter()
    if args.jobs > 1:
        r = fuzz_parallel(args.cases, args.seed, series, args.limit, args.jobs)
    else:
        r = fuzz(args.cases, args.seed, series, args.limit)
    wall = time.perf_counter() - started
    print(f"fuzz: {r['cases']} cases on Triton {series} stages, {r['crashes']} crashes ({r['slow']} hangs), "
          f"{wall:.1f} s wall with {args.jobs} process(es) ({r['cases'] / max(wall, 1e-9):.1f} cases/s)")
    for c in r["first"]:
        print(c)
    return 1 if r["crashes"] else 0


if __name__ == "__main__":
    sys.exit(main())
