"""Options shared by the commands, and the steps they share."""

from __future__ import annotations

from typing import List, Optional

import typer


from tritonscope.core.env import Env
from tritonscope.core.errors import UsageError

TARGET_HELP = ("A built-in sample (see `tritonscope samples`), path/to/file.py:kernel_name, or an installed "
               "module's kernel: package.module:kernel_name.")

ConstexprOpt = typer.Option(None, "-c", "--constexpr", metavar="NAME=VALUE",
                            help="A launch keyword (repeatable): a constexpr (-c BLOCK=32; a dtype "
                                 "-c compute_type=tl.bfloat16; a string -c reduction=mean) or a backend "
                                 "option (-c waves_per_eu=2, -c maxnreg=128).")
def _config_choice(value):
    """--config N (1-based) or --config predicted."""
    if value is None or isinstance(value, int):
        return value
    text = str(value).strip().lower()
    if text == "predicted":
        return "predicted"
    if text.isdigit() and int(text) >= 1 and len(text) < 10:
        return int(text)
    raise typer.BadParameter(f"{value!r} is not a config number (1, 2, ...) or 'predicted'.")


ConfigOpt = typer.Option(None, "--config", metavar="N|predicted", callback=_config_choice,
                         help="For an @triton.autotune kernel: compile its Nth config (after its "
                              "prune_configs_by; default the first), or 'predicted': the one the cost model "
                              "predicts fastest at the launch's grid (each config is compiled to predict it).")
BlockOpt = typer.Option(None, "--block", metavar="N",
                        help="Samples' shorthand for their tile size constexpr(s): one value, e.g. --block 16.")
GridOpt = typer.Option(None, "--grid", metavar="GRID",
                       help="The launch grid: up to 3 comma-separated numbers or expressions in the kernel's "
                            "arguments and constexprs, e.g. --grid 128, --grid 32,8, --grid "
                            "'cdiv(M,BLOCK_M)*cdiv(N,BLOCK_N)' (+ - * // %, cdiv, min, max, next_power_of_2, "
                            "x_ptr.shape[i], x_ptr.numel()). Replaces an EXAMPLES launch's grid; --predict "
                            "needs a grid.")
BlocksOpt = typer.Option(None, "--blocks", metavar="N1,N2,...",
                         help="--block as an axis: one config per value, e.g. --blocks 32,64,128.")


def block_axis(block: Optional[int], blocks: Optional[str]) -> Optional[list[int]]:
    """--block N or --blocks N1,N2,... -> the values (None when neither); both, or a bad value: UsageError."""
    if block is not None and blocks is not None:
        raise UsageError("Give --block N or --blocks N1,N2,..., not both.",
                         hint="--block is one value; --blocks makes an axis of several.")
    if block is not None:
        return [block]
    if blocks is None:
        return None
    values = [v.strip() for v in blocks.split(",") if v.strip()]
    if not values or not all(v.isdigit() and int(v) > 0 for v in values):
        raise UsageError(f"--blocks {blocks!r}: give positive whole numbers, comma-separated.",
                         hint="For example: --blocks 32,64,128")
    return [int(v) for v in values]
ArgOpt = typer.Option(None, "--arg", metavar="NAME=VALUE",
                      help="Describe a runtime argument (repeatable): a tensor as DTYPE[dims] "
                           "(fp16[32,32], .T for a transposed view, +N for a view N elements into its "
                           "storage: unaligned) or *DTYPE, a tensor descriptor as tensordesc<fp16[128,64]> or "
                           "desc(fp16[4096,4096],[128,64]), a scalar as a number, true/false or none.")
WarpsOpt = typer.Option(None, "--num-warps", "-w", help="Warps per program (default: the sample's, else 4).")
StagesOpt = typer.Option(None, "--num-stages", "-s", help="Software-pipelining stages (default: the sample's, else 3).")
def _arch_help() -> str:
    from tritonscope.core.model import arches_of

    return (f"Target GPU: NVIDIA {', '.join(arches_of('cuda'))}; AMD {', '.join(arches_of('hip'))} (through "
            f"Triton's HIP backend; `tritonscope samples` says which this Triton has). Default: the local GPU's, "
            f"else sm_90a.")


ArchOpt = typer.Option(None, "--arch", metavar="ARCH", help=_arch_help())
ShapeOpt = typer.Option(None, "--shape", metavar="SHAPE", help="Problem shape for a sample, e.g. 1024x1024x1024 (M x N x K).")
DtypeOpt = typer.Option(None, "--dtype", metavar="DTYPE", help="Input dtype for a sample: fp16, bf16, fp32, fp8e4nv, ...")


