"""Bind one launch of a kernel as Triton's launcher does: Request -> Loaded (a KernelSpec and the kernel).

Every parameter is bound by name, in the kernel's own order (real kernels interleave
constexprs and runtime arguments).  The steps, in a launch's order:

1. constexprs: signature defaults < EXAMPLES < --block < -c (`_constexprs`, `_keywords`);
2. launch options: -w/-s or `-c num_warps=`, a constexpr named like one getting the same
   value (`_launch_shape`); backend options from -c, EXAMPLES and autotune Configs;
3. @triton.autotune: one config, the first or --config N, after the kernel's own
   prune_configs_by (`_pick_config`);
4. runtime arguments: EXAMPLES launch < --arg < signature defaults (`_runtime_args`);
5. @triton.heuristics, computed from every bound argument (`_run_heuristics`).

Module code, heuristics and pruning that ask for the GPU get the target's answers
(triton_api.device_answers).  kernels.py finds and imports the kernel; this module only binds.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Any

from tritonscope import triton_api
from tritonscope.triton_api import launch as launch_stack
from tritonscope.core.errors import KernelSpecError, OutOfResourcesError, UsageError, close_matches
from tritonscope.inputs.kernels import (LAUNCH_SHAPE, WARPS, DescArg, Loaded, Request, TensorArg,
                                 _one_line, answering, canonical_dtype, check_arg_text, check_launch_options,
                                 constexpr_value, find_kernel, held_kernel, imported_asked,
                                 kernel_value, load_module, names_set_by_block, parse_arg_value, parse_constexpr,
                                 parse_scalar, parse_shape, resolve_target, stand_in_args)
from tritonscope.inputs.values import check_number_text
from tritonscope.core.model import ARCHES, KernelSpec, constexpr_words
from tritonscope.core.words import field_data, said, terms
from tritonscope.pipeline.config import Config, resolve


@dataclass
class _Binding:
    """What one launch binds so far (the steps below fill it in)."""

    req: Config
    arch: str
    kernel: str
    example: dict | None
    params: list[tuple[str, bool, Any]]
    backend_options: frozenset[str]
    obj: Any = None                                             # the kernel object (its decorator stack)
    jit_fn: Any = None
    values: dict[str, Any] = field(default_factory=dict)        # constexprs (and EXAMPLES params)
    given: set[str] = field(default_factory=set)                # constexprs the user set (--block, -c)
    launch_words: dict[str, Any] = field(default_factory=dict)  # launch and backend options
    shape_words: dict[str, Any] = field(default_factory=dict)   # -c num_warps=8 (a launch's keyword)
    shape: tuple[int, ...] | None = None
    dtype: str | None = None

    @property
    def names(self) -> list[str]:
        return [p[0] for p in self.params]

    @property
    def constexpr_names(self) -> list[str]:
        return [p[0] for p in self.params if p[1]]

    @property
    def launch_params(self) -> dict[str, Any]:
        return dict((self.example or {}).get("params", {}))

    @property
    def backend(self) -> str:
        return ARCHES[self.arch].backend


def build_spec(req: Config | Request, default_arch: str | None = None, *, kernel_object: Any = None) -> Loaded:
    """Bind one launch of the kernel a Config names by running the kernel's own launch path (the module
    docstring gives the steps).  A Request (a child's payload, versions' jobs) is resolved first, with
    `default_arch` for no --arch."""
    req = resolve(req, default_arch)
    arch = req.arch
    if kernel_object is not None:  # the Python API hands over the kernel itself: run no file
        path, module, kernel, obj, fn = held_kernel(kernel_object)
    else:
        path, kernel = resolve_target(req.target)
        module = load_module(path, arch, req.gpu)
        kernel, obj, fn = find_kernel(module, path, kernel)
    examples = getattr(module, "EXAMPLES", None)
    b = _Binding(req, arch, kernel, examples.get(kernel) if isinstance(examples, dict) else None,
                 triton_api.kernel_params(fn), triton_api.backend_option_names(ARCHES[arch].backend), obj, fn)
    tuner, heuristics = launch_stack.tuners_and_heuristics(obj)
    _constexprs(b)
    _keywords(b)
    num_warps, num_stages = _launch_shape(b)
    _check_arg_names(b)
    tuned = set(launch_stack.config_words(obj)) if tuner is not None else set()
    declared = b.given | set((b.example or {}).get("constexprs", {}))  # an EXAMPLES entry names its config
    tuned_constexprs = tuned & set(b.constexpr_names)
    skip_tuner = tuner is None or (req.config is None and bool(tuned_constexprs) and tuned_constexprs <= declared)
    if isinstance(req.config, str):  # only compile and the API pick by prediction (cost/pick.py)
        raise UsageError(f"{said('config', req.config)}: this command compiles one config; give "
                         f"{said('config', 'N')}.", data=field_data("config", req.config),
                         hint=f"A compile with {said('config', 'predicted')} picks one by prediction.")
    if tuner is None and req.config is not None:
        raise UsageError(f"{said('config', req.config)}: {kernel} has no @triton.autotune, so it has no configs.",
                         hint=f"Leave {said('config')} out; set constexprs with {said('constexprs', 'VALUE', key='NAME')}.",
                         data=field_data("config", req.config))
    set_by_stack = {n for h in heuristics for n in h.values} | (set() if skip_tuner else tuned)
    missing = [n for n in b.constexpr_names if n not in b.values and n not in set_by_stack]
    if missing:
        raise KernelSpecError(
            f"Missing constexpr{'s' if len(missing) > 1 else ''} for {kernel}: {', '.join(missing)}.",
            hint=f"Set each with {said('constexprs', 'VALUE', key='NAME')}, e.g. "
            + " ".join(said("constexprs", _example_value(b, n), key=n) for n in missing)
            + ".", data={"field": "constexprs", "missing": missing})
    launch = _example_launch(b)
    args = _runtime_args(b, launch)
    keywords = _launch_keywords(b, num_warps, num_stages, tuned if not skip_tuner else set())
    bound = _run_launch(b, obj, args, keywords, skip_tuner)
    for name in b.constexpr_names:
        if name in bound.values:
            b.values[name] = constexpr_value(bound.values[name])
    _check_heuristics(b, bound, keywords)
    missing = [n for n in b.constexpr_names if n not in b.values]
    if missing:  # a name no layer of the launch set: Triton's binder would refuse it too
        raise KernelSpecError(f"Missing constexpr{'s' if len(missing) > 1 else ''} for {kernel}: "
                              f"{', '.join(missing)}.", hint=f"Set each with {said('constexprs', 'VALUE', key='NAME')}.",
                              data={"field": "constexprs", "missing": missing})
    if launch is not None and not skip_tuner:  # the example's grid follows the config the tuner took
        launch = _example_launch(b)
    if bound.num_warps not in WARPS:
        raise UsageError(f"{said('num_warps', bound.num_warps)} is not a power of two from 1 to 32.",
                         hint="Use 1, 2, 4, 8, 16 or 32.", data=field_data("num_warps", bound.num_warps))
    if bound.num_stages < 1:
        raise UsageError(f"{said('num_stages', bound.num_stages)} must be at least 1.",
                         hint="Use 1 (no pipelining) or more.", data=field_data("num_stages", bound.num_stages))
    for name in b.constexpr_names:
        _check_constexpr(kernel, name, b.values[name])
    options = {k: v for k, v in bound.options.items() if k not in LAUNCH_SHAPE}
    spec = KernelSpec(
        target=req.target, kernel=kernel, file=str(path),
        args={k: (str(v) if isinstance(v, (TensorArg, DescArg)) else v) for k, v in args.items()},
        constexprs={n: b.values[n] for n in b.constexpr_names},
        num_warps=bound.num_warps, num_stages=bound.num_stages, arch=arch, shape=b.shape, dtype=b.dtype,
        grid=_grid(b, args, launch),
        options={**{k: v for k, v in b.values.items() if k in b.launch_params and k not in b.backend_options},
                 **check_launch_options(options)},
        asked=tuple(imported_asked(module) if kernel_object is None else ()),
        gpu=req.gpu if kernel_object is None else None,
        autotune=bound.autotune if not skip_tuner else None,
        heuristics=tuple(bound.heuristics),
    )
    return Loaded(spec, fn, obj, b.example, launch)


def _grid(b: _Binding, args: dict[str, Any], launch: dict | None) -> tuple[int, ...] | None:
    """--grid evaluated on this launch's bound values, else the EXAMPLES launch's grid, else None."""
    if b.req.grid:
        from tritonscope.inputs.grid import evaluate

        return evaluate(b.req.grid, {**args, **{n: b.values[n] for n in b.constexpr_names}}, kernel=b.kernel)
    return tuple(launch["grid"]) if launch and launch.get("grid") else None


def _example_value(b: _Binding, name: str) -> str:
    """A value to show in a hint for constexpr `name`: `true` where the kernel tests it as a condition
    (`if NAME:`, `not NAME`, `NAME and ...`), else 16."""
    import ast
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(triton_api.python_function(b.jit_fn))))
    except (OSError, TypeError, SyntaxError):
        return "16"
    def is_name(node) -> bool:
        return isinstance(node, ast.Name) and node.id == name
    for node in ast.walk(tree):
        tests = []
        if isinstance(node, (ast.If, ast.IfExp, ast.While)):
            tests.append(node.test)
        elif isinstance(node, ast.BoolOp):
            tests.extend(node.values)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            tests.append(node.operand)
        if any(is_name(t) for t in tests):
            return "true"
    return "16"


def _launch_keywords(b: _Binding, num_warps: int | None, num_stages: int | None, tuned: set[str]) -> dict[str, Any]:
    """What the launch passes by keyword besides the runtime arguments: the constexprs it names (EXAMPLES, -c,
    --block; not signature defaults, which the binder fills), launch options given (-w, -s, -c, EXAMPLES)
    and backend options.  A value an autotune config sets is left to the tuner, unless the user gave it
    (then the launch passes it too, and the tuner refuses it as a launch does)."""
    example = b.example or {}
    passed = set(example.get("constexprs", {})) | set(b.launch_params) | b.given
    words: dict[str, Any] = {}
    for name in b.constexpr_names:
        if name in passed and name in b.values and (name in b.given or name not in tuned):
            words[name] = kernel_value(b.values[name])
    for name, value in b.launch_words.items():  # -c backend options, --maxnreg..., an EXAMPLES entry's options
        if name not in tuned or name in (b.req.options or {}) or name in (b.req.constexprs or {}):
            words.setdefault(name, value)
    for name, given, fallback in (("num_warps", num_warps, example.get("num_warps")),
                                  ("num_stages", num_stages, example.get("num_stages"))):
        if given is not None:
            words[name] = given
        elif fallback is not None and name not in tuned:
            words[name] = fallback
    return words


def _run_launch(b: _Binding, obj, args: dict[str, Any], keywords: dict[str, Any], skip_tuner: bool):
    """The kernel's own launch path on stand-ins (triton_api.launch): by keyword, as libraries launch; when
    the kernel's prune_configs_by reads its arguments only by position, as a positional launch passes them."""
    runtime = stand_in_args(args)
    target = triton_api.gpu_target(**ARCHES[b.arch].target_words())
    choice = launch_stack.Choice(b.req.config)

    def run(positional: list[str]):
        rest = {**{n: v for n, v in runtime.items() if n not in positional}, **keywords}
        return launch_stack.bind_launch(
            obj, positional=[(n, runtime[n] if n in runtime else keywords[n]) for n in positional], keywords=rest,
            target=target, choice=choice, skip_tuner=skip_tuner, answering=lambda: answering(b.arch, b.req.gpu)[0])

    try:
        try:
            return run([])
        except launch_stack.LaunchError as e:
            prefix = _positional_prefix(b, runtime, keywords)
            if e.step != "prune" or not prefix:
                raise
            try:
                bound = run(prefix)
            except launch_stack.LaunchError as again:
                if again.step == "prune":  # it fails either way: both errors are said
                    cause = again.cause if again.cause is not None else again
                    e.data["positional"] = f"{type(cause).__name__}: {_one_line(cause)}"
                    raise e from None
                raise
            bound.autotune = {**(bound.autotune or {}), "launch": "by position: " + ", ".join(prefix)}
            return bound
    except launch_stack.LaunchError as e:
        raise _launch_error(b, e) from e.cause


