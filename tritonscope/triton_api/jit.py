"""Compiling through Triton's JIT entry point, the binder's specialization, kernel objects (JITFunction, Autotuner, Heuristics, the interpreter's) and their parameters, Triton's errors."""

from __future__ import annotations

import contextlib
from typing import Any
from tritonscope.triton_api.env import _lock, quiet_known_warnings, triton_series, triton_version
from tritonscope.triton_api.key import _install_key
from tritonscope.triton_api.standins import Compiled, _diagnosed, _env, _hip_torch_probe_kept, _stand_in_driver, _torch_hidden, gpu_target

def launch_keywords(bound: dict[str, Any], *, num_warps: int, num_stages: int,
                    options: dict[str, Any] | None = None) -> dict[str, Any]:
    """One keyword launch: every parameter by name (as Triton binds them, in the kernel's order, whatever
    order constexprs and runtime arguments come in) plus the launch and backend options.  A constexpr
    named like an option (`num_stages`) is one keyword, which Triton gives to both."""
    keywords = {**(options or {}), "num_warps": num_warps, "num_stages": num_stages}
    keywords.update(bound)
    return keywords


def compile_kernel(jit_fn, bound: dict[str, Any], *, capability: int | None = None,
                   num_warps: int, num_stages: int, options: dict[str, Any] | None = None,
                   fresh: bool = False, remarks: bool = True, target: tuple[str, Any, int] | None = None) -> Compiled:
    """Compile through Triton's JIT path for `capability` (or `target`, e.g. ("hip", "gfx942", 64)), with no GPU.

    The stand-in driver reports the target, so that target's own backend
    specializes the arguments (the HIP backend adds tt.pointer_range = 32 for
    tensors under 2 GiB) and runs its own pipeline (AMDGCN and an hsaco on
    HIP).

    `fresh` bypasses Triton's on-disk cache (TRITON_ALWAYS_COMPILE) for this
    one compile.  `remarks` collects Triton's remarks and warnings into
    Compiled.remarks (off in the `passes` child, which reads its stderr whole).
    """
    from triton.runtime import driver

    quiet_known_warnings()
    _install_key()
    target = gpu_target(capability, target)
    seen: dict[str, Any] = {}
    with _lock, _torch_hidden(target), _hip_torch_probe_kept(), _env("TRITON_ALWAYS_COMPILE", "1" if fresh else None), \
            (_diagnosed(seen) if remarks else contextlib.nullcontext()):
        previous = getattr(driver, "_active", None)
        driver.set_active(_stand_in_driver(target))
        try:
            _forget_compiled(jit_fn)  # never reuse another arch's binder
            kernel = jit_fn.warmup(grid=(1,), **launch_keywords(bound, num_warps=num_warps, num_stages=num_stages,
                                                                options=options))
            if hasattr(kernel, "result"):  # async compile mode: the remarks come while it finishes
                kernel = kernel.result()
        finally:
            _forget_compiled(jit_fn)
            # reset_active() would build the default driver, which raises
            # on a machine with no GPU: put back exactly what was there.
            driver._active = previous
    meta = kernel.metadata
    meta_dict = meta._asdict() if hasattr(meta, "_asdict") else dict(vars(meta))
    return Compiled(asm=dict(kernel.asm), metadata=_json_safe(meta_dict), kernel_hash=str(meta_dict.get("hash", "")),
                    remarks=seen.get("remarks", []), cache_hit=seen.get("cache_hit"))


def _forget_compiled(jit_fn) -> None:
    """Drop the kernel's in-memory compiles and binder, so the next warmup specializes for the stand-in's target.

    3.3 and newer keep both per device in `device_caches`; 3.2 keeps compiles in `cache` (per device) and one
    `binder` made for the first backend it saw."""
    if hasattr(jit_fn, "device_caches"):
        jit_fn.device_caches.clear()
        return
    if hasattr(jit_fn, "cache"):
        jit_fn.cache.clear()
    if hasattr(jit_fn, "binder"):
        jit_fn.binder = None


