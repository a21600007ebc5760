"""Layouts from Triton's own lit tests: tritonscope's linear layouts must equal Triton's, basis by basis.

tests/data/layout_corpus/lit_encodings.json holds the attribute strings of
Triton's lit tests (AMD MFMA/WMMA and their operands, padded and rotating LDS
layouts, #linear, #shared_linear, Blackwell tensor memory, layouts spread over
several CTAs) with the shapes the tests use.  Each is parsed by the installed
Triton (in one child process, triton_api.linear_layouts_from_triton) and
converted by Triton itself; tritonscope computes the same layout in pure
Python.  Strings the installed Triton does not accept (the corpus mixes the
spellings of several releases), and layouts its Python API cannot convert,
are counted, never compared.  The counts per family are printed (pytest -s)
for the release notes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import triton_series
from tritonscope.language.layouts import LayoutError, linear_layout, parse_encoding, text_spec

CORPUS = Path(__file__).parent / "data" / "layout_corpus" / "lit_encodings.json"
FAMILIES = ("AMD", "Blackwell", "multi-CTA", "NVIDIA and generic")


def family(text: str) -> str:
    """Which family a lit-test attribute belongs to (several CTAs first: that is what it tests)."""
    # CGALayout = [[1, 0]]   CTAsPerCGA = [2, 1]   block = [[16, 0]]   twoCTAs = true
    if re.search(r"CGALayout|CTAsPerCGA|block = \[\[|twoCTAs", text):
        return "multi-CTA"
    if "#ttng." in text:
        return "Blackwell"
    if "amd_" in text or "padded_shared" in text:
        return "AMD"
    return "NVIDIA and generic"


@pytest.fixture(scope="module")
def corpus_results():
    from tritonscope.triton_api import linear_layouts_from_triton

    cases = json.loads(CORPUS.read_text())["cases"]
    rows, items = [], []
    for c in cases:
        for shape in c["shapes"]:
            spec = {"kind": "text", "text": c["text"], "elem": c["elem"], "memdesc": c["container"] != "tensor"}
            if c["container"] == "tmem":
                spec["space"] = "#ttng.tensor_memory"
            items.append({"spec": spec, "shape": shape})
            try:
                ll = linear_layout(parse_encoding(c["text"]), tuple(shape))
                ours = {k: [list(b) for b in v] for k, v in ll.bases.items()}
            except LayoutError as e:
                ours = {"error": str(e)}
            rows.append((c, shape, ours))
    return rows, linear_layouts_from_triton(items)


def test_corpus_is_real_lit_test_text():
    data = json.loads(CORPUS.read_text())
    assert "lit tests" in data["about"]
    cases = data["cases"]
    assert len(cases) >= 90 and all(c["source"] for c in cases)
    counts = {f: sum(1 for c in cases if family(c["text"]) == f) for f in FAMILIES}
    assert all(n >= 10 for n in counts.values()), counts


def test_corpus_agrees_with_triton(corpus_results):
    rows, results = corpus_results
    table = {f: {"agree": 0, "differ": 0, "not accepted by this Triton": 0, "Triton cannot convert": 0,
                 "skipped": 0} for f in FAMILIES}
    mismatches, per_thread = [], 0
    for (case, shape, ours), theirs in zip(rows, results):
        fam = table[family(case["text"])]
        if "rejected" in theirs:
            fam["not accepted by this Triton"] += 1
            continue
        if "skipped" in theirs:
            fam["skipped"] += 1
            continue
        if "error" in theirs:
            fam["Triton cannot convert"] += 1
            continue
        if "error" in ours:
            fam["differ"] += 1
            mismatches.append(f"{case['text']} {shape}: tritonscope: {ours['error']}")
            continue
        same = all(ours.get(k, []) == v for k, v in theirs["bases"].items())
        if "padding" in theirs:  # padded shared: Triton gives the padding it parsed, compare that too
            from tritonscope.language.layouts import padding_of
            same = same and [list(p) for p in padding_of(parse_encoding(case["text"]))] == theirs["padding"]
        if "elems_per_thread" in theirs:  # what a note says per thread: 1 << register bases
            per_thread += 1
            same = same and theirs["elems_per_thread"] == 1 << len(ours.get("register", []))
        fam["agree" if same else "differ"] += 1
        if not same:
            mismatches.append(f"{case['text']} {shape}\n  ours   {ours}\n  triton {theirs}")
    print(f"\nLayout agreement with Triton {triton_series()} on its lit-test encodings:")
    for f, counts in table.items():
        print(f"  {f:20s} " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    assert not mismatches, f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches[:5])
    agreed = {f: c["agree"] for f, c in table.items()}
    if triton_series() == "3.6":
        # 3.6 converts no memory layouts (it aborts) and parses none of the newest spellings
        assert agreed["AMD"] >= 40 and agreed["multi-CTA"] >= 12 and agreed["NVIDIA and generic"] >= 15, table
    else:
        assert agreed["AMD"] >= 40 and agreed["Blackwell"] >= 10 and agreed["multi-CTA"] >= 20, table
        assert agreed["NVIDIA and generic"] >= 20, table
        assert per_thread >= 60   # getTotalElemsPerThread agreed for every tensor layout compared


def test_spec_of_every_corpus_encoding_parses_back():
    """text_spec sends Triton the attribute text tritonscope re-prints: it must still say the same thing."""
    for c in json.loads(CORPUS.read_text())["cases"]:
        enc = parse_encoding(c["text"])
        again = parse_encoding(text_spec(enc)["text"])
        assert again.params == enc.params and again.name == enc.name, c["text"]