def _positional_prefix(b: _Binding, runtime: dict[str, Any], keywords: dict[str, Any]) -> list[str]:
    """The parameters a positional launch passes in order: every one up to the last runtime argument (a
    constexpr among them only when the launch names it)."""
    last = max((i for i, (n, c, _) in enumerate(b.params) if not c and n in runtime), default=-1)
    out = []
    for name, _, _ in b.params[:last + 1]:
        if name not in runtime and name not in keywords:
            break
        out.append(name)
    return out


def _launch_error(b: _Binding, e) -> Exception:
    """A step of the kernel's own launch path that failed, in tritonscope's words."""
    cause = f"{type(e.cause).__name__}: {_one_line(e.cause)}" if e.cause is not None else str(e)
    if e.step == "heuristic":
        return KernelSpecError(
            f"{b.kernel}'s @triton.heuristics for {e.name} failed on these arguments: {cause}",
            hint=f"Check the arguments it reads ({said('args')}); a tensor is DTYPE[dims] with its shape.",
            data={"step": e.step, "name": e.name})
    if e.step == "prune":
        both = f"; bound by position instead: {e.data['positional']}" if e.data.get("positional") else ""
        return KernelSpecError(
            f"{b.kernel}'s prune_configs_by failed on these arguments: {cause}"
            + (f" (bound by keyword){both}" if both else ""),
            hint="A launch with these arguments fails the same way; check the arguments it reads "
                 f"({said('args')}, {said('constexprs')}).",
            data={"step": e.step})
    if e.step == "config" and "count" in e.data:
        count = e.data["count"]
        pruned = f" ({count} of {e.data['of']} after its prune_configs_by)" if count != e.data["of"] else ""
        return UsageError(f"{said('config', e.data['index'])}: {b.kernel} has {count} autotune config"
                          f"{'s' if count != 1 else ''}{pruned}.",
                          hint=f"Use {said('config', 1)} to {count}, or `tritonscope sweep` to compile them all.",
                          data={"step": e.step, **e.data, **field_data("config", e.data["index"])})
    if e.step == "config":
        names = e.data.get("names", [])
        tuned = sorted(n for n in launch_stack.config_words(b.obj) if n in b.constexpr_names)
        return UsageError(
            f"{', '.join(names)}: set by the launch and by {b.kernel}'s autotune config {e.data.get('index')}; "
            "a launch refuses conflicting meta-parameters.",
            hint=f"Leave them out to compile a config of the tuner's ({said('config', 'N')}), or set every tuned "
                 f"constexpr ({', '.join(tuned)}) with {said('constexprs')} to compile your own config.",
            data={"step": e.step, **e.data})
    return KernelSpecError(f"Binding {b.kernel}'s launch failed: {cause}", data={"step": e.step})


