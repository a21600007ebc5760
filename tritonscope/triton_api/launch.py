"""One launch through the kernel's own decorator stack, stopped where the JITFunction would compile.

`kernel[grid](...)` runs the kernel object's own `run`: an `Autotuner` prunes its configs
(`prune_configs`: `early_config_prune(configs, nargs, **kwargs)`, then `perf_model`/`top_k`),
picks one and calls its config's `pre_hook`; a `Heuristics` computes its values from every argument
(the value passed under a heuristic's own name included) and may set launch options (`num_warps`,
`num_stages`, `maxnreg`) as well as constexprs; the JITFunction then binds what reached it, and its
backend fills the options nobody passed (`parse_options`: HIP's `num_stages` is 2, CUDA's 3).

`bind_launch` runs exactly that code.  tritonscope supplies only three things: the stand-in arguments,
which autotune config stands for the tuner's timed choice (`choose`), and a recorder in place of
`JITFunction.run` that keeps what the stack passed instead of compiling it.  The Autotuner's timing
needs a GPU, so its `run` is the one step replaced: by Triton's own pruning followed by the
choice (the same call `Autotuner.run` makes with the config it keeps).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Callable, ContextManager

from tritonscope.core.errors import TritonscopeError
from tritonscope.triton_api.env import _lock
from tritonscope.triton_api.jit import _is_a

# The launch keywords every stack layer passes along that are no launch option.
_RUN_WORDS = ("grid", "warmup")


class LaunchError(Exception):
    """A step of the launch failed: `step` is "heuristic", "prune", "pre_hook", "config" or "bind",
    `name` the heuristic (or parameter) involved, `cause` the exception the kernel's code raised."""

    def __init__(self, step: str, message: str, *, name: str | None = None, cause: BaseException | None = None,
                 data: dict[str, Any] | None = None):
        super().__init__(message)
        self.step, self.name, self.cause, self.data = step, name, cause, dict(data or {})


@dataclass
class Choice:
    """Which config the caller wants: `index` (1-based, after pruning) or the first."""

    index: int | None = None


@dataclass
class Bound:
    """What the stack handed the JITFunction: every parameter it passed by name (`values`, positional ones
    named), the other keywords (`options`: launch and backend options), the backend's resolved
    `num_warps`/`num_stages`, and what each layer decided."""

    values: dict[str, Any]
    options: dict[str, Any]
    num_warps: int
    num_stages: int
    autotune: dict[str, Any] | None = None
    heuristics: dict[str, Any] = field(default_factory=dict)  # name -> the value the heuristic gave


class _Stop(Exception):
    """Raised by the recorder so nothing below JITFunction.run runs."""


def _is_kernel(obj) -> bool:
    """A JITFunction, or the interpreter's InterpretedFunction (TRITON_INTERPRET=1)."""
    name = type(obj).__name__
    return (name == "JITFunction" and hasattr(obj, "params")) or name == "InterpretedFunction"


def layers(obj) -> list[Any]:
    """The kernel object's decorator stack, outside-in, down to (not including) its JITFunction."""
    out, seen = [], 0
    while obj is not None and seen < 8 and not _is_kernel(obj):
        out.append(obj)
        obj = getattr(obj, "fn", None)
        seen += 1
    return out


def _innermost(obj):
    """The JITFunction (or InterpretedFunction) a launch of `obj` reaches."""
    stack = layers(obj)
    inner = getattr(stack[-1], "fn", None) if stack else obj
    if not _is_kernel(inner):
        raise LaunchError("bind", f"no @triton.jit function under {type(obj).__name__}")
    return inner


def tuners_and_heuristics(obj) -> tuple[Any, list[Any]]:
    """(the outermost Autotuner or None, the Heuristics layers) of the stack."""
    stack = layers(obj)
    tuner = next((layer for layer in stack if _is_a(layer, "Autotuner")), None)
    heuristics = [layer for layer in stack
                  if _is_a(layer, "Heuristics") and isinstance(getattr(layer, "values", None), dict)]
    return tuner, heuristics


