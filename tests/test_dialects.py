"""Dialects: the registry, every dialect on real checked-in stages, and adding a dialect as one module."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest
from conftest import triton_series
from test_parse import CASES, load_case

from tritonscope.language import dialects
from tritonscope.language.dialects import CLASSES, Dialect, Instr, dialect, stage_keys, stages

NOISE_KINDS = (None, "debug", "header", "directive", "comment")


def test_registry_lists_the_stages_in_pipeline_order():
    assert stage_keys() == ("python", "ttir", "ttgir", "llir", "ptx", "sass")
    assert dialects.STAGE_KEYS == stage_keys()
    assert dialects.PIPELINE == ("ttir", "ttgir", "llir", "ptx", "sass")
    orders = [d.order for d in stages()]
    assert orders == sorted(orders)
    assert [d.key for d in stages("hip")] == ["python", "ttir", "ttgir", "llir", "amdgcn"]
    for d in stages():
        assert isinstance(d, Dialect) and d.title and d.ext and d.lexer
    assert dialect("ttgir").title == "Triton GPU IR (TTGIR)" and dialect("ptx").fence == "ptx"
    assert dialect("sass").lexer == "sass" and dialect("llir").ext == "ll"


def test_unknown_key_is_plain_text():
    d = dialect("weird")
    assert d.title == "weird" and d.fence == "" and not d.classes
    stage = d.parse("a\n\nb  \n")
    assert [ln.text for ln in stage.lines] == ["a", "", "b  "] and stage.key == "weird"
    assert d.normalize("a\n\nb  \n") == [(1, "a"), (3, "b")]
    assert d.classify("a") is None and d.annotate(stage) == [] and d.noise("a") is None


@pytest.mark.parametrize("case", CASES)
def test_every_dialect_runs_on_real_stages(case):
    meta, texts = load_case(case)
    for key, text in texts.items():
        d = dialect(key)
        assert dialects.known(key), key
        stage = d.parse(text, file=meta["file"], first_line=meta["first_line"])
        assert stage.key == key and stage.lines
        for line in stage.lines:
            ins = d.classify(line.text)
            assert ins is None or isinstance(ins, Instr)
            if ins is not None and ins.cls:
                assert ins.name and ins.cls in d.classes, (key, line.text)
                json.dumps(dict(ins.facts))
            assert d.noise(line.raw) in NOISE_KINDS
        norm = d.normalize(text)
        assert all(isinstance(n, int) and isinstance(t, str) and t.strip() for n, t in norm)
        notes = d.annotate(stage)
        for note in notes:
            assert note.stage == key and isinstance(note.facts, dict)
            json.dumps(note.facts)  # facts are JSON-safe
        if d.classes:
            assert set(d.classes) <= set(CLASSES)


def test_one_vocabulary_fine_names_and_coarse_classes_agree():
    """Every instruction Analysis.mix counts is counted under its class by diff, sweep and bench, and back."""
    _, texts = load_case("matmul_b16_sm80")
    for key in ("ptx", "sass"):
        stage = dialect(key).parse(texts[key])
        fine = dialects.instruction_mix(stage)
        coarse = dialects.class_counts(key, texts[key])
        assert sum(fine.values()) == sum(coarse.values())
        assert list(coarse) == dialects.order_classes(coarse)
    ptx = dialects.class_counts("ptx", texts["ptx"])
    sass = dialects.class_counts("sass", texts["sass"])
    # cp.async is LDGSTS, ldmatrix is LDSM, mma.sync is HMMA: the same class words in both stages
    for cls in ("async copy", "async commit", "ldmatrix", "mma"):
        assert ptx[cls] and sass[cls], cls
    assert ptx["async copy"] == sass["async copy"]


def test_notes_carry_facts():
    _, texts = load_case("matmul_b16_sm80")
    by = {}
    for key in ("ttir", "ttgir", "ptx", "sass"):
        for note in dialect(key).annotate(dialect(key).parse(texts[key])):
            by.setdefault(key, []).append(note)
    store = next(n for n in by["ttir"] if n.facts.get("op") == "tt.store")
    assert store.facts["shape"] == [16, 16] and store.facts["elem"] == "f32" and store.facts["masked"] is False
    dot = next(n for n in by["ttir"] if n.facts.get("op") == "tt.dot")
    assert dot.facts["a"] == {"shape": [16, 16], "elem": "f16", "encoding": None}
    copy = next(n for n in by["ttgir"] if n.facts.get("op") == "ttg.async_copy_global_to_local")
    assert copy.facts["bytes"] == 4 and copy.facts["per_thread"] == 2 and copy.facts["masked"]
    mma = next(n for n in by["ttgir"] if n.facts.get("encoding") == "nvidia_mma")
    assert mma.facts["fields"]["instrShape"] == [16, 8] and mma.facts["across_warps"].startswith("warpsPerCTA")
    cp = next(n for n in by["ptx"] if n.facts.get("cls") == "async copy")
    assert (cp.facts["cache"], cp.facts["bytes"], cp.facts["src_size"]) == ("ca", 4, True)
    ldm = [n.facts for n in by["ptx"] if n.facts.get("cls") == "ldmatrix"]
    assert {(f["count"], f["trans"]) for f in ldm} == {(4, False), (2, True)}
    mma_ptx = next(n for n in by["ptx"] if n.facts.get("cls") == "mma")
    assert (mma_ptx.facts["m"], mma_ptx.facts["n"], mma_ptx.facts["k"]) == (16, 8, 16)
    ldgsts = next(n for n in by["sass"] if n.facts.get("cls") == "async copy")
    assert ldgsts.facts["bits"] == 32 and ldgsts.facts["opcode"] == "LDGSTS"


def test_noise_kinds_on_real_stages():
    _, texts = load_case("matmul_b16_sm80")

    def kinds(key):
        out: dict = {}
        for raw in texts[key].splitlines():
            k = dialect(key).noise(raw)
            out[k] = out.get(k, 0) + 1
        return out

    ptx = kinds("ptx")
    assert ptx["debug"] > 50 and ptx["comment"] and ptx["header"] == 3
    assert dialect("ptx").noise("\t.section\t.debug_info") == "debug"
    assert dialect("ptx").noise(".b8 47                                  // DW_AT_comp_dir") == "debug"
    assert dialect("ptx").noise("\tmma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%r1}, {%r2};") is None
    sass = kinds("sass")
    assert sass["header"] == 2 and sass["directive"] >= 5
    assert dialect("sass").noise(".L_x_3:") is None
    assert dialect("llir").noise("!14 = !DILocation(line: 3, scope: !5)") == "debug"
    assert dialect("ttgir").noise('#loc3 = loc("./matmul.py":17:21)') == "debug"


# --------------------------------------------------------------------------
# Adding a dialect is one module
# --------------------------------------------------------------------------

# The whole of a new dialect: one file dropped into a folder on tritonscope.language.dialects' path.
AMDGCN = textwrap.dedent('''\
    """A toy GCN-like assembly (a test dialect): `.loc` lines, two instruction classes, one note."""

    from __future__ import annotations

    import re

    from tritonscope.language.dialects import Dialect, Instr, plain_normalize
    from tritonscope.core.model import Line, Note, ParsedStage, SourceLoc

    # .loc 1 2 0
    _LOC = re.compile(r"^\\s*\\.loc\\s+\\d+\\s+(\\d+)")
    # \tv_mfma_f32_16x16x16f16 a[0:3], v[0:1], v[2:3], a[0:3]
    _OP = re.compile(r"^\\s+([a-z][a-z0-9_]*)")


    def parse(text, *, file="", first_line=1):
        lines, current = [], None
        for number, raw in enumerate(text.splitlines(), 1):
            m = _LOC.match(raw)
            if m:
                current = SourceLoc(file, int(m.group(1)))
                continue
            lines.append(Line(number, raw, raw, current if _OP.match(raw) else None))
        return ParsedStage("toygcn", tuple(lines))


    def classify(text):
        m = _OP.match(text)
        if not m:
            return None
        op = m.group(1)
        if op.startswith("global_load"):
            return Instr(op, "global load", f"global load {op}", {"bits": 128 if op.endswith("x4") else 32})
        if op.startswith("v_mfma"):
            return Instr(op, "mma", f"mma {op}", {"shape": op.split("_")[3]})
        return Instr(op)


    def annotate(stage):
        notes = []
        for line in stage.lines:
            ins = classify(line.text)
            if ins and ins.cls == "mma":
                notes.append(Note("toygcn", line.number, "instruction", f"mfma {ins.facts['shape']}",
                                  "A wavefront multiplies on the matrix cores.", None, {"cls": "mma", **ins.facts}))
        return notes


    def noise(raw):
        s = raw.lstrip()
        return "comment" if s.startswith(";") else "debug" if s.startswith(".loc") else None


    DIALECTS = (
        Dialect(key="toygcn", title="TOYGCN", ext="toygcn", lexer="text", fence="asm", order=46, backends=("hip",),
                parse=parse, normalize=plain_normalize, classify=classify, annotate=annotate, noise=noise,
                classes=("global load", "mma")),
    )
''')

SOURCE = "def k(x_ptr, y_ptr):\n    x = tl.load(x_ptr)\n    y = tl.dot(x, x)\n    tl.store(y_ptr, y)\n"


def _amdgcn(extra: str = "") -> str:
    return ("; kernel k\n\t.loc 1 2 0\n\tglobal_load_dwordx4 v[0:3], v[4:5], off\n\ts_waitcnt vmcnt(0)\n"
            f"\t.loc 1 3 0\n\tv_mfma_f32_16x16x16f16 a[0:3], v[0:1], v[2:3], a[0:3]\n{extra}\ts_endpgm\n")


@pytest.fixture
def amdgcn_dialect(tmp_path):
    """Drop a toy dialect into a folder on the package path and let the registry discover it; undo afterwards."""
    (tmp_path / "toygcn.py").write_text(AMDGCN)
    dialects.__path__.append(str(tmp_path))
    try:
        dialects.discover()
        yield
    finally:
        dialects.__path__.remove(str(tmp_path))
        sys.modules.pop("tritonscope.language.dialects.toygcn", None)
        dialects.discover()


def _analysis(amdgcn_text: str):
    from tritonscope.analyses.analysis import analyze
    from tritonscope.core.model import Artifact, KernelSpec, Resources

    spec = KernelSpec(target="k.py:k", kernel="k", file="/x/k.py", args={}, constexprs={}, num_warps=4,
                      num_stages=2, arch="sm_90a")
    art = Artifact(spec=spec, triton_version="3.9.0", kernel_hash="0" * 16,
                   stages={"python": SOURCE, "toygcn": amdgcn_text}, python_first_line=1, metadata={},
                   resources=Resources(), specialization=[])
    return analyze(art)


def test_a_new_dialect_is_one_module(amdgcn_dialect):
    from tritonscope.analyses.diff import diff_analyses
    from tritonscope.outputs.render import views
    from tritonscope.outputs.render.html import render_html
    from tritonscope.outputs.render.markdown import render_markdown

    assert [d.key for d in stages("hip")] == ["python", "ttir", "ttgir", "llir", "amdgcn", "toygcn"]
    assert stage_keys() == ("python", "ttir", "ttgir", "llir", "ptx", "sass")   # CUDA's pipeline untouched

    a = _analysis(_amdgcn())
    # analysis: parsed with locations, annotated, counted
    lines = a.parsed["toygcn"].lines
    assert [ln.loc.line for ln in lines if ln.loc] == [2, 2, 3, 3]
    assert a.mix["toygcn"] == {"global load global_load_dwordx4": 1, "mma v_mfma_f32_16x16x16f16": 1}
    assert [(n.label, n.facts["shape"]) for n in a.notes if n.stage == "toygcn"] == [("mfma 16x16x16f16", "16x16x16f16")]
    assert dialects.class_counts("toygcn", _amdgcn()) == {"mma": 1, "global load": 1}
    # views: the one-line chain and the line view name its instructions under its title
    assert views.chain_text(a, 3) == "TOYGCN: v_mfma_f32_16x16x16f16"   # s_endpgm is bookkeeping
    from test_views import render

    assert "TOYGCN · 2 lines" in render(views.line_view(a, 3), width=120)
    # markdown and html: its title and fence
    md = render_markdown(a)
    assert "<summary>TOYGCN: " in md and "```asm\n" in md and "global\\_load\\_dwordx4" in md
    assert "<h2>TOYGCN <small>" in render_html(a)
    # diff: its normalizer, its stage
    b = _analysis(_amdgcn("\tv_mfma_f32_16x16x16f16 a[0:3], v[0:1], v[2:3], a[0:3]\n"))
    d = diff_analyses(a, b, stages=("python", "toygcn"))
    sd = {s.key: s for s in d.stages}
    assert sd["python"].identical and (sd["toygcn"].added, sd["toygcn"].removed) == (1, 0)


def test_series_has_stage_data():
    assert triton_series() in ("3.6", "3.9")
