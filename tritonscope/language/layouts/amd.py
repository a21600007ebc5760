"""AMD: MFMA (CDNA) and WMMA (RDNA) accumulators and their operands."""

from __future__ import annotations


from tritonscope.language.layouts.linear import LayoutError, LinearLayout, ShapeRankError, _BUILDERS, _DOT_BUILDERS, _cga_layout, _check_rank, _dot_cga, _id, _int, _ints, _log2, _matrix_order, _std, combine_with_shape, identity_standard_nd
from tritonscope.language.layouts.parse import Encoding

# ==========================================================================

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
_BUILDERS.update({"amd_mfma": _amd_mfma, "amd_wmma": _amd_wmma})
_DOT_BUILDERS.update({"amd_mfma": _mfma_dot, "amd_wmma": _wmma_dot})
