"""Issue 23: the layout families that differed from Triton, crashed, or were not drawn, against Triton 3.9.

tests/data/layout_corpus/lit_issue23.json holds, for each case, the lit file
and module of Triton's tests it comes from.  'differences' are the 26 cases
whose drawing differed from Triton 3.9's linear layout before the fix (the
command that draws each and what differed for thread 0 are kept with it);
'families' are cases of the families that were not drawn (#partitioned_shared,
#generic_linear, #linear bases beyond the shape, rank-3 nvidia_mma and dot
operands, fp4-padded and rank-1 nvmma_shared) or crashed the drawing
(amd_wmma with a CGALayout).  Each must now equal Triton's own conversion
(triton_api.linear_layouts_from_triton), draw without error, and draw as a
grid (not "Not drawn").  Triton 3.6 parses few of these spellings and cannot
convert memory layouts: there the comparison is skipped with a reason.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from conftest import triton_series
from tritonscope.language.layouts import describe, linear_layout, offset_grid, owner_grid, parse_encoding, tmem_grid
from tritonscope.outputs.render.layout_view import layout_panel, layout_svg

DATA = json.loads((Path(__file__).parent / "data" / "layout_corpus" / "lit_issue23.json").read_text())
CASES = [("difference", c) for c in DATA["differences"]] + [("family", c) for c in DATA["families"]]


def _spec(c):
    spec = {"kind": "text", "text": c["text"], "elem": c["elem"], "memdesc": c["container"] != "tensor"}
    if c["container"] == "tmem":
        spec["space"] = "#ttng.tensor_memory"
    return spec


@pytest.fixture(scope="module")
def theirs():
    if triton_series() < "3.9":
        pytest.skip(f"Triton {triton_series()} has none of 3.9's converters for these encodings "
                    "(WMMA ctaLayout, CGALayout, fp4Padded TMEM, partitioned_shared)")
    from tritonscope.triton_api import linear_layouts_from_triton

    return linear_layouts_from_triton([{"spec": _spec(c), "shape": c["shape"]} for _, c in CASES])


def test_data_keeps_where_each_case_comes_from():
    assert len(DATA["differences"]) == 26
    for c in DATA["differences"]:
        assert c["source"].endswith(tuple(f".mlir#{i}" for i in range(200))), c["source"]
        assert c["command"].startswith("tritonscope layout '") and c["text"] in c["command"]
        assert "only in tool" in c["before_fix"] or "bases differ" in c["before_fix"] \
            or "warp basis" in c["before_fix"], c["before_fix"]
    names = {parse_encoding(c["text"]).name for _, c in CASES}
    assert {"partitioned_shared", "generic_linear", "linear", "nvidia_mma", "nvmma_shared", "amd_wmma", "dot_op",
            "tensor_memory_encoding", "tensor_memory_scales_encoding"} <= names


@pytest.mark.parametrize("i", range(len(CASES)), ids=[f"{k}-{c['source']}-{'x'.join(map(str, c['shape']))}"
                                                      for k, c in CASES])
def test_equals_triton(theirs, i):
    kind, c = CASES[i]
    got = theirs[i]
    assert "bases" in got, f"Triton 3.9 does not convert {c['text']} {c['shape']}: {got}"
    ll = linear_layout(parse_encoding(c["text"]), tuple(c["shape"]))
    ours = {k: [list(b) for b in v] for k, v in ll.bases.items()}
    for k, v in got["bases"].items():
        if k == "block" and not v:
            continue
        assert ours.get(k, []) == v, f"{c['command'] if kind == 'difference' else c['text']}: {k} differs\n" \
                                     f"  ours   {ours}\n  triton {got['bases']}"
    if "elems_per_thread" in got:
        assert got["elems_per_thread"] == 1 << len(ours.get("register", []))


@pytest.mark.parametrize("i", range(len(CASES)))
def test_draws_as_a_grid(i):
    """Every case is drawn (text and SVG) without error: the amd_wmma + CGALayout cases used to exit 1."""
    _, c = CASES[i]
    use = describe(parse_encoding(c["text"]), tuple(c["shape"]))
    assert use.kind != "text", use.note
    console = Console(file=io.StringIO(), width=120, color_system=None)
    console.print(layout_panel(use, width=120, hardware=True))
    assert "Not drawn" not in console.file.getvalue()
    assert "<rect" in layout_svg(use)


def test_thread_0_of_each_difference_is_tritons(theirs):
    """What the data file recorded as wrong for thread 0 is now Triton's: the same elements, in register order."""
    for i, (kind, c) in enumerate(CASES):
        if kind != "difference" or c["container"] != "tensor":
            continue
        b = theirs[i]["bases"]
        use = describe(parse_encoding(c["text"]), tuple(c["shape"]))
        regs = use.bases.get("register", [])
        assert len(regs) == len(b["register"]), c["command"]
        mine = [tuple(x) for x in use.bases["register"]]
        assert mine == [tuple(x) for x in b["register"]], c["command"]


def test_fast_owner_grid_equals_the_full_walk():
    """The drawing's owners (first_owners: one GF(2) solve per element) equal the walk over every thread."""
    from tritonscope.language.layouts import first_owners

    for _, c in CASES:
        use = describe(parse_encoding(c["text"]), tuple(c["shape"]))
        box = tuple(use.shape)
        if use.kind == "distributed":
            full = owner_grid(use)
            assert first_owners(use, box) == {e: (o[0], len(o)) for e, o in full.items()}, c["text"]
        elif use.kind == "shared" and "partition" not in use.bases:
            assert offset_grid(use, box) == offset_grid(use), c["text"]
        elif use.kind == "tensor_memory":
            assert tmem_grid(use, box) == tmem_grid(use), c["text"]
