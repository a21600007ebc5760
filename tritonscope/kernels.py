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
import contextlib
import importlib
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


@dataclass(frozen=True)
class DescArg:
    """A host-side tensor descriptor (triton.tools.tensor_descriptor.TensorDescriptor): what TMA loads through.

    Triton specializes it by dtype and block shape alone (`tensordesc<fp16[128, 64]>`); the tensor's
    shape and strides are runtime values.  `shape` is None when the user gave Triton's own spelling,
    which names no tensor shape: the stand-in then describes a tensor of one block.
    """

    dtype: str
    block: tuple[int, ...]
    shape: tuple[int, ...] | None = None

    def __str__(self) -> str:
        block = ",".join(map(str, self.block))
        if self.shape is None:
            return f"tensordesc<{self.dtype}[{block}]>"
        return f"desc({self.dtype}[{','.join(map(str, self.shape))}],[{block}])"


# tensordesc<fp16[128,64]>   tensordesc<fp16[128, 64]>   (Triton's own spelling of the type)
_TENSORDESC_RE = re.compile(r"^\s*tensordesc\s*<\s*(?P<dtype>\w+)\s*\[(?P<block>[\d,\sx]+)\]\s*>\s*$")
# desc(fp16[4096,4096],[128,64])   (the tensor's shape, then the block shape, as TensorDescriptor.from_tensor)
_DESC_RE = re.compile(r"^\s*desc\s*\(\s*(?P<dtype>\w+)\s*\[(?P<shape>[\d,\sx]+)\]\s*,\s*\[(?P<block>[\d,\sx]+)\]\s*\)\s*$")


def _dims(text: str) -> tuple[int, ...]:
    return tuple(int(d) for d in re.split(r"[,x\s]+", text.strip()) if d)


def parse_arg_value(text: Any) -> Any:
    """'fp16[32,32]' -> TensorArg; 'tensordesc<fp16[64,64]>' -> DescArg; '32' -> 32; 'none' -> None."""
    if not isinstance(text, str):
        return text
    m = _TENSORDESC_RE.match(text) or _DESC_RE.match(text)
    if m:
        shape = _dims(m["shape"]) if "shape" in m.re.groupindex else None
        return DescArg(canonical_dtype(m["dtype"]), _dims(m["block"]), shape)
    m = _TENSOR_RE.match(text)
    if m:
        offset = int(m["off"] or 0)
        if m["ptr"]:
            return TensorArg(canonical_dtype(m["ptr"]), None, offset=offset)
        dims = tuple(int(d) for d in re.split(r"[,x\s]+", m["dims"].strip()) if d)
        return TensorArg(canonical_dtype(m["dtype"]), dims, bool(m["t"]), offset)
    return parse_scalar(text)


def parse_constexpr(text: Any) -> Any:
    """A -c value as a launch passes it: 16, 0.5, True, None, a dtype ('tl.bfloat16') or a string.

    Dtypes are written `bf16`, `tl.bfloat16` or `torch.bfloat16` and kept as 'tl.bfloat16' (what the
    kernel receives: a triton.language dtype).  Any other word is a string constexpr
    (`reduction=mean`); a quoted value is always a string (`'ACTIVATION=""'`, `'X="fp16"'`).
    """
    if not isinstance(text, str):
        return constexpr_value(text)
    stripped = text.strip()
    if len(stripped) >= 2 and stripped[0] == stripped[-1] and stripped[0] in "'\"":
        try:
            value = ast.literal_eval(stripped)
        except (ValueError, SyntaxError):
            value = stripped[1:-1]
        return value
    dtype = dtype_constexpr(stripped)
    if dtype is not None:
        return dtype
    return parse_scalar(stripped)