def default_arch() -> str:
    """The local GPU's arch when there is one we know, else the default (pipeline/config.local_arch)."""
    from tritonscope.pipeline.config import local_arch

    return local_arch()


_TRITON_HELP = ("Compile with another Triton: a version (e.g. 3.6.0; an environment is made with pip and cached on "
               "first use, see `tritonscope versions --envs`) or the Python of an environment with Triton "
               "(/path/to/venv/bin/python, or the environment's folder). The compile runs in a child of that "
               "environment.")
TritonOpt = typer.Option(None, "--triton", metavar="VERSION|PYTHON", help=_TRITON_HELP)
PythonOpt = typer.Option(None, "--python", metavar="PYTHON",
                         help="The Python of an environment with Triton to compile with (as --triton PATH).")  # compile, sweep (versions/sides.py)
LayoutsOpt = typer.Option(False, "--layouts", help="Draw every layout the TTGIR uses.")
ReportSaveOpt = typer.Option(None, "--save", help="Save a report: .html, .md, .json or .txt (by extension).")
EmitOpt = typer.Option(None, "--emit", metavar="DIR",
                       help="Write each stage as a plain file into DIR (kernel.ttir ... kernel.sass and kernel.cubin; "
                            "AMD: kernel.amdgcn and kernel.hsaco; kernel.json), never filtered.")
KeepPathsOpt = typer.Option(False, "--keep-paths", help="Keep absolute file paths in saved reports.")
MaxnregOpt = typer.Option(None, "--maxnreg", help="Limit registers per thread, as a launch's maxnreg= does "
                                                   "(ptxas then spills what does not fit).")
NumCtasOpt = typer.Option(None, "--num-ctas", help="Thread-block cluster size, as a launch's num_ctas= (sm_90+).")
FpFusionOpt = typer.Option(None, "--fp-fusion/--no-fp-fusion",
                           help="Fuse a*b+c into FMA, as a launch's enable_fp_fusion= "
                                "(default: Triton's, TRITON_DEFAULT_FP_FUSION).")


def make_request(target: str, constexpr: Optional[List[str]], block: Optional[int], arg: Optional[List[str]],
                 num_warps: Optional[int], num_stages: Optional[int], arch: Optional[str],
                 shape: Optional[str], dtype: Optional[str], *, maxnreg: Optional[int] = None,
                 num_ctas: Optional[int] = None, fp_fusion: Optional[bool] = None, config: Optional[int] = None,
                 gpu: Optional[str] = None, grid: Optional[str] = None):
    """The command line's words as a kernels.Request, every value checked before any file is loaded or Triton
    is entered (a command that compiles for several arches makes one Config of it per arch).  With --grid, the
    request carries its text (pipeline/config.with_grid), its syntax checked here."""
    from tritonscope.inputs.kernels import check_request
    from tritonscope.pipeline.config import with_grid

    return with_grid(check_request(_request(target, constexpr, block, arg, num_warps, num_stages, arch, shape, dtype,
                                            maxnreg=maxnreg, num_ctas=num_ctas, fp_fusion=fp_fusion, config=config,
                                            gpu=gpu)), grid)


def make_config(*words, grid: Optional[str] = None, **keywords):
    """make_request's words as the one resolved Config (pipeline/config.py): every value checked, the arch
    canonicalised once (--arch, else the local GPU's, else the default), a launch option the arch cannot take
    refused, --grid's syntax checked, before any file is loaded or Triton is entered."""
    from tritonscope.pipeline.config import resolve, with_grid

    return resolve(with_grid(_request(*words, **keywords), grid))


def _request(target: str, constexpr, block, arg, num_warps, num_stages, arch, shape, dtype, *, maxnreg=None,
             num_ctas=None, fp_fusion=None, config=None, gpu=None):
    """The command line's words as a kernels.Request, unchecked but for -c/--arg's NAME=VALUE form and the
    launch options' ranges."""
    from tritonscope.inputs.kernels import Request, parse_assignments

    options = launch_options(maxnreg, num_ctas, fp_fusion)
    return Request(target=target, constexprs=parse_assignments(constexpr, "constexpr"), block=block,
                   args=parse_assignments(arg, "argument"), num_warps=num_warps, num_stages=num_stages, arch=arch,
                   shape=shape, dtype=dtype, options=options, config=config, gpu=gpu)


def spinner(env: Env, progress: bool = True):
    """`with spinner(env, progress)(text):` a spinner on stderr while Triton works, on a terminal only."""
    import contextlib

    err = env.console(stderr=True)
    show = progress and err.is_terminal
    return lambda text: err.status(text) if show else contextlib.nullcontext()


