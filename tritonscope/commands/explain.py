"""tritonscope explain: why a config is slow or does not fit, and what to change (checked by compiling).

TARGET is a kernel to compile (a sample, or path/to/file.py:kernel), or a
kernel that already compiled, found where `tritonscope open` looks: a
capture, a Triton cache or TRITON_KERNEL_DUMP folder, a single stage file.
A found kernel is explained from what its source holds (explain.py says
which verdicts that leaves out, and why); its fixes are checked with
sources.recompile where its IR (or, for -c, a captured Python function) can
be compiled again, and marked "not checked" otherwise.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, List, Optional

import typer

from tritonscope.commands import _common as c
from tritonscope.commands.options import CONFIG, DISPLAY, GRID, GpuOpt, Values, composed

TARGET_HELP = ("A built-in sample, path/to/file.py:kernel_name, or a kernel that already compiled (as `open` "
               "reads): a capture folder, a Triton cache or TRITON_KERNEL_DUMP folder, or a stage file (.ttgir, "
               ".ptx, .cubin, ...).")
KernelOpt = typer.Option(None, "--kernel", "-k", help="For a folder of kernels: explain this one, by its name or "
                                                      "(a prefix of) its hash, as `tritonscope open` lists them.")
ShapesOpt = typer.Option(None, "--shape", metavar="MxNxK",
                         help="A problem shape (repeatable, e.g. --shape 4096x4096x4096): tiles against SMs, the "
                              "last wave, and the roofline time bound.  The first also sets the compiled shape "
                              "of a sample.")
NoCheckOpt = typer.Option(False, "--no-check-fixes", help="Do not compile candidate fixes (faster; fixes are then "
                                                           "suggestions, not checked).")

# How a found kernel's source is named in reasons ("... which this stage file does not have").
WHERE = {"triton-cache": "cache entry", "inductor-cache": "cache entry", "dump": "kernel dump",
         "capture": "captured kernel", "file": "stage file"}


# --------------------------------------------------------------------------
# Which kind of TARGET
# --------------------------------------------------------------------------


def is_found_target(target: str) -> bool:
    """Whether TARGET names kernels that already compiled (what `open` reads) rather than a kernel to compile.

    `path/to/file.py:kernel` and `file.py` are kernels to compile, and a bare
    word that is a sample's name is that sample, as for every command; a
    stage file's extension, an existing folder, or a word that looks like a
    path (`./x`, `~/x`, `a/b`) is a place to open (a missing one then says
    "no such file or folder", as `open` does).
    """
    from tritonscope.inputs.sources import SINGLE_FILE_EXTS

    head, sep, _ = target.rpartition(":")
    if sep and head.endswith(".py"):
        return False
    if target.endswith(".py"):
        return False
    if Path(target).suffix.lower() in SINGLE_FILE_EXTS:
        return True
    looks_like_path = "/" in target or os.sep in target or target.startswith(("~", "."))
    if looks_like_path:
        return True
    if Path(target).is_dir():
        from tritonscope.inputs.kernels import list_samples

        return target not in {s.name for s in list_samples()}
    return False


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


# --------------------------------------------------------------------------
# A kernel to compile
# --------------------------------------------------------------------------


def shapes_for(config, shapes: list[str]):
    """explain.Shape for each --shape: its grid and arguments from the kernel's example launch (no compile)."""
    from dataclasses import replace

    from tritonscope.analyses.explain import Shape
    from tritonscope.inputs.kernels import parse_shape
    from tritonscope.pipeline.compile_path import Pipeline

    out = []
    for text in shapes:
        loaded = Pipeline().bind(replace(config, shape=text))
        spec = loaded.spec
        out.append(Shape(parse_shape(text), spec.grid, dict(spec.args), (loaded.launch or {}).get("flops")))
    return out


def run_explain(config, env, *, shapes: list[str], gpu: Optional[str], check_fixes: bool, progress: bool = True,
                triton_banks: bool = True):
    """Config -> (Analysis, Explanation): one compile, the verdicts, candidate compiles for the fixes."""
    from tritonscope.analyses.analysis import analyze
    from tritonscope.pipeline.config import resolve

    config = resolve(config)  # a Request (the tests', the API's) resolved once here
    analysis = analyze(c.compile_request(config, env, progress=progress).artifact)
    return analysis, explain_analysis(analysis, config, env, shapes=shapes, gpu=gpu, check_fixes=check_fixes,
                                      progress=progress, triton_banks=triton_banks)