def _json_safe(value):
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def specialization_of(jit_fn, bound: dict[str, Any], capability: int | None = None,
                      target: tuple[str, Any, int] | None = None):
    """[(name, type, [attrs])] as Triton's binder sees this launch, e.g. ('x_ptr', '*fp16', ['tt.divisibility=16']).

    The target's backend decodes its own codes (parse_attr): "D" is divisible
    by 16 on every backend; the HIP backend's "S" is tt.pointer_range=32.
    """
    from triton.compiler import make_backend
    from triton.runtime.jit import create_function_from_signature

    gpu = gpu_target(capability, target)
    backend = make_backend(gpu)
    binder = create_function_from_signature(jit_fn.signature, jit_fn.params, backend)
    with _torch_hidden(gpu), _hip_torch_probe_kept():
        answer = binder(**bound)
    if len(answer) == 5:
        return _specialization_32(jit_fn, answer[1])
    _, specialization, _ = answer
    out = []
    for param, (ty, attr) in zip(jit_fn.params, specialization):
        out.append((param.name, str(ty), _attrs(backend, "" if attr is None else str(attr))))
    return out


# Triton 3.2's specialization codes (runtime/jit.py compute_spec_key): "D" divisible by 16, "1" equal to 1
# (compiled as a constant), "N" nothing known.
_SPEC_32 = {"D": ["tt.divisibility=16"], "1": ["equal_to_1"], "N": []}


def _specialization_32(jit_fn, sig_and_spec) -> list[tuple[str, str, list[str]]]:
    """Triton 3.2's binder answers (bound, types + codes, constexprs, values, extra): the types of the
    runtime parameters, then one code per parameter it specializes; a code not in _SPEC_32 is shown as is."""
    runtime = [p for p in jit_fn.params if not p.is_constexpr]
    types, codes = list(sig_and_spec[:len(runtime)]), list(sig_and_spec[len(runtime):])
    code_of = dict(zip([p.name for p in runtime if not p.do_not_specialize], codes))
    out, i = [], 0
    for param in jit_fn.params:
        if param.is_constexpr:
            out.append((param.name, "constexpr", []))
            continue
        code = code_of.get(param.name)
        out.append((param.name, str(types[i]), _SPEC_32.get(code, [code] if code else [])))
        i += 1
    return out


def _attrs(backend, attr: str) -> list[str]:
    """A specialization code as attributes: "D" -> ['tt.divisibility=16'] (the backend's own parse_attr)."""
    if not attr:
        return []
    try:
        parsed = backend.parse_attr(attr)
    except Exception:
        parsed = None
    if not parsed:
        return [attr]  # a code this backend does not decode: shown as is
    return [f"{name}={value}" for name, value in parsed]


# --------------------------------------------------------------------------
# Kernel objects: what @triton.jit, @triton.autotune and the interpreter give
# --------------------------------------------------------------------------


def jit_function(obj):
    """The JITFunction behind `obj` (Autotuner and Heuristics wrap it in .fn), else None.

    Under TRITON_INTERPRET=1 @triton.jit gives an InterpretedFunction; it
    comes back wrapped as an `InterpretedKernel` with the same attributes.
    """
    seen = 0
    while obj is not None and seen < 8:
        if type(obj).__name__ == "JITFunction" and hasattr(obj, "params"):
            return obj
        if type(obj).__name__ == "InterpretedFunction":
            return InterpretedKernel(obj)
        obj = getattr(obj, "fn", None)
        seen += 1
    return None


def python_function(jit_fn):
    """The plain Python function a JITFunction compiles (for its source and line numbers)."""
    return jit_fn.fn


# Option fields a launch does not set as a keyword (Triton fills them from the target and its knobs).
_INTERNAL_OPTIONS = frozenset({"arch", "backend_name", "extern_libs", "supported_fp8_dtypes",
                               "deprecated_fp8_dot_operand_dtypes", "allowed_dot_input_precisions",
                               "instrumentation_mode", "fpsan_homomorphic_casts", "warp_size", "ir_override",
                               "llvm_fn_attrs", "ptx_options"})


def backend_option_names(backend: str) -> frozenset[str]:
    """The options a launch may pass to `backend`'s compile as keywords (its CUDAOptions / HIPOptions
    fields, less those Triton fills itself); empty when the installed Triton lacks that backend."""
    try:
        if backend == "hip":
            from triton.backends.amd.compiler import HIPOptions as options
        else:
            from triton.backends.nvidia.compiler import CUDAOptions as options
    except Exception:
        return frozenset()
    return frozenset(options.__dataclass_fields__) - _INTERNAL_OPTIONS


