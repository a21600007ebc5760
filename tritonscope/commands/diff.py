"""tritonscope diff: what changes between two configs (or two saved reports) of one kernel."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import List, Optional

import typer

from tritonscope.commands import checks, running
from tritonscope.commands.options import CONFIG, DISPLAY, GRID, GpuOpt, Values, composed
from tritonscope.core.errors import UsageError

SIDE_KEYWORDS = ("num_warps", "num_stages", "arch", "dtype", "shape", "triton")
# Launch options a side may set (as a launch's keyword arguments): side keyword -> Triton's option name.
SIDE_OPTIONS = {"maxnreg": "maxnreg", "num_ctas": "num_ctas", "fp_fusion": "enable_fp_fusion",
                "enable_fp_fusion": "enable_fp_fusion"}
_BOOLS = {"1": True, "true": True, "on": True, "yes": True, "0": False, "false": False, "off": False, "no": False}


SideAOpt = typer.Option(None, "--a", metavar="NAME=VALUE,...",
                        help="Config of side A: constexprs and num_warps, num_stages, arch, dtype, "
                             "shape, the launch options maxnreg, num_ctas, fp_fusion (on/off), "
                             "and triton=VERSION or triton=/path/to/python (another Triton), "
                             "comma-separated (repeatable).")
SideBOpt = typer.Option(None, "--b", metavar="NAME=VALUE,...", help="Config of side B (as --a).")
StagesOpt = typer.Option(None, "--stage", "--stages",
                         help="Stages to diff: python,ttir,ttgir,llir,ptx,sass (amdgcn for AMD "
                              "targets), all (default), or none for the summary only.")
PassesOpt = typer.Option(False, "--passes",
                         help="Also name the first compiler pass that treats A and B differently beyond the "
                              "config's own numbers (both sides compile once with Triton's per-pass dumps; "
                              "the rule is below).")
PredictOpt = typer.Option(False, "--predict",
                          help="Also predict each side's time at its launch (GPU-less cost model): the "
                               "predicted speed ratio and the terms that explain it.")
LoopOpt = typer.Option(False, "--loop",
                       help="Also put the two sides' innermost loops side by side (SASS or AMDGCN, else PTX), "
                            "memory waits, drains, barriers, loads and MMAs marked; alone, it replaces the "
                            "stage diffs (add --stage to have both).")


def _side_option(which: str, key: str, value: str):
    """One launch option of a side, as the launch would pass it; a bad value is a UsageError (exit 2)."""
    if SIDE_OPTIONS[key] == "enable_fp_fusion":
        if value.lower() not in _BOOLS:
            raise UsageError(f"--{which} {key}={value}: give on or off (true/false, 1/0).",
                             hint=f"For example: --{which} fp_fusion=off")
        return _BOOLS[value.lower()]
    try:
        number = int(value)
    except ValueError:
        raise UsageError(f"--{which} {key}={value}: not an integer.",
                         hint=f"For example: --{which} {key}={'64' if key == 'maxnreg' else '2'}") from None
    from tritonscope.inputs.kernels import check_launch_options

    try:
        check_launch_options({SIDE_OPTIONS[key]: number})
    except UsageError as e:  # the one check compile uses, said for this side: "--a maxnreg=7: ..."
        flag = {"maxnreg": "--maxnreg", "num_ctas": "--num-ctas"}[SIDE_OPTIONS[key]]
        raise UsageError(e.message.replace(f"{flag} {number}", f"--{which} {key}={number}"), hint=e.hint) from None
    return number


def parse_side(items: Optional[List[str]], which: str) -> dict:
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
                try:
                    out[key] = int(value)
                except ValueError:
                    raise UsageError(f"--{which} {key}={value}: not an integer.") from None
            elif key in SIDE_KEYWORDS:
                out[key] = value
            elif key in SIDE_OPTIONS:
                out["options"][SIDE_OPTIONS[key]] = _side_option(which, key, value)
            else:
                out["constexprs"][name] = value
    return out


def side_request(base, side: dict):
    changes = {k: v for k, v in side.items() if k not in ("constexprs", "options", "triton")}
    return replace(base, constexprs={**(base.constexprs or {}), **side["constexprs"]},
                   options={**(base.options or {}), **side.get("options", {})}, **changes)


def _is_report(target: str) -> bool:
    return target.lower().endswith(".json")


@composed
def diff_cmd(
    ctx: typer.Context,
    targets: List[str] = typer.Argument(..., metavar="TARGET [TARGET_B]",
                                        help="A kernel (sample or file.py:kernel) diffed against itself with --a/--b, "
                                             "or two sides: saved .json reports and/or kernels."),
    a: Optional[List[str]] = SideAOpt,
    b: Optional[List[str]] = SideBOpt,
    kernel: Values = CONFIG + GRID,
    stage: Optional[str] = StagesOpt,
    max_lines: int = typer.Option(60, "--max-lines", help="Diff lines shown per stage (0: all)."),
    context: int = typer.Option(2, "--context", "-U", help="Unchanged lines around each change."),
    force_different: bool = typer.Option(False, "--force-different", help="Diff two different kernels anyway."),
    passes: bool = PassesOpt,
    predict: bool = PredictOpt,
    gpu: Optional[str] = GpuOpt,
    loop: bool = LoopOpt,
    as_json: bool = typer.Option(False, "--json", help="Print the diff as JSON."),
    save: Optional[str] = typer.Option(None, "--save", help="Save the diff: .json, .txt or .html (by extension)."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing --save file."),
    display: Values = DISPLAY,
):
    """Diff two configs of one kernel: resources, instruction mix, encodings, every stage.

    Each side is a config of TARGET (--a/--b: comma-separated NAME=VALUE, where
    NAME is a constexpr or num_warps, num_stages, arch, dtype, shape, a
    launch option: maxnreg, num_ctas, fp_fusion=on|off, or triton=VERSION|PYTHON:
    that side compiles with another Triton, in a child of an environment
    `tritonscope versions` makes and caches), or a saved JSON
    report. Options like --arch or --maxnreg apply to both sides. Stage diffs
    ignore noise: SSA/register/label numbering, locations, paths, debug info.

    --passes compiles both sides with per-pass dumps (in parallel) and names
    the first pass that does something different to them.  Each dump is read
    with what a config changes set aside (numbers: shapes, constants,
    attributes; SSA and symbol names; layout parameters and alias numbers;
    runs of one repeated item); a pass's effect is the set of distinct lines
    it adds and removes, and the first pass (paired by name, in order) whose
    effects differ, or that only one side runs and that changes its IR, is
    where A and B diverge.

    Exit status: 0 (also when A and B are the same config: it says so),
    2 bad usage or different kernels without --force-different, 7 bad report.

    Examples:

      tritonscope diff matmul --a BLOCK=16 --b BLOCK=64 --arch sm_90

      tritonscope diff matmul --block 16 --a num_warps=2 --b num_warps=4 --stage ttgir

      tritonscope diff matmul --a arch=sm_80 --b arch=sm_90 --stage none

      tritonscope diff vector_add -c BLOCK=4096 --a maxnreg=255 --b maxnreg=32 --stage none

      tritonscope diff softmax --a fp_fusion=on --b fp_fusion=off --stage ptx

      tritonscope diff old.json new.json

      tritonscope diff matmul --a triton=3.4.0 --b triton=3.6.0 --arch gfx950 --stage amdgcn

      tritonscope diff matmul --a triton=3.6.0 --b triton=3.9.0 --arch gfx942 --loop

      tritonscope diff matmul --a BLOCK=16 --b BLOCK=64 --arch sm_90a --passes --stage none

      tritonscope diff matmul_grouped --shape 4096x4096x4096 --a BLOCK_M=64 --b BLOCK_M=128 --gpu H100 --stage none
    """
    from tritonscope.analyses.diff import diff_analyses
    from tritonscope.language.dialects import every_stage_key
    from tritonscope.outputs.report import load_analysis

    env = display.env(ctx)
    if len(targets) > 2:
        raise UsageError(f"diff takes one or two targets, got {len(targets)}.",
                         hint="tritonscope diff matmul --a BLOCK=16 --b BLOCK=32, or tritonscope diff old.json new.json")
    # every backend's stages: a side without one shows it as missing (sm_90a has no AMDGCN, gfx942 no PTX)
    stages = checks.parse_stage_list("none" if loop and stage is None else stage, every_stage_key())
    if context < 0:
        raise UsageError(f"-U/--context {context}: give 0 or more lines.",
                         hint="e.g. -U 2 (the default), or -U 0 for the changed lines alone.")
    if save:  # fail before compiling anything when --save cannot be honoured
        from tritonscope.outputs import save as saving

        saving.check(save, force=force, names=saving.DIFF, what="diff")
    checks.check_gpu(gpu)  # empty or unknown: before any kernel is loaded (its arch: once the sides are bound)
    side_a, side_b = parse_side(a, "a"), parse_side(b, "b")
    pair = targets if len(targets) == 2 else [targets[0], targets[0]]
    if len(targets) == 1 and _is_report(targets[0]):
        raise UsageError("A saved report needs a second side to diff against.",
                         hint="tritonscope diff old.json new.json")
    loaded = _sides(pair, side_a, side_b, kernel.request("_"))
    tritons = _tritons(side_a, side_b, env, passes=passes)
    if passes and [k for k, _ in loaded] != ["kernel", "kernel"]:
        raise UsageError("--passes compiles both sides with Triton's per-pass dumps: give two kernel configs.",
                         hint="tritonscope diff matmul --a BLOCK=16 --b BLOCK=64 --passes")
    pipe = running.pipeline(env, progress=not as_json)
    analyses = [load_analysis(what) if kind == "report" else pipe.bind(what) for kind, what in loaded]
    specs = [x.artifact.spec if kind == "report" else x.spec for (kind, _), x in zip(loaded, analyses)]
    checks.check_gpu(gpu, [s.arch for s in specs])  # a GPU of another arch: refused before either side compiles
    if _same(loaded, analyses, specs, side_a.get("triton") == side_b.get("triton")):
        return _say_same(specs[0], as_json)

    analyses, divergence = _compile_sides(pipe, loaded, analyses, tritons, env, passes=passes, progress=not as_json)
    if predict or gpu is not None:  # both sides at their own launch, on one GPU
        from tritonscope.cost import predict as predicted

        for an in analyses:
            an.prediction = predicted(an, gpu=gpu).to_dict()
    d = diff_analyses(analyses[0], analyses[1], stages=every_stage_key(), context=context,
                      force_different=force_different)
    attached = (_loop_view(d, analyses, context),) if loop else ()
    if as_json:
        typer.echo(json.dumps(_diff_dict(d, divergence, attached), indent=1))
    else:
        console = env.console()
        with env.paged(console):
            _print_diff(console, d, stages, max_lines, divergence, attached)
    if save:
        from tritonscope.outputs.save import save_diff

        save_diff(d, save, force=force, stages=stages, max_lines=max_lines, divergence=divergence,
                  attached=attached)


def _loop_view(d, analyses, context: int):
    """--loop: the two innermost loops side by side (versions/loop_pair.py), attached to the diff's views."""
    from tritonscope.outputs.render.diff_view import Attached
    from tritonscope.versions.loop_render import loop_html, loop_panel
    from tritonscope.versions.loop_pair import loop_pair_of

    pair = loop_pair_of(analyses[0].artifact, analyses[1].artifact)
    return Attached("loop", pair.to_dict(), loop_panel(pair, d.a_label, d.b_label, context=context),
                    loop_html(pair, d.a_label, d.b_label, context=context))


