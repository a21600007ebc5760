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
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from tritonscope import triton_api
from tritonscope.core.dtypes import DTYPE_TABLE, lookup as dtype_lookup
from tritonscope.core.errors import KernelSpecError, NotFoundError, UsageError, close_matches
from tritonscope.core.model import ARCH_ALIASES, ARCHES, KernelSpec
from tritonscope.core.words import field_data, said, terms

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "samples"
if not SAMPLES_DIR.is_dir():  # installed (non-editable): samples ship as a subpackage
    SAMPLES_DIR = Path(__file__).resolve().parents[1] / "samples"

# tritonscope's dtype names (Triton's signature spellings: fp16, u32, fp8e4b8, ...) -> triton.language's
# attribute; every spelling and torch's name are in core/dtypes.py, the one table.
DTYPES: dict[str, str] = {d.name: d.tl for d in DTYPE_TABLE}


def canonical_dtype(name: str) -> str:
    """'u32', 'uint32', 'torch.uint32', 'tl.float8e4b8', 'float8_e4m3fnuz' -> Triton's name ('u32', 'fp8e4b8')."""
    key = re.sub(r"^(?:tl|triton\.language|torch)\.", "", name.strip())
    row = dtype_lookup(key)
    if row is None:
        raise UsageError(
            f"Unknown dtype {name!r}.{close_matches(key.lower(), DTYPES)}",
            hint=f"Use one of: {', '.join(DTYPES)} (or triton.language's or torch's names: uint32, "
                 f"float8_e4m3fnuz, ...).",
        )
    return row.name


def canonical_arch(name: str) -> str:
    key = name.strip().lower().replace("-", "_")
    if re.fullmatch(r"\d+", key):
        key = f"sm_{key}"
    key = ARCH_ALIASES.get(key, key)
    if key not in ARCHES:
        every = ", ".join(sorted(set(ARCHES) | set(ARCH_ALIASES)))
        gpu = _gpu_named(name)
        if gpu is not None:  # --arch h100: a GPU's name, whose spelling is closest to sm_100 (Blackwell)
            gpu_name, arch = gpu
            raise NotFoundError(f"Unsupported arch {name!r}: that is a GPU, the {gpu_name}, whose arch is {arch}.",
                                hint=f"Use {said('arch', arch)}. Arches: {every}.")
        raise NotFoundError(
            f"Unsupported arch {name!r}.{close_matches(key, list(ARCHES) + list(ARCH_ALIASES))}",
            hint=f"Use one of: {every}.",
        )
    return key


def _gpu_named(name: str) -> tuple[str, str] | None:
    """(the GPU, its arch) when `name` names a GPU rather than an arch ('h100', 'MI300X', 'A10', 'l4')."""
    from tritonscope.core.gpus import find_gpu, gpu_table

    g = find_gpu(name)
    if g is not None and g.arches:
        return g.name, g.arches[0]
    want = name.strip().lower()
    for g in gpu_table().values():  # a word of the name the stand-in answers as: '5090', 'mi250x'
        device = g.device.get("name", "")
        words = re.split(r"[\s-]+", device.lower())
        if want and want in words and want not in ("nvidia", "amd", "instinct", "radeon", "geforce"):
            return device, g.arches[0]
    return None


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


