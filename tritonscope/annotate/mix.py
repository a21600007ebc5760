"""Instruction mix: per-stage counts by class, with widths where they matter."""

from __future__ import annotations

import re

from tritonscope.model import ParsedStage

# PTX: class name built from the match (first pattern that matches a line wins)
_PTX = [
    # cp.async.ca.shared.global [ %r21 + 0 ], [ %rd5 + 0 ], 0x4, %r22;
    (re.compile(r"\bcp\.async\.(ca|cg)\.shared\S*\.global\S*\s+\[[^\]]*\],\s*\[[^\]]*\],\s*(0x[0-9a-f]+|\d+)"),
     lambda m: f"async copy .{m.group(1)} {int(m.group(2), 0)}B"),
    (re.compile(r"\bcp\.async\.commit_group"), lambda m: "async commit group"),
    (re.compile(r"\bcp\.async\.wait_(?:group|all)"), lambda m: "async wait group"),
    (re.compile(r"\bcp\.async\.bulk\.tensor"), lambda m: "tma copy"),
    (re.compile(r"\bcp\.async\.bulk"), lambda m: "bulk copy"),
    # ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
    (re.compile(r"\bldmatrix\.sync\.aligned\.m8n8\.(x\d)(\.trans)?"), lambda m: f"ldmatrix {m.group(1)}{m.group(2) or ''}"),
    (re.compile(r"\bstmatrix\.sync\.aligned\.m8n8\.(x\d)(\.trans)?"), lambda m: f"stmatrix {m.group(1)}{m.group(2) or ''}"),
    # mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
    (re.compile(r"\bmma\.sync\.aligned\.(m\d+n\d+k\d+)"), lambda m: f"mma {m.group(1)}"),
    # wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16
    (re.compile(r"\bwgmma\.mma_async\S*\.(m\d+n\d+k\d+)"), lambda m: f"wgmma {m.group(1)}"),
    (re.compile(r"\bwgmma\.(fence|commit_group|wait_group)"), lambda m: f"wgmma {m.group(1)}"),
    (re.compile(r"\bmbarrier\."), lambda m: "mbarrier"),
    (re.compile(r"\b(?:bar\.sync|barrier\.sync)"), lambda m: "barrier"),
    # ld.global.v4.b32 / st.shared.v2.b32 / ld.global.b16
    (re.compile(r"\b(ld|st)\.(global|shared)(?:::cta)?(?:\.[\w:]+)*?\.(?:(v\d)\.)?[busf](\d+)\b"),
     lambda m: f"{m.group(2)} {'load' if m.group(1) == 'ld' else 'store'} "
               f"{m.group(3) or 'scalar'}.{m.group(4)}"),
]

# SASS: opcode with modifiers -> class
#         /*0290*/                   LDGSTS.E.BYPASS.128 [R5+0x18000], desc[UR14][R10.64], P3 ;
_SASS_OP = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P[0-9T]\s+)?([A-Z][A-Z0-9_]*)((?:\.[A-Z0-9_x]+)*)")
_SASS_WIDTH = {"64": "64", "128": "128", "U8": "8", "S8": "8", "U16": "16", "S16": "16"}


def _sass_class(op: str, mods: list[str]) -> str | None:
    width = next((_SASS_WIDTH[m] for m in mods if m in _SASS_WIDTH), "32")
    if op == "LDGSTS":
        return f"async copy LDGSTS {width}-bit"
    if op == "LDGDEPBAR":
        return "async commit LDGDEPBAR"
    if op == "DEPBAR":
        return "async wait DEPBAR"
    if op == "LDSM":
        return "ldmatrix " + ".".join([op, *mods])
    if op == "STSM":
        return "stmatrix " + ".".join([op, *mods])
    if op == "HMMA":
        return "mma HMMA." + ".".join(mods)
    if op == "HGMMA":
        return "wgmma HGMMA." + ".".join(mods[:1])
    if op.startswith("UTMA"):
        return f"tma {op}"
    if op == "SYNCS":
        return "mbarrier SYNCS"
    if op == "BAR":
        return "barrier BAR"
    if op in ("LDG", "STG", "LDS", "STS"):
        space = "global" if op in ("LDG", "STG") else "shared"
        return f"{space} {'load' if op.startswith('LD') else 'store'} {op} {width}-bit"
    return None


def instruction_mix(stage: ParsedStage) -> dict[str, int]:
    counts: dict[str, int] = {}
    if stage.key == "ptx":
        for line in stage.lines:
            t = line.text
            if not t or "." not in t or t.lstrip().startswith("//"):
                continue
            for pattern, name in _PTX:
                m = pattern.search(t)
                if m:
                    key = name(m)
                    counts[key] = counts.get(key, 0) + 1
                    break
    elif stage.key == "sass":
        for line in stage.lines:
            m = _SASS_OP.match(line.text)
            if m:
                key = _sass_class(m.group(1), [x for x in m.group(2).split(".") if x])
                if key:
                    counts[key] = counts.get(key, 0) + 1
    return counts
