"""Parsing layout attribute strings: encodings, their fields and the checks on them."""

from __future__ import annotations

import re

from tritonscope.core.errors import InputFileError, UsageError, close_matches
from tritonscope.language.mlir_syntax import Attribute, MlirSyntaxError, alias_table, parse_attribute

# ==========================================================================

# Parsing layout attribute strings (the syntax is mlir_syntax's)
# ==========================================================================

# A parsed layout attribute: its short name ('blocked'), fields and nested parent.
Encoding = Attribute

SUPPORTED = ("blocked", "slice", "nvidia_mma", "dot_op", "swizzled_shared", "nvmma_shared", "amd_mfma", "amd_wmma",
             "linear", "generic_linear", "shared_linear", "partitioned_shared", "padded_shared",
             "amd_rotating_shared", "tensor_memory_encoding", "tensor_memory_scales_encoding")
# Encodings Triton prints that carry no element mapping of their own.
MEMORY_SPACES = ("shared_memory", "tensor_memory")
# Known to Triton: the rest of these are shown as text with a note, not drawn.
KNOWN_ENCODINGS = SUPPORTED + MEMORY_SPACES + ("shared", "nvmma_tensor")
# swizzlingByteWidth of #nvmma_shared -> (perPhase, maxPhase) of the XOR swizzle it stands for
NVMMA_SWIZZLE_PHASES = {32: (4, 2), 64: (2, 4), 128: (1, 8)}


def parse_encoding(text: str, aliases: dict[str, str] | None = None, source: str = "string", *,
                   known_only: bool = True) -> Encoding:
    """'#ttg.blocked<{...}>' -> Encoding; InputFileError showing where parsing stopped.

    known_only (a layout string typed by a user): a name that is no Triton
    encoding is probably a typo, and is refused with suggestions.  Layouts
    read from a compiled TTGIR pass known_only=False: whatever the compiler
    wrote parses, and describe() says when it is not drawn.
    """
    text = text.strip()
    if not text:
        raise InputFileError("Empty layout string.", hint="Give a layout such as '#ttg.blocked<{...}>'.")
    try:
        enc = parse_attribute(text, aliases or {}, source=source)
    except MlirSyntaxError as e:
        what = e.what + (" (give the layout inline, not by its alias)" if e.kind == "alias" else "")
        raise _malformed(e.text, e.pos, e.source, what) from None
    if not isinstance(enc, Attribute):  # an alias standing for a plain value: #x = [1, 2]
        raise _malformed(text, 0, source, "expected a layout attribute")
    if known_only:
        bad = enc
        while bad is not None and bad.name in KNOWN_ENCODINGS:
            bad = bad.parent
        if bad is not None:
            raise _malformed(text, max(0, text.find(bad.qualified)), source,
                             f"unknown encoding '{bad.qualified}'{close_matches(bad.name, KNOWN_ENCODINGS)}")
        problem = field_problem(enc)
        if problem:
            raise InputFileError(f"Invalid layout {source}: {problem}.", context=_window(text, 0)[0],
                                 hint="Orders are permutations of 0..rank-1; sizes, vec, perPhase and maxPhase are "
                                      "at least 1. Give the values Triton prints.")
    return enc


# Fields that must be permutations of 0..n-1, and fields whose entries must be at least 1.
_PERMUTATIONS = ("order", "CTAOrder", "warpOrder")
_POSITIVE_LISTS = ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "CTAsPerCGA", "CTASplitNum", "instrShape",
                   "tilesPerWarp", "shape")
_POSITIVE_INTS = ("vec", "perPhase", "maxPhase", "versionMajor", "blockM", "blockN", "colStride", "numPartitions",
                  "numGroups", "elementBitWidth", "CTASplitM", "CTASplitN", "version")
_NON_NEGATIVE_INTS = ("opIdx", "kWidth", "dim", "partitionDim", "swizzlingByteWidth", "versionMinor")


def field_problem(enc: Encoding) -> str | None:
    """Why the fields of `enc` (or of a parent) cannot describe a layout, or None.

    Triton's verifiers reject these (an order that is no permutation, a zero
    vec or perPhase); without this check they would reach the layout
    arithmetic as a division by zero or a missing dimension.
    """
    while enc is not None:
        p = enc.params
        for key in _PERMUTATIONS:
            v = p.get(key)
            if isinstance(v, list) and sorted(v) != list(range(len(v))):
                return f"#{enc.name} {key} = {_short(v)} is not a permutation of 0..{len(v) - 1}"
        for key in _POSITIVE_LISTS:
            v = p.get(key)
            if isinstance(v, list) and not all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in v):
                return f"#{enc.name} {key} = {_short(v)} needs whole numbers of at least 1"
        for key in _POSITIVE_INTS:
            v = p.get(key)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
                return f"#{enc.name} {key} = {_short(v)} needs a whole number of at least 1"
        for key in _NON_NEGATIVE_INTS:
            v = p.get(key)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
                return f"#{enc.name} {key} = {_short(v)} needs a whole number of at least 0"
        inner = p.get("partitionLayout")
        if isinstance(inner, Attribute):
            problem = field_problem(inner)
            if problem:
                return problem
        enc = enc.parent
    return None


def _window(text: str, pos: int) -> tuple[str, int]:
    """`text` as an error quotes it, and where `pos` falls in that: whole up to 200 characters; a longer one
    (a hostile 70 KB layout) 80 characters either side of `pos`, with '...' where it is cut."""
    at = min(pos, len(text))
    if len(text) <= 200:
        return text, at
    start, end = max(0, at - 80), min(len(text), at + 80)
    shown = ("..." if start else "") + text[start:end] + ("..." if end < len(text) else "")
    return shown, at - start + (3 if start else 0)


def _short(value) -> str:
    """A field's value as a message quotes it: a list of 20,000 sizes is cut, with its length."""
    text = str(value)
    if len(text) <= 80:
        return text
    return text[:60] + f"... ({len(value)} entries)" if isinstance(value, list) else text[:60] + "..."


def _malformed(text: str, pos: int, source: str, what: str) -> InputFileError:
    near = text[pos:pos + 20] or "end of input"
    shown, at = _window(text, pos)
    return InputFileError(
        f"Malformed layout {source}: {what} at character {pos + 1} (near {near!r}).",
        context=f"{shown}\n{' ' * at}^",
        hint="Write it as Triton prints it, e.g. '#ttg.blocked<{sizePerThread = [1, 2], "
             "threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>'.")


def aliases_of(ttgir: str) -> dict[str, str]:
    """Module-level attribute aliases of a TTGIR text ('blocked' -> its definition)."""
    return alias_table(ttgir)


def parse_shape(text: str) -> tuple[int, ...]:
    """'16x16' -> (16, 16); UsageError otherwise."""
    parts = [p.strip() for p in re.split(r"[x×,*]", text.strip().lower()) if p.strip()]
    try:
        shape = tuple(int(p) for p in parts)
    except ValueError:
        shape = ()
    if not shape or any(s <= 0 for s in shape):
        raise UsageError(f"Bad shape {_short(text)!r}.", hint="Write it as sizes joined by x, e.g. --shape 16x16.")
    return shape


# ==========================================================================


# Encodings of memory (a memdesc's), not of a tensor's registers.
MEMORY_LAYOUTS = ("swizzled_shared", "nvmma_shared", "shared_linear", "padded_shared", "amd_rotating_shared",
                  "partitioned_shared", "tensor_memory_encoding", "tensor_memory_scales_encoding")
