"""Find a kernel and describe one launch of it: target string -> KernelSpec.

A target is a built-in sample name ("matmul") or "path/to/file.py:kernel".
A kernel file needs nothing from tritonscope.  It may declare example
launches in a plain module-level dict, which is how the samples work:

    EXAMPLES = {
        "matmul_kernel": {
            "shape": (32, 32, 32),          # default problem shape
            "dtype": "fp16",                # default input dtype
            "constexprs": {"BLOCK": 16},
            "block": ["BLOCK"],             # what --block N sets
            "params": {},                   # launch-only knobs, settable with -c
            "num_warps": 4, "num_stages": 3,
            "launch": launch_fn,            # (shape, dtype, values) -> dict
        },
    }

`launch_fn` returns {"args": {name: value}, "grid": (x, y, z), "check":
{out_arg: fn(**inputs)}, "flops": n}.  Argument values use the same spelling
as the CLI's --arg: "fp16[32,32]" is a tensor, "fp16[32,32].T" a transposed
view, "*fp16" a bare 16-byte-aligned pointer, or a Python int/float/bool/None.

Loading a file executes it (it must import triton to define a kernel); this
module itself never imports triton or torch.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from tritonscope.errors import KernelSpecError, NotFoundError, UsageError, close_matches
from tritonscope.model import ARCH_ALIASES, ARCHES, KernelSpec

SAMPLES_DIR = Path(__file__).resolve().parent.parent / "samples"
if not SAMPLES_DIR.is_dir():  # installed (non-editable): samples ship as a subpackage
    SAMPLES_DIR = Path(__file__).resolve().parent / "samples"

# tritonscope dtype name -> triton.language attribute (and torch dtype) name.
DTYPES: dict[str, str] = {
    "fp8e4nv": "float8e4nv",
    "fp8e5": "float8e5",
    "fp16": "float16",
    "bf16": "bfloat16",
    "fp32": "float32",
    "fp64": "float64",
    "i1": "int1",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
}
DTYPE_ALIASES = {
    "float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float32": "fp32", "float": "fp32",
    "float64": "fp64", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "bool": "i1", "f16": "fp16", "f32": "fp32", "f64": "fp64",
}


def canonical_dtype(name: str) -> str:
    key = name.strip().lower()
    key = DTYPE_ALIASES.get(key, key)
    if key not in DTYPES:
        raise UsageError(
            f"Unknown dtype {name!r}.{close_matches(key, DTYPES)}",
            hint=f"Use one of: {', '.join(DTYPES)}.",
        )
    return key


def canonical_arch(name: str) -> str:
    key = name.strip().lower().replace("-", "_")
    if re.fullmatch(r"\d+", key):
        key = f"sm_{key}"
    key = ARCH_ALIASES.get(key, key)
    if key not in ARCHES:
        raise NotFoundError(
            f"Unsupported arch {name!r}.{close_matches(key, list(ARCHES) + list(ARCH_ALIASES))}",
            hint=f"Use one of: {', '.join(sorted(set(ARCHES) | set(ARCH_ALIASES)))}.",
        )
    return key


# --------------------------------------------------------------------------
# Argument descriptions
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class TensorArg:
    """A tensor argument: its dtype, logical shape, and whether it is a .T view."""

    dtype: str
    shape: tuple[int, ...] | None   # None for a bare pointer
    transposed: bool = False

    def __str__(self) -> str:
        if self.shape is None:
            return f"*{self.dtype}"
        return f"{self.dtype}[{','.join(map(str, self.shape))}]" + (".T" if self.transposed else "")


# fp16[32,32]   fp16[32x32].T   *fp32
_TENSOR_RE = re.compile(r"^\s*(?:\*(?P<ptr>\w+)|(?P<dtype>\w+)\[(?P<dims>[\d,x\s]*)\](?P<t>\.T)?)\s*$")


def parse_arg_value(text: Any) -> Any:
    """'fp16[32,32]' -> TensorArg; '32' -> 32; 'none' -> None; ints stay ints."""
    if not isinstance(text, str):
        return text
    m = _TENSOR_RE.match(text)
    if m:
        if m["ptr"]:
            return TensorArg(canonical_dtype(m["ptr"]), None)
        dims = tuple(int(d) for d in re.split(r"[,x\s]+", m["dims"].strip()) if d)
        return TensorArg(canonical_dtype(m["dtype"]), dims, bool(m["t"]))
    return parse_scalar(text)


def parse_scalar(text: str) -> Any:
    """'16' -> 16, '0.5' -> 0.5, 'true' -> True, 'none' -> None, 'fp16' -> 'fp16'."""
    if not isinstance(text, str):  # already a value (from Python callers)
        return text
    low = text.strip().lower()
    if low in ("none", "null"):
        return None
    if low in ("true", "false"):
        return low == "true"
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        return text.strip()


def parse_assignments(items: list[str] | None, what: str) -> dict[str, str]:
    """['BLOCK=16', 'X=1'] -> {'BLOCK': '16', 'X': '1'} (values still text)."""
    out: dict[str, str] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip().isidentifier() or not value.strip():
            raise UsageError(
                f"Bad {what} {item!r}: expected NAME=VALUE.",
                hint="For example: -c BLOCK=16" if what == "constexpr" else "For example: --arg a_ptr=fp16[32,32]",
            )
        out[name.strip()] = value.strip()
    return out


def parse_shape(text: str) -> tuple[int, ...]:
    try:
        dims = tuple(int(d) for d in re.split(r"[x,]", text.lower()) if d)
    except ValueError:
        dims = ()
    if not dims or any(d <= 0 for d in dims):
        raise UsageError(f"Bad shape {text!r}.", hint="Write it like 32x32x32 (M x N x K for matmuls).")
    return dims


# --------------------------------------------------------------------------
# Finding the kernel
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    name: str
    file: Path
    kernel: str
    description: str


def list_samples() -> list[Sample]:
    """Samples are the files in samples/; each declares one kernel in EXAMPLES."""
    out = []
    for path in sorted(SAMPLES_DIR.glob("*.py")):
        if path.name.startswith("_"):
            continue
        tree = ast.parse(path.read_text())
        doc = ast.get_docstring(tree) or ""
        kernel = _declared_kernel(tree)
        if kernel:
            out.append(Sample(path.stem, path, kernel, doc.strip().splitlines()[0] if doc else ""))
    return out


def _declared_kernel(tree: ast.Module) -> str | None:
    """The first key of a module-level EXAMPLES dict, read without executing."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "EXAMPLES" for t in node.targets):
            if isinstance(node.value, ast.Dict) and node.value.keys:
                key = node.value.keys[0]
                if isinstance(key, ast.Constant):
                    return key.value
    return None


