"""Issue 13, Blackwell: tcgen05 MMA, tensor memory, TMA/mbarrier and warp specialization, GPU-less.

matmul_grouped and matmul_persistent compile for sm_100a once per session;
the notes of TTGIR (ttng.tc_gen5_mma, ttng.tmem_*), PTX (tcgen05.*) and SASS
(UTCHMMA, LDTM, STTM, UTCBAR) say what each op does, and a warp-specialized
compile shows its partitions.  sm_120 (consumer Blackwell) has no tensor
memory: its matmul uses mma.sync, and the tests check that too.
"""

from __future__ import annotations

import pytest
from conftest import GOLDEN, check_golden, triton_series
from test_views import render

from tritonscope.analyses.analysis import analyze
from tritonscope.language.dialects import class_counts
from tritonscope.outputs.render import views


@pytest.fixture(scope="module")
def grouped(compiled):
    return analyze(compiled("matmul_grouped", arch="sm_100a"))


@pytest.fixture(scope="module")
def persistent(compiled):
    return analyze(compiled("matmul_persistent", arch="sm_100a"))


@pytest.fixture(scope="module")
def specialized(compiled):
    a = analyze(compiled("matmul_persistent", arch="sm_100a", constexprs={"WARP_SPECIALIZE": "True"}))
    if "ttg.warp_specialize" not in a.artifact.stages["ttgir"]:
        pytest.skip(f"Triton {a.artifact.triton_version} does not warp-specialize this loop on sm_100a")
    return a


def notes(a, stage: str, **facts):
    return [n for n in a.notes if n.stage == stage and all(n.facts.get(k) == v for k, v in facts.items())]


def test_ttgir_notes_tcgen05_and_tensor_memory(grouped):
    mma = notes(grouped, "ttgir", op="ttng.tc_gen5_mma")
    assert mma and mma[0].facts["acc"] == [128, 256] and mma[0].facts["a_from"] == "shared memory"
    assert "tensor memory (TMEM)" in mma[0].explanation and "tcgen05.mma" in mma[0].explanation
    alloc = notes(grouped, "ttgir", op="ttng.tmem_alloc")[0]
    assert alloc.facts["shape"] == [128, 256] and alloc.facts["bytes"] == 128 * 256 * 4
    assert notes(grouped, "ttgir", op="ttng.tmem_load") and notes(grouped, "ttgir", op="ttng.tmem_store")


def test_ptx_and_sass_vocabulary(grouped):
    ptx = class_counts("ptx", grouped.artifact.stages["ptx"])
    sass = class_counts("sass", grouped.artifact.stages["sass"])
    assert ptx["tcgen05 mma"] == sass["tcgen05 mma"] > 0          # tcgen05.mma -> UTCHMMA, one for one
    assert ptx["tmem load"] == sass["tmem load"] and ptx["tmem store"] == sass["tmem store"]   # LDTM / STTM
    assert ptx["tmem alloc"] >= 2 and sass["tcgen05 sync"] > 0      # alloc/dealloc; UTCBAR = tcgen05.commit
    labels = {n.label for n in grouped.notes if n.stage == "ptx"}
    assert {"tcgen05.mma kind::f16", "TMEM alloc 256 cols", "tcgen05.commit", "tcgen05.ld 32x32b.x128"} <= labels
    sass_labels = {n.label for n in grouped.notes if n.stage == "sass"}
    assert {"UTCHMMA", "UTCBAR", "LDTM.x128", "STTM.x128"} <= sass_labels


def test_notes_golden(grouped, regen):
    """Every Blackwell-specific note of matmul_grouped on sm_100a, one line each (stage, line, label)."""
    rows = [f"{n.stage:<6} {n.line:>5}  {n.label}" for n in grouped.notes
            if (n.facts.get("op") or "").startswith(("ttng.tc_gen5", "ttng.tmem_"))
            or (n.facts.get("cls") or "") in ("tcgen05 mma", "tmem load", "tmem store", "tmem alloc", "tcgen05 sync")]
    check_golden(GOLDEN / "blackwell" / triton_series() / "notes_matmul_grouped_sm100a.txt", "\n".join(rows) + "\n",
                 regen)


def test_tma_and_mbarrier_notes(persistent):
    assert notes(persistent, "ttgir", op="ttng.async_tma_copy_global_to_local")
    assert notes(persistent, "ttgir", op="ttng.async_tma_copy_local_to_global")
    assert notes(persistent, "ttgir", op="ttng.wait_barrier") and notes(persistent, "ttgir", op="ttng.barrier_expect")
    assert notes(persistent, "ttgir", op="ttng.tensormap_create")
    assert notes(persistent, "ptx", cls="tma copy") and notes(persistent, "ptx", cls="mbarrier")
    assert any(n.label.startswith("UTMALDG") for n in persistent.notes if n.stage == "sass")


def test_dot_line_and_walkthrough(grouped):
    dot = next(n for n, text in views.python_lines(grouped).items() if "tl.dot(" in text)
    chain = views.chain_text(grouped, dot)
    assert "ttng.tc_gen5_mma" in chain and "tcgen05.mma" in chain and "UTCHMMA" in chain, chain
    text = render(views.walkthrough(grouped), width=400)
    assert "tcgen05.mma kind::f16" in text and "PTX tcgen05.mma → SASS UTCHMMA" in text
    assert "--> tensor memory --tcgen05.ld--> registers" in text


def test_warp_specialized_partitions(specialized):
    ws = notes(specialized, "ttgir", op="ttg.warp_specialize")
    assert len(ws) == 1
    parts = {p["name"]: p for p in ws[0].facts["partitions"]}
    assert list(parts)[0] == "default" and len(parts) >= 2
    roles = {p["role"] for p in parts.values()}
    assert any(r and "MMA" in r for r in roles) and any(r and "loads" in r for r in roles)
    workers = [p for p in parts.values() if p["name"] != "default"]
    assert all(p["warps"] >= 1 for p in workers)
    assert ws[0].facts["requested_registers"] == [p.get("registers") for p in workers]
    headers = [n for n in specialized.notes if n.stage == "ttgir" and "partition" in n.facts]
    assert [n.facts["partition"] for n in headers] == [p["name"] for p in workers]


def test_sm120_has_no_tensor_memory(compiled):
    a = analyze(compiled("matmul_grouped", arch="sm_120"))
    ptx = class_counts("ptx", a.artifact.stages["ptx"])
    assert ptx.get("mma", 0) > 0 and not any(k.startswith(("tcgen05", "tmem")) for k in ptx)
