"""explain: every verdict class on a real compile, failing if the verdict disappears or turns wrong.

Compiles are shared: each config is explained once per session (fixes
checked by compiling), and the tests read that one Explanation.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import ROOT
from tritonscope.cli import app


@pytest.fixture(scope="session")
def explained():
    """explained(target, shapes=(), gpu=None, check=True, **request) -> (Analysis, Explanation), memoized."""
    from tritonscope.commands.running import run_explain
    from tritonscope.core.env import Env
    from tritonscope.inputs.kernels import Request

    cache = {}

    def get(target: str, *, shapes=(), gpu=None, check=True, **kw):
        key = (target, tuple(shapes), gpu, check, repr(sorted(kw.items())))
        if key not in cache:
            kw.setdefault("arch", "sm_90a")
            cx = {k: str(v) for k, v in kw.pop("constexprs", {}).items()}
            args = {k: str(v) for k, v in kw.pop("args", {}).items()}
            request = Request(target, constexprs=cx, args=args, **kw)
            cache[key] = run_explain(request, Env.from_environ(), shapes=list(shapes), gpu=gpu, check_fixes=check,
                                     progress=False)
        return cache[key]

    return get


def one(expl, kind, **where):
    found = [v for v in expl.of(kind) if all(v.facts.get(k) == x for k, x in where.items())]
    assert found, f"no {kind} verdict {where or ''} in: " + "; ".join(f"{v.kind}: {v.title}" for v in expl.verdicts)
    return found[0]


# ------------------------------------------------------------------ a config that does not fit (seed 002)


def test_does_not_fit_names_the_buffers_and_a_checked_fix(explained):
    _, expl = explained("matmul_masked", constexprs={"BLOCK_SIZE": 128})
    v = one(expl, "shared memory")
    assert v.severity == "bad"
    assert v.facts["dynamic"] == 393216 and v.facts["limit"] == 232448
    buffers = [b for b in v.facts["buffers"] if not b["barrier"]]
    assert [(b["name"], b["shape"], b["bytes"], b["copies"]) for b in buffers] == [
        ("a_tile", [3, 128, 128], 196608, 3), ("b_tile", [3, 128, 128], 196608, 3)]
    assert {23, 25} <= set(v.python_lines)                  # the two tl.load lines
    assert any(e[0] == "ttgir" and "ttg.local_alloc" in e[2] for e in v.evidence)
    assert any(e[0] == "python" and "tl.load" in e[2] for e in v.evidence)
    # the largest num_stages that fits and the largest block size, each compiled
    assert v.fix_checked
    fixes = v.facts["fixes"]
    assert {"num_stages": 1, "shared": 131072} in fixes
    assert any(f.get("constexprs") == {"BLOCK_SIZE": 64} and f["shared"] == 98304 for f in fixes)
    assert "num_stages=1 fits" in v.fix and "BLOCK_SIZE=64 fits" in v.fix


def test_tensor_cores_and_tf32(explained):
    _, expl = explained("matmul_masked", constexprs={"BLOCK_SIZE": 128})
    v = one(expl, "tensor cores")
    assert v.facts["unit"] == "wgmma" and v.facts["tf32"] is True
    assert v.python_lines == (29,)
    assert any(e[0] == "ptx" and "wgmma.mma_async" in e[2] and "tf32" in e[2] for e in v.evidence)
    assert "input_precision='ieee'" in v.fix


def test_transposed_operand_explains_the_narrow_copy(explained):
    """Seed 002's B tile is copied into a transposed (K-major) buffer: 4-byte copies, and Triton says why."""
    _, expl = explained("matmul_masked", constexprs={"BLOCK_SIZE": 128})
    v = one(expl, "global access")
    assert v.severity == "warn"
    narrow = {a["python_line"]: a for a in v.facts["accesses"] if a["min_bits"] and a["min_bits"] < a["possible_bits"]}
    assert set(narrow) == {25} and narrow[25]["min_bits"] == 32 and narrow[25]["transposed_shared"]
    loop = one(expl, "pipelining")
    assert any(e[0] == "remark" and "Forcing a different order" in e[2] for e in loop.evidence)


