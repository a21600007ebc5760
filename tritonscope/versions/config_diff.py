"""`tritonscope diff`'s work: two sides (saved reports, or configs of a kernel) read or bound, compiled (in this
Triton, both with every pass dumped for --passes, or a side in another Triton's environment), predicted, and
diffed (analyses/diff.py), with their innermost loops paired (--loop, versions/loop_pair.py).

The command parses its options into the sides (parse_side) and a base request, calls diff_sides, and prints
what comes back; nothing here prints (`status` and `say` are what the caller shows meanwhile).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace
from typing import Any, Callable, ContextManager, Optional

from tritonscope.core.errors import UsageError

SIDE_KEYWORDS = ("num_warps", "num_stages", "arch", "dtype", "shape", "triton")
# Launch options a side may set (as a launch's keyword arguments): side keyword -> Triton's option name.
SIDE_OPTIONS = {"maxnreg": "maxnreg", "num_ctas": "num_ctas", "fp_fusion": "enable_fp_fusion",
                "enable_fp_fusion": "enable_fp_fusion"}
_BOOLS = {"1": True, "true": True, "on": True, "yes": True, "0": False, "false": False, "off": False, "no": False}

Status = Callable[[str], ContextManager]


def _side_option(which: str, key: str, value: str):
    """One launch option of a side, as the launch would pass it; a bad value is a UsageError (exit 2)."""
    if SIDE_OPTIONS[key] == "enable_fp_fusion":
        if value.lower() not in _BOOLS:
            raise UsageError(f"--{which} {key}={value}: give on or off (true/false, 1/0).",
                             hint=f"For example: --{which} fp_fusion=off")
        return _BOOLS[value.lower()]
    digits = value[1:] if value.startswith("-") else value
    if not (digits.isascii() and digits.isdigit()):   # ASCII digits only: int() would take '٣' or '0_64'
        raise UsageError(f"--{which} {key}={value}: not an integer.",
                         hint=f"For example: --{which} {key}={'64' if key == 'maxnreg' else '2'}")
    number = _bounded(which, key, value)
    from tritonscope.inputs.kernels import check_launch_options

    try:
        check_launch_options({SIDE_OPTIONS[key]: number})
    except UsageError as e:  # the one check compile uses, said for this side: "--a maxnreg=7: ..."
        flag = {"maxnreg": "--maxnreg", "num_ctas": "--num-ctas"}[SIDE_OPTIONS[key]]
        raise UsageError(e.message.replace(f"{flag} {number}", f"--{which} {key}={number}"), hint=e.hint) from None
    return number


def _bounded(which: str, key: str, value: str) -> int:
    """A side's whole number of ASCII digits as an int; one of more than 18 digits is out of range (a UsageError:
    int() refuses 4300 digits and more, and no option takes such a number)."""
    if len(value.lstrip("-").lstrip("0")) > 18:
        raise UsageError(f"--{which} {key}={value[:20]}... ({len(value)} characters): out of range.",
                         hint=f"For example: --{which} {key}={'64' if key == 'maxnreg' else '8'}")
    return int(value)


def _side_int(which: str, key: str, value: str) -> int:
    """--a num_warps=8: ASCII digits only (int() would take '٣' or '0_4'), checked as a compile's -w / -s is, and
    said in the side's words ("--a num_warps=3 ...", not "--num-warps 3 ...")."""
    import re

    from tritonscope.inputs.kernels import Request, check_request

    if not re.fullmatch(r"-?[0-9]+", value):
        raise UsageError(f"--{which} {key}={value}: not an integer.",
                         hint=f"For example: --{which} {key}={'8' if key == 'num_warps' else '3'}")
    number = _bounded(which, key, value)
    try:
        check_request(Request(target="-", **{key: number}))
    except UsageError as e:
        flag = "--num-warps" if key == "num_warps" else "--num-stages"
        raise UsageError(e.message.replace(f"{flag} {number}", f"--{which} {key}={number}"), hint=e.hint) from None
    return number