def _say_same(spec, as_json: bool) -> None:
    """A and B are one config: said (exit 0), nothing diffed."""
    if as_json:
        typer.echo(json.dumps({"identical_configs": True, "config": spec.label()}))
        return
    from tritonscope.core.sanitize import visible

    typer.echo(visible(f"A and B are the same config ({spec.kernel}: {spec.label()}): nothing to diff."))
    typer.echo("hint: give the sides different values, e.g. --a BLOCK=16 --b BLOCK=32", err=True)


def _sides(pair, side_a: dict, side_b: dict, base) -> list:
    """[(kind, what)] for A and B: ("report", path) or ("kernel", its one Config: the arch resolved, e.g. maxnreg on
    gfx942 refused, exit 2)."""
    from tritonscope.pipeline.config import resolve

    loaded = []
    for target, side, which in ((pair[0], side_a, "a"), (pair[1], side_b, "b")):
        if _is_report(target):
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


def _compile_sides(pipe, loaded, analyses, tritons, env, *, passes: bool, progress: bool):
    """Each kernel side compiled (its report read already): (the two Analyses, the pass divergence or None)."""
    divergence = None
    if passes:  # one compile per side, with dumps; its artifact is the side's analysis too
        from tritonscope.analyses.analysis import analyze
        from tritonscope.analyses.passes import first_divergence, trace_both

        configs = [what for _, what in loaded]
        with running.spinner(env, progress)("compiling A and B with every pass dumped..."):
            ta, tb = trace_both(configs[0], configs[1], configs[0].arch)
        with ta, tb:
            return [analyze(ta.artifact), analyze(tb.artifact)], first_divergence(ta, tb)
    analyses = list(analyses)
    for i, (kind, config) in enumerate(loaded):
        if kind == "kernel":  # through the one compile path (its result cache too), or another Triton's child
            say = f"compiling {'AB'[i]}: {analyses[i].spec.label()} ..."
            compiled = _compile_with_triton(pipe, config, tritons[i], "AB"[i], say) if tritons[i] else \
                pipe.compile(config, loaded=analyses[i], status=say)
            analyses[i] = running.analysis_of(compiled)
    return analyses, divergence


def _tritons(side_a: dict, side_b: dict, env, *, passes: bool) -> dict:
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
                tritons[i] = version_envs.resolve(v, progress=_say_env(env))
    return tritons


def _say_env(env):
    console = env.console(stderr=True)

    def say(line: str) -> None:
        from rich.markup import escape

        console.print(escape(line), highlight=False)
    return say


def _compile_with_triton(pipe, config, triton_env, which: str, say: str):
    """A side with triton=: compiled in a child of that environment, as `compile --triton` does (versions/sides.py)."""
    from tritonscope.pipeline.compile_path import Compiled
    from tritonscope.versions.sides import compile_with_triton

    with pipe.status(say):
        return Compiled(compile_with_triton(config, triton_env, what=f"The compile of side {which}"), config)


def _diff_dict(d, divergence, attached=()) -> dict:
    from tritonscope.outputs.render.diff_view import diff_data

    return diff_data(d, divergence, attached)


def _print_diff(console, d, stages, max_lines, divergence=None, attached=()) -> None:
    from tritonscope.outputs.render.diff_view import diff_renderables

    for renderable in diff_renderables(d, stages, max_lines, divergence, attached):
        console.print(renderable)
