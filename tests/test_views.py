"""Views: fixed-width (100 columns, no color) renders of checked-in real stages, and the CLI on real compiles."""

from __future__ import annotations

import io
import json
import re

import pytest
from conftest import GOLDEN, check_golden, triton_series
from rich.console import Console
from test_parse import load_case

from tritonscope.analyses.analysis import analyze
from tritonscope.core.model import Artifact, KernelSpec, Resources
from tritonscope.outputs.render import views
from tritonscope.outputs.render.terminal import stage_panel


def analysis_of(case: str):
    meta, stages = load_case(case)
    spec = KernelSpec(target=meta["target"], kernel=meta["kernel"], file=meta["file"], args=meta["args"],
                      constexprs=meta["constexprs"], num_warps=meta["num_warps"], num_stages=meta["num_stages"],
                      arch=meta["arch"], shape=tuple(meta["shape"]) if meta["shape"] else None, dtype=meta["dtype"],
                      grid=tuple(meta["grid"]) if meta["grid"] else None)
    order = ("python", "ttir", "ttgir", "llir", "ptx", "sass")
    art = Artifact(spec=spec, triton_version=meta["triton"], kernel_hash="0" * 16,
                   stages={k: stages[k] for k in order if k in stages}, python_first_line=meta["first_line"],
                   metadata={}, resources=Resources(), specialization=[])
    return analyze(art)


def render(renderable, width: int = 100) -> str:
    con = Console(width=width, file=io.StringIO(), color_system=None, no_color=True, highlight=False,
                  force_terminal=False, soft_wrap=False)
    con.print(renderable)
    return "\n".join(line.rstrip() for line in con.file.getvalue().splitlines()) + "\n"


VIEWS = {
    "walkthrough": lambda a: views.walkthrough(a),
    "line19": lambda a: views.line_view(a, 19, ("ttir", "ttgir", "ptx", "sass")),
    "line17": lambda a: views.line_view(a, 17, ("ttgir", "ptx", "sass")),
    "side_ttgir_ptx": lambda a: views.side_by_side(a, ("ttgir", "ptx"), 100),
    "side_ttgir_ptx_sass": lambda a: views.side_by_side(a, ("ttgir", "ptx", "sass"), 100),
    "mix": lambda a: views.mix_view(a),
    "stage_ttgir": lambda a: stage_panel(a, "ttgir"),
}


@pytest.mark.parametrize("case", ("matmul_b16_sm80", "matmul_b16_sm90a"))
@pytest.mark.parametrize("view", sorted(VIEWS))
def test_view_golden(case, view, regen):
    text = render(VIEWS[view](analysis_of(case)))
    assert max(len(line) for line in text.splitlines()) <= 100
    check_golden(GOLDEN / "views" / triton_series() / f"{case}.{view}.txt", text, regen)


@pytest.mark.parametrize("case", ("matmul_b16_sm80", "matmul_b16_sm90a"))
def test_walkthrough_says_what_seed_001_says(case):
    text = " ".join(render(views.walkthrough(analysis_of(case)), width=400).split())
    for phrase in (
        "4 programs for a 32x32x32 problem, each computing one 16x16 output tile",
        "offs_m = pid_m * 16 + [0 .. 15]", "top-left corner is at 16 * pid_m",
        "16x16 f16 x 16x16 f16 accumulated into 16x16 f32",
        "tt.splat", "tt.expand_dims",
        "sizePerThread", "a warp's 4x8 threads cover a 4x16 tile", "each thread holds 2 elements",
        "instrShape = [16, 8]", "mma.m16n8k16", "2 of the 4 warps do distinct work",
        "XOR", "bank conflicts", "perPhase",
        "cp.async.ca.shared.global, 4 bytes = 2 elements of 2 bytes per thread",
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16", "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
        "Four 8x8 matrices make one 16x16", "mma.sync m16n8k16", "A[16x16] (f16",
        "HMMA.16816.F32", "LDGSTS", "LDSM.16.M88.4", "LDSM.16.MT88.2",
        "TritonGPUAttrDefs.td", "#warp-level-matrix-instructions-ldmatrix",
    ):
        assert phrase in text, phrase