def resolve_target(target: str) -> tuple[Path, str | None]:
    """'matmul' -> (samples/matmul.py, 'matmul_kernel'); 'f.py:k' -> (f.py, 'k')."""
    if ":" in target and not re.match(r"^[A-Za-z]:[\\/]", target):
        path_text, _, kernel = target.rpartition(":")
    elif target.endswith(".py"):
        path_text, kernel = target, ""
    else:
        samples = {s.name: s for s in list_samples()}
        if target in samples:
            return samples[target].file, samples[target].kernel
        raise NotFoundError(
            f"Unknown sample {target!r}.{close_matches(target, samples)}",
            hint="List the samples with `tritonscope samples`, or name a kernel as path/to/file.py:kernel_name.",
        )
    path = Path(path_text).expanduser()
    if not path.is_file():
        raise NotFoundError(
            f"No such file: {path_text}",
            hint="Check the path; a user kernel is written as path/to/file.py:kernel_name.",
        )
    return path.resolve(), kernel or None


def load_module(path: Path):
    """Execute a kernel file as a module (Triton needs it importable for getsource)."""
    source = path.read_text()
    try:
        compile(source, str(path), "exec")
    except SyntaxError as e:
        raise KernelSpecError(
            f"Syntax error in {path.name}, line {e.lineno}: {e.msg}",
            context=(e.text or "").rstrip(),
            hint="Fix the Python file and run again.",
        ) from e
    name = f"_tritonscope_user_{abs(hash(str(path)))}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # the user's module raised while importing
        del sys.modules[name]
        raise KernelSpecError(
            f"Importing {path.name} failed: {type(e).__name__}: {e}",
            hint="The file must import cleanly; run `python " + str(path) + "` to see the error.",
        ) from e
    return module


