"""Encodings -> who owns which element, and where it lands in shared memory.

Triton describes every layout as a *linear layout*: a list of basis vectors
per hardware index (register, lane, warp for tensors in registers; offset for
shared memory).  The element owned by (warp w, lane l, register r) is the XOR
of the bases whose bits are set in w, l and r.  This module is an exact,
pure-Python implementation of Triton's own conversions
(lib/Dialect/TritonGPU/IR/LinearLayoutConversions.cpp) for the encodings
NVIDIA kernels use:

    #ttg.blocked, #ttg.slice, #ttg.nvidia_mma (v2 and v3), #ttg.dot_op
    (NVIDIA mma parent), #ttg.swizzled_shared, #ttg.nvmma_shared

It never imports Triton: `tests/test_layouts.py` compares it basis by basis
with Triton's own conversion (triton_api.linear_layouts_from_triton), run in a
subprocess.  Anything this module cannot reproduce exactly (other encodings,
multi-CTA layouts) is reported as text plus a note, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from tritonscope.errors import InputFileError, UsageError, close_matches

# ==========================================================================
# Parsing layout attribute strings
# ==========================================================================


@dataclass(frozen=True)
class Encoding:
    """A parsed layout attribute: its name ('blocked'), fields and nested parent."""

    name: str                      # "blocked", "slice", "nvidia_mma", "dot_op", ...
    params: dict[str, Any]         # field -> int | bool | list | Encoding | str
    text: str                      # the attribute as written (aliases resolved)

    @property
    def parent(self) -> "Encoding | None":
        p = self.params.get("parent")
        return p if isinstance(p, Encoding) else None

    @property
    def is_shared(self) -> bool:
        return self.name in SHARED_ENCODINGS


DISTRIBUTED_ENCODINGS = ("blocked", "slice", "nvidia_mma", "dot_op")
SHARED_ENCODINGS = ("swizzled_shared", "nvmma_shared", "shared", "padded_shared", "shared_linear")
SUPPORTED = ("blocked", "slice", "nvidia_mma", "dot_op", "swizzled_shared", "nvmma_shared")
# Encodings Triton prints that carry no element mapping of their own.
MEMORY_SPACES = ("shared_memory", "tensor_memory")
# Known to Triton: the rest of these are shown as text with a note, not drawn.
KNOWN_ENCODINGS = SUPPORTED + MEMORY_SPACES + (
    "linear", "amd_mfma", "amd_wmma", "padded_shared", "shared_linear", "shared", "nvmma_tensor",
    "tensor_memory_encoding", "tensor_memory_scales_encoding", "amd_rotating_shared", "partitioned_shared")


class _Parser:
    """Recursive descent over MLIR attribute syntax, enough for Triton's encodings.

    #ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
    #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>
    """

    def __init__(self, text: str, aliases: dict[str, str] | None, source: str):
        self.text = text
        self.pos = 0
        self.aliases = aliases or {}
        self.source = source
        self.depth = 0

    def fail(self, what: str) -> InputFileError:
        caret = " " * min(self.pos, len(self.text)) + "^"
        near = self.text[self.pos:self.pos + 20] or "end of input"
        return InputFileError(
            f"Malformed layout {self.source}: {what} at character {self.pos + 1} (near {near!r}).",
            context=f"{self.text}\n{caret}",
            hint="Write it as Triton prints it, e.g. '#ttg.blocked<{sizePerThread = [1, 2], "
                 "threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>'.")

    def ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.ws()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, s: str) -> None:
        self.ws()
        if not self.text.startswith(s, self.pos):
            raise self.fail(f"expected {s!r}")
        self.pos += len(s)

    def ident(self) -> str:
        self.ws()
        m = re.compile(r"[A-Za-z_][A-Za-z0-9_.$-]*").match(self.text, self.pos)
        if not m:
            raise self.fail("expected a name")
        self.pos = m.end()
        return m.group(0)

    def encoding(self) -> Encoding:
        self.ws()
        start = self.pos
        self.expect("#")
        name = self.ident()
        if "." not in name:  # an alias such as #blocked
            if name not in self.aliases:
                self.pos = start
                raise self.fail(f"unknown alias '#{name}' (give the layout inline, not by its alias)")
            self.depth += 1
            if self.depth > 20:
                raise self.fail("alias cycle")
            inner = _Parser(self.aliases[name], self.aliases, f"alias #{name}")
            inner.depth = self.depth
            enc = inner.encoding()
            self.depth -= 1
            return enc
        dialect, _, short = name.partition(".")
        if short not in KNOWN_ENCODINGS:
            self.pos = start
            raise self.fail(f"unknown encoding '#{name}'{close_matches(short, KNOWN_ENCODINGS)}")
        params: dict[str, Any] = {}
        if self.peek() == "<":
            self.expect("<")
            if self.peek() == "{":
                self.expect("{")
                if self.peek() != "}":
                    while True:
                        key = self.ident()
                        if self.peek() == "=":
                            self.expect("=")
                            params[key] = self.value()
                        else:
                            params[key] = True
                        if self.peek() == ",":
                            self.expect(",")
                            continue
                        break
                self.expect("}")
            elif self.peek() != ">":
                raise self.fail("expected '{' or '>'")
            self.expect(">")
        text = self.text[start:self.pos]
        return Encoding(short, params, _canonical(dialect, short, params) if params else text)

    def value(self) -> Any:
        c = self.peek()
        if c == "[":
            self.expect("[")
            items = []
            if self.peek() != "]":
                while True:
                    items.append(self.value())
                    if self.peek() == ",":
                        self.expect(",")
                        continue
                    break
            self.expect("]")
            return items
        if c == "#":
            return self.encoding()
        if c == '"':
            end = self.text.find('"', self.pos + 1)
            if end < 0:
                raise self.fail("unterminated string")
            s = self.text[self.pos + 1:end]
            self.pos = end + 1
            return s
        m = re.compile(r"-?\d+").match(self.text, self.pos)
        if m:
            self.pos = m.end()
            v = int(m.group(0))
            if self.peek() == ":":  # "1 : i32"
                self.expect(":")
                self.ident()
            return v
        word = self.ident()
        if word in ("true", "false"):
            return word == "true"
        return word


def _canonical(dialect: str, name: str, params: dict[str, Any]) -> str:
    def fmt(v):
        if isinstance(v, Encoding):
            return v.text
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, list):
            return "[" + ", ".join(fmt(x) for x in v) + "]"
        return str(v)

    return f"#{dialect}.{name}<{{" + ", ".join(f"{k} = {fmt(v)}" for k, v in params.items()) + "}>"


def parse_encoding(text: str, aliases: dict[str, str] | None = None, source: str = "string") -> Encoding:
    """'#ttg.blocked<{...}>' -> Encoding; InputFileError showing where parsing stopped."""
    p = _Parser(text.strip(), aliases, source)
    if not p.text:
        raise InputFileError("Empty layout string.", hint="Give a layout such as '#ttg.blocked<{...}>'.")
    enc = p.encoding()
    p.ws()
    if p.pos != len(p.text):
        raise p.fail("unexpected text after the layout")
    return enc


# #blocked = #ttg.blocked<{sizePerThread = [1, 2], ...}>
_ALIAS_RE = re.compile(r"^(#[A-Za-z_][A-Za-z0-9_]*)\s*=\s*(#.*?)\s*$")


def aliases_of(ttgir: str) -> dict[str, str]:
    """Module-level attribute aliases of a TTGIR text ('blocked' -> its definition)."""
    out = {}
    for line in ttgir.splitlines():
        if line.startswith("#loc"):
            continue
        m = _ALIAS_RE.match(line)
        if m and not m.group(2).startswith("#loc") and not m.group(2).startswith("loc("):
            out[m.group(1)[1:]] = m.group(2)
    return out


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


def combine_with_shape(cta: LinearLayout, shape: tuple[int, ...], *, drop_registers: bool = False) -> LinearLayout:
    """combineCtaCgaWithShape for one CTA per CGA (num-ctas = 1)."""
    labeled = {f"dim{i}": s for i, s in enumerate(shape)}
    tile = [cta.out_size(f"dim{i}") for i in range(len(shape))]
    cta = cta.not_smaller_than(labeled).not_larger_than(labeled, drop_registers=drop_registers)
    ret = cta.transpose_outs(_std(len(shape)))
    ret.cta_tile = tile  # what one pass of all warps covers: wrapping/replication vs the shape
    return ret


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


def _check_single_cta(enc: Encoding) -> None:
    for key in ("CTAsPerCGA", "CTASplitNum"):
        if key in enc.params and any(x != 1 for x in _ints(enc, key)):
            raise LayoutError(f"#{enc.name} spreads over several CTAs ({key} = {enc.params[key]}); "
                              "tritonscope draws one CTA only")
    for key in ("CGALayout", "cgaLayout", "CTALayout"):
        v = enc.params.get(key)
        if v and any(any(x for x in b) for b in v if isinstance(b, list)):
            raise LayoutError(f"#{enc.name} spreads over several CTAs ({key}); tritonscope draws one CTA only")


def triton_series() -> tuple[int, int] | None:
    """The installed Triton's (major, minor), read from package metadata (no import)."""
    try:
        from importlib.metadata import version

        major, minor = version("triton").split(".")[:2]
        return int(major), int("".join(c for c in minor if c.isdigit()) or 0)
    except Exception:
        return None


