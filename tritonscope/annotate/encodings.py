"""TTGIR layout encodings: parse the attribute text, explain it with its real numbers.

Only what follows directly from the attribute definitions in Triton's
TritonGPUAttrDefs.td is computed here; anything that needs the full layout
math (who owns which element) is left to tritonscope.layouts.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from tritonscope.annotate import refs

# #blocked = #ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
ALIAS_DEF = re.compile(r"^(#\w+)\s*=\s*#(?:ttg|triton_gpu)\.(\w+)<\{(.*)\}>\s*$")
# sizePerThread = [1, 2]   or   vec = 8   or   transposed = false
_FIELD = re.compile(r"(\w+)\s*=\s*(\[[^\]]*\]|#[\w.]+(?:<\{[^}]*\}>)?|\"[^\"]*\"|[\w.-]+)")
# tensor<16x16xf16, #blocked>   !ttg.memdesc<2x16x16xf16, #shared, #smem, mutable>
TENSOR_TYPE = re.compile(r"(tensor|!ttg\.memdesc)<((?:\d+x)+)(!tt\.ptr<\w+>|\w+)(?:, (#[\w.]+(?:<\{[^}]*\}>)?))?[,>]")

BITS = {"f16": 16, "bf16": 16, "f32": 32, "tf32": 32, "f64": 64, "i8": 8, "i16": 16, "i32": 32, "i64": 64,
        "i1": 8, "f8E4M3FN": 8, "f8E5M2": 8, "f8E4M3FNUZ": 8, "f8E5M2FNUZ": 8}


@dataclass(frozen=True)
class Encoding:
    alias: str            # "#blocked"
    kind: str             # "blocked", "nvidia_mma", "swizzled_shared", ...
    fields: dict          # sizePerThread -> [1, 2], vec -> 8 ...


def parse_fields(body: str) -> dict:
    out: dict = {}
    for key, value in _FIELD.findall(body):
        if value.startswith("["):
            out[key] = [int(v) for v in re.findall(r"-?\d+", value)]
        elif re.fullmatch(r"-?\d+", value):
            out[key] = int(value)
        elif value in ("true", "false"):
            out[key] = value == "true"
        else:
            out[key] = value.strip('"')
    return out


def parse_alias(line: str) -> Encoding | None:
    m = ALIAS_DEF.match(line.strip())
    if not m:
        return None
    return Encoding(m.group(1), m.group(2), parse_fields(m.group(3)))


def tensor_types(text: str) -> list[tuple[str, tuple[int, ...], str, str | None]]:
    """(container, shape, element type, encoding) for each tensor/memdesc type in a line."""
    out = []
    for m in TENSOR_TYPE.finditer(text):
        shape = tuple(int(d) for d in m.group(2).rstrip("x").split("x"))
        out.append((m.group(1), shape, m.group(3), m.group(4)))
    return out


def elem_bits(elem: str) -> int | None:
    if elem.startswith("!tt.ptr"):
        return 64
    return BITS.get(elem)


def _fmt(v) -> str:
    return "[" + ", ".join(map(str, v)) + "]" if isinstance(v, (list, tuple)) else str(v)


def _x(v) -> str:
    return "x".join(map(str, v))


# --------------------------------------------------------------------------
# #blocked
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class BlockedTiles:
    per_thread: int            # elements one thread holds per repetition
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


def blocked_fit(f: dict, shape: tuple[int, ...]) -> str | None:
    """How the CTA tile of a blocked layout meets one tensor shape, or None if unsure."""
    tiles = blocked_tiles(f)
    if tiles is None or len(shape) != len(tiles.cta_tile):
        return None
    spt = f["sizePerThread"]
    if any(s <= 0 or c <= 0 for s, c in zip(shape, tiles.cta_tile)):
        return None
    if any((s % c and c % s) for s, c in zip(shape, tiles.cta_tile)):
        return None  # neither a multiple nor a divisor: leave it to the layout math
    parts = []
    wraps = [s // c for s, c in zip(shape, tiles.cta_tile) if s > c]
    copies = [c // s for s, c in zip(shape, tiles.cta_tile) if s < c]
    if all(s >= c for s, c in zip(shape, tiles.cta_tile)):
        elems = math.prod(sp * (s // c) for sp, s, c in zip(spt, shape, tiles.cta_tile))
        if not wraps:
            parts.append(f"the {_x(shape)} tensor is exactly one CTA tile, so each thread holds {elems} elements")
        else:
            parts.append(f"the {_x(shape)} tensor wraps the {_x(tiles.cta_tile)} CTA tile "
                         f"{math.prod(wraps)} times, so each thread holds {elems} elements")
    else:
        dims = [f"along dim {d} the tile spans {c} but the tensor only {s}, so {c // s} positions share each element"
                for d, (s, c) in enumerate(zip(shape, tiles.cta_tile)) if s < c]
        parts.append(f"the {_x(shape)} tensor is smaller than the {_x(tiles.cta_tile)} CTA tile, "
                     f"so the layout wraps around and replicates ({'; '.join(dims)})")
    del copies
    return "; ".join(parts)


def explain_blocked(enc: Encoding, shapes: list[tuple[int, ...]]) -> str:
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
    fits = [fit for fit in (blocked_fit(f, s) for s in shapes) if fit]
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


def explain_mma(enc: Encoding, operand_elem: str | None, acc_shapes: list[tuple[int, ...]]) -> tuple[str, str]:
    f = enc.fields
    major, inst, wpc = f.get("versionMajor"), f.get("instrShape", []), f.get("warpsPerCTA", [])
    nwarps = math.prod(wpc) if wpc else 0
    k = mma_k(operand_elem)
    if major == 2 and len(inst) == 2:
        shape = f"m{inst[0]}n{inst[1]}k{k}" if k else f"m{inst[0]}n{inst[1]}"
        label = f"mma v2 → mma.sync.{shape}"
        text = (f"versionMajor = 2: Ampere-style tensor cores through warp-level mma.sync; instrShape = "
                f"{_fmt(inst)} is one {inst[0]}x{inst[1]} accumulator tile per instruction"
                + (f", so with {operand_elem} operands each instruction is mma.{shape}" if k else "") + ". "
                f"warpsPerCTA = {_fmt(wpc)}: the {nwarps} warps tile the output {wpc[0]} x {wpc[1]}, "
                f"covering {wpc[0] * inst[0]}x{wpc[1] * inst[1]} per repetition.")
        for s in dict.fromkeys(acc_shapes):
            if len(s) == 2 and s[0] % inst[0] == 0 and s[1] % inst[1] == 0:
                tm, tn = s[0] // inst[0], s[1] // inst[1]
                busy = min(wpc[0], tm) * min(wpc[1], tn)
                per_warp = math.ceil(tm / wpc[0]) * math.ceil(tn / wpc[1])
                text += (f" The {_x(s)} accumulator is {tm} x {tn} = {tm * tn} instruction tiles: "
                         f"{busy} of the {nwarps} warps do distinct work, {per_warp} tile(s) each per K step")
                if busy < nwarps:
                    text += f" (the other {nwarps - busy} warps hold copies)"
                text += "."
        return label, text
    if major == 3 and len(inst) == 3:
        label = f"mma v3 → wgmma.m64n{inst[1]}k{inst[2]}"
        groups = nwarps // 4 if nwarps else 0
        text = (f"versionMajor = 3: Hopper warpgroup MMA (wgmma). instrShape = {_fmt(inst)}: each warp owns "
                f"{inst[0]} rows, so a warpgroup of 4 warps issues wgmma.m{inst[0] * 4}n{inst[1]}k{inst[2]} "
                f"({4 * inst[0]}x{inst[1]} accumulator, K = {inst[2]} per instruction). warpsPerCTA = {_fmt(wpc)}: "
                f"{nwarps} warps = {groups} warpgroup(s), covering {wpc[0] * inst[0]}x{wpc[1] * inst[1]}.")
        return label, text
    if major == 5 and len(inst) >= 2:
        label = f"mma v5 → tcgen05.mma M={inst[0]} N={inst[1]}"
        text = (f"versionMajor = 5: Blackwell tcgen05.mma with the accumulator in tensor memory; "
                f"instrShape = {_fmt(inst)}; warpsPerCTA = {_fmt(wpc)}.")
        return label, text
    return "", ""


# --------------------------------------------------------------------------
# Shared memory
# --------------------------------------------------------------------------


def explain_swizzled(enc: Encoding, elem: str | None, row_len: int | None) -> str:
    f = enc.fields
    vec, per, mx, order = f.get("vec"), f.get("perPhase"), f.get("maxPhase"), f.get("order")
    if vec is None or per is None or mx is None:
        return ""
    bits = elem_bits(elem) if elem else None
    text = (f"Shared-memory layout with an XOR swizzle: rows are stored in chunks of vec = {vec} elements"
            + (f" ({vec * bits // 8} bytes of {elem})" if bits else "")
            + f"; row r uses phase (r // perPhase) % maxPhase = (r // {per}) % {mx}, and chunk c of the row is "
              f"stored at chunk c XOR phase.")
    if mx == 1:
        text += " maxPhase = 1 means no swizzling."
    else:
        text += (f" The pattern repeats every perPhase x maxPhase = {per * mx} rows. Why: rows that would map to the "
                 f"same shared-memory banks get different chunk positions, so a warp reading a column of chunks "
                 f"(as ldmatrix does) avoids bank conflicts.")
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


def explain(enc: Encoding, context: dict) -> tuple[str, str, str] | None:
    """(label, explanation, reference) for an alias definition, or None if unknown."""
    k = enc.kind
    if k == "blocked":
        shapes = context.get("shapes", {}).get(enc.alias, [])
        f = enc.fields
        text = explain_blocked(enc, shapes)
        return (f"#blocked {_fmt(f.get('sizePerThread'))}/{_fmt(f.get('threadsPerWarp'))}/"
                f"{_fmt(f.get('warpsPerCTA'))}", text, refs.ENCODINGS) if text else None
    if k == "nvidia_mma":
        label, text = explain_mma(enc, context.get("dot_elem", {}).get(enc.alias),
                                  context.get("shapes", {}).get(enc.alias, []))
        return (label, text, refs.ENCODINGS) if text else None
    if k == "swizzled_shared":
        elem, row = context.get("shared_elem", {}).get(enc.alias, (None, None))
        text = explain_swizzled(enc, elem, row)
        f = enc.fields
        return (f"swizzled shared vec={f.get('vec')} perPhase={f.get('perPhase')} maxPhase={f.get('maxPhase')}",
                text, refs.ENCODINGS) if text else None
    if k == "nvmma_shared":
        text = explain_nvmma_shared(enc)
        return (f"nvmma shared, {enc.fields.get('swizzlingByteWidth')}-byte swizzle", text, refs.ENCODINGS) if text else None
    if k == "shared_memory":
        return ("shared memory space", "#smem marks memdescs that live in the CTA's shared memory.", None)
    return None


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
