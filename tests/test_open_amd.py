"""`tritonscope open` on AMD compiles: Triton caches, TRITON_KERNEL_DUMP folders, .amdgcn and .hsaco files (issue 11).

One real gfx942 compile of the seed-001 matmul (BLOCK 32) fills a private
Triton cache and a private kernel dump (the `amd` fixture, once per session);
the checked-in folder tests/data/open_amd/gfx1100_vector_add/ is a real
`compile --emit` for gfx1100 (wave32), opened without compiling.  CPU only.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import sys
from pathlib import Path

import pytest
from conftest import DATA
from typer.testing import CliRunner

from tritonscope import triton_api
from tritonscope.inputs import codeobject
from tritonscope.cli import app
from tritonscope.core.errors import ExitCode

pytestmark = pytest.mark.skipif(not triton_api.has_backend("amd"),
                                reason="this Triton wheel has no HIP backend (triton/backends/amd)")

runner = CliRunner()
CHECKED_IN = DATA / "open_amd" / "gfx1100_vector_add"
DOT_LINE = 19   # samples/matmul.py: acc += tl.dot(a, b)
AMD_FILES = {"ttir", "ttgir", "llir", "amdgcn", "hsaco"}


def invoke(*args):
    result = runner.invoke(app, [str(a) for a in args])
    assert "Traceback" not in result.output, result.output
    return result


def ok(*args) -> str:
    result = invoke(*args)
    assert result.exit_code == 0, (args, result.output[-1500:])
    return result.output


def as_json(*args) -> dict:
    return json.loads(ok(*args, "--json"))


@pytest.fixture(scope="session")
def amd(tmp_path_factory):
    """A private Triton cache and TRITON_KERNEL_DUMP folder, filled by one real gfx942 compile of the matmul."""
    from tritonscope.pipeline.triton_compile import launch_args
    from tritonscope.inputs.kernels import Request
    from tritonscope.pipeline.binding import build_spec
    from tritonscope.core.model import ARCHES

    base = tmp_path_factory.mktemp("open_amd")
    env = {"TRITON_CACHE_DIR": str(base / "cache"), "TRITON_KERNEL_DUMP": "1", "TRITON_DUMP_DIR": str(base / "dump")}
    loaded = build_spec(Request("matmul", block=32, arch="gfx942"), "sm_90a")
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        triton_api.compile_kernel(loaded.jit_fn, launch_args(loaded),
                                  **ARCHES["gfx942"].target_words(), num_warps=loaded.spec.num_warps,
                                  num_stages=loaded.spec.num_stages, fresh=True)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    entry = next((base / "cache").glob("*/matmul_kernel.hsaco")).parent
    return {"cache": base / "cache", "dump": base / "dump", "entry": entry, "base": base}


def llvm_figures(amdgcn_text: str) -> dict[str, int]:
    """What LLVM prints after the kernel (`; TotalNumVgprs: 58`): its own accounting, to check the readers."""
    return {k: int(v) for k, v in re.findall(r"^; (TotalNumVgprs|NumVgprs|TotalNumSgprs|ScratchSize): (\d+)$",
                                             amdgcn_text, re.M)}


# --------------------------------------------------------------------------
# A Triton cache and a kernel dump made by an AMD compile
# --------------------------------------------------------------------------


def test_cache_listing_shows_vgprs_sgprs_lds_and_spills(amd):
    assert {p.suffix[1:] for p in amd["entry"].iterdir()} >= AMD_FILES | {"json", "source"}
    (row,) = as_json("open", amd["cache"])["kernels"]
    figures = llvm_figures((amd["entry"] / "matmul_kernel.amdgcn").read_text())
    meta = json.loads((amd["entry"] / "matmul_kernel.json").read_text())
    assert (row["arch"], row["backend"], row["name"]) == ("gfx942", "hip", "matmul_kernel")
    assert row["registers"] == figures["TotalNumVgprs"] and row["sgprs"] == figures["TotalNumSgprs"]
    assert row["shared"] == meta["shared"] > 0 and row["spills"] == figures["ScratchSize"] == 0
    assert row["missing"] == [] and row["source"].endswith("samples/matmul.py:8")
    table = ok("open", amd["cache"], "--width", "140")
    assert f"{row['registers']}v/{row['sgprs']}s" in table and f"{row['shared']:,}" in table
    assert "AMD rows: regs are VGPRs per lane (v) and SGPRs per wave (s)" in table
    assert [r["name"] for r in as_json("open", amd["cache"], "--where", "sgprs>1", "--sort", "-sgprs")["kernels"]] \
        == ["matmul_kernel"]


def test_cache_kernel_opens_in_every_view(amd, tmp_path):
    art = as_json("open", amd["cache"], "-k", "matmul_kernel")["artifact"]
    figures = llvm_figures(art["stages"]["amdgcn"])
    assert list(art["stages"]) == ["python", "ttir", "ttgir", "llir", "amdgcn"]
    assert art["spec"]["arch"] == "gfx942" and art["spec"]["num_stages"] == 3
    assert art["resources"]["registers"] == figures["TotalNumVgprs"]
    assert art["resources"]["sgprs"] == figures["TotalNumSgprs"] and art["resources"]["stack"] == 0
    assert ("a_ptr", ["tt.divisibility=16", "tt.pointer_range=32"]) in \
        [(s["name"], s["attrs"]) for s in art["specialization"]]
    assert not any("has no" in w for w in art["warnings"])
    cache = amd["cache"]
    summary = ok("open", cache, "-k", "matmul_kernel", "--stage", "none", "--width", "120")
    assert "gfx942 (MI300X" in summary and "VGPRs per lane" in summary and "SGPRs per wave" in summary
    assert "v_mfma_f32_32x32x8_f16" in ok("open", cache, "-k", "matmul_kernel", "--stage", "amdgcn",
                                          "--max-lines", "0", "--width", "120")
    assert "Matrix cores" in ok("open", cache, "-k", "matmul_kernel", "--view", "walkthrough", "--width", "200")
    assert "AMDGCN" in ok("open", cache, "-k", "matmul_kernel", "--view", "side-by-side", "--width", "160")
    line = ok("open", cache, "-k", "matmul_kernel", "--line", DOT_LINE, "--stage", "ttgir,amdgcn", "--width", "160")
    assert "tt.dot" in line and "v_mfma_f32_32x32x8_f16" in line
    assert "#ttg.amd_mfma<" in ok("open", cache, "-k", "matmul_kernel", "--layouts", "--stage", "none",
                                  "--width", "160")
    for ext in ("html", "md", "json"):
        report = tmp_path / f"report.{ext}"
        ok("open", cache, "-k", "matmul_kernel", "--stage", "none", "--save", report)
        assert report.stat().st_size > 1000
    shown = ok("show", tmp_path / "report.json", "--stage", "none", "--width", "120")
    assert "VGPRs per lane" in shown


def test_dump_folder_opens_without_metadata(amd):
    (row,) = as_json("open", amd["dump"])["kernels"]
    assert row["kind"] == "dump" and row["arch"] == "gfx942" and row["backend"] == "hip"  # from the TTGIR
    assert row["registers"] > 0 and row["sgprs"] > 0 and row["shared"] is None  # LDS is only in the metadata
    art = as_json("open", amd["dump"], "-k", "matmul_kernel")["artifact"]
    assert {"python", "ttgir", "amdgcn"} <= set(art["stages"]) and art["spec"]["num_warps"] == 4
    assert any("does not record num_stages" in w for w in art["warnings"])
    assert art["resources"]["registers"] == row["registers"]


def test_emit_writes_the_hsaco_and_opens_again(amd, tmp_path):
    out = tmp_path / "from-open"
    ok("open", amd["cache"], "-k", "matmul_kernel", "--emit", out, "--stage", "none")
    assert {p.suffix[1:] for p in out.iterdir()} == AMD_FILES | {"py", "json"}
    for ext in AMD_FILES:  # never filtered: byte for byte what Triton wrote
        assert (out / f"matmul_kernel.{ext}").read_bytes() == (amd["entry"] / f"matmul_kernel.{ext}").read_bytes()
    again = as_json("open", out)["artifact"]
    first = as_json("open", amd["cache"], "-k", "matmul_kernel")["artifact"]
    assert again["stages"] == first["stages"] and again["resources"] == first["resources"]

    compiled = tmp_path / "from-compile"
    ok("compile", "matmul", "--block", "32", "--arch", "gfx942", "--emit", compiled, "--stage", "none")
    assert {p.suffix[1:] for p in compiled.iterdir()} == AMD_FILES | {"py", "json"}
    hsaco = codeobject.kernel((compiled / "matmul_kernel.hsaco").read_bytes())
    assert codeobject.gfx_of(hsaco.target) == "gfx942"
    art = as_json("open", compiled)["artifact"]
    assert art["resources"]["registers"] == hsaco.vgprs and art["spec"]["constexprs"] == {"BLOCK": 32}


# --------------------------------------------------------------------------
# Recompiling what was found: for another AMD target, and across vendors
# --------------------------------------------------------------------------


def _same_code(key: str, a: str, b: str) -> bool:
    from tritonscope.analyses.diff import normalize_stage

    return [t for _, t in normalize_stage(key, a)] == [t for _, t in normalize_stage(key, b)]


def test_recompile_gfx942_entry_for_gfx950_equals_a_direct_compile(amd, compiled):
    art = as_json("open", amd["cache"], "-k", "matmul_kernel", "--recompile", "--arch", "gfx950")["artifact"]
    direct = compiled("matmul", block=32, arch="gfx950")
    assert art["spec"]["arch"] == "gfx950" and list(art["stages"]) == ["python", "ttir", "ttgir", "llir", "amdgcn"]
    for key in ("llir", "amdgcn"):
        assert _same_code(key, art["stages"][key], direct.stages[key]), key
    # gfx942's front end wrote tl.dot's default input precision (tf32, which it allows) into the TTIR the
    # recompile starts from; gfx950's leaves it out.  For these fp16 operands nothing else differs.
    assert "inputPrecision = tf32" in art["stages"]["ttgir"] and "inputPrecision" not in direct.stages["ttgir"]
    assert _same_code("ttgir", art["stages"]["ttgir"].replace(", inputPrecision = tf32", ""), direct.stages["ttgir"])
    assert art["resources"]["registers"] == direct.resources.registers
    assert "v_mfma_f32_32x32x16_f16" in art["stages"]["amdgcn"]
    diff = ok("open", amd["cache"], "-k", "matmul_kernel", "--recompile", "--arch", "gfx950", "--diff",
              "--stage", "none", "--width", "160")
    assert "mfma 32x32x16" in diff and "arch: gfx942 -> gfx950" in diff


def test_recompile_across_vendors_says_what_the_specialization_lacks(amd, compiled, tmp_path):
    art = as_json("open", amd["cache"], "-k", "matmul_kernel", "--recompile", "--arch", "sm_90a")["artifact"]
    assert art["spec"]["arch"] == "sm_90a" and {"ptx", "sass"} <= set(art["stages"]) and "amdgcn" not in art["stages"]
    assert any("AMD launch's specialization" in w for w in art["warnings"])
    # the CUDA backend ignores tt.pointer_range: what comes out is what a CUDA launch compiles
    direct = compiled("matmul", block=32, arch="sm_90a")
    for key in ("llir", "ptx"):
        assert _same_code(key, art["stages"][key], direct.stages[key]), key
    assert art["resources"]["registers"] == direct.resources.registers
    out = tmp_path / "gfx1100"
    ok("open", amd["cache"], "-k", "matmul_kernel", "--recompile", "--arch", "gfx1100", "--emit", out,
       "--stage", "none")
    assert codeobject.gfx_of(codeobject.kernel((out / "matmul_kernel.hsaco").read_bytes()).target) == "gfx1100"


# --------------------------------------------------------------------------
# Single files: .amdgcn, .hsaco (and the other stages of an AMD compile)
# --------------------------------------------------------------------------


def test_single_amdgcn_file(amd, tmp_path):
    path = tmp_path / "k.amdgcn"  # alone: no siblings
    shutil.copy(amd["entry"] / "matmul_kernel.amdgcn", path)
    art = as_json("open", path)["artifact"]
    hsaco = codeobject.kernel((amd["entry"] / "matmul_kernel.hsaco").read_bytes())
    assert list(art["stages"]) == ["python", "amdgcn"] and art["spec"]["kernel"] == "matmul_kernel"
    assert (art["spec"]["arch"], art["spec"]["num_warps"]) == ("gfx942", 4)
    # registers read from the assembly's metadata block: what the code object itself holds
    assert (art["resources"]["registers"], art["resources"]["sgprs"], art["resources"]["stack"]) == \
        (hsaco.vgprs, hsaco.sgprs, hsaco.scratch)
    assert any("has no ttir, ttgir, llir, hsaco" in w and "AMDGCN's metadata block" in w for w in art["warnings"])
    assert any("LDS Triton allocates at launch is recorded only in its metadata" in w for w in art["warnings"])
    line = ok("open", path, "--line", DOT_LINE, "--width", "140")  # the .file/.loc lines find the Python source
    assert "v_mfma_f32_32x32x8_f16" in line


def test_single_hsaco_file_shows_its_summary(amd, tmp_path):
    path = tmp_path / "k.hsaco"
    shutil.copy(amd["entry"] / "matmul_kernel.hsaco", path)
    art = as_json("open", path)["artifact"]
    hsaco = codeobject.kernel(path.read_bytes())
    assert art["stages"] == {} and art["spec"]["arch"] == "gfx942" and art["spec"]["num_warps"] == 4
    assert art["resources"]["registers"] == hsaco.vgprs and art["resources"]["sgprs"] == hsaco.sgprs
    assert any("does not disassemble" in w for w in art["warnings"])
    summary = ok("open", path, "--width", "120")
    assert "VGPRs per lane" in summary and "holds only a binary" in summary
    for view in (["--view", "walkthrough"], ["--view", "mix"], ["--save", tmp_path / "r.json"]):
        ok("open", path, *view)
    assert ok("show", tmp_path / "r.json", "--stage", "none")
    for refused in (["--line", DOT_LINE], ["--view", "side-by-side"], ["--stage", "amdgcn"]):
        result = invoke("open", path, *refused)
        assert result.exit_code == ExitCode.USAGE, (refused, result.output)


@pytest.mark.parametrize("ext", ["ttir", "ttgir", "llir"])
def test_single_ir_files_of_an_amd_compile_are_amd(amd, tmp_path, ext):
    path = tmp_path / f"k.{ext}"
    shutil.copy(amd["entry"] / f"matmul_kernel.{ext}", path)
    art = as_json("open", path)["artifact"]
    assert ext in art["stages"] and art["spec"]["kernel"] == "matmul_kernel"
    from conftest import triton_series

    if ext == "llir" and triton_series() == "3.6":
        # Triton 3.6 writes only `target triple = "amdgcn-amd-amdhsa"`: the gfx is not in the file, so none is named
        assert 'target triple = "amdgcn-amd-amdhsa"' in path.read_text() and "target-cpu" not in path.read_text()
        assert art["spec"]["arch"] == "?"
    elif ext != "ttir":  # TTIR says nothing of its target; TTGIR's module and LLVM's triple (3.9) do
        assert art["spec"]["arch"] == "gfx942"
        assert any("amdgcn, hsaco" in w for w in art["warnings"])


# --------------------------------------------------------------------------
# Damaged and foreign files: one clear message, exit 7, never a traceback
# --------------------------------------------------------------------------


def test_damaged_and_foreign_amd_files(amd, tmp_path):
    def refused(name: str, data: bytes, says: str):
        path = tmp_path / name
        path.write_bytes(data)
        result = invoke("open", path)
        text = " ".join(result.output.split())  # the message as one line, however the terminal wrapped it
        assert result.exit_code == ExitCode.BAD_INPUT_FILE, result.output
        assert says in text and "unexpected" not in text and text.count("error:") == 1, result.output
        return text

    hsaco = (amd["entry"] / "matmul_kernel.hsaco").read_bytes()
    refused("truncated.hsaco", hsaco[:len(hsaco) // 3], "damaged")
    refused("empty.hsaco", b"", "not a little-endian 64-bit ELF")
    refused("text.hsaco", b"hello\n" * 20, "not a little-endian 64-bit ELF")
    cubin = bytearray(hsaco)
    cubin[0x12:0x14] = (190).to_bytes(2, "little")  # EM_CUDA: what a cubin renamed .hsaco says it is
    assert "Open it as a .cubin" in refused("cubin.hsaco", bytes(cubin), "NVIDIA cubin")
    host = Path(sys.executable).resolve().read_bytes()
    if host[:4] == b"\x7fELF":
        refused("python.hsaco", host, "another machine")
    text = (amd["entry"] / "matmul_kernel.llir").read_bytes()
    refused("llir.amdgcn", text, "does not look like AMDGCN")
    refused("binary.amdgcn", hsaco, "not text")
    # a metadata block whose counts are not numbers: refused, never carried into arithmetic
    amdgcn = (amd["entry"] / "matmul_kernel.amdgcn").read_text()
    assert ".wavefront_size: 64" in amdgcn
    path = tmp_path / "words.amdgcn"
    path.write_text(amdgcn.replace(".wavefront_size: 64", ".wavefront_size: sixtyfour"))
    result = invoke("open", path, "--stage", "none")
    text = " ".join(result.output.split())
    assert result.exit_code == 0 and "unexpected" not in text, result.output
    assert "'sixtyfour', not a count" in text and "registers unknown" in text and "waves/SIMD" not in text


def test_code_object_reader_fails_only_with_its_own_error(amd):
    """Random damage anywhere in a real hsaco: CodeObjectError or a reading, never another exception."""
    hsaco = (amd["entry"] / "matmul_kernel.hsaco").read_bytes()
    rng = random.Random(11)
    for _ in range(300):
        data = bytearray(hsaco)
        for _ in range(rng.choice((1, 4, 32))):
            data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            codeobject.read(bytes(data))
        except codeobject.CodeObjectError:
            pass


def test_a_damaged_hsaco_in_a_cache_entry_is_a_warning(amd, tmp_path):
    """The other stages of the entry still show; the summary says the registers are unknown, and why."""
    cache = tmp_path / "cache"
    shutil.copytree(amd["entry"], cache / amd["entry"].name)
    (cache / amd["entry"].name / "matmul_kernel.hsaco").write_bytes(b"\x7fELF not really")
    (row,) = as_json("open", cache)["kernels"]
    assert row["registers"] is None
    art = as_json("open", cache, "-k", "matmul_kernel")["artifact"]
    assert "amdgcn" in art["stages"] and art["resources"]["registers"] is None
    assert any("Could not read the code object" in w for w in art["warnings"])


# --------------------------------------------------------------------------
# The checked-in gfx1100 compile (tests/data/open_amd/): opened with no compile
# --------------------------------------------------------------------------


def test_checked_in_gfx1100_folder(regen, tmp_path):
    if regen:  # a real `compile --emit`, the only way these files are written
        shutil.rmtree(CHECKED_IN, ignore_errors=True)
        ok("compile", "vector_add", "--arch", "gfx1100", "--emit", CHECKED_IN, "--stage", "none", "--no-cache")
    if not CHECKED_IN.is_dir():
        pytest.fail(f"{CHECKED_IN} is missing; run `pytest tests/test_open_amd.py --regen -k checked_in`")
    art = as_json("open", CHECKED_IN)["artifact"]
    hsaco = codeobject.kernel((CHECKED_IN / "add_kernel.hsaco").read_bytes())
    text = (CHECKED_IN / "add_kernel.amdgcn").read_text()
    (from_text,) = codeobject.from_assembly(text)
    assert from_text == hsaco  # two readers, one answer: the note and the assembly's YAML
    assert art["spec"]["arch"] == "gfx1100" and hsaco.wavefront_size == 32
    assert art["resources"]["registers"] == hsaco.vgprs == llvm_figures(text)["NumVgprs"]
    assert art["spec"]["constexprs"] == {"BLOCK": 1024}
    summary = ok("open", CHECKED_IN, "--stage", "none", "--width", "120")
    assert "gfx1100 (RX 7900 XTX" in summary and "waves/SIMD" in summary
    one = tmp_path / "k.hsaco"
    shutil.copy(CHECKED_IN / "add_kernel.hsaco", one)
    alone = as_json("open", one)["artifact"]
    assert (alone["spec"]["arch"], alone["spec"]["num_warps"]) == ("gfx1100", 4)  # 128 work-items of wave32
    assert ok("open", CHECKED_IN, "--view", "walkthrough", "--width", "200")