def dtype_constexpr(text: str) -> str | None:
    """'bf16', 'tl.bfloat16', 'triton.language.bfloat16', 'torch.bfloat16' -> 'tl.bfloat16'; else None."""
    key = re.sub(r"^(?:tl|triton\.language|torch)\.", "", text.strip())
    if key != text.strip() or key.lower() in DTYPES or key.lower() in DTYPE_ALIASES:
        try:
            return "tl." + DTYPES[canonical_dtype(key)]
        except UsageError:
            if key in TL_DTYPES:
                return "tl." + key
            return None
    return None


# triton.language's dtype names a constexpr may hold beyond DTYPES (fp8 variants, unsigned ints)
TL_DTYPES = ("float8e4b15", "float8e4b8", "float8e5b16", "float8e4nv", "float8e5", "uint16", "uint32", "uint64",
             "int1", "float64")


def constexpr_value(value: Any) -> Any:
    """A Python value a kernel file gives a constexpr (a default, an EXAMPLES entry, a Config, a heuristic),
    as the spec keeps it: tl.constexpr(0) -> 0, tl.bfloat16 or torch.bfloat16 -> 'tl.bfloat16'."""
    kind = type(value).__name__
    if kind == "constexpr" and hasattr(value, "value"):
        return constexpr_value(value.value)
    if kind == "dtype" and type(value).__module__.startswith(("triton", "torch")):
        name = getattr(value, "name", None) or str(value).rpartition(".")[2]
        text = dtype_constexpr(("torch." if type(value).__module__.startswith("torch") else "tl.") + name)
        return text if text is not None else f"tl.{name}"
    return value


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
    if isinstance(value, DescArg):
        if value.shape is not None and len(value.shape) != len(value.block):
            raise UsageError(f"--arg {name}={text}: the tensor has {len(value.shape)} dims and the block "
                             f"{len(value.block)}.", hint="Give one block size per dim: desc(fp16[4096,4096],[128,64]).")
        if not value.block or any(d <= 0 for d in value.block + (value.shape or ())):
            raise UsageError(f"--arg {name}={text}: every dim must be a positive whole number.",
                             hint="e.g. tensordesc<fp16[128,64]> or desc(fp16[4096,4096],[128,64]).")
        return value
    if isinstance(value, TensorArg) or value is None or isinstance(value, (bool, int, float)):
        return value
    looks_tensor = isinstance(text, str) and ("[" in text or text.strip().startswith(("*", "tensordesc", "desc")))
    raise UsageError(
        f"--arg {name}={text}: " + ("not a tensor: every dim must be a whole number."
                                    if looks_tensor else "not a tensor or a number."),
        hint="A tensor is DTYPE[dims] (fp16[32,32], fp16[32,32].T, fp16[32,32]+2) or *DTYPE (*fp32); "
             "a tensor descriptor is tensordesc<fp16[128,64]> or desc(fp16[4096,4096],[128,64]); "
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


# liger_kernel.ops.rms_norm   (a module path, as `import` names it)
_MODULE_PATH_RE = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")


def resolve_target(target: str) -> tuple[Path, str | None]:
    """'matmul' -> (samples/matmul.py, 'matmul_kernel'); 'f.py:k' -> (f.py, 'k');
    'liger_kernel.ops.rms_norm:k' -> (that module's file, 'k')."""
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
            hint="List the samples with `tritonscope samples`, or name a kernel as path/to/file.py:kernel_name "
                 "or package.module:kernel_name.",
        )
    path = Path(path_text).expanduser()
    if not path.is_file() and not path_text.endswith(".py") and _MODULE_PATH_RE.match(path_text):
        found = module_file(path_text)
        if found is None:
            raise NotFoundError(
                f"No module or file named {path_text!r}.",
                hint="Name an installed module (package.module:kernel_name, as `import` spells it) "
                     "or a file (path/to/file.py:kernel_name).")
        return found, kernel or None
    if not path.is_file():
        raise NotFoundError(
            f"No such file: {path_text}",
            hint="Check the path; a user kernel is written as path/to/file.py:kernel_name "
                 "(or package.module:kernel_name for an installed one).",
        )
    return path.resolve(), kernel or None


