"""TTGIR layout encodings: parse the attribute text, explain it with its real numbers.

What an attribute's fields mean comes from Triton's definitions
(TritonGPUAttrDefs.td, TritonNvidiaGPUAttrDefs.td).  Every number about who
holds what (elements per thread, copies, wrapping, CTAs) comes from the same
linear layout that `tritonscope layout` draws (tritonscope.language.layouts), computed
at the shapes the kernel uses, and is also put in the note's facts
(facts["layout"]), so a note can never disagree with the drawing.  The syntax
(aliases, attribute fields, tensor and memdesc types, element widths) is read
by tritonscope.language.mlir_syntax, as everywhere else.
"""

from __future__ import annotations

import copy
import functools
import math
import re
from dataclasses import dataclass
from typing import Any

from tritonscope.language import refs
from tritonscope.language.mlir_syntax import (AliasRef, Attribute, MlirSyntaxError, alias_definition, element_bits,
                                     find_attributes, find_types, parse_attribute, parse_value, split_top)


@dataclass(frozen=True)
class Encoding:
    alias: str            # "#blocked"
    kind: str             # "blocked", "nvidia_mma", "swizzled_shared", ...
    fields: dict          # sizePerThread -> [1, 2], vec -> 8 ...
    text: str = ""        # the attribute as written: '#ttg.blocked<{...}>'


def _plain(v: Any) -> Any:
    """A field value as plain (JSON-safe) data: nested attributes and alias references become their text."""
    if isinstance(v, Attribute):
        return v.text
    if isinstance(v, (AliasRef, str)):
        return str(v)
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def parse_fields(body: str) -> dict:
    """'opIdx = 0, parent = #mma, kWidth = 2' (inside <{...}>) -> {'opIdx': 0, 'parent': '#mma', 'kWidth': 2}.

    Field by field: one that does not parse is left out rather than losing
    the others (a note is never worth an error).
    """
    out: dict = {}
    for part in split_top(body):
        key, eq, value = part.partition("=")
        key = key.strip().strip('"')
        if not key:
            continue
        if not eq:
            out[key] = True  # a unit attribute
            continue
        try:
            out[key] = _plain(parse_value(value))
        except MlirSyntaxError:
            continue
    return out


def parse_alias(line: str) -> Encoding | None:
    """'#blocked = #ttg.blocked<{...}>' -> Encoding('#blocked', 'blocked', fields); None for other lines."""
    got = alias_definition(line)
    if not got:
        return None
    return alias_encoding(*got)


def alias_encoding(name: str, text: str) -> Encoding | None:
    """An alias's definition (as mlir_syntax.alias_table gives it, lines joined) -> Encoding, or None."""
    try:
        attr = parse_attribute(text)
    except MlirSyntaxError:
        return None
    if not isinstance(attr, Attribute):
        return None
    return Encoding(f"#{name}", attr.name, normalized_fields(attr.name, {k: _plain(v) for k, v in attr.params.items()}),
                    text)


# --------------------------------------------------------------------------
# One spelling per layout: what Triton versions write differently for the same layout
# --------------------------------------------------------------------------

# Triton 3.4 writes #ttg.amd_mfma<{versionMajor = 4, versionMinor = 0, ...}>, 3.6 #ttg.amd_mfma<{version = 4, ...}>
_AMD_VERSION = re.compile(r"(\bamd_(?:mfma|wmma)<\{\s*)versionMajor\s*=\s*(\d+)\s*,\s*versionMinor\s*=\s*0\b\s*(,\s*)?")


def normalize_spelling(text: str) -> str:
    """An encoding's text with the spellings that differ between Triton versions made one:
    'amd_mfma<{versionMajor = 4, versionMinor = 0, warpsPerCTA = ...}>' -> 'amd_mfma<{version = 4, warpsPerCTA = ...}>'
    (nested parents included)."""
    return _AMD_VERSION.sub(lambda m: f"{m[1]}version = {m[2]}" + (", " if m[3] else ""), text)


def normalized_fields(kind: str, fields: dict) -> dict:
    """An encoding's fields in one spelling across Triton versions (see normalize_spelling)."""
    if kind in ("amd_mfma", "amd_wmma") and "versionMajor" in fields and "version" not in fields \
            and fields.get("versionMinor", 0) == 0:
        fields = {("version" if k == "versionMajor" else k): v for k, v in fields.items() if k != "versionMinor"}
    return fields


# 'amd_mfma<{' in a role's text whose dialect prefix was dropped: put one back to parse it
_BARE_ATTR = re.compile(r"(?<![#\w.])([A-Za-z_]\w*)<\{")