def explain_analysis(analysis, config, env, *, shapes: list[str], gpu: Optional[str], check_fixes: bool,
                     progress: bool = True, triton_banks: bool = True):
    """The Explanation of a compile of `config` (its Analysis made already: `compile --explain` shares it)."""
    from tritonscope import triton_api
    from tritonscope.analyses.explain import apply_change

    from tritonscope.pipeline.config import resolve

    artifact = analysis.artifact
    config = resolve(config, artifact.spec.arch)
    fixes = c.pipeline(env, progress=False)

    def recompile(change: dict):
        import contextlib
        import io

        from tritonscope.analyses.analysis import analyze

        # a candidate Triton rejects (ptxas out of registers...) prints its own report: keep it out of ours
        with contextlib.redirect_stdout(io.StringIO()):
            return analyze(fixes.compile(apply_change(config, change)).artifact)

    cubin = triton_api.cached_stage_file(artifact.kernel_hash, artifact.spec.kernel, "cubin")
    problem = shapes_for(config, shapes) if shapes else []
    return _explain_with_status(analysis, env, progress, recompile=recompile if check_fixes else None,
                                shapes=problem, gpu=gpu, cubin=cubin, triton_banks=triton_banks)


def explain_into_report(analysis, request, env, *, shapes: list[str], progress: bool = True):
    """`compile --explain`: the same verdicts (fixes checked), carried by `analysis` into its views and reports."""
    from tritonscope.analyses.explain import attach_explanation

    expl = explain_analysis(analysis, request, env, shapes=shapes, gpu=None, check_fixes=True, progress=progress)
    attach_explanation(analysis, expl.to_dict())
    return expl


def _explain_with_status(analysis, env, progress: bool, **kw):
    from tritonscope.analyses.explain import explain

    with c.spinner(env, progress and kw.get("recompile") is not None)(
            "checking what would help (compiling candidate fixes)..."):
        return explain(analysis, **kw)


# --------------------------------------------------------------------------
# A kernel that already compiled
# --------------------------------------------------------------------------


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


def run_explain_found(path: str, kernel: Optional[str], env, *, changes: dict[str, Any], shapes: list[str],
                      gpu: Optional[str], check_fixes: bool, progress: bool = True, triton_banks: bool = True,
                      launches: Optional[list] = None):
    """A kernel found at `path` (as `open` finds it) -> (Analysis, Explanation).

    With `changes` (--arch, -w, -s, -c, launch options) the found kernel is
    recompiled first (sources.recompile) and that compile is explained.
    `launches`: a list that gets each --shape's explain.Shape (its launch grid, when its file's EXAMPLES gives
    one), for a prediction at that launch.
    """
    from tritonscope.inputs import sources
    from tritonscope.analyses.analysis import analyze
    from tritonscope.core.model import option_words

    source = sources.open_source(path)
    entry = sources.find_entry(source, kernel)
    original = sources.load_artifact(entry, target=path)
    artifact, cubin = original, sources.cubin_of(entry)
    described = _described(source, entry, path)
    if changes:
        with c.spinner(env, progress)(f"recompiling {entry.name} ..."):
            artifact = sources.recompile(entry, original, **changes)
        cubin = sources.binaries_of_artifact(artifact).get("cubin")
        described += ", recompiled with " + ", ".join(
            f"{k}={v}" if k != "options" else option_words(v) for k, v in changes.items())
    analysis = analyze(artifact)
    recompile = found_recompiler(entry, original, changes) if check_fixes else None
    problem = found_shapes(analysis.artifact, shapes, WHERE.get(entry.kind, "kernel")) if shapes else []
    if launches is not None:
        launches.extend(problem)
    expl = _explain_with_status(analysis, env, progress, recompile=recompile, shapes=problem, gpu=gpu, cubin=cubin,
                                triton_banks=triton_banks, source=described,
                                where="compile" if changes else WHERE.get(entry.kind, "kernel"))
    return analysis, expl


