"""Issue 33: checks made late, values accepted silently, unclear messages.

- `diff --gpu B200` / `sweep --gpu MI300X` on sm_90a compiled everything, then said "no prediction": refused
  up front now, as `compile` refuses them; `--gpu ''` is refused by all three.
- `tritonscope.prune_by_prediction` checks its arguments at decoration time (top_k "3", 2.5, nan; no grid=;
  kernel=print; arch="sm_99"), and takes a grid function that returns an int as a 1-D grid.
- `--arch h100` names the H100's arch (sm_90a), not the closest spelling (sm_100, Blackwell).
- `passes FILE.ttir` says what passes takes, not "Unknown sample".
- explain's occupancy fix says what a --maxnreg gives by the occupancy arithmetic (sm_80, 4 warps, 32
  registers: 16 blocks per SM, limited by threads; it said 13).
"""

from __future__ import annotations

import importlib
import math
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from conftest import DATA
from tritonscope.cli import app

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def _no_compile(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("a compile started before the options were checked")

    for module, name in (("pipeline.triton_compile", "compile_artifact"), ("pipeline.triton_compile", "_compile"),
                         ("pipeline.child_compile", "compile_elsewhere"), ("measure.sweep", "run_sweep"),
                         ("commands.passes", "trace_request"), ("commands.running", "trace_request")):
        monkeypatch.setattr(importlib.import_module(f"tritonscope.{module}"), name, boom)


def _one_clean_error(result, code: int, words: str) -> None:
    assert result.exit_code == code, result.output
    assert words in " ".join(result.output.split()), result.output
    assert "Traceback" not in result.output and "unexpected" not in result.output and "bug" not in result.output


# --------------------------------------------------------------------------
# --gpu of another arch, or empty: refused before anything compiles
# --------------------------------------------------------------------------

@pytest.mark.parametrize("args,words", [
    (["diff", "matmul", "--a", "BLOCK=16", "--b", "BLOCK=32", "--gpu", "B200", "--arch", "sm_90a"],
     "--gpu B200: the B200 is no sm_90a GPU (it is sm_100a, sm_100)"),
    (["diff", "matmul", "--a", "BLOCK=16", "--b", "arch=gfx942", "--gpu", "H100", "--arch", "sm_90a"],
     "--gpu H100: the H100 SXM is no gfx942 GPU"),
    (["sweep", "matmul", "-c", "BLOCK=16,32", "--gpu", "MI300X", "--arch", "sm_90a"],
     "--gpu MI300X: the MI300X is no sm_90a GPU (it is gfx942)"),
    (["sweep", "matmul", "-c", "BLOCK=16,32", "--gpu", "H100", "--arch", "sm_90a,gfx942"],
     "the H100 SXM is no gfx942 GPU"),
    (["compile", "matmul", "--gpu", "B200", "--arch", "sm_90a"], "--gpu B200: the B200 is no sm_90a GPU"),
    (["compile", "matmul", "--gpu", ""], "--gpu is empty"),
    (["compile", "matmul", "--gpu", "  "], "--gpu is empty"),
    (["sweep", "matmul", "-c", "BLOCK=16,32", "--gpu", ""], "--gpu is empty"),
    (["diff", "matmul", "--a", "BLOCK=16", "--b", "BLOCK=32", "--gpu", ""], "--gpu is empty"),
])
def test_a_gpu_of_another_arch_or_none_is_refused_before_any_compile(monkeypatch, args, words):
    _no_compile(monkeypatch)
    _one_clean_error(invoke(*args), 2, words)


def test_the_check_accepts_a_gpu_of_the_arch():
    from tritonscope.commands.checks import check_gpu

    check_gpu(None, ["sm_90a"])
    check_gpu("H100", ["sm_90a", "sm_90a", None])
    check_gpu("MI300X", ["gfx942"])


# --------------------------------------------------------------------------
# prune_by_prediction: checked at decoration time
# --------------------------------------------------------------------------

GRID = (1,)


@pytest.mark.parametrize("kw,error,words", [
    ({"top_k": "3", "grid": GRID}, TypeError, "top_k is how many configs to keep, a whole number (an int), not '3'"),
    ({"top_k": 2.5, "grid": GRID}, TypeError, "not 2.5 (a float)"),
    ({"top_k": math.nan, "grid": GRID}, TypeError, "not nan (a float)"),
    ({"top_k": True, "grid": GRID}, TypeError, "not True (a bool)"),
    ({"top_k": 0, "grid": GRID}, ValueError, "top_k must be at least 1, got 0"),
    ({"top_k": 3}, TypeError, "prune_by_prediction needs grid="),
    ({"top_k": 3, "grid": "x"}, TypeError, "a launch grid is an int or a tuple of 1 to 3 ints"),
    ({"top_k": 3, "grid": (1, 2, 3, 4)}, TypeError, "a launch grid is an int or a tuple of 1 to 3 ints"),
    ({"top_k": 3, "grid": GRID, "kernel": print}, TypeError, "kernel= is the @triton.jit function"),
    ({"top_k": 3, "grid": GRID, "gpu": ""}, TypeError, "gpu= names a GPU"),
    ({"top_k": 3, "grid": GRID, "gpu": "B200", "arch": "sm_90a"}, ValueError, "gpu='B200' is no sm_90a GPU"),
    ({"top_k": 3, "grid": GRID, "arch": ""}, TypeError, "arch= names a target"),
])
def test_prune_by_prediction_refuses_bad_arguments_at_decoration(kw, error, words):
    import tritonscope

    with pytest.raises(error) as e:
        tritonscope.prune_by_prediction(**kw)
    assert words in str(e.value)


def test_prune_by_prediction_refuses_an_unknown_arch():
    import tritonscope
    from tritonscope.core.errors import NotFoundError

    with pytest.raises(NotFoundError, match="Unsupported arch 'sm_99'"):
        tritonscope.prune_by_prediction(3, grid=GRID, arch="sm_99")


def test_prune_by_prediction_accepts_good_arguments():
    import tritonscope

    hook = tritonscope.prune_by_prediction(2, grid=7, arch="sm_90", gpu="H100")
    assert hook.grid == (7,) and hook.arch == "sm_90a" and hook.top_k == 2


def _prune_kernel():
    spec = importlib.util.spec_from_file_location("prune_kernel", DATA / "cost" / "prune_kernel.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_grid_function_that_returns_an_int_is_a_1d_grid():
    """It leaked `TypeError: 'int' object is not iterable`; now the configs are predicted as for (n,)."""
    import triton
    from triton import Config

    import tritonscope

    mod = _prune_kernel()
    hook = tritonscope.prune_by_prediction(1, grid=lambda m: triton.cdiv(m["n"], m["BLOCK"]), kernel=mod.add_kernel,
                                           arch="sm_90a", gpu="H100")
    cfgs = [Config({"BLOCK": b}, num_warps=4) for b in (128, 4096)]
    n = 1 << 24
    kept = hook(cfgs, {"x_ptr": f"fp32[{n}]", "y_ptr": f"fp32[{n}]", "out_ptr": f"fp32[{n}]", "n": n})
    assert len(kept) == 1
    assert all("predicted_ms" in x for x in hook.last), hook.last


def test_a_grid_function_that_returns_no_grid_is_refused_clearly():
    from triton import Config

    import tritonscope

    mod = _prune_kernel()
    hook = tritonscope.prune_by_prediction(1, grid=lambda m: "many", kernel=mod.add_kernel, arch="sm_90a")
    cfgs = [Config({"BLOCK": b}, num_warps=4) for b in (128, 4096)]
    with pytest.raises(TypeError, match="grid= gave 'many'; a launch grid is an int or a tuple of 1 to 3 ints"):
        hook(cfgs, {"x_ptr": "fp32[1024]", "y_ptr": "fp32[1024]", "out_ptr": "fp32[1024]", "n": 1024})


# --------------------------------------------------------------------------
# --arch h100, passes FILE.ttir
# --------------------------------------------------------------------------

@pytest.mark.parametrize("name,arch", [("h100", "sm_90a"), ("H200", "sm_90a"), ("a100", "sm_80"),
                                       ("MI300X", "gfx942"), ("l4", "sm_89")])
def test_a_gpu_name_given_as_arch_names_its_arch(monkeypatch, name, arch):
    _no_compile(monkeypatch)
    result = invoke("compile", "matmul", "--arch", name)
    _one_clean_error(result, 3, f"that is a GPU")
    assert f"whose arch is {arch}" in " ".join(result.output.split())
    assert f"Use --arch {arch}." in " ".join(result.output.split())
    assert "Did you mean: sm_100" not in result.output


def test_an_unknown_arch_still_gets_close_spellings(monkeypatch):
    _no_compile(monkeypatch)
    _one_clean_error(invoke("compile", "matmul", "--arch", "sm_99"), 3, "Unsupported arch 'sm_99'. Did you mean")


@pytest.mark.parametrize("name,what", [("k.ttir", "an IR file"), ("k.ptx", "an IR file"), ("k.ll", "an IR file"),
                                       ("r.json", "a report or metadata file"), ("./dump", "a folder")])
def test_passes_of_an_ir_file_says_what_passes_takes(monkeypatch, tmp_path, name, what):
    _no_compile(monkeypatch)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dump").mkdir()
    (tmp_path / "k.ttir").write_text("module {}\n")
    result = invoke("passes", name)
    _one_clean_error(result, 2, f"passes compiles a kernel with every pass dumped; {name} is {what}")
    assert "Unknown sample" not in result.output
    assert "tritonscope open" in result.output and "--dump FILE" in result.output


# --------------------------------------------------------------------------
# explain: what --maxnreg gives, by the occupancy arithmetic
# --------------------------------------------------------------------------

def _occupancy_ctx(arch: str, registers: int, warps: int):
    from tritonscope.analyses.summary import Occupancy
    from tritonscope.core.model import ARCHES

    a = ARCHES[arch]
    threads = warps * 32
    per_warp = -(-registers * 32 // 256) * 256
    limits = {"threads": a.max_threads_per_sm // threads, "blocks": a.max_blocks_per_sm,
              "registers": a.regs_per_sm // (per_warp * warps)}
    blocks = min(limits.values())
    occ = Occupancy(blocks, blocks * warps, blocks * threads / a.max_threads_per_sm, min(limits, key=limits.get),
                    limits)
    summary = SimpleNamespace(arch=arch, occupancy=occ, threads_per_block=threads, registers=registers,
                              shared=SimpleNamespace(dynamic=0))
    return SimpleNamespace(summary=summary, spec=SimpleNamespace(num_warps=warps), compile=lambda change: None)


def test_explain_maxnreg_fix_says_the_blocks_it_gives():
    """sm_80, 4 warps, 40 registers: 12 blocks, limited by registers.  --maxnreg 32 lifts the registers'
    limit to 16, and the threads' limit is 16 too: it gives 16 blocks per SM, limited by threads."""
    from tritonscope.analyses.explain.memory import verdict_occupancy

    v = verdict_occupancy(_occupancy_ctx("sm_80", 40, 4))
    assert v.facts["blocks_per_sm"] == 12 and v.facts["limited_by"] == "registers"
    assert v.facts["maxnreg"] == 32 and v.facts["blocks_at_maxnreg"] == 16
    assert "(--maxnreg 32) gives 16 blocks per SM (limited by threads)" in v.fix
    assert "gives 13 blocks" not in v.fix


def test_explain_maxnreg_fix_when_registers_stay_the_limit():
    from tritonscope.analyses.explain.memory import verdict_occupancy

    # sm_90a, 8 warps, 128 registers: 2 blocks; the cap for 3 blocks (80) gives 3, still limited by registers
    v = verdict_occupancy(_occupancy_ctx("sm_90a", 128, 8))
    assert v.facts["blocks_per_sm"] == 2
    assert f"(--maxnreg {v.facts['maxnreg']}) gives {v.facts['blocks_at_maxnreg']} blocks per SM" in v.fix
    assert v.facts["blocks_at_maxnreg"] >= 3 and "limited by" not in v.fix.split("gives")[1]