def _layout_key(text: str) -> tuple[str, list] | None:
    """(the text outside the encodings, [(kind, fields)] of each) for same_layout; None when none parses."""
    prefixed = _BARE_ATTR.sub(r"#ttg.\1<{", text)
    found = list(find_attributes(prefixed))
    if not found:
        return None
    outside, pos, attrs = [], 0, []
    for start, end, attr in found:
        outside.append(prefixed[pos:start])
        attrs.append(_attr_key(attr))
        pos = end
    outside.append(prefixed[pos:])
    return " ".join(" ".join(outside).split()), attrs


def _attr_key(attr: Attribute) -> tuple[str, dict]:
    fields = {k: (_attr_key(v) if isinstance(v, Attribute) else v) for k, v in attr.params.items()}
    return attr.name, normalized_fields(attr.name, fields)


def _same_value(key: str, a: Any, b: Any) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == 2 and isinstance(a[1], dict) \
            and isinstance(b[1], dict):
        return a[0] == b[0] and _same_fields(a[0], a[1], b[1])
    if key == "instrShape" and isinstance(a, list) and isinstance(b, list) and len(a) != len(b) \
            and min(len(a), len(b)) >= 2:
        # Triton 3.4 writes an MFMA's instrShape as [M, N], 3.6 as [M, N, K]; K does not place the accumulator,
        # and the operands' layout depends on it through their own kWidth: compare what both sides state
        n = min(len(a), len(b))
        return a[:n] == b[:n]
    return a == b