def _described(source, entry, path: str) -> str:
    """'captured kernel add_kernel (01c9a1bcb1eb) in tests/data/capture' and the like."""
    words = WHERE.get(entry.kind, "kernel")
    if source.single:
        return f"{words} {path}" if entry.kind == "file" else f"{words} {entry.name} in {path}"
    return f"{words} {entry.name} ({entry.short_key}) in {path}"


def found_recompiler(entry, original, pinned: dict[str, Any]):
    """The Recompile for a found kernel's fixes: sources.recompile with the fix's change, where that can be done.

    The IR (`.source`, else `.ttir`) recompiles with other num_warps,
    num_stages and launch options; other constexprs (a block size) need the
    Python function a capture records; the launch's arguments (alignment,
    divisibility) are in the IR and cannot change.  What cannot be compiled
    raises FixNotCheckable with the reason the fix then carries.
    """
    import contextlib
    import io

    from tritonscope.inputs import sources
    from tritonscope.analyses.analysis import analyze
    from tritonscope.core.errors import InputFileError, UsageError
    from tritonscope.analyses.explain import FixNotCheckable

    record = entry.record or {}
    has_ir = "source" in entry.files or "ttir" in entry.files
    has_function = record.get("constants") is not None and record.get("module_text") is not None
    where = WHERE.get(entry.kind, "kernel")

    def refuses(change: dict) -> str | None:
        if not has_ir and not has_function:
            return f"no source to recompile (this {where} has no TTIR and no captured Python function)"
        if "args" in change:
            return ("a recompile keeps the launch's argument alignment and divisibility, which are compiled into "
                    "this kernel's IR")
        if "constexprs" in change and not has_function:
            return ("its constexprs are folded into its IR: only a capture keeps the Python function to compile "
                    "another block size")
        return None

    def recompile(change: dict):
        reason = refuses(change)
        if reason:
            raise FixNotCheckable(reason)
        kw: dict[str, Any] = {k: v for k, v in pinned.items()}
        for key in ("num_warps", "num_stages"):
            if key in change:
                kw[key] = int(change[key])
        if "constexprs" in change:
            kw["constexprs"] = {**kw.get("constexprs", {}), **change["constexprs"]}
        if "maxnreg" in change:
            kw["options"] = {**kw.get("options", {}), "maxnreg": int(change["maxnreg"])}
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                return analyze(sources.recompile(entry, original, **kw))
        except (UsageError, InputFileError) as e:  # it cannot be recompiled here (not: this candidate failed)
            raise FixNotCheckable(e.message.rstrip(".")) from e

    recompile.refuses = refuses  # explain asks before a fix that has nothing to compile here
    return recompile


def found_shapes(artifact, shapes: list[str], where: str):
    """explain.Shape for each --shape of a found kernel: the launch its file's EXAMPLES entry gives for that
    shape, when the file is here, has one, and the kernel's constexprs and dtypes are known to match it;
    otherwise no grid, and why (waves and roofline are then not judged, never guessed)."""
    from tritonscope.core.errors import TritonscopeError
    from tritonscope.analyses.explain import Shape
    from tritonscope.inputs.kernels import Request, TensorArg, parse_arg_value, parse_shape
    from tritonscope.core.model import ARCHES, DEFAULT_ARCH
    from tritonscope.pipeline.compile_path import Pipeline
    from tritonscope.pipeline.config import resolve

    spec = artifact.spec
    dims = [parse_shape(t) for t in shapes]
    why = _why_no_example(spec)
    out = []
    for text, d in zip(shapes, dims):
        if why:
            out.append(Shape(d, None, {}, None, why))
            continue
        pointers = {s.name: s.type[1:] for s in artifact.specialization if s.type.startswith("*")}
        request = Request(target=f"{spec.file}:{spec.kernel}",
                          constexprs={k: str(v) for k, v in spec.constexprs.items()}, shape=text,
                          dtype=next(iter(pointers.values()), None), num_warps=spec.num_warps)
        try:
            loaded = Pipeline().bind(resolve(request, spec.arch if spec.arch in ARCHES else DEFAULT_ARCH))
        except TritonscopeError as e:
            out.append(Shape(d, None, {}, None, f"its file's EXAMPLES launch does not describe it: {e.message}"))
            continue
        unknown = [n for n in loaded.spec.constexprs if n not in spec.constexprs]
        if unknown:
            out.append(Shape(d, None, {}, None, f"this {where} does not record its constexprs "
                                                f"({', '.join(unknown)}: they are folded into its IR), so the "
                                                "launch grid for a shape would be a guess"))
            continue
        differ = []
        for name, value in loaded.spec.args.items():
            arg = parse_arg_value(value) if isinstance(value, str) else value
            if isinstance(arg, TensorArg) and name in pointers and arg.dtype != pointers[name]:
                differ.append(f"{name} is {arg.dtype} there, {pointers[name]} here")
        if differ:
            out.append(Shape(d, None, {}, None, "its file's EXAMPLES launch is for other argument types ("
                                                + "; ".join(differ) + ")"))
            continue
        out.append(Shape(d, loaded.spec.grid, dict(loaded.spec.args), (loaded.launch or {}).get("flops")))
    return out