# ------------------------------------------------------------------ spills


def test_spills_with_the_lines_that_spill_and_a_checked_fix(explained):
    # BLOCK=8192 on one warp spills a few hundred bytes (test_summary.py compiles the same config, so the run
    # compiles it once); BLOCK=16384 spills 3,960 bytes for three times the compile, and checks nothing more
    _, expl = explained("softmax", constexprs={"BLOCK": 8192}, num_warps=1)
    v = one(expl, "spills")
    assert v.severity == "warn"
    assert v.facts["stack"] >= 128 and v.facts["stores"] >= 40 and v.facts["loads"] >= 40   # 3.6: 208 B, 53, 64
    lines = v.facts["lines"]
    assert sum(x["stl"] for x in lines.values()) == v.facts["stores"]
    assert v.python_lines and all(str(n) in lines for n in v.python_lines)
    assert any(e[0] == "sass" and ("STL" in e[2] or "LDL" in e[2]) for e in v.evidence)
    assert v.fix_checked and v.facts["fix"]["spill_bytes"] == 0 and v.facts["fix"]["num_warps"] > 1
    regs = one(expl, "registers")
    if "live_peak" in regs.facts:  # nvdisasm -lrm count, within REG (test_registers_... below checks it too)
        assert regs.facts["live_peak"] <= regs.facts["registers"] and regs.python_lines
    else:  # Triton 3.9's nvdisasm refuses this cubin's liveness ("Invalid register count : '255'"): said plainly
        assert regs.facts["live_unavailable"].startswith("nvdisasm -lrm failed")
        assert "live registers unknown: nvdisasm -lrm failed" in regs.title


# ------------------------------------------------------------------ narrow loads from a missing hint


def test_narrow_load_from_missing_divisibility_and_the_hint_that_fixes_it(explained):
    _, expl = explained("matmul_masked", arch="sm_80", args={"K": 1000})
    v = one(expl, "global access")
    assert v.severity == "warn"
    assert v.facts["ints_without_divisibility"] == ["K"]
    assert "K = tl.multiple_of(K, 16)" in v.fix
    narrow = [a for a in v.facts["accesses"] if a["min_bits"] and a["min_bits"] < a["possible_bits"]]
    assert {a["python_line"] for a in narrow} == {23} and {a["min_bits"] for a in narrow} == {32}
    # checked: describing K as a multiple of 16 widens the A loads to 128 bits
    assert v.fix_checked and v.facts["fix"]["args"] == {"K": "1008"}
    assert v.facts["fix"]["bits_after"]["23"] == 128
    assert "32 -> 128-bit" in v.fix


def test_aligned_launch_has_no_narrow_verdict(explained):
    _, expl = explained("matmul_masked", arch="sm_80")
    v = one(expl, "global access")
    assert v.severity == "ok" and v.facts["min_bits"] == 128


# ------------------------------------------------------------------ pipelining


def test_unpipelined_loop_and_the_checked_num_stages(explained):
    _, expl = explained("matmul", block=16, num_stages=1, arch="sm_80")
    v = one(expl, "pipelining")
    assert v.severity == "warn" and v.facts["python_line"] == 16 and v.facts["async_copies"] == 0
    assert v.facts["plain_loads"] == 2
    assert v.fix_checked and v.facts["fix"]["pipelined"] and v.facts["fix"]["num_stages"] == 3
    _, good = explained("matmul", block=16, arch="sm_80")
    ok = one(good, "pipelining")
    assert ok.severity == "ok" and ok.facts["stages"] == 3 and ok.facts["buffers"] >= 2 and ok.facts["async_copies"] >= 2


