"""Speed check for issue 3: parse + annotate + render overhead against compile time.

    python benchmarks/analysis_speed.py

Compiles the sm_90a grouped matmul at 128x256x64 (8 warps, 3 stages) in a
fresh Triton cache (so the compile is real, SASS included), then times
parsing, annotating and rendering every stage view to a null console.
Saving a report (its paths made relative, then JSON) must take under 1 s.
Linearity: the same work on each stage's text doubled (the text repeated
twice) must cost at most 2.2x.  Prints the figures; exits 1 if a limit fails.
"""

from __future__ import annotations

import io
import json
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

    from tritonscope.analyses.analysis import Analysis, analyze
    from tritonscope.commands.printing import DEFAULT_MAX_LINES
    from tritonscope.pipeline.triton_compile import compile_artifact
    from tritonscope.inputs.kernels import Request
    from tritonscope.pipeline.binding import build_spec
    from tritonscope.language.dialects import annotate_stage, instruction_mix, parse_stage
    from tritonscope.outputs.render import views
    from tritonscope.outputs.render.terminal import stage_panel, summary_panel

    loaded = build_spec(Request("matmul_grouped", arch="sm_90a",
                                constexprs={"BLOCK_M": "128", "BLOCK_N": "256", "BLOCK_K": "64"},
                                num_warps=8, num_stages=3), "sm_90a")
    t = time.perf_counter()
    artifact = compile_artifact(loaded)
    compile_s = time.perf_counter() - t
    sizes = {k: len(v.splitlines()) for k, v in artifact.stages.items()}

    def console() -> Console:
        return Console(width=160, file=io.StringIO(), color_system="truecolor", force_terminal=True)

    def render_stages(analysis: Analysis, keys, max_lines=DEFAULT_MAX_LINES) -> None:
        con = console()
        for key in keys:
            con.print(stage_panel(analysis, key, width=160, max_lines=max_lines))

    # What each command prints on top of the compile (every one prints the summary).
    commands = {
        "compile (default: every stage)": lambda a: render_stages(a, tuple(a.parsed)),
        "compile --view side-by-side --stages ttgir,ptx,sass":
            lambda a: console().print(views.side_by_side(a, ("ttgir", "ptx", "sass"), 160)),
        "compile --view walkthrough": lambda a: console().print(views.walkthrough(a)),
        "compile --line 32": lambda a: console().print(views.line_view(a, 32)),
        "compile --view mix": lambda a: console().print(views.mix_view(a)),
    }

    def analyze_only(stages: dict[str, str]) -> None:
        for key, text in stages.items():
            p = parse_stage(key, text, first_line=artifact.python_first_line, file=artifact.spec.file)
            annotate_stage(p)
            instruction_mix(p)

    parse_annotate_s = best(lambda: analyze_only(artifact.stages))
    analysis = analyze(artifact)
    summary_s = best(lambda: console().print(summary_panel(analysis)), repeat=3)
    per_command = {name: best(lambda fn=fn: fn(analysis), repeat=3) for name, fn in commands.items()}
    per_stage = {k: best(lambda k=k: render_stages(analysis, (k,)), repeat=2) for k in analysis.parsed}
    every_line_s = sum(best(lambda k=k: render_stages(analysis, (k,), 0), repeat=1) for k in analysis.parsed)

    from dataclasses import replace as _replace

    from tritonscope.core.model import Line, ParsedStage
    from tritonscope.outputs.render.html import render_html

    big = {k: ParsedStage(k, tuple(Line(i + 1, ln.text, ln.raw, ln.loc)
                                   for i, ln in enumerate(list(s.lines) * (4000 // max(1, len(s.lines)) + 1))))
           for k, s in analysis.parsed.items()}
    big_lines = sum(len(s.lines) for s in big.values())
    html_s = best(lambda: render_html(_replace(analysis, parsed=big)), repeat=2)

    # --save: the report's paths made relative (every string of the analysis), then JSON (limit 1 s)
    from tritonscope.outputs.portable import relative_paths
    from tritonscope.outputs.report import analysis_to_dict

    save_s = best(lambda: json.dumps(analysis_to_dict(relative_paths(analysis))), repeat=3)

    doubled = {k: v + ("\n" if not v.endswith("\n") else "") + v for k, v in artifact.stages.items()}
    ratios = []
    for _ in range(3):
        one = best(lambda: analyze_only(artifact.stages), repeat=7)
        two = best(lambda: analyze_only(doubled), repeat=7)
        ratios.append(two / one)
    ratio = statistics.median(ratios)

    print(f"kernel: {loaded.spec.kernel} {loaded.spec.label()}  (Triton {artifact.triton_version})")
    print("stage lines: " + ", ".join(f"{k} {n}" for k, n in sizes.items()))
    print(f"compile (fresh cache, with SASS):  {compile_s:.3f} s")
    print(f"parse + annotate + mix:            {parse_annotate_s:.3f} s")
    print(f"summary panel:                     {summary_s:.3f} s")
    print(f"stage panels as `compile` shows them (first {DEFAULT_MAX_LINES} lines each): "
          + ", ".join(f"{k} {v:.3f}" for k, v in per_stage.items()))
    print(f"for reference, every line of every stage (--max-lines 0): {every_line_s:.3f} s")
    print(f"HTML report of {big_lines:,} lines (every stage repeated to 4,000+ lines): {html_s:.3f} s "
          "(limit 2 s)")
    print(f"--save report.json (paths made relative, then JSON): {save_s:.3f} s (limit 1 s)")
    ok = ratio <= 2.2 and html_s < 2.0 and save_s < 1.0
    print("overhead per command (parse + annotate + summary + its view), against the compile; limit 25%:")
    for name, seconds in per_command.items():
        total = parse_annotate_s + summary_s + seconds
        share = total / compile_s
        ok = ok and share <= 0.25
        print(f"  {name:<55} {total:.3f} s = {share:.0%}")
    print(f"2x the IR costs {ratio:.2f}x for parse + annotate (limit 2.2x)")
    print("OK" if ok else "OVER LIMIT")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
