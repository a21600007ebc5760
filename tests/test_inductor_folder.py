"""Inductor's own kernel files, opened and compiled GPU-less (issue 35).

tests/data/inductor/ holds what a real `torch.compile(mode="max-autotune-no-cudagraphs")`
run left on an H200 (torch 2.11.0+cu130, Triton 3.6.0; tests/gpu/make_inductor_fixture.py,
trimmed by tests/data/inductor/make_inductor_data.py): the Inductor cache without its
triton/ folder (`cache/`), the TORCH_COMPILE_DEBUG output_code.py (`debug/`), and from
that run's Triton cache the TTGIR, PTX and metadata of each kernel the model ran
(`triton/<kernel>/`), the reference.

Compiling imports the generated modules (they import torch._inductor, here torch 2.13's
runtime) in a child process; the pytest process never imports torch for it.  Under
Triton 3.6 (.venv36) the kernels the model ran must equal the GPU run's TTGIR and PTX
(locations and file names stripped by tests/fidelity.py's `normalize`, as the GPU fidelity tests do).  The
GPU run assembled some kernels with torch's ptxas (CUDA 13.0: PTX `.version 9.0`, Inductor
sets TRITON_PTXAS_PATH in its process) and others with Triton's bundled one (`.version
8.7`): each is compiled here with the ptxas its reference PTX names.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from importlib.metadata import version
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fidelity import first_difference, normalize
from tritonscope.cli import app

DATA = Path(__file__).parent / "data" / "inductor"
TRITON = version("triton")
IS_36 = TRITON.startswith("3.6.")
# The kernels the compiled graph launches (its call(), in order), and each launch's grid from output_code.py
RAN = {
    "triton_tem_fused_addmm_t_0": [32, 1, 1],
    "triton_per_fused_gelu_native_layer_norm_1": None,
    "triton_tem_fused_mm_transpose_2": [128, 1, 1],
    "triton_per_fused__softmax__to_copy_amax_mul_sub_3": None,
    "triton_tem_fused__softmax__to_copy_mm_mul_sub_4": [256, 1, 1],
    "triton_tem_fused_addmm_t_5": [64, 1, 1],
    "triton_poi_fused_add_mul_6": None,
}


def invoke(*args, env: dict[str, str] | None = None):
    return CliRunner().invoke(app, [str(a) for a in args], env=env)


def _ptx_version(text: str) -> str:
    m = re.search(r"^\.version (\S+)", text, re.M)
    return m.group(1) if m else "?"


def _cuda13_ptxas() -> str | None:
    """A ptxas of CUDA 13.0 (the release torch 2.11+cu130 bundles), or None."""
    for path in (os.path.join(os.environ.get("CUDA_HOME", "/nonexistent"), "bin", "ptxas"),
                 "/usr/local/cuda-13.0/bin/ptxas", "/usr/local/cuda/bin/ptxas", shutil.which("ptxas") or ""):
        if path and os.path.isfile(path):
            try:
                said = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
            except (OSError, subprocess.SubprocessError):
                continue
            if "release 13.0" in said:
                return path
    return None


# --------------------------------------------------------------------------
# Fixtures: the folders (copied: compiling reads them in place) and one compile of every kernel needed
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("inductor")
    shutil.copytree(DATA / "cache", root / "cache")
    shutil.copytree(DATA / "debug", root / "debug")
    return root


@pytest.fixture(scope="module")
def source(folders):
    from tritonscope.inputs.sources import open_source

    return open_source(folders / "cache")


def _best_config_kernels(source):
    """The kernel file beside each .best_config (Inductor writes it in the kernel file's folder)."""
    return {e.name: e for e in source.entries if e.best_config}


@pytest.fixture(scope="module")
def compiled(source):
    """name -> InductorCompile, for the kernels the graph ran and every kernel with a .best_config; under
    Triton 3.6 each with the ptxas its reference PTX names."""
    from tritonscope.inputs.sources.inductor_compile import compile_inductor

    by_name = {e.name: e for e in source.entries if e.runs_in}
    by_name.update(_best_config_kernels(source))
    groups: dict[str | None, list] = {}
    for name, entry in by_name.items():
        ptxas = None
        ref = DATA / "triton" / name / f"{name}.ptx"
        if IS_36 and ref.is_file() and _ptx_version(ref.read_text()) == "9.0":
            ptxas = _cuda13_ptxas() or "missing"
        groups.setdefault(ptxas, []).append(entry)
    out = {}
    for ptxas, entries in groups.items():
        env = dict(os.environ)
        if ptxas and ptxas != "missing":
            env["TRITON_PTXAS_PATH"] = ptxas
        for entry, result in zip(entries, compile_inductor(entries, env=env)):
            result.ptxas = ptxas
            out[entry.name] = result
    return out


# --------------------------------------------------------------------------
# Listing: no compile, no torch
# --------------------------------------------------------------------------


def test_open_lists_every_generated_kernel(folders):
    cache = folders / "cache"
    result = invoke("open", cache, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["kind"] == "inductor"
    # every generated kernel module (a @triton.jit under Inductor's heuristics decorator) is one row
    files = [p for p in cache.glob("??/*.py") if "@triton.jit" in p.read_text() and
             "async_compile.triton(" not in p.read_text()]
    assert len(files) == 93 and len(data["kernels"]) == len(files)
    assert {r["key"] for r in data["kernels"]} == {p.stem[:12] for p in files}
    kinds = {}
    for r in data["kernels"]:
        kinds[r["heuristic"]] = kinds.get(r["heuristic"], 0) + 1
        assert r["device"] == "cuda:0 cc 90" and r["arch"] == "sm_90a"
    assert kinds == {"template": 89, "pointwise": 2, "persistent_reduction": 2}
    ran = {r["name"]: r for r in data["kernels"] if r["runs_in"]}
    assert set(ran) == set(RAN)
    for name, grid in RAN.items():
        assert ran[name]["grid"] == grid, name
    # the .best_config files' configs, read without compiling
    chosen = {r["name"]: r["chosen"] for r in data["kernels"] if r["chosen_from"] == "best_config"}
    for path in cache.glob("??/*.best_config"):
        best = json.loads(path.read_text())
        kernel = [r for r in data["kernels"] if r["best_config"] and Path(r["best_config"]).name == path.name]
        assert len(kernel) == 1, path
        assert chosen[kernel[0]["name"]] == f"XBLOCK={best['XBLOCK']} w{best['num_warps']} s{best['num_stages']}"
    text = invoke("open", cache, "--where", "name~fused", env={"COLUMNS": "220"})
    assert text.exit_code == 0, text.output
    for name in RAN:
        assert name in text.output
    assert "7 launched by the compiled graph" in " ".join(text.output.split())
    assert "XBLOCK=16 w4 s1 (.best_config)" in text.output


def test_open_debug_folder_lists_the_kernels_output_code_embeds(folders):
    result = invoke("open", folders / "debug", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    rows = {r["name"]: r for r in data["kernels"]}
    assert set(rows) == set(RAN)
    for name, grid in RAN.items():
        assert rows[name]["grid"] == grid and rows[name]["runs_in"] == "output_code.py"
    # the debug folder keeps no .best_config: a tuned kernel's chosen config is not known from it
    assert rows["triton_poi_fused_add_mul_6"]["chosen"] == ""
    assert rows["triton_tem_fused_addmm_t_0"]["chosen"] == "w4 s3"


def test_listing_imports_neither_torch_nor_triton(folders):
    code = ("import sys\nfrom tritonscope.inputs.sources import open_source\n"
            f"s = open_source({str(folders / 'cache')!r})\nassert len(s.entries) == 93\n"
            "print(sorted(m for m in ('torch', 'triton') if m in sys.modules))")
    out = subprocess.run([os.sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# --------------------------------------------------------------------------
# Compiling, as Inductor would
# --------------------------------------------------------------------------


@pytest.mark.needs("torch")
def test_chosen_configs_match_the_best_config_files(source, compiled):
    with_best = _best_config_kernels(source)
    assert len(with_best) == 4
    for name, entry in with_best.items():
        plan = compiled[name].plan
        best = entry.best_config
        assert plan["chosen_by"] == ".best_config", plan
        assert Path(plan["best_config"]).name == Path(best["path"]).name
        assert plan["configs_hash"] == best["configs_hash"]   # Inductor's hash_configs of its heuristics' configs
        assert plan["chosen"] == {"XBLOCK": best["XBLOCK"], "num_warps": best["num_warps"],
                                  "num_stages": best["num_stages"]}
        spec = compiled[name].artifact.spec
        assert (spec.constexprs, spec.num_warps, spec.num_stages) == \
            ({"XBLOCK": best["XBLOCK"]}, best["num_warps"], best["num_stages"])
        assert not plan["guessed"]
        # torch 2.13's key for the best_config file is not 2.11's (torch_key hashes torch's own sources)
        assert plan["autotune_cache_state"] == "miss"
    # templates: the one config Inductor's template decorator gives, which Inductor never tunes at launch
    for name in RAN:
        plan = compiled[name].plan
        if name.startswith("triton_tem"):
            assert plan["chosen_by"] == "the only config" and not plan["guessed"]


@pytest.mark.needs("torch")
def test_grids_come_from_the_output_code_or_inductors_grid_code(compiled):
    grids = {name: compiled[name].plan["grid"] for name in RAN}
    for name, grid in RAN.items():
        if grid is not None:
            assert grids[name] == grid
    # Grid1D: ceil(xnumel / XBLOCK) by Inductor's own GridExpr, xnumel from the kernel's body
    assert grids["triton_poi_fused_add_mul_6"] == [131072 // 1024, 1, 1]
    assert grids["triton_per_fused_gelu_native_layer_norm_1"] == [512 // 2, 1, 1]
    assert grids["triton_per_fused__softmax__to_copy_amax_mul_sub_3"] == [512 // 16, 1, 1]
    for name in RAN:
        assert compiled[name].artifact.spec.grid == tuple(grids[name])


@pytest.mark.skipif(not IS_36, reason=f"the GPU run used Triton 3.6.0; Triton {TRITON}'s TTGIR and PTX differ "
                                      "(the 3.9 compile is checked by test_every_ran_kernel_compiles_here)")
@pytest.mark.parametrize("name", list(RAN))
def test_ran_kernel_equals_the_gpu_run(compiled, name):
    result = compiled[name]
    ref = DATA / "triton" / name
    if result.ptxas == "missing":
        pytest.skip("its reference PTX was assembled by CUDA 13.0's ptxas, and none is on this machine")
    art = result.artifact
    meta = json.loads((ref / f"{name}.json").read_text())
    assert (art.spec.num_warps, art.spec.num_stages) == (meta["num_warps"], meta["num_stages"])
    for stage in ("ttgir", "ptx"):
        mine, real = normalize(stage, art.stages[stage]), normalize(stage, (ref / f"{name}.{stage}").read_text())
        assert mine == real, f"{name} {stage}: " + first_difference(mine, real, "here", "GPU run")


@pytest.mark.needs("torch")
def test_every_ran_kernel_compiles_here(compiled):
    """Under any Triton (3.9 too): each kernel compiles to every CUDA stage for the file's device."""
    for name in RAN:
        art = compiled[name].artifact
        assert art.triton_version.startswith(TRITON.split("+")[0][:3])
        assert art.spec.arch == "sm_90a"
        for stage in ("python", "ttir", "ttgir", "llir", "ptx"):
            assert art.stages.get(stage), (name, stage)
        assert f".target sm_90a" in art.stages["ptx"]
        assert f"tt.func public @{name}" in art.stages["ttgir"]
        # Inductor's own compile options reach the compile
        assert art.metadata.get("debug") is True and art.metadata.get("sanitize_overflow") is False
        assert compiled[name].artifact.warnings[0].startswith("Compiled Inductor's ")
        # the arguments as Inductor's triton_meta specializes them
        spec = {a.name: a for a in art.specialization}
        assert list(spec) == list(compiled[name].plan["signature"])
        assert all(("tt.divisibility=16",) == a.attrs for a in spec.values() if a.type.startswith("*"))


# --------------------------------------------------------------------------
# Prediction: with a grid, and "unknown" with the flag that fills it without one
# --------------------------------------------------------------------------


@pytest.mark.needs("torch")
def test_prediction_at_the_kernels_own_grid_and_unknown_without_one(compiled):
    from tritonscope.analyses.analysis import analyze
    from tritonscope.cost import predict

    analysis = analyze(compiled["triton_tem_fused_addmm_t_0"].artifact)
    p = predict(analysis).to_dict()
    assert p["predicted_ms"] and p["predicted_ms"] > 0, p
    # the same kernel without the grid the output code gave: no figure, and the reason names --grid
    from dataclasses import replace

    analysis.artifact.spec = replace(analysis.artifact.spec, grid=None)
    p = predict(analysis).to_dict()
    assert p["predicted_ms"] is None and "--grid" in p["why"], p
    p = predict(analysis, grid=(32, 1, 1)).to_dict()   # what --grid 32 gives
    assert p["predicted_ms"] and p["predicted_ms"] > 0, p


@pytest.mark.needs("torch")
def test_explain_predict_on_an_inductor_kernel(folders):
    """explain on the folder's kernel: compiled as Inductor would, then predicted at Inductor's grid."""
    result = invoke("explain", folders / "cache", "--kernel", "triton_per_fused__softmax__to_copy_amax_mul_sub_3",
                    "--predict", env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "XBLOCK=16 w4 s1 sm_90a" in said
    assert re.search(r"predicted: [0-9.]+ ms on ", said), said


@pytest.mark.needs("torch")
def test_open_kernel_for_another_arch(folders):
    result = invoke("open", folders / "cache", "--kernel", "triton_poi_fused_add_mul_6", "--arch", "sm_80",
                    "--stage", "none", env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "sm_80" in said and "XBLOCK=1024" in said
    assert "Inductor generated this kernel for sm_90a" in said
    assert "chosen by .best_config" in said


@pytest.mark.needs("torch")
def test_explain_predict_fills_an_unknown_grid_with_the_flag_its_hint_names(folders, source):
    """A candidate of the mm template that the graph does not launch: its grid is passed at launch, so it is
    unknown; the hint names --grid, and --grid gives the prediction."""
    candidate = next(e for e in source.entries if e.name == "triton_mm")
    result = invoke("explain", folders / "cache", "--kernel", candidate.key[:12], "--predict", "--grid", "16",
                    env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert re.search(r"predicted: [0-9.]+ ms on ", " ".join(result.output.split())), result.output


def test_constexprs_are_inductors_to_choose(folders):
    result = invoke("open", folders / "cache", "--kernel", "triton_poi_fused_add_mul_6", "-c", "XBLOCK=64")
    assert result.exit_code == 2, result.output
    assert "Inductor's heuristics" in " ".join(result.output.split())
    result = invoke("open", folders / "cache", "--kernel", "triton_nothere")
    assert result.exit_code == 3, result.output


def test_debug_folder_finds_the_best_configs_of_the_cache_its_kernel_paths_name(folders, tmp_path):
    """On the machine that ran the program, output_code.py's `# kernel path:` lines name the Inductor cache's
    files, and the .best_config files beside them give the tuned kernels' chosen configs."""
    (code,) = (folders / "debug").glob("**/output_code.py")
    text = re.sub(r"(# kernel path: )\S+/cache/", lambda m: m.group(1) + str(folders / "cache") + "/",
                  code.read_text())
    (tmp_path / "output_code.py").write_text(text)
    result = invoke("open", tmp_path, "--json")
    assert result.exit_code == 0, result.output
    rows = {r["name"]: r for r in json.loads(result.output)["kernels"]}
    assert rows["triton_poi_fused_add_mul_6"]["chosen"] == "XBLOCK=1024 w4 s1"
    assert rows["triton_per_fused__softmax__to_copy_amax_mul_sub_3"]["chosen"] == "XBLOCK=16 w4 s1"
    assert rows["triton_per_fused__softmax__to_copy_amax_mul_sub_3"]["chosen_from"] == "best_config"


def test_one_generated_module_opens_by_itself(folders):
    from tritonscope.inputs.sources import open_source

    (graph,) = [p for p in (folders / "cache").glob("??/*.py") if "async_compile.triton(" in p.read_text()]
    result = invoke("open", graph, "--json")
    assert result.exit_code == 0, result.output
    rows = {r["name"]: r for r in json.loads(result.output)["kernels"]}
    assert set(rows) == set(RAN)
    # its kernel paths name the cache where it was made; the same cache, moved here, gives the .best_config
    assert rows["triton_per_fused_gelu_native_layer_norm_1"]["chosen"] == "XBLOCK=2 w4 s1"
    kernel = open_source(rows["triton_poi_fused_add_mul_6"]["best_config"].rsplit("/", 1)[0] + "/"
                         + next(p.name for p in (folders / "cache" / "dm").glob("*.py")))
    assert kernel.single and kernel.kind == "inductor"
    assert kernel.entries[0].name == "triton_poi_fused_add_mul_6" and kernel.entries[0].best_config


ENVS = {v: Path(__file__).resolve().parents[1] / v / "bin" / "python" for v in (".venv36", ".venv")}


@pytest.mark.skipif(not all(p.is_file() for p in ENVS.values()),
                    reason="needs the repo's .venv36 (Triton 3.6) and .venv (Triton 3.9), each with torch")
def test_versions_compiles_an_inductor_kernel_under_both_tritons(folders, tmp_path):
    one = tmp_path / "one"
    shutil.copytree(folders / "cache" / "dm", one / "dm")   # the pointwise kernel's file and its .best_config
    result = invoke("versions", one, "--a", ENVS[".venv36"], "--b", ENVS[".venv"], "--arch", "sm_90a", "--json")
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)["rows"]
    assert row["kernel"].startswith("triton_poi_fused_add_mul_6")
    assert (row["a"]["triton"], row["b"]["triton"]) == ("3.6.0", "3.9.0")
    for side in ("a", "b"):   # compiled with the .best_config's config and predicted at Inductor's grid
        assert row[side]["num_stages"] == 1 and row[side]["registers"]
        assert row[side]["predicted_ms"], row[side]


def test_the_listing_fits_the_width_it_is_drawn_at():
    """At 80 columns rich folded every cell of seven columns into a tall stack; the listing now keeps the hash,
    the name and the chosen config whole-worded, leaves out what does not fit, and says which."""
    narrow = invoke("open", DATA / "cache", "--width", "80")
    assert narrow.exit_code == 0, narrow.output
    assert "left out at this width: kind, device, launched" in narrow.output
    assert max(len(line) for line in narrow.output.splitlines()) <= 80
    assert "XBLOCK=16 w4 s1" in narrow.output and "cjjdnydeeuwe" in narrow.output  # no number or hash split
    wide = invoke("open", DATA / "cache", "--width", "160")
    assert wide.exit_code == 0 and "left out" not in wide.output
    assert "persistent_reduction" in wide.output and "cuda:0 cc 90" in wide.output