def find_kernel(module, path: Path, kernel: str | None):
    """The JITFunction object named `kernel` (unwrapping autotune/heuristics)."""
    jit_names = [n for n, v in vars(module).items() if _jit_function(v) is not None]
    if kernel is None:
        if len(jit_names) == 1:
            kernel = jit_names[0]
        else:
            raise NotFoundError(
                f"{path.name} defines {len(jit_names)} @triton.jit kernels; name one.",
                hint=f"Write {path.name}:KERNEL with KERNEL one of: {', '.join(jit_names) or '(none)'}.",
            )
    if not hasattr(module, kernel):
        raise NotFoundError(
            f"No kernel named {kernel!r} in {path.name}.{close_matches(kernel, jit_names)}",
            hint=f"Kernels in this file: {', '.join(jit_names) or '(none)'}.",
        )
    obj = getattr(module, kernel)
    fn = _jit_function(obj)
    if fn is None:
        raise KernelSpecError(
            f"{kernel!r} in {path.name} is not a @triton.jit function (it is a {type(obj).__name__}).",
            hint="Decorate it with @triton.jit, or name a kernel that is.",
        )
    return kernel, obj, fn


def _jit_function(obj):
    """Autotuner and Heuristics wrap the JITFunction in .fn; follow the chain."""
    seen = 0
    while obj is not None and seen < 8:
        if type(obj).__name__ == "JITFunction" and hasattr(obj, "params"):
            return obj
        obj = getattr(obj, "fn", None)
        seen += 1
    return None


def kernel_params(fn) -> list[tuple[str, bool, Any]]:
    """[(name, is_constexpr, default)] in signature order."""
    out = []
    for p in fn.params:
        default = p._default if hasattr(p, "_default") else p.default
        out.append((p.name, bool(p.is_constexpr), default))
    return out


# --------------------------------------------------------------------------
# Building the spec
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """What the user asked for on the command line (all optional)."""

    target: str
    constexprs: dict[str, str] = None  # type: ignore[assignment]
    args: dict[str, str] = None        # type: ignore[assignment]
    block: int | None = None
    num_warps: int | None = None
    num_stages: int | None = None
    arch: str | None = None
    shape: str | None = None
    dtype: str | None = None


@dataclass(frozen=True)
class Loaded:
    spec: KernelSpec
    jit_fn: Any           # the JITFunction
    obj: Any              # what the file defines (may be an Autotuner)
    example: dict | None  # the EXAMPLES entry, if any
    launch: dict | None   # what the example's launch function returned


