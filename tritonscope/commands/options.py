"""The commands' options in named groups, each declared once, that a command composes.

Why: the same dozen options (-c, --block, --arg, -w, -s, --arch, --shape, --dtype,
--maxnreg, --num-ctas, --fp-fusion; --width, --color, --pager; ...) used to be
repeated in each command's parameter list, with the code that turns them into a
config.  A command now names a group where its options go:

    @composed
    def compile_cmd(ctx, target: str = typer.Argument(...), kernel: Values = CONFIG, ...):
        config = kernel.config(target)

`composed` puts the group's options in the command's signature at that place (so
--help lists them in the same order as before) and hands the command one Values
object for them.  A command that needs a group slightly otherwise says so where it
uses it: `CONFIG.without("arch")`, `CONFIG.but(shape=(type, typer.Option(...)))`.
The options themselves are declared here too, once each (the TARGET help, -c, --block, ..., --json).
What a command makes of their values lives beside: checks.py (each value checked before any work),
requests.py (the Request / Config a command compiles), running.py (the compile with the command's
spinner) and printing.py (an Analysis or a failure report printed).
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, List, Optional

import typer

from tritonscope.commands import checks, requests


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


RawOpt = typer.Option(False, "--raw",
                      help="Show every stage line exactly as the compiler wrote it: no debug sections, "
                           "directives or comments folded (the stages and side-by-side views, and --save reports).")


KeepOpt = typer.Option(None, "--keep", metavar="KINDS",
                       help="Fold noise but keep these kinds, comma-separated: debug, header, directive, comment.")


class Values:
    """One group's values, by option name (a name the group lacks reads as None)."""

    def __init__(self, **values: Any):
        self.__dict__.update(values)

    def __getattr__(self, name: str) -> Any:  # only for names the group does not have
        if name.startswith("__"):
            raise AttributeError(name)
        return None


class ConfigValues(Values):
    """The config group (-c, --block, --arg, -w, -s, --arch, --shape, --dtype, --maxnreg, --num-ctas,
    --fp-fusion; --grid where the command has it) and what a command makes of it."""

    def request(self, target: str, **changes: Any):
        """A checked kernels.Request (for a command that compiles it for several arches)."""
        return requests.make_request(*self._words(target, changes), **self._keywords(changes))

    def config(self, target: str, **changes: Any):
        """The one resolved Config (pipeline/config.py): checked, its arch canonical, its launch options fit for it."""
        return requests.make_config(*self._words(target, changes), **self._keywords(changes))

    def _words(self, target: str, changes: dict) -> list:
        return [target, *(changes.get(n, getattr(self, n)) for n in
                          ("constexpr", "block", "arg", "num_warps", "num_stages", "arch", "shape", "dtype"))]

    def _keywords(self, changes: dict) -> dict:
        return {"maxnreg": self.maxnreg, "num_ctas": self.num_ctas, "fp_fusion": self.fp_fusion, "grid": self.grid,
                **{k: v for k, v in changes.items() if k in ("config", "gpu", "grid")}}

    def launch_options(self) -> dict:
        """--maxnreg / --num-ctas / --fp-fusion as Triton's option names, checked."""
        return checks.launch_options(self.maxnreg, self.num_ctas, self.fp_fusion)


class DisplayValues(Values):
    """--width / --color / --pager (and --json where the group has it)."""

    def env(self, ctx):
        """The command's Env with these display options."""
        from tritonscope.core.env import env_of

        return env_of(ctx).with_display(width=self.width, color=self.color, pager=bool(self.pager))


class Group:
    """Options in --help order: (parameter name, annotation, typer option), and the Values type they make."""

    def __init__(self, params: list[tuple[str, Any, Any]], values: type = Values):
        self.params = params
        self.values = values

    def __add__(self, other: "Group") -> "Group":
        return Group(self.params + other.params, self.values if self.values is not Values else other.values)

    def without(self, *names: str) -> "Group":
        return Group([p for p in self.params if p[0] not in names], self.values)

    def only(self, *names: str) -> "Group":
        """The group's options of these names (in the group's order)."""
        return Group([p for p in self.params if p[0] in names], self.values)

    def but(self, **changed: tuple[Any, Any]) -> "Group":
        """The group with some options declared otherwise: name=(annotation, typer option)."""
        return Group([(n, *changed[n]) if n in changed else (n, a, o) for n, a, o in self.params], self.values)

    @property
    def names(self) -> list[str]:
        return [p[0] for p in self.params]