def _check_heuristics(b: _Binding, bound, keywords: dict[str, Any]) -> None:
    """A heuristic may read the value passed under its own name (Triton passes it in), but a value the user
    set that a heuristic then replaces is refused: it would be silently dropped."""
    given = b.given | set(b.req.options or {}) | set(b.shape_words)
    if b.req.num_warps is not None:
        given.add("num_warps")
    if b.req.num_stages is not None:
        given.add("num_stages")
    for name, value in bound.heuristics.items():
        if name in given and name in keywords and constexpr_value(keywords[name]) != constexpr_value(value):
            raise UsageError(
                f"{name}={constexpr_words(constexpr_value(keywords[name]))}: {b.kernel} computes {name} with "
                f"@triton.heuristics from its arguments (here {constexpr_words(constexpr_value(value))}); a launch "
                "replaces the value passed.",
                hint="Change the arguments it is computed from instead (see the kernel's @triton.heuristics).")


def _constexprs(b: _Binding) -> None:
    """Signature defaults < EXAMPLES constexprs < constexprs_for(shape) < EXAMPLES params < --block."""
    example, req = b.example or {}, b.req
    for name, is_const, default in b.params:
        if is_const and default is not inspect.Parameter.empty:
            b.values[name] = constexpr_value(default)
    b.values.update({k: constexpr_value(v) for k, v in example.get("constexprs", {}).items()})
    b.shape = parse_shape(req.shape) if req.shape else tuple(example.get("shape") or ()) or None
    b.dtype = canonical_dtype(req.dtype) if req.dtype else example.get("dtype")
    sized = example.get("constexprs_for")
    if callable(sized) and b.shape:  # constexprs that follow the shape (softmax: a BLOCK that covers the row)
        try:
            b.values.update(sized(b.shape, b.dtype))
        except Exception as e:
            raise KernelSpecError(
                f"The example's constexprs_for for {b.kernel} rejected shape {'x'.join(map(str, b.shape))}: "
                f"{type(e).__name__}: {e}",
                hint="Check the shape against the kernel's EXAMPLES entry.") from e
    b.values.update(b.launch_params)
    if req.block is None:
        return
    block_names = names_set_by_block(b.example, b.constexpr_names)
    if not block_names:
        raise UsageError(
            f"{said('block')} needs a BLOCK constexpr, and {b.kernel} has none.",
            hint=f"Set constexprs with {said('constexprs', 'VALUE', key='NAME')}; this kernel's are: "
                 f"{', '.join(b.constexpr_names) or '(none)'}.", data=field_data("block", req.block))
    clash = [n for n in block_names if n in (req.constexprs or {})]
    if clash:
        raise UsageError(
            f"{said('block', req.block)} and {said('constexprs', req.constexprs[clash[0]], key=clash[0])} both set "
            f"{clash[0]}.", data=field_data("block", req.block),
            hint=f"Give {clash[0]} once: {said('block')} sets {', '.join(block_names)}; {said('constexprs')} sets one "
                 "constexpr.")
    for n in block_names:
        b.values[n] = req.block
    b.given.update(block_names)