def build_spec(req: Request, default_arch: str) -> Loaded:
    path, kernel = resolve_target(req.target)
    module = load_module(path)
    kernel, obj, fn = find_kernel(module, path, kernel)
    examples = getattr(module, "EXAMPLES", None)
    example = examples.get(kernel) if isinstance(examples, dict) else None

    params = kernel_params(fn)
    names = [p[0] for p in params]
    constexpr_names = [p[0] for p in params if p[1]]
    launch_params = dict((example or {}).get("params", {}))

    # constexprs: declared defaults < signature defaults < --block < -c
    values: dict[str, Any] = {}
    for name, is_const, default in params:
        if is_const and default is not inspect.Parameter.empty:
            values[name] = default
    values.update((example or {}).get("constexprs", {}))
    values.update(launch_params)
    if req.block is not None:
        block_names = (example or {}).get("block") or [n for n in constexpr_names if "BLOCK" in n.upper()]
        if not block_names:
            raise UsageError(
                f"--block needs a BLOCK constexpr, and {kernel} has none.",
                hint=f"Set constexprs with -c NAME=VALUE; this kernel's are: {', '.join(constexpr_names) or '(none)'}.",
            )
        for n in block_names:
            values[n] = req.block
    for name, text in (req.constexprs or {}).items():
        if name not in constexpr_names and name not in launch_params:
            hint_names = constexpr_names + list(launch_params)
            if name in names:
                raise KernelSpecError(
                    f"{name!r} is a runtime argument of {kernel}, not a constexpr.",
                    hint=f"Set it with --arg {name}=VALUE.",
                )
            raise KernelSpecError(
                f"{kernel} has no constexpr named {name!r}.{close_matches(name, hint_names)}",
                hint=f"Its constexprs are: {', '.join(hint_names) or '(none)'}.",
            )
        values[name] = parse_scalar(text)

    missing = [n for n in constexpr_names if n not in values]
    if missing:
        raise KernelSpecError(
            f"Missing constexpr{'s' if len(missing) > 1 else ''} for {kernel}: {', '.join(missing)}.",
            hint="Set each with -c NAME=VALUE, e.g. " + " ".join(f"-c {n}=16" for n in missing) + ".",
        )
    for name in constexpr_names:
        value = values[name]
        if isinstance(value, str) and not _looks_like_dtype(value):
            raise KernelSpecError(
                f"Constexpr {name}={value!r} is not a number, bool or dtype.",
                hint=f"Give it a value like -c {name}=16.",
            )

    shape = parse_shape(req.shape) if req.shape else tuple((example or {}).get("shape") or ()) or None
    dtype = canonical_dtype(req.dtype) if req.dtype else (example or {}).get("dtype")

    launch = None
    if example and callable(example.get("launch")):
        try:
            launch = example["launch"](shape, dtype, dict(values))
        except Exception as e:
            raise KernelSpecError(
                f"The example launch for {kernel} rejected this config: {type(e).__name__}: {e}",
                hint="Check the shape, dtype and constexprs against the kernel's EXAMPLES entry.",
            ) from e

    # runtime args: example launch < --arg
    args: dict[str, Any] = {}
    if launch:
        args.update({k: parse_arg_value(v) for k, v in launch.get("args", {}).items()})
    for name, text in (req.args or {}).items():
        if name not in names or name in constexpr_names:
            raise KernelSpecError(
                f"{kernel} has no runtime argument named {name!r}.{close_matches(name, names)}",
                hint=f"Its runtime arguments are: {', '.join(n for n in names if n not in constexpr_names)}.",
            )
        args[name] = parse_arg_value(text)
    runtime = [(n, d) for n, c, d in params if not c]
    for name, default in runtime:
        if name not in args and default is not inspect.Parameter.empty:
            args[name] = default
    missing = [n for n, _ in runtime if n not in args]
    if missing:
        raise KernelSpecError(
            f"{kernel} needs a description of argument{'s' if len(missing) > 1 else ''}: {', '.join(missing)}.",
            hint="Describe each with --arg, e.g. "
            + " ".join(f"--arg {n}={'*fp16' if 'ptr' in n else '32'}" for n in missing[:3])
            + " (a tensor is *DTYPE or DTYPE[dims]; ints and floats as numbers), "
            "or declare EXAMPLES in the file (see README).",
        )
    ordered_args = {n: args[n] for n, _ in runtime}

    num_warps = req.num_warps or (example or {}).get("num_warps", 4)
    num_stages = req.num_stages if req.num_stages is not None else (example or {}).get("num_stages", 3)
    if num_warps not in (1, 2, 4, 8, 16, 32):
        raise UsageError(f"--num-warps {num_warps} is not a power of two from 1 to 32.", hint="Use 1, 2, 4, 8, 16 or 32.")
    if num_stages < 1:
        raise UsageError(f"--num-stages {num_stages} must be at least 1.", hint="Use 1 (no pipelining) or more.")

    spec = KernelSpec(
        target=req.target,
        kernel=kernel,
        file=str(path),
        args={k: (str(v) if isinstance(v, TensorArg) else v) for k, v in ordered_args.items()},
        constexprs={n: values[n] for n in constexpr_names},
        num_warps=num_warps,
        num_stages=num_stages,
        arch=canonical_arch(req.arch) if req.arch else default_arch,
        shape=shape,
        dtype=dtype,
        grid=tuple(launch["grid"]) if launch and launch.get("grid") else None,
        options={k: v for k, v in values.items() if k in launch_params},
    )
    return Loaded(spec, fn, obj, example, launch)


def _looks_like_dtype(value: str) -> bool:
    return value.lower() in DTYPES or value.lower() in DTYPE_ALIASES


def load_for_spec(spec: KernelSpec) -> tuple[Any, Callable | None]:
    """Re-find the JITFunction for a spec (e.g. in a worker process)."""
    path = Path(spec.file)
    if not path.is_file():
        raise NotFoundError(f"No such file: {spec.file}", hint="The kernel file has moved; recompile from the new path.")
    module = load_module(path)
    _, _, fn = find_kernel(module, path, spec.kernel)
    return fn
