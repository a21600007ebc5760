"""Find a kernel and describe one launch of it: target string -> KernelSpec.

A target is a built-in sample name ("matmul") or "path/to/file.py:kernel".
A kernel file needs nothing from tritonscope.  It may declare example
launches in a plain module-level dict, which is how the samples work:

    EXAMPLES = {
        "matmul_kernel": {
            "shape": (32, 32, 32),          # default problem shape
            "dtype": "fp16",                # default input dtype
            "constexprs": {"BLOCK": 16},
            "constexprs_for": fn,           # optional: (shape, dtype) -> constexprs that follow the
                                            # shape; after "constexprs", before --block and -c
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

from tritonscope import triton_api
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
    # A storage offset in elements ("fp16[32,32]+2"): the view starts that far into its
    # allocation, so its address is not 16-byte aligned and Triton drops tt.divisibility.
    offset: int = 0

    def __str__(self) -> str:
        tail = f"+{self.offset}" if self.offset else ""
        if self.shape is None:
            return f"*{self.dtype}{tail}"
        return f"{self.dtype}[{','.join(map(str, self.shape))}]" + (".T" if self.transposed else "") + tail


# fp16[32,32]   fp16[32x32].T   *fp32   fp16[32,32]+2   *fp16+8   (not fp16[32,x]: every dim a number)
_TENSOR_RE = re.compile(r"^\s*(?:\*(?P<ptr>\w+)|(?P<dtype>\w+)\[(?P<dims>(?:\s*\d+(?:\s*[,x]\s*\d+)*)?\s*)\]"
                        r"(?P<t>\.T)?)(?:\s*\+\s*(?P<off>\d+))?\s*$")


def parse_arg_value(text: Any) -> Any:
    """'fp16[32,32]' -> TensorArg; '32' -> 32; 'none' -> None; ints stay ints."""
    if not isinstance(text, str):
        return text
    m = _TENSOR_RE.match(text)
    if m:
        offset = int(m["off"] or 0)
        if m["ptr"]:
            return TensorArg(canonical_dtype(m["ptr"]), None, offset=offset)
        dims = tuple(int(d) for d in re.split(r"[,x\s]+", m["dims"].strip()) if d)
        return TensorArg(canonical_dtype(m["dtype"]), dims, bool(m["t"]), offset)
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
    """['BLOCK=16', 'X=1'] -> {'BLOCK': '16', 'X': '1'} (values still text).

    A name given twice is refused (both values named), not silently the last.
    """
    out: dict[str, str] = {}
    option = "-c" if what == "constexpr" else "--arg"
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip().isidentifier() or not value.strip():
            raise UsageError(
                f"Bad {what} {item!r}: expected NAME=VALUE.",
                hint="For example: -c BLOCK=16" if what == "constexpr" else "For example: --arg a_ptr=fp16[32,32]",
            )
        name = name.strip()
        if name in out:
            raise UsageError(
                f"{option} {name} is given twice: {name}={out[name]} and {name}={value.strip()}.",
                hint=f"Give each {what} once; to compare values, use `tritonscope diff --a {name}={out[name]} "
                     f"--b {name}={value.strip()}` or `tritonscope sweep -c {name}={out[name]},{value.strip()}`.",
            )
        out[name] = value.strip()
    return out


def check_arg_text(name: str, text: Any) -> Any:
    """An --arg value parsed: a tensor (DTYPE[dims], *DTYPE) or a scalar (number, bool, none); else UsageError.

    'fp16[32,x]' and 'banana' are refused here, before Triton would end in a TypeError.
    """
    value = parse_arg_value(text)
    if isinstance(value, TensorArg) or value is None or isinstance(value, (bool, int, float)):
        return value
    looks_tensor = isinstance(text, str) and ("[" in text or text.strip().startswith("*"))
    raise UsageError(
        f"--arg {name}={text}: " + ("not a tensor: every dim must be a whole number."
                                    if looks_tensor else "not a tensor or a number."),
        hint="A tensor is DTYPE[dims] (fp16[32,32], fp16[32,32].T, fp16[32,32]+2) or *DTYPE (*fp32); "
             "a scalar is a number, true/false or none.",
    )


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
    jit_names = [n for n, v in vars(module).items() if triton_api.jit_function(v) is not None]
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
    fn = triton_api.jit_function(obj)
    if fn is None:
        raise KernelSpecError(
            f"{kernel!r} in {path.name} is not a @triton.jit function (it is a {type(obj).__name__}).",
            hint="Decorate it with @triton.jit, or name a kernel that is.",
        )
    return kernel, obj, fn


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
    # Triton launch options a real launch can pass: maxnreg, num_ctas, enable_fp_fusion.
    options: dict[str, Any] = None     # type: ignore[assignment]


# The launch options (beyond num_warps/num_stages) that go to Triton's compile: KernelSpec.options
# also holds an example's launch-only params, which do not.
TRITON_OPTIONS = ("maxnreg", "num_ctas", "enable_fp_fusion")


def set_options(options: dict[str, Any] | None) -> dict[str, Any]:
    """The Triton launch options (maxnreg, num_ctas, enable_fp_fusion) among `options` that are set."""
    return {k: v for k, v in (options or {}).items() if k in TRITON_OPTIONS and v is not None}


def spec_options(spec) -> dict[str, Any]:
    """The spec's Triton launch options that are set (an example's launch-only params are not among them)."""
    return set_options(spec.options)


def option_words(options: dict[str, Any] | None) -> str:
    """'maxnreg=32 num_ctas=2 enable_fp_fusion=False': set launch options as a launch passes them ('' if none).

    The one spelling of launch options in labels, table headers and notes.
    """
    return " ".join(f"{k}={v}" for k, v in set_options(options).items())


def config_label(spec) -> str:
    """'BLOCK=16 w4 s3 sm_90a fp16 maxnreg=64': the config and the launch options it compiles with."""
    return f"{spec.label()} {option_words(spec.options)}".strip()


def check_launch_options(options: dict[str, Any] | None) -> dict[str, Any]:
    """{'maxnreg': 32, ...} checked: maxnreg 16..255 registers, num_ctas a power of two up to 16."""
    out = {k: v for k, v in (options or {}).items() if v is not None}
    maxnreg = out.get("maxnreg")
    if maxnreg is not None and not (isinstance(maxnreg, int) and 16 <= maxnreg <= 255):
        raise UsageError(f"--maxnreg {maxnreg}: a register limit per thread from 16 to 255.",
                         hint="e.g. --maxnreg 128 (ptxas rounds it to what the target allows).")
    ctas = out.get("num_ctas")
    if ctas is not None and ctas not in (1, 2, 4, 8, 16):
        raise UsageError(f"--num-ctas {ctas} is not a power of two from 1 to 16.",
                         hint="num_ctas > 1 makes a thread-block cluster (sm_90 and newer).")
    return out


WARPS = (1, 2, 4, 8, 16, 32)


def names_set_by_block(example: dict | None, constexpr_names: list[str]) -> list[str]:
    """The constexprs --block N sets: the example's "block" list, else every constexpr named like BLOCK."""
    return list((example or {}).get("block") or [n for n in constexpr_names if "BLOCK" in n.upper()])


