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
The options themselves are declared in commands/_common.py.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, List, Optional

import typer

from tritonscope.commands import _common as c


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
        return c.make_request(*self._words(target, changes), **self._keywords(changes))

    def config(self, target: str, **changes: Any):
        """The one resolved Config (pipeline/config.py): checked, its arch canonical, its launch options fit for it."""
        return c.make_config(*self._words(target, changes), **self._keywords(changes))

    def _words(self, target: str, changes: dict) -> list:
        return [target, *(changes.get(n, getattr(self, n)) for n in
                          ("constexpr", "block", "arg", "num_warps", "num_stages", "arch", "shape", "dtype"))]

    def _keywords(self, changes: dict) -> dict:
        return {"maxnreg": self.maxnreg, "num_ctas": self.num_ctas, "fp_fusion": self.fp_fusion, "grid": self.grid,
                **{k: v for k, v in changes.items() if k in ("config", "gpu", "grid")}}

    def launch_options(self) -> dict:
        """--maxnreg / --num-ctas / --fp-fusion as Triton's option names, checked."""
        return c.launch_options(self.maxnreg, self.num_ctas, self.fp_fusion)


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
    ("constexpr", Optional[List[str]], c.ConstexprOpt),
    ("block", Optional[int], c.BlockOpt),
    ("arg", Optional[List[str]], c.ArgOpt),
])
LAUNCH = Group([
    ("maxnreg", Optional[int], c.MaxnregOpt),
    ("num_ctas", Optional[int], c.NumCtasOpt),
    ("fp_fusion", Optional[bool], c.FpFusionOpt),
], ConfigValues)
# what one compile is of: the kernel's values, the target and the launch
CONFIG = CONSTEXPRS + Group([
    ("num_warps", Optional[int], c.WarpsOpt),
    ("num_stages", Optional[int], c.StagesOpt),
    ("arch", Optional[str], c.ArchOpt),
    ("shape", Optional[str], c.ShapeOpt),
    ("dtype", Optional[str], c.DtypeOpt),
]) + LAUNCH
CONFIG.values = ConfigValues
# the launch grid (--grid), for a command that predicts or explains a launch: CONFIG + GRID
GRID = Group([("grid", Optional[str], c.GridOpt)], ConfigValues)
# a grid of configs (sweep, bench): each comma-separated list is an axis
AXES = Group([
    ("constexpr", Optional[List[str]], typer.Option(None, "-c", "--constexpr", metavar="NAME=V1,V2,...",
                                                    help="A constexpr axis (repeatable), e.g. -c BLOCK=16,32,64.")),
    ("block", Optional[int], c.BlockOpt),
    ("blocks", Optional[str], c.BlocksOpt),
    ("arg", Optional[List[str]], c.ArgOpt),
    ("num_warps", Optional[str], typer.Option(None, "--num-warps", "-w", metavar="N1,N2,...",
                                              help="Warps axis, e.g. 2,4,8.")),
    ("num_stages", Optional[str], typer.Option(None, "--num-stages", "-s", metavar="N1,N2,...",
                                               help="Pipelining stages axis, e.g. 1,2,3.")),
])
# how the result is drawn on the terminal
DISPLAY = Group([
    ("width", Optional[int], c.WidthOpt),
    ("color", Optional[bool], c.ColorOpt),
    ("pager", bool, c.PagerOpt),
], DisplayValues)
# which stages, and how (compile, open, show)
STAGE_VIEWS = Group([
    ("stage", Optional[str], c.StageOpt),
    ("view", str, c.ViewOpt),
    ("line", Optional[int], c.LineOpt),
    ("layouts", bool, c.LayoutsOpt),
])
# an Analysis printed: --json or the views, at this width, folded so (compile, open, show)
OUTPUT = Group([("as_json", bool, c.JsonOpt)]) + DISPLAY + Group([
    ("max_lines", Optional[int], c.MaxLinesOpt),
    ("raw", bool, c.RawOpt),
    ("keep", Optional[str], c.KeepOpt),
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


def _block_bases(base, values: list[int], loaded, axes: dict) -> list:
    """One base request per --blocks value, with the constexprs --block sets written out (labels show them)."""
    from tritonscope.core.errors import UsageError
    from tritonscope.inputs.kernels import names_set_by_block

    names = names_set_by_block(loaded.example, list(loaded.spec.constexprs))
    clash = [n for n in names if n in axes]
    if clash:
        raise UsageError(f"--block sets {', '.join(clash)}, which -c sets too.", hint="Give one of them.")
    return [sw_replace(base, block=None, constexprs={**(base.constexprs or {}), **{n: str(v) for n in names}})
            for v in values]


def sw_replace(req, **changes):
    from dataclasses import replace

    return replace(req, **changes)


def axes_requests(target, constexpr, block, blocks, arg, num_warps, num_stages, arch, shape, dtype, maxnreg,
                   num_ctas, fp_fusion, gpu, *, grid=None):
    """The grid of requests `sweep` and `tune` compile: (requests, loaded first config, base, autotune configs,
    arches).  Every check that can fail without compiling fails here (exit 2), before any worker starts.
    `grid`: --grid's text, which every request carries (each config's launch grid is its own evaluation)."""
    from tritonscope.measure import sweep as sw
    from tritonscope import triton_api
    from tritonscope.inputs.kernels import canonical_arch, canonical_dtype
    from tritonscope.pipeline.compile_path import Pipeline
    from tritonscope.pipeline.config import resolve

    axes = sw.parse_constexpr_axes(constexpr)
    warps = sw.parse_ints(sw.parse_axis(num_warps, "--num-warps") if num_warps else None, "--num-warps")
    stages = sw.parse_ints(sw.parse_axis(num_stages, "--num-stages") if num_stages else None, "--num-stages")
    arches = [canonical_arch(x) for x in sw.parse_axis(arch, "--arch")] if arch else None
    dtypes = [canonical_dtype(x) for x in sw.parse_axis(dtype, "--dtype")] if dtype else None
    default_arch = c.default_arch()
    c.check_gpu(gpu, arches or [default_arch])  # an unknown --gpu, or one of another arch: exit 2 before any compile

    # Check the kernel once here (and find autotune configs) before any worker starts.
    block_values = c.block_axis(block, blocks)
    base = c.make_request(target, None, block_values[0] if block_values else None, arg, None, None,
                          arches[0] if arches else None, shape, dtypes[0] if dtypes else None,
                          maxnreg=maxnreg, num_ctas=num_ctas, fp_fusion=fp_fusion, grid=grid)
    c.check_options_for_arches(base.options, arches or [None])  # e.g. --maxnreg with a gfx target: exit 2
    first = {k: v[0] for k, v in axes.items()}
    loaded = Pipeline().bind(resolve(sw_replace(base, constexprs=first), default_arch))
    auto = triton_api.autotune_configs(loaded.obj)
    bases = [sw_replace(base, arch=arches[0] if arches else None)]
    if block_values:  # --block(s): the tile constexprs it sets become part of each config
        bases = _block_bases(bases[0], block_values, loaded, axes)
    requests = [r for b in bases for r in sw.build_grid(b, constexprs=axes, num_warps=warps, num_stages=stages,
                                                        arches=arches, dtypes=dtypes, autotune=auto)]
    return requests, loaded, base, auto, arches


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


def refuse_for_found(target: str, **given: Any) -> None:
    """Options that describe a launch to compile mean nothing for a kernel that already compiled: say so."""
    from tritonscope.core.errors import UsageError

    named = [name for name, value in given.items() if value not in (None, [], ())]
    if named:
        raise UsageError(f"{', '.join(named)} describe{'s' if len(named) == 1 else ''} a kernel to compile; "
                         f"{target} holds kernels that already compiled, with their launch in their IR.",
                         hint="-c, --arch, --num-warps, --num-stages, --maxnreg, --num-ctas and --fp-fusion "
                              "recompile a found kernel (as `tritonscope open --recompile` does).")


def refuse_kernel_option(target: str, kernel: Optional[str]) -> None:
    from tritonscope.core.errors import UsageError

    if kernel is not None:
        raise UsageError(f"--kernel picks one kernel of a folder that `tritonscope open` reads; {target} is a "
                         "kernel to compile.",
                         hint="Name a kernel in a Python file as path/to/file.py:kernel_name.")


def recompile_changes(arch: Optional[str], num_warps: Optional[int], num_stages: Optional[int],
                      constexpr: Optional[List[str]], maxnreg: Optional[int], num_ctas: Optional[int],
                      fp_fusion: Optional[bool]) -> dict[str, Any]:
    """The command line's changes to a found kernel, as sources.recompile's keywords (checked; {} for none)."""
    from tritonscope.inputs.kernels import canonical_arch, parse_assignments

    out: dict[str, Any] = {}
    if arch:
        out["arch"] = canonical_arch(arch)
    if num_warps is not None:
        out["num_warps"] = num_warps
    if num_stages is not None:
        out["num_stages"] = num_stages
    constexprs = parse_assignments(constexpr, "constexpr")
    if constexprs:
        out["constexprs"] = constexprs
    options = c.launch_options(maxnreg, num_ctas, fp_fusion)
    if options:
        out["options"] = options
    return out


def run_explain(config, env, *, shapes: list[str], gpu: Optional[str], check_fixes: bool, progress: bool = True,
                triton_banks: bool = True):
    """Config -> (Analysis, Explanation): the command's compile (spinner, result cache, failure report), then
    analyses/explain/run.explain_compiled (the verdicts, candidate compiles for the fixes)."""
    from tritonscope.analyses.analysis import analyze
    from tritonscope.pipeline.config import resolve

    config = resolve(config)  # a Request (the tests', the API's) resolved once here
    analysis = analyze(c.compile_request(config, env, progress=progress).artifact)
    return analysis, explain_analysis(analysis, config, env, shapes=shapes, gpu=gpu, check_fixes=check_fixes,
                                      progress=progress, triton_banks=triton_banks)


def explain_analysis(analysis, config, env, *, shapes: list[str], gpu: Optional[str], check_fixes: bool,
                     progress: bool = True, triton_banks: bool = True):
    """The Explanation of a compile of `config` already analysed (`compile --explain` shares it)."""
    from tritonscope.analyses.explain.run import explain_compiled

    return explain_compiled(analysis, config, c.pipeline(env, progress=False), shapes=shapes, gpu=gpu,
                            check_fixes=check_fixes, status=c.spinner(env, progress), triton_banks=triton_banks)


def explain_into_report(analysis, request, env, *, shapes: list[str], progress: bool = True):
    """`compile --explain`: the same verdicts (fixes checked), carried by `analysis` into its views and reports."""
    from tritonscope.analyses.explain import attach_explanation

    expl = explain_analysis(analysis, request, env, shapes=shapes, gpu=None, check_fixes=True, progress=progress)
    attach_explanation(analysis, expl.to_dict())
    return expl


def run_explain_found(path: str, kernel: Optional[str], env, *, changes: dict[str, Any], shapes: list[str],
                      gpu: Optional[str], check_fixes: bool, progress: bool = True, triton_banks: bool = True,
                      launches: Optional[list] = None):
    """A kernel found at `path` (as `open` finds it) -> (Analysis, Explanation): analyses/explain/run.explain_found
    with the command's spinner."""
    from tritonscope.analyses.explain.run import explain_found

    return explain_found(path, kernel, changes=changes, shapes=shapes, gpu=gpu, check_fixes=check_fixes,
                         status=c.spinner(env, progress), triton_banks=triton_banks, launches=launches)


def trace_request(config, env, *, progress: bool = True):
    """`passes` and `compile --passes`: Config -> PassTrace (one compile with every dump on, in a child), with a spinner on stderr.

    The trace carries the compile's Artifact too (`trace.artifact`), so
    `compile --passes` and `passes --save` need no second compile.
    """
    from tritonscope.analyses import passes

    with c.spinner(env, progress)(f"compiling {config.target} with every pass dumped..."):
        return passes.trace_passes(config, config.arch)
