"""Linear layouts (Triton's toLinearLayout): the core, the dispatch table each family fills, blocked, slice, nvidia_mma and their dot operands."""

from __future__ import annotations

from typing import Any

from tritonscope.language.layouts.parse import Encoding, SUPPORTED, field_problem

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

    def outputs_of(self, dim: str) -> list[tuple[int, ...]]:
        """apply(dim=i) for every i in range(in_size(dim)), in that order: each basis vector doubles the
        list (out[i + 2**k] = out[i] XOR basis k), one XOR per output instead of one per set bit."""
        outs = [tuple(0 for _ in self.outs)]
        for b in self.bases.get(dim, []):
            outs += [tuple(o ^ x for o, x in zip(prev, b)) for prev in outs]
        return outs

    def walk(self, dims: list[str], **fixed: int):
        """((i_0, i_1, ...), apply(dims[0]=i_0, dims[1]=i_1, ..., **fixed)) for every input of `dims`, the
        first dim outermost (the order of nested loops over them): each output is the XOR of one row of each
        dim's outputs_of, so a walk costs one XOR per output, not one per set bit of every input."""
        import itertools

        start = self.apply(**fixed)
        tables = [self.outputs_of(d) for d in dims]
        if len(dims) == 1:  # the common case, without a product
            for i, row in enumerate(tables[0]):
                yield (i,), tuple(a ^ b for a, b in zip(start, row))
            return
        *outer, inner = tables
        for index in itertools.product(*(range(len(t)) for t in outer)):
            acc = start
            for t, i in zip(outer, index):
                acc = tuple(a ^ b for a, b in zip(acc, t[i]))
            for r, row in enumerate(inner):
                yield (*index, r), tuple(a ^ b for a, b in zip(acc, row))

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


# Encoding name -> builder (enc, shape, series) -> LinearLayout, and #dot_op parent name -> its operand
# builder (enc, parent, shape, series): each family's module adds its own (the package imports them all).
_BUILDERS: dict = {}
_DOT_BUILDERS: dict = {}


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
    builder = _DOT_BUILDERS.get(parent.name)
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
_BUILDERS.update({"blocked": _blocked, "slice": _slice, "nvidia_mma": _nvidia_mma, "dot_op": _dot_op})
_DOT_BUILDERS.update({"nvidia_mma": _nvidia_dot, "blocked": _fma_dot})


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