def pipeline(env: Env, *, progress: bool = True, cache: bool = True, timeout: Optional[float] = None,
             diagnose: str = "off"):
    """The commands' Pipeline: a spinner, the result cache (`cache=False`: --no-cache, compile afresh and keep the
    fresh result), --timeout, the views loaded while nvdisasm runs, and a failure report on a compile that fails
    inside Triton (`diagnose`: "brief" the report, "full" also what to try, checked; "off" for the candidate
    compiles a command makes for itself)."""
    from tritonscope.pipeline.compile_path import Pipeline

    on_failure = None
    if diagnose != "off":
        from tritonscope.analyses.failure import reporter

        on_failure = reporter(checks=diagnose == "full")
    return Pipeline(status=spinner(env, progress), cache="use" if cache else "refresh", timeout=timeout,
                    meanwhile=_load_views, on_failure=on_failure)


def compile_request(config, env: Env, *, progress: bool = True, cache: bool = True,
                    timeout: Optional[float] = None, diagnose: str = "brief"):
    """Config -> Compiled (pipeline/compiler.py), with a spinner on stderr while Triton works.

    A repeat comes from tritonscope's result cache (result_cache.py), which
    is checked before Triton is imported; `cache=False` (--no-cache) skips
    that look-up and compiles, and the fresh result replaces the kept one.
    A compile that fails inside Triton gets its failure report (`diagnose`).
    """
    from tritonscope.pipeline.config import resolve

    pipe = pipeline(env, progress=progress, cache=cache, timeout=timeout, diagnose=diagnose)
    config = resolve(config)
    if config.config == "predicted":  # every kept config compiled and predicted (cost/pick.py)
        from tritonscope.cost.pick import compile_predicted

        return compile_predicted(pipe, config)
    return pipe.compile(config)


def _load_views() -> None:
    """Import the analysis and the views, and build the lexers: work that waits for no result, done while
    nvdisasm runs (compile_artifact's `meanwhile`)."""
    import tritonscope.analyses.analysis  # noqa: F401
    from tritonscope.outputs.render.terminal import warm_up

    warm_up()


def analysis_of(compiled):
    """analyze(compiled.artifact), read from its result-cache entry when it has one that holds it.

    An analysis made here goes into the entry (when there is one), so the
    next repeat skips parsing and annotating too.
    """
    from tritonscope.analyses.analysis import analyze
    from tritonscope.outputs.report import analysis_from_dict, analysis_to_dict

    entry = compiled.entry
    replayed = entry is not None and compiled.loaded is None  # answered from the result cache: not compiled now
    kept = entry.analysis() if entry is not None else None
    if kept is not None:
        try:
            analysis = analysis_from_dict(kept, "tritonscope's result cache")
            analysis.replayed = replayed
            return analysis
        except Exception:  # a damaged entry: analyze afresh (and keep that)
            pass
    analysis = analyze(compiled.artifact)
    if entry is not None:
        entry.keep_analysis(analysis_to_dict(analysis))
    analysis.replayed = replayed
    return analysis


def parse_stage_list(text: Optional[str], default: tuple[str, ...]) -> tuple[str, ...]:
    from tritonscope.language.dialects import every_stage_key
    from tritonscope.core.errors import close_matches

    if text is None or text.strip().lower() == "all":
        return default
    if text.strip().lower() == "none":
        return ()
    known = every_stage_key()
    keys = [k.strip().lower() for k in text.split(",") if k.strip()]
    if not keys:  # --stage '' is a mistake, not "all"
        raise UsageError(f"--stage {text!r} names no stage.",
                         hint=f"Stages: {', '.join(known)} (comma-separated), all, or none.")
    out = []
    for key in keys:
        key = {"llvm": "llir", "source": "python", "py": "python", "ll": "llir"}.get(key, key)
        if key not in known:
            raise UsageError(f"Unknown stage {key!r}.{close_matches(key, known)}",
                             hint=f"Stages: {', '.join(known)} (comma-separated), all, or none.")
        out.append(key)
    return tuple(out)


VIEWS = ("stages", "side-by-side", "walkthrough", "mix")
# A large kernel's LLVM IR runs to tens of thousands of lines: nobody reads
# that scrolling past, and highlighting it costs more than the compile.
DEFAULT_MAX_LINES = 300

ViewOpt = typer.Option("stages", "--view", metavar="VIEW",
                       help="stages (each stage, annotated) | side-by-side (2-3 stages aligned by Python line, "
                            "default ttgir,ptx) | walkthrough (the story of the compile, generated) | "
                            "mix (instruction counts per class).")