def module_file(dotted: str) -> Path | None:
    """The file of module `dotted` (a/b/c.py or a/b/c/__init__.py on sys.path), found without importing
    anything: no package's __init__ runs before the stand-in driver is active (load_module)."""
    parts = dotted.split(".")
    for root in ["", *sys.path]:
        base = Path(root or ".").joinpath(*parts)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            try:
                if candidate.is_file():
                    return candidate.resolve()
            except OSError:
                continue
    return None


def module_name_of(path: Path) -> tuple[str | None, Path]:
    """(dotted name, import root) of a file inside packages (folders with __init__.py), as Python imports
    it from the folder above its top package; (None, its folder) for a lone file."""
    parts = [path.stem] if path.name != "__init__.py" else []
    folder = path.parent
    while (folder / "__init__.py").is_file() and _MODULE_PATH_RE.match(folder.name):
        parts.insert(0, folder.name)
        folder = folder.parent
    if path.name != "__init__.py" and len(parts) == 1:
        return None, path.parent
    return ".".join(parts), folder


# module name -> (arch, the questions its import asked): a module whose import asked for the GPU is
# imported again when another arch is compiled, so its module-level answers are that arch's.
_ASKED: dict[str, tuple[str, tuple[str, ...]]] = {}


def load_module(path: Path, arch: str | None = None):
    """Import a kernel file as Python would run it (Triton needs it importable for getsource).

    Its folder, and the folder above its top package when it lives in one, go on sys.path, so
    `from helper import f` and `from mypkg.utils import g` work; a file inside a package is imported
    under its dotted name (relative imports work, and an installed library's kernel is the very
    module its users import).  While it imports, a stand-in driver answers for `arch`
    (triton_api.device_answers): module code that asks for the target, the backend, the SM count or
    the device properties gets the answers of the arch's reference GPU; the questions asked are
    kept (imported_asked) for the summary.
    """
    try:
        source = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise KernelSpecError(
            f"{path.name} is not UTF-8 text (byte {e.start}), so Python cannot import it.",
            hint="Save the kernel file as UTF-8.") from e
    except OSError as e:
        raise NotFoundError(f"Cannot read {path.name}: {e.strerror or e}.", hint="Check the path and its permissions.") from e
    try:
        compile(source, str(path), "exec")
    except (SyntaxError, ValueError) as e:
        lineno = getattr(e, "lineno", None)
        raise KernelSpecError(
            f"Syntax error in {path.name}" + (f", line {lineno}" if lineno else "") + f": {getattr(e, 'msg', e)}",
            context=(getattr(e, "text", None) or "").rstrip() or None,
            hint="Fix the Python file and run again.",
        ) from e
    dotted, root = module_name_of(path)
    for folder in dict.fromkeys([str(root), str(path.parent)]):
        if folder not in sys.path:
            # after what is installed: a kernel folder's `json.py` or `rich.py` must not shadow the
            # modules tritonscope itself imports later in this process
            sys.path.append(folder)
    name = dotted or f"_tritonscope_user_{abs(hash(str(path)))}"
    kept = sys.modules.get(name)
    asked = _ASKED.get(name)
    if kept is not None and (asked is None or not asked[1] or arch is None or asked[0] == arch):
        return kept
    if kept is not None:  # imported for another arch, and its import asked for the GPU: again, for this one
        del sys.modules[name]
    answers = _answers(arch)
    try:
        with triton_api.device_answers(answers) if answers is not None else _nothing():
            if dotted:
                module = importlib.import_module(dotted)
                if Path(getattr(module, "__file__", "") or "").resolve() != path.resolve():
                    raise ImportError(f"`import {dotted}` finds {getattr(module, '__file__', None)}, not {path}")
            else:
                spec = importlib.util.spec_from_file_location(name, path)
                module = importlib.util.module_from_spec(spec)
                sys.modules[name] = module
                spec.loader.exec_module(module)
    except KeyboardInterrupt:
        sys.modules.pop(name, None)
        raise
    except BaseException as e:  # the user's module raised (or exited) while importing
        sys.modules.pop(name, None)
        if isinstance(e, SystemExit):
            e = RuntimeError(f"it called exit({e.code})")
        raise KernelSpecError(
            f"Importing {path.name} failed: {type(e).__name__}: {_one_line(e)}",
            hint="The file must import cleanly; run `python " + str(path) + "` to see the error.",
        ) from e
    _ASKED[name] = (arch or "", tuple(answers.asked) if answers is not None else ())
    return module