def check_request(req: Request) -> Request:
    """Every value of a Request checked before any work: one message, exit 2 (UsageError), or 3 for an unknown arch.

    `-w 0`, `--arch ''`, `--block 0`, `--shape 0x4` or an --arg that is no
    tensor or number are refused here rather than replaced by a default or
    left for Triton to trip over.
    """
    if req.num_warps is not None and req.num_warps not in WARPS:
        raise UsageError(f"--num-warps {req.num_warps} is not a power of two from 1 to 32.",
                         hint="Use 1, 2, 4, 8, 16 or 32.")
    if req.num_stages is not None and req.num_stages < 1:
        raise UsageError(f"--num-stages {req.num_stages} must be at least 1.", hint="Use 1 (no pipelining) or more.")
    if req.block is not None and req.block < 1:
        raise UsageError(f"--block {req.block}: a tile size is a positive whole number.",
                         hint="e.g. --block 16 (a power of two: tl.arange needs one).")
    if req.arch is not None:
        if not req.arch.strip():
            raise UsageError("--arch is empty.", hint=f"Name a target: {', '.join(ARCHES)}; "
                                                      "or leave --arch out for the local GPU's (else sm_90a).")
        canonical_arch(req.arch)
    if req.shape is not None:
        parse_shape(req.shape)
    if req.dtype is not None:
        canonical_dtype(req.dtype)
    for name, text in (req.args or {}).items():
        check_arg_text(name, text)
    return req


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
    from tritonscope.errors import OutOfResourcesError

    spec = loaded.spec
    if spec.num_stages > MAX_STAGES:
        raise UsageError(
            f"--num-stages {spec.num_stages} is far above what a loop can use: Triton's pipeliner keeps a copy of "
            f"each loop load per stage, and past {MAX_STAGES} stages a compile can run for many minutes.",
            hint=f"Use {MAX_STAGES} stages or fewer (2-5 is usual), or give `compile --timeout SECONDS` "
                 "to try it anyway with a time limit.")
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
    threads = spec.num_warps * 32
    per_thread = elements // threads
    if per_thread > MAX_TILE_REGISTERS:
        tile = "x".join(map(str, dims))
        raise OutOfResourcesError(
            f"{spec.kernel} ({spec.label()}): its {tile} tile is about {per_thread:,} registers per thread "
            f"({elements:,} values over {threads} threads; a thread has at most 255), so ptxas would spill "
            f"for many minutes. Not compiled.",
            hint="Use a smaller block (or more warps), or give `compile --timeout SECONDS` to try it anyway "
                 "with a time limit.")


