"""Layouts of a compiled kernel: every encoding its TTGIR uses, drawn or said why not."""

from __future__ import annotations

import re
from typing import Any

from tritonscope.core.errors import InputFileError, UsageError
from tritonscope.language.mlir_syntax import find_types
from tritonscope.language.layouts.drawing import LayoutUse, describe
from tritonscope.language.layouts.linear import LayoutError, _rank_hint
from tritonscope.language.layouts.parse import MEMORY_LAYOUTS, Encoding, MEMORY_SPACES, aliases_of, parse_encoding

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