def parse_side(items: Optional[list[str]], which: str) -> dict:
    """['BLOCK=16,num_warps=8,maxnreg=64'] -> {'constexprs': {'BLOCK': '16'}, 'options': {'maxnreg': 64},
    'num_warps': 8}."""
    out: dict = {"constexprs": {}, "options": {}}
    for item in items or []:
        for part in (p.strip() for p in item.split(",") if p.strip()):
            name, sep, value = part.partition("=")
            name, value = name.strip().replace("-", "_"), value.strip()
            if not sep or not name.isidentifier() or not value:
                raise UsageError(f"Bad --{which} {part!r}: expected NAME=VALUE.",
                                 hint=f"For example: --{which} BLOCK=32,num_warps=8")
            key = {"warps": "num_warps", "stages": "num_stages", "w": "num_warps", "s": "num_stages"}.get(name, name)
            if key in ("num_warps", "num_stages"):
                out[key] = _side_int(which, key, value)
            elif key in SIDE_KEYWORDS:
                out[key] = value
            elif key in SIDE_OPTIONS:
                out["options"][SIDE_OPTIONS[key]] = _side_option(which, key, value)
            else:
                out["constexprs"][name] = value
    return out


def side_request(base, side: dict):
    """The base request with one side's changes."""
    changes = {k: v for k, v in side.items() if k not in ("constexprs", "options", "triton")}
    return replace(base, constexprs={**(base.constexprs or {}), **side["constexprs"]},
                   options={**(base.options or {}), **side.get("options", {})}, **changes)


def is_report(target: str) -> bool:
    """Whether a diff target is a saved JSON report (else a kernel)."""
    return target.lower().endswith(".json")


@dataclass
class DiffRun:
    """What diff_sides found: the diff (None when A and B are one config: `same` is then its KernelSpec), the
    first pass that treats them differently (--passes), the paired innermost loops (--loop), both Analyses."""

    diff: Any = None            # analyses/diff.ConfigDiff
    same: Any = None            # the one config's KernelSpec, when nothing was diffed
    divergence: Any = None      # analyses/passes first_divergence, or None
    loop: Any = None            # versions/loop_pair.LoopPair, or None
    analyses: tuple = ()


def diff_sides(pair: list[str], side_a: dict, side_b: dict, base, pipe, *, passes: bool = False,
               predict: bool = False, gpu: str | None = None, loop: bool = False, context: int = 2,
               force_different: bool = False, status: Status | None = None,
               say: Callable[[str], None] | None = None,
               check_arches: Callable[[list[str]], None] | None = None) -> DiffRun:
    """A against B: `pair` the two targets (reports or kernels), `side_a`/`side_b` their changes (parse_side),
    `base` the request both kernel sides start from, `pipe` the Pipeline that binds and compiles them.

    Every check that can fail without compiling fails first (a side that changes a report, --passes with a
    report or another Triton, a Triton environment that cannot be made, `check_arches` on both sides' arches:
    a --gpu of another arch).  `status(text)` shows while both sides compile with every pass dumped; `say`
    prints the progress of making another Triton's environment."""
    from tritonscope.analyses.diff import diff_analyses
    from tritonscope.language.dialects import every_stage_key
    from tritonscope.outputs.report import load_analysis

    loaded = _sides(pair, side_a, side_b, base)
    tritons = _tritons(side_a, side_b, say, passes=passes)
    if passes and [k for k, _ in loaded] != ["kernel", "kernel"]:
        raise UsageError("--passes compiles both sides with Triton's per-pass dumps: give two kernel configs.",
                         hint="tritonscope diff matmul --a BLOCK=16 --b BLOCK=64 --passes")
    analyses = [load_analysis(what) if kind == "report" else pipe.bind(what) for kind, what in loaded]
    specs = [x.artifact.spec if kind == "report" else x.spec for (kind, _), x in zip(loaded, analyses)]
    if check_arches is not None:
        check_arches([s.arch for s in specs])  # e.g. a GPU of another arch: refused before either side compiles
    if _same(loaded, analyses, specs, side_a.get("triton") == side_b.get("triton")):
        return DiffRun(same=specs[0])

    analyses, divergence = _compile_sides(pipe, loaded, analyses, tritons, passes=passes, status=status)
    if predict or gpu is not None:  # both sides at their own launch, on one GPU
        from tritonscope.cost import predict as predicted

        for an in analyses:
            an.prediction = predicted(an, gpu=gpu).to_dict()
    d = diff_analyses(analyses[0], analyses[1], stages=every_stage_key(), context=context,
                      force_different=force_different)
    pair_of_loops = None
    if loop:
        from tritonscope.versions.loop_pair import loop_pair_of

        pair_of_loops = loop_pair_of(analyses[0].artifact, analyses[1].artifact)
    return DiffRun(diff=d, divergence=divergence, loop=pair_of_loops, analyses=tuple(analyses))