def blocked_drops_copies(series: tuple[int, int] | None) -> bool:
    """Whether #blocked removes register bases that only hold copies (shape smaller
    than sizePerThread).  Triton 3.9 removes them; 3.6 keeps them as zero bases.
    Same owners either way; only register numbering differs."""
    return series is None or series >= (3, 9)


def linear_layout(enc: Encoding, shape: tuple[int, ...], series: tuple[int, int] | None = None) -> LinearLayout:
    """The exact linear layout of `enc` on `shape` (Triton's toLinearLayout).

    Distributed layouts: in dims register/lane/warp.  Shared: in dim offset.
    `series` is the Triton release whose numbering to follow (default: the
    installed one).  Raises LayoutError where the encoding is not reproduced
    exactly here.
    """
    if series is None:
        series = triton_series()
    shape = tuple(int(s) for s in shape)
    for s in shape:
        _log2(s)
    _check_single_cta(enc)
    rank = len(shape)
    name = enc.name
    if name == "blocked":
        spt, tpw, wpc, order = (_ints(enc, k) for k in ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order"))
        _check_rank(enc, rank, len(order))
        cta = (identity_standard_nd("register", spt, order) * identity_standard_nd("lane", tpw, order)
               * identity_standard_nd("warp", wpc, order))
        return combine_with_shape(cta, shape, drop_registers=blocked_drops_copies(series))
    if name == "slice":
        dim = _int(enc, "dim")
        parent = enc.parent
        if parent is None:
            raise LayoutError("#slice needs a parent layout")
        if not 0 <= dim <= rank:
            raise LayoutError(f"#slice dim = {dim} is out of range for a rank-{rank} shape")
        pshape = shape[:dim] + (1,) + shape[dim:]
        pll = linear_layout(parent, pshape, series)
        if "offset" in pll.bases:
            raise LayoutError("#slice of a shared layout")
        sl = pll.compose_drop(dim)
        sl.bases["register"] = [b for b in sl.bases.get("register", []) if any(b)]
        ret = LinearLayout(sl.bases, sl.outs)
        tile = getattr(pll, "cta_tile", None)
        if tile:
            ret.cta_tile = [t for i, t in enumerate(tile) if i != dim]
        return ret
    if name == "nvidia_mma":
        major = _int(enc, "versionMajor")
        wpc, instr = _ints(enc, "warpsPerCTA"), _ints(enc, "instrShape")
        _check_rank(enc, rank, len(wpc))
        if major == 2:
            tile = list(instr)
        elif major == 3:
            tile = list(instr[:2])
        else:
            raise LayoutError(f"#nvidia_mma version {major} is not drawn (only 2 and 3)")
        if rank != 2 or len(tile) != 2:
            raise LayoutError("only rank-2 #nvidia_mma layouts are drawn")
        order = _matrix_order(rank, True)
        cta = _mma_tile(tile, 2, order, _matrix_order(rank, True))
        warp = identity_standard_nd("warp", wpc, _matrix_order(rank, major != 3)).transpose_outs(cta.out_names)
        return combine_with_shape(cta * warp, shape)
    if name == "dot_op":
        parent = enc.parent
        if parent is None or parent.name != "nvidia_mma":
            raise LayoutError("only #dot_op layouts with an #nvidia_mma parent are drawn")
        op, k_width = _int(enc, "opIdx"), _int(enc, "kWidth", 0)
        major = _int(parent, "versionMajor")
        wpc = _ints(parent, "warpsPerCTA")
        if rank != 2:
            raise LayoutError("only rank-2 #dot_op layouts are drawn")
        if k_width <= 0:
            raise LayoutError("#dot_op without kWidth has no register layout")
        if major == 3 and op == 1:
            raise LayoutError("a Hopper (mma v3) B operand is read from shared memory, not registers")
        if major == 2 and _ints(parent, "instrShape")[0] != 16:
            raise LayoutError("#dot_op of an mma with instrShape M != 16 is not drawn")
        is_a = op == 0
        tile = [16, k_width * 8] if is_a else [k_width * 8, 8]
        order = [1, 0] if is_a else [0, 1]  # getOrderForDotOperand(kContig=true)
        cta = _mma_tile(tile, k_width, order, order)
        k_dim = 1 if is_a else 0
        warp = LinearLayout.empty()
        for d in _matrix_order(rank, major != 3):
            maker = LinearLayout.zeros1d if d == k_dim else LinearLayout.identity1d
            warp = warp * maker(wpc[d], "warp", f"dim{d}")
        return combine_with_shape(cta * warp.transpose_outs(cta.out_names), shape)
    if name == "swizzled_shared":
        vec, per_phase, max_phase = _int(enc, "vec"), _int(enc, "perPhase"), _int(enc, "maxPhase")
        order = _ints(enc, "order")
        _check_rank(enc, rank, len(order))
        if rank == 1:
            return combine_with_shape(LinearLayout.identity1d(shape[0], "offset", "dim0"), shape)
        col, row = order[0], order[1]
        ncols, nrows = shape[col], shape[row]
        bases = [(0, c) for c in _pow2_below(ncols)]
        bases += [(r, (vec * ((r // per_phase) % max_phase)) % ncols) for r in _pow2_below(nrows)]
        cta = LinearLayout.from_bases({"offset": bases}, [f"dim{row}", f"dim{col}"])
        for d in order[2:]:
            cta = cta * LinearLayout.identity1d(shape[d], "offset", f"dim{d}")
        return combine_with_shape(cta, shape)
    if name == "nvmma_shared":
        return _nvmma_shared(enc, shape)
    raise LayoutError(f"#{enc.name} is not one of the encodings tritonscope draws ({', '.join(SUPPORTED)})")


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


def _nvmma_shared(enc: Encoding, shape: tuple[int, ...]) -> LinearLayout:
    swizzle = _int(enc, "swizzlingByteWidth")
    bits = _int(enc, "elementBitWidth")
    transposed = bool(enc.params.get("transposed", False))
    if enc.params.get("fp4Padded"):
        raise LayoutError("fp4-padded #nvmma_shared layouts are not drawn")
    rank = len(shape)
    if rank < 2:
        raise ShapeRankError("#nvmma_shared needs a shape of rank 2 or more")
    # getTMABlockShape: every dim at most 256, the contiguous one exactly the swizzle width
    tma = [min(s, 256) for s in shape]
    contig = 0 if transposed else rank - 1
    if swizzle:
        width = 8 * swizzle // bits
        if tma[contig] < width:
            raise LayoutError(f"a {swizzle}-byte swizzle needs at least {width} elements along the "
                              f"contiguous dim (shape {list(shape)}); Triton rejects this shape")
        tma[contig] = width
    if swizzle == 0:
        if transposed and rank != 2:
            raise LayoutError("unswizzled, transposed #nvmma_shared layouts of rank > 2 are not drawn")
        dims = [0, 1] if transposed else list(range(rank - 1, -1, -1))  # contiguous dim first
        ll = LinearLayout.empty()
        for i in dims:
            ll = ll * LinearLayout.identity1d(tma[i], "offset", f"dim{i}")
        ll = ll.not_smaller_than_ordered(_std(rank), list(shape))
        return combine_with_shape(ll, shape)
    collapsed = [1, tma[-1]]
    for s in tma[:-1]:
        collapsed[0] *= s
    if transposed:
        collapsed.reverse()
    vec = 128 // bits
    per_phase, max_phase = {32: (4, 2), 64: (2, 4), 128: (1, 8)}.get(swizzle, (0, 0))
    if not per_phase:
        raise LayoutError(f"swizzlingByteWidth = {swizzle} is not 0, 32, 64 or 128")
    tile_cols = 8 * max(16, swizzle) // bits
    bases = [(0, c) for c in _pow2_below(tile_cols)]
    bases += [(r, vec * ((r // per_phase) % max_phase)) for r in _pow2_below(8)]
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
    return combine_with_shape(ll, shape)


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
    use.bases = {k: [list(b) for b in v] for k, v in ll.bases.items() if k != "block"}
    if "offset" in ll.bases:
        use.kind = "shared"
        bits = enc.params.get("elementBitWidth") if enc.name == "nvmma_shared" else None
        use.elem_bits = int(bits) if isinstance(bits, int) else (elem_bits or 16)
        use.facts = shared_facts(use, enc)
    else:
        use.kind = "distributed"
        use.facts = distributed_facts(use)
        tile = getattr(ll, "cta_tile", None)
        if tile:
            use.facts["cta_tile"] = list(tile)
            use.facts["wraps"] = any(s > t for s, t in zip(shape, tile))
            use.facts["tile_larger_than_shape"] = any(s < t for s, t in zip(shape, tile))
        use.facts["instr_tile"] = instruction_tile(enc)
        if enc.name in ("nvidia_mma", "dot_op") and tile and use.facts["instr_tile"] and len(tile) == 2:
            use.facts["warp_map"] = _warp_map(enc, tile, use.facts["instr_tile"])
    return use


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


def owner_grid(use: LayoutUse) -> dict[tuple[int, ...], list[tuple[int, int, int]]]:
    """element -> [(warp, lane, register), ...] (more than one owner = replication)."""
    ll = _ll_of(use)
    out: dict[tuple[int, ...], list[tuple[int, int, int]]] = {}
    for w in range(ll.in_size("warp")):
        for ln in range(ll.in_size("lane")):
            for r in range(ll.in_size("register")):
                out.setdefault(ll.apply(warp=w, lane=ln, register=r), []).append((w, ln, r))
    return out


def elements_of_thread(use: LayoutUse, warp: int, lane: int) -> list[tuple[int, ...]]:
    """The elements thread (warp, lane) holds, in register order (the hardware view)."""
    ll = _ll_of(use)
    return [ll.apply(warp=warp, lane=lane, register=r) for r in range(ll.in_size("register"))]


def offset_grid(use: LayoutUse) -> dict[tuple[int, ...], int]:
    """element -> its offset (in elements) in shared memory; first offset wins if several."""
    ll = _ll_of(use)
    out: dict[tuple[int, ...], int] = {}
    for off in range(ll.in_size("offset")):
        out.setdefault(ll.apply(offset=off), off)
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
    """Elements per thread, replication, wrapping and contiguity, in numbers."""
    regs = use.bases.get("register", [])
    lanes = use.bases.get("lane", [])
    warps = use.bases.get("warp", [])
    total = 1
    for s in use.shape:
        total *= s
    threads = (1 << len(lanes)) * (1 << len(warps))
    zero_lanes = sum(1 for b in lanes if not any(b))
    zero_warps = sum(1 for b in warps if not any(b))
    zero_regs = sum(1 for b in regs if not any(b))
    held = threads * (1 << len(regs))
    rank = len(use.shape)
    # contiguity: registers that step along the fastest dim first (a vector load's width)
    fastest = rank - 1
    best_dim, contig = fastest, 1
    for d in range(rank):
        c = _bits_span(regs, d)
        if c > contig:
            best_dim, contig = d, c
    return {
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


def instruction_tile(enc: Encoding) -> list[int] | None:
    """The block one mma instruction (or one warp's fragment) covers, for drawing its borders."""
    p = enc.params
    if enc.name == "nvidia_mma":
        instr = p.get("instrShape") or []
        return [int(instr[0]), int(instr[1])] if len(instr) >= 2 else None
    if enc.name == "dot_op" and enc.parent is not None and enc.parent.name == "nvidia_mma":
        kw = p.get("kWidth") or 2
        return [16, 8 * kw] if p.get("opIdx") == 0 else [8 * kw, 8]
    if enc.name == "blocked":
        spt, tpw = p.get("sizePerThread") or [], p.get("threadsPerWarp") or []
        return [a * b for a, b in zip(spt, tpw)] or None  # what one warp covers
    return None


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
        pp, mp = {32: (4, 2), 64: (2, 4), 128: (1, 8)}.get(sw, (1, 1))
        facts.update(vec=128 // bits, per_phase=pp, max_phase=mp, swizzle_bytes=sw,
                     order=[0, 1] if enc.params.get("transposed") else [1, 0])
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
    offsets = offset_grid(use)
    order = use.facts.get("order") if use.facts else None
    rows_dim, cols_dim = (0, 1)
    if isinstance(order, list) and len(order) == 2:
        cols_dim, rows_dim = order[0], order[1]
    nrows, ncols = use.shape[rows_dim], use.shape[cols_dim]
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
            "piece_elements": per16}


# ==========================================================================
# Layouts of a compiled kernel
# ==========================================================================

# tensor<16x16xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>   or   !ttg.memdesc<2x16x16xf16, #shared, #smem, mutable>
_TYPE_RE = re.compile(r"(tensor|memdesc)<((?:\d+x)+)([!\w.]+?)(?:<[^<>]*>)?,\s*")
_ELEM_BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "i1": 8, "i8": 8, "i16": 16, "i32": 32, "i64": 64,
              "f8E4M3FN": 8, "f8E5M2": 8, "f8E4M3FNUZ": 8, "f8E5M2FNUZ": 8, "tf32": 32}


def _encoding_after(text: str, pos: int) -> tuple[str, int] | None:
    """The '#...' attribute starting at pos, balanced over <>; (text, end)."""
    if pos >= len(text) or text[pos] != "#":
        return None
    depth, i = 0, pos + 1
    while i < len(text):
        ch = text[i]
        if ch == "<":
            depth += 1
        elif ch == ">":
            if depth == 0:
                break
            depth -= 1
            if depth == 0:
                i += 1
                break
        elif depth == 0 and ch in ",) \n":
            break
        i += 1
    return text[pos:i], i


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
    for m in _TYPE_RE.finditer(body):
        kind = m.group(1)
        shape = tuple(int(x) for x in m.group(2).rstrip("x").split("x"))
        elem = m.group(3)
        got = _encoding_after(body, m.end())
        if not got:
            continue
        text, _ = got
        key = (text, shape)
        if key not in uses:
            uses[key] = {"kinds": set(), "bits": _ELEM_BITS.get(elem.lstrip("!"))}
            order.append(key)
        uses[key]["kinds"].add(f"{kind}<{'x'.join(map(str, shape))}x{elem}>")
    # Drop a multi-buffered memdesc shape when its last dims are also used alone.
    shapes_by_text: dict[str, set[tuple[int, ...]]] = {}
    for text, shape in order:
        shapes_by_text.setdefault(text, set()).add(shape)
    out: list[LayoutUse] = []
    for text, shape in order:
        if len(shape) > 2 and shape[1:] in shapes_by_text[text]:
            continue
        alias = text[1:] if re.fullmatch(r"#[A-Za-z_][A-Za-z0-9_]*", text) else ""
        if alias and alias in aliases and aliases[alias].startswith("#ttg.") and \
                aliases[alias].split("<")[0].split(".")[-1] in MEMORY_SPACES:
            continue
        try:
            enc = parse_encoding(text, aliases, source=f"in the TTGIR ({text})")
        except InputFileError as e:
            out.append(LayoutUse(alias, text, "?", list(shape), "text", note=f"Not drawn: {e.message}"))
            continue
        if enc.name in MEMORY_SPACES:
            continue
        info = uses[(text, shape)]
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


def triton_spec(enc: Encoding) -> dict[str, Any]:
    """A plain-data description from which triton_api builds Triton's own (gluon) layout."""
    p = enc.params
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
