"""Argument and constexpr values as the command line and EXAMPLES spell them: dtypes, arches, tensors
(`fp16[32,32]`, `*fp16`, `desc(...)`), scalars and shapes, parsed and checked (a bad one: UsageError).

Nothing here imports triton or torch.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Any

from tritonscope.core.dtypes import DTYPE_TABLE, lookup as dtype_lookup
from tritonscope.core.errors import NotFoundError, UsageError, close_matches
from tritonscope.core.model import ARCH_ALIASES, ARCHES
from tritonscope.core.words import field_data, said

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


def check_number_text(field: str, name: str, text: Any, value: Any) -> Any:
    """`value`, parsed from `text` (a -c or --arg value), unless the number as written is not the value read:
    '1e999' reads as inf, '-1e999' as -inf, '1e-999' as 0.0 (a value silently replaced), and an integer of
    more than 4300 digits is not read at all (Python's limit).  Those are a UsageError naming the option,
    before anything loads or compiles.  A value that is no text (the Python API's float('inf')) is kept."""
    if not isinstance(text, str) or re.fullmatch(r"\s*(['\"]).*\1\s*", text, re.S):  # a quoted string is kept
        return value
    why = None
    written = text.strip().replace("_", "")
    if isinstance(value, float) and not math.isfinite(value):
        why = f"the number is beyond a 64-bit float's range (it would be read as {value})"
    elif isinstance(value, float) and value == 0.0 and re.search(r"[1-9]", written.lower().partition("e")[0]):
        why = "the number is below a 64-bit float's smallest (it would be read as 0.0)"
    elif isinstance(value, str) and re.fullmatch(r"[+-]?\d+", written) and len(written.lstrip("+-")) > 4300:
        why = f"the integer has {len(written.lstrip('+-'))} digits; Python reads at most 4300"
    if why is None:
        return value
    raise UsageError(f"{said(field, shown_text(text.strip(), 40), key=name)}: {why}.",
                     hint="Give the value the launch passes, written out as a number in range (e.g. 16, 0.5, 1e30).",
                     data=field_data(field, shown_text(text.strip(), 40), key=name))


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
        if what == "constexpr":  # '1e999' (inf): refused with the other values, before a GPU is looked for
            check_number_text("constexprs", name, value.strip(), parse_constexpr(value.strip()))
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
    value = check_number_text("args", name, text, value)  # '1e999' would be inf, '1e-999' 0.0
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
        raise UsageError(f"Bad shape {shown_text(text)!r}.", hint="Write it like 32x32x32 (M x N x K for matmuls).",
                         data=field_data("shape", shown_text(text)))
    return dims