# A dtype word, as Triton, triton.language or torch spell it: fp16   u32   uint32   torch.uint32   tl.float8e4b8
_DTYPE_WORD = r"(?:(?:tl|torch|triton\.language)\.)?\w+"
# fp16[32,32]   fp16[32x32].T   *fp32   fp16[32,32]+2   *fp16+8   u32[64]   *torch.float8_e4m3fnuz
# (not fp16[32,x]: every dim a number)
_TENSOR_RE = re.compile(rf"^\s*(?:\*(?P<ptr>{_DTYPE_WORD})|(?P<dtype>{_DTYPE_WORD})\[(?P<dims>(?:\s*\d+(?:\s*[,x]\s*\d+)*)?\s*)\]"
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
_TENSORDESC_RE = re.compile(rf"^\s*tensordesc\s*<\s*(?P<dtype>{_DTYPE_WORD})\s*\[(?P<block>[\d,\sx]+)\]\s*>\s*$")
# desc(fp16[4096,4096],[128,64])   (the tensor's shape, then the block shape, as TensorDescriptor.from_tensor)
_DESC_RE = re.compile(rf"^\s*desc\s*\(\s*(?P<dtype>{_DTYPE_WORD})\s*\[(?P<shape>[\d,\sx]+)\]\s*,\s*\[(?P<block>[\d,\sx]+)\]\s*\)\s*$")


# Torch's sizes, storage offsets and a tensor's extent in bytes are signed 64-bit: a dim or offset of 2**63 or
# more (or a 5000-digit one, which Python will not even read) is no tensor a launch can pass.
_I64_LIMIT = 2**63
# Triton passes an integer argument as i32, i64 or (from 2**63 to 2**64-1) u64; beyond, its specializer
# raises OverflowError.
_INT_ARG_RANGE = (-2**63, 2**64)


def shown_text(text: Any, width: int = 60) -> str:
    """A value as a message quotes it: a long one cut, with its length ('99999999999999999999... (5000
    characters)'), so that a hostile --arg does not fill the terminal."""
    text = str(text)
    return text if len(text) <= width else f"{text[:width - 20]}... ({len(text)} characters)"


def _whole(digits: str, what: str, text: str) -> int:
    """A dim's or an offset's digits as an int; one of 2**63 or more is a UsageError (checked on the digits
    first: Python refuses to read an int of more than 4300 digits)."""
    core = digits.strip().lstrip("0")
    if len(core) > 19 or (core and int(core) >= _I64_LIMIT):
        raise UsageError(f"{shown_text(text)}: the {what} {shown_text(core, 30)} is too large: a tensor's dims, "
                         f"offset and size in bytes must be below 2**63 (torch's sizes are signed 64-bit).",
                         hint="Describe the tensor the launch passes, e.g. fp16[4096,4096] or fp16[4096,4096]+8.")
    return int(core or "0")


def _dims(text: str, full: str = "") -> tuple[int, ...]:
    return tuple(_whole(d, "dim", full or text) for d in re.split(r"[,x\s]+", text.strip()) if d)


def _check_extent(dtype: str, dims: tuple[int, ...] | None, offset: int, text: str) -> None:
    """The bytes from the allocation's start to the tensor's end fit below 2**63 (a stand-in's address too)."""
    from tritonscope.core.dtypes import BY_NAME

    numel = 1
    for d in dims or ():
        numel *= d
    if (offset + numel) * max(1, BY_NAME[dtype].bits // 8) >= _I64_LIMIT:
        raise UsageError(f"{shown_text(text)}: the tensor spans 2**63 bytes or more (its offset plus its "
                         f"dims multiplied, in bytes): torch's sizes are signed 64-bit.",
                         hint="Describe the tensor the launch passes, e.g. fp16[4096,4096] or fp16[4096,4096]+8.")


def parse_arg_value(text: Any) -> Any:
    """'fp16[32,32]' -> TensorArg; 'tensordesc<fp16[64,64]>' -> DescArg; '32' -> 32; 'none' -> None.

    A dim or offset of 2**63 or more is a UsageError (it describes no tensor)."""
    if not isinstance(text, str):
        return text
    m = _TENSORDESC_RE.match(text) or _DESC_RE.match(text)
    if m:
        shape = _dims(m["shape"], text) if "shape" in m.re.groupindex else None
        dtype = canonical_dtype(m["dtype"])
        block = _dims(m["block"], text)
        _check_extent(dtype, shape if shape is not None else block, 0, text)
        return DescArg(dtype, block, shape)
    m = _TENSOR_RE.match(text)
    if m:
        offset = _whole(m["off"] or "0", "offset", text)
        if m["ptr"]:
            dtype = canonical_dtype(m["ptr"])
            _check_extent(dtype, None, offset, text)
            return TensorArg(dtype, None, offset=offset)
        dims = _dims(m["dims"], text)
        dtype = canonical_dtype(m["dtype"])
        _check_extent(dtype, dims, offset, text)
        return TensorArg(dtype, dims, bool(m["t"]), offset)
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
    """'bf16', 'tl.bfloat16', 'triton.language.bfloat16', 'torch.bfloat16' -> 'tl.bfloat16'; 'u32',
    'torch.float8_e4m3fnuz' -> 'tl.uint32', 'tl.float8e4b8'; else None (a word that is no dtype)."""
    key = re.sub(r"^(?:tl|triton\.language|torch)\.", "", text.strip())
    row = dtype_lookup(key)
    return "tl." + row.tl if row is not None else None


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
    field = "constexprs" if what == "constexpr" else "args"
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip().isidentifier() or not value.strip():
            raise UsageError(
                f"Bad {what} {item!r}: expected NAME=VALUE.",
                hint="For example: " + (said(field, 16, key="BLOCK") if what == "constexpr"
                                        else said(field, "fp16[32,32]", key="a_ptr")),
                data=field_data(field, item))
        name = name.strip()
        if name in out:
            raise UsageError(
                f"{said(field, key=name)} is given twice: {name}={out[name]} and {name}={value.strip()}.",
                hint=f"Give each {what} once; to compare values, use `tritonscope diff --a {name}={out[name]} "
                     f"--b {name}={value.strip()}` or `tritonscope sweep -c {name}={out[name]},{value.strip()}`.",
                data=field_data(field, key=name))
        out[name] = value.strip()
    return out


def check_arg_text(name: str, text: Any) -> Any:
    """An --arg value parsed: a tensor (DTYPE[dims], *DTYPE) or a scalar (number, bool, none); else UsageError.

    'fp16[32,x]' and 'banana' are refused here, before Triton would end in a TypeError.
    """
    try:
        value = parse_arg_value(text)
    except UsageError as e:  # a dim or offset too large: said as the --arg it came from
        raise UsageError(f"{said('args', key=name)}={e.message}", hint=e.hint,
                         data=field_data("args", text, key=name)) from None
    if isinstance(value, DescArg):
        if value.shape is not None and len(value.shape) != len(value.block):
            raise UsageError(f"{said('args', text, key=name)}: the tensor has {len(value.shape)} dims and the block "
                             f"{len(value.block)}.", hint="Give one block size per dim: desc(fp16[4096,4096],[128,64]).",
                             data=field_data("args", text, key=name))
        if not value.block or any(d <= 0 for d in value.block + (value.shape or ())):
            raise UsageError(f"{said('args', text, key=name)}: every dim must be a positive whole number.",
                             hint="e.g. tensordesc<fp16[128,64]> or desc(fp16[4096,4096],[128,64]).",
                             data=field_data("args", text, key=name))
        return value
    too_long = isinstance(value, str) and re.fullmatch(r"[+-]?\d[\d_]*", value) is not None  # over 4300 digits
    if too_long or (isinstance(value, int) and not isinstance(value, bool)
                    and not _INT_ARG_RANGE[0] <= value < _INT_ARG_RANGE[1]):
        raise UsageError(f"{said('args', shown_text(text), key=name)}: the integer does not fit 64 bits: Triton "
                         "passes an integer argument as i32, i64 or u64, from -2**63 to 2**64-1.",
                         hint="Give the value the launch passes; a size or an index is below 2**63.",
                         data=field_data("args", shown_text(text), key=name))
    if isinstance(value, TensorArg) or value is None or isinstance(value, (bool, int, float)):
        return value
    looks_tensor = isinstance(text, str) and ("[" in text or text.strip().startswith(("*", "tensordesc", "desc")))
    raise UsageError(
        f"{said('args', shown_text(text), key=name)}: " + ("not a tensor: every dim must be a whole number."
                                    if looks_tensor else "not a tensor or a number."),
        hint="A tensor is DTYPE[dims] (fp16[32,32], fp16[32,32].T, fp16[32,32]+2) or *DTYPE (*fp32); "
             "a tensor descriptor is tensordesc<fp16[128,64]> or desc(fp16[4096,4096],[128,64]); "
             "a scalar is a number, true/false or none.", data=field_data("args", shown_text(text), key=name),
    )


def parse_shape(text: str) -> tuple[int, ...]:
    try:
        dims = tuple(int(d) for d in re.split(r"[x,]", text.lower()) if d)
    except ValueError:
        dims = ()
    if not dims or any(d <= 0 for d in dims):
        raise UsageError(f"Bad shape {text!r}.", hint="Write it like 32x32x32 (M x N x K for matmuls).",
                         data=field_data("shape", text))
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


def load_module(path: Path, arch: str | None = None, gpu: str | None = None):
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
    folders = list(dict.fromkeys([str(path.parent.resolve()), str(root.resolve())]))
    for folder in folders:
        if folder not in sys.path:
            # after what is installed: a kernel folder's `json.py` or `rich.py` must not shadow the
            # modules tritonscope itself imports later in this process
            sys.path.append(folder)
        _KERNEL_FOLDERS.add(folder)
    name = dotted or f"_tritonscope_user_{abs(hash(str(path)))}"
    kept = sys.modules.get(name)
    asked = _ASKED.get(name)
    answered_for = f"{arch or ''}:{gpu or ''}"
    if kept is not None and (asked is None or not asked[1] or arch is None or asked[0] == answered_for):
        return kept
    if kept is not None:  # imported for another arch, and its import asked for the GPU: again, for this one
        del sys.modules[name]
    asking, answers = answering(arch, gpu)
    try:
        from tritonscope.core.console import prints_to_stderr
        from tritonscope.inputs import import_watch

        # a print() at import must not reach stdout, which may be --json's; what the import reads is recorded
        # (the result cache's key), an os._exit raises, a thread it starts is a daemon (import_watch)
        with _own_folder_first(folders), asking, prints_to_stderr(), import_watch.watching(path, folders):
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
        if type(e).__name__ == "ModuleExited":  # import_watch: os._exit(N), which would end tritonscope silently
            raise KernelSpecError(f"Importing {path.name} failed: {e}.",
                                  hint="A kernel module must not end the process when imported: guard the "
                                       "call with `if __name__ == '__main__':`.",
                                  data={"module": dotted or str(path)}) from None
        if isinstance(e, SystemExit):
            e = RuntimeError(f"it called exit({e.code})")
        vendor = _vendor_tool_missing(e, path, arch)
        if vendor is not None:
            raise vendor from e
        plain = (f"cd {root} && python -c 'import {dotted}'" if dotted else f"python {path}")
        raise KernelSpecError(
            f"Importing {path.name} failed: {type(e).__name__}: {_one_line(e)}",
            hint=f"The module must import cleanly: `{plain}` shows the error in plain Python. If it imports "
                 f"there, the stand-in GPU{f' ({arch})' if arch else ''} tritonscope answers its questions with "
                 "broke it: rerun with --debug and report the traceback.",
            data={"module": dotted or str(path)},
        ) from e
    _ASKED[name] = (answered_for, tuple(answers.asked) if answers is not None else ())
    return module


# The programs a library may run at import to learn the GPU vendor; tritonscope answers torch's and Triton's
# questions for the target, not these.
_VENDOR_TOOLS = ("nvidia-smi", "rocm-smi", "amd-smi", "rocminfo")
# os.environ.get("VLLM_TARGET_DEVICE")   os.environ["DS_ACCELERATOR"]   os.getenv('GPU_VENDOR', 'cuda')
_ENV_READ_RE = re.compile(r"""(?:environ(?:\.get)?|getenv)\s*[\[(]\s*["']([A-Z][A-Z0-9_]*)["']""")
_VENDOR_WORDS = re.compile(r"DEVICE|VENDOR|PLATFORM|GPU|TARGET|BACKEND|ACCELERATOR")


def _vendor_tool_missing(e: BaseException, path: Path, arch: str | None) -> KernelSpecError | None:
    """The error for an import that ran `nvidia-smi` (rocm-smi, ...) to find the vendor, on a machine without
    it (FileNotFoundError naming the program); None for any other failure.  The hint names the environment
    variables the module that ran it reads about the device: a library's own way to be told the vendor."""
    import subprocess
    import traceback

    seen, err = set(), e
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        if isinstance(err, FileNotFoundError) and Path(str(err.filename or "")).name in _VENDOR_TOOLS:
            break
        err = err.__cause__ or err.__context__
    else:
        return None
    tool = Path(str(err.filename)).name
    runner = Path(subprocess.__file__).resolve()
    caller = None
    for frame in traceback.extract_tb(err.__traceback__):  # the last frame before subprocess's own: the library's
        f = frame.filename
        if f.startswith("<") or Path(f).resolve() == runner:
            continue
        caller = frame
    where = f"{Path(caller.filename).name}:{caller.lineno}" if caller else path.name
    names: list[str] = []
    if caller is not None:
        try:
            names = [n for n in dict.fromkeys(_ENV_READ_RE.findall(Path(caller.filename).read_text(errors="replace")))
                     if _VENDOR_WORDS.search(n)]
        except OSError:
            pass
    vendor = "rocm" if arch and ARCHES.get(arch) is not None and ARCHES[arch].backend == "hip" else "cuda"
    if names:
        hint = (f"The module that runs it reads {', '.join(names)}: set the vendor there as the library documents "
                f"for a {vendor} machine (e.g. {names[0]}={vendor}) and run again.")
    else:
        hint = (f"Set the library's own vendor setting, if it has one (an environment variable read near {where}), "
                f"or put a `{tool}` that describes the target's GPU on PATH.")
    return KernelSpecError(
        f"Importing {path.name} failed: {where} runs `{tool}` to find the GPU vendor, and this machine has no "
        f"`{tool}` (tritonscope answers torch's and Triton's GPU questions for the target, not other programs').",
        hint=hint)


# The folders kernel files were imported from: their sibling modules (`helper.py`) are the user's.
_KERNEL_FOLDERS: set[str] = set()


@contextlib.contextmanager
def _own_folder_first(folders: list[str]):
    """While a kernel file imports, its own folder comes first and a sibling module of the same name that
    another kernel folder loaded earlier (`from helper import f`, two folders with a helper.py) is set
    aside, so each file gets its own siblings, as `python file.py` would; both are put back afterwards."""
    saved_path = list(sys.path)
    sys.path[:0] = folders
    here = set(folders)
    aside = {}
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None)
        if "." in name or not origin:
            continue
        folder = str(Path(origin).resolve().parent)
        if folder in _KERNEL_FOLDERS and folder not in here and any((Path(f) / f"{name}.py").is_file()
                                                                      for f in folders):
            aside[name] = sys.modules.pop(name)
    try:
        yield
    finally:
        sys.path[:] = saved_path
        for name, module in aside.items():
            sys.modules[name] = module


def imported_asked(module) -> tuple[str, ...]:
    """The GPU questions `module`'s import asked (answered for the arch it was loaded for)."""
    return _ASKED.get(getattr(module, "__name__", ""), ("", ()))[1]


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def answering(arch: str | None, gpu: str | None = None):
    """The context in which a kernel file's code (its import, heuristics, autotune pruning) asks for the GPU:
    the stand-in answers for `arch` (and --gpu), or nothing when no arch's answers can be given."""
    answers = _answers(arch, gpu)
    return (triton_api.device_answers(answers) if answers is not None else contextlib.nullcontext()), answers


def _answers(arch: str | None, gpu: str | None = None):
    """The stand-in answers for `arch`, as its reference GPU or the `gpu` named (--gpu) gives them (None when
    no arch is known, or the installed Triton lacks its backend)."""
    if arch is None or arch not in ARCHES:
        return None
    from tritonscope.core.gpus import gpu_or_refuse
    from tritonscope.core.model import reference_device

    part = gpu_or_refuse(gpu) if gpu else None
    if part is not None and arch not in part.arches:
        raise UsageError(f"{said('gpu', gpu)}: the {part.name} is no {arch} GPU (it is {', '.join(part.arches)}).",
                         hint=f"Name a GPU of the target arch, or leave {said('gpu')} out for the arch's reference "
                              "GPU.", data=field_data("gpu", gpu))
    device = reference_device(arch, part)
    a = ARCHES[arch]
    if a.backend == "hip" and not triton_api.has_backend("amd"):
        return None
    target = triton_api.gpu_target(a.capability, None if a.backend == "cuda" else (a.backend, a.target_arch,
                                                                                 a.warp_size))
    return triton_api.DeviceAnswers(target, device)


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
        asked = imported_asked(module)
        gated = (f" Its import asked {', '.join(asked)}, answered for this target: a kernel its module defines "
                 "only for other answers (a `torch.version.cuda` gate) is not there, as at a launch on such a GPU."
                 if asked else "")
        raise NotFoundError(
            f"No kernel named {kernel!r} in {path.name}.{close_matches(kernel, jit_names)}",
            hint=f"Kernels in this file: {', '.join(jit_names) or '(none)'}.{gated}",
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


# A launch's own words for its options (what `-w`, `-s`, --maxnreg, --num-ctas and --fp-fusion set,
# and what explain's fixes and diff's sides change): the field of a Request each one lives in.
LAUNCH_FIELDS = ("num_warps", "num_stages")
LAUNCH_OPTIONS = ("maxnreg", "num_ctas", "enable_fp_fusion")


@dataclass(frozen=True)
class Request:
    """The one record of what a launch passes: what the command line or the Python API asked for.

    Made with the user's words (`arch="H100"`, options unchecked); pipeline/config.resolve
    checks every value once and returns the same record with `checked` set, the arch
    canonical (a key of model.ARCHES) and never empty.  `asdict(request)` (payload()) is what a
    child process rebuilds it from.  What Triton then bound for it is the KernelSpec the
    binding makes (the kernel, every argument and constexpr, num_warps/num_stages, the config).
    """

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
    # The GPU a kernel file's import-time questions are answered for (--gpu; None: the arch's reference GPU).
    gpu: str | None = None
    # --grid as given: numbers or an expression in the kernel's arguments and constexprs (inputs/grid.py),
    # evaluated when the launch is bound; None: the grid of the kernel file's EXAMPLES launch, if any.
    grid: str | None = None
    # Set by pipeline/config.resolve once every value is checked and the arch canonical; never by hand.
    checked: bool = field(default=False, compare=False, repr=False)

    def with_launch(self, **words: Any) -> "Request":
        """This request with launch options changed, each by a launch's own keyword
        (num_warps=8, maxnreg=64, enable_fp_fusion=False): the one place that knows which field holds which."""
        unknown = set(words) - set(LAUNCH_FIELDS) - set(LAUNCH_OPTIONS)
        if unknown:
            raise ValueError(f"not a launch option: {', '.join(sorted(unknown))}")
        shape = {k: (None if v is None else int(v)) for k, v in words.items() if k in LAUNCH_FIELDS}
        options = {**(self.options or {}), **{k: v for k, v in words.items() if k in LAUNCH_OPTIONS}}
        return replace(self, **shape, options={k: v for k, v in options.items() if v is not None})

    def with_values(self, *, constexprs: dict | None = None, args: dict | None = None) -> "Request":
        """This request with constexprs and runtime arguments added (later ones win), as a launch's keywords."""
        return replace(self, constexprs={**(self.constexprs or {}), **{k: str(v) for k, v in (constexprs or {}).items()}},
                       args={**(self.args or {}), **{k: str(v) for k, v in (args or {}).items()}})

    def payload(self) -> dict[str, Any]:
        """The JSON-able form a child process rebuilds the request from (`Request(**payload)`)."""
        return asdict(self)


LAUNCH_SHAPE = LAUNCH_FIELDS  # launch options with flags of their own (-w, -s)


# The backends' launch options that are on/off (CUDAOptions / HIPOptions bool fields) and those that are a
# number: a launch passes each on to Triton's C++ option parser, which takes nothing else (a 19-line pybind
# signature for `enable_fp_fusion=banana`), so they are checked here, before any compile.
BOOL_OPTIONS = ("enable_fp_fusion", "sched4reg", "enable_reflect_ftz", "launch_cooperative_grid", "launch_pdl", "clc",
                "debug", "sanitize_overflow", "allow_flush_denorm", "fpsan_homomorphic_casts")
INT_OPTIONS = ("ptx_version", "min_shared_mem", "waves_per_eu", "matrix_instr_nonkdim", "kpack")


def check_launch_options(options: dict[str, Any] | None) -> dict[str, Any]:
    """{'maxnreg': 32, ...} checked: maxnreg 16..255 registers, num_ctas a power of two up to 16, an on/off
    option (enable_fp_fusion, launch_pdl, ...) a bool, a numeric one (waves_per_eu, ...) a whole number."""
    out = {k: v for k, v in (options or {}).items() if v is not None}
    for name, value in out.items():
        if name in BOOL_OPTIONS and not isinstance(value, bool):
            raise UsageError(f"{said('options', shown_text(value), key=name)}: {name} is on or off: give true or "
                             "false.", hint=f"For example: {said('options', True, key=name)}"
                             + (" (or --fp-fusion / --no-fp-fusion)."
                                if name == "enable_fp_fusion" and terms() == "cli" else "."),
                             data=field_data("options", shown_text(value), key=name))
        if name in INT_OPTIONS and (isinstance(value, bool) or not isinstance(value, int)
                                    or not 0 <= value < 2**31):
            raise UsageError(f"{said('options', shown_text(value), key=name)}: {name} takes a whole number from "
                             "0 up.", hint=f"For example: {said('options', 2, key=name)}.",
                             data=field_data("options", shown_text(value), key=name))
    maxnreg = out.get("maxnreg")
    if maxnreg is not None and not (isinstance(maxnreg, int) and 16 <= maxnreg <= 255):
        raise UsageError(f"{said('options', maxnreg, key='maxnreg')}: a register limit per thread from 16 to 255.",
                         hint=f"e.g. {said('options', 128, key='maxnreg')} (ptxas rounds it to what the target "
                              "allows).", data=field_data("options", maxnreg, key="maxnreg"))
    ctas = out.get("num_ctas")
    if ctas is not None and ctas not in (1, 2, 4, 8, 16):
        raise UsageError(f"{said('options', ctas, key='num_ctas')} is not a power of two from 1 to 16.",
                         data=field_data("options", ctas, key="num_ctas"),
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
    checked_arch(req)
    return req


def checked_arch(req: Request) -> str | None:
    """check_request's checks, in its order; the arch the request names, canonical (None when it names none).
    pipeline/config.resolve keeps the answer, so that the arch is canonicalised once."""
    if req.num_warps is not None and req.num_warps not in WARPS:
        raise UsageError(f"{said('num_warps', req.num_warps)} is not a power of two from 1 to 32.",
                         hint="Use 1, 2, 4, 8, 16 or 32.", data=field_data("num_warps", req.num_warps))
    if req.num_stages is not None and req.num_stages < 1:
        raise UsageError(f"{said('num_stages', req.num_stages)} must be at least 1.",
                         hint="Use 1 (no pipelining) or more.", data=field_data("num_stages", req.num_stages))
    if req.block is not None and req.block < 1:
        raise UsageError(f"{said('block', req.block)}: a tile size is a positive whole number.",
                         hint=f"e.g. {said('block', 16)} (a power of two: tl.arange needs one).",
                         data=field_data("block", req.block))
    arch = None
    if req.arch is not None:
        if not req.arch.strip():
            raise UsageError(f"{said('arch')} is empty.", data=field_data("arch", req.arch),
                             hint=f"Name a target: {', '.join(ARCHES)}; or leave {said('arch')} out for the local "
                                  "GPU's (else sm_90a).")
        arch = canonical_arch(req.arch)
    if req.shape is not None:
        parse_shape(req.shape)
    if req.dtype is not None:
        canonical_dtype(req.dtype)
    for name, text in (req.args or {}).items():
        check_arg_text(name, text)
    return arch


@dataclass(frozen=True)
class Loaded:
    spec: KernelSpec
    jit_fn: Any           # the JITFunction
    obj: Any              # what the file defines (may be an Autotuner)
    example: dict | None  # the EXAMPLES entry, if any
    launch: dict | None   # what the example's launch function returned


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
    return path, namespace, py.__name__, obj, fn


def load_for_spec(spec: KernelSpec) -> tuple[Any, Callable | None]:
    """Re-find the JITFunction for a spec (e.g. in a worker process): its file is imported (a kernel a Python
    caller handed over travels as Loaded.jit_fn instead, so its file is never run again)."""
    path = Path(spec.file)
    if not path.is_file():
        raise NotFoundError(f"No such file: {spec.file}", hint="The kernel file has moved; recompile from the new path.")
    module = load_module(path, spec.arch if spec.arch in ARCHES else None, getattr(spec, "gpu", None))
    _, _, fn = find_kernel(module, path, spec.kernel)
    return fn
