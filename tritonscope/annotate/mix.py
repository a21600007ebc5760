"""Instruction mix: per-stage counts by class."""

from __future__ import annotations

import re

from tritonscope.model import ParsedStage

# (class, stage, pattern) -- first match wins per line
_CLASSES = {
    "ptx": [
        ("async copy", re.compile(r"^\s*(?:@%p\d+\s+)?cp\.async(?!\.bulk)")),
        ("tma copy", re.compile(r"cp\.async\.bulk")),
        ("ldmatrix", re.compile(r"\bldmatrix\.")),
        ("mma", re.compile(r"\bmma\.sync\.")),
        ("wgmma", re.compile(r"\bwgmma\.mma_async")),
        ("barrier", re.compile(r"\b(?:bar\.sync|barrier\.sync|mbarrier\.)")),
        ("global load", re.compile(r"\bld\.global")),
        ("global store", re.compile(r"\bst\.global")),
        ("shared load", re.compile(r"\bld\.shared")),
        ("shared store", re.compile(r"\bst\.shared")),
    ],
    "sass": [
        ("async copy", re.compile(r"\bLDGSTS\b")),
        ("tma copy", re.compile(r"\bUTMA\w*")),
        ("ldmatrix", re.compile(r"\bLDSM\b")),
        ("mma", re.compile(r"\bHMMA\b")),
        ("wgmma", re.compile(r"\bHGMMA\b")),
        ("barrier", re.compile(r"\b(?:BAR|SYNCS)\b")),
        ("global load", re.compile(r"\bLDG\b")),
        ("global store", re.compile(r"\bSTG\b")),
        ("shared load", re.compile(r"\bLDS\b")),
        ("shared store", re.compile(r"\bSTS\b")),
    ],
}


def instruction_mix(stage: ParsedStage) -> dict[str, int]:
    patterns = _CLASSES.get(stage.key)
    if not patterns:
        return {}
    counts: dict[str, int] = {}
    for line in stage.lines:
        for name, pattern in patterns:
            if pattern.search(line.text):
                counts[name] = counts.get(name, 0) + 1
                break
    return counts