def _keywords(b: _Binding) -> None:
    """-c NAME=VALUE, a launch's keyword: a constexpr, an EXAMPLES param, num_warps/num_stages, or a backend option."""
    b.launch_words = dict(check_launch_options(b.req.options))  # --maxnreg, --num-ctas, --fp-fusion
    for name, text in (b.req.constexprs or {}).items():
        check_number_text("constexprs", name, text, parse_constexpr(text))  # '1e999' (inf): exit 2, no compile
        if name in b.constexpr_names:
            b.values[name] = _same_kind(b.kernel, name, text, parse_constexpr(text), b.values.get(name), b.example)
            b.given.add(name)
        elif name in b.launch_params:
            b.values[name] = parse_scalar(text)
        elif name in b.names:
            raise KernelSpecError(f"{name!r} is a runtime argument of {b.kernel}, not a constexpr.",
                                  hint=f"Set it with {said('args', 'VALUE', key=name)}.",
                                  data=field_data("constexprs", key=name))
        elif name in LAUNCH_SHAPE:
            b.shape_words[name] = _launch_int(name, text)
        elif name in b.backend_options:
            if name in b.launch_words and b.launch_words[name] != parse_scalar(text):
                raise UsageError(f"{said('constexprs', text, key=name)} and "
                                 f"{said('options', b.launch_words[name], key=name)} disagree.",
                                 hint=f"Give {name} once.", data=field_data("constexprs", text, key=name))
            b.launch_words[name] = parse_scalar(text)
        else:
            _unknown_keyword(b, name)
    for name, value in b.launch_params.items():  # an EXAMPLES entry's backend options reach the compile too
        if name in b.backend_options and name not in b.constexpr_names:
            b.launch_words.setdefault(name, value)


