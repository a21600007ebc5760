"""Shared memory: swizzled, rotating, partitioned and NVMMA (the swizzles TMA and wgmma read)."""

from __future__ import annotations


from tritonscope.language.mlir_syntax import Attribute
from tritonscope.language.layouts.linear import LayoutError, LinearLayout, _BUILDERS, _cga_layout, _check_rank, _int, _ints, _log2, _pow2_below, _reshape, _shape_per_cta, _std, _transpose, combine_with_shape, linear_layout
from tritonscope.language.layouts.parse import MEMORY_LAYOUTS, Encoding, NVMMA_SWIZZLE_PHASES

# ==========================================================================

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
_BUILDERS.update({"swizzled_shared": _swizzled_shared, "amd_rotating_shared": _rotating_shared,
                  "partitioned_shared": _partitioned_shared})


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


_BUILDERS.update({"nvmma_shared": _nvmma_shared})