def test_remark_that_disables_pipelining(explained):
    """tests/data/passes/unpipelined.py: Triton's remark on the dot line is the loop's evidence and its fix."""
    target = str(ROOT / "tests" / "data" / "passes" / "unpipelined.py")
    _, expl = explained(target, check=False)
    v = one(expl, "pipelining")
    assert any("pipelined load for this operand will be disabled" in m for m in v.facts["remarks"])
    assert any(e[0] == "remark" for e in v.evidence)


# ------------------------------------------------------------------ bank conflicts


def test_bank_conflicts_of_the_transposed_copy(explained):
    """Seed 002's B tile goes into a K-major buffer: each 4-byte cp.async of a warp hits the same banks."""
    _, expl = explained("matmul_masked", check=False)
    by_line = {v.python_lines[0]: v for v in expl.of("bank conflicts") if v.facts["direction"] == "store"}
    assert by_line[23].severity == "ok" and by_line[23].facts["ways"] == 1 and by_line[23].facts["vector_bytes"] == 16
    b = by_line[25]
    assert b.severity == "warn" and b.facts["ways"] == 8 and b.facts["vector_bytes"] == 4
    assert b.facts["path"] == "cp.async" and "8-way bank conflict" in b.title
    assert any(e[0] == "ttgir" and "async_copy_global_to_local" in e[2] for e in b.evidence)


def test_bank_conflicts_agree_with_triton(explained):
    """Triton 3.9's fp32 dot operands on sm_80 are read with ld.shared: a 2-way conflict, and gluon agrees."""
    from tritonscope import triton_api

    if (triton_api.triton_series() or (0, 0)) < (3, 9):
        pytest.skip("Triton's own count (gluon bank_conflicts on parsed layouts) needs Triton 3.9")
    _, expl = explained("matmul_masked", arch="sm_80", check=False)
    conflicted = [v for v in expl.of("bank conflicts") if v.facts["ways"] > 1]
    assert conflicted, [v.title for v in expl.of("bank conflicts")]
    v = conflicted[0]
    assert v.facts["ways"] == 2 and v.python_lines == (23,) and v.facts["direction"] == "load"
    assert v.facts.get("triton_excess") == v.facts["excess"] == 1      # gluon's bank_conflicts agrees
    assert any(f.facts["ways"] == 1 and "triton_excess" in f.facts for f in expl.of("bank conflicts"))


def test_bank_conflict_model_matches_triton_on_a_table():
    """bank_conflicts() against Triton's own count for register/shared layout pairs."""
    from tritonscope import triton_api
    from tritonscope.analyses.explain import bank_conflicts

    blocked = "#ttg.blocked<{{sizePerThread = {spt}, threadsPerWarp = {tpw}, warpsPerCTA = [4, 1], order = [1, 0]}}>"
    swizzled = "#ttg.swizzled_shared<{{vec = {v}, perPhase = {p}, maxPhase = {m}, order = [1, 0]}}>"
    regs = [blocked.format(spt=s, tpw=t) for s, t in (("[1, 1]", "[32, 1]"), ("[1, 1]", "[1, 32]"),
                                                       ("[1, 8]", "[4, 8]"), ("[1, 4]", "[8, 4]"),
                                                       ("[4, 1]", "[8, 4]"))]
    shareds = [swizzled.format(v=v, p=p, m=m) for v, p, m in ((1, 1, 1), (8, 1, 8), (4, 2, 4), (2, 1, 4))]
    items = [{"register": r, "shared": s, "shape": shape, "elem": elem, "num_warps": 4, "capability": 90}
             for r in regs for s in shareds for shape, elem in (([64, 64], "f16"), ([32, 32], "f32"))]
    theirs = triton_api.bank_conflicts_from_triton(items)
    if theirs is None:
        pytest.skip("this Triton has no gluon bank_conflicts")
    ours = [bank_conflicts(i["register"], i["shared"], i["shape"], 16 if i["elem"] == "f16" else 32)["excess"]
            for i in items]
    assert sum(1 for t in theirs if t is not None) >= len(items) - 2
    mismatch = [(i["register"][14:60], i["shared"][22:60], i["shape"], o, t)
                for i, o, t in zip(items, ours, theirs) if t is not None and o != t]
    assert not mismatch, mismatch