def _unknown_keyword(b: _Binding, name: str) -> None:
    other = "hip" if b.backend == "cuda" else "cuda"
    if name in triton_api.backend_option_names(other):
        raise UsageError(
            f"{said('constexprs', key=name)}: {b.arch} compiles with Triton's {_backend_words(b.backend)} backend, "
            f"which has no option {name!r} (the {_backend_words(other)} backend has).",
            hint=f"Options of this backend: {', '.join(sorted(b.backend_options))}.",
            data=field_data("constexprs", key=name))
    hint_names = b.constexpr_names + list(b.launch_params)
    raise KernelSpecError(
        f"{b.kernel} has no constexpr named {name!r}.{close_matches(name, hint_names + sorted(b.backend_options))}",
        hint=f"Its constexprs are: {', '.join(hint_names) or '(none)'}. {said('constexprs')} also takes the "
             f"options of Triton's {_backend_words(b.backend)} backend, as a launch does: "
             f"{', '.join(sorted(b.backend_options - set(LAUNCH_SHAPE)))}.",
        data=field_data("constexprs", key=name))


def _launch_shape(b: _Binding) -> tuple[int | None, int | None]:
    """num_warps and num_stages as the user gave them (None: not given); a constexpr named like one of them
    gets the value a keyword launch gives both."""
    num_warps = _one_value("num_warps", b.req.num_warps, b.shape_words.get("num_warps"))
    num_stages = _one_value("num_stages", b.req.num_stages, b.shape_words.get("num_stages"))
    for name, flag_value in (("num_warps", num_warps), ("num_stages", num_stages)):
        if name in b.constexpr_names:
            if name in b.given and flag_value is not None and b.values[name] != flag_value:
                raise UsageError(f"{said('constexprs', b.values[name], key=name)} and the launch option "
                                 f"{name}={flag_value} disagree: a launch passes {name} once, to the constexpr and "
                                 "to the compile.", hint=f"Give {name} once.",
                                 data=field_data("constexprs", b.values[name], key=name))
            if flag_value is not None:
                b.values[name] = flag_value
                b.given.add(name)
    return num_warps, num_stages


