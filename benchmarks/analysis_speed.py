"""Speed check for issue 3: parse + annotate + render overhead against compile time.

    python benchmarks/analysis_speed.py

Compiles the sm_90a grouped matmul at 128x256x64 (8 warps, 3 stages) in a
fresh Triton cache (so the compile is real, SASS included), then times
parsing, annotating and rendering every stage view to a null console.
Linearity: the same work on each stage's text doubled (the text repeated
twice) must cost at most 2.2x.  Prints the figures; exits 1 if a limit fails.
"""

from __future__ import annotations

import io
import os
import statistics
import sys
import tempfile
import time

os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="ts-bench-")
os.environ["TRITONSCOPE_CACHE_DIR"] = tempfile.mkdtemp(prefix="ts-bench-derived-")


def best(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> int:
    from rich.console import Console

    from tritonscope.analysis import Analysis, analyze
    from tritonscope.commands._common import DEFAULT_MAX_LINES
    from tritonscope.annotate import annotate_stage
    from tritonscope.annotate.mix import instruction_mix
    from tritonscope.compile import compile_artifact
    from tritonscope.kernels import Request, build_spec
    from tritonscope.parse import parse_stage
    from tritonscope.render import views
    from tritonscope.render.terminal import stage_panel, summary_panel

    loaded = build_spec(Request("matmul_grouped", arch="sm_90a",
                                constexprs={"BLOCK_M": "128", "BLOCK_N": "256", "BLOCK_K": "64"},
                                num_warps=8, num_stages=3), "sm_90a")
    t = time.perf_counter()
    artifact = compile_artifact(loaded)
    compile_s = time.perf_counter() - t
    sizes = {k: len(v.splitlines()) for k, v in artifact.stages.items()}

    def render_views(analysis: Analysis) -> None:
        con = Console(width=160, file=io.StringIO(), color_system="truecolor", force_terminal=True)
        con.print(summary_panel(analysis))
        con.print(views.side_by_side(analysis, ("ttgir", "ptx", "sass"), 160))
        con.print(views.walkthrough(analysis))
        con.print(views.mix_view(analysis))
        con.print(views.line_view(analysis, 32))

    def render_stages(analysis: Analysis, keys, max_lines=DEFAULT_MAX_LINES) -> None:
        con = Console(width=160, file=io.StringIO(), color_system="truecolor", force_terminal=True)
        for key in keys:
            con.print(stage_panel(analysis, key, width=160, max_lines=max_lines))

    def analyze_only(stages: dict[str, str]) -> None:
        for key, text in stages.items():
            p = parse_stage(key, text, first_line=artifact.python_first_line, file=artifact.spec.file)
            annotate_stage(p)
            instruction_mix(p)

    parse_annotate_s = best(lambda: analyze_only(artifact.stages))
    analysis = analyze(artifact)
    views_s = best(lambda: render_views(analysis), repeat=3)
    per_stage = {k: best(lambda k=k: render_stages(analysis, (k,)), repeat=2) for k in analysis.parsed}
    stages_s = sum(per_stage.values())
    every_line_s = sum(best(lambda k=k: render_stages(analysis, (k,), 0), repeat=1) for k in analysis.parsed)
    main_s = parse_annotate_s + views_s
    full_s = main_s + stages_s

    doubled = {k: v + ("\n" if not v.endswith("\n") else "") + v for k, v in artifact.stages.items()}
    ratios = []
    for _ in range(3):
        one = best(lambda: analyze_only(artifact.stages), repeat=7)
        two = best(lambda: analyze_only(doubled), repeat=7)
        ratios.append(two / one)
    ratio = statistics.median(ratios)

    print(f"kernel: {loaded.spec.kernel} {loaded.spec.label()}  (Triton {artifact.triton_version})")
    print("stage lines: " + ", ".join(f"{k} {n}" for k, n in sizes.items()))
    print(f"compile (fresh cache, with SASS):         {compile_s:.3f} s")
    print(f"parse + annotate + mix (all stages):      {parse_annotate_s:.3f} s")
    print(f"render summary, side-by-side, walkthrough, --line, mix: {views_s:.3f} s")
    print(f"render every stage panel as `compile` does (first {DEFAULT_MAX_LINES} lines each), highlighted: "
          f"{stages_s:.3f} s  (" + ", ".join(f"{k} {v:.2f}" for k, v in per_stage.items()) + ")")
    print(f"for reference, every line of every stage (--max-lines 0): {every_line_s:.3f} s")
    print(f"overhead, analysis + views:               {main_s:.3f} s = {main_s / compile_s:.0%} of compile (limit 25%)")
    print(f"overhead, analysis + views + stage panels: {full_s:.3f} s = {full_s / compile_s:.0%} of compile (limit 25%)")
    print(f"2x the IR costs {ratio:.2f}x for parse + annotate (limit 2.2x)")
    ok = full_s / compile_s <= 0.25 and ratio <= 2.2
    print("OK" if ok else "OVER LIMIT")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
