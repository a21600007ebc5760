"""Encodings -> who owns which element, and where it lands in shared or tensor memory.

Triton describes every layout as a *linear layout*: a list of basis vectors
per hardware index (register, lane, warp, block for tensors in registers;
offset, block for shared memory; row, col for Blackwell tensor memory).  The
element owned by (block b, warp w, lane l, register r) is the XOR of the
bases whose bits are set in b, w, l and r.  This module is a pure-Python port
of Triton's own conversions (lib/Dialect/TritonGPU/IR/LinearLayoutConversions.cpp,
written anew from the C++, not copied) for:

    #ttg.blocked, #ttg.slice, #ttg.nvidia_mma (v2, v3), #ttg.dot_op (NVIDIA MMA, AMD MFMA/WMMA and
    FMA parents), #ttg.amd_mfma, #ttg.amd_wmma (versions 1-3, 3.6 warpsPerCTA and 3.9 ctaLayout),
    #ttg.linear, #ttg.swizzled_shared, #ttg.nvmma_shared, #ttg.amd_rotating_shared,
    #ttg.shared_linear, #ttg.padded_shared (its linear part; the padding is applied on top),
    #ttng.tensor_memory_encoding, #ttng.tensor_memory_scales_encoding,

each also spread over several CTAs (CGALayout / CTAsPerCGA: the block bases).
It never imports Triton: tests/test_layouts.py and tests/test_layout_corpus.py
compare it basis by basis with Triton's own conversion (run in a child
process, triton_api.linear_layouts_from_triton), on the samples' TTGIR and on
the encodings of Triton's lit tests.  Anything this module cannot reproduce
exactly is reported as text plus a note ("not drawn"), never guessed.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from tritonscope.errors import InputFileError, UsageError, close_matches
from tritonscope.mlir_syntax import Attribute, MlirSyntaxError, alias_table, find_types, parse_attribute

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
            raise InputFileError(f"Invalid layout {source}: {problem}.", context=text,
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
                return f"#{enc.name} {key} = {v} is not a permutation of 0..{len(v) - 1}"
        for key in _POSITIVE_LISTS:
            v = p.get(key)
            if isinstance(v, list) and not all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in v):
                return f"#{enc.name} {key} = {v} needs whole numbers of at least 1"
        for key in _POSITIVE_INTS:
            v = p.get(key)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 1):
                return f"#{enc.name} {key} = {v} needs a whole number of at least 1"
        for key in _NON_NEGATIVE_INTS:
            v = p.get(key)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
                return f"#{enc.name} {key} = {v} needs a whole number of at least 0"
        inner = p.get("partitionLayout")
        if isinstance(inner, Attribute):
            problem = field_problem(inner)
            if problem:
                return problem
        enc = enc.parent
    return None


def _malformed(text: str, pos: int, source: str, what: str) -> InputFileError:
    caret = " " * min(pos, len(text)) + "^"
    near = text[pos:pos + 20] or "end of input"
    return InputFileError(
        f"Malformed layout {source}: {what} at character {pos + 1} (near {near!r}).",
        context=f"{text}\n{caret}",
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
        raise UsageError(f"Bad shape {text!r}.", hint="Write it as sizes joined by x, e.g. --shape 16x16.")
    return shape


# ==========================================================================
# Linear layouts
# ==========================================================================


def _log2(n: int) -> int:
    if n <= 0 or n & (n - 1):
        raise LayoutError(f"{n} is not a power of two; linear layouts need power-of-two sizes")
    return n.bit_length() - 1


class LayoutError(Exception):
    """This encoding/shape pair has no linear layout we can state truthfully."""


class LinearLayout:
    """Triton's LinearLayout: in-dim -> list of bases, each a tuple over out dims.

    Mirrors include/triton/Tools/LinearLayout.h closely enough to reproduce
    its bases exactly (order included), which is what the cross-check tests.
    """

    cta_tile: list[int] | None = None

    def __init__(self, bases: dict[str, list[tuple[int, ...]]], outs: list[tuple[str, int]]):
        self.bases = {k: [tuple(b) for b in v] for k, v in bases.items()}
        self.outs = list(outs)

    # -- construction -----------------------------------------------------
    @classmethod
    def from_bases(cls, bases: dict[str, list], out_names: list[str]) -> "LinearLayout":
        """Out-dim sizes inferred as the smallest power of two covering every basis."""
        sizes = []
        for i, _ in enumerate(out_names):
            acc = 0
            for bs in bases.values():
                for b in bs:
                    acc |= b[i]
            sizes.append(1 << acc.bit_length())
        return cls(bases, list(zip(out_names, sizes)))

    @classmethod
    def empty(cls) -> "LinearLayout":
        return cls({}, [])

    @classmethod
    def identity1d(cls, size: int, in_dim: str, out_dim: str) -> "LinearLayout":
        return cls({in_dim: [(1 << i,) for i in range(_log2(size))]}, [(out_dim, size)])

    @classmethod
    def zeros1d(cls, size: int, in_dim: str, out_dim: str) -> "LinearLayout":
        return cls({in_dim: [(0,) for _ in range(_log2(size))]}, [(out_dim, 1)])

    # -- queries ----------------------------------------------------------
    @property
    def out_names(self) -> list[str]:
        return [n for n, _ in self.outs]

    def out_size(self, name: str) -> int:
        return dict(self.outs).get(name, 1)

    def in_size(self, name: str) -> int:
        return 1 << len(self.bases.get(name, []))

    def apply(self, **ins: int) -> tuple[int, ...]:
        out = [0] * len(self.outs)
        for dim, value in ins.items():
            for i, b in enumerate(self.bases.get(dim, [])):
                if value >> i & 1:
                    out = [o ^ x for o, x in zip(out, b)]
        return tuple(out)

    # -- algebra ----------------------------------------------------------
    def __mul__(self, outer: "LinearLayout") -> "LinearLayout":
        inner = self
        in_dims = list(inner.bases) + [d for d in outer.bases if d not in inner.bases]
        out_dims = inner.out_names + [d for d in outer.out_names if d not in inner.out_names]
        shift = {d: _log2(inner.out_size(d)) for d in out_dims}
        bases: dict[str, list[tuple[int, ...]]] = {}
        for d in in_dims:
            rows = []
            for b in inner.bases.get(d, []):
                m = dict(zip(inner.out_names, b))
                rows.append(tuple(m.get(o, 0) for o in out_dims))
            for b in outer.bases.get(d, []):
                m = dict(zip(outer.out_names, b))
                rows.append(tuple(m.get(o, 0) << shift[o] for o in out_dims))
            bases[d] = rows
        outs = [(o, inner.out_size(o) * outer.out_size(o)) for o in out_dims]
        return LinearLayout(bases, outs)

    def transpose_outs(self, names: list[str]) -> "LinearLayout":
        idx = [self.out_names.index(n) for n in names]
        return LinearLayout({k: [tuple(b[i] for i in idx) for b in v] for k, v in self.bases.items()},
                            [self.outs[i] for i in idx])

    def not_smaller_than(self, shape: dict[str, int]) -> "LinearLayout":
        """ensureLayoutNotSmallerThan: repeat along registers until each dim covers `shape`."""
        ret = self
        for name in self.out_names:
            actual, desired = self.out_size(name), shape[name]
            if actual < desired:
                ret = ret * LinearLayout.identity1d(desired // actual, "register", name)
        return ret

    def not_smaller_than_ordered(self, names: list[str], sizes: list[int]) -> "LinearLayout":
        """The overload taking (outDimNames, shape): iterates in the given order, in-dim = first in-dim."""
        ret = self
        in_dim = next(iter(self.bases))
        for name, desired in zip(names, sizes):
            actual = ret.out_size(name)
            if actual < desired:
                ret = ret * LinearLayout.identity1d(desired // actual, in_dim, name)
        return ret

    def not_larger_than(self, shape: dict[str, int], *, drop_registers: bool = False) -> "LinearLayout":
        """ensureLayoutNotLargerThan: components that step past `shape` become 0 (those
        threads hold copies).  With drop_registers, a register basis that became all
        zero is removed instead (Triton does this for #blocked: no register holds a copy)."""
        limits = [min(s, shape[n]) for n, s in self.outs]
        bases: dict[str, list[tuple[int, ...]]] = {}
        for dim, v in self.bases.items():
            rows = []
            for b in v:
                nb = tuple(0 if x >= lim else x for x, lim in zip(b, limits))
                if drop_registers and dim == "register" and any(b) and not any(nb):
                    continue
                rows.append(nb)
            bases[dim] = rows
        return LinearLayout(bases, list(zip(self.out_names, limits)))

    def compose_drop(self, dim: int) -> "LinearLayout":
        """Drop out dim `dim` (what SliceEncodingAttr does via compose)."""
        names = [f"dim{i}" for i in range(len(self.outs) - 1)]
        sizes = [s for i, (_, s) in enumerate(self.outs) if i != dim]
        bases = {k: [tuple(x for i, x in enumerate(b) if i != dim) for b in v] for k, v in self.bases.items()}
        return LinearLayout(bases, list(zip(names, sizes)))

    def to_dict(self) -> dict[str, Any]:
        return {"bases": {k: [list(b) for b in v] for k, v in self.bases.items()},
                "out_dims": [[n, s] for n, s in self.outs]}


def _std(rank: int) -> list[str]:
    return [f"dim{i}" for i in range(rank)]


def identity_standard_nd(in_dim: str, shape: list[int], order: list[int]) -> LinearLayout:
    ret = LinearLayout.empty()
    for d in order:
        ret = ret * LinearLayout.identity1d(shape[d], in_dim, f"dim{d}")
    # Out dims stay in `order` (minor first): combine_with_shape repeats registers in that order.
    return ret


def _id(size: int, in_dim: str, out_dim: str) -> LinearLayout:
    """identity1D that, like Triton's, is empty for a size below 1 (a quotient that came out 0)."""
    return LinearLayout.identity1d(max(1, size), in_dim, out_dim)


def _cga_layout(enc: Encoding, rank: int) -> LinearLayout | None:
    """makeCgaLayout: block id -> which CTA-sized piece of the tensor it holds, in pieces; None for one CTA.

    Triton 3.9 writes the CGA as its bases (`CGALayout = [[1, 0]]`: block bit 0
    steps one piece along dim 0; a zero basis is a CTA holding a copy).  Triton
    3.6 writes CTAsPerCGA / CTASplitNum / CTAOrder: CTASplitNum pieces per dim,
    CTAsPerCGA / CTASplitNum CTAs sharing each piece.
    """
    p = enc.params
    bases = p.get("CGALayout", p.get("cgaLayout"))
    if isinstance(bases, list) and bases:
        rows = [tuple(int(x) for x in b) for b in bases]
        if any(len(b) != rank for b in rows):
            raise ShapeRankError(f"#{enc.name} has a rank-{len(rows[0])} CGALayout but the shape has rank {rank}")
        return LinearLayout.from_bases({"block": rows}, _std(rank))
    if "CTAsPerCGA" in p:
        per = _ints(enc, "CTAsPerCGA")
        split = _ints(enc, "CTASplitNum") if "CTASplitNum" in p else list(per)
        order = _ints(enc, "CTAOrder") if "CTAOrder" in p else list(range(rank - 1, -1, -1))
        if len(per) != rank:
            raise ShapeRankError(f"#{enc.name} is a rank-{len(per)} layout but the shape has rank {rank}")
        if all(x == 1 for x in per):
            return None
        ret = LinearLayout.empty()
        for d in order:
            if per[d] % split[d]:
                raise LayoutError(f"#{enc.name}: CTAsPerCGA {per} is not a multiple of CTASplitNum {split}")
            ret = ret * LinearLayout.identity1d(split[d], "block", f"dim{d}")
            ret = ret * LinearLayout.zeros1d(per[d] // split[d], "block", f"dim{d}")
        return ret.transpose_outs(_std(rank))
    return None


def ctas_of(enc: Encoding) -> int:
    """How many CTAs (blocks of a cluster) the layout spreads over: 1 for the usual single-CTA layouts."""
    try:
        rank = _rank_hint(enc)
        cga = _cga_layout(enc, rank) if rank else None
    except LayoutError:
        return 1
    return cga.in_size("block") if cga is not None else 1


def _rank_hint(enc: Encoding) -> int:
    for key in ("order", "warpsPerCTA", "sizePerThread", "CTAsPerCGA"):
        v = enc.params.get(key)
        if isinstance(v, list) and v:
            return len(v)
    v = enc.params.get("CGALayout")
    if isinstance(v, list) and v and isinstance(v[0], list):
        return len(v[0])
    if enc.parent is not None:
        r = _rank_hint(enc.parent)
        return r - 1 if enc.name == "slice" and r else r
    return 0


def combine_with_shape(cta: LinearLayout, shape: tuple[int, ...], *, cga: LinearLayout | None = None,
                       drop_registers: bool = False) -> LinearLayout:
    """combineCtaCgaWithShape: fit one CTA's layout to its piece of `shape`, then lay the CTAs out.

    One CTA (cga None): the CTA layout repeats along registers until it covers
    the shape, and steps past the shape become copies.  Several CTAs: each
    CTA covers shape / (pieces along each dim), and the block bases say which
    piece each CTA holds.
    """
    labeled = {f"dim{i}": s for i, s in enumerate(shape)}
    tile = [cta.out_size(f"dim{i}") for i in range(len(shape))]
    if cga is None:
        cta = cta.not_smaller_than(labeled).not_larger_than(labeled, drop_registers=drop_registers)
        ret = cta.transpose_outs(_std(len(shape)))
    else:
        cga = cga.not_larger_than(labeled).transpose_outs(cta.out_names)
        per_cta = {d: max(1, labeled[d] // cga.out_size(d)) for d in cta.out_names}
        cta = cta.not_smaller_than(per_cta).not_larger_than(per_cta, drop_registers=drop_registers)
        ret = (cta * cga).transpose_outs(_std(len(shape)))
    ret.cta_tile = tile  # what one pass of all warps covers: wrapping/replication vs the shape
    return ret


def _shape_per_cta(shape: tuple[int, ...], cga: LinearLayout | None) -> tuple[int, ...]:
    if cga is None:
        return tuple(shape)
    return tuple(max(1, s // cga.out_size(f"dim{i}")) for i, s in enumerate(shape))


def _matrix_order(rank: int, row_major: bool) -> list[int]:
    order = list(range(rank - 1, -1, -1))
    if not row_major:
        order[0], order[1] = order[1], order[0]
    return order


def _mma_tile(tile: list[int], k_width: int, order: list[int], rep_order: list[int]) -> LinearLayout:
    """nvidiaMmaTile: registers and lanes of one m16n8 (or m16nN) fragment."""
    rank = len(rep_order)
    ll = identity_standard_nd("register", [1] * rank, rep_order)
    inner, outer = order[0], order[1]
    m, n = tile[outer], tile[inner]
    if m % 8 or n % (k_width * 4):
        raise LayoutError(f"an mma tile of {tile} does not split into 8 rows x {k_width * 4} columns")
    for size, ind, d in ((k_width, "register", inner), (4, "lane", inner), (8, "lane", outer),
                         (m // 8, "register", outer), (n // (k_width * 4), "register", inner)):
        ll = ll * LinearLayout.identity1d(size, ind, f"dim{d}")
    return ll


def _ints(enc: Encoding, key: str) -> list[int]:
    v = enc.params.get(key)
    if not isinstance(v, list) or not all(isinstance(x, int) for x in v):
        raise LayoutError(f"#{enc.name} needs {key} = [ints]")
    return v


def _int(enc: Encoding, key: str, default: int | None = None) -> int:
    v = enc.params.get(key, default)
    if not isinstance(v, int) or isinstance(v, bool):
        raise LayoutError(f"#{enc.name} needs {key} = an integer")
    return v


def _bases(enc: Encoding, key: str, rank: int) -> list[tuple[int, ...]]:
    """A list of basis vectors (`register = [[0, 1], [1, 0]]`), each of the layout's rank."""
    v = enc.params.get(key, [])
    if isinstance(v, dict):  # ctaLayout = {warp = [[...]]}
        v = []
    if not isinstance(v, list) or not all(isinstance(b, list) and all(isinstance(x, int) for x in b) for b in v):
        raise LayoutError(f"#{enc.name} needs {key} = [[ints], ...]")
    if any(len(b) != rank for b in v):
        raise ShapeRankError(f"#{enc.name} is a rank-{len(v[0])} layout but the shape has rank {rank}")
    return [tuple(b) for b in v]


def blocked_drops_copies(series: tuple[int, int] | None) -> bool:
    """Whether #blocked removes register bases that only hold copies (shape smaller
    than sizePerThread).  Triton 3.9 removes them; 3.6 keeps them as zero bases.
    Same owners either way; only register numbering differs."""
    return series is None or series >= (3, 9)


def linear_layout(enc: Encoding, shape: tuple[int, ...], series: tuple[int, int] | None = None) -> LinearLayout:
    """The exact linear layout of `enc` on `shape` (Triton's toLinearLayout).

    Distributed layouts: in dims register/lane/warp (and block when the layout
    spreads over several CTAs).  Shared: offset (and block).  Tensor memory:
    row/col.  `series` is the Triton release whose numbering to follow
    (default: the installed one).  Raises LayoutError where the encoding is
    not reproduced exactly here.
    """
    if series is None:
        from tritonscope import triton_api

        series = triton_api.triton_series()
    shape = tuple(int(s) for s in shape)
    for s in shape:
        _log2(s)
    problem = field_problem(enc)
    if problem:
        raise LayoutError(problem)
    build = _BUILDERS.get(enc.name)
    if build is None:
        raise LayoutError(f"#{enc.name} is not supported (tritonscope draws {', '.join(SUPPORTED)})")
    return build(enc, shape, series)


def _blocked(enc: Encoding, shape: tuple[int, ...], series) -> LinearLayout:
    spt, tpw, wpc, order = (_ints(enc, k) for k in ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order"))
    _check_rank(enc, len(shape), len(order))
    cta = (identity_standard_nd("register", spt, order) * identity_standard_nd("lane", tpw, order)
           * identity_standard_nd("warp", wpc, order))
    return combine_with_shape(cta, shape, cga=_cga_layout(enc, len(shape)), drop_registers=blocked_drops_copies(series))


def _slice(enc: Encoding, shape: tuple[int, ...], series) -> LinearLayout:
    rank = len(shape)
    dim = _int(enc, "dim")
    parent = enc.parent
    if parent is None:
        raise LayoutError("#slice needs a parent layout")
    if not 0 <= dim <= rank:
        raise LayoutError(f"#slice dim = {dim} is out of range for a rank-{rank} shape")
    pshape = shape[:dim] + (1,) + shape[dim:]
    pll = linear_layout(parent, pshape, series)
    if "offset" in pll.bases or "row" in pll.bases:
        raise LayoutError("#slice of a memory layout")
    sl = pll.compose_drop(dim)
    sl.bases["register"] = [b for b in sl.bases.get("register", []) if any(b)]
    ret = LinearLayout(sl.bases, sl.outs)
    tile = getattr(pll, "cta_tile", None)
    if tile:
        ret.cta_tile = [t for i, t in enumerate(tile) if i != dim]
    return ret


def _nvidia_mma(enc: Encoding, shape: tuple[int, ...], series) -> LinearLayout:
    rank = len(shape)
    major = _int(enc, "versionMajor")
    wpc, instr = _ints(enc, "warpsPerCTA"), _ints(enc, "instrShape")
    _check_rank(enc, rank, len(wpc))
    if major == 2:
        tile = list(instr)
    elif major == 3:
        tile = list(instr[:2])
    else:
        raise LayoutError(f"#nvidia_mma version {major} is not drawn (only 2 and 3)")
    if rank not in (2, 3) or len(tile) != rank:
        raise LayoutError(f"#nvidia_mma instrShape {instr} does not fit a rank-{rank} shape")
    order = _matrix_order(rank, True)
    cta = _mma_tile(tile, 2, order, _matrix_order(rank, True))
    warp = identity_standard_nd("warp", wpc, _matrix_order(rank, major != 3)).transpose_outs(cta.out_names)
    return combine_with_shape(cta * warp, shape, cga=_cga_layout(enc, rank))


def _dot_op(enc: Encoding, shape: tuple[int, ...], series) -> LinearLayout:
    parent = enc.parent
    if parent is None:
        raise LayoutError("#dot_op needs a parent layout")
    builder = {"nvidia_mma": _nvidia_dot, "amd_mfma": _mfma_dot, "amd_wmma": _wmma_dot,
               "blocked": _fma_dot}.get(parent.name)
    if builder is None:
        raise LayoutError(f"#dot_op with a #{parent.name} parent is not drawn")
    _int(enc, "opIdx")
    return builder(enc, parent, shape, series)


def _nvidia_dot(enc: Encoding, parent: Encoding, shape: tuple[int, ...], series) -> LinearLayout:
    rank = len(shape)
    op, k_width = _int(enc, "opIdx"), _int(enc, "kWidth", 0)
    major = _int(parent, "versionMajor")
    wpc = _ints(parent, "warpsPerCTA")
    _check_rank(parent, rank, len(wpc))
    if rank not in (2, 3):
        raise LayoutError("only rank-2 and rank-3 #dot_op layouts are drawn")
    if k_width <= 0:
        raise LayoutError("#dot_op without kWidth has no register layout")
    if major == 3 and op == 1:
        raise LayoutError("a Hopper (mma v3) B operand is read from shared memory, not registers")
    is_a = op == 0
    tile = [1] * rank
    if series is not None and series >= (3, 9):
        # 3.9: the A tile follows the accumulator's M (8 for the fp64 m8n8k4 mma, whose K tile is 4 per kWidth)
        instr = _ints(parent, "instrShape")
        instr_m = instr[rank - 2] if len(instr) >= rank - 1 else 16
        k_mult = 4 if instr_m == 8 else 8
    else:
        instr_m, k_mult = 16, 8
    if is_a:
        tile[rank - 2], tile[rank - 1] = instr_m, k_width * k_mult
    else:
        tile[rank - 2], tile[rank - 1] = k_width * k_mult, 8
    order = _matrix_order(rank, is_a)  # getOrderForDotOperand(kContig=true): K fastest
    cta = _mma_tile(tile, k_width, order, order)
    k_dim = rank - 1 if is_a else rank - 2
    warp = _broadcast_k("warp", wpc, _matrix_order(rank, major != 3), k_dim)
    return combine_with_shape(cta * warp.transpose_outs(cta.out_names), shape, cga=_dot_cga(parent, rank, k_dim))


def _dot_cga(parent: Encoding, rank: int, k_dim: int) -> LinearLayout | None:
    """The CGA of a dot operand: the accumulator's, except that K is never split (each CTA holds all of K)."""
    cga = _cga_layout(parent, rank)
    if cga is None:
        return None
    pos = cga.out_names.index(f"dim{k_dim}")
    bases = {k: [tuple(0 if i == pos else x for i, x in enumerate(b)) for b in v] for k, v in cga.bases.items()}
    return LinearLayout(bases, [(n, 1 if i == pos else s) for i, (n, s) in enumerate(cga.outs)])


def _broadcast_k(in_dim: str, sizes: list[int], order: list[int], k_dim: int) -> LinearLayout:
    """broadcastedDotOperandLayout: warps (or lanes) step along M/N and hold copies along K."""
    ll = LinearLayout.empty()
    for d in order:
        maker = LinearLayout.zeros1d if d == k_dim else LinearLayout.identity1d
        ll = ll * maker(sizes[d], in_dim, f"dim{d}")
    return ll


def _fma_dot(enc: Encoding, parent: Encoding, shape: tuple[int, ...], series) -> LinearLayout:
    """fmaDotToLinearLayout: an operand of a dot done with FMAs on a #blocked accumulator."""
    rank = len(shape)
    op = _int(enc, "opIdx")
    spt, tpw, wpc, order = (_ints(parent, k) for k in ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order"))
    _check_rank(parent, rank, len(order))
    k_dim = rank - 1 if op == 0 else rank - 2
    thread = list(spt)
    thread[k_dim] = shape[k_dim]
    rep = [f"dim{d}" for d in order]
    cta = (identity_standard_nd("register", thread, order).transpose_outs(rep)
           * _broadcast_k("lane", tpw, order, k_dim).transpose_outs(rep)
           * _broadcast_k("warp", wpc, order, k_dim).transpose_outs(rep))
    return combine_with_shape(cta, shape, cga=_dot_cga(parent, rank, k_dim))


# --------------------------------------------------------------------------
# AMD: MFMA (CDNA) and WMMA (RDNA) accumulators and their operands
# --------------------------------------------------------------------------

AMD_WAVE = 64       # CDNA wavefront: MFMA layouts are for 64 lanes
RDNA_WAVE = 32      # WMMA layouts are for 32 lanes


def _amd_mfma(enc: Encoding, shape: tuple[int, ...], series) -> LinearLayout:
    """AMDMfmaEncodingAttr::toLinearLayout: one mDim x nDim MFMA result per wave, tiled N first."""
    rank = len(shape)
    wpc = _ints(enc, "warpsPerCTA")
    _check_rank(enc, rank, len(wpc))
    if rank not in (2, 3):
        raise LayoutError("only rank-2 and rank-3 #amd_mfma layouts are drawn")
    instr = _ints(enc, "instrShape")
    m_dim, n_dim = instr[0], instr[1]
    tpw = _ints(enc, "tilesPerWarp") if "tilesPerWarp" in enc.params else [1] * rank
    bits = _int(enc, "elementBitWidth", 32)
    transposed = bool(enc.params.get("isTransposed", False))
    batch = rank == 3
    m_i, n_i = int(batch), int(batch) + 1
    dim_m, dim_n = f"dim{m_i}", f"dim{n_i}"
    height = 1 if bits == 64 else 4            # consecutive results a lane holds
    tiles = m_dim * n_dim // (AMD_WAVE * height)
    for s in (m_dim, n_dim):
        _log2(s)
    if not transposed:
        # lanes along N first, then M; each lane holds `height` rows
        tile = (LinearLayout.identity1d(height, "register", dim_m)
                * (LinearLayout.identity1d(n_dim, "lane", dim_n) * _id(AMD_WAVE // n_dim, "lane", dim_m)))
        if tiles > 0:
            tile = tile * LinearLayout.identity1d(tiles, "register", dim_m)
    else:
        tile = (LinearLayout.identity1d(height, "register", dim_n)
                * (LinearLayout.identity1d(m_dim, "lane", dim_m) * _id(AMD_WAVE // m_dim, "lane", dim_n)))
        if tiles > 0:
            tile = tile * LinearLayout.identity1d(tiles, "register", dim_n)
    tile = tile.transpose_outs([dim_n, dim_m])
    # N-contiguous tiles across the whole tensor (the dot lowering expects that order)
    tile = tile * _id(tpw[n_i], "register", dim_n) * _id(wpc[n_i], "warp", dim_n)
    tile = tile * _id(shape[n_i] // (n_dim * wpc[n_i] * tpw[n_i]), "register", dim_n)
    tile = tile * _id(tpw[m_i], "register", dim_m) * _id(wpc[m_i], "warp", dim_m)
    if batch:
        tile = (tile * _id(1, "register", "dim0") * _id(1, "lane", "dim0") * _id(wpc[0], "warp", "dim0"))
    return combine_with_shape(tile, shape, cga=_cga_layout(enc, rank))


def _mfma_dot(enc: Encoding, parent: Encoding, shape: tuple[int, ...], series) -> LinearLayout:
    """mfmaDotToLinearLayout: kWidth consecutive K elements per lane, lanes along M (or N) then K."""
    rank = len(shape)
    op, k_width = _int(enc, "opIdx"), _int(enc, "kWidth", 0)
    if k_width <= 0:
        raise LayoutError("#dot_op without kWidth has no register layout")
    wpc = _ints(parent, "warpsPerCTA")
    _check_rank(parent, rank, len(wpc))
    instr = _ints(parent, "instrShape")
    m_dim, n_dim = instr[0], instr[1]
    tpw = _ints(parent, "tilesPerWarp") if "tilesPerWarp" in parent.params else [1] * rank
    k_i, nk_i = (rank - 1, rank - 2) if op == 0 else (rank - 2, rank - 1)
    non_k = m_dim if op == 0 else n_dim
    dim_k, dim_nk = f"dim{k_i}", f"dim{nk_i}"
    tile = (LinearLayout.identity1d(k_width, "register", dim_k)
            * (LinearLayout.identity1d(non_k, "lane", dim_nk) * _id(AMD_WAVE // non_k, "lane", dim_k)))
    k_tile = AMD_WAVE // non_k * k_width
    if (m_dim, n_dim, op) in ((64, 4, 0), (4, 64, 1)):
        tile = tile * LinearLayout.identity1d(16, "register", dim_k)
        k_tile *= 16
    if shape[k_i] > k_tile:
        tile = tile * LinearLayout.identity1d(shape[k_i] // k_tile, "register", dim_k)
    tile = tile * _id(tpw[nk_i], "register", dim_nk)
    tile = tile.transpose_outs([dim_k, dim_nk])
    if rank == 3:
        tile = tile * _id(1, "register", "dim0") * _id(1, "lane", "dim0")
    warp = identity_standard_nd("warp", wpc, _matrix_order(rank, True))
    return combine_with_shape(tile * warp, shape, cga=_dot_cga(parent, rank, k_i))


def _wmma_instr(enc: Encoding) -> list[int]:
    """instrShape (M, N, K) of a WMMA layout; 16x16x16 when the attribute leaves it out."""
    instr = _ints(enc, "instrShape") if "instrShape" in enc.params else [16, 16, 16]
    if len(instr) != 3:
        raise LayoutError(f"#amd_wmma instrShape {instr} is not [M, N, K]")
    return instr


def _wmma_tile(enc: Encoding, rank: int) -> LinearLayout:
    """AMDWmmaEncodingAttr::getTileLayout: one instruction's result over a 32-lane wave, in standard dims.

    Version 1: 8 rows apart by 2, lanes 16-31 the odd rows.  Versions 2/3: 8
    rows per lane, lanes 16-31 the next 8 rows; a 32x16 instruction holds a
    second 16x16 block in 4 more registers (16 rows further).
    """
    version = _int(enc, "version")
    if version not in (1, 2, 3):
        raise LayoutError(f"#amd_wmma version {version} is not drawn (1 to 3)")
    transposed = bool(enc.params.get("isTranspose", enc.params.get("isTransposed", False)))
    thread_order = _matrix_order(rank, not transposed)
    names = [f"dim{thread_order[0]}", f"dim{thread_order[1]}"]
    if version == 1:
        reg, lane = [(0, 2), (0, 4), (0, 8)], [(1, 0), (2, 0), (4, 0), (8, 0), (0, 1)]
    else:
        instr = _wmma_instr(enc)
        reg = [(0, 1), (0, 2), (0, 4)] + ([(0, 16)] if instr[:2] == [32, 16] else [])
        lane = [(1, 0), (2, 0), (4, 0), (8, 0), (0, 8)]
    tile = LinearLayout.from_bases({"register": reg, "lane": lane}, names)
    if rank == 3:
        tile = tile * _id(1, "register", "dim0") * _id(1, "lane", "dim0")
    return tile.transpose_outs(_std(rank))


def _wmma_cta(enc: Encoding, rank: int) -> LinearLayout:
    """The WMMA warp (and register-repeat) arrangement, in instruction tiles, over standard dims.

    Triton 3.9 writes it as `ctaLayout = {warp = [[...]], register = [[...]]}`;
    3.6 as warpsPerCTA (chooseWmmaCTALinearLayout: warps in row-major order).
    """
    cta = enc.params.get("ctaLayout")
    if isinstance(cta, dict):
        ll = {}
        for key in ("register", "warp"):
            v = cta.get(key, [])
            if not isinstance(v, list) or any(not isinstance(b, list) or not all(isinstance(x, int) for x in b)
                                              for b in v):
                raise LayoutError(f"#amd_wmma needs ctaLayout {key} = [[ints], ...]")
            if any(len(b) != rank for b in v):
                raise ShapeRankError(f"#amd_wmma is a rank-{len(v[0])} layout but the shape has rank {rank}")
            ll[key] = [tuple(b) for b in v]
        return LinearLayout.from_bases(ll, _std(rank))
    wpc = _ints(enc, "warpsPerCTA")
    if len(wpc) != rank:
        raise ShapeRankError(f"#amd_wmma is a rank-{len(wpc)} layout but the shape has rank {rank}")
    return identity_standard_nd("warp", wpc, _matrix_order(rank, True)).transpose_outs(_std(rank))


def _amd_wmma(enc: Encoding, shape: tuple[int, ...], series) -> LinearLayout:
    """AMDWmmaEncodingAttr::toLinearLayout: the instruction tile times the warp arrangement, repeated."""
    rank = len(shape)
    if rank not in (2, 3):
        raise LayoutError("only rank-2 and rank-3 #amd_wmma layouts are drawn")
    cta = _wmma_tile(enc, rank) * _wmma_cta(enc, rank)
    rep = [f"dim{d}" for d in _matrix_order(rank, True)]
    return combine_with_shape(cta.transpose_outs(rep), shape, cga=_cga_layout(enc, rank))


def _wmma_dot(enc: Encoding, parent: Encoding, shape: tuple[int, ...], series) -> LinearLayout:
    """wmmaDotOperandToLinearLayout: kWidth K elements per lane; version 1 lanes 16-31 repeat lanes 0-15.

    The accumulator's warp arrangement with its K component removed (warps
    along K hold copies; register repeats along K only are dropped).  With
    isTranspose, an asymmetric (32x16) instruction swaps which operand has the 32.
    """
    rank = len(shape)
    if rank not in (2, 3):
        raise LayoutError("only rank-2 and rank-3 #dot_op layouts are drawn")
    op, k_width = _int(enc, "opIdx"), _int(enc, "kWidth", 0)
    if k_width <= 0:
        raise LayoutError("#dot_op without kWidth has no register layout")
    version = _int(parent, "version")
    instr = _wmma_instr(parent)
    order = _matrix_order(rank, op == 0)  # getOrderForDotOperand(kContig=true): [k, nonk(, batch)]
    dim_k, dim_nk = f"dim{order[0]}", f"dim{order[1]}"
    transposed = bool(parent.params.get("isTranspose", parent.params.get("isTransposed", False)))
    eff = 1 - op if transposed and instr[0] != instr[1] else op
    non_k = instr[0] if eff == 0 else instr[1]
    depth = RDNA_WAVE // 16
    tile = LinearLayout.identity1d(k_width, "register", dim_k) * LinearLayout.identity1d(16, "lane", dim_nk)
    tile = tile * (LinearLayout.zeros1d(depth, "lane", dim_k) if version == 1
                   else LinearLayout.identity1d(depth, "lane", dim_k))
    tile = tile * _id(instr[2] // (depth * k_width), "register", dim_k)
    if non_k // 16 > 1:
        tile = tile * LinearLayout.identity1d(non_k // 16, "register", dim_nk)
    cta = _wmma_cta(parent, rank)
    kpos = cta.out_names.index(dim_k)
    bases = {k: [tuple(0 if i == kpos else x for i, x in enumerate(b)) for b in v] for k, v in cta.bases.items()}
    bases["register"] = [b for b in bases.get("register", []) if any(b)]
    cta = LinearLayout(bases, [(n, 1 if n == dim_k else s) for n, s in cta.outs])
    ll = (tile * cta).transpose_outs([f"dim{d}" for d in order])
    return combine_with_shape(ll, shape, cga=_dot_cga(parent, rank, order[0]))


# --------------------------------------------------------------------------
# Layouts that list their bases: #linear, #shared_linear, #padded_shared
# --------------------------------------------------------------------------


def _fit(ll: LinearLayout, shape: tuple[int, ...], in_dim: str) -> LinearLayout:
    """A layout given by its bases, fitted to `shape` the way Triton fits a CTA layout."""
    labeled = {f"dim{i}": s for i, s in enumerate(shape)}
    for n in _std(len(shape)):
        if n not in ll.out_names:
            ll = ll * LinearLayout({}, [(n, 1)])
    ll = ll.transpose_outs(_std(len(shape)))
    ret = ll.not_smaller_than(labeled) if in_dim == "register" else ll.not_smaller_than_ordered(
        _std(len(shape))[::-1], list(shape)[::-1])
    ret = ret.not_larger_than(labeled).transpose_outs(_std(len(shape)))
    ret.cta_tile = [ll.out_size(n) for n in _std(len(shape))]
    return ret


def _linear(enc: Encoding, shape: tuple[int, ...], series) -> LinearLayout:
    """LinearEncodingTrait::toLinearLayout (#linear, #generic_linear): the bases, fitted to `shape`.

    The bases cover some tile; Triton repeats it along registers until it
    covers the shape (dims in the layout's order: the dims its register bases
    step along first, then the rest from the last), and a basis stepping past
    the shape becomes a copy (0).  So a layout written for 32x16 used on 64x16
    holds twice the registers, as Triton's does.
    """
    rank = len(shape)
    bases = {k: _bases(enc, k, rank) for k in ("register", "lane", "warp", "block")}
    ll = LinearLayout.from_bases(bases, _std(rank))
    order: list[int] = []
    for b in bases["register"]:
        first = next((i for i, x in enumerate(b) if x), None)
        if first is not None and first not in order:
            order.append(first)
    order += [d for d in range(rank - 1, -1, -1) if d not in order]
    rep = [f"dim{d}" for d in order]
    labeled = {f"dim{i}": s for i, s in enumerate(shape)}
    ret = ll.transpose_outs(rep).not_smaller_than(labeled).not_larger_than(labeled, drop_registers=True)
    ret = ret.transpose_outs(_std(rank))
    ret.cta_tile = [ll.out_size(n) for n in _std(rank)]
    return ret


def _check_within(enc: Encoding, bases: dict[str, list[tuple[int, ...]]], shape: tuple[int, ...]) -> None:
    for v in bases.values():
        for b in v:
            if any(x >= s or x < 0 for x, s in zip(b, shape)):
                raise LayoutError(f"#{enc.name} has a basis {list(b)} outside the shape {list(shape)}")


def _shared_linear(enc: Encoding, shape: tuple[int, ...], series) -> LinearLayout:
    rank = len(shape)
    bases = {"offset": _bases(enc, "offset", rank), "block": _bases(enc, "block", rank)}
    _check_within(enc, bases, shape)
    return LinearLayout(bases, list(zip(_std(rank), shape)))


def padding_of(enc: Encoding) -> list[tuple[int, int]]:
    """#padded_shared<[64:+4, ...]>: (interval, padding) pairs, in elements."""
    pairs = enc.args[0] if enc.args else []
    return [(int(i), int(p)) for i, p in pairs]


def padded_offset(offset: int, padding: list[tuple[int, int]]) -> int:
    """Where a padded layout really puts linear offset `offset`: `padding` extra elements after every `interval`."""
    return offset + sum((offset // i) * p for i, p in padding)


def _padded_shared(enc: Encoding, shape: tuple[int, ...], series) -> LinearLayout:
    """The linear part of #padded_shared (the padding is applied on top: padded_offset)."""
    rank = len(shape)
    if not padding_of(enc):
        raise LayoutError("#padded_shared needs [interval:+padding] pairs")
    for i, p in padding_of(enc):
        _log2(i), _log2(p)
    if "offset" in enc.params:
        bases = {"offset": _bases(enc, "offset", rank), "block": _bases(enc, "block", rank)}
        ll = LinearLayout.from_bases(bases, _std(rank))
        return _fit(ll, shape, "offset")
    order, own = _ints(enc, "order"), _ints(enc, "shape")
    _check_rank(enc, rank, len(order))
    ll = identity_standard_nd("offset", own, order).transpose_outs(_std(rank))
    return _fit(ll, shape, "offset")


# --------------------------------------------------------------------------
# Shared memory with swizzles
# --------------------------------------------------------------------------


def _swizzled_shared(enc: Encoding, shape: tuple[int, ...], series, *, rotating: bool = False) -> LinearLayout:
    rank = len(shape)
    vec, per_phase, max_phase = _int(enc, "vec"), _int(enc, "perPhase"), _int(enc, "maxPhase")
    order = _ints(enc, "order")
    _check_rank(enc, rank, len(order))
    cga = _cga_layout(enc, rank)
    per_cta = _shape_per_cta(shape, cga)
    if rank == 1:
        return combine_with_shape(LinearLayout.identity1d(per_cta[0], "offset", "dim0"), shape, cga=cga)
    col, row = order[0], order[1]
    ncols, nrows = per_cta[col], per_cta[row]
    bases = [(0, c) for c in _pow2_below(ncols)]
    for r in _pow2_below(nrows):
        phase = (r // per_phase) % max_phase
        if rotating:  # AMD: the phase pattern also rotates from one block of rows to the next
            phase ^= r // max_phase // per_phase % max_phase
        bases.append((r, (vec * phase) % ncols))
    cta = LinearLayout.from_bases({"offset": bases}, [f"dim{row}", f"dim{col}"])
    cta = LinearLayout(cta.bases, [(f"dim{row}", nrows), (f"dim{col}", ncols)])
    for d in order[2:]:
        cta = cta * LinearLayout.identity1d(per_cta[d], "offset", f"dim{d}")
    return combine_with_shape(cta, shape, cga=cga)


def _rotating_shared(enc: Encoding, shape: tuple[int, ...], series) -> LinearLayout:
    return _swizzled_shared(enc, shape, series, rotating=True)


def _partitioned_shared(enc: Encoding, shape: tuple[int, ...], series) -> LinearLayout:
    """partitionedSharedToLinearLayout: the tensor cut along partitionDim into numPartitions x numGroups
    pieces; piece i goes to buffer (partition) i mod numPartitions, group i div numPartitions within it.

    In-dims: offset (within one partition's buffer) and partition.  A padded
    partition layout is refused, as Triton's own conversion refuses it.
    """
    rank = len(shape)
    parts, groups, pdim = _int(enc, "numPartitions"), _int(enc, "numGroups"), _int(enc, "partitionDim")
    inner = enc.params.get("partitionLayout")
    if not isinstance(inner, Attribute):
        raise LayoutError("#partitioned_shared needs a partitionLayout")
    if inner.name == "padded_shared":
        raise LayoutError("a #partitioned_shared of a #padded_shared layout has no linear layout "
                          "(Triton's conversion refuses it too)")
    if inner.name not in MEMORY_LAYOUTS or inner.name.startswith("tensor_memory"):
        raise LayoutError(f"#partitioned_shared of #{inner.name} is not drawn")
    if not 0 <= pdim < rank:
        raise LayoutError(f"#partitioned_shared partitionDim = {pdim} is out of range for a rank-{rank} shape")
    _log2(parts), _log2(groups)
    pieces = parts * groups
    if shape[pdim] % pieces or shape[pdim] < pieces:
        raise LayoutError(f"dim {pdim} ({shape[pdim]}) does not split into {pieces} pieces")
    piece = list(shape)
    piece[pdim] = shape[pdim] // pieces
    base = linear_layout(inner, tuple(piece), series)
    if "offset" not in base.bases:
        raise LayoutError(f"#partitioned_shared of #{inner.name} is not drawn")
    name = f"dim{pdim}"
    ret = base * LinearLayout.identity1d(parts, "partition", name) * LinearLayout.identity1d(groups, "offset", name)
    return ret.transpose_outs(_std(rank))


# --------------------------------------------------------------------------
# Blackwell tensor memory
# --------------------------------------------------------------------------


def _tensor_memory(enc: Encoding, shape: tuple[int, ...], series) -> LinearLayout:
    """tensorMemoryToLinearLayout: (TMEM row = lane, column) -> element; zero bases are copies or unused."""
    if len(shape) != 2:
        raise ShapeRankError(f"#{enc.name} is a rank-2 layout but the shape has rank {len(shape)}")
    shape = _shape_per_cta(shape, _cga_layout(enc, 2))  # tensor memory is per CTA: no block dim
    split_m, split_n = _int(enc, "CTASplitM", 1), _int(enc, "CTASplitN", 1)
    if split_n > 1:
        inner = _tmem_one_cta(enc, (shape[0] // split_m, shape[1] // split_n))
        ll = inner * LinearLayout.identity1d(split_m, "col", "dim0") if split_m > 1 else inner
        return (ll * LinearLayout.identity1d(split_n, "col", "dim1")).transpose_outs(["dim0", "dim1"])
    if split_m > 1:
        inner = _tmem_one_cta(enc, (shape[0] // split_m, shape[1]))
        return (inner * LinearLayout.identity1d(split_m, "col", "dim0")).transpose_outs(["dim0", "dim1"])
    return _tmem_one_cta(enc, shape)


def _tmem_one_cta(enc: Encoding, shape: tuple[int, ...]) -> LinearLayout:
    block_m = _int(enc, "blockM")
    block_n = min(_int(enc, "blockN"), shape[1])
    if "colStride" in enc.params:
        col_stride = _int(enc, "colStride")
    else:
        col_stride = 1  # 3.6 spelling (unpacked = true/false): a 32-bit column per element either way
    if block_m not in (64, 128):
        raise LayoutError(f"#tensor_memory_encoding blockM = {block_m} is not 64 or 128")
    tile = LinearLayout.zeros1d(col_stride, "col", "dim1")
    # fp4Padded: the low physical column bit picks the real or the padding half, so the element
    # columns start one bit later (a zero column basis first)
    cols = LinearLayout.zeros1d(2 if enc.params.get("fp4Padded") is True else 1, "col", "dim1")
    cols = cols * LinearLayout.identity1d(block_n, "col", "dim1")
    if block_m == 64:
        tile = (tile * (LinearLayout.identity1d(16, "row", "dim0") * cols))
        tile = tile.transpose_outs(["dim0", "dim1"])
        if shape[0] > block_m:
            extra = (64, 0)
        elif shape[1] > block_n:
            extra = (0, block_n)
        else:
            extra = (0, 0)  # rows 16-31 of each 32-lane group are not used
        rows = tile.bases["row"] + [extra, (16, 0), (32, 0)]
        tile = LinearLayout.from_bases({"row": rows, "col": tile.bases.get("col", [])}, ["dim0", "dim1"])
        tile = LinearLayout(tile.bases, [("dim0", max(64, tile.out_size("dim0"))),
                                         ("dim1", max(block_n, tile.out_size("dim1")))])
    else:
        tile = tile * (LinearLayout.identity1d(block_m, "row", "dim0") * cols)
        tile = tile.transpose_outs(["dim0", "dim1"])
    reps_m = shape[0] // tile.out_size("dim0")
    reps_n = shape[1] // tile.out_size("dim1")
    if reps_m < 1 or reps_n < 1:
        raise LayoutError(f"shape {list(shape)} is smaller than one {block_m}x{block_n} tensor-memory block")
    return tile * _id(reps_m, "col", "dim0") * _id(reps_n, "col", "dim1")


def _tensor_memory_scales(enc: Encoding, shape: tuple[int, ...], series) -> LinearLayout:
    """tensorMemoryScalesToLinearLayout: the tcgen05 scale-factor layout (32 lanes, 4 columns, repeated).

    Tensor memory is per CTA: with a CGALayout each CTA holds its piece of the
    shape, and the layout drawn is that piece's.  blockRepOrder (3.9) says
    whether the repeated 128x4 blocks go along M first (the default) or K.
    """
    if len(shape) != 2:
        raise ShapeRankError(f"#{enc.name} is a rank-2 layout but the shape has rank {len(shape)}")
    split_m, split_n = _int(enc, "CTASplitM", 1), _int(enc, "CTASplitN", 1)
    if split_m > 1 or split_n > 1:
        raise LayoutError("tensor-memory scales split over several CTAs (CTASplitM/N) are not drawn")
    shape = _shape_per_cta(shape, _cga_layout(enc, 2))
    order = enc.params.get("blockRepOrder", "mnThenK")
    order = getattr(order, "text", order)
    if not isinstance(order, str) or order.lstrip("#").split(".")[-1].split("<")[0] not in ("mnThenK", "kThenMn"):
        raise LayoutError(f"#{enc.name} blockRepOrder {order!r} is not mnThenK or kThenMn")
    tile = (LinearLayout.identity1d(32, "row", "dim0") * LinearLayout.zeros1d(4, "row", "dim0")
            * LinearLayout.identity1d(4, "col", "dim1") * LinearLayout.identity1d(2, "col", "dim0"))
    reps_mn = -(-shape[0] // tile.out_size("dim0"))
    reps_k = -(-shape[1] // tile.out_size("dim1"))
    if reps_mn > 1:
        tile = tile * LinearLayout.identity1d(2, "col", "dim0")
        reps_mn //= 2
    if "kThenMn" in order:
        # Triton's Python layout object drops blockRepOrder, so no conversion of it can be checked here
        raise LayoutError("tensor-memory scales with blockRepOrder = kThenMn are not drawn (Triton's Python "
                          "API cannot convert that order, so tritonscope cannot check its drawing against Triton)")
    tile = tile * _id(reps_mn, "col", "dim0") * _id(reps_k, "col", "dim1")
    return tile.not_larger_than({"dim0": shape[0], "dim1": shape[1]}).transpose_outs(["dim0", "dim1"])


def _pow2_below(n: int) -> list[int]:
    out, x = [], 1
    while x < n:
        out.append(x)
        x *= 2
    return out


def _check_rank(enc: Encoding, rank: int, want: int) -> None:
    if rank != want:
        raise ShapeRankError(f"#{enc.name} is a rank-{want} layout but the shape has rank {rank}")


class ShapeRankError(LayoutError):
    pass


def _nvmma_shared(enc: Encoding, shape: tuple[int, ...], series=None) -> LinearLayout:
    swizzle = _int(enc, "swizzlingByteWidth")
    bits = _int(enc, "elementBitWidth")
    transposed = bool(enc.params.get("transposed", False))
    # fp4Padded: each 8 packed fp4 pairs sit in 16 bytes, 8 of them padding; offsets count padded bytes and
    # the padding ones map to the same elements as the real ones (the lower offset is the real one)
    fp4 = enc.params.get("fp4Padded") is True
    rank = len(shape)
    if rank < 2 and swizzle:
        raise LayoutError("a swizzled #nvmma_shared layout needs a shape of rank 2 or more")
    cga = _cga_layout(enc, rank)
    full, shape = shape, _shape_per_cta(shape, cga)
    # getTMABlockShape: every dim at most 256, the contiguous one exactly the swizzle width
    tma = [min(s, 256) for s in shape]
    contig = 0 if transposed else rank - 1
    if swizzle:
        width = 8 * swizzle // bits // (2 if fp4 else 1)
        if tma[contig] < width:
            raise LayoutError(f"a {swizzle}-byte swizzle needs at least {width} elements along the "
                              f"contiguous dim (shape {list(shape)}); Triton rejects this shape")
        tma[contig] = width
    if swizzle == 0:
        if fp4:
            raise LayoutError("an unswizzled fp4-padded #nvmma_shared layout is not drawn")
        if transposed and rank != 2:
            raise LayoutError("unswizzled, transposed #nvmma_shared layouts of rank > 2 are not drawn")
        dims = [0, 1] if transposed else list(range(rank - 1, -1, -1))  # contiguous dim first
        ll = LinearLayout.empty()
        for i in dims:
            ll = ll * LinearLayout.identity1d(tma[i], "offset", f"dim{i}")
        ll = ll.not_smaller_than_ordered(_std(rank), list(shape))
        return combine_with_shape(ll, full, cga=cga)
    collapsed = [1, tma[-1]]
    for s in tma[:-1]:
        collapsed[0] *= s
    if transposed:
        collapsed.reverse()
    vec = 128 // bits
    per_phase, max_phase = NVMMA_SWIZZLE_PHASES.get(swizzle, (0, 0))
    if not per_phase:
        raise LayoutError(f"swizzlingByteWidth = {swizzle} is not 0, 32, 64 or 128")
    tile_cols = 8 * max(16, swizzle) // bits

    def packed(col: int) -> int:
        return col // 16 * 8 + col % 8 if fp4 else col

    bases = [(0, packed(c)) for c in _pow2_below(tile_cols)]
    bases += [(r, packed(vec * ((r // per_phase) % max_phase))) for r in _pow2_below(8)]
    tile = LinearLayout.from_bases({"offset": bases}, ["dim0", "dim1"])
    if collapsed[1] < tile.out_size("dim1") or collapsed[0] < tile.out_size("dim0"):
        raise LayoutError(f"shape {list(shape)} is smaller than one {swizzle}-byte swizzle tile")
    ll = tile.not_smaller_than_ordered(["dim0", "dim1"], collapsed)
    pre = list(tma)
    if transposed:
        pre = pre[1:] + pre[:1]
    ll = _reshape(ll, pre)
    if transposed:
        order = [rank - 1] + list(range(rank - 1))
        ll = _transpose(ll, order)
    ll = ll.not_smaller_than_ordered(_std(rank), list(shape))
    return combine_with_shape(ll, full, cga=cga)


_BUILDERS = {
    "blocked": _blocked, "slice": _slice, "nvidia_mma": _nvidia_mma, "dot_op": _dot_op,
    "swizzled_shared": _swizzled_shared, "nvmma_shared": _nvmma_shared,
    "amd_mfma": _amd_mfma, "amd_wmma": _amd_wmma, "linear": _linear, "generic_linear": _linear,
    "shared_linear": _shared_linear, "padded_shared": _padded_shared, "amd_rotating_shared": _rotating_shared,
    "tensor_memory_encoding": _tensor_memory, "tensor_memory_scales_encoding": _tensor_memory_scales,
    "partitioned_shared": _partitioned_shared,
}


def _reshape(ll: LinearLayout, shape: list[int]) -> LinearLayout:
    """Row-major reshape of the out dims (reshapeLayout): a bit permutation of the flat index."""
    sizes = [s for _, s in ll.outs]

    def flat(b):
        f = 0
        for x, s in zip(b, sizes):
            f = f * s + x
        return f

    def unflat(f):
        out = []
        for s in reversed(shape):
            out.append(f % s)
            f //= s
        return tuple(reversed(out))

    return LinearLayout({k: [unflat(flat(b)) for b in v] for k, v in ll.bases.items()},
                        list(zip(_std(len(shape)), shape)))


def _transpose(ll: LinearLayout, order: list[int]) -> LinearLayout:
    """transposeLinearLayout: out dim i of the result is out dim order[i] of the input."""
    return LinearLayout({k: [tuple(b[o] for o in order) for b in v] for k, v in ll.bases.items()},
                        [(f"dim{i}", ll.outs[o][1]) for i, o in enumerate(order)])


# ==========================================================================
# What a drawing needs: owner maps and shared-memory placement
# ==========================================================================


@dataclass
class LayoutUse:
    """One encoding at one shape, with everything a drawing needs (JSON-safe).

    kind: "distributed" (registers: owners per element), "shared" (offset,
    bank and phase per element) or "text" (no truthful picture: see note).
    """

    alias: str                       # "blocked", "mma", "" for a standalone string
    encoding: str                    # the attribute text, aliases resolved
    name: str                        # "blocked", "nvidia_mma", ...
    shape: list[int]
    kind: str
    note: str = ""
    bases: dict[str, list[list[int]]] = field(default_factory=dict)
    elem_bits: int | None = None     # shared layouts: element width used for banks
    used_by: list[str] = field(default_factory=list)  # e.g. "tensor<16x16xf16>" / "memdesc"
    facts: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "LayoutUse":
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


LAYOUT_KINDS = ("distributed", "shared", "tensor_memory", "text")
IN_DIMS = ("register", "lane", "warp", "block", "offset", "partition", "row", "col")
MAX_BASES_PER_DIM = 32   # 2^32 of anything is more than any layout Triton makes
# facts the drawings read, by shape: a saved report is checked against these before anything draws it
_FACT_INT_LISTS = ("cta_tile", "instr_tile", "shape_per_cta", "order")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _int_list(v: Any, *, length: int | None = None, low: int = 0) -> bool:
    return isinstance(v, list) and all(_is_int(x) and low <= x < 1 << 31 for x in v) and (
        length is None or len(v) == length)


def check_layout_record(d: Any) -> None:
    """A saved layout record (LayoutUse.to_dict, from a report) that the drawings can read, or TypeError/ValueError.

    Reports are JSON a user may have edited: a record with a missing field, a
    basis of the wrong rank or a fact of the wrong type must be refused as a
    damaged report when it is read (exit 7), not crash a drawing later.
    """
    if not isinstance(d, dict):
        raise TypeError(f"a layout record is a {type(d).__name__}, not an object")
    for key in ("alias", "encoding", "name", "kind"):
        if not isinstance(d.get(key), str):
            raise TypeError(f"layout field {key!r} is missing or not a string")
    if not isinstance(d.get("note", ""), str):
        raise TypeError("layout field 'note' is not a string")
    if d.get("kind") not in LAYOUT_KINDS:
        raise ValueError(f"layout kind {d.get('kind')!r} is not one of {', '.join(LAYOUT_KINDS)}")
    shape = d.get("shape")
    # a TTGIR may use an empty tensor (memdesc<4x0xf16>): only drawn layouts need positive sizes
    if not _int_list(shape, low=0 if d["kind"] == "text" else 1) or not 1 <= len(shape) <= 8:
        raise ValueError(f"layout shape {shape!r} is not a list of 1 to 8 positive sizes")
    bases = d.get("bases", {})
    if not isinstance(bases, dict) or any(k not in IN_DIMS for k in bases):
        raise ValueError(f"layout bases must map {', '.join(IN_DIMS)} to basis lists")
    for k, v in bases.items():
        if not isinstance(v, list) or len(v) > MAX_BASES_PER_DIM or not all(
                _int_list(b, length=len(shape)) for b in v):
            raise ValueError(f"layout bases {k!r} are not up to {MAX_BASES_PER_DIM} lists of {len(shape)} "
                             f"non-negative ints")
    if d["kind"] != "text" and not bases:
        raise ValueError(f"a {d['kind']} layout record has no bases")
    if d.get("elem_bits") is not None and not (_is_int(d["elem_bits"]) and 1 <= d["elem_bits"] <= 1024):
        raise ValueError(f"layout elem_bits {d['elem_bits']!r} is not a bit width")
    used = d.get("used_by", [])
    if not isinstance(used, list) or not all(isinstance(x, str) for x in used):
        raise TypeError("layout used_by is not a list of strings")
    facts = d.get("facts", {})
    if not isinstance(facts, dict):
        raise TypeError("layout facts are not an object")
    for k, v in facts.items():
        if k in _FACT_INT_LISTS:
            ok = (v is None and k != "order") or _int_list(v)
        elif k == "padding":
            ok = isinstance(v, list) and all(_int_list(p, length=2, low=1) for p in v)
        elif k == "warp_map":
            ok = isinstance(v, list) and all(isinstance(r, list) and all(_int_list(c) for c in r) for r in v)
        elif k == "row_reads":
            ok = isinstance(v, dict) and all(_is_int(v.get(x)) for x in ("ways", "reads", "piece_elements")) \
                and (_int_list(v.get("at"), length=2) or (v.get("at") is None and v["ways"] <= 1)) \
                and (v.get("window") is None or _int_list(v["window"]))
        elif k in ("lanes_per_warp", "elem_bits"):
            ok = _is_int(v) and 1 <= v <= 1024
        else:
            ok = isinstance(v, bool) or (_is_int(v) and 0 <= v < 1 << 62)
        if not ok:
            raise ValueError(f"layout fact {k!r} has the wrong type ({v!r:.40})")


def describe(enc: Encoding, shape: tuple[int, ...], *, alias: str = "", elem_bits: int | None = None,
             used_by: list[str] | None = None) -> LayoutUse:
    """Encoding + shape -> LayoutUse; layouts that cannot be drawn become kind='text' with a note."""
    use = LayoutUse(alias=alias, encoding=enc.text, name=enc.name, shape=list(shape), kind="text",
                    used_by=list(used_by or []))
    try:
        ll = linear_layout(enc, shape)
    except ShapeRankError as e:
        raise UsageError(f"Wrong shape rank for this layout: {e}.",
                         hint="Give one size per dimension of the layout, e.g. --shape 16x16 for a 2-D layout.")
    except LayoutError as e:
        use.note = f"Not drawn: {e}."
        return use
    # block bases only where the layout spreads over several CTAs (one CTA: Triton's block = [])
    use.bases = {k: [list(b) for b in v] for k, v in ll.bases.items() if k != "block" or v}
    if "offset" in ll.bases:
        use.kind = "shared"
        bits = enc.params.get("elementBitWidth") if enc.name == "nvmma_shared" else None
        use.elem_bits = int(bits) if isinstance(bits, int) else (elem_bits or 16)
        use.facts = shared_facts(use, enc)
    elif "row" in ll.bases:
        use.kind = "tensor_memory"
        use.elem_bits = elem_bits or 32
        use.facts = tmem_facts(use, enc)
    else:
        use.kind = "distributed"
        use.facts = distributed_facts(use)
        tile = getattr(ll, "cta_tile", None)
        if tile:
            use.facts["cta_tile"] = list(tile)
            use.facts["wraps"] = any(s > t for s, t in zip(_per_cta_shape(use), tile))
            use.facts["tile_larger_than_shape"] = any(s < t for s, t in zip(_per_cta_shape(use), tile))
        use.facts["instr_tile"] = instruction_tile(enc)
        # one CTA only: with several, a tile's warps depend on the CTA (the grid draws CTA 0 and marks the rest)
        if enc.name in ("nvidia_mma", "dot_op", "amd_mfma", "amd_wmma") and tile and use.facts["instr_tile"] \
                and len(tile) == 2 and not use.bases.get("block"):
            use.facts["warp_map"] = _warp_map(enc, tile, use.facts["instr_tile"])
    return use


def _per_cta_shape(use: LayoutUse) -> list[int]:
    """The piece of the tensor one CTA holds (the whole shape for single-CTA layouts)."""
    blocks = use.bases.get("block", [])
    out = list(use.shape)
    for d in range(len(out)):
        span = 0
        for b in blocks:
            span |= b[d]
        if span:
            out[d] = min(out[d], span & -span)  # the lowest block step along d
    return out


def _warp_map(enc: Encoding, tile: list[int], instr: list[int]) -> list[list[list[int]]]:
    """Warps owning each instruction tile of the full layout tile (from the layout itself)."""
    full = linear_layout(enc, tuple(tile))
    warps: dict[tuple[int, int], set[int]] = {}
    for w in range(full.in_size("warp")):
        for ln in range(full.in_size("lane")):
            for r in range(full.in_size("register")):
                e = full.apply(warp=w, lane=ln, register=r)
                warps.setdefault((e[0] // instr[0], e[1] // instr[1]), set()).add(w)
    return [[sorted(warps.get((i, j), ())) for j in range(max(1, tile[1] // instr[1]))]
            for i in range(max(1, tile[0] // instr[0]))]


# A drawing shows at most a window of the tensor; above this many elements, the grids below
# solve for the window's owners instead of walking every element (4096x4096 would take minutes
# and gigabytes, 1024x1024x1024 more memory than there is).
WHOLE_GRID_LIMIT = 1 << 16


def _windowed(use: LayoutUse, window: tuple[int, ...] | None) -> bool:
    total = 1
    for s in use.shape:
        total *= s
    return window is not None and total > WHOLE_GRID_LIMIT


def box_preimage(ll: LinearLayout, ins: list[str], box: tuple[int, ...], fixed: dict[str, int] | None = None):
    """Every input of `ll` (over the in-dims `ins`, others as in `fixed`) landing in [0, box) per out dim.

    A linear layout XORs one basis per set input bit, so the inputs that land
    in a power-of-two box are an affine subspace: solve for its basis
    (Gaussian elimination over GF(2) on the out bits above the box) and walk
    its 2^k points.  The cost follows the box (times any replication), not
    the tensor.  Yields ({in_dim: value}, out) pairs, in no particular order.
    """
    shifts = [max(0, (b - 1).bit_length()) for b in box]
    lanes = 64  # bits per out dim in the packed "bits above the box" vector

    def above(out) -> int:
        return sum((o >> sh) << (lanes * i) for i, (o, sh) in enumerate(zip(out, shifts)))

    def xor(a, b):
        return tuple(x ^ y for x, y in zip(a, b))

    gens = [(d, i, b) for d in ins for i, b in enumerate(ll.bases.get(d, []))]
    pivots: dict[int, tuple[int, int, tuple[int, ...]]] = {}
    free: list[tuple[int, tuple[int, ...]]] = []  # (input mask, out) with nothing above the box
    for n, (_, _, b) in enumerate(gens):
        h, mask, out = above(b), 1 << n, tuple(b)
        while h:
            top = h.bit_length() - 1
            if top not in pivots:
                pivots[top] = (h, mask, out)
                break
            ph, pm, po = pivots[top]
            h, mask, out = h ^ ph, mask ^ pm, xor(out, po)
        else:
            free.append((mask, out))
    start = ll.apply(**(fixed or {})) if ll.outs else ()
    h, mask, out = above(start), 0, tuple(start)
    while h:  # a particular solution: cancel the fixed inputs' bits above the box
        top = h.bit_length() - 1
        if top not in pivots:
            return
        ph, pm, po = pivots[top]
        h, mask, out = h ^ ph, mask ^ pm, xor(out, po)
    for i in range(1 << len(free)):
        if i:  # Gray code: one free vector changes per step
            fm, fo = free[(i & -i).bit_length() - 1]
            mask, out = mask ^ fm, xor(out, fo)
        if all(o < b for o, b in zip(out, box)):
            values = dict.fromkeys(ins, 0)
            for n, (d, bit, _) in enumerate(gens):
                if mask >> n & 1:
                    values[d] |= 1 << bit
            yield values, out


def first_inputs(ll: LinearLayout, ins: list[str], box: tuple[int, ...], fixed: dict[str, int] | None = None,
                 ) -> dict[tuple[int, ...], tuple[dict[str, int], int]]:
    """For each element below `box`: the first input landing on it and how many do (absent: none).

    "First" orders inputs by `ins`, most significant first (warp, then lane,
    then register: the owner a drawing shows).  The inputs landing on one
    element are a coset of the layout's kernel, so each element costs one
    GF(2) solve plus a reduction against the kernel, whatever the
    replication: a dot operand whose every element has 128 owners draws as
    fast as one with a single owner (walking all owners took 12 s at 128x256).
    """
    sizes = [s for _, s in ll.outs]
    offs, acc = [], 0
    for sz in sizes:
        offs.append(acc)
        acc += max(0, (sz - 1).bit_length())

    def pack(vec) -> int:
        return sum(v << o for v, o in zip(vec, offs))

    widths = {d: len(ll.bases.get(d, [])) for d in ins}
    gens: list[tuple[int, int]] = []  # (packed out, input bit)
    shift = 0
    for d in reversed(ins):  # the last in-dim holds the lowest input bits
        for j, b in enumerate(ll.bases.get(d, [])):
            gens.append((pack(b), 1 << (shift + j)))
        shift += widths[d]
    pivots: dict[int, tuple[int, int]] = {}
    kernel: dict[int, int] = {}
    for out, mask in gens:
        while out:
            top = out.bit_length() - 1
            if top not in pivots:
                pivots[top] = (out, mask)
                break
            po, pm = pivots[top]
            out, mask = out ^ po, mask ^ pm
        else:
            while mask:  # a kernel vector: insert into a basis keyed by its highest input bit
                top = mask.bit_length() - 1
                if top not in kernel:
                    kernel[top] = mask
                    break
                mask ^= kernel[top]
    for top in sorted(kernel):  # fully reduce: each pivot bit set in its own vector only
        for other in kernel:
            if other != top and kernel[other] >> top & 1:
                kernel[other] ^= kernel[top]
    reduce_order = sorted(kernel, reverse=True)
    start = pack(ll.apply(**(fixed or {}))) if ll.outs else 0
    count = 1 << len(kernel)
    out_map: dict[tuple[int, ...], tuple[dict[str, int], int]] = {}
    limits = [min(b, s) for b, s in zip(box, sizes)] if len(box) == len(sizes) else []
    if not limits:
        return out_map
    import itertools
    for el in itertools.product(*(range(n) for n in limits)):
        t = pack(el) ^ start
        mask = 0
        while t:
            top = t.bit_length() - 1
            if top not in pivots:
                break
            po, pm = pivots[top]
            t, mask = t ^ po, mask ^ pm
        if t:
            continue
        for top in reduce_order:
            if mask >> top & 1:
                mask ^= kernel[top]
        values, sh = {}, 0
        for d in reversed(ins):
            values[d] = mask >> sh & ((1 << widths[d]) - 1)
            sh += widths[d]
        out_map[el] = (values, count)
    return out_map


def first_owners(use: LayoutUse, window: tuple[int, ...], block: int = 0,
                 ) -> dict[tuple[int, ...], tuple[tuple[int, int, int], int]]:
    """element (below `window`) -> ((warp, lane, register) of its first owner in CTA `block`, number of owners)."""
    ll = _ll_of(use)
    return {e: ((v["warp"], v["lane"], v["register"]), n)
            for e, (v, n) in first_inputs(ll, ["warp", "lane", "register"], window, {"block": block}).items()}


def owner_grid(use: LayoutUse, block: int = 0, window: tuple[int, ...] | None = None,
               ) -> dict[tuple[int, ...], list[tuple[int, int, int]]]:
    """element -> [(warp, lane, register), ...] of CTA `block` (more than one owner = replication).

    `window`: the drawing only needs elements below these sizes (one per dim);
    for a large tensor only those are computed (see box_preimage).
    """
    ll = _ll_of(use)
    out: dict[tuple[int, ...], list[tuple[int, int, int]]] = {}
    if _windowed(use, window):
        for v, e in box_preimage(ll, ["warp", "lane", "register"], window, {"block": block}):
            out.setdefault(e, []).append((v["warp"], v["lane"], v["register"]))
        for owners in out.values():
            owners.sort()  # the order of the full walk below: warp, then lane, then register
        return out
    for w in range(ll.in_size("warp")):
        for ln in range(ll.in_size("lane")):
            for r in range(ll.in_size("register")):
                out.setdefault(ll.apply(warp=w, lane=ln, register=r, block=block), []).append((w, ln, r))
    return out


def cta_grid(use: LayoutUse, window: tuple[int, ...] | None = None) -> dict[tuple[int, ...], int]:
    """element -> the first CTA (block) holding it, for layouts spread over several CTAs."""
    ll = _ll_of(use)
    out: dict[tuple[int, ...], int] = {}
    base_in = "offset" if "offset" in ll.bases else None
    if window is not None:
        ins = ["block"] + [d for d in ll.bases if d != "block"]
        return {e: v["block"] for e, (v, _) in first_inputs(ll, ins, window).items()}
    for blk in range(ll.in_size("block")):
        if base_in:
            for off in range(ll.in_size("offset")):
                out.setdefault(ll.apply(offset=off, block=blk), blk)
            continue
        for w in range(ll.in_size("warp")):
            for ln in range(ll.in_size("lane")):
                for r in range(ll.in_size("register")):
                    out.setdefault(ll.apply(warp=w, lane=ln, register=r, block=blk), blk)
    return out


def lanes_per_warp(use: LayoutUse) -> int:
    """32 on NVIDIA and RDNA (WMMA), 64 on CDNA (MFMA): read from the layout's lane bases."""
    return 1 << len(use.bases.get("lane", [])) if "lane" in use.bases else 32


def elements_of_thread(use: LayoutUse, warp: int, lane: int, limit: int | None = None) -> list[tuple[int, ...]]:
    """The elements thread (warp, lane) of CTA 0 holds, in register order (the hardware view); the first `limit`."""
    ll = _ll_of(use)
    count = ll.in_size("register") if limit is None else min(limit, ll.in_size("register"))
    return [ll.apply(warp=warp, lane=lane, register=r) for r in range(count)]


def offset_grid(use: LayoutUse, window: tuple[int, ...] | None = None) -> dict[tuple[int, ...], int]:
    """element -> its offset (in elements) in CTA 0's shared memory; first offset wins if several.

    A padded layout (#padded_shared) puts `padding` unused elements after every
    `interval`: the offset shown is where the element really is.
    """
    ll = _ll_of(use)
    padding = [tuple(p) for p in (use.facts or {}).get("padding", [])]
    out: dict[tuple[int, ...], int] = {}
    if window is not None:
        ins = ["partition", "offset"] if "partition" in ll.bases else ["offset"]
        first = first_inputs(ll, ins, window, {"block": 0} if "block" in ll.bases else None)
        return {e: padded_offset(v["offset"], padding) if padding else v["offset"] for e, (v, _) in first.items()}
    for off in range(ll.in_size("offset")):
        out.setdefault(ll.apply(offset=off), padded_offset(off, padding) if padding else off)
    return out


def partition_grid(use: LayoutUse, window: tuple[int, ...]) -> dict[tuple[int, ...], int]:
    """#partitioned_shared: element -> the partition (buffer) holding it; {} for other layouts."""
    ll = _ll_of(use)
    if "partition" not in ll.bases:
        return {}
    return {e: v["partition"] for e, (v, _) in first_inputs(ll, ["partition", "offset"], window).items()}


def tmem_grid(use: LayoutUse, window: tuple[int, ...] | None = None) -> dict[tuple[int, ...], tuple[int, int]]:
    """element -> (TMEM lane, TMEM column) of tensor memory; first wins if several."""
    ll = _ll_of(use)
    out: dict[tuple[int, ...], tuple[int, int]] = {}
    if window is not None:
        return {e: (v["row"], v["col"]) for e, (v, _) in first_inputs(ll, ["row", "col"], window).items()}
    for row in range(ll.in_size("row")):
        for col in range(ll.in_size("col")):
            out.setdefault(ll.apply(row=row, col=col), (row, col))
    return out


def _ll_of(use: LayoutUse) -> LinearLayout:
    return LinearLayout.from_bases({k: [tuple(b) for b in v] for k, v in use.bases.items()},
                                   _std(len(use.shape))) if use.bases else LinearLayout({}, [])


def _bits_span(bases: list[list[int]], dim: int) -> int:
    """How many consecutive elements along `dim` the first bases cover (1, 2, 4, ...)."""
    n = 1
    for b in bases:
        if b[dim] == n and all(x == 0 for i, x in enumerate(b) if i != dim):
            n *= 2
        else:
            break
    return n


def distributed_facts(use: LayoutUse) -> dict[str, Any]:
    """Elements per thread, replication, wrapping and contiguity, in numbers (all read from the bases).

    elements_per_thread is what one thread holds (Triton's getTotalElemsPerThread:
    the register bases, zero ones included); threads are those of one CTA.
    """
    regs = use.bases.get("register", [])
    lanes = use.bases.get("lane", [])
    warps = use.bases.get("warp", [])
    blocks = use.bases.get("block", [])
    total = 1
    for s in use.shape:
        total *= s
    threads = (1 << len(lanes)) * (1 << len(warps))
    zero_lanes = sum(1 for b in lanes if not any(b))
    zero_warps = sum(1 for b in warps if not any(b))
    zero_regs = sum(1 for b in regs if not any(b))
    held = threads * (1 << len(regs)) * (1 << len(blocks))
    rank = len(use.shape)
    # contiguity: registers that step along the fastest dim first (a vector load's width)
    fastest = rank - 1
    best_dim, contig = fastest, 1
    for d in range(rank):
        c = _bits_span(regs, d)
        if c > contig:
            best_dim, contig = d, c
    facts = {
        "elements": total,
        "threads": threads,
        "elements_per_thread": 1 << len(regs),
        "copies_per_element": held // total if total else 0,
        "replicated_lanes": 1 << zero_lanes,
        "replicated_warps": 1 << zero_warps,
        "replicated_registers": 1 << zero_regs,
        "wraps": False,
        "contiguous_elements": contig,
        "contiguous_dim": best_dim,
    }
    if len(lanes) != 5:
        facts["lanes_per_warp"] = 1 << len(lanes)
    if blocks:
        facts["ctas"] = 1 << len(blocks)
        facts["replicated_ctas"] = 1 << sum(1 for b in blocks if not any(b))
        facts["shape_per_cta"] = _per_cta_shape(use)
    return facts


def instruction_tile(enc: Encoding) -> list[int] | None:
    """The block one mma instruction (or one warp's fragment) covers, for drawing its borders."""
    p = enc.params
    if enc.name == "nvidia_mma":
        instr = p.get("instrShape") or []
        return [int(instr[0]), int(instr[1])] if len(instr) >= 2 else None
    if enc.name == "amd_mfma":
        instr = p.get("instrShape") or []
        return [int(instr[0]), int(instr[1])] if len(instr) >= 2 else None
    if enc.name == "amd_wmma":  # 16x16, or 32x16 (16x32 transposed) on gfx1250
        try:
            tile = _wmma_tile(enc, 2)
        except LayoutError:
            return None
        return [tile.out_size("dim0"), tile.out_size("dim1")]
    if enc.name == "dot_op" and enc.parent is not None and enc.parent.name == "nvidia_mma":
        kw = p.get("kWidth") or 2
        return [16, 8 * kw] if p.get("opIdx") == 0 else [8 * kw, 8]
    if enc.name == "blocked":
        spt, tpw = p.get("sizePerThread") or [], p.get("threadsPerWarp") or []
        return [a * b for a, b in zip(spt, tpw)] or None  # what one warp covers
    return None


def tmem_facts(use: LayoutUse, enc: Encoding) -> dict[str, Any]:
    """Tensor memory: 128 lanes x 512 32-bit columns per SM; which lanes and columns the tile uses."""
    rows = use.bases.get("row", [])
    cols = use.bases.get("col", [])
    unused_rows = sum(1 for i, b in enumerate(rows) if i not in (5, 6) and not any(b))
    lanes_used = range(1 << (len(rows) - unused_rows))
    cols_used = range(1 << (len(cols) - sum(1 for b in cols if not any(b))))
    # [Zeros in TMEM LinearLayouts]: a zero basis at lane 32 or 64 is a copy in another lane group;
    # any other zero basis marks lanes or columns that hold nothing.
    copies = 1 << sum(1 for i, b in enumerate(rows) if i in (5, 6) and not any(b))
    facts: dict[str, Any] = {"elem_bits": use.elem_bits or 32, "tmem_lanes": 1 << len(rows),
                             "tmem_columns": 1 << len(cols), "lanes_used": len(lanes_used),
                             "columns_used": len(cols_used), "copies_per_element": copies}
    for key, name in (("blockM", "block_m"), ("blockN", "block_n"), ("colStride", "col_stride")):
        if key in enc.params:
            facts[name] = enc.params[key]
    return facts


def shared_facts(use: LayoutUse, enc: Encoding) -> dict[str, Any]:
    """Vector width, phase parameters, and the bank-conflict check for 8-row reads."""
    bits = use.elem_bits or 16
    rank = len(use.shape)
    facts: dict[str, Any] = {"elem_bits": bits, "bytes": _prod(use.shape) * bits // 8}
    if enc.name == "swizzled_shared":
        facts.update(vec=enc.params.get("vec"), per_phase=enc.params.get("perPhase"),
                     max_phase=enc.params.get("maxPhase"), order=enc.params.get("order"))
    elif enc.name == "nvmma_shared":
        sw = enc.params.get("swizzlingByteWidth")
        pp, mp = NVMMA_SWIZZLE_PHASES.get(sw, (1, 1))
        facts.update(vec=128 // bits, per_phase=pp, max_phase=mp, swizzle_bytes=sw,
                     order=[0, 1] if enc.params.get("transposed") else [1, 0])
    elif enc.name == "amd_rotating_shared":
        facts.update(vec=enc.params.get("vec"), per_phase=enc.params.get("perPhase"),
                     max_phase=enc.params.get("maxPhase"), order=enc.params.get("order"), rotating=True)
    elif enc.name == "padded_shared":
        pads = padding_of(enc)
        facts["padding"] = [list(p) for p in pads]
        extra = sum((_prod(use.shape) - 1) // i * p for i, p in pads)
        facts["padded_bytes"] = (_prod(use.shape) + extra) * bits // 8
    if use.bases.get("block"):
        facts["ctas"] = 1 << len(use.bases["block"])
    if enc.name == "partitioned_shared":
        facts.update(partitions=enc.params.get("numPartitions"), groups=enc.params.get("numGroups"),
                     partition_dim=enc.params.get("partitionDim"))
    if rank == 2:
        use.facts = facts
        facts["row_reads"] = row_read_conflicts(use)
    return facts


def _prod(xs) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


def bank_of(offset: int, bits: int) -> int:
    """The 4-byte bank (0..31) an element offset lands in."""
    return (offset * bits // 8) // 4 % 32


def row_read_conflicts(use: LayoutUse) -> dict[str, Any]:
    """Eight rows read as 16-byte pieces at one column block (what ldmatrix and
    cp.async do): how many distinct 128-byte wavefronts the worst such read takes.

    1 means conflict-free: the eight 16-byte pieces land in eight different
    groups of four banks.
    """
    bits = use.elem_bits or 16
    per16 = max(1, 128 // bits)  # elements in 16 bytes
    order = use.facts.get("order") if use.facts else None
    rows_dim, cols_dim = (0, 1)
    if isinstance(order, list) and len(order) == 2:
        cols_dim, rows_dim = order[0], order[1]
    nrows, ncols = use.shape[rows_dim], use.shape[cols_dim]
    # A large tensor: swizzles repeat within a few rows and 128 bytes, so a 256 x 256 window
    # finds the worst read at a bounded cost (the whole tensor would take minutes).
    window = None
    if len(use.shape) == 2 and _windowed(use, tuple(use.shape)):
        nrows, ncols = min(nrows, 256), min(ncols, 256)
        window = [0, 0]
        window[rows_dim], window[cols_dim] = nrows, ncols
        window = tuple(window)
    offsets = offset_grid(use, window)
    worst, worst_at, checked = 0, None, 0
    for r0 in range(0, nrows - nrows % 8 if nrows >= 8 else 0, 8):
        for c0 in range(0, ncols, per16):
            groups: dict[int, set[int]] = {}
            for r in range(r0, r0 + 8):
                el = [0, 0]
                el[rows_dim], el[cols_dim] = r, c0
                off = offsets.get(tuple(el))
                if off is None:
                    continue
                byte = off * bits // 8
                groups.setdefault(byte // 16 % 8, set()).add(byte // 16)
            ways = max((len(v) for v in groups.values()), default=0)
            checked += 1
            if ways > worst:
                worst, worst_at = ways, (r0, c0)
    return {"ways": worst, "at": list(worst_at) if worst_at else None, "reads": checked,
            "piece_elements": per16, **({"window": list(window)} if window else {})}


# ==========================================================================
# Layouts of a compiled kernel
# ==========================================================================

def layouts_of(analysis) -> list[LayoutUse]:
    """Every encoding the kernel's TTGIR uses, at the shapes it is used with.

    Multi-buffered shared allocations (2x16x16) are drawn at their tile shape
    (16x16) when the kernel also indexes that tile; scalars carry no layout.
    """
    ttgir = analysis.artifact.stages.get("ttgir", "")
    return layouts_of_ttgir(ttgir)


def layouts_of_ttgir(ttgir: str) -> list[LayoutUse]:
    aliases = aliases_of(ttgir)
    uses: dict[tuple[str, tuple[int, ...]], dict[str, Any]] = {}
    order: list[tuple[str, tuple[int, ...]]] = []
    body = "\n".join(ln for ln in ttgir.splitlines() if not ln.startswith("#"))
    # tensor<16x16xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>   !ttg.memdesc<2x16x16xf16, #shared, #smem>
    for t in find_types(body):
        if not t.static or t.encoding is None:
            continue
        key = (t.encoding, t.shape)
        if key not in uses:
            uses[key] = {"kinds": set(), "bits": t.bits}
            order.append(key)
        uses[key]["kinds"].add(f"{t.kind}<{'x'.join(map(str, t.shape))}x{t.elem.split('<')[0]}>")
    # Drop a multi-buffered memdesc shape when its last dims are also used alone.
    shapes_by_text: dict[str, set[tuple[int, ...]]] = {}
    for text, shape in order:
        shapes_by_text.setdefault(text, set()).add(shape)
    out: list[LayoutUse] = []
    for text, shape in order:
        if len(shape) > 2 and shape[1:] in shapes_by_text[text]:
            continue
        alias = text[1:] if re.fullmatch(r"#[A-Za-z_][\w$-]*", text) else ""
        try:
            enc = parse_encoding(text, aliases, source=f"in the TTGIR ({text})", known_only=False)
        except InputFileError as e:
            out.append(LayoutUse(alias, text, "?", list(shape), "text", note=f"Not drawn: {e.message}"))
            continue
        if enc.name in MEMORY_SPACES:
            continue
        info = uses[(text, shape)]
        rank = _rank_hint(enc)
        if rank and len(shape) > rank:  # memdesc<2x1xi64, #shared> of a rank-1 layout: 2 buffers of 1
            if shape[-rank:] in shapes_by_text[text]:
                continue
            shapes_by_text[text].add(shape[-rank:])
            shape = shape[-rank:]
        try:
            use = describe(enc, shape, alias=alias or _short_name(enc), elem_bits=info["bits"],
                           used_by=sorted(info["kinds"]))
        except UsageError as e:
            use = LayoutUse(alias, enc.text, enc.name, list(shape), "text", note=f"Not drawn: {e.message}",
                            used_by=sorted(info["kinds"]))
        out.append(use)
    return out


def _short_name(enc: Encoding) -> str:
    if enc.name == "slice" and enc.parent is not None:
        return f"slice(dim={enc.params.get('dim')}) of {_short_name(enc.parent)}"
    if enc.name == "dot_op" and enc.parent is not None:
        return f"dot_op(opIdx={enc.params.get('opIdx')}, kWidth={enc.params.get('kWidth')}) of {_short_name(enc.parent)}"
    return enc.name


MEMORY_LAYOUTS = ("swizzled_shared", "nvmma_shared", "shared_linear", "padded_shared", "amd_rotating_shared",
                  "partitioned_shared", "tensor_memory_encoding", "tensor_memory_scales_encoding")


def text_spec(enc: Encoding, elem: str = "f16") -> dict[str, Any]:
    """Triton's reading of the attribute text itself (triton_api parses it in a module): any encoding."""
    spec: dict[str, Any] = {"kind": "text", "text": enc.text, "elem": elem,
                            "memdesc": enc.name in MEMORY_LAYOUTS}
    if enc.name.startswith("tensor_memory"):
        spec["space"] = "#ttng.tensor_memory"
    return spec


def triton_spec(enc: Encoding) -> dict[str, Any]:
    """A plain-data description from which triton_api builds Triton's own (gluon) layout.

    The encodings tritonscope drew first are built as gluon objects from their
    fields; every other one (and any layout spread over several CTAs) goes to
    Triton as its attribute text (text_spec).
    """
    p = enc.params
    multi = any(k in p for k in ("CGALayout", "CTAsPerCGA")) or (enc.parent is not None and any(
        k in enc.parent.params for k in ("CGALayout", "CTAsPerCGA")))
    if multi or enc.name not in ("blocked", "slice", "nvidia_mma", "dot_op", "swizzled_shared", "nvmma_shared") or (
            enc.parent is not None and enc.parent.name not in ("blocked", "nvidia_mma")):
        return text_spec(enc)
    if enc.name == "blocked":
        return {"kind": "blocked", "spt": p["sizePerThread"], "tpw": p["threadsPerWarp"],
                "wpc": p["warpsPerCTA"], "order": p["order"]}
    if enc.name == "slice":
        return {"kind": "slice", "dim": p["dim"], "parent": triton_spec(enc.parent)}
    if enc.name == "nvidia_mma":
        return {"kind": "mma", "version": [p["versionMajor"], p.get("versionMinor", 0)],
                "wpc": p["warpsPerCTA"], "instr": p["instrShape"]}
    if enc.name == "dot_op":
        return {"kind": "dot_op", "op": p["opIdx"], "parent": triton_spec(enc.parent), "k_width": p.get("kWidth", 0)}
    if enc.name == "swizzled_shared":
        return {"kind": "swizzled", "vec": p["vec"], "per_phase": p["perPhase"], "max_phase": p["maxPhase"],
                "order": p["order"]}
    if enc.name == "nvmma_shared":
        return {"kind": "nvmma_shared", "swizzle": p["swizzlingByteWidth"], "bits": p["elementBitWidth"],
                "transposed": bool(p.get("transposed", False))}
    raise LayoutError(f"#{enc.name} has no Triton cross-check")