def _check_arg_names(b: _Binding) -> None:
    """Every --arg names a runtime argument (checked before any launch function or heuristic runs)."""
    runtime = [n for n, c, _ in b.params if not c]
    for name in (b.req.args or {}):
        if name in b.constexpr_names:
            raise KernelSpecError(f"{name!r} is a constexpr of {b.kernel}, not a runtime argument.",
                                  hint=f"Set it with {said('constexprs', 'VALUE', key=name)}.",
                                  data=field_data("args", key=name))
        if name not in b.names:
            raise KernelSpecError(
                f"{b.kernel} has no runtime argument named {name!r}.{close_matches(name, b.names)}",
                hint=f"Its runtime arguments are: {', '.join(runtime)}.", data=field_data("args", key=name))


def _example_launch(b: _Binding) -> dict | None:
    """What the EXAMPLES entry's launch function returns for this config (args, grid, check, flops)."""
    example = b.example or {}
    if not callable(example.get("launch")):
        return None
    try:
        return example["launch"](b.shape, b.dtype, dict(b.values))
    except Exception as e:
        raise KernelSpecError(
            f"The example launch for {b.kernel} rejected this config: {type(e).__name__}: {e}",
            hint="Check the shape, dtype and constexprs against the kernel's EXAMPLES entry.",
        ) from e