# ------------------------------------------------------------------ occupancy, registers


def test_occupancy_limiter_and_what_lifts_it(explained):
    _, expl = explained("matmul_grouped", check=False)
    v = one(expl, "occupancy")
    assert v.facts["limited_by"] == "shared" and v.facts["blocks_per_sm"] == 1
    assert v.facts["shared_for_next_block"] < 147456 and "2 blocks per SM need at most" in v.fix
    regs = one(expl, "registers")
    assert 150 < regs.facts["live_peak"] <= regs.facts["registers"]
    assert regs.python_lines


# ------------------------------------------------------------------ problem shapes: waves and roofline


def test_waves_and_roofline(explained):
    _, expl = explained("matmul_grouped", shapes=("1024x1024x1024", "4096x4096x4096"), gpu="H200", check=False)
    waves = {tuple(v.facts["shape"]): v for v in expl.of("waves")}
    small, big = waves[(1024, 1024, 1024)], waves[(4096, 4096, 4096)]
    assert small.facts["tiles"] == 32 and small.severity == "warn" and "100 SMs stay idle" in small.title
    assert big.facts["tiles"] == 512 and big.facts["per_wave"] == 132
    assert big.facts["last_wave_utilization"] == pytest.approx((512 - 3 * 132) / 132)
    roofs = {tuple(v.facts["shape"]): v.facts for v in expl.of("roofline")}
    for n in (1024, 4096):
        r = roofs[(n, n, n)]
        assert r["flops"] == 2 * n ** 3                           # loop-aware: K / BLOCK_K iterations
        assert r["bytes_compulsory"] == 3 * n * n * 2
        assert r["peak_kind"] == "fp16" and r["peak_tflops"] == 989.4 and r["bandwidth_gbs"] == 4800
        assert r["bound_s"] >= r["flops"] / 989.4e12 and r["bound_s"] >= r["bytes_dram"] / 4800e9
        assert r["bound"] == "compute"
    # 32 tiles on 132 SMs: the bound is one tile's FLOPs at one SM's share of the peak
    assert roofs[(1024,) * 3]["compute_s"] == pytest.approx(2 * 128 * 256 * 1024 / (989.4e12 / 132))


def test_roofline_of_a_persistent_kernel_adds_up_every_program(explained):
    _, expl = explained("matmul_persistent", constexprs={"NUM_SMS": 132}, shapes=("2048x2048x2048",), gpu="H100",
                        check=False)
    r = one(expl, "roofline").facts
    assert r["flops"] == 2 * 2048 ** 3


# ------------------------------------------------------------------ the command


def test_explain_command_text_json_and_save(tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["explain", "matmul_masked", "-c", "BLOCK_SIZE=128", "--no-check-fixes",
                              "--width", "120", "--save", str(tmp_path / "e.md")])
    assert res.exit_code == 0, res.output
    assert "✗ shared memory" in res.output and "needs 393,216 B" in res.output
    assert "python:23" in res.output and "ttgir:" in res.output
    # .md, .html and .json: the compile report, with the verdicts as its Explain section
    md = (tmp_path / "e.md").read_text()
    assert md.startswith("## tritonscope: matmul\\_kernel") and "### Explain" in md and "<details>" in md
    assert "#### ✗ shared memory: needs 393,216 B" in md and "```text" in md
    res = runner.invoke(app, ["explain", "matmul_masked", "-c", "BLOCK_SIZE=128", "--no-check-fixes", "--json"])
    data = json.loads(res.output)
    assert data["verdicts"][0]["kind"] == "shared memory" and data["verdicts"][0]["severity"] == "bad"
    from tritonscope.analyses.explain import Explanation

    assert Explanation.from_dict(data).to_dict() == data
    for ext in ("html", "txt", "json"):
        res = runner.invoke(app, ["explain", "matmul_masked", "-c", "BLOCK_SIZE=128", "--no-check-fixes",
                                  "--save", str(tmp_path / f"e.{ext}")])
        assert res.exit_code == 0 and (tmp_path / f"e.{ext}").stat().st_size > 500
    assert '<section id="explain">' in (tmp_path / "e.html").read_text()
    txt = (tmp_path / "e.txt").read_text()  # .txt: the verdicts as printed, alone
    assert txt.startswith("matmul_kernel") and "✗ shared memory" in txt and "Triton IR" not in txt
    report = json.loads((tmp_path / "e.json").read_text())
    assert report["schema"] == "tritonscope.report" and report["explain"]["verdicts"][0]["severity"] == "bad"
    shown = runner.invoke(app, ["show", str(tmp_path / "e.json"), "--stage", "none", "--width", "120"])
    assert shown.exit_code == 0 and "✗ shared memory  needs 393,216 B" in shown.output


