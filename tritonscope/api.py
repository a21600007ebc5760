"""tritonscope's Python API: compile a kernel, read what Triton made of it, as data.

For notebooks, scripts and tools built on tritonscope.  Everything the CLI
shows is here as plain Python values; the same options, the same typed
errors (tritonscope.core.errors), the same reports.

    import tritonscope

    result = tritonscope.compile("matmul", block=16, arch="sm_80")    # a sample,
    result = tritonscope.compile("kernels.py:add_kernel", args={...}) # a file,
    result = tritonscope.compile(my_kernel, args={...}, constexprs={"BLOCK": 64})  # or the @triton.jit function

    result.stages["ptx"]            # stage key -> the compiler's text, exactly as written
    result.lines("ttgir")           # [Line(number, text, raw, loc)]: parsed, with Python locations
    result.notes                    # [Note(stage, line, kind, label, explanation, ...)]
    result.registers                # 28 (per thread; None when cuobjdump is missing)
    result.resources                # Resources(registers, stack, local, static_shared, dynamic_shared)
    result.summary                  # the compile summary (fit, occupancy, ...) as data
    result.line(19)["ptx"]          # the PTX lines Python line 19 became
    result.line("tl.dot")["sass"]   # the same, naming the line by its text
    result.layouts()                # every layout the TTGIR uses (layouts.LayoutUse)
    result.diff(other)              # a config diff as a dict (tritonscope.analyses.diff)
    result.save("report.html")      # .html, .md, .json or .txt, through the CLI's writer
    tritonscope.show("report.json") # a saved JSON report, as the same Result

In Jupyter a Result displays as the HTML report (`_repr_html_`, in a
sandboxed iframe so the report's CSS and script stay inside it); in IPython
with rich, or `rich.print(result)`, as the terminal view.

Errors are the CLI's: UsageError, NotFoundError, KernelSpecError,
CompileError, OutOfResourcesError (raised after compiling, when the config
cannot launch on its arch; the compiled Result is on the error's `.result`).

Importing this module imports neither triton nor torch (nor rich): they load
on first use, so `import tritonscope` stays cheap.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping

__all__ = ["Result", "Explained", "compile", "explain", "tune", "show", "prune_by_prediction", "predicted_time"]

# A terminal view prints at most this many lines per stage (the CLI's default).
MAX_LINES = 300
# Height of the report in a notebook cell; the page scrolls inside it.
NOTEBOOK_HEIGHT = 760


def compile(target_or_function: Any, *, constexprs: Mapping[str, Any] | None = None,
            args: Mapping[str, Any] | None = None, num_warps: int | None = None, num_stages: int | None = None,
            arch: str | None = None, shape: str | Iterable[int] | None = None, dtype: str | None = None,
            block: int | None = None, options: Mapping[str, Any] | None = None,
            config: int | str | None = None, kernel: str | None = None, predict: bool = False,
            gpu: str | None = None, grid: str | None = None) -> Result:
    """Compile one config of a kernel, as `tritonscope compile` does, and analyze every stage.

    `target_or_function` is a sample name ("matmul"), "path/to/file.py:kernel",
    or the @triton.jit function itself (also through @triton.autotune or
    @triton.heuristics).  A function's file is not executed again; an
    EXAMPLES dict beside it applies as it does to a file.

    constexprs: {"BLOCK": 64}.  args: runtime arguments as the CLI's --arg
    spells them ("fp16[32,32]", "fp16[32,32].T", "*fp32", 1024) or a tensor
    (anything with .dtype and .shape, e.g. a torch.Tensor: its dtype, shape and
    a transposed 2-D view are read, never its data).  shape: "1024x1024x64" or
    (1024, 1024, 64).  arch: sm_80 ... sm_120 (default: the local GPU's, else
    sm_90a).  block: the samples' shorthand for their tile-size constexprs.
    constexprs take what a launch passes: numbers, bools, strings, dtypes (tl.bfloat16,
    torch.bfloat16 or "bf16"); args also take a triton.tools.tensor_descriptor.TensorDescriptor
    (or "tensordesc<fp16[128,64]>").  options: launch and backend options, as a launch's
    keywords ({"maxnreg": 128}, {"waves_per_eu": 2}).  config: for an @triton.autotune kernel,
    which of its configs (1-based, after its prune_configs_by; default the first), or "predicted": the
    config the cost model predicts fastest.

    A kernel that already compiled (a capture folder, a Triton or Inductor cache, a stage file: as
    `tritonscope compile CAPTURE -k KERNEL` takes it): `kernel` picks one of a folder; num_warps,
    num_stages, arch, constexprs and options recompile it.

    predict: also the cost model's predicted time (on `gpu`, default the arch's reference GPU; a `gpu`
    implies it), on `.analysis.prediction`; at `grid` ("(M // 64, 1, 1)") when one is given, else at the
    kernel's own launch.
    """
    from tritonscope.analyses.analysis import analyze
    from tritonscope.analyses.explain.run import is_found_target
    from tritonscope.analyses.summary import out_of_resources
    from tritonscope.core.words import api_terms
    from tritonscope.pipeline.config import resolve, with_grid

    with api_terms():
        _check_kinds(kernel=(kernel, str), predict=(predict, bool), grid=(grid, str))
        _check_gpu(gpu)
    if isinstance(target_or_function, (str, Path)) and is_found_target(str(target_or_function)):
        return _compile_found(str(target_or_function), kernel=kernel, constexprs=constexprs, args=args,
                              num_warps=num_warps, num_stages=num_stages, arch=arch, shape=shape, dtype=dtype,
                              block=block, options=options, config=config, predict=predict, gpu=gpu, grid=grid)
    if kernel is not None:
        from tritonscope.core.errors import UsageError

        raise UsageError("kernel= picks one kernel of a folder of kernels that already compiled; "
                         f"{target_or_function!r} is a kernel to compile.", hint="Leave kernel= out.")
    request, kernel_object = _request(target_or_function, constexprs=constexprs, args=args, num_warps=num_warps,
                                      num_stages=num_stages, arch=arch, shape=shape, dtype=dtype, block=block,
                                      options=options, config=config, gpu=gpu)
    with api_terms():
        request = with_grid(request, grid)
    pipe = _pipeline()  # the one compile path, without a result cache
    with api_terms():  # every check words its refusal with this API's keywords (num_warps=3), not the CLI's flags
        config = resolve(request)  # the arch: arch=, else the local GPU's, else the default
        if config.config == "predicted":  # every kept config compiled and predicted (cost/pick.py)
            from tritonscope.cost.pick import compile_predicted

            loaded = compile_predicted(pipe, config, kernel_object=kernel_object).loaded
        else:
            loaded = pipe.bind(config, kernel_object=kernel_object)
        artifact = pipe.compile(config, loaded=loaded).artifact  # the runaway guard speaks keywords too
    result = Result(analyze(artifact))
    if predict or gpu is not None:
        from tritonscope.cost import predict as predicted

        result.analysis.prediction = predicted(result.analysis, gpu=gpu).to_dict()
    err = out_of_resources(result.analysis, more_hint=" The compiled result is on this error's .result.")
    if err is not None:
        err.result = result  # type: ignore[attr-defined]
        raise err
    return result


def explain(target_or_function: Any, *, kernel: str | None = None, constexprs: Mapping[str, Any] | None = None,
            args: Mapping[str, Any] | None = None, num_warps: int | None = None, num_stages: int | None = None,
            arch: str | None = None, shapes: Iterable[Any] | str = (), dtype: str | None = None,
            block: int | None = None, options: Mapping[str, Any] | None = None, gpu: str | None = None,
            check_fixes: bool = True, predict: bool = False) -> Explained:
    """Explain one config, as `tritonscope explain` does: one verdict per finding (shared memory, occupancy,
    registers, spills, access width, pipelining, tensor cores, bank conflicts; for each of `shapes` the
    waves and a roofline bound), each with a fix, checked by compiling it unless `check_fixes=False`.

    The same functions as the command: analyses/explain/run.explain_config for a kernel to compile (the
    options as for compile(); the first of `shapes`, "4096x4096x4096" or (4096, 4096, 4096), also sets a
    sample's compiled shape), explain_found for a kernel that already compiled (a capture, a Triton cache or
    TRITON_KERNEL_DUMP folder, a stage file; `kernel` picks one kernel of a folder; num_warps, num_stages,
    arch, constexprs and options recompile it).  `predict`: also the cost model's predicted time, on `gpu`.
    """
    from tritonscope.analyses.explain import run as explaining
    from tritonscope.core.errors import UsageError
    from tritonscope.core.words import api_terms

    with api_terms():
        _check_kinds(kernel=(kernel, str), gpu=(gpu, str), check_fixes=(check_fixes, bool), predict=(predict, bool))
        _check_mappings(constexprs=constexprs, args=args, options=options)
        shape_texts = [_shape_text(x, "shapes") for x in _shape_list(shapes)]
    found = isinstance(target_or_function, (str, Path)) and explaining.is_found_target(str(target_or_function))
    launches: list = []
    with api_terms():
        _check_gpu(gpu)
        if found:
            _refuse_for_found(str(target_or_function), args=args, block=block, dtype=dtype)
            changes = _found_changes(arch=arch, num_warps=num_warps, num_stages=num_stages,
                                     constexprs=constexprs, options=options)
            analysis, expl = explaining.explain_found(str(target_or_function), kernel, changes=changes,
                                                      shapes=shape_texts, gpu=gpu, check_fixes=check_fixes,
                                                      launches=launches)
        else:
            if kernel is not None:
                raise UsageError("kernel= picks one kernel of a folder of kernels that already compiled; "
                                 f"{target_or_function!r} is a kernel to compile.", hint="Leave kernel= out.")
            request, kernel_object = _request(target_or_function, constexprs=constexprs, args=args,
                                              num_warps=num_warps, num_stages=num_stages, arch=arch,
                                              shape=shape_texts[0] if shape_texts else None, dtype=dtype,
                                              block=block, options=options, config=None, gpu=gpu)
            pipe = _pipeline()

            def compiled(config):
                return pipe.compile(config, loaded=pipe.bind(config, kernel_object=kernel_object))

            from tritonscope.pipeline.compile_path import Pipeline

            analysis, expl = explaining.explain_config(request, compile=compiled, fixes=Pipeline(),
                                                       shapes=shape_texts, gpu=gpu, check_fixes=check_fixes)
    if predict:
        from tritonscope.cost import predict as predicted

        grid, launch_args = explaining.found_launch(analysis.artifact.spec, None, launches) if found else (None, None)
        analysis.prediction = predicted(analysis, gpu=gpu, grid=grid, args=launch_args).to_dict()
    return Explained(Result(analysis), expl)


def tune(target_or_function: Any, *, constexprs: Mapping[str, Any] | None = None,
         args: Mapping[str, Any] | None = None, num_warps: int | Iterable[int] | None = None,
         num_stages: int | Iterable[int] | None = None, shape: str | Iterable[int] | None = None,
         grid: str | None = None, dtype: str | None = None, block: int | None = None, gpu: str | None = None,
         top: int = 5, full: bool = False, jobs: int | None = None) -> dict[str, Any]:
    """Time only the configs the cost model predicts fastest, as `tritonscope tune` does (needs a CUDA GPU).

    The grid is every combination of `constexprs` ({"BLOCK": [256, 1024, 4096]}; a single value is a
    one-value axis), `num_warps` and `num_stages` (an int or a list); it is compiled GPU-less, predicted, and
    the predicted top `top` are launched, checked and timed (every fitting config too with `full`).  The same
    functions as the command: measure/axes.grid_requests, then measure/tune.tune_grid.  Returns what
    `tune --json` prints (rows, pick, times); a tune that timed nothing raises NoResultError (the command's
    exit 13) with that dict on its `.result`.
    """
    from tritonscope.core.words import api_terms
    from tritonscope.inputs.kernels import Request, check_request
    from tritonscope.measure.axes import grid_requests
    from tritonscope.measure.tune import tune_grid, tune_outcome
    from tritonscope.pipeline.config import local_arch, with_grid

    with api_terms():   # every argument checked before the first compile
        _check_kinds(grid=(grid, str), gpu=(gpu, str), full=(full, bool))
        _check_counts(top=top, jobs=jobs)
        _check_mappings(constexprs=constexprs, args=args)
        axes = {name: [str(v) for v in _values(values, f"constexprs[{name!r}]")]
                for name, values in (constexprs or {}).items()}
        warps, stages = _ints("num_warps", num_warps), _ints("num_stages", num_stages)
        for key, values in (("num_warps", warps), ("num_stages", stages)):   # [3]: refused, not a failed row each
            for v in values or ():
                check_request(Request(target="-", **{key: v}))
        _shape_text(shape)
        arch = local_arch()
        _check_gpu(gpu, arch)
        request, _ = _request(target_or_function, constexprs=None, args=args, num_warps=None, num_stages=None,
                              arch=None, shape=shape, dtype=dtype, block=block, options=None, config=None)
        base = with_grid(check_request(request), grid)
        requests, loaded, _ = grid_requests(base, axes=axes, num_warps=warps, num_stages=stages, arches=None,
                                            dtypes=None, block_values=[block] if block is not None else None,
                                            default_arch=arch)
        res = tune_grid(requests, loaded, gpu=gpu, top=top, full=full, jobs=jobs, target=request.target, arch=arch)
    problem = tune_outcome(res)
    if problem is not None:
        problem.result = res  # type: ignore[attr-defined]
        raise problem
    return res


class Explained:
    """What tritonscope.explain returns: the explained compile as a Result, its Explanation (`.verdicts`,
    each with its severity, facts, stage and Python lines, and fix), and the predicted time when asked."""

    def __init__(self, result: Result, explanation):
        self.result = result
        self.explanation = explanation

    @property
    def verdicts(self) -> list:
        return list(self.explanation.verdicts)

    @property
    def prediction(self) -> dict | None:
        return self.result.analysis.prediction

    def to_dict(self) -> dict[str, Any]:
        """What `tritonscope explain --json` prints."""
        out = self.explanation.to_dict()
        if self.prediction is not None:
            out["prediction"] = self.prediction
        return out

    def __repr__(self) -> str:
        return (f"<tritonscope.Explained {self.explanation.kernel} {self.explanation.label}: "
                f"{len(self.explanation.verdicts)} verdicts>")


def prune_by_prediction(top_k: int = 3, *, grid: Any = None, gpu: str | None = None, kernel: Any = None,
                        arch: str | None = None, jobs: int | None = None):
    """An `early_config_prune` for @triton.autotune that keeps the `top_k` configs the cost model predicts
    fastest for the current arguments, without running any (configs that compile to the same SASS count as
    one; one config more is kept when it is predicted within 2% of the k-th):

        @triton.autotune(configs=[...], key=["n"], prune_configs_by={"early_config_prune":
            tritonscope.prune_by_prediction(3, grid=lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),))})

    `grid` is the launch's grid as a function of the arguments and the config's constexprs (what the
    kernel is launched with), or "launch" for the grid Triton hands the pruner; the configs are compiled
    in `jobs` worker processes (default: TRITONSCOPE_PRUNE_JOBS, else one per core; GPU-less, as
    `tritonscope compile` does, into Triton's cache, so the survivors' compiles are cache hits) and
    predicted on `gpu` (default: the local GPU, else the arch's reference GPU).  A config that does not
    fit is dropped; configs the model gives no prediction are kept (never pruned on a guess), and when
    no config can be predicted all of them are returned.  `kernel` is the @triton.jit function (default:
    the one the calling Autotuner tunes)."""
    from tritonscope.cost.autotune import PredictedPrune

    return PredictedPrune(top_k, compile_fn=compile, describe_arg=_describe_arg, grid=grid, gpu=gpu, kernel=kernel,
                          arch=arch, jobs=jobs)


def predicted_time(*, grid: Any = None, gpu: str | None = None, kernel: Any = None, arch: str | None = None,
                   jobs: int | None = None):
    """A `perf_model` for Triton's own slot: `prune_configs_by={"perf_model": tritonscope.predicted_time(
    grid=...), "top_k": 3}`.  Triton calls it once per config (after any `early_config_prune`) and keeps
    the `top_k` configs with the lowest predicted milliseconds; a config the model cannot judge scores 0.0
    (kept), one that does not fit infinity.  `grid`, `gpu`, `kernel`, `arch`, `jobs` as for
    prune_by_prediction (all of a tuner's configs are predicted on its first call, in the workers)."""
    from tritonscope.cost.autotune import PredictedPrune

    return PredictedPrune(1, compile_fn=compile, describe_arg=_describe_arg, grid=grid, gpu=gpu, kernel=kernel,
                          arch=arch, jobs=jobs).perf_model


def show(path: str | Path) -> Result:
    """A report saved as JSON (`--save r.json`, `Result.save`), as a Result.  Needs no Triton."""
    from tritonscope.outputs.report import load_analysis

    return Result(load_analysis(path))


class Result:
    """One compiled (or loaded) kernel config: its Analysis, with accessors that return data.

    Stage texts, lines and notes are never filtered here; noise filters are a
    display matter (the HTML report and the terminal view apply them).
    """

    def __init__(self, analysis):
        self.analysis = analysis

    # -- what was compiled --------------------------------------------------

    @property
    def artifact(self):
        return self.analysis.artifact

    @property
    def spec(self):
        """The KernelSpec: kernel, file, args, constexprs, num_warps, num_stages, arch, ..."""
        return self.analysis.artifact.spec

    @property
    def stages(self) -> dict[str, str]:
        """Stage key ("python", "ttir", "ttgir", "llir", "ptx", "sass") -> its text, exactly as written."""
        return dict(self.analysis.artifact.stages)

    def lines(self, stage: str) -> list:
        """Every line of one stage as Line(number, text, raw, loc), numbered as in the stage text.

        `text` drops location noise (loc(...), !dbg), `raw` is the line as
        written, `loc` the Python line it came from (None when unknown).
        Lines the parser keeps no record of (PTX `.loc`) come as written.
        """
        from tritonscope.outputs.render.noise import view_lines

        self._parsed(stage)
        return list(view_lines(self.analysis, stage))

    @property
    def notes(self) -> list:
        """Every annotation, in stage order: Note(stage, line, kind, label, explanation, reference, ...)."""
        return list(self.analysis.notes)

    def notes_for(self, stage: str) -> dict[int, list]:
        """Stage line number -> its notes."""
        self._parsed(stage)
        return self.analysis.notes_for(stage)

    @property
    def mix(self) -> dict[str, dict[str, int]]:
        """Stage key -> instruction class -> count."""
        return {k: dict(v) for k, v in self.analysis.mix.items()}

    # -- what it costs --------------------------------------------------------

    @property
    def resources(self):
        """Resources(registers, stack, local, static_shared, dynamic_shared), per thread / per block."""
        return self.analysis.artifact.resources

    @property
    def registers(self) -> int | None:
        """Registers per thread (from cuobjdump; None when it was not available)."""
        return self.analysis.artifact.resources.registers

    @property
    def summary(self) -> Any:
        """The compile summary as data (tritonscope.analyses.summary): fit, occupancy, spills, mix and the rest."""
        return self.analysis.summary

    # -- following one Python line --------------------------------------------

    def line(self, n: int | str) -> dict[str, list[str]]:
        """What Python line `n` became in every stage: {"python": [its text], "ttgir": [...], "ptx": [...]}.

        `n` is a line number of the kernel's file, or a piece of its text
        ("tl.dot"): the first kernel line that contains it.  Stages with no
        line from `n` map to an empty list.  An unknown line raises UsageError.
        """
        from tritonscope.core.errors import UsageError
        from tritonscope.outputs.render import views

        source = views.python_lines(self.analysis)
        number = self._line_number(n, source)
        if number not in source:
            lo, hi = (min(source), max(source)) if source else (0, 0)
            raise UsageError(f"Line {n} is not part of {self.spec.kernel} (lines {lo}-{hi}).",
                             hint=f"Pick a line between {lo} and {hi}, or name it by its text: result.line('tl.dot').")
        out: dict[str, list[str]] = {"python": [source[number]]}
        from tritonscope.language.dialects import is_source

        for key in self.analysis.parsed:
            if not is_source(key):
                out[key] = [ln.text for ln in views.by_source_line(self.analysis, key).get(number, [])]
        return out

    def _line_number(self, n: int | str, source: dict[int, str]) -> int:
        from tritonscope.core.errors import UsageError

        if isinstance(n, int) and not isinstance(n, bool):
            return n
        text = str(n)
        if text.strip().isdigit():
            return int(text)
        for number, line in sorted(source.items()):
            if text in line:
                return number
        raise UsageError(f"No line of {self.spec.kernel} contains {text!r}.",
                         hint="Name the line by a piece of its text, e.g. result.line('tl.dot'), or by its number.")

    # -- layouts and diffs ----------------------------------------------------

    def layouts(self) -> list:
        """Every layout the TTGIR uses, at the shapes it is used with (computed once, then kept)."""
        if not self.analysis.layouts:
            from tritonscope.language.layouts import layouts_of

            self.analysis.layouts = layouts_of(self.analysis)
        return list(self.analysis.layouts)

    def diff(self, other: Result | Any, *, stages: Iterable[str] | None = None,
             force_different: bool = False) -> dict[str, Any]:
        """This config (A) against `other` (B), as `tritonscope diff` computes it, as a dict.

        Keys: a, b, kernel, identical, config_changes, story, summary, roles,
        stages (each with its unified diff rows [tag, text, a_line, b_line, notes]).
        Stage texts are compared in full (no display filter applies).
        """
        from tritonscope.analyses.analysis import Analysis
        from tritonscope.analyses.diff import diff_analyses
        from tritonscope.core.errors import UsageError

        if not isinstance(other, (Result, Analysis)):
            hint = (f"Load a saved report first: result.diff(tritonscope.show({str(other)!r}))."
                    if isinstance(other, (str, Path)) else
                    "Give the Result of tritonscope.compile(...) or tritonscope.show('r.json').")
            raise UsageError(f"Result.diff needs another Result, not {type(other).__name__} {other!r:.80}.", hint=hint)
        other_analysis = other.analysis if isinstance(other, Result) else other
        kwargs: dict[str, Any] = {"force_different": force_different}
        if stages is not None:
            kwargs["stages"] = tuple(stages)
        return diff_analyses(self.analysis, other_analysis, **kwargs).to_dict()

    # -- reports and display ------------------------------------------------

    def save(self, path: str | Path, force: bool = False, *, keep_paths: bool = False, raw: bool = False) -> Path:
        """Save a report, the format by extension (.html, .md, .json, .txt), as `--save` does.

        Never overwrites without `force`; the write is atomic.  A .json
        report holds every stage's full text and loads back with
        tritonscope.show(path); the others fold noise lines unless `raw`.
        """
        from tritonscope.outputs.render.noise import RAW
        from tritonscope.outputs.save import save_report

        return save_report(self.analysis, path, force=force, keep_paths=keep_paths, hide=RAW if raw else None)

    def html(self, *, raw: bool = False) -> str:
        """The HTML report as one self-contained page (what `--save r.html` writes)."""
        from tritonscope.outputs.render.noise import RAW
        from tritonscope.outputs.save import render_report

        return render_report(self.analysis, "html", hide=RAW if raw else None)

    def _repr_html_(self) -> str:
        """Jupyter: the HTML report, in a sandboxed iframe (its own CSS, CSP and script stay inside it)."""
        import html

        page = self.html()
        return (f"<iframe title=\"tritonscope report: {html.escape(self.spec.kernel)}\" "
                f"sandbox=\"allow-scripts\" style=\"width:100%;height:{NOTEBOOK_HEIGHT}px;border:1px solid #ddd\" "
                f"srcdoc=\"{html.escape(page, quote=True)}\"></iframe>")

    def __rich_console__(self, console, options):
        """rich / IPython: the terminal view (summary, then each stage, as `tritonscope compile` prints it)."""
        from tritonscope.outputs.render.terminal import stage_panel, summary_panel

        yield summary_panel(self.analysis)
        for key in self.analysis.parsed:
            yield stage_panel(self.analysis, key, width=options.max_width, max_lines=MAX_LINES)

    def __repr__(self) -> str:
        regs = self.registers
        return (f"<tritonscope.Result {self.spec.kernel} {self.spec.label()}: {len(self.analysis.parsed)} stages, "
                f"{len(self.analysis.notes)} notes, {'?' if regs is None else regs} registers>")

    def _parsed(self, stage: str):
        from tritonscope.core.errors import UsageError, close_matches

        if stage not in self.analysis.parsed:
            known = list(self.analysis.parsed)
            raise UsageError(f"No stage {stage!r} in this result.{close_matches(stage, known)}",
                             hint=f"Its stages: {', '.join(known)}.")
        return self.analysis.parsed[stage]


# --------------------------------------------------------------------------
# Turning Python values into the CLI's spellings
# --------------------------------------------------------------------------


def _check_types(**values: Any) -> None:
    """Whole-number options must be ints and names strs: `num_warps="4"` is refused, in this API's terms
    (never converted: a value from a config file or a form should be parsed where it is read)."""
    from tritonscope.core.errors import UsageError
    from tritonscope.core.model import DEFAULT_ARCH

    for name, value in values.items():
        if value is None:
            continue
        want = str if name in ("arch", "dtype") else int
        if want is int and isinstance(value, int) and not isinstance(value, bool) and not -2**63 <= value < 2**63:
            # said without its digits: str() of an int of 4300 digits or more raises ValueError
            raise UsageError(f"{name} is out of range (an int of {value.bit_length()} bits).",
                             hint={"num_warps": "num_warps=4", "num_stages": "num_stages=3",
                                   "block": "block=16"}.get(name, f"{name}=4"))
        if not isinstance(value, want) or isinstance(value, bool):
            example = {"num_warps": "num_warps=4", "num_stages": "num_stages=3", "block": "block=16",
                       "arch": f'arch="{DEFAULT_ARCH}"', "dtype": 'dtype="fp16"'}[name]
            raise UsageError(f"{name} must be {'an int' if want is int else 'a str'}, not "
                             f"{type(value).__name__} {value!r}.", hint=f"e.g. {example}")


def _request(target_or_function: Any, *, constexprs, args, num_warps, num_stages, arch, shape, dtype, block, options,
             config, gpu: str | None = None):
    """(the kernels.Request these keywords describe, the kernel object when a function was given): types
    checked (_check_types), options beside the constexprs (one launch's keywords), args as the CLI spells them."""
    from tritonscope.core.errors import UsageError
    from tritonscope.inputs.kernels import Request

    _check_types(num_warps=num_warps, num_stages=num_stages, block=block, arch=arch, dtype=dtype)
    _check_mappings(constexprs=constexprs, args=args, options=options)
    kernel_object = None if isinstance(target_or_function, (str, Path)) else target_or_function
    target = str(target_or_function) if kernel_object is None else _target_of(kernel_object)
    keywords = dict(constexprs or {})
    for name, value in (options or {}).items():  # one launch: options are keywords beside the constexprs
        if name in keywords and keywords[name] != value:
            raise UsageError(f"{name} is given twice: constexprs[{name!r}]={keywords[name]!r} and "
                             f"options[{name!r}]={value!r}.", hint=f"Give {name} once.")
        keywords[name] = value
    request = Request(
        target=target,
        constexprs=keywords, config=config,
        args={name: _describe_arg(value) for name, value in (args or {}).items()},
        block=block, num_warps=num_warps, num_stages=num_stages, arch=arch,
        shape=_shape_text(shape), dtype=dtype, gpu=gpu,
    )
    return request, kernel_object


def _pipeline():
    """The API's Pipeline: no result cache; a failure inside Triton carries its report on the CompileError
    (e.data["failure"], analyses/failure.Failure: the pass, the op, the Python line)."""
    from tritonscope.analyses.failure import reporter
    from tritonscope.pipeline.compile_path import Pipeline

    return Pipeline(on_failure=reporter(checks=False))


def _check_gpu(gpu: str | None, arch: str | None = None) -> None:
    """gpu=: a GPU the cost model knows (UsageError otherwise), of `arch` when one is given."""
    if gpu is None:
        return
    _check_kinds(gpu=(gpu, str))
    from tritonscope.core.errors import UsageError
    from tritonscope.cost import gpu_names, resolve_gpu

    if not gpu.strip():   # as the CLI's --gpu '': never taken for "no GPU named"
        raise UsageError("gpu is empty.", hint=f"Name a GPU ({', '.join(gpu_names())}), or leave gpu= out for the "
                                                "local GPU, else the arch's reference GPU.")

    g = resolve_gpu(gpu, None)
    if arch and g is not None and arch not in g.arches:
        raise UsageError(f"gpu={gpu!r}: the {g.name} is no {arch} GPU (it is {', '.join(g.arches)}).",
                         hint="Name a GPU of this machine's arch, or leave gpu= out.")


def _refuse_for_found(path: str, **given: Any) -> None:
    """The keywords that describe a kernel to compile (args, block, ...), refused for one that already compiled."""
    from tritonscope.core.errors import UsageError

    named = [name for name, value in given.items() if value]
    if named:
        raise UsageError(f"{', '.join(named)}: not for a kernel that already compiled ({path}).",
                         hint="num_warps, num_stages, arch, constexprs and options recompile it.")


def _compile_found(path: str, *, kernel, constexprs, args, num_warps, num_stages, arch, shape, dtype, block, options,
                   config, predict: bool, gpu, grid) -> Result:
    """compile() of a kernel that already compiled: the same function as the command line's (cost/found.py)."""
    from tritonscope.core.words import api_terms
    from tritonscope.cost.found import analyze_found

    with api_terms():
        _refuse_for_found(path, args=args, shape=shape, dtype=dtype, block=block, config=config)
        changes = _found_changes(arch=arch, num_warps=num_warps, num_stages=num_stages, constexprs=constexprs,
                                 options=options)
        return Result(analyze_found(path, kernel, changes=changes, predict=predict, gpu=gpu, grid=grid))


def _found_changes(*, arch, num_warps, num_stages, constexprs, options) -> dict[str, Any]:
    """A found kernel's recompile, as sources.recompile's keywords ({} for none)."""
    from tritonscope.inputs.request import recompile_changes

    _check_types(num_warps=num_warps, num_stages=num_stages, arch=arch)
    _check_mappings(constexprs=constexprs, options=options)   # constexprs="BLOCK=16": was an AttributeError
    for name, value in (constexprs or {}).items():  # str(inf) is 'inf', which the recompile reads as a string
        if isinstance(value, float) and value != value or value in (float("inf"), float("-inf")):
            from tritonscope.core.errors import UsageError
            from tritonscope.core.words import field_data, said

            raise UsageError(f"{said('constexprs', value, key=name)}: a found kernel is recompiled with its constexprs "
                             f"written out as text, and {value} has no such form (it would become the string "
                             f"'{value}').", hint="Give a finite number.", data=field_data("constexprs", value, key=name))
    return recompile_changes(arch=arch, num_warps=num_warps, num_stages=num_stages,
                             constexprs={name: str(value) for name, value in (constexprs or {}).items()},
                             options=dict(options) if options else None)


def _values(values: Any, name: str) -> list:
    """An axis: a list (or tuple, range) of values, or one value; an empty one is a UsageError (an axis of no
    values would be a grid of no configs)."""
    out = list(values) if isinstance(values, (list, tuple, range)) else [values]
    if not out:
        from tritonscope.core.errors import UsageError

        raise UsageError(f"{name} is empty: an axis needs at least one value.",
                         hint=f"Give one value or a list of them, or leave {name.split('[')[0]} out.")
    return out


def _ints(name: str, values: Any) -> list[int] | None:
    """num_warps= / num_stages= for tune: an int or a list of ints (None: the kernel's own)."""
    if values is None:
        return None
    out = _values(values, name)
    for v in out:
        _check_types(**{name: v})
    return out


def _target_of(obj: Any) -> str:
    """'path/to/file.py:kernel' for a kernel object: what the CLI would take for it."""
    from tritonscope.inputs.kernels import held_kernel

    path, _, name, _, _ = held_kernel(obj)
    return f"{path}:{name}"


def _describe_arg(value: Any) -> Any:
    """A tensor-like (torch.Tensor, numpy array) -> 'fp16[32,32]' or 'fp16[32,32].T'; a TensorDescriptor ->
    'desc(fp16[4096,4096],[128,64])'; anything else as is."""
    if type(value).__name__ == "TensorDescriptor" and hasattr(value, "block_shape"):
        base = _describe_arg(value.base)
        if isinstance(base, str):
            dims = ",".join(str(int(d)) for d in value.shape)
            block = ",".join(str(int(d)) for d in value.block_shape)
            return f"desc({base.split('[')[0]}[{dims}],[{block}])"
    dtype, shape = getattr(value, "dtype", None), getattr(value, "shape", None)
    if dtype is None or shape is None or isinstance(value, (str, bytes)):
        return value
    from tritonscope.inputs.kernels import canonical_dtype

    name = canonical_dtype(str(dtype).rsplit(".", 1)[-1])
    dims = [int(d) for d in shape]
    transposed = False
    stride = getattr(value, "stride", None)
    if callable(stride) and len(dims) == 2:  # x.T of a contiguous K x M tensor: an M x K view, strides (1, M)
        transposed = dims[0] > 1 and dims[1] > 1 and tuple(stride()) == (1, dims[0])
    return f"{name}[{','.join(map(str, dims))}]" + (".T" if transposed else "")


def _shape_text(shape: str | Iterable[int] | None, name: str = "shape") -> str | None:
    """A shape as the CLI spells it ("4096x4096"): a str as is, else a list or tuple of ints (a float, NaN
    or a bool is refused, never rounded)."""
    if shape is None or isinstance(shape, str):
        return shape
    dims = list(shape) if isinstance(shape, (list, tuple)) else None
    if not dims or any(isinstance(d, bool) or not hasattr(d, "__index__") for d in dims):
        from tritonscope.core.errors import UsageError

        raise UsageError(f"{name}: {_short(shape)} is not a shape: give a str like \"4096x4096\" or a tuple of "
                         "ints like (4096, 4096).", hint=f'e.g. {name}="4096x4096x4096"')
    return "x".join(str(d.__index__()) for d in dims)


def _shape_list(shapes: Any) -> list:
    """explain's shapes=: one shape (a str, or a tuple of ints) or a list of them."""
    if isinstance(shapes, str):
        return [shapes]
    if isinstance(shapes, tuple) and shapes and all(hasattr(d, "__index__") and not isinstance(d, bool)
                                                    for d in shapes):
        return [shapes]   # (4096, 4096): one shape
    if isinstance(shapes, (list, tuple)):
        return list(shapes)
    if shapes is None:
        return []
    from tritonscope.core.errors import UsageError

    raise UsageError(f"shapes: {_short(shapes)} is not a list of shapes.",
                     hint='e.g. shapes=["4096x4096x4096"] or shapes=[(4096, 4096, 4096)]')


def _short(value: Any) -> str:
    """A value for a message: its type and repr, cut short (a repr escapes control characters; an int of thousands
    of digits, whose repr raises, by its size)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"int of {value.bit_length()} bits"
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}{'...' if len(text) > 60 else ''}"


def _check_kinds(**given: tuple[Any, type]) -> None:
    """Each keyword None or of its type (a flag a bool: check_fixes="no" would be true); a UsageError naming it."""
    from tritonscope.core.errors import UsageError

    for name, (value, kind) in given.items():
        if value is None or (isinstance(value, kind) and (kind is bool or not isinstance(value, bool))):
            continue
        words = {bool: "True or False", str: "a str", int: "an int"}[kind]
        raise UsageError(f"{name} must be {words}, not {_short(value)}.", hint=f"Give {name} as {words}.")


def _check_counts(**given: Any) -> None:
    """top=, jobs=: whole numbers of at least 1 (None allowed for those with a default)."""
    from tritonscope.core.errors import UsageError

    for name, value in given.items():
        if value is None and name != "top":
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value < 2**31:
            shown = _short(value) if not isinstance(value, int) or value < 2**31 else f"an int of {value.bit_length()} bits"
            raise UsageError(f"{name} must be an int from 1 to 2**31-1, not {shown}.", hint=f"e.g. {name}=4")


def _check_mappings(**given: Any) -> None:
    """constexprs=, args=, options=: None or a dict of str names."""
    from tritonscope.core.errors import UsageError

    for name, value in given.items():
        if value is None:
            continue
        if not isinstance(value, Mapping):
            raise UsageError(f"{name} must be a dict of names and values, not {_short(value)}.",
                             hint=f'e.g. {name}={{"BLOCK": 256}}' if name != "args" else 'e.g. args={"n": 1024}')
        bad = [k for k in value if not isinstance(k, str)]
        if bad:
            raise UsageError(f"{name}: its keys must be str names, not {_short(bad[0])}.",
                             hint=f'e.g. {name}={{"BLOCK": 256}}')
