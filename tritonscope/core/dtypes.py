"""Every tensor dtype Triton has, in each spelling: Triton's own, triton.language's and torch's.

One row per dtype, the one place that maps a Triton dtype to torch's (the CLI's `--arg lock=u32[64]`,
`-c` dtype constexprs, the Python API's tensors, the stand-in tensors' dtypes and `run`/`tune`'s real
tensors all read it).

The rows are Triton's: `name` is the type string Triton's specializer writes in a signature (`*u32`,
`*fp8e4b8`), `tl` the triton.language attribute (`tl.uint32`, `tl.float8e4b8`) and `torch` the torch dtype
that specializes to it (`torch.float8_e4m3fnuz` -> `fp8e4b8`, Triton's `type_canonicalisation_dict`).
They are written out here rather than read from Triton at run time because a warm `compile` never
imports triton (0.15-0.2 s), and this table is read before the result cache is asked;
tests/test_dtypes.py checks every row against the installed Triton's `tl.dtype` type lists and its
specializer's mapping, so a dtype Triton adds fails a test instead of drifting.

Nothing here imports triton or torch.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Dtype:
    """One tensor dtype: 'u32' is tl.uint32 and torch.uint32; 'fp8e4b8' is tl.float8e4b8 and torch.float8_e4m3fnuz."""

    name: str            # tritonscope's and Triton's signature spelling: 'u32' (`*u32`), 'fp8e4b8'
    tl: str              # triton.language's attribute: 'uint32', 'float8e4b8'
    torch: str | None    # torch's attribute: 'uint32', 'float8_e4m3fnuz'; None where torch has none (fp8e4b15)
    bits: int            # bits per element (i1: 1, stored as a byte)


DTYPE_TABLE: tuple[Dtype, ...] = (
    #     name        triton.language  torch              bits
    Dtype("fp8e4nv", "float8e4nv", "float8_e4m3fn", 8),     # NVIDIA's e4m3 (sm_89+)
    Dtype("fp8e5", "float8e5", "float8_e5m2", 8),
    Dtype("fp8e4b8", "float8e4b8", "float8_e4m3fnuz", 8),   # the fnuz types MI300X (gfx942) kernels take
    Dtype("fp8e5b16", "float8e5b16", "float8_e5m2fnuz", 8),
    Dtype("fp8e4b15", "float8e4b15", None, 8),              # Triton's own e4m3 with bias 15 (no torch dtype)
    Dtype("fp16", "float16", "float16", 16),
    Dtype("bf16", "bfloat16", "bfloat16", 16),
    Dtype("fp32", "float32", "float32", 32),
    Dtype("fp64", "float64", "float64", 64),
    Dtype("i1", "int1", "bool", 1),                         # Triton 3.9's signature spells a bool tensor `*u1`
    Dtype("i8", "int8", "int8", 8),
    Dtype("i16", "int16", "int16", 16),
    Dtype("i32", "int32", "int32", 32),
    Dtype("i64", "int64", "int64", 64),
    Dtype("u8", "uint8", "uint8", 8),
    Dtype("u16", "uint16", "uint16", 16),
    Dtype("u32", "uint32", "uint32", 32),
    Dtype("u64", "uint64", "uint64", 64),
)

BY_NAME: dict[str, Dtype] = {d.name: d for d in DTYPE_TABLE}

# Every other spelling -> the name: triton.language's and torch's attribute names (the keys of Triton's own
# type_canonicalisation_dict), Triton 3.9's `u1` for bool, and the short forms people type.
ALIASES: dict[str, str] = {
    **{d.tl: d.name for d in DTYPE_TABLE},
    **{d.torch: d.name for d in DTYPE_TABLE if d.torch},
    "u1": "i1", "half": "fp16", "float": "fp32", "double": "fp64",
    "f16": "fp16", "f32": "fp32", "f64": "fp64",
}


def lookup(spelling: str) -> Dtype | None:
    """'u32', 'uint32', 'UINT32', 'float8_e4m3fnuz' -> the row; None for a word that is no dtype.

    A `tl.`, `triton.language.` or `torch.` prefix is the caller's to strip (a prefixed word is certainly
    meant as a dtype; a bare one may be a string constexpr)."""
    key = spelling.strip().lower()
    return BY_NAME.get(ALIASES.get(key, key))


def torch_name(name: str) -> str | None:
    """'u32' -> 'uint32', 'fp8e4b8' -> 'float8_e4m3fnuz': torch's attribute for a dtype of the table."""
    return BY_NAME[name].torch


def tl_name(name: str) -> str:
    """'u32' -> 'uint32', 'fp8e4nv' -> 'float8e4nv': triton.language's attribute."""
    return BY_NAME[name].tl


def dtype_bits(name: str) -> int | None:
    """Bits per element of a dtype of the table (None for a name it lacks)."""
    row = BY_NAME.get(name)
    return row.bits if row else None
