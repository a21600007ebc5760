"""What a drawing needs: owner maps, shared-memory placement, and the facts a saved report is checked against."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from tritonscope.core.errors import UsageError
from tritonscope.language.layouts.amd import _wmma_tile
from tritonscope.language.layouts.bases import padded_offset, padding_of
from tritonscope.language.layouts.linear import LayoutError, LinearLayout, ShapeRankError, _std, linear_layout
from tritonscope.language.layouts.parse import Encoding, NVMMA_SWIZZLE_PHASES

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
    for (w, _ln, _r), e in full.walk(["warp", "lane", "register"]):
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
    for owner, e in ll.walk(["warp", "lane", "register"], block=block):
        out.setdefault(e, []).append(owner)
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
        for _, e in ll.walk([base_in] if base_in else ["warp", "lane", "register"], block=blk):
            out.setdefault(e, blk)
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
    for off, element in enumerate(ll.outputs_of("offset")):
        out.setdefault(element, padded_offset(off, padding) if padding else off)
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
