"""Layouts that list their bases: #linear, #generic_linear, #shared_linear, #padded_shared."""

from __future__ import annotations


from tritonscope.language.layouts.linear import LayoutError, LinearLayout, _BUILDERS, _bases, _check_rank, _ints, _log2, _std, identity_standard_nd
from tritonscope.language.layouts.parse import Encoding

# ==========================================================================

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
_BUILDERS.update({"linear": _linear, "generic_linear": _linear, "shared_linear": _shared_linear,
                  "padded_shared": _padded_shared})