def _same_fields(kind: str, a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(_same_value(k, a[k], b[k]) for k in a)


def same_layout(a: str | None, b: str | None) -> bool:
    """Whether two encodings (as diff's roles write them: '16x16xf32 tensor amd_mfma<{...}>') are the same layout,
    however each Triton version spells it: fields are compared as values, in any order, after
    normalized_fields, and an instrShape that one side states without K matches the other's [M, N, K]."""
    if a == b:
        return True
    if a is None or b is None:
        return False
    ka, kb = _layout_key(normalize_spelling(a)), _layout_key(normalize_spelling(b))
    if ka is None or kb is None:
        return normalize_spelling(a) == normalize_spelling(b)
    if ka[0] != kb[0] or len(ka[1]) != len(kb[1]):
        return False
    return all(x[0] == y[0] and _same_fields(x[0], x[1], y[1]) for x, y in zip(ka[1], kb[1]))


def tensor_types(text: str) -> list[tuple[str, tuple[int, ...], str, str | None]]:
    """(container, shape, element type, encoding) for each tensor/memdesc type in a line.

    tensor<16x16xf16, #blocked>  ->  ('tensor', (16, 16), 'f16', '#blocked')
    """
    return [(t.head, t.shape, t.elem, t.encoding) for t in find_types(text)
            if t.head in ("tensor", "!ttg.memdesc") and t.static]


def inline_encodings(line: str) -> list[tuple[str, str, dict]]:
    """Encodings written inline in a line: (text as written, kind, fields), e.g.

    '#ttg.slice<{dim = 0, parent = #blocked}>' -> ('#ttg.slice<{...}>', 'slice', {'dim': 0, 'parent': '#blocked'})
    """
    return [(line[start:end], attr.name, {k: _plain(v) for k, v in attr.params.items()})
            for start, end, attr in find_attributes(line)]


def elem_bits(elem: str) -> int | None:
    """'f16' -> 16, '!tt.ptr<f16>' -> 64 (mlir_syntax's one table)."""
    return element_bits(elem)


def _fmt(v) -> str:
    return "[" + ", ".join(map(str, v)) + "]" if isinstance(v, (list, tuple)) else str(v)


def _x(v) -> str:
    return "x".join(map(str, v))


# --------------------------------------------------------------------------
# The numbers: from the layout that `tritonscope layout` draws
# --------------------------------------------------------------------------

NVIDIA_ENCODINGS = "https://github.com/triton-lang/triton/blob/main/include/triton/Dialect/" \
                   "TritonNvidiaGPU/IR/TritonNvidiaGPUAttrDefs.td"


def layout_numbers(text: str, shape: tuple[int, ...], aliases: dict[str, str] | None = None) -> dict | None:
    """Who holds what for `text` on `shape`, from tritonscope.language.layouts (the drawing's own model).

    {'shape', 'elements_per_thread', 'copies_per_element', 'threads', 'lanes_per_warp', 'cta_tile', 'wraps',
    'ctas', 'shape_per_cta', 'replicated_warps', 'warps'} for register layouts; None when the layout is not
    drawn (the note then gives no per-thread number at all).

    Kept per process by (text, shape, the aliases it reads): a stage repeats a few layouts on many ops, and the
    same layouts come back in every compile of a kernel (each caller gets its own copy).
    """
    found = _layout_numbers(text, tuple(shape), _aliases_read(text, aliases or {}))
    return copy.deepcopy(found) if found is not None else None


_ALIAS_REF = re.compile(r"#([\w$.-]+)")


def _aliases_read(text: str, aliases: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The (name, definition) pairs `text` refers to, also through the definitions it reaches (a #dot_op's
    parent #mma): the part of a stage's alias table the layout depends on, small whatever the table's size."""
    out: dict[str, str] = {}
    todo = _ALIAS_REF.findall(text)
    while todo:
        name = todo.pop()
        if name in aliases and name not in out:
            out[name] = aliases[name]
            todo += _ALIAS_REF.findall(aliases[name])
    return tuple(sorted(out.items()))


@functools.lru_cache(maxsize=4096)
def _layout_numbers(text: str, shape: tuple[int, ...], alias_items: tuple) -> dict | None:
    from tritonscope.language import layouts

    try:
        enc = layouts.parse_encoding(text, dict(alias_items), known_only=False)
        ll = layouts.linear_layout(enc, tuple(shape))
    except Exception:  # a note is never worth an error: no number rather than a guessed one
        return None
    if "register" not in ll.bases:
        return None
    use = layouts.LayoutUse("", text, enc.name, list(shape), "distributed",
                            bases={k: [list(b) for b in v] for k, v in ll.bases.items() if k != "block" or v})
    f = layouts.distributed_facts(use)
    tile = list(getattr(ll, "cta_tile", None) or shape)
    piece = f.get("shape_per_cta", list(shape))
    return {"shape": list(shape), "elements_per_thread": f["elements_per_thread"],
            "copies_per_element": f["copies_per_element"], "threads": f["threads"],
            "lanes_per_warp": f.get("lanes_per_warp", 32), "warps": 1 << len(ll.bases.get("warp", [])),
            "replicated_warps": f["replicated_warps"], "cta_tile": tile,
            "wraps": any(s > t for s, t in zip(piece, tile)), "ctas": f.get("ctas", 1), "shape_per_cta": piece}


def _numbers(enc: Encoding, shapes: list[tuple[int, ...]], context: dict) -> list[dict]:
    aliases = context.get("alias_texts", {})
    out = []
    for s in dict.fromkeys(tuple(x) for x in shapes):
        n = layout_numbers(enc.text, s, aliases) if enc.text else None
        if n:
            out.append(n)
    return out


def _held(n: dict) -> str:
    """'each thread holds 8 elements' plus the copies, from one layout_numbers record."""
    text = f"each thread holds {n['elements_per_thread']} elements"
    if n["copies_per_element"] > 1:
        text += f", every element held {n['copies_per_element']} times"
    return text


def _cta_sentence(enc: Encoding, numbers: list[dict]) -> str:
    """Layouts spread over several CTAs (a cluster): how many, and the piece each holds."""
    multi = [n for n in numbers if n["ctas"] > 1]
    if not multi:
        return ""
    n = multi[0]
    cga = enc.fields.get("CGALayout")
    how = f"CGALayout = {_fmt(cga)}" if cga else "CTAsPerCGA / CTASplitNum"
    text = (f" {how}: the tensor is spread over the {n['ctas']} CTAs of a cluster; on {_x(n['shape'])} each CTA "
            f"holds a {_x(n['shape_per_cta'])} piece")
    if n["ctas"] * math.prod(n["shape_per_cta"]) > math.prod(n["shape"]):
        text += " (some CTAs hold the same piece)"
    return text + "."


# --------------------------------------------------------------------------
# #blocked
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class BlockedTiles:
    per_thread: int            # elements one thread holds per repetition (sizePerThread)
    warp_tile: tuple[int, ...]
    cta_tile: tuple[int, ...]


def blocked_tiles(f: dict) -> BlockedTiles | None:
    try:
        spt, tpw, wpc = f["sizePerThread"], f["threadsPerWarp"], f["warpsPerCTA"]
    except KeyError:
        return None
    if not (len(spt) == len(tpw) == len(wpc)):
        return None
    warp = tuple(s * t for s, t in zip(spt, tpw))
    cta = tuple(w * n for w, n in zip(warp, wpc))
    return BlockedTiles(math.prod(spt), warp, cta)


def _blocked_text(enc: Encoding) -> str:
    """The attribute text (as written, or rebuilt from the fields for an Encoding made by hand)."""
    if enc.text:
        return enc.text
    f = enc.fields
    try:
        order = f.get("order") or list(range(len(f["sizePerThread"]) - 1, -1, -1))
        return (f"#ttg.blocked<{{sizePerThread = {list(f['sizePerThread'])}, threadsPerWarp = "
                f"{list(f['threadsPerWarp'])}, warpsPerCTA = {list(f['warpsPerCTA'])}, order = {list(order)}}}>")
    except (KeyError, TypeError):
        return ""


def blocked_fit(f: dict, shape: tuple[int, ...]) -> str | None:
    """How the CTA tile of a #blocked layout meets one tensor shape, or None if the layout has no number there."""
    n = layout_numbers(_blocked_text(Encoding("", "blocked", f)), tuple(shape))
    return _fit_sentence(n) if n else None


def _fit_sentence(n: dict) -> str:
    """How the CTA tile of a layout meets one tensor shape, in the drawn layout's numbers."""
    shape, piece, tile = n["shape"], n["shape_per_cta"], n["cta_tile"]
    per = n["elements_per_thread"]
    of = f"the {_x(shape)} tensor" if piece == shape else f"each CTA's {_x(piece)} piece of the {_x(shape)} tensor"
    if all(s >= c for s, c in zip(piece, tile)):
        reps = math.prod(piece) // math.prod(tile)
        if reps == 1:
            return f"{of} is exactly one CTA tile, so each thread holds {per} elements"
        return f"{of} wraps the {_x(tile)} CTA tile {reps} times, so each thread holds {per} elements"
    dims = [f"along dim {d} the tile spans {c} but the tensor only {s}, so {c // s} positions share each element"
            for d, (s, c) in enumerate(zip(piece, tile)) if s < c]
    return (f"{of} is smaller than the {_x(tile)} CTA tile, so the layout wraps around and replicates "
            f"({'; '.join(dims)})")


def explain_blocked(enc: Encoding, shapes: list[tuple[int, ...]], numbers: list[dict] | None = None) -> str:
    f = enc.fields
    tiles = blocked_tiles(f)
    if tiles is None:
        return ""
    spt, tpw, wpc = f["sizePerThread"], f["threadsPerWarp"], f["warpsPerCTA"]
    order = f.get("order")
    text = (f"sizePerThread = {_fmt(spt)}, threadsPerWarp = {_fmt(tpw)}, warpsPerCTA = {_fmt(wpc)}: "
            f"each thread holds a {_x(spt)} block ({tiles.per_thread} elements); "
            f"a warp's {_x(tpw)} threads cover a {_x(tiles.warp_tile)} tile; "
            f"the {math.prod(wpc)} warps ({_x(wpc)}) cover a {_x(tiles.cta_tile)} tile per CTA.")
    if order:
        text += f" order = {_fmt(order)}: dim {order[0]} is fastest-varying (contiguous per thread)."
    if numbers is None:
        numbers = [n for n in (layout_numbers(_blocked_text(enc), s) for s in shapes) if n]
    text += _cta_sentence(enc, numbers)
    fits = [_fit_sentence(n) for n in numbers]
    if fits:
        text += " For this kernel: " + "; ".join(dict.fromkeys(fits)) + "."
    return text


# --------------------------------------------------------------------------
# #nvidia_mma
# --------------------------------------------------------------------------


def mma_k(elem: str | None) -> int | None:
    """K of one mma.sync for an operand element type: 256 bits of K per thread-quad row."""
    bits = elem_bits(elem) if elem else None
    if elem in ("f32", "tf32"):
        return 8
    return 256 // bits if bits in (8, 16) else None


def explain_mma(enc: Encoding, operand_elem: str | None, acc_shapes: list[tuple[int, ...]],
                numbers: list[dict] | None = None) -> tuple[str, str]:
    f = enc.fields
    major, inst, wpc = f.get("versionMajor"), f.get("instrShape", []), f.get("warpsPerCTA", [])
    nwarps = math.prod(wpc) if wpc else 0
    k = mma_k(operand_elem)
    if numbers is None:
        numbers = [n for n in (layout_numbers(enc.text, s) for s in acc_shapes) if n] if enc.text else []
    if major == 2 and len(inst) == 2:
        shape = f"m{inst[0]}n{inst[1]}k{k}" if k else f"m{inst[0]}n{inst[1]}"
        label = f"mma v2 → mma.sync.{shape}"
        text = (f"versionMajor = 2: Ampere-style tensor cores through warp-level mma.sync; instrShape = "
                f"{_fmt(inst)} is one {inst[0]}x{inst[1]} accumulator tile per instruction"
                + (f", so with {operand_elem} operands each instruction is mma.{shape}" if k else "") + ". "
                f"warpsPerCTA = {_fmt(wpc)}: the {nwarps} warps tile the output {wpc[0]} x {wpc[1]}, "
                f"covering {wpc[0] * inst[0]}x{wpc[1] * inst[1]} per repetition.")
        text += _cta_sentence(enc, numbers)
        for n in numbers:
            s = n["shape_per_cta"]
            if len(s) == 2 and s[0] % inst[0] == 0 and s[1] % inst[1] == 0:
                tm, tn = s[0] // inst[0], s[1] // inst[1]
                busy = n["warps"] // n["replicated_warps"]
                # elements of one instruction tile a thread holds: inst[0] * inst[1] / 32
                per_warp = n["elements_per_thread"] * 32 // (inst[0] * inst[1])
                text += (f" The {_x(s)} accumulator is {tm} x {tn} = {tm * tn} instruction tiles: "
                         f"{busy} of the {n['warps']} warps do distinct work, {per_warp} tile(s) each per K step")
                if busy < n["warps"]:
                    text += f" (the other {n['warps'] - busy} warps hold copies)"
                text += "."
        return label, text
    if major == 3 and len(inst) == 3:
        label = f"mma v3 → wgmma.m64n{inst[1]}k{inst[2]}"
        groups = nwarps // 4 if nwarps else 0
        text = (f"versionMajor = 3: Hopper warpgroup MMA (wgmma). instrShape = {_fmt(inst)}: each warp owns "
                f"{inst[0]} rows, so a warpgroup of 4 warps issues wgmma.m{inst[0] * 4}n{inst[1]}k{inst[2]} "
                f"({4 * inst[0]}x{inst[1]} accumulator, K = {inst[2]} per instruction). warpsPerCTA = {_fmt(wpc)}: "
                f"{nwarps} warps = {groups} warpgroup(s), covering {wpc[0] * inst[0]}x{wpc[1] * inst[1]}.")
        text += _cta_sentence(enc, numbers)
        text += _per_shape(numbers, "accumulator")
        return label, text
    if major == 5 and len(inst) >= 2:
        label = f"mma v5 → tcgen05.mma M={inst[0]} N={inst[1]}"
        text = (f"versionMajor = 5: Blackwell tcgen05.mma with the accumulator in tensor memory; "
                f"instrShape = {_fmt(inst)}; warpsPerCTA = {_fmt(wpc)}.")
        return label, text
    return "", ""


def _per_shape(numbers: list[dict], what: str) -> str:
    """' On the 64x64 accumulator each thread holds 32 elements.' for every shape the kernel uses."""
    parts = [f"on {_x(n['shape'])} {_held(n)}" for n in numbers]
    return (f" For this kernel's {what}: " + "; ".join(dict.fromkeys(parts)) + ".") if parts else ""


# --------------------------------------------------------------------------
# AMD: #amd_mfma (CDNA), #amd_wmma (RDNA)
# --------------------------------------------------------------------------

_AMD_ELEM = {"f16": "f16", "bf16": "bf16"}


def explain_mfma(enc: Encoding, operand_elem: str | None, numbers: list[dict]) -> tuple[str, str]:
    f = enc.fields
    ver, inst, wpc = f.get("version"), f.get("instrShape", []), f.get("warpsPerCTA", [])
    if len(inst) < 2:
        return "", ""
    m, n = inst[0], inst[1]
    k = inst[2] if len(inst) > 2 else None
    arch = {2: "CDNA2 (MI200)", 3: "CDNA3 (gfx942, MI300)", 4: "CDNA4 (gfx950, MI350)"}.get(ver, f"version {ver}")
    instr = (f"v_mfma_f32_{m}x{n}x{k}_{_AMD_ELEM[operand_elem]}" if k and operand_elem in _AMD_ELEM
             else f"a {m}x{n}" + (f"x{k}" if k else "") + " MFMA")
    label = f"mfma v{ver} → {m}x{n}" + (f"x{k}" if k else "")
    nw = math.prod(wpc) if wpc else 0
    text = (f"AMD matrix cores ({arch}): each 64-lane wave computes a {m}x{n} accumulator tile per instruction "
            f"({instr}"
            + (f", K = {k}" if k else "") + "). ")
    if f.get("isTransposed"):
        text += ("isTransposed = true: lanes run down M (lane l % " + str(m) + " is the row) and each lane holds "
                 "4 consecutive N elements per register group, so a thread's results are contiguous along N "
                 "(wide stores).")
    else:
        text += ("isTransposed = false: lanes run along N and each lane holds 4 consecutive M elements per "
                 "register group.")
    if wpc:
        text += (f" warpsPerCTA = {_fmt(wpc)}: the {nw} waves tile the output {' x '.join(map(str, wpc))}, "
                 f"covering {wpc[0] * m}x{wpc[1] * n} per repetition." if len(wpc) == 2 else
                 f" warpsPerCTA = {_fmt(wpc)}.")
    text += _cta_sentence(enc, numbers) + _per_shape(numbers, "accumulator")
    return label, text


def explain_wmma(enc: Encoding, operand_elem: str | None, numbers: list[dict]) -> tuple[str, str]:
    f = enc.fields
    ver = f.get("version")
    inst = f.get("instrShape") or [16, 16, 16]
    arch = {1: "RDNA3 (gfx11)", 2: "RDNA4 (gfx12)", 3: "gfx1250"}.get(ver, f"version {ver}")
    instr = (f"v_wmma_f32_16x16x{inst[2]}_{_AMD_ELEM[operand_elem]}" if operand_elem in _AMD_ELEM
             else f"a 16x16x{inst[2]} WMMA")
    label = f"wmma v{ver} → 16x16x{inst[2]}"
    transposed = bool(f.get("isTranspose", f.get("isTransposed", False)))
    along, across = ("N", "M") if transposed else ("M", "N")
    text = f"AMD WMMA ({arch}): each 32-lane wave computes a 16x16 accumulator tile per instruction ({instr}). "
    if ver == 1:
        text += (f"Version 1: lanes 0-15 take the 16 {across} positions and each lane holds 8 elements along {along}, "
                 f"every other one; lanes 16-31 hold the ones in between.")
    else:
        text += (f"Lanes 0-15 take the 16 {across} positions and each lane holds 8 consecutive elements along "
                 f"{along}; lanes 16-31 hold the other 8.")
    warps = f.get("warpsPerCTA")
    cta = f.get("ctaLayout")
    if warps:
        text += f" warpsPerCTA = {_fmt(warps)}: the waves tile the output {' x '.join(map(str, warps))}."
    elif isinstance(cta, dict) and cta.get("warp") is not None:
        text += (f" ctaLayout = {{warp = {_fmt(cta['warp'])}}}: each wave bit steps one 16x16 tile along the "
                 f"dimension its basis names.")
    text += _cta_sentence(enc, numbers) + _per_shape(numbers, "accumulator")
    return label, text


# --------------------------------------------------------------------------
# Shared memory
# --------------------------------------------------------------------------


def explain_swizzled(enc: Encoding, elem: str | None, row_len: int | None, *, amd: bool = False) -> str:
    f = enc.fields
    vec, per, mx, order = f.get("vec"), f.get("perPhase"), f.get("maxPhase"), f.get("order")
    if vec is None or per is None or mx is None:
        return ""
    bits = elem_bits(elem) if elem else None
    text = (f"Shared-memory layout with an XOR swizzle: rows are stored in chunks of vec = {vec} elements"
            + (f" ({vec * bits // 8} bytes of {elem})" if bits else "")
            + f"; row r uses phase (r // perPhase) % maxPhase = (r // {per}) % {mx}, and chunk c of the row is "
              f"stored at chunk c XOR phase.")
    rotating = enc.kind == "amd_rotating_shared"
    reader = "ds_read" if amd else "ldmatrix"
    if mx == 1:
        text += " maxPhase = 1 means no swizzling."
    elif rotating:
        text += (f" Rotating (AMD): the phase is also XORed with the block number (r // {per * mx}) % {mx}, so "
                 f"each block of perPhase x maxPhase = {per * mx} rows uses a different pattern. Why: rows that "
                 f"would map to the same banks get different chunk positions, so a wave reading a column of chunks "
                 f"(as {reader} does) avoids bank conflicts.")
    else:
        text += (f" The pattern repeats every perPhase x maxPhase = {per * mx} rows. Why: rows that would map to the "
                 f"same shared-memory banks get different chunk positions, so a warp reading a column of chunks "
                 f"(as {reader} does) avoids bank conflicts.")
        if bits and row_len:
            row_bytes = row_len * bits // 8
            if per * row_bytes == 128:
                text += (f" Here a row is {row_len} x {elem} = {row_bytes} bytes, so {per} rows fill the 32 "
                         f"4-byte banks once ({per} x {row_bytes} = 128 bytes): that is why perPhase = {per}.")
    if order:
        text += f" order = {_fmt(order)}: dim {order[0]} is contiguous in memory."
    return text


def explain_nvmma_shared(enc: Encoding) -> str:
    f = enc.fields
    sw, bits, tr = f.get("swizzlingByteWidth"), f.get("elementBitWidth"), f.get("transposed")
    if sw is None:
        return ""
    if sw == 0:
        text = "swizzlingByteWidth = 0: no swizzle (the interleaved layout wgmma/TMA also accept)."
    else:
        text = (f"The shared layout wgmma and TMA read directly (matrix descriptors): swizzlingByteWidth = {sw} "
                f"selects the {sw}-byte swizzle mode: within each {sw}-byte row segment the 16-byte chunks are "
                f"XOR-permuted by the row index, so the 8 rows of a core matrix fall into different banks.")
        if bits:
            text += f" elementBitWidth = {bits}: a {sw}-byte segment holds {sw * 8 // bits} elements."
    if tr is not None:
        text += f" transposed = {str(tr).lower()}."
    return text


def explain_padded(enc: Encoding) -> tuple[str, str]:
    """#padded_shared<[64:+4] {...}>: the LDS layout AMD kernels use to avoid bank conflicts."""
    from tritonscope.language.layouts import padding_of
    from tritonscope.language.mlir_syntax import parse_attribute as _parse

    try:
        pads = padding_of(_parse(enc.text))
    except Exception:
        pads = []
    if not pads:
        return "", ""
    rule = "; ".join(f"after every {i} elements, {p} unused ones" for i, p in pads)
    label = "padded shared " + ", ".join(f"[{i}:+{p}]" for i, p in pads)
    text = (f"Shared-memory (LDS) layout with padding: {rule}. Padding shifts each row (or group of rows) to "
            f"other banks, so reads down a column do not all hit the same bank; it costs that extra space.")
    if "offset" in enc.fields:
        text += " The offset bases list where consecutive elements go before the padding is added."
    elif "order" in enc.fields:
        text += f" order = {_fmt(enc.fields['order'])}: dim {enc.fields['order'][0]} is contiguous."
    return label, text


# --------------------------------------------------------------------------
# Blackwell tensor memory
# --------------------------------------------------------------------------


def explain_tmem(enc: Encoding, shapes: list[tuple[int, ...]]) -> tuple[str, str]:
    f = enc.fields
    if enc.kind == "tensor_memory_scales_encoding":
        return ("tensor memory scales",
                "Tensor-memory layout of the block scales of a scaled tcgen05.mma: 32 lanes of 4 scale bytes, "
                "repeated in each 32-lane group (every warp of the warpgroup reads the same scales).")
    bm, bn = f.get("blockM"), f.get("blockN")
    if bm is None or bn is None:
        return "", ""
    label = f"tensor memory {bm}x{bn}"
    text = (f"Blackwell tensor memory (TMEM), the accumulator of tcgen05.mma: a {bm}x{bn} block. Tensor memory is "
            f"128 lanes x 512 32-bit columns per SM; row i of the block lives in lane i"
            + (" (blockM = 64: rows 0-15 in lanes 0-15, the next 16 rows in lanes 32-47, and so on; lanes 16-31 "
               "of each group are unused)" if bm == 64 else "")
            + ", and the N dimension runs along the columns. Warp w of a warpgroup can only access lanes "
              "32w..32w+31 (tcgen05.ld/st), which fixes the register layouts that load it.")
    if "colStride" in f:
        text += f" colStride = {f['colStride']}."
    if f.get("unpacked") is not None:
        text += f" unpacked = {str(f['unpacked']).lower()}."
    from tritonscope.language import layouts

    for s in dict.fromkeys(tuple(x) for x in shapes):
        try:
            use = layouts.describe(layouts.parse_encoding(enc.text, known_only=False), s)
        except Exception:
            continue
        if use.kind == "tensor_memory":
            text += (f" On {_x(s)}: {use.facts['lanes_used']} lanes x {use.facts['columns_used']} columns"
                     + (f", each element in {use.facts['copies_per_element']} lane groups"
                        if use.facts.get("copies_per_element", 1) > 1 else "") + ".")
    return label, text


# --------------------------------------------------------------------------
# One explanation per encoding (alias definitions and inline encodings)
# --------------------------------------------------------------------------

MEMORY_SPACE_TEXT = {
    "shared_memory": ("memory space: shared memory",
                      "#ttg.shared_memory marks a memdesc (a buffer descriptor) as living in shared memory "
                      "(LDS on AMD): the per-CTA scratchpad that ttg.local_alloc allocates and "
                      "local_load/local_store and async copies use."),
    "tensor_memory": ("memory space: tensor memory",
                      "#ttng.tensor_memory marks a memdesc as living in Blackwell tensor memory (TMEM): 128 lanes x "
                      "512 32-bit columns per SM, allocated with ttng.tmem_alloc, written by tcgen05.mma and read "
                      "with tcgen05.ld."),
}


def explain_note(enc: Encoding, context: dict) -> tuple[str, str, str, dict] | None:
    """(label, explanation, reference, extra facts) for an encoding, or None if there is nothing to say.

    extra facts: {'layout': [layout_numbers(...) per shape used]} where the layout is drawn.
    """
    k = enc.kind
    shapes = context.get("shapes", {}).get(enc.alias, [])
    numbers = _numbers(enc, shapes, context) if k not in MEMORY_SPACE_TEXT else []
    extra = {"layout": numbers} if numbers else {}
    elem = context.get("dot_elem", {}).get(enc.alias)
    got: tuple[str, str] | None = None
    ref = refs.ENCODINGS
    if k == "blocked":
        text = explain_blocked(enc, shapes, numbers)
        f = enc.fields
        got = (f"#blocked {_fmt(f.get('sizePerThread'))}/{_fmt(f.get('threadsPerWarp'))}/"
               f"{_fmt(f.get('warpsPerCTA'))}", text) if text else None
    elif k == "nvidia_mma":
        got = explain_mma(enc, elem, shapes, numbers)
    elif k == "amd_mfma":
        got = explain_mfma(enc, elem, numbers)
    elif k == "amd_wmma":
        got = explain_wmma(enc, elem, numbers)
    elif k in ("swizzled_shared", "amd_rotating_shared"):
        elem_s, row = context.get("shared_elem", {}).get(enc.alias, (None, None))
        text = explain_swizzled(enc, elem_s, row, amd=context.get("vendor") == "amd")
        f = enc.fields
        name = "rotating shared" if k == "amd_rotating_shared" else "swizzled shared"
        got = (f"{name} vec={f.get('vec')} perPhase={f.get('perPhase')} maxPhase={f.get('maxPhase')}",
               text) if text else None
    elif k == "nvmma_shared":
        text = explain_nvmma_shared(enc)
        got = (f"nvmma shared, {enc.fields.get('swizzlingByteWidth')}-byte swizzle", text) if text else None
    elif k == "padded_shared":
        got = explain_padded(enc)
    elif k == "shared_linear":
        got = ("shared linear", "Shared-memory layout given directly by its offset bases: offset bit i moves to "
                                "the element its i-th basis names (XOR of the bases of the bits set).")
    elif k in ("tensor_memory_encoding", "tensor_memory_scales_encoding"):
        got = explain_tmem(enc, context.get("mem_shapes", {}).get(enc.alias, []))
        ref = NVIDIA_ENCODINGS
    elif k in MEMORY_SPACE_TEXT:
        got = MEMORY_SPACE_TEXT[k]
        ref = NVIDIA_ENCODINGS if k == "tensor_memory" else refs.ENCODINGS
    elif k in ("slice", "dot_op"):
        inline = explain_inline(k, enc.fields)
        if inline:
            got = (inline[0], inline[1] + _per_shape(numbers, "tensors"))
    elif k == "linear":
        got = ("#linear", "Triton's general register layout, written as its linear-layout bases: register bit i of "
                          "a thread, lane bit i and warp bit i each move to the element their basis names, and an "
                          "element is the XOR of the bases of the set bits." + _per_shape(numbers, "tensors"))
    if not got or not got[1]:
        return None
    return got[0], got[1], ref, extra


def explain(enc: Encoding, context: dict) -> tuple[str, str, str] | None:
    """(label, explanation, reference) for an alias definition, or None if unknown."""
    got = explain_note(enc, context)
    return got[:3] if got else None


def explain_inline(kind: str, f: dict) -> tuple[str, str] | None:
    """Inline encodings (#ttg.slice<...>, #ttg.dot_op<...>)."""
    if kind == "slice" and "dim" in f and "parent" in f:
        return (f"#slice dim={f['dim']} of {f['parent']}",
                f"A tensor with one dimension fewer than {f['parent']}: dimension {f['dim']} of the parent is "
                f"removed, so element i lives with the threads that hold index i along the other dimension "
                f"(the layout a 1-D range needs before expand_dims along axis {f['dim']}).")
    if kind == "dot_op" and "opIdx" in f:
        which = "A (left)" if f["opIdx"] == 0 else "B (right)"
        text = f"Operand {which} of a dot whose result uses {f.get('parent')}: opIdx = {f['opIdx']}."
        if "kWidth" in f:
            text += (f" kWidth = {f['kWidth']}: each thread holds {f['kWidth']} consecutive elements along K "
                     f"together (packed into registers for the MMA).")
        return (f"#dot_op opIdx={f['opIdx']}" + (f" kWidth={f['kWidth']}" if "kWidth" in f else ""), text)
    return None


def explain_inline_note(text: str, kind: str, f: dict, context: dict) -> tuple[str, str, dict] | None:
    """An inline #ttg.slice / #ttg.dot_op with the numbers of the shapes it is used at."""
    got = explain_inline(kind, f)
    if not got:
        return None
    enc = Encoding(text, kind, f, text)
    numbers = _numbers(enc, context.get("shapes", {}).get(text, []), context)
    # the text stays the attribute's meaning; the per-shape numbers go in the facts
    return got[0], got[1], ({"layout": numbers} if numbers else {})
