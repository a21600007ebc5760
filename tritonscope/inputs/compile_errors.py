"""Triton's compile exception -> one typed error that says where in the user's kernel it failed.

Triton raises many types.  This names what it can: out of resources
(OutOfResourcesError), an error in the kernel's source, with its file line
(CompileError), a parameter that does not fit its use there, a string or a
dtype where a tensor is used, say (KernelSpecError), and else a failure inside
Triton's own pipeline (CompileError, marked data["in_pipeline"]: analyses/
failure.py explains it).  The pipeline's compile and the recompile of a
found kernel both use it.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

from tritonscope import triton_api
from tritonscope.core.errors import CompileError, KernelSpecError, OutOfResourcesError
from tritonscope.inputs.kernels import DescArg, TensorArg, load_for_spec, parse_arg_value


def compile_error(e: Exception, spec, jit_fn: Any = None) -> Exception:
    """Triton's exception as a typed error; `jit_fn` (the kernel, when the caller holds it) numbers its lines.
    One from inside Triton's pipeline (not the kernel's source) is marked data["in_pipeline"]."""
    if triton_api.is_out_of_resources(e):
        return OutOfResourcesError(str(e), hint="Use smaller blocks, fewer stages, or a bigger target.")
    info = triton_api.compilation_error_info(e)
    if info:
        message, lineno, line_text = info
        where = ""
        if lineno:
            src_first = _first_line(spec, jit_fn)
            file_line = (src_first + lineno - 1) if src_first else lineno
            where = f" at {Path(spec.file).name}:{file_line}"
        misfit = _misfit_parameter(spec, message, line_text)
        if misfit:
            return KernelSpecError(
                f"{misfit} does not fit its use in {spec.kernel}{where}: {message}",
                context=line_text,
                hint="Give the parameter what the kernel uses there: a dtype (-c NAME=bf16), a string "
                     "(-c NAME=mean), a tensor (--arg NAME=fp16[64,64]) or a tensor descriptor "
                     "(--arg NAME='desc(fp16[4096,4096],[128,64])').")
        return CompileError(
            f"Triton could not compile {spec.kernel}{where}: {message}",
            context=line_text,
            hint="Fix the kernel source (or the constexprs it was given) and run again.",
        )
    text = str(e).strip() or type(e).__name__
    first = text.splitlines()[0]
    # in_pipeline: Triton's own passes or code failed, not the kernel's source (analyses/failure.py explains it)
    return CompileError(
        f"Triton failed while compiling {spec.kernel}: {type(e).__name__}: {first}",
        context="\n".join(text.splitlines()[1:12]) or None,
        hint="Rerun with --debug for the full traceback.",
        data={"in_pipeline": True, **_tuned(spec)},
    )


def _tuned(spec) -> dict:
    """For a config of an @triton.autotune kernel: {"tuned": the constexprs (less those its heuristics compute),
    num_warps and num_stages it compiled with}, so that a changed launch (fewer stages, another num_warps) can be
    compiled as the user's own config (a launch refuses -s/-w beside the tuner's config)."""
    from tritonscope.core.model import constexpr_words

    if not getattr(spec, "autotune", None):
        return {}
    heur = set(getattr(spec, "heuristics", ()) or ())
    return {"tuned": {"index": spec.autotune.get("index"),
                      "constexprs": {k: constexpr_words(v) for k, v in spec.constexprs.items() if k not in heur},
                      "num_warps": spec.num_warps, "num_stages": spec.num_stages}}


# 'str' object has no attribute 'scalar'     'tensor' object has no attribute 'load'
_MISUSE_RE = re.compile(r"object has no attribute|object is not callable|unsupported operand|must be|expected|"
                        r"not a (?:dtype|tensor)|cannot|invalid", re.I)


def _misfit_parameter(spec, message: str, line_text: str | None) -> str | None:
    """'compute_type='mean' (a string)': the one string, dtype, tensor or descriptor parameter the failing
    source line uses, when Triton's error says a value did not fit there; else None (a plain compile error)."""
    if not line_text or not _MISUSE_RE.search(message):
        return None
    used = set(re.findall(r"[A-Za-z_]\w*", line_text))
    found = []
    for name, value in spec.constexprs.items():
        if name in used and isinstance(value, str):
            found.append(f"{name}={value}" + (" (a dtype)" if value.startswith("tl.") else f" ({value!r}, a string)"))
    # a tensor is named only when Triton says a tensor was used as something else (a_desc.load on a pointer):
    # a plain tensor argument sits on most failing lines without being the cause
    tensor_misused = "'tensor' object" in message
    for name, text in spec.args.items():
        value = parse_arg_value(text)
        if name in used and (isinstance(value, DescArg) or (isinstance(value, TensorArg) and tensor_misused)):
            found.append(f"--arg {name}={text} (a {'tensor descriptor' if isinstance(value, DescArg) else 'tensor'})")
    return found[0] if len(found) == 1 else None


def _first_line(spec, jit_fn: Any = None) -> int | None:
    """File line of the `def`: Triton numbers error lines from there (decorators are cut).  The kernel is
    `jit_fn` when the caller holds it (a Python caller's own function: its file is never run again)."""
    try:
        lines, first = inspect.getsourcelines(triton_api.python_function(jit_fn or load_for_spec(spec)))
    except Exception:
        return None
    offset = next((i for i, text in enumerate(lines) if re.match(r"\s*def\s", text)), 0)
    return first + offset
