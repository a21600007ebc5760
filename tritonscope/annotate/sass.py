"""SASS notes for the instructions the walkthrough names.  Opcode meanings follow
NVIDIA's CUDA binary utilities instruction-set reference; width suffixes are bits."""

from __future__ import annotations

import re

from tritonscope.annotate import refs
from tritonscope.model import Note, ParsedStage

#         /*0290*/                   LDGSTS.E.BYPASS.128 [R5+0x18000], desc[UR14][R10.64], P3 ;
_INSTR = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P[0-9T]\s+)?([A-Z][A-Z0-9_]*)((?:\.[A-Z0-9_x]+)*)")
_WIDTHS = {"64": 8, "128": 16, "U8": 1, "S8": 1, "U16": 2, "S16": 2}


def _bytes(mods: list[str]) -> int:
    for m in mods:
        if m in _WIDTHS:
            return _WIDTHS[m]
    return 4


def annotate(stage: ParsedStage) -> list[Note]:
    notes = []
    for line in stage.lines:
        m = _INSTR.match(line.text)
        if not m:
            continue
        got = _note(m.group(1), [x for x in m.group(2).split(".") if x], line.text)
        if got:
            notes.append(Note(stage.key, line.number, "instruction", got[0], got[1], refs.SASS))
    return notes


def _note(op: str, mods: list[str], text: str):
    full = ".".join([op, *mods])
    if op == "LDGSTS":
        b = _bytes(mods)
        return (f"LDGSTS {b}B", f"{full}: global → shared asynchronous copy of {b} bytes per thread (PTX cp.async"
                f"{'.cg' if 'BYPASS' in mods else ''}){'; BYPASS skips L1' if 'BYPASS' in mods else ''}.")
    if op == "LDGDEPBAR":
        return ("LDGDEPBAR", "Closes a group of LDGSTS copies (PTX cp.async.commit_group).")
    if op == "DEPBAR":
        n = re.search(r"SB\d+,\s*(0x[0-9a-f]+|\d+)", text)
        k = int(n.group(1), 0) if n else None
        return ("DEPBAR", f"Waits on a dependency barrier (PTX cp.async.wait_group"
                + (f" {k}: at most {k} copy groups still pending)." if k is not None else ")."))
    if op == "LDSM":
        x = mods[-1] if mods else ""
        trans = any(m.startswith("MT") for m in mods)
        return (f"LDSM x{x}{' .trans' if trans else ''}",
                f"{full}: PTX ldmatrix .x{x}{'.trans' if trans else ''}: {x} 8x8 16-bit matrices from shared memory.")
    if op == "STSM":
        return ("STSM", f"{full}: PTX stmatrix: 8x8 16-bit matrices from registers to shared memory.")
    if op == "HMMA":
        shape = mods[0] if mods else ""
        m = re.fullmatch(r"(\d{2})(\d)(\d+)", shape)
        desc = f"m{m.group(1)}n{m.group(2)}k{m.group(3)}" if m else shape
        acc = mods[1] if len(mods) > 1 else ""
        return (f"HMMA {desc}", f"{full}: warp-level tensor-core MMA {desc} (PTX mma.sync), {acc} accumulator.")
    if op == "HGMMA":
        return ("HGMMA", f"{full}: warpgroup tensor-core MMA (PTX wgmma.mma_async).")
    if op.startswith("UTMA"):
        what = {"UTMALDG": "TMA load global → shared", "UTMASTG": "TMA store shared → global",
                "UTMAPF": "TMA prefetch", "UTMACCTL": "TMA descriptor cache control"}.get(op)
        return (op, f"{full}: {what} (PTX cp.async.bulk.tensor and friends).") if what else None
    if op == "BAR":
        return ("BAR", f"{full}: CTA-wide barrier (PTX bar.sync).")
    if op == "SYNCS":
        return ("SYNCS", f"{full}: an mbarrier operation in shared memory (PTX mbarrier.*).")
    if op == "WARPGROUP":
        return ("WARPGROUP", f"{full}: warpgroup synchronization around wgmma (PTX wgmma.fence / wait_group).")
    if op in ("LDG", "STG", "LDS", "STS"):
        b = _bytes(mods)
        space = "global" if op in ("LDG", "STG") else "shared"
        kind = "load" if op.startswith("LD") else "store"
        return (f"{op} {b * 8}-bit", f"{full}: {space} {kind} of {b} bytes per thread"
                + (" (vector)." if b > 4 else "."))
    return None