def test_line_view_chains():
    a = analysis_of("matmul_b16_sm80")
    dot = views.chain_text(a, 19)
    assert "TTIR: tt.dot" in dot and "mma.sync.aligned.m16n8k16" in dot and "HMMA.16816.F32" in dot
    load = views.chain_text(a, 17)
    assert "ttg.async_copy_global_to_local" in load and "cp.async.ca.shared.global" in load
    assert "LDGSTS" in load and "LDSM" in load


def test_line_out_of_range():
    from tritonscope.core.errors import UsageError

    with pytest.raises(UsageError):
        views.line_view(analysis_of("matmul_b16_sm80"), 500)


def test_lexers():
    from pygments.token import Error

    from tritonscope.outputs.render.lexers import get_lexer

    _, stages = load_case("matmul_grouped_sm90a")
    for name, key in (("mlir", "ttgir"), ("sass", "sass")):
        toks = list(get_lexer(name).get_tokens(stages[key]))
        assert not [v for t, v in toks if t is Error]
    assert get_lexer("sass").name == "NVIDIA SASS"
    for name in ("llvm", "ptx", "python", "nonsense"):
        assert get_lexer(name) is not None


# -- the CLI on real compiles (one compile each, cached by Triton afterwards) --------------------------


@pytest.mark.parametrize("arch", ("sm_80", "sm_90a"))
def test_cli_line_and_walkthrough(arch):
    from typer.testing import CliRunner

    from tritonscope.cli import app

    runner = CliRunner()
    r = runner.invoke(app, ["compile", "matmul", "--block", "16", "--arch", arch, "--line", "19",
                            "--width", "200", "--no-color"])
    assert r.exit_code == 0, r.output
    assert "TTIR: tt.dot" in r.output and "mma.sync.aligned.m16n8k16" in r.output and "HMMA.16816.F32" in r.output
    r = runner.invoke(app, ["compile", "matmul", "--block", "16", "--arch", arch, "--line", "17",
                            "--width", "200", "--no-color"])
    assert "cp.async.ca" in r.output and "LDGSTS" in r.output and "LDSM" in r.output
    r = runner.invoke(app, ["compile", "matmul", "--block", "16", "--arch", arch, "--view", "walkthrough",
                            "--width", "120", "--no-color"])
    assert r.exit_code == 0 and "mma.m16n8k16" in r.output and "HMMA.16816.F32" in r.output
    for view in ("side-by-side", "mix"):
        r = runner.invoke(app, ["compile", "matmul", "--block", "16", "--arch", arch, "--view", view, "--width",
                                "120", "--no-color"])
        assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["compile", "matmul", "--block", "16", "--view", "bogus"])
    assert r.exit_code != 0 and "Unknown view" in r.output


# -- noise filters (issue 16): folded by default, every line with --raw, numbers always real ---------------


def _stage_rows(output: str, title: str, total: int) -> tuple[list[str], list[tuple[int, str]]]:
    """(the lines before the numbered rows, [(number, text)]) of one stage panel in `compile` output."""
    digits = len(str(total))
    row = re.compile(rf"^  ([ \d]{{{digits}}})  (.*)$")
    lines = output.splitlines()
    start = lines.index(f"   {title}") + 1
    head, rows = [], []
    for text in lines[start:]:
        m = row.match(text)
        if m and m.group(1).strip().isdigit():
            rows.append((int(m.group(1)), m.group(2).rstrip()))
        elif not rows:
            head.append(text.strip())
        elif not text.strip():
            break
    return head, rows


def _ptx_compile(*extra: str):
    from typer.testing import CliRunner

    from tritonscope.cli import app

    return CliRunner().invoke(app, ["compile", "matmul", "--block", "16", "--arch", "sm_90a", "--stage", "ptx",
                                    "--max-lines", "0", "--width", "400", "--no-color", *extra])