def imported_asked(module) -> tuple[str, ...]:
    """The GPU questions `module`'s import asked (answered for the arch it was loaded for)."""
    return _ASKED.get(getattr(module, "__name__", ""), ("", ()))[1]


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


@contextlib.contextmanager
def _nothing():
    yield


def _answers(arch: str | None):
    """The stand-in answers for `arch` (None when no arch is known, or the installed Triton lacks its backend)."""
    if arch is None or arch not in ARCHES:
        return None
    from tritonscope.compile import arch_target
    from tritonscope.model import reference_device

    a = ARCHES[arch]
    if a.backend == "hip" and not triton_api.has_backend("amd"):
        return None
    target = triton_api.gpu_target(**arch_target(a))
    return triton_api.DeviceAnswers(target, reference_device(arch))


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
    # For an @triton.autotune kernel: which of its configs (1-based, after its prune_configs_by) to compile.
    config: int | None = None


# The launch options (beyond num_warps/num_stages) that go to Triton's compile: KernelSpec.options
# also holds an example's launch-only params, which do not.  The first three have flags of their own;
# the rest are the backends' other options a launch may pass as keywords (`-c waves_per_eu=2`), checked
# against the target's own backend (its CUDAOptions / HIPOptions fields) when the spec is built.
TRITON_OPTIONS = ("maxnreg", "num_ctas", "enable_fp_fusion",
                  # NVIDIA
                  "launch_cooperative_grid", "launch_pdl", "enable_reflect_ftz", "ptx_version", "min_shared_mem",
                  "sched4reg", "clc",
                  # AMD
                  "waves_per_eu", "matrix_instr_nonkdim", "kpack", "schedule_hint", "allow_flush_denorm",
                  "wgp_cu_mode",
                  # both
                  "debug", "default_dot_input_precision", "max_num_imprecise_acc_default", "sanitize_overflow")
LAUNCH_SHAPE = ("num_warps", "num_stages")  # launch options with flags of their own (-w, -s)


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


@dataclass(frozen=True)
class Loaded:
    spec: KernelSpec
    jit_fn: Any           # the JITFunction
    obj: Any              # what the file defines (may be an Autotuner)
    example: dict | None  # the EXAMPLES entry, if any
    launch: dict | None   # what the example's launch function returned