def found_launch(spec, grid: Optional[str], shapes: list) -> tuple[Optional[tuple], Optional[dict]]:
    """(grid, args) a found kernel's prediction is for: --grid evaluated on the values it recorded (or the first
    --shape's launch arguments), else the first --shape's launch that has a grid; (None, None): its own."""
    from tritonscope.core.errors import KernelSpecError
    from tritonscope.inputs.grid import evaluate, parse_grid

    launch = next((s for s in shapes if s.grid), None)
    args = dict(launch.args) if launch is not None else None
    if grid:
        # what it recorded of its arguments is their types (i32, *fp16), not values: only a --shape's launch has them
        try:
            return evaluate(parse_grid(grid), {**(args or {}), **dict(spec.constexprs or {})}, kernel=spec.kernel), args
        except KernelSpecError as e:
            raise KernelSpecError(e.message, hint=f"{e.hint} A kernel that already compiled records its arguments' "
                                                  "types, not their values: give --shape (its file's EXAMPLES launch "
                                                  "gives them) or a grid of numbers.") from None
    if spec.grid or launch is None:
        return None, None
    return tuple(launch.grid), args


def _why_no_example(spec) -> str:
    """Why a found kernel's file cannot give a shape's launch ('' when it can), read without running the file."""
    import ast

    if not spec.file:
        return "no Python file is known for it (its IR names none), so no launch describes a shape"
    path = Path(spec.file)
    if not path.is_file():
        return f"its Python file {spec.file} is not on this machine, so no launch describes a shape"
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return f"its Python file {spec.file} cannot be read as Python"
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "EXAMPLES" for t in node.targets):
            if isinstance(node.value, ast.Dict) and any(isinstance(k, ast.Constant) and k.value == spec.kernel
                                                        for k in node.value.keys):
                return ""
    return (f"{path.name} has no EXAMPLES entry for {spec.kernel} (the launch that gives a shape's grid and "
            "arguments)")


# --------------------------------------------------------------------------
# The command
# --------------------------------------------------------------------------


