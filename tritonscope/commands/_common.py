"""Options shared by every command that compiles a kernel, and the steps they share."""

from __future__ import annotations

from typing import List, Optional

import typer

from tritonscope.errors import UsageError

TARGET_HELP = "A built-in sample (see `tritonscope samples`) or path/to/file.py:kernel_name."

ConstexprOpt = typer.Option(None, "-c", "--constexpr", metavar="NAME=VALUE",
                            help="Set a constexpr (repeatable), e.g. -c BLOCK=32.")
BlockOpt = typer.Option(None, "--block", help="Samples' shorthand for their tile size constexpr(s).")
ArgOpt = typer.Option(None, "--arg", metavar="NAME=VALUE",
                      help="Describe a runtime argument (repeatable): a tensor as DTYPE[dims] "
                           "(fp16[32,32], .T for a transposed view) or *DTYPE, a scalar as a number.")
WarpsOpt = typer.Option(None, "--num-warps", "-w", help="Warps per program (default: the sample's, else 4).")
StagesOpt = typer.Option(None, "--num-stages", "-s", help="Software-pipelining stages (default: the sample's, else 3).")
ArchOpt = typer.Option(None, "--arch", help="Target GPU: sm_80, sm_86, sm_89, sm_90a, sm_100a, sm_120 "
                                            "(default: the local GPU's, else sm_90a).")
ShapeOpt = typer.Option(None, "--shape", help="Problem shape for a sample, e.g. 1024x1024x1024 (M x N x K).")
DtypeOpt = typer.Option(None, "--dtype", help="Input dtype for a sample: fp16, bf16, fp32, fp8e4nv, ...")


def default_arch() -> str:
    """The local GPU's arch when there is one we know, else sm_90a."""
    from tritonscope import triton_api
    from tritonscope.model import DEFAULT_ARCH, arch_for_capability

    cap = triton_api.local_gpu_capability()
    arch = arch_for_capability(cap) if cap else None
    return arch.name if arch else DEFAULT_ARCH


def make_request(target: str, constexpr: Optional[List[str]], block: Optional[int], arg: Optional[List[str]],
                 num_warps: Optional[int], num_stages: Optional[int], arch: Optional[str],
                 shape: Optional[str], dtype: Optional[str]):
    from tritonscope.kernels import Request, parse_assignments

    return Request(target=target, constexprs=parse_assignments(constexpr, "constexpr"), block=block,
                   args=parse_assignments(arg, "argument"), num_warps=num_warps, num_stages=num_stages,
                   arch=arch, shape=shape, dtype=dtype)


def compile_request(request, *, progress: bool = True):
    """Request -> Artifact, with a spinner on stderr while Triton works."""
    from tritonscope.compile import compile_artifact
    from tritonscope.kernels import build_spec
    from tritonscope.render.console import make_console

    # only look for a local GPU when the user named no arch (build_spec validates theirs)
    loaded = build_spec(request, default_arch() if not request.arch else "sm_90a")
    err = make_console(stderr=True)
    if progress and err.is_terminal:
        with err.status(f"compiling {loaded.spec.kernel} for {loaded.spec.arch} ({loaded.spec.label()})..."):
            return compile_artifact(loaded)
    return compile_artifact(loaded)


def parse_stage_list(text: Optional[str], default: tuple[str, ...]) -> tuple[str, ...]:
    from tritonscope.errors import close_matches
    from tritonscope.model import STAGE_KEYS

    if not text or text == "all":
        return default
    if text == "none":
        return ()
    out = []
    for key in (k.strip().lower() for k in text.split(",") if k.strip()):
        key = {"llvm": "llir", "source": "python", "py": "python", "ll": "llir"}.get(key, key)
        if key not in STAGE_KEYS:
            raise UsageError(f"Unknown stage {key!r}.{close_matches(key, STAGE_KEYS)}",
                             hint=f"Stages: {', '.join(STAGE_KEYS)} (comma-separated), all, or none.")
        out.append(key)
    return tuple(out)


VIEWS = ("stages", "side-by-side", "walkthrough", "mix")
# A large kernel's LLVM IR runs to tens of thousands of lines: nobody reads
# that scrolling past, and highlighting it costs more than the compile.
DEFAULT_MAX_LINES = 300

ViewOpt = typer.Option("stages", "--view",
                       help="stages (each stage, annotated) | side-by-side (2-3 stages aligned by Python line, "
                            "default ttgir,ptx) | walkthrough (the story of the compile, generated) | "
                            "mix (instruction counts per class).")
StageOpt = typer.Option(None, "--stage", "--stages",
                        help="Stages to show, comma-separated: python,ttir,ttgir,llir,ptx,sass "
                             "(default all; 'none' for the summary only).")
LineOpt = typer.Option(None, "--line", help="Show Python line N and what it became in every stage.")
JsonOpt = typer.Option(False, "--json", help="Print the analysis as JSON (the report schema).")
WidthOpt = typer.Option(None, "--width", help="Render for this many columns.")
ColorOpt = typer.Option(None, "--color/--no-color", help="Force color on or off (NO_COLOR is honoured).")
PagerOpt = typer.Option(False, "--pager/--no-pager", help="Page long output through $PAGER (shows every line).")
ForceOpt = typer.Option(False, "--force", help="Overwrite an existing --save file.")
MaxLinesOpt = typer.Option(None, "--max-lines", min=0,
                           help="Show at most N lines of each stage in the stages view "
                                "(default 300, or all with --pager; 0 = all).")


def check_view(view: str) -> str:
    from tritonscope.errors import close_matches

    view = view.strip().lower().replace("_", "-")
    if view not in VIEWS:
        raise UsageError(f"Unknown view {view!r}.{close_matches(view, VIEWS)}", hint=f"Views: {', '.join(VIEWS)}.")
    return view


def print_analysis(analysis, *, stage: Optional[str], view: str, line: Optional[int], layouts: bool,
                   width: Optional[int], color: Optional[bool], pager: bool, max_lines: Optional[int]) -> None:
    """Print an Analysis with the view options `compile` and `show` share."""
    from tritonscope.model import STAGE_KEYS
    from tritonscope.render import views
    from tritonscope.render.console import make_console, paged
    from tritonscope.render.terminal import stage_panel, summary_panel

    view = check_view(view)
    stages = parse_stage_list(stage, STAGE_KEYS)
    console = make_console(width=width, color=color)
    with paged(console, pager):
        console.print(summary_panel(analysis))
        if line is not None:
            shown = tuple(k for k in (stages if stage else views.PIPELINE) if k != "python")
            console.print(views.line_view(analysis, line, shown))
        elif view == "side-by-side":
            shown = tuple(k for k in (stages if stage else ("ttgir", "ptx")) if k != "python")
            console.print(views.side_by_side(analysis, shown, console.width))
        elif view == "walkthrough":
            console.print(views.walkthrough(analysis))
        elif view == "mix":
            console.print(views.mix_view(analysis))
        else:
            limit = max_lines if max_lines is not None else (0 if pager else DEFAULT_MAX_LINES)
            for key in stages:
                if key in analysis.parsed:
                    console.print(stage_panel(analysis, key, width=console.width, max_lines=limit))
        if layouts:
            from tritonscope.render.layout_view import layout_panels

            for panel in layout_panels(analysis):
                console.print(panel)