def build_spec(req: Request, default_arch: str, *, kernel_object: Any = None) -> Loaded:
    """Bind a launch as Triton's launcher does: every parameter by name, in the kernel's order.

    Constexprs: signature defaults < EXAMPLES < --block < -c; then the kernel's
    @triton.autotune config (the first, or --config N, after its prune_configs_by) and its
    @triton.heuristics, computed from the bound arguments, as a launch runs them.  -c also
    takes the backend's options (`waves_per_eu=2`), which reach the compile as a launch's
    keywords do; a constexpr named like a launch option (`num_stages: tl.constexpr`) gets the
    value a keyword launch gives both.
    """
    check_request(req)
    arch = canonical_arch(req.arch) if req.arch else default_arch
    if kernel_object is not None:  # the Python API hands over the kernel itself: run no file
        path, module, kernel, obj, fn = held_kernel(kernel_object)
    else:
        path, kernel = resolve_target(req.target)
        module = load_module(path, arch)
        kernel, obj, fn = find_kernel(module, path, kernel)
    asked = imported_asked(module) if kernel_object is None else ()
    examples = getattr(module, "EXAMPLES", None)
    example = examples.get(kernel) if isinstance(examples, dict) else None

    params = triton_api.kernel_params(fn)
    names = [p[0] for p in params]
    constexpr_names = [p[0] for p in params if p[1]]
    launch_params = dict((example or {}).get("params", {}))
    backend_options = triton_api.backend_option_names(ARCHES[arch].backend)
    tuner, heuristics = triton_api.kernel_wrappers(obj)

    # constexprs: declared defaults < signature defaults < --block < -c
    values: dict[str, Any] = {}
    for name, is_const, default in params:
        if is_const and default is not inspect.Parameter.empty:
            values[name] = constexpr_value(default)
    values.update({k: constexpr_value(v) for k, v in (example or {}).get("constexprs", {}).items()})
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
    given: set[str] = set()  # constexprs the user set (--block, -c)
    if req.block is not None:
        block_names = names_set_by_block(example, constexpr_names)
        if not block_names:
            raise UsageError(
                f"--block needs a BLOCK constexpr, and {kernel} has none.",
                hint=f"Set constexprs with -c NAME=VALUE; this kernel's are: {', '.join(constexpr_names) or '(none)'}.",
            )
        clash = [n for n in block_names if n in (req.constexprs or {})]
        if clash:
            raise UsageError(
                f"--block {req.block} and -c {clash[0]}={req.constexprs[clash[0]]} both set {clash[0]}.",
                hint=f"Give {clash[0]} once: --block sets {', '.join(block_names)}; -c sets one constexpr.")
        for n in block_names:
            values[n] = req.block
        given.update(block_names)
    launch_words = dict(check_launch_options(req.options))  # --maxnreg, --num-ctas, --fp-fusion
    shape_words: dict[str, Any] = {}                         # -c num_warps=8 (a launch's keyword)
    for name, text in (req.constexprs or {}).items():
        if name in constexpr_names:
            values[name] = _same_kind(kernel, name, text, parse_constexpr(text), values.get(name), example)
            given.add(name)
        elif name in launch_params:
            values[name] = parse_scalar(text)
        elif name in names:
            raise KernelSpecError(
                f"{name!r} is a runtime argument of {kernel}, not a constexpr.",
                hint=f"Set it with --arg {name}=VALUE.",
            )
        elif name in LAUNCH_SHAPE:
            shape_words[name] = _launch_int(name, text)
        elif name in backend_options:
            if name in launch_words and launch_words[name] != parse_scalar(text):
                raise UsageError(f"-c {name}={text} and --{name.replace('_', '-')} {launch_words[name]} disagree.",
                                 hint=f"Give {name} once.")
            launch_words[name] = parse_scalar(text)
        else:
            other = triton_api.backend_option_names("hip" if ARCHES[arch].backend == "cuda" else "cuda")
            if name in other:
                raise UsageError(
                    f"-c {name}: {arch} compiles with Triton's {_backend_words(ARCHES[arch].backend)} backend, "
                    f"which has no option {name!r} (the {_backend_words('hip' if ARCHES[arch].backend == 'cuda' else 'cuda')} "
                    "backend has).",
                    hint=f"Options of this backend: {', '.join(sorted(backend_options))}.")
            hint_names = constexpr_names + list(launch_params)
            raise KernelSpecError(
                f"{kernel} has no constexpr named {name!r}.{close_matches(name, hint_names + sorted(backend_options))}",
                hint=f"Its constexprs are: {', '.join(hint_names) or '(none)'}. -c also takes the options of "
                     f"Triton's {_backend_words(ARCHES[arch].backend)} backend, as a launch does: "
                     f"{', '.join(sorted(backend_options - set(LAUNCH_SHAPE)))}.",
            )
    for name, value in launch_params.items():  # an EXAMPLES entry's backend options reach the compile too
        if name in backend_options and name not in constexpr_names:
            launch_words.setdefault(name, value)
    num_warps = _one_value("num_warps", req.num_warps, shape_words.get("num_warps"), "--num-warps")
    num_stages = _one_value("num_stages", req.num_stages, shape_words.get("num_stages"), "--num-stages")
    # a constexpr named like a launch option: a keyword launch gives the same value to both
    for name, flag_value in (("num_warps", num_warps), ("num_stages", num_stages)):
        if name in constexpr_names:
            if name in given and flag_value is not None and values[name] != flag_value:
                raise UsageError(f"-c {name}={values[name]} and the launch option {name}={flag_value} disagree: "
                                 f"a launch passes {name} once, to the constexpr and to the compile.",
                                 hint=f"Give {name} once.")
            if flag_value is not None:
                values[name] = flag_value
                given.add(name)

    # runtime args: example launch < --arg   (checked before any launch function or heuristic runs)
    runtime = [(n, d) for n, c, d in params if not c]
    for name, text in (req.args or {}).items():
        if name not in names or name in constexpr_names:
            if name in constexpr_names:
                raise KernelSpecError(f"{name!r} is a constexpr of {kernel}, not a runtime argument.",
                                      hint=f"Set it with -c {name}=VALUE.")
            raise KernelSpecError(
                f"{kernel} has no runtime argument named {name!r}.{close_matches(name, names)}",
                hint=f"Its runtime arguments are: {', '.join(n for n, _ in runtime)}.",
            )
    # an autotuned kernel: one of its configs, as the tuner would try it
    autotune = None
    tuned: dict[str, Any] = {}
    if tuner is not None:
        declared = given | set((example or {}).get("constexprs", {}))  # an EXAMPLES entry names its config
        autotune, tuned = _pick_config(tuner, req, values, declared, kernel, arch, runtime, module)
        config_options = dict(tuned.get("options", {}))
        for k, v in tuned.get("constexprs", {}).items():
            if k in constexpr_names:
                if k not in given:
                    values[k] = constexpr_value(v)
            else:  # an AMD Config's waves_per_eu=2 and the like: a keyword the launch passes to the compile
                config_options[k] = v
        for k, v in config_options.items():
            if k in LAUNCH_SHAPE:
                continue
            if k not in backend_options:
                raise KernelSpecError(
                    f"Autotune config {autotune['index']} of {kernel} sets {k}={v}, which is no constexpr of the "
                    f"kernel and no option of Triton's {_backend_words(ARCHES[arch].backend)} backend.",
                    hint="A launch would refuse it too (Triton: 'Keyword argument ... unrecognised').")
            launch_words.setdefault(k, v)
    launch = None
    args: dict[str, Any] = {}
    heuristic_names: list[str] = []
    if heuristics:
        heuristic_names = [n for h in heuristics for n in h.values]
        clash = sorted(set(heuristic_names) & given)
        if clash:
            raise UsageError(
                f"-c {clash[0]}: {kernel} computes {clash[0]} with @triton.heuristics from its arguments; "
                "a launch replaces any value passed for it.",
                hint="Change the arguments it is computed from instead (see the kernel's @triton.heuristics).")
    missing = [n for n in constexpr_names if n not in values and n not in heuristic_names]
    if missing:
        raise KernelSpecError(
            f"Missing constexpr{'s' if len(missing) > 1 else ''} for {kernel}: {', '.join(missing)}.",
            hint="Set each with -c NAME=VALUE, e.g. " + " ".join(f"-c {n}=16" for n in missing) + ".",
        )
    if example and callable(example.get("launch")):
        try:
            launch = example["launch"](shape, dtype, dict(values))
        except Exception as e:
            raise KernelSpecError(
                f"The example launch for {kernel} rejected this config: {type(e).__name__}: {e}",
                hint="Check the shape, dtype and constexprs against the kernel's EXAMPLES entry.",
            ) from e
    if launch:
        args.update({k: parse_arg_value(v) for k, v in launch.get("args", {}).items()})
    for name, text in (req.args or {}).items():
        args[name] = check_arg_text(name, text)
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
    if heuristics:
        _run_heuristics(heuristics, values, ordered_args, kernel, arch)

    if num_warps is None:
        num_warps = tuned.get("num_warps") or (example or {}).get("num_warps", 4)
    if num_stages is None:
        num_stages = tuned.get("num_stages") or (example or {}).get("num_stages", 3)
    for name, value in (("num_warps", num_warps), ("num_stages", num_stages)):
        if name in constexpr_names and name not in given:
            values[name] = value
    if num_warps not in WARPS:
        raise UsageError(f"--num-warps {num_warps} is not a power of two from 1 to 32.", hint="Use 1, 2, 4, 8, 16 or 32.")
    if num_stages < 1:
        raise UsageError(f"--num-stages {num_stages} must be at least 1.", hint="Use 1 (no pipelining) or more.")
    for name in constexpr_names:
        _check_constexpr(kernel, name, values[name])

    spec = KernelSpec(
        target=req.target,
        kernel=kernel,
        file=str(path),
        args={k: (str(v) if isinstance(v, (TensorArg, DescArg)) else v) for k, v in ordered_args.items()},
        constexprs={n: values[n] for n in constexpr_names},
        num_warps=num_warps,
        num_stages=num_stages,
        arch=arch,
        shape=shape,
        dtype=dtype,
        grid=tuple(launch["grid"]) if launch and launch.get("grid") else None,
        options={**{k: v for k, v in values.items() if k in launch_params and k not in backend_options},
                 **check_launch_options(launch_words)},
        asked=tuple(asked),
        autotune=autotune,
        heuristics=tuple(heuristic_names),
    )
    return Loaded(spec, fn, obj, example, launch)


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
        raise KernelSpecError(f"-c {name}={text}: not a number, bool or dtype, and {kernel}'s {name} is a "
                              f"{want} ({where} is {known!r}).", hint=f"Give it a value like -c {name}={known!r}.")
    if want == "dtype" and got != "dtype":
        raise KernelSpecError(f"-c {name}={text}: {kernel}'s {name} is a dtype ({where} is {known}), and "
                              f"{text!r} names none.", hint=f"Give a dtype: -c {name}=bf16, tl.bfloat16 or "
                                                            "torch.bfloat16.")
    return value


