"""Parsers: real checked-in stage files (tests/data/stages/<series>/<case>) -> lines with source locations.

Goldens under tests/golden/parse/<series>/ hold, per case and stage, the
Python line of every located line; `pytest --regen` rewrites them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import GOLDEN, check_golden, triton_series
from tritonscope.language.dialects import parse_stage
from tritonscope.language.mlir_syntax import strip_locs

STAGES = Path(__file__).resolve().parent / "data" / "stages"
CASES = ("matmul_b16_sm80", "matmul_b16_sm90a", "matmul_grouped_sm90a")
KEYS = ("ttir", "ttgir", "llir", "ptx", "sass")


def load_case(case: str, series: str | None = None):
    d = STAGES / (series or triton_series()) / case
    meta = json.loads((d / "meta.json").read_text())
    stages = {p.name: p.read_text() for p in d.iterdir() if p.name != "meta.json"}
    return meta, stages


def parse_case(case: str, series: str | None = None):
    meta, stages = load_case(case, series)
    return meta, {k: parse_stage(k, t, first_line=meta["first_line"], file=meta["file"]) for k, t in stages.items()}


def _summary(stage) -> str:
    """'raw line -> python line' for located lines, plus the displayed text of the first ones."""
    rows = [f"{ln.number}\t{ln.loc.line if ln.loc else '-'}\t{ln.text.strip()[:80]}" for ln in stage.lines]
    return "\n".join(rows) + "\n"


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("key", KEYS)
def test_parse_golden(case, key, regen):
    meta, parsed = parse_case(case)
    check_golden(GOLDEN / "parse" / triton_series() / f"{case}.{key}.tsv", _summary(parsed[key]), regen)


@pytest.mark.parametrize("series", ("3.6", "3.9"))
def test_known_locations(series):
    """The seed-001 facts: tl.dot (line 19) is one tt.dot, an mma.sync and an HMMA, in every stage."""
    for case in ("matmul_b16_sm80", "matmul_b16_sm90a"):
        _, parsed = parse_case(case, series)
        for key, needle in (("ttir", "tt.dot"), ("ttgir", "tt.dot"), ("ptx", "mma.sync.aligned.m16n8k16"),
                            ("sass", "HMMA.16816.F32"), ("llir", "mma.sync.aligned.m16n8k16")):
            hits = [ln for ln in parsed[key].lines if needle in ln.text]
            assert hits and all(ln.loc and ln.loc.line == 19 for ln in hits), (series, case, key)
        ptx17 = [ln.text for ln in parsed["ptx"].lines if ln.loc and ln.loc.line == 17]
        assert any("cp.async.ca.shared.global" in t for t in ptx17)
        sass17 = [ln.text for ln in parsed["sass"].lines if ln.loc and ln.loc.line == 17]
        assert any("LDGSTS" in t for t in sass17) and any("LDSM" in t for t in sass17)


def test_noise_removed_raw_kept():
    _, parsed = parse_case("matmul_b16_sm80")
    for key, noise in (("ttir", "loc("), ("ttgir", "loc("), ("llir", "!dbg"), ("ptx", ".loc\t"), ("sass", "//##")):
        assert not any(noise in ln.text for ln in parsed[key].lines), key
    ttgir = parsed["ttgir"]
    assert any("loc(" in ln.raw for ln in ttgir.lines)
    assert not any(ln.text.startswith("#loc") for ln in ttgir.lines)


def test_callsite_alias_chain_real():
    """matmul_grouped inlines tl.cdiv (standard.py): callsite(#callee at #caller) resolves to the kernel's line."""
    meta, stages = load_case("matmul_grouped_sm90a")
    assert "callsite(" in stages["ttir"]
    parsed = parse_stage("ttir", stages["ttir"], file=meta["file"])
    # num_pid_m = tl.cdiv(M, BLOCK_M) is line 14: its add/div ops come from standard.py, called here.
    lines14 = [ln for ln in parsed.lines if ln.loc and ln.loc.line == 14]
    assert lines14 and all(ln.loc.file.endswith("matmul_grouped.py") for ln in lines14)
    assert any("arith.divsi" in ln.text for ln in lines14)


# Alias-chain forms on a minimal module; the shapes are copied from real TTIR
# (named, callsite, fused, and a cycle that must not hang).
CHAIN = """\
#loc = loc("./k.py":8:0)
module {
  %0 = tt.get_program_id x : i32 loc(#loc10)
  %1 = arith.addi %0, %0 : i32 loc(#loc11)
  %2 = arith.muli %1, %1 : i32 loc(#loc12)
  %3 = arith.subi %1, %1 : i32 loc(#loc13)
  %4 = arith.divsi %1, %1 : i32 loc("./k.py":30:2)
  %5 = arith.remsi %1, %1 : i32 loc(#loc99)
} loc(#loc)
#loc1 = loc("./k.py":9:26)
#loc2 = loc("/x/triton/language/standard.py":41:22)
#loc3 = loc("./k.py":14:27)
#loc10 = loc("pid"(#loc1))
#loc11 = loc(callsite(#loc2 at #loc3))
#loc12 = loc(fused[#loc2, "n"(#loc3)])
#loc13 = loc(#loc14)
#loc14 = loc(#loc13)
"""


def test_alias_chain_forms():
    parsed = parse_stage("ttir", CHAIN, file="/home/u/k.py")
    got = {ln.text.split("=")[1].split()[0] if "=" in ln.text else ln.text.strip(): ln.loc for ln in parsed.lines}
    assert got["tt.get_program_id"].line == 9
    assert got["arith.addi"].line == 14 and got["arith.addi"].col == 27       # callsite -> caller in k.py
    assert got["arith.muli"].line == 14                                       # fused -> the k.py frame
    assert got["arith.subi"] is None                                          # cycle: no location, no hang
    assert got["arith.divsi"].line == 30                                      # inline file location
    assert got["arith.remsi"] is None                                         # undefined alias
    assert not any("loc(" in ln.text for ln in parsed.lines)


def test_strip_locs_balanced():
    text, bodies = strip_locs('  %a: !tt.ptr<f16> loc("a_ptr"(#loc)), %b: i32 loc("b"(#loc))) {')
    assert text == "  %a: !tt.ptr<f16>, %b: i32) {"
    assert bodies == ['"a_ptr"(#loc)', '"b"(#loc)']


def test_unknown_stage_and_garbage():
    assert parse_stage("weird", "a\nb").lines[1].text == "b"
    for key in KEYS:
        parse_stage(key, "loc((( #loc = loc(\n.loc x y\n//## File\n!dbg !\n\x00")