def _runtime_args(b: _Binding, launch: dict | None) -> dict[str, Any]:
    """Runtime arguments in the kernel's order: EXAMPLES launch < --arg < signature defaults."""
    runtime = [(n, d) for n, c, d in b.params if not c]
    args: dict[str, Any] = {}
    if launch:
        args.update({k: parse_arg_value(v) for k, v in launch.get("args", {}).items()})
    for name, text in (b.req.args or {}).items():
        args[name] = check_arg_text(name, text)
    for name, default in runtime:
        if name not in args and default is not inspect.Parameter.empty:
            args[name] = default
    missing = [n for n, _ in runtime if n not in args]
    if missing:
        raise KernelSpecError(
            f"{b.kernel} needs a description of argument{'s' if len(missing) > 1 else ''}: {', '.join(missing)}.",
            hint=f"Describe each with {said('args')}, e.g. "
            + " ".join(said("args", "*fp16" if "ptr" in n else "32", key=n) for n in missing[:3])
            + " (a tensor is *DTYPE or DTYPE[dims]; ints and floats as numbers), "
            "or declare EXAMPLES in the file (see README).", data={"field": "args", "missing": missing})
    return {n: args[n] for n, _ in runtime}


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "dtype" if value.startswith("tl.") else "string"
    return "other"


def _same_kind(kernel: str, name: str, text: Any, value: Any, known: Any, example: dict | None) -> Any:
    """-c NAME=VALUE checked against the kind of value the kernel declares for NAME (its default, or its
    EXAMPLES value): a word for a number, or a non-dtype for a dtype, is refused naming the parameter
    before anything compiles, instead of failing deep inside Triton."""
    if known is None or value is None:
        return value
    want, got = _kind(known), _kind(value)
    where = "its EXAMPLES value" if example and name in (example.get("constexprs") or {}) else "its default"
    if want in ("number", "bool") and got in ("string", "dtype"):
        raise KernelSpecError(f"{said('constexprs', text, key=name)}: not a number, bool or dtype, and {kernel}'s "
                              f"{name} is a {want} ({where} is {known!r}).",
                              hint=f"Give it a value like {said('constexprs', known, key=name)}.",
                              data=field_data("constexprs", text, key=name))
    if want == "dtype" and got != "dtype":
        raise KernelSpecError(f"{said('constexprs', text, key=name)}: {kernel}'s {name} is a dtype ({where} is "
                              f"{known}), and {text!r} names none.", data=field_data("constexprs", text, key=name),
                              hint=f"Give a dtype: {said('constexprs', 'bf16', key=name)}, tl.bfloat16 or "
                                   "torch.bfloat16.")
    return value


def check_axis_values(loaded: Loaded, axes: dict[str, list[str]]) -> None:
    """Every value of a sweep's -c axes checked as `-c NAME=VALUE` is when a launch binds (`_keywords`): a
    number that is not the value read ('1e999') is exit 2, a word for a number constexpr exit 4, before any
    worker starts.  Binding checks the first value of each axis; this checks the rest too, against the
    value the kernel declares (its default < EXAMPLES constexprs < EXAMPLES params), without a launch."""
    example = loaded.example or {}
    known = {n: constexpr_value(d) for n, c, d in triton_api.kernel_params(loaded.jit_fn)
             if c and d is not inspect.Parameter.empty}
    known.update({k: constexpr_value(v) for k, v in example.get("constexprs", {}).items()})
    known.update(example.get("params", {}))
    constexprs = set(loaded.spec.constexprs)
    for name, texts in axes.items():
        for text in texts:
            value = check_number_text("constexprs", name, text, parse_constexpr(text))
            if name in constexprs:
                _same_kind(loaded.spec.kernel, name, text, value, known.get(name), loaded.example)


def _backend_words(backend: str) -> str:
    return {"cuda": "NVIDIA", "hip": "AMD"}.get(backend, backend)


def _launch_int(name: str, text: Any) -> int:
    value = parse_scalar(text)
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{said('constexprs', text, key=name)}: {name} is a whole number.",
                         hint=f"e.g. {said('constexprs', 4, key=name)}", data=field_data("constexprs", text, key=name))
    return value


def _one_value(name: str, flag: int | None, keyword: int | None) -> int | None:
    """--num-warps 8 and -c num_warps=8 name one launch option: given both, they must agree."""
    if flag is not None and keyword is not None and flag != keyword:
        raise UsageError(f"{said(name, flag)} and {said('constexprs', keyword, key=name)} disagree.",
                         hint=f"Give {name} once.", data=field_data(name, flag))
    return flag if flag is not None else keyword