def bind_launch(obj, *, positional: list[tuple[str, Any]], keywords: dict[str, Any], target,
                choice: Choice | None = None, skip_tuner: bool = False,
                answering: Callable[[], ContextManager] | None = None) -> Bound:
    """Run `obj`'s launch path on these arguments (`positional` in order, then `keywords`) for `target`
    (a GPUTarget), up to the compile.  `skip_tuner` launches the Autotuner's inner function, as a caller
    that sets every tuned value itself does.  `answering` is the context the kernel's own code runs in
    (the stand-in device's answers).  Raises LaunchError when a step of the kernel's code fails."""
    jit_fn = _innermost(obj)
    tuner, heuristics = tuners_and_heuristics(obj)
    passed_by = None
    if skip_tuner and tuner is not None:  # the tuner hands the launch on as it came; layers above it still run
        passed_by, tuner = tuner, None
    seen: dict[str, Any] = {}

    def record(*args, **kwargs):
        seen["args"], seen["kwargs"] = args, kwargs
        raise _Stop

    patched: list[tuple[Any, str]] = [(jit_fn, "run")]
    autotune_info: dict[str, Any] = {}
    if tuner is not None or passed_by is not None:
        patched.append((tuner or passed_by, "run"))
    names = list(jit_fn.arg_names)
    # the patches live on the kernel's own objects: one launch at a time (the compile's lock)
    with _lock, (answering() if answering else contextlib.nullcontext()):
        try:
            jit_fn.run = record
            if tuner is not None:
                tuner.run = _tuned_run(tuner, choice or Choice(), autotune_info)
            if passed_by is not None:
                passed_by.run = lambda *a, **k: passed_by.fn.run(*a, **k)
            for layer in heuristics:
                _wrap_heuristics(layer)
            try:
                obj.run(*[v for _, v in positional], grid=(1,), warmup=True, **keywords)
            except _Stop:
                pass
            except (LaunchError, TritonscopeError):
                raise
            except Exception as e:  # a layer's own code refused the launch (a subclass, a duplicate keyword)
                raise LaunchError("bind", f"{type(e).__name__}: {e}", cause=e) from e
        finally:
            for layer, attr in patched:
                layer.__dict__.pop(attr, None)
            for layer in heuristics:
                if hasattr(layer, "_tritonscope_original"):
                    layer.values = layer.__dict__.pop("_tritonscope_original")
    if "args" not in seen:  # a layer returned without calling down (a subclass that launches differently)
        raise LaunchError("bind", "the kernel's decorator stack returned without reaching its JITFunction")
    args, kwargs = seen["args"], dict(seen["kwargs"])
    for word in _RUN_WORDS:
        kwargs.pop(word, None)
    if len(args) > len(names):
        raise LaunchError("bind", f"{len(args)} positional arguments for {len(names)} parameters")
    values = dict(zip(names, args))
    for name in names:
        if name in kwargs:
            if name in values:
                raise LaunchError("bind", f"{name} was passed twice (by position and by keyword)", name=name)
            values[name] = kwargs[name]
    resolved = _parse_options(target, kwargs)
    # every Config passes num_ctas=1 (Triton's default), which says nothing unless the launch passed it
    options = {k: v for k, v in kwargs.items() if (k not in names or k in ("num_warps", "num_stages"))
               and not (k == "num_ctas" and v == 1 and k not in keywords)}
    given_heuristics = {n: values.get(n, kwargs.get(n)) for layer in heuristics for n in layer.values}
    return Bound(values=values, options=options, num_warps=int(resolved.num_warps),
                 num_stages=int(resolved.num_stages), autotune=autotune_info or None, heuristics=given_heuristics)


def _wrap_heuristics(layer) -> None:
    """Each heuristic of `layer` wrapped so a failure names it (Heuristics.run itself is Triton's)."""
    original = layer.values
    layer.__dict__["_tritonscope_original"] = original
    layer.values = {name: _named(name, fn) for name, fn in original.items()}


def _named(name: str, fn: Callable) -> Callable:
    def heuristic(args):
        try:
            return fn(args)
        except LaunchError:
            raise
        except Exception as e:
            raise LaunchError("heuristic", str(e), name=name, cause=e) from e
    return heuristic


def _tuned_run(tuner, choice: Choice, info: dict[str, Any]) -> Callable:
    """Autotuner.run with its timing replaced by `choice`: Triton's own pruning, then the chosen config's
    pre_hook and keywords, as Autotuner.run passes the config it keeps."""

    def run(*args, **kwargs):
        configs = list(tuner.configs)
        tuner.nargs = dict(zip(tuner.arg_names, args))
        try:
            if len(configs) > 1:  # Autotuner.run prunes only when there is a choice to make
                try:
                    kept = list(tuner.prune_configs(kwargs))
                except Exception as e:
                    raise LaunchError("prune", str(e), cause=e) from e
            else:
                kept = configs
            index = choice.index if choice.index is not None else 1
            if not 1 <= index <= len(kept):
                raise LaunchError("config", f"config {index} of {len(kept)}",
                                  data={"index": index, "count": len(kept), "of": len(configs)})
            config = kept[index - 1]
            info.update(index=index, count=len(kept), of=len(configs),
                        chosen_by="--config" if choice.index is not None else "first",
                        original=configs.index(config) + 1 if config in configs else None)
            words = config.all_kwargs()
            clash = sorted(set(words) & set(kwargs) - set(_RUN_WORDS))
            if clash:
                raise LaunchError("config", f"the launch passes {', '.join(clash)}, which config {index} sets too",
                                  data={"names": clash, "index": index})
            if config.pre_hook is not None:
                try:
                    config.pre_hook({**tuner.nargs, **kwargs, **words})
                    info["pre_hook"] = "ran"
                except Exception as e:
                    info["pre_hook"] = f"failed on the stand-in arguments ({type(e).__name__}: {e})"
        finally:
            tuner.nargs = None
        return tuner.fn.run(*args, **kwargs, **words)

    return run


def _parse_options(target, kwargs: dict[str, Any]):
    """The options the target's backend compiles with for these launch keywords (its own defaults filled)."""
    from triton.compiler import make_backend

    from tritonscope.triton_api.env import quiet_known_warnings

    quiet_known_warnings()
    backend = make_backend(target)
    return backend.parse_options({k: v for k, v in kwargs.items() if v is not None})


def config_words(obj) -> dict[str, Any]:
    """Every keyword some autotune config of `obj` sets (its constexprs and launch options)."""
    tuner, _ = tuners_and_heuristics(obj)
    words: dict[str, Any] = {}
    for cfg in getattr(tuner, "configs", None) or []:
        words.update(cfg.all_kwargs())
    return words