StageOpt = typer.Option(None, "--stage", "--stages", metavar="STAGES",
                        help="Stages to show, comma-separated: python,ttir,ttgir,llir,ptx,sass "
                             "(AMD targets: amdgcn in place of ptx,sass; default all; 'none' for the "
                             "summary only).")
LineOpt = typer.Option(None, "--line", help="Show Python line N and what it became in every stage.")
JsonOpt = typer.Option(False, "--json", help="Print the analysis as JSON (the report schema).")
WidthOpt = typer.Option(None, "--width", metavar="COLUMNS", min=20,
                        help="Render for this many columns (at least 20; default: the terminal's).")
ColorOpt = typer.Option(None, "--color/--no-color", help="Force color on or off (NO_COLOR is honoured).")
PagerOpt = typer.Option(False, "--pager/--no-pager", help="Page long output through $PAGER (shows every line).")
ForceOpt = typer.Option(False, "--force", help="Overwrite an existing --save file.")
TimeoutOpt = typer.Option(None, "--timeout", metavar="SECONDS", min=1,
                          help="Stop the compile after SECONDS (it runs in a child process; exit 11, nothing "
                               "written). Also lifts the runaway guard (see README).")
NoCacheOpt = typer.Option(False, "--no-cache",
                          help="Compile even when tritonscope's result cache holds this exact compile "
                               "(the fresh result replaces the kept one).")
MaxLinesOpt = typer.Option(None, "--max-lines", min=0,
                           help="Show at most N lines of each stage in the stages view "
                                "(default 300, or all with --pager; 0 = all).")


def check_line(line: Optional[int]) -> None:
    """--line N: a Python line number counts from 1 (refused before any compile; the kernel's own range
    is checked once its source is read)."""
    if line is not None and line < 1:
        raise UsageError(f"--line {line}: line numbers start at 1.",
                         hint="Give the Python line number; `--stage python` shows them numbered.")


def check_timeout(timeout: Optional[float]) -> None:
    """--timeout SECONDS: a finite number (typer's min=1 lets nan and inf through)."""
    import math

    if timeout is not None and not math.isfinite(timeout):
        raise UsageError(f"--timeout {timeout}: give a number of seconds.",
                         hint="e.g. --timeout 60; leave it out for no limit.")


def check_gpu(gpu: Optional[str], arches=()) -> None:
    """--gpu, before anything compiles: not empty, a GPU the cost model knows (exit 2), and a GPU of every arch
    compiled for (`arches`, canonical; None stands for none named) -- as `compile` refuses a B200 for sm_90a
    when it binds the launch -- rather than compiling everything and then saying "no prediction"."""
    if gpu is None:
        return
    from tritonscope.cost import gpu_names, resolve_gpu

    if not gpu.strip():
        raise UsageError("--gpu is empty.", hint=f"Name a GPU ({', '.join(gpu_names())}), or leave --gpu out for "
                                                  "the local GPU, else the arch's reference GPU.")
    g = resolve_gpu(gpu, None)
    for arch in dict.fromkeys(a for a in arches if a):
        if arch not in g.arches:
            raise UsageError(f"--gpu {gpu}: the {g.name} is no {arch} GPU (it is {', '.join(g.arches)}).",
                             hint="Name a GPU of the target arch (--arch), or leave --gpu out for the arch's "
                                  "reference GPU.")


def check_report_path(path: str, force: bool) -> str:
    """A report's format ('html', 'markdown', 'json', 'text') from --save, checked before any work."""
    from tritonscope.outputs.save import check

    return check(path, force=force)


RawOpt = typer.Option(False, "--raw",
                      help="Show every stage line exactly as the compiler wrote it: no debug sections, "
                           "directives or comments folded (the stages and side-by-side views, and --save reports).")
KeepOpt = typer.Option(None, "--keep", metavar="KINDS",
                       help="Fold noise but keep these kinds, comma-separated: debug, header, directive, comment.")


def noise_filter(raw: bool, keep: Optional[str]) -> frozenset:
    """The noise kinds the views fold, from --raw / --keep (checked before any work)."""
    from tritonscope.outputs.render.noise import hide_set

    return hide_set(raw, keep)


def check_view(view: str) -> str:
    from tritonscope.core.errors import close_matches

    view = view.strip().lower().replace("_", "-")
    if view not in VIEWS:
        raise UsageError(f"Unknown view {view!r}.{close_matches(view, VIEWS)}", hint=f"Views: {', '.join(VIEWS)}.")
    return view