def _backend_words(backend: str) -> str:
    return {"cuda": "NVIDIA", "hip": "AMD"}.get(backend, backend)


def _launch_int(name: str, text: Any) -> int:
    value = parse_scalar(text)
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"-c {name}={text}: {name} is a whole number.", hint=f"e.g. -c {name}=4")
    return value


def _one_value(name: str, flag: int | None, keyword: int | None, spelling: str) -> int | None:
    """--num-warps 8 and -c num_warps=8 name one launch option: given both, they must agree."""
    if flag is not None and keyword is not None and flag != keyword:
        raise UsageError(f"{spelling} {flag} and -c {name}={keyword} disagree.", hint=f"Give {name} once.")
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
                          "(a number, bool, string, dtype or None).", hint=f"Give it a value like -c {name}=16.")


def stand_in_args(args: dict[str, Any]) -> dict[str, Any]:
    """The spec's runtime arguments as objects Triton's specializer (and a kernel's heuristics) accept."""
    import math

    out: dict[str, Any] = {}
    for name, value in args.items():
        value = parse_arg_value(value)
        if isinstance(value, TensorArg):
            out[name] = triton_api.StandInTensor(
                DTYPES[value.dtype], offset=value.offset,
                numel=math.prod(value.shape) if value.shape is not None else None,
                shape=value.shape, transposed=value.transposed)
        elif isinstance(value, DescArg):
            out[name] = triton_api.stand_in_descriptor(name, DTYPES[value.dtype], value.block, value.shape)
        else:
            out[name] = value
    return out


