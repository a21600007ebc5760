"""Notes on real checked-in stages: golden per case, plus the seed-001 facts spelled out."""

from __future__ import annotations

import pytest
from conftest import GOLDEN, check_golden, triton_series
from test_parse import CASES, parse_case

from tritonscope.language.dialects import annotate_stage, instruction_mix
from tritonscope.language.encodings import Encoding, blocked_fit, explain_blocked, mma_k
from tritonscope.core.model import Line, ParsedStage


def _notes(case, series=None):
    _, parsed = parse_case(case, series)
    return parsed, {k: annotate_stage(s) for k, s in parsed.items()}


def _render(notes) -> str:
    return "".join(f"{n.stage}:{n.line}\t{n.kind}\t{n.label}\t{n.explanation}\t{n.reference or '-'}\n" for n in notes)


@pytest.mark.parametrize("case", CASES)
def test_notes_golden(case, regen):
    parsed, notes = _notes(case)
    text = "".join(_render(notes[k]) for k in ("ttir", "ttgir", "ptx", "sass"))
    mix = "".join(f"{k}\t{c}\t{n}\n" for k in ("ptx", "sass") for c, n in instruction_mix(parsed[k]).items())
    check_golden(GOLDEN / "parse" / triton_series() / f"{case}.notes.tsv", text + mix, regen)


@pytest.mark.parametrize("series", ("3.6", "3.9"))
@pytest.mark.parametrize("case", ("matmul_b16_sm80", "matmul_b16_sm90a"))
def test_seed_001_facts(series, case):
    _, notes = _notes(case, series)
    by = {k: {n.label: n for n in v} for k, v in notes.items()}
    ttgir = by["ttgir"]
    blocked = ttgir["#blocked [1, 2]/[4, 8]/[4, 1]"].explanation
    assert "2 elements" in blocked and "4x16 tile" in blocked and "16x16 tile per CTA" in blocked
    assert "the 16x16 tensor is exactly one CTA tile, so each thread holds 2 elements" in blocked
    mma = ttgir["mma v2 → mma.sync.m16n8k16"]
    assert "instrShape = [16, 8]" in mma.explanation and "2 of the 4 warps" in mma.explanation
    assert mma.reference.endswith("TritonGPUAttrDefs.td")
    sw = ttgir["swizzled shared vec=8 perPhase=4 maxPhase=2"].explanation
    assert "(r // 4) % 2" in sw and "bank conflicts" in sw and "16 bytes of f16" in sw
    assert "each thread copies 2 elements, 2 contiguous f16 = 4 bytes" in ttgir["async copy global→shared 4B"].explanation
    assert "layout conversion #mma → #blocked" in ttgir and ttgir["layout conversion #mma → #blocked"].kind == "cost"
    ptx = by["ptx"]
    assert {"cp.async.ca 4B", "ldmatrix x4", "ldmatrix x2 .trans", "mma m16n8k16 f16→f32", "commit group"} <= set(ptx)
    assert "#warp-level-matrix-instructions-ldmatrix" in ptx["ldmatrix x4"].reference
    sass = by["sass"]
    assert {"LDGSTS 4B", "LDGDEPBAR", "LDSM x4", "LDSM x2 .trans", "HMMA m16n8k16"} <= set(sass)


def test_hopper_wgmma_facts():
    _, notes = _notes("matmul_grouped_sm90a")
    by = {k: {n.label: n for n in v} for k, v in notes.items()}
    assert "wgmma.m64n256k16" in by["ttgir"]["mma v3 → wgmma.m64n256k16"].explanation
    assert "128-byte swizzle" in by["ttgir"]["nvmma shared, 128-byte swizzle"].explanation
    assert "cp.async.cg 16B" in by["ptx"] and "wgmma m64n256k16" in by["ptx"] and "LDGSTS 16B" in by["sass"]
    big = by["ttgir"]["#blocked [1, 8]/[1, 32]/[8, 1]"].explanation
    assert "the 128x256 tensor wraps the 8x256 CTA tile 16 times, so each thread holds 128 elements" in big


def test_blocked_math():
    enc = Encoding("#b", "blocked", {"sizePerThread": [1, 2], "threadsPerWarp": [4, 8], "warpsPerCTA": [4, 1],
                                     "order": [1, 0]})
    assert "32x16" in explain_blocked(enc, [(32, 16)]) and "holds 4 elements" in explain_blocked(enc, [(32, 16)])
    assert blocked_fit(enc.fields, (24, 16)) is None      # not a multiple or divisor: say nothing
    assert mma_k("f16") == 16 and mma_k("f32") == 8 and mma_k("i8") == 32 and mma_k("f64") is None


def test_unknown_ops_get_no_note():
    lines = ["  %0 = tt.future_op %x {weird = [1, 2} : tensor<4x?xf16> loc(#loc1)",
             "#blocked9 = #ttg.blocked<{sizePerThread = [1]}>",
             "#mma = #ttg.nvidia_mma<{versionMajor = 9}>",
             "\tnewop.sync.aligned.m99 {%r1};",
             "        /*0000*/                   QQMMA.9.Z R1 ;",
             "  %1 = tt.dot %a, %b : broken"]
    for key in ("ttir", "ttgir", "ptx", "sass", "llir"):
        stage = ParsedStage(key, tuple(Line(i + 1, t, t) for i, t in enumerate(lines)))
        assert annotate_stage(stage) == []
        instruction_mix(stage)