def output_analysis(analysis, env: Env, *, as_json: bool, save: Optional[str], force: bool, keep_paths: bool,
                    hide: Optional[frozenset], stage: Optional[str], view: str, line: Optional[int], layouts: bool,
                    max_lines: Optional[int]) -> None:
    """What `compile`, `open` and `show` do with an Analysis: JSON or the views, then `--save`."""
    if as_json:
        import json

        from tritonscope.outputs.report import analysis_to_dict

        typer.echo(json.dumps(analysis_to_dict(analysis), indent=1))
    else:
        print_analysis(analysis, env, stage=stage, view=view, line=line, layouts=layouts, max_lines=max_lines,
                       hide=hide)
    if save:
        from tritonscope.outputs.save import save_report

        save_report(analysis, save, force=force, keep_paths=keep_paths, hide=hide)


def print_analysis(analysis, env: Env, *, stage: Optional[str], view: str, line: Optional[int], layouts: bool,
                   max_lines: Optional[int], hide: Optional[frozenset] = None) -> None:
    """Print an Analysis with the view options `compile` and `show` share (width, color, pager from `env`).

    `hide`: the noise kinds the stage views fold (see noise_filter; None = all of them).
    """
    from tritonscope.outputs import sections
    from tritonscope.outputs.render.page_view import page_renderables

    view = check_view(view)
    # By default, every stage this compile has (its backend's pipeline: PTX and SASS, or AMDGCN).
    stages = parse_stage_list(stage, tuple(analysis.parsed))  # checked even when empty: --stage '' is refused
    page = sections.build(analysis, view=view, stages=stages if stage else None, line=line, layouts=layouts)
    console = env.console()
    limit = max_lines if max_lines is not None else (0 if env.pager else DEFAULT_MAX_LINES)
    with env.paged(console):
        for renderable in page_renderables(analysis, page, width=console.width, stage_width=console.width,
                                           max_lines=limit, hide=hide):
            console.print(renderable)


# --------------------------------------------------------------------------
# Launch options (maxnreg, num_ctas, enable_fp_fusion) for the commands that compile or launch
# --------------------------------------------------------------------------

def launch_options(maxnreg: Optional[int], num_ctas: Optional[int], fp_fusion: Optional[bool]) -> dict:
    """--maxnreg / --num-ctas / --fp-fusion as Triton's option names, checked (exit 2) before any work."""
    from tritonscope.inputs.kernels import check_launch_options

    return check_launch_options({"maxnreg": maxnreg, "num_ctas": num_ctas, "enable_fp_fusion": fp_fusion})


def check_options_for_arches(options: Optional[dict], arches) -> None:
    """Refuse (exit 2, before any compile) a launch option one of the (canonical) `arches` cannot take: what
    resolving a Config checks for its one arch (pipeline/config.check_options_for_arch), for a command of several."""
    from tritonscope.pipeline.config import check_options_for_arch

    for name in arches or ():
        if name:
            check_options_for_arch(options, name)


# --------------------------------------------------------------------------
# A compile that failed inside Triton: its failure report (analyses/failure.py)
# --------------------------------------------------------------------------

def output_failure(err, env: Env, *, as_json: bool, save: Optional[str], force: bool, emit: Optional[str] = None) -> None:
    """What `compile` does with a compile error that carries a failure report: the report (or its JSON) on
    stdout, then --save and --emit; the caller re-raises the error (exit 5, or 11 for a timeout).  A timeout
    writes no file: its message says "Nothing was written", as it always has."""
    failure = getattr(err, "data", {}).get("failure")
    if failure is not None:
        timed_out = failure.timed_out
        show_failure(failure, env, as_json=as_json, save=None if timed_out else save, force=force,
                     emit=None if timed_out else emit)


def show_failure(failure, env: Env, *, as_json: bool, save: Optional[str], force: bool,
                 emit: Optional[str] = None) -> None:
    """A failure report (analyses/failure.Failure) on stdout, or its JSON, then --save and --emit."""
    from tritonscope.outputs.render.failure_view import failure_renderables, render_failure

    if as_json:
        import json

        from tritonscope.analyses.failure import report_dict

        typer.echo(json.dumps(report_dict(failure), indent=1))
    else:
        console = env.console()
        for renderable in failure_renderables(failure, width=console.width):
            console.print(renderable)
        console.print()
    if save:
        from tritonscope.outputs.save import write

        write(save, lambda fmt: render_failure(failure, fmt), force=force, what="failure report")
    if emit:
        from tritonscope.core.output import write_folder
        from tritonscope.outputs.render.failure_view import failure_files

        def fill(staging) -> None:
            from pathlib import Path

            for name, text in failure_files(failure).items():
                (Path(staging) / name).write_text(text)

        write_folder(emit, fill, force=force)
