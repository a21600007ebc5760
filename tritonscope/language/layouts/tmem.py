"""Blackwell tensor memory and its scales."""

from __future__ import annotations


from tritonscope.language.layouts.linear import LayoutError, LinearLayout, ShapeRankError, _BUILDERS, _cga_layout, _id, _int, _shape_per_cta
from tritonscope.language.layouts.parse import Encoding

# ==========================================================================

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


_BUILDERS.update({"tensor_memory_encoding": _tensor_memory, "tensor_memory_scales_encoding": _tensor_memory_scales})