def test_explain_refuses_a_bad_save_path_before_compiling(tmp_path, monkeypatch):
    monkeypatch.setattr("tritonscope.commands.running.compile_config",
                        lambda *a, **k: (_ for _ in ()).throw(AssertionError("compiled")))
    res = CliRunner().invoke(app, ["explain", "matmul", "--save", str(tmp_path / "x.pdf")])
    assert res.exit_code == 8 and "unknown extension '.pdf'" in " ".join(res.output.split())
    assert not (tmp_path / "x.pdf").exists()
    res = CliRunner().invoke(app, ["explain", "matmul", "--gpu", "H300"])
    assert res.exit_code == 2 and "H200" in res.output


def test_fma_dot_is_not_on_tensor_cores(explained):
    target = str(ROOT / "tests" / "data" / "explain" / "ieee_dot.py")
    _, expl = explained(target, arch="sm_80", check=False)
    v = one(expl, "tensor cores")
    assert v.facts["unit"] == "FMA" and v.severity == "warn" and not v.facts["tf32"]
    assert v.python_lines == (19,)
    res = CliRunner().invoke(app, ["check", target, "--arch", "sm_80", "-e", "tensor-cores"])
    assert res.exit_code == 10 and "FMA" in res.output


def test_tritons_bank_counts_are_kept_per_item_and_a_damaged_entry_is_asked_again(tmp_path, monkeypatch):
    """The counts come from a child process that imports Triton (about a second): each item's answer is kept
    in tritonscope's cache by the item and Triton's version, so a repeat asks nothing, a new item alone is
    asked, and a damaged entry is a miss."""
    from tritonscope import triton_api
    from tritonscope.core import child
    from tritonscope.triton_api import gluon

    if triton_api.triton_series() < (3, 9):
        pytest.skip("Triton's own count (gluon bank_conflicts) needs Triton 3.9")
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path))
    asked: list[int] = []
    real = child.run_in_child

    def counting(function, payload, **kw):
        asked.append(len(payload))
        return real(function, payload, **kw)

    monkeypatch.setattr(child, "run_in_child", counting)
    reg = "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [1, 0]}>"
    shared = "#ttg.swizzled_shared<{{vec = {v}, perPhase = 1, maxPhase = 1, order = [1, 0]}}>"
    items = [{"register": reg, "shared": shared.format(v=1), "shape": [64, 64], "elem": "f16", "num_warps": 4,
              "capability": 90}]
    first = gluon.bank_conflicts_from_triton(items)
    assert first is not None and isinstance(first[0], int) and first[0] > 0 and asked == [1]
    assert gluon.bank_conflicts_from_triton(items) == first and asked == [1]          # kept: nothing asked
    more = items + [{**items[0], "shared": shared.format(v=8)}]
    both = gluon.bank_conflicts_from_triton(more)
    assert both[0] == first[0] and asked == [1, 1]                                   # only the new item
    gluon._banks_path(items[0]).write_text('{"banks": "many"}')                      # damaged: a miss
    assert gluon.bank_conflicts_from_triton(items) == first and asked == [1, 1, 1]