def kernel_value(value: Any) -> Any:
    """A constexpr as the kernel receives it: 'tl.bfloat16' -> triton.language.bfloat16; others as they are."""
    if isinstance(value, str) and value.startswith("tl.") and dtype_constexpr(value) == value:
        import triton.language as tl

        return getattr(tl, value[3:])
    return value


def _run_heuristics(heuristics, values: dict[str, Any], args: dict[str, Any], kernel: str, arch: str) -> None:
    """@triton.heuristics values, computed as a launch computes them: from every bound argument."""
    bound = {**stand_in_args(args), **{k: kernel_value(v) for k, v in values.items()}}
    answers = _answers(arch)
    for wrapper in heuristics:
        for name, fn in wrapper.values.items():
            try:
                with triton_api.device_answers(answers) if answers is not None else _nothing():
                    result = fn(bound)
            except Exception as e:
                raise KernelSpecError(
                    f"{kernel}'s @triton.heuristics for {name} failed on these arguments: "
                    f"{type(e).__name__}: {_one_line(e)}",
                    hint="Check the arguments it reads (--arg); a tensor is DTYPE[dims] with its shape.") from e
            values[name] = constexpr_value(result)
            bound[name] = result


def _pick_config(tuner, req: Request, values: dict[str, Any], given: set[str], kernel: str, arch: str,
                 runtime, module) -> tuple[dict | None, dict[str, Any]]:
    """The autotune config to compile: --config N (1-based), else the first, after prune_configs_by.

    A real launch times every config and keeps the fastest, which needs a GPU; the pick is
    recorded (KernelSpec.autotune) so the summary says which config this is and that a tuner
    may choose another.  When -c sets every constexpr the configs tune, no config applies.
    """
    configs = triton_api.autotune_configs(tuner) or []
    tuned_names = sorted({k for c in configs for k in c["constexprs"]})
    if req.config is None and tuned_names and all(n in given for n in tuned_names):
        return None, {}
    if not configs:
        if req.config is not None:
            raise UsageError(f"--config {req.config}: {kernel}'s @triton.autotune has no configs.",
                             hint="Leave --config out.")
        return None, {}
    pruned = configs
    prune_note = None
    prune = getattr(tuner, "early_config_prune", None)
    if prune is not None:
        bound = {**stand_in_args({n: parse_arg_value(t) for n, t in (req.args or {}).items()}),
                 **{k: kernel_value(v) for k, v in values.items()}}
        answers = _answers(arch)
        try:
            with triton_api.device_answers(answers) if answers is not None else _nothing():
                kept = prune(list(tuner.configs), bound, **{k: kernel_value(v) for k, v in values.items()})
            kept_ids = {id(c) for c in kept}
            pruned = [c for c, raw in zip(configs, tuner.configs) if id(raw) in kept_ids] or configs
            prune_note = f"prune_configs_by kept {len(pruned)} of {len(configs)}"
        except Exception as e:
            prune_note = f"prune_configs_by failed here ({type(e).__name__}: {_one_line(e)}): all configs kept"
    index = req.config if req.config is not None else 1
    if not 1 <= index <= len(pruned):
        raise UsageError(f"--config {index}: {kernel} has {len(pruned)} autotune config"
                         f"{'s' if len(pruned) != 1 else ''}" + (f" ({prune_note})" if prune_note else "") + ".",
                         hint=f"Use --config 1 to {len(pruned)}, or `tritonscope sweep` to compile them all.")
    chosen = pruned[index - 1]
    info = {"index": index, "count": len(pruned), "of": len(configs), "chosen_by": "--config" if req.config else "first",
            "prune": prune_note}
    return info, chosen


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


def load_for_spec(spec: KernelSpec) -> tuple[Any, Callable | None]:
    """Re-find the JITFunction for a spec (e.g. in a worker process)."""
    if (spec.file, spec.kernel) in _HELD:
        return _HELD[(spec.file, spec.kernel)]
    path = Path(spec.file)
    if not path.is_file():
        raise NotFoundError(f"No such file: {spec.file}", hint="The kernel file has moved; recompile from the new path.")
    module = load_module(path, spec.arch if spec.arch in ARCHES else None)
    _, _, fn = find_kernel(module, path, spec.kernel)
    return fn
