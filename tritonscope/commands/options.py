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