def _sides(pair, side_a: dict, side_b: dict, base) -> list:
    """[(kind, what)] for A and B: ("report", path) or ("kernel", its one Config: the arch resolved, e.g. maxnreg on
    gfx942 refused, exit 2)."""
    from tritonscope.pipeline.config import resolve

    loaded = []
    for target, side, which in ((pair[0], side_a, "a"), (pair[1], side_b, "b")):
        if is_report(target):
            if side["constexprs"] or side["options"] or len(side) > 2:
                raise UsageError(f"--{which} cannot change a saved report ({target}).",
                                 hint="Diff a report against a kernel config, or two reports, as saved.")
            loaded.append(("report", target))
        else:
            loaded.append(("kernel", resolve(side_request(replace(base, target=target), side))))
    return loaded


def _same(loaded, analyses, specs, same_triton: bool) -> bool:
    """Whether A and B are one config (two reports of one compile, or two kernels bound alike)."""
    from tritonscope.analyses.diff import spec_key

    kinds = [k for k, _ in loaded]
    if kinds == ["report", "report"]:
        return spec_key(specs[0]) == spec_key(specs[1]) and all(
            getattr(analyses[0].artifact, f) == getattr(analyses[1].artifact, f) for f in ("triton_version", "kernel_hash"))
    return kinds == ["kernel", "kernel"] and same_triton and spec_key(specs[0]) == spec_key(specs[1]) \
        and specs[0].file == specs[1].file and specs[0].shape == specs[1].shape and specs[0].dtype == specs[1].dtype


def _compile_sides(pipe, loaded, analyses, tritons, *, passes: bool, status: Status | None):
    """Each kernel side compiled (its report read already): (the two Analyses, the pass divergence or None)."""
    from tritonscope.outputs.cached import analysis_of

    divergence = None
    if passes:  # one compile per side, with dumps; its artifact is the side's analysis too
        from tritonscope.analyses.analysis import analyze
        from tritonscope.analyses.passes import first_divergence, trace_both

        configs = [what for _, what in loaded]
        with (status or _quiet)("compiling A and B with every pass dumped..."):
            ta, tb = trace_both(configs[0], configs[1], configs[0].arch)
        with ta, tb:
            return [analyze(ta.artifact), analyze(tb.artifact)], first_divergence(ta, tb)
    analyses = list(analyses)
    for i, (kind, config) in enumerate(loaded):
        if kind == "kernel":  # through the one compile path (its result cache too), or another Triton's child
            say = f"compiling {'AB'[i]}: {analyses[i].spec.label()} ..."
            compiled = _compile_with_triton(pipe, config, tritons[i], "AB"[i], say) if tritons[i] else \
                pipe.compile(config, loaded=analyses[i], status=say)
            analyses[i] = analysis_of(compiled)
    return analyses, divergence


def _quiet(text: str):
    return contextlib.nullcontext()


def _tritons(side_a: dict, side_b: dict, say: Callable[[str], None] | None, *, passes: bool) -> dict:
    """{0: side A's other Triton or None, 1: B's}: each environment made (or checked) before any compile, so a bad
    version is one line (exit 2/3); --passes cannot run in another Triton."""
    if passes and (side_a.get("triton") or side_b.get("triton")):
        raise UsageError("--passes runs in this environment's Triton: it cannot be combined with triton=.",
                         hint="Diff the versions without --passes, or run `tritonscope passes` in each environment.")
    tritons = {0: side_a.get("triton"), 1: side_b.get("triton")}
    if any(tritons.values()):
        from tritonscope.versions import envs as version_envs

        for i, v in list(tritons.items()):
            if v:
                tritons[i] = version_envs.resolve(v, progress=say)
    return tritons


def _compile_with_triton(pipe, config, triton_env, which: str, say: str):
    """A side with triton=: compiled in a child of that environment, as `compile --triton` does (versions/sides.py)."""
    from tritonscope.pipeline.compile_path import Compiled
    from tritonscope.versions.sides import compile_with_triton

    with pipe.status(say):
        return Compiled(compile_with_triton(config, triton_env, what=f"The compile of side {which}"), config)
