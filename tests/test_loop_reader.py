"""The one loop reader (tritonscope/language/loops.py): every reader of loops uses it, and picks the main loop with
one function; the SASS vocabulary is one table; the cost model's facts are a typed record.  On real compiler
output checked in under tests/data (SASS of Triton 3.6.0 and 3.9, AMDGCN of Triton 3.4)."""

from __future__ import annotations

import gzip
import importlib
import json
import re
from pathlib import Path

import pytest

from conftest import ROOT
from tritonscope.language import loops as loop_reader
from tritonscope.language.loops import find_loops, innermost_loops, main_loop

DATA = Path(__file__).parent / "data"
LAYER_NORM = DATA / "cost" / "sass" / "layer_norm_4096x8192_B8192_w4_sm90a_triton360.sass"
GROUPED = DATA / "stages" / "3.9" / "matmul_grouped_sm90a" / "sass"
MOE = DATA / "versions" / "moe_gfx950_3.4_3.6" / "000-a.json.gz"


@pytest.fixture(scope="module")
def layer_norm() -> str:
    return LAYER_NORM.read_text()


def test_the_old_loop_readers_are_gone():
    """One reader: dialects.loops, versions.metrics.innermost/main_loop, loopview.side_loop, the cost model's own
    pick (features._main_sass_loop) and its second vocabulary (COST_CLASSES) are gone, and so are the look-alike
    module names."""
    import tritonscope.cost.features as features
    import tritonscope.language.dialects as dialects
    import tritonscope.language.dialects.sass as sass
    import tritonscope.versions.loop_pair as loop_pair
    import tritonscope.versions.metrics as metrics

    assert not hasattr(dialects, "loops")
    assert not hasattr(metrics, "innermost") and not hasattr(metrics, "main_loop")
    assert not hasattr(loop_pair, "side_loop")
    assert not hasattr(features, "_main_sass_loop")
    assert not hasattr(sass, "COST_CLASSES")
    for gone in ("tritonscope.versions.loopview", "tritonscope.versions.loop_view"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(gone)
    # nothing else in the package reads a dialect's loop syntax or defines a main-loop pick
    readers = {p.relative_to(ROOT).as_posix() for p in (ROOT / "tritonscope").rglob("*.py")
               if re.search(r"\.loop_(branch|label|targets)\b", p.read_text(encoding="utf-8"))}
    assert readers == {"tritonscope/language/loops.py"}
    picks = {p.relative_to(ROOT).as_posix() for p in (ROOT / "tritonscope").rglob("*.py")
             if re.search(r"^def main_loop\b", p.read_text(encoding="utf-8"), re.M)}
    assert picks == {"tritonscope/language/loops.py"}


def test_cost_versions_and_diff_loop_pick_with_one_function(layer_norm, monkeypatch):
    """The cost model's SASS loop, the versions report's main loop and diff --loop's loop are the loop reader's
    main_loop: a pick changed there (the first innermost loop instead) changes all three."""
    from tritonscope.cost.sass import read_sass
    from tritonscope.versions.loop_pair import side_of
    from tritonscope.versions.metrics import main_loop_facts

    inner = innermost_loops("sass", layer_norm)
    assert len(inner) == 3                       # a layer norm's three passes
    picked = main_loop(inner)

    def seen() -> tuple[int, int, int]:
        cost = read_sass(layer_norm).main()
        view, n = side_of({"sass": layer_norm}, "sass")
        facts = main_loop_facts(layer_norm, "sass")
        assert n == 3
        return cost.start, view.first_line - 1, facts.lines

    cost_first, view_first, lines = seen()
    assert cost_first == view_first == picked.first and lines == len(picked.body)

    assert picked is inner[-1]                   # the third pass: the most loads (24)
    monkeypatch.setattr(loop_reader, "main_loop", lambda loops: loops[0] if loops else None)
    cost_first, view_first, lines = seen()
    assert cost_first == view_first == inner[0].first != picked.first and lines == len(inner[0].body)


def test_padding_is_no_loop_and_the_pick_weighs_tensor_cores_first():
    """nvdisasm's `.L_x_N: BRA \\`(.L_x_N)` after EXIT is no loop; the grouped GEMM's main loop is its HGMMA loop."""
    text = GROUPED.read_text()
    lines = text.splitlines()
    pads = [i for i, ln in enumerate(lines) if re.match(r"^\s*(\.L_x_\d+):", ln)
            and i + 1 < len(lines) and re.search(r"BRA `\(" + re.escape(ln.strip()[:-1]) + r"\)", lines[i + 1])]
    assert pads, "the SASS ends with its padding branch"
    loops = find_loops("sass", lines)
    assert loops and not any(lp.first in pads for lp in loops)
    best = main_loop(innermost_loops("sass", lines))
    assert best.tally.tensor > 0 and best.tally.tensor == max(lp.tally.tensor for lp in loops)
    assert any("HGMMA" in ins.op for _, ins in best.body)


def test_one_label_one_loop_the_widest_branch_closes_it():
    """AMDGCN of Triton 3.4 (gfx950): .LBB0_6 has two branches back to it (a conditional one at line 738, the
    loop's last at 744): the loop runs to 744, so its second global load (line 743) is in it."""
    lines = json.loads(gzip.decompress(MOE.read_bytes()))["stages"]["amdgcn"].splitlines()
    (lp,) = innermost_loops("amdgcn", lines)
    assert (lp.label, lp.first + 1, lp.last + 1) == (".LBB0_6", 347, 744)
    assert lp.tally.loads == 6 and lp.tally.tensor == 8


def test_one_sass_vocabulary_keeps_the_cost_model_s_classes():
    """Every opcode has its table class (classify) and its cost class in one record; every opcode the cost model
    counts as tensor-core work is a tensor-core class of the loop reader's pick."""
    from tritonscope.language.dialects.sass import NOT_WORK, OPCODES, classify, cost_class

    line = "        /*0100*/                   {} R0, R1 ;"
    for op, o in OPCODES.items():
        ins = classify(line.format(op + ".X"))
        assert ins is not None and ins.op.startswith(op)
        assert cost_class(op) == o.cost
        if o.cost == "mma":
            assert ins.cls in loop_reader.TENSOR_CORE, op
        if o.read is None:
            assert ins.cls is None, op
    assert cost_class("IMAD") == "other" and NOT_WORK == {"NOP", "EXIT", "BRA", "RET", "BPT"}
    assert cost_class("LDGSTS") == "ldgsts" and classify(line.format("LDGSTS.E.BYPASS.128")).cls == "async copy"


def test_features_are_a_typed_record_whose_stored_form_is_unchanged():
    """Every stored row's facts read into Features and write back as they were (keys, order, values), and the
    model gives the same prediction from either form."""
    from dataclasses import FrozenInstanceError

    from tritonscope.cost import find_gpu, predict_features
    from tritonscope.cost.features import Features

    gpu = find_gpu("H100")
    n = 0
    for name in ("h100_measured.json", "h100_measured_round8.json"):
        for g in json.loads((DATA / "cost" / name).read_text())["groups"]:
            for r in g["rows"]:
                if not r.get("features"):
                    continue
                f = Features.from_dict(r["features"])
                assert json.dumps(f.to_dict()) == json.dumps(r["features"]) or \
                    f.to_dict() == r["features"]   # an older row's key order (mma_shape earlier)
                if n % 25 == 0:
                    assert predict_features(f, gpu).to_dict() == predict_features(r["features"], gpu).to_dict()
                n += 1
    assert n > 400
    with pytest.raises(FrozenInstanceError):
        f.fits = False  # type: ignore[misc]
    with pytest.raises(TypeError):
        Features.from_dict({"no_such_fact": 1})
    assert Features(bound=True).to_dict()["bound"] is True and "bound" not in Features().to_dict()
