"""explain's orchestration: a compiled config or a kernel found on disk -> (Analysis, Explanation).

What `tritonscope explain`, `check` and `compile --explain` run, and what the Python API can call: the
candidate fixes compiled (a Pipeline the caller gives), the problem shapes' launches found (a sample's
EXAMPLES, a found kernel's file), a found kernel opened and recompiled as `open` does.  Unlike the
verdict modules it compiles (through the pipeline and inputs.sources); it never prints: `status(text)`
is what the caller shows meanwhile.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ContextManager

Status = Callable[[str], ContextManager]

# How a found kernel's source is named in reasons ("... which this stage file does not have").
WHERE = {"triton-cache": "cache entry", "inductor-cache": "cache entry", "dump": "kernel dump",
         "capture": "captured kernel", "file": "stage file"}


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


def explain_config(config, *, compile: Callable[[Any], Any], fixes, shapes: list[str], gpu: str | None,
                   check_fixes: bool, status: Status | None = None, triton_banks: bool = True):
    """A kernel to compile -> (Analysis, Explanation): what `tritonscope explain` and `check` run for a kernel
    to compile, and what the Python API's explain runs.

    `compile(config)` -> a pipeline Compiled: the caller's compile (a command's: its spinner, result cache
    and failure report; the API's: a plain Pipeline); `fixes`: the Pipeline that compiles the candidate
    fixes; `status` as for explain_compiled."""
    from tritonscope.analyses.analysis import analyze
    from tritonscope.pipeline.config import resolve

    config = resolve(config)  # a Request (the tests', the API's) resolved once here
    analysis = analyze(compile(config).artifact)
    return analysis, explain_compiled(analysis, config, fixes, shapes=shapes, gpu=gpu, check_fixes=check_fixes,
                                      status=status, triton_banks=triton_banks)


def explain_compiled(analysis, config, fixes, *, shapes: list[str], gpu: str | None, check_fixes: bool,
                     status: Status | None = None, triton_banks: bool = True):
    """The Explanation of a compile of `config` (its Analysis made already: `compile --explain` shares it).

    `config` is the resolved Config that compiled (pipeline/config.resolve: made once, by the command line's
    reading or explain_config, and passed down as it is); `fixes`: the Pipeline that compiles the candidate
    fixes (a command's, without a spinner); `status`: what shows while they compile (`status(text)` -> a
    context manager; None: nothing)."""
    from tritonscope import triton_api
    from tritonscope.analyses.explain import apply_change

    artifact = analysis.artifact

    def recompile(change: dict):
        import contextlib
        import io

        from tritonscope.analyses.analysis import analyze

        # a candidate Triton rejects (ptxas out of registers...) prints its own report: keep it out of ours
        with contextlib.redirect_stdout(io.StringIO()):
            return analyze(fixes.compile(apply_change(config, change)).artifact)

    cubin = triton_api.cached_stage_file(artifact.kernel_hash, artifact.spec.kernel, "cubin")
    problem = shapes_for(config, shapes) if shapes else []
    return _explain_with_status(analysis, status, recompile=recompile if check_fixes else None,
                                shapes=problem, gpu=gpu, cubin=cubin, triton_banks=triton_banks)


def _explain_with_status(analysis, status: Status | None, **kw):
    from tritonscope.analyses.explain import explain

    if kw.get("recompile") is None:
        return explain(analysis, **kw)
    with (status or _quiet)("checking what would help (compiling candidate fixes)..."):
        return explain(analysis, **kw)


def _quiet(text: str):
    return contextlib.nullcontext()


def explain_found(path: str, kernel: str | None, *, changes: dict[str, Any], shapes: list[str], gpu: str | None,
                  check_fixes: bool, status: Status | None = None, triton_banks: bool = True,
                  launches: list | None = None):
    """A kernel found at `path` (as `open` finds it) -> (Analysis, Explanation).

    With `changes` (--arch, -w, -s, -c, launch options) the found kernel is
    recompiled first (sources.recompile) and that compile is explained.
    `launches`: a list that gets each --shape's explain.Shape (its launch grid, when its file's EXAMPLES gives
    one), for a prediction at that launch.
    """
    from tritonscope.analyses.analysis import analyze

    found = found_artifact(path, kernel, changes=changes, status=status)
    entry, original, cubin, described = found.entry, found.original, found.cubin, found.described
    analysis = analyze(found.artifact)
    recompile = found_recompiler(entry, original, changes) if check_fixes else None
    problem = found_shapes(analysis.artifact, shapes, WHERE.get(entry.kind, "kernel")) if shapes else []
    if launches is not None:
        launches.extend(problem)
    expl = _explain_with_status(analysis, status, recompile=recompile, shapes=problem, gpu=gpu, cubin=cubin,
                                triton_banks=triton_banks, source=described,
                                where="compile" if changes else WHERE.get(entry.kind, "kernel"))
    return analysis, expl


@dataclass(frozen=True)
class Found:
    """A kernel `open` finds, loaded (and recompiled where the command line changed its config)."""

    artifact: Any      # what is analysed: the recompile, else the found kernel itself
    original: Any      # the found kernel as it compiled
    entry: Any         # its sources entry
    cubin: Any         # the binary of `artifact`, where one is kept
    described: str     # 'captured kernel add_kernel (01c9a1bcb1eb) in caps, recompiled with num_warps=8'


def found_artifact(path: str, kernel: str | None, *, changes: dict[str, Any], status: Status | None = None) -> Found:
    """A kernel found at `path` (as `open` finds it), recompiled first with `changes` (--arch, -w, -s, -c, launch
    options; sources.recompile) when there are any: what `explain` and `compile` take a found kernel as."""
    from tritonscope.inputs import sources
    from tritonscope.core.model import option_words

    source = sources.open_source(path)
    entry = sources.find_entry(source, kernel)
    original = sources.load_artifact(entry, target=path)
    artifact, cubin = original, sources.cubin_of(entry)
    described = _described(source, entry, path)
    if changes:
        with (status or _quiet)(f"recompiling {entry.name} ..."):
            artifact = sources.recompile(entry, original, **changes)
        cubin = sources.binaries_of_artifact(artifact).get("cubin")
        described += ", recompiled with " + ", ".join(
            f"{k}={v}" if k != "options" else option_words(v) for k, v in changes.items())
    return Found(artifact, original, entry, cubin, described)


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


def found_launch(spec, grid: str | None, shapes: list) -> tuple[tuple | None, dict | None]:
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