def _calls_dot(jit_fn) -> bool:
    """Whether the kernel's own source calls dot() (tl.dot, tl.dot_scaled): its tile is an M x N accumulator."""
    try:
        source = inspect.getsource(triton_api.python_function(jit_fn))
    except (OSError, TypeError):
        return False
    return bool(re.search(r"\bdot(?:_scaled)?\s*\(", source))


@dataclass(frozen=True)
class Loaded:
    spec: KernelSpec
    jit_fn: Any           # the JITFunction
    obj: Any              # what the file defines (may be an Autotuner)
    example: dict | None  # the EXAMPLES entry, if any
    launch: dict | None   # what the example's launch function returned


def build_spec(req: Request, default_arch: str, *, kernel_object: Any = None) -> Loaded:
    check_request(req)
    if kernel_object is not None:  # the Python API hands over the kernel itself: run no file
        path, module, kernel, obj, fn = held_kernel(kernel_object)
    else:
        path, kernel = resolve_target(req.target)
        module = load_module(path)
        kernel, obj, fn = find_kernel(module, path, kernel)
    examples = getattr(module, "EXAMPLES", None)
    example = examples.get(kernel) if isinstance(examples, dict) else None

    params = triton_api.kernel_params(fn)
    names = [p[0] for p in params]
    constexpr_names = [p[0] for p in params if p[1]]
    launch_params = dict((example or {}).get("params", {}))

    # constexprs: declared defaults < signature defaults < --block < -c
    values: dict[str, Any] = {}
    for name, is_const, default in params:
        if is_const and default is not inspect.Parameter.empty:
            values[name] = default
    values.update((example or {}).get("constexprs", {}))
    shape = parse_shape(req.shape) if req.shape else tuple((example or {}).get("shape") or ()) or None
    dtype = canonical_dtype(req.dtype) if req.dtype else (example or {}).get("dtype")
    sized = (example or {}).get("constexprs_for")
    if callable(sized) and shape:  # constexprs that follow the shape (softmax: a BLOCK that covers the row)
        try:
            values.update(sized(shape, dtype))
        except Exception as e:
            raise KernelSpecError(
                f"The example's constexprs_for for {kernel} rejected shape {'x'.join(map(str, shape))}: "
                f"{type(e).__name__}: {e}",
                hint="Check the shape against the kernel's EXAMPLES entry.") from e
    values.update(launch_params)
    if req.block is not None:
        block_names = names_set_by_block(example, constexpr_names)
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
        args[name] = check_arg_text(name, text)
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

    num_warps = req.num_warps if req.num_warps is not None else (example or {}).get("num_warps", 4)
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
        options={**{k: v for k, v in values.items() if k in launch_params}, **check_launch_options(req.options)},
    )
    return Loaded(spec, fn, obj, example, launch)


# (file, kernel name) -> the JITFunction a Python caller handed over, so that
# load_for_spec finds it again instead of executing the caller's file (a
# script's __main__, a notebook cell that is no file at all).
_HELD: dict[tuple[str, str], Any] = {}


def held_kernel(obj) -> tuple[Path, Any, str, Any, Any]:
    """(file, module namespace, name, obj, JITFunction) for a kernel object the caller holds.

    The module namespace is the function's globals, so an EXAMPLES dict in the
    caller's file or notebook applies as it does to a file named on the CLI.
    """
    fn = triton_api.jit_function(obj)
    if fn is None:
        raise KernelSpecError(
            f"{getattr(obj, '__name__', type(obj).__name__)!r} is not a @triton.jit function "
            f"(it is a {type(obj).__name__}).",
            hint="Pass the @triton.jit function itself, a sample name, or 'path/to/file.py:kernel'.")
    py = triton_api.python_function(fn)
    code = getattr(py, "__code__", None)
    path = Path(code.co_filename if code else inspect.getsourcefile(py) or "<unknown>")
    if path.is_file():
        path = path.resolve()
    namespace = type(sys)("_tritonscope_held")
    namespace.__dict__.update(getattr(py, "__globals__", {}))
    _HELD[(str(path), py.__name__)] = fn
    return path, namespace, py.__name__, obj, fn


def _looks_like_dtype(value: str) -> bool:
    return value.lower() in DTYPES or value.lower() in DTYPE_ALIASES


def load_for_spec(spec: KernelSpec) -> tuple[Any, Callable | None]:
    """Re-find the JITFunction for a spec (e.g. in a worker process)."""
    if (spec.file, spec.kernel) in _HELD:
        return _HELD[(spec.file, spec.kernel)]
    path = Path(spec.file)
    if not path.is_file():
        raise NotFoundError(f"No such file: {spec.file}", hint="The kernel file has moved; recompile from the new path.")
    module = load_module(path)
    _, _, fn = find_kernel(module, path, spec.kernel)
    return fn