def _check_constexpr(kernel: str, name: str, value: Any) -> None:
    """A constexpr's value is one a launch can pass: a number, bool, None, string, dtype or a function."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return
    if callable(value) or type(value).__name__ in ("JITFunction", "constexpr_function"):
        return  # a @triton.jit function passed as a constexpr (an activation, say)
    if isinstance(value, tuple) and all(isinstance(v, (bool, int, float, str)) or v is None for v in value):
        return
    raise KernelSpecError(f"Constexpr {name}={value!r} of {kernel} is not a value a launch can pass "
                          "(a number, bool, string, dtype or None).",
                          hint=f"Give it a value like {said('constexprs', 16, key=name)}.",
                          data=field_data("constexprs", repr(value), key=name))


# The runaway guard: configs Triton is known to compile for many minutes (with a spinner only).
# `compile --timeout SECONDS` lifts it, since the compile is then stopped if it runs away.
MAX_STAGES = 16            # the pipeliner keeps a copy of every loop load per stage
MAX_TILE_REGISTERS = 1024  # per thread, about 4x the 255 a thread can have: ptxas spills for minutes


def runaway_guard(loaded: "Loaded") -> None:
    """Refuse, before compiling, a config whose estimate says Triton would run away.

    Two estimates, both documented in the README ("Runaway guard"):
    num_stages above MAX_STAGES (UsageError, exit 2), and a tile whose fp32
    values alone need more than MAX_TILE_REGISTERS registers per thread
    (OutOfResourcesError, exit 6).  The tile is read from the BLOCK
    constexprs: for a kernel that calls dot(), the M x N accumulator (the two
    largest, or BLOCK x BLOCK when there is one); otherwise their product.
    """

    spec = loaded.spec
    if spec.num_stages > MAX_STAGES:
        raise UsageError(
            f"{said('num_stages', spec.num_stages)} is far above what a loop can use: Triton's pipeliner keeps a "
            f"copy of each loop load per stage, and past {MAX_STAGES} stages a compile can run for many minutes.",
            hint=f"Use {MAX_STAGES} stages or fewer (2-5 is usual), or give "
                 f"{'the command line' + chr(39) + 's ' if terms() == 'api' else ''}`compile --timeout SECONDS` "
                 "to try it anyway with a time limit.", data=field_data("num_stages", spec.num_stages))
    blocks = sorted((v for n, v in spec.constexprs.items()
                     if "BLOCK" in n.upper() and isinstance(v, int) and not isinstance(v, bool) and v > 0),
                    reverse=True)
    if not blocks:
        return
    if _calls_dot(loaded.jit_fn):
        dims = [blocks[0], blocks[1] if len(blocks) > 1 else blocks[0]]
    else:
        dims = blocks
    elements = 1
    for d in dims:
        elements *= d
    arch = ARCHES.get(spec.arch)
    warp = getattr(arch, "warp_size", 32)         # 64 on CDNA
    limit = getattr(arch, "max_vgprs_per_wave", None) or getattr(arch, "max_regs_per_thread", 255)
    threads = spec.num_warps * warp
    per_thread = elements // threads
    if per_thread > MAX_TILE_REGISTERS * limit // 255:  # about 4x what a thread of this target can have
        tile = "x".join(map(str, dims))
        raise OutOfResourcesError(
            f"{spec.kernel} ({spec.label()}): its {tile} tile is about {per_thread:,} registers per thread "
            f"({elements:,} values over {threads} threads; a thread of {spec.arch} has at most {limit}), so the "
            f"compiler would spill for many minutes. Not compiled.",
            hint="Use a smaller block (or more warps), or give `compile --timeout SECONDS` to try it anyway "
                 "with a time limit.")


def _calls_dot(jit_fn) -> bool:
    """Whether the kernel's own source calls dot() (tl.dot, tl.dot_scaled): its tile is an M x N accumulator."""
    try:
        source = inspect.getsource(triton_api.python_function(jit_fn))
    except (OSError, TypeError):
        return False
    return bool(re.search(r"\bdot(?:_scaled)?\s*\(", source))