@composed
def explain_cmd(
    ctx: typer.Context,
    target: str = typer.Argument(..., help=TARGET_HELP),
    kernel: Optional[str] = KernelOpt,
    cfg: Values = CONFIG.but(shape=(Optional[List[str]], ShapesOpt)) + GRID,
    gpu: Optional[str] = GpuOpt,
    predict: bool = typer.Option(False, "--predict",
                                 help="Also predict the kernel's time at its launch with the GPU-less cost model "
                                      "(on --gpu where the cost model knows it, else the local GPU or the arch's "
                                      "reference GPU): shown after the verdicts, in --json under \"prediction\", "
                                      "and in --save reports."),
    no_check_fixes: bool = NoCheckOpt,
    as_json: bool = typer.Option(False, "--json", help="Print the verdicts as JSON."),
    save: Optional[str] = typer.Option(None, "--save", help="Save a report: .html, .md or .json write the compile "
                                                            "report with an Explain section (`show` replays a "
                                                            ".json); .txt writes the verdicts as printed."),
    force: bool = c.ForceOpt,
    keep_paths: bool = c.KeepPathsOpt,
    display: Values = DISPLAY.without("pager"),
):
    """Explain a config: one verdict per finding, with the stage line and Python line that show it and a fix.

    Verdicts: shared memory (each buffer, the largest num_stages / block size
    that fits), occupancy (the limiter), registers (live registers from
    nvdisasm), spills, global access width (and the hint that widens it),
    pipelining of each loop, tensor cores and TF32, shared-memory bank
    conflicts, and for each --shape the waves and a roofline time bound.
    Fixes marked "checked" were compiled.  Exit code 0 whatever it finds
    (use `tritonscope check` to gate on it).

    TARGET may also be a kernel that already compiled (what `tritonscope open`
    reads): the verdicts its stages allow are given, the others are listed as
    not judged, with the reason; --kernel picks one kernel of a folder.

    Examples:

      tritonscope explain matmul_masked -c BLOCK_SIZE=128

      tritonscope explain softmax -c BLOCK=16384 -w 1

      tritonscope explain matmul_masked --shape 4096x4096x4096 --gpu H200

      tritonscope explain matmul_grouped --shape 4096x4096x4096 --gpu H100 --predict

      tritonscope explain ~/.triton/cache --kernel matmul_kernel

      tritonscope explain kernel.ttgir

      tritonscope explain matmul --block 16 --save report.html
    """
    env = display.env(ctx)
    shape = cfg.shape
    if save:
        from tritonscope.outputs import save as saving

        saving.check(save, force=force, names=saving.EXPLAIN, what="explain output")
    c.check_gpu(gpu)  # empty or unknown (core/gpus.json): exit 2 before any compile, as for `compile`
    if shape:
        from tritonscope.inputs.kernels import parse_shape

        for s in shape:
            parse_shape(s)
    if cfg.grid:  # a bad --grid: exit 2 before any compile
        from tritonscope.inputs.grid import parse_grid

        parse_grid(cfg.grid)
    found = is_found_target(target)
    launches: list = []
    if found:
        refuse_for_found(target, **{"--block": cfg.block, "--arg": cfg.arg, "--dtype": cfg.dtype})
        changes = recompile_changes(cfg.arch, cfg.num_warps, cfg.num_stages, cfg.constexpr, cfg.maxnreg, cfg.num_ctas,
                                    cfg.fp_fusion)
        analysis, expl = run_explain_found(target, kernel, env, changes=changes, shapes=list(shape or []), gpu=gpu,
                                           check_fixes=not no_check_fixes, progress=not as_json, launches=launches)
    else:
        refuse_kernel_option(target, kernel)
        # e.g. --maxnreg for AMD: exit 2, no compile
        request = cfg.config(target, shape=shape[0] if shape else None, gpu=gpu)
        analysis, expl = run_explain(request, env, shapes=list(shape or []), gpu=gpu,
                                     check_fixes=not no_check_fixes, progress=not as_json)
    if predict:
        from tritonscope.cost import predict as predicted

        # a kernel that already compiled: at --grid, else at a --shape's launch from its file's EXAMPLES
        grid, args = found_launch(analysis.artifact.spec, cfg.grid, launches) if found else (None, None)
        analysis.prediction = predicted(analysis, gpu=gpu, grid=grid, args=args).to_dict()
    if as_json:
        out = expl.to_dict()
        if analysis.prediction is not None:
            out["prediction"] = analysis.prediction
        typer.echo(json.dumps(out, indent=1))
    else:
        from tritonscope.outputs.render.explain_view import explain_renderable

        console = env.console()
        console.print(explain_renderable(expl, console.width))
        if analysis.prediction is not None:
            from rich.markup import escape

            from tritonscope.outputs.render.summary_text import prediction_text

            console.print(f"predicted: {escape(prediction_text(analysis.prediction))}", highlight=False)
    if save:
        from tritonscope.outputs.save import save_explanation

        save_explanation(analysis, expl, save, force=force, keep_paths=keep_paths, width=display.width)