def _is_a(obj, class_name: str) -> bool:
    """Whether obj is a triton.runtime.autotuner class of that name, or a subclass of one."""
    return any(c.__name__ == class_name and c.__module__.startswith("triton.") for c in type(obj).__mro__)


def kernel_params(jit_fn) -> list[tuple[str, bool, Any]]:
    """[(name, is_constexpr, default)] in signature order."""
    import inspect

    out = []
    for p in jit_fn.params:
        default = p._default if hasattr(p, "_default") else getattr(p, "default", inspect.Parameter.empty)
        out.append((p.name, bool(p.is_constexpr), default))
    return out


class _InterpretedParam:
    """What kernel_params reads from a JITFunction's parameter."""

    def __init__(self, p):
        import inspect

        self.name = p.name
        ann = p.annotation
        self.is_constexpr = ann is not inspect.Parameter.empty and "constexpr" in str(getattr(ann, "__name__", ann))
        self._default = p.default


class InterpretedKernel:
    """An InterpretedFunction seen through the JITFunction attributes tritonscope reads."""

    def __init__(self, interpreted):
        import inspect

        self.interpreted = interpreted
        self.fn = interpreted.fn
        self.params = [_InterpretedParam(p) for p in inspect.signature(interpreted.fn).parameters.values()]


def autotune_configs(obj) -> list[dict[str, Any]] | None:
    """The configs of a @triton.autotune kernel as {constexprs, num_warps, num_stages, options}, else None.

    `options` holds the launch options a Config sets beyond Triton's defaults (maxnreg, num_ctas > 1),
    which its launch passes on to the compile.
    """
    configs = getattr(obj, "configs", None)
    if configs is None or not _is_a(obj, "Autotuner"):
        return None
    out = []
    for cfg in configs:
        options = {k: getattr(cfg, k, None) for k in ("maxnreg", "num_ctas")}
        out.append({"constexprs": {k: v for k, v in (getattr(cfg, "kwargs", None) or {}).items()},
                    "num_warps": getattr(cfg, "num_warps", None), "num_stages": getattr(cfg, "num_stages", None),
                    "options": {k: v for k, v in options.items() if v is not None and not (k == "num_ctas" and v == 1)}})
    return out


def set_allocator() -> None:
    """Device-side tensor descriptors (tl.make_tensor_descriptor) need scratch memory (3.4+)."""
    import torch
    import triton

    if hasattr(triton, "set_allocator"):
        triton.set_allocator(lambda size, alignment, stream: torch.empty(size, device="cuda", dtype=torch.int8))


def check_interpreter_numpy() -> None:
    """Triton 3.6's interpreter breaks on numpy >= 2.4 (a TypeError deep inside)."""
    import numpy

    from tritonscope.core.errors import TritonscopeError

    np_version = tuple(int(p) for p in numpy.__version__.split(".")[:2])
    series = triton_series()
    if series is not None and series < (3, 7) and np_version >= (2, 4):
        raise TritonscopeError(
            f"Triton {triton_version()}'s interpreter needs numpy < 2.4; numpy {numpy.__version__} is installed.",
            hint="pip install 'numpy<2.4' (or a newer Triton).")


def is_out_of_resources(exc: BaseException) -> bool:
    return type(exc).__name__ == "OutOfResources"


def compilation_error_info(exc: BaseException) -> tuple[str, int | None, str | None] | None:
    """(message, line number, source line) for Triton's CompilationError."""
    if type(exc).__name__ not in ("CompilationError", "CompileTimeAssertionFailure", "UnsupportedLanguageConstruct"):
        return None
    lineno = None
    node = getattr(exc, "node", None)
    src = getattr(exc, "src", None)
    if node is not None and hasattr(node, "lineno"):
        lineno = node.lineno
    line_text = None
    if src and lineno:
        lines = src.splitlines() if isinstance(src, str) else []
        if 0 < lineno <= len(lines):
            line_text = lines[lineno - 1].strip()
    message = getattr(exc, "error_message", None) or ""
    if not message:
        cause = exc.__cause__
        message = f"{type(cause).__name__}: {cause}" if cause else str(exc).strip().splitlines()[-1]
    return message, lineno, line_text


# --------------------------------------------------------------------------
# NVIDIA tools bundled with the wheel
# --------------------------------------------------------------------------