CONSTEXPRS = Group([
    ("constexpr", Optional[List[str]], ConstexprOpt),
    ("block", Optional[int], BlockOpt),
    ("arg", Optional[List[str]], ArgOpt),
])
LAUNCH = Group([
    ("maxnreg", Optional[int], MaxnregOpt),
    ("num_ctas", Optional[int], NumCtasOpt),
    ("fp_fusion", Optional[bool], FpFusionOpt),
], ConfigValues)
# what one compile is of: the kernel's values, the target and the launch
CONFIG = CONSTEXPRS + Group([
    ("num_warps", Optional[int], WarpsOpt),
    ("num_stages", Optional[int], StagesOpt),
    ("arch", Optional[str], ArchOpt),
    ("shape", Optional[str], ShapeOpt),
    ("dtype", Optional[str], DtypeOpt),
]) + LAUNCH
CONFIG.values = ConfigValues
# the launch grid (--grid), for a command that predicts or explains a launch: CONFIG + GRID
GRID = Group([("grid", Optional[str], GridOpt)], ConfigValues)
# a grid of configs (sweep, bench): each comma-separated list is an axis
AXES = Group([
    ("constexpr", Optional[List[str]], typer.Option(None, "-c", "--constexpr", metavar="NAME=V1,V2,...",
                                                    help="A constexpr axis (repeatable), e.g. -c BLOCK=16,32,64.")),
    ("block", Optional[int], BlockOpt),
    ("blocks", Optional[str], BlocksOpt),
    ("arg", Optional[List[str]], ArgOpt),
    ("num_warps", Optional[str], typer.Option(None, "--num-warps", "-w", metavar="N1,N2,...",
                                              help="Warps axis, e.g. 2,4,8.")),
    ("num_stages", Optional[str], typer.Option(None, "--num-stages", "-s", metavar="N1,N2,...",
                                               help="Pipelining stages axis, e.g. 1,2,3.")),
])
# how the result is drawn on the terminal
DISPLAY = Group([
    ("width", Optional[int], WidthOpt),
    ("color", Optional[bool], ColorOpt),
    ("pager", bool, PagerOpt),
], DisplayValues)
# which stages, and how (compile, open, show)
STAGE_VIEWS = Group([
    ("stage", Optional[str], StageOpt),
    ("view", str, ViewOpt),
    ("line", Optional[int], LineOpt),
    ("layouts", bool, LayoutsOpt),
])
# an Analysis printed: --json or the views, at this width, folded so (compile, open, show)
OUTPUT = Group([("as_json", bool, JsonOpt)]) + DISPLAY + Group([
    ("max_lines", Optional[int], MaxLinesOpt),
    ("raw", bool, RawOpt),
    ("keep", Optional[str], KeepOpt),
], DisplayValues)


def composed(fn):
    """Expand each parameter of `fn` whose default is a Group into the group's options (in place, so --help
    keeps its order); `fn` gets the group's values as one Values object under the parameter's name."""
    signature = inspect.signature(fn, eval_str=True)
    params, groups = [], {}
    for p in signature.parameters.values():
        if isinstance(p.default, Group):
            groups[p.name] = p.default
            params += [inspect.Parameter(n, p.kind, default=o, annotation=a) for n, a, o in p.default.params]
        else:
            params.append(p)

    @functools.wraps(fn)
    def command(*args, **kwargs):
        for name, group in groups.items():
            kwargs[name] = group.values(**{n: kwargs.pop(n) for n in group.names})
        return fn(*args, **kwargs)

    command.__signature__ = signature.replace(parameters=params)
    command.__annotations__ = {p.name: p.annotation for p in params if p.annotation is not p.empty}
    return command


# --gpu, declared here once for every command that takes it (compile, explain, diff, sweep, tune, capture); its GPUs
# are core/gpus.json's, the one table that explain's roofline, bench, the cost model and the stand-in read.
def _gpu_help() -> str:
    from tritonscope.core.gpus import known_gpus

    return ("The GPU whose figures the command uses (core/gpus.json, datasheet sources): its SM count and peaks "
            "for explain's waves and roofline and for the predicted time (compile, diff and sweep predict when it "
            "is given; tune ranks by it), and the device a kernel file (capture --arch: the program) is told it "
            f"runs on when it asks. Default: the local GPU, else the arch's reference GPU. {known_gpus()}")


GpuOpt = typer.Option(None, "--gpu", metavar="GPU", help=_gpu_help())


# --------------------------------------------------------------------------------------------------------------
# A grid of configs (AXES) as the requests `sweep` and `tune` compile








# --------------------------------------------------------------------------------------------------------------
# explain's options (explain, check, compile --explain): refused where they mean nothing, and explain's runs
# (analyses/explain/run.py) with the command's compile, spinner and failure report


# explain's and check's TARGET: a kernel to compile, or one that already compiled (what `open` reads)
FOUND_TARGET_HELP = ("A built-in sample, path/to/file.py:kernel_name, or a kernel that already compiled (as `open` "
               "reads): a capture folder, a Triton cache or TRITON_KERNEL_DUMP folder, or a stage file (.ttgir, "
               ".ptx, .cubin, ...).")
FoundKernelOpt = typer.Option(None, "--kernel", "-k", help="For a folder of kernels: explain this one, by its name "
                                                           "or (a prefix of) its hash, as `tritonscope open` lists "
                                                           "them.")
