def test_ptx_view_folds_debug_sections(compiled):
    """Seed 001 on sm_90a: the PTX view shows its instructions, the DWARF sections folded, one line
    saying so; every shown line keeps its number in the real PTX."""
    from tritonscope.core.model import Line
    from tritonscope.outputs.render import noise
    from tritonscope.outputs.render.noise import classify

    ptx = compiled("matmul", block=16).stages["ptx"].splitlines()
    kinds = classify("ptx", [Line(i, t, t) for i, t in enumerate(ptx, 1)])
    debug = sum(1 for k in kinds.values() if k == "debug")
    assert debug > 100  # the .section .debug_* blocks, .file/.loc and their labels
    r = _ptx_compile()
    assert r.exit_code == 0, r.output
    head, rows = _stage_rows(r.output, "PTX", len(ptx))
    hidden = {k: sum(1 for v in kinds.values() if v == k) for k in noise.KINDS if k in kinds.values()}
    assert head == [noise.message(hidden)] and f"{debug} debug lines" in head[0] and "--raw shows them" in head[0]
    if triton_series() == "3.9":  # the README quotes this line (Triton 3.9.0)
        import re

        from conftest import ROOT

        # The DWARF section spells the kernel's folder one `.b8` line per byte,
        # so the debug count depends on where the checkout lives.
        def shape(text: str) -> str:
            return re.sub(r"\d+ debug lines", "N debug lines", text)

        assert f"\n    {shape(head[0])}\n" in shape((ROOT / "docs" / "views.md").read_text())
    assert len(rows) == len(ptx) - len(kinds)
    for number, text in rows:  # real numbers: each row is that line of the PTX
        assert text == ptx[number - 1].replace("\t", "    ").rstrip(), number
    shown = "\n".join(t for _, t in rows)
    assert ".debug_info" not in shown and "DW_AT" not in shown and ".loc" not in shown
    for instruction in ("cp.async.ca.shared.global", "ldmatrix.sync.aligned", "mma.sync.aligned.m16n8k16", "ret;"):
        assert instruction in shown


def test_ptx_view_raw_is_the_stage_text(compiled, tmp_path):
    """--raw: every line of the PTX, exactly as written, numbered 1..N; `show --raw` prints the same."""
    from typer.testing import CliRunner

    from tritonscope.cli import app

    ptx = compiled("matmul", block=16).stages["ptx"].splitlines()
    r = _ptx_compile("--raw", "--save", str(tmp_path / "r.json"), "--keep-paths")
    assert r.exit_code == 0, r.output
    head, rows = _stage_rows(r.output, "PTX", len(ptx))
    assert head == []  # nothing folded, nothing to say
    assert [n for n, _ in rows] == list(range(1, len(ptx) + 1))
    assert [t for _, t in rows] == [line.replace("\t", "    ").rstrip() for line in ptx]
    shown = CliRunner().invoke(app, ["show", str(tmp_path / "r.json"), "--stage", "ptx", "--raw", "--max-lines", "0",
                                     "--width", "400", "--no-color"])
    assert shown.exit_code == 0 and _stage_rows(shown.output, "PTX", len(ptx))[1] == rows
    # the saved JSON is never filtered
    assert json.loads((tmp_path / "r.json").read_text())["artifact"]["stages"]["ptx"].splitlines() == ptx


def test_keep_one_kind_and_bad_kinds():
    r = _ptx_compile("--keep", "comment")
    assert r.exit_code == 0, r.output
    assert "comment" not in r.output.split("   PTX", 1)[1].splitlines()[1]
    r = _ptx_compile("--keep", "debugg")
    assert r.exit_code == 2 and "Unknown kind of noise" in r.output


@pytest.mark.parametrize("case", ("matmul_b16_sm90a",))
def test_markdown_and_side_by_side_fold_too(case):
    from tritonscope.outputs.render import noise
    from tritonscope.outputs.render.markdown import render_markdown

    a = analysis_of(case)
    folded, raw = render_markdown(a), render_markdown(a, hide=noise.RAW)
    assert ".debug_info" in raw and ".debug_info" not in folded
    assert "debug lines hidden; saving with --raw keeps them" in folded
    assert len(raw.splitlines()) > len(folded.splitlines()) + 100
    # side by side shows only lines mapped to Python; folding never drops an instruction there
    side = render(views.side_by_side(a, ("ptx", "sass"), 100))
    assert "mma.sync.aligned.m16n8k16" in side and "HMMA" in side
