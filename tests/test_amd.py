"""Issue 13, AMD: gfx942 / gfx950 / gfx1100 compiles through Triton's HIP backend, GPU-less.

The seed-001 matmul at BLOCK 32 is compiled once per arch for the whole
session (the `compiled` fixture) and read by every test here: the summary
(resources from the hsaco code object), the `tl.dot` line from `tt.dot` to
`v_mfma`/`v_wmma`, the AMDGCN dialect, the LDS check (exit 6), a gfx942 sweep
that marks a config over the LDS limit, and a cross-vendor diff.  Goldens live
under tests/golden/amd/<series>/ (Triton 3.6 and 3.9 write different code).
"""

from __future__ import annotations

import json
import re
import struct

import pytest
from conftest import GOLDEN, check_golden, triton_series
from test_views import render
from typer.testing import CliRunner

from tritonscope import triton_api
from tritonscope.analyses.analysis import analyze
from tritonscope.cli import app
from tritonscope.language.dialects import amdgcn, class_counts, dialect
from tritonscope.core.model import ARCHES, Artifact, KernelSpec, Resources
from tritonscope.outputs.render import views
from tritonscope.outputs.render.summary_text import summary_rows
from tritonscope.analyses.summary import summarize

pytestmark = pytest.mark.skipif(not triton_api.has_backend("amd"),
                                reason="this Triton wheel has no HIP backend (triton/backends/amd)")

SEED = ("gfx942", "gfx950", "gfx1100")
# What the tl.dot line becomes, per arch (TTGIR encoding, AMDGCN instruction).
DOT = {"gfx942": ("amd_mfma", "v_mfma_f32_32x32x8_f16"), "gfx950": ("amd_mfma", "v_mfma_f32_32x32x16_f16"),
       "gfx1100": ("amd_wmma", "v_wmma_f32_16x16x16_f16")}
DOT_LINE = 19   # samples/matmul.py: acc += tl.dot(a, b)
runner = CliRunner()


def golden(name: str):
    return GOLDEN / "amd" / triton_series() / name


@pytest.fixture(scope="module")
def seed(compiled):
    """arch -> Analysis of the seed-001 matmul, BLOCK 32 (compiled once per session)."""
    return {arch: analyze(compiled("matmul", block=32, arch=arch)) for arch in SEED}


def invoke(*args: str):
    return runner.invoke(app, [*args, "--no-color"] if args[0] in ("compile", "diff", "sweep") else list(args))


# --------------------------------------------------------------------------
# The compile: the HIP backend's own pipeline and specialization
# --------------------------------------------------------------------------


@pytest.mark.parametrize("arch", SEED)
def test_stages_come_from_the_hip_backend(seed, arch):
    a = seed[arch]
    assert tuple(a.artifact.stages) == ("python", "ttir", "ttgir", "llir", "amdgcn")
    assert f'ttg.target = "hip:{arch}"' in a.artifact.stages["ttgir"]
    assert amdgcn.target_of(a.artifact.stages["amdgcn"]) == arch
    encoding, instr = DOT[arch]
    assert f"#ttg.{encoding}<" in a.artifact.stages["ttgir"]
    assert re.search(rf"^\s+{instr}\b", a.artifact.stages["amdgcn"], re.M)


def test_specialization_is_the_backends(seed):
    """Tensors under 2 GiB get tt.pointer_range = 32 from HIPBackend itself (its "S" code), ints as on CUDA."""
    spec = {s.name: s.attrs for s in seed["gfx942"].artifact.specialization}
    assert spec["a_ptr"] == ("tt.divisibility=16", "tt.pointer_range=32")
    assert spec["K"] == ("tt.divisibility=16",)
    assert "tt.pointer_range = 32" in seed["gfx942"].artifact.stages["ttir"]


def test_bare_pointers_have_no_range(compiled):
    """A bare pointer says nothing about its size, so the backend adds no pointer range (as for a real launch)."""
    from tritonscope.inputs.kernels import load_for_spec

    jit_fn = load_for_spec(seed_spec("gfx942"))
    args = {"a_ptr": triton_api.StandInTensor("float16"), "b_ptr": triton_api.StandInTensor("float16", numel=1024),
            "c_ptr": triton_api.StandInTensor("float32", numel=1024), "M": 32, "N": 32, "K": 32, "BLOCK": 32}
    got = {name: attrs for name, _, attrs in
           triton_api.specialization_of(jit_fn, args, target=("hip", "gfx942", 64))}
    assert got["a_ptr"] == ["tt.divisibility=16"]
    assert got["b_ptr"] == ["tt.divisibility=16", "tt.pointer_range=32"]
    # and CUDA, through the same code, is as before
    cuda = {n: a for n, _, a in triton_api.specialization_of(jit_fn, args, capability=90)}
    assert cuda["b_ptr"] == ["tt.divisibility=16"]


def seed_spec(arch: str) -> KernelSpec:
    from tritonscope.inputs.kernels import Request
    from tritonscope.pipeline.binding import build_spec

    return build_spec(Request("matmul", block=32, arch=arch), "sm_90a").spec


# --------------------------------------------------------------------------
# Resources from the code object, and the summary
# --------------------------------------------------------------------------

# ; TotalNumVgprs: 58      ; NumAgprs: 0      ; TotalNumSgprs: 25      ; ScratchSize: 0     ; Occupancy: 8
_KERNEL_INFO = re.compile(r"^; (NumVgprs|NumAgprs|TotalNumVgprs|TotalNumSgprs|ScratchSize|Occupancy): (\d+)$", re.M)


def kernel_info(amdgcn_text: str) -> dict[str, int]:
    """The figures LLVM prints after the kernel (its own accounting, to check the code object reader against)."""
    return {k: int(v) for k, v in _KERNEL_INFO.findall(amdgcn_text)}


@pytest.mark.parametrize("arch", SEED)
def test_code_object_resources_match_llvms_accounting(seed, arch):
    a = seed[arch]
    res, info = a.artifact.resources, kernel_info(a.artifact.stages["amdgcn"])
    assert res.registers == info.get("TotalNumVgprs", info["NumVgprs"])
    assert res.sgprs == info["TotalNumSgprs"]
    assert res.stack == info["ScratchSize"] == 0
    assert (res.agprs or 0) == info.get("NumAgprs", 0)
    assert res.dynamic_shared == a.artifact.metadata["shared"] > 0   # Triton's LDS is dynamic


@pytest.mark.parametrize("arch", SEED)
def test_register_occupancy_equals_llvms(seed, arch):
    """Without the LDS and workgroup limits, the waves per SIMD are LLVM's own '; Occupancy:' figure."""
    a = seed[arch]
    occ = a.summary.occupancy
    assert occ is not None and occ.waves_per_simd is not None
    registers_only = min(v for k, v in occ.limits.items() if k in ("waves", "vgprs", "sgprs"))
    assert registers_only == kernel_info(a.artifact.stages["amdgcn"])["Occupancy"]
    assert occ.waves_per_simd <= registers_only


@pytest.mark.parametrize("arch", SEED)
def test_summary(seed, arch, regen):
    """The summary rows that do not depend on the machine (no hash, Triton version or remarks)."""
    rows = [f"{label:<10} {value}" for label, value in summary_rows(seed[arch])
            if label not in ("hash", "triton", "remarks")]
    text = "\n".join(rows) + "\n"
    check_golden(golden(f"summary_{arch}.txt"), text, regen)
    assert f"target     {arch} ({ARCHES[arch].gpus})" in text
    assert "LDS        " in text and "VGPRs per lane" in text and "waves/SIMD" in text


def test_occupancy_arithmetic():
    """Synthetic figures: VGPR granules, the CDNA SGPR table, LDS and the workgroup limit."""
    def occ(arch, vgprs, lds, warps=4, sgprs=20):
        spec = KernelSpec("k", "k", "/k.py", {}, {}, warps, 2, arch)
        art = Artifact(spec, "3.9.0", "0", {}, 1, {}, Resources(registers=vgprs, sgprs=sgprs, dynamic_shared=lds), [])
        return summarize(art).occupancy

    assert occ("gfx942", 246, 0).limits["vgprs"] == 2           # 248 of 512: 2 waves
    assert occ("gfx942", 128, 0).waves_per_simd == 4
    assert occ("gfx942", 64, 0, sgprs=102).limits["sgprs"] == 7
    assert occ("gfx1100", 256, 0).limits["vgprs"] == 5          # 264 of 1536 (granule 24): 5 waves
    o = occ("gfx942", 32, 32768)                                   # 2 workgroups of 4 waves per CU
    assert (o.waves_per_simd, o.limited_by, o.blocks_per_sm, o.unit) == (2, "lds", 2, "CU")
    assert occ("gfx1100", 32, 0).unit == "WGP"


# --------------------------------------------------------------------------
# The tl.dot line: tt.dot -> MFMA/WMMA encoding in TTGIR -> v_mfma/v_wmma in AMDGCN
# --------------------------------------------------------------------------


@pytest.mark.parametrize("arch", SEED)
def test_dot_line(seed, arch, regen):
    a = seed[arch]
    encoding, instr = DOT[arch]
    chain = views.chain_text(a, DOT_LINE)
    assert chain.startswith("TTIR: tt.dot  →  TTGIR: tt.dot"), chain
    assert "AMDGCN: " in chain and instr in chain
    note = next(n for n in a.notes if n.stage == "ttgir" and n.facts.get("op") == "tt.dot")
    assert note.facts["target_encoding"] == encoding
    mma = [n for n in a.notes if n.stage == "amdgcn" and n.facts.get("cls") == "mma"]
    assert mma and all(n.facts["op"] == instr for n in mma)
    text = render(views.line_view(a, DOT_LINE, ("ttir", "ttgir", "amdgcn")), width=120)
    check_golden(golden(f"line{DOT_LINE}_{arch}.txt"), text, regen)


def test_walkthrough_tells_the_amd_story(seed):
    text = render(views.walkthrough(seed["gfx942"]), width=400)
    for part in ("AMDGCN", "Matrix cores", "LDS → registers", "buffer load", "Memory path", "--> matrix cores",
                 "v_mfma_f32_32x32x8_f16", "amd-instinct-mi300-cdna3-instruction-set-architecture.pdf"):
        assert part in text, part
    assert "PTX" not in text.split("AMDGCN", 1)[1]


def test_cli_line_and_stages(seed):
    result = invoke("compile", "matmul", "--block", "32", "--arch", "gfx1100", "--line", str(DOT_LINE),
                    "--stage", "ttgir,amdgcn", "--width", "140")
    assert result.exit_code == 0, result.output
    assert "AMDGCN ·" in result.output and "v_wmma_f32_16x16x16_f16" in result.output
    result = invoke("compile", "matmul", "--block", "32", "--arch", "gfx1100", "--stage", "amdgcn",
                    "--width", "140")
    assert result.exit_code == 0 and "wmma 16x16x16 f16" in result.output


# --------------------------------------------------------------------------
# LDS: checked before anyone launches
# --------------------------------------------------------------------------


def test_over_lds_exits_6(compiled):
    big = analyze(compiled("matmul", block=128, arch="gfx942"))      # 2 x (128x128 + 128x128) f16 = 128 KiB
    assert big.summary.shared.dynamic == 131072 > ARCHES["gfx942"].max_shared_per_block
    assert big.summary.fit.problems == (
        "needs 131072 bytes of LDS per workgroup; gfx942 (MI300X, MI300A, MI325X) has 65536",)
    result = invoke("compile", "matmul", "--block", "128", "--arch", "gfx942", "--stage", "none")
    assert result.exit_code == 6, result.output
    assert "131072 bytes of LDS" in result.output
    # gfx950's 160 KiB holds it
    assert ARCHES["gfx950"].max_shared_per_block == 163840


def test_gfx942_sweep_marks_configs_over_lds():
    result = invoke("sweep", "matmul", "-c", "BLOCK=64,128", "--num-stages", "3", "--arch", "gfx942", "--json")
    assert result.exit_code == 0, result.output
    rows = {r["constexprs"]["BLOCK"]: r for r in json.loads(result.output[result.output.index("{"):])["rows"]}
    assert rows[64]["fits"] is True and rows[64]["shared"] == 32768
    assert rows[128]["fits"] is False and rows[128]["shared"] == 131072 and rows[128]["shared_limit"] == 65536
    assert any("131072 bytes of LDS" in p for p in rows[128]["problems"])
    assert rows[64]["waves_per_simd"] == 2 and rows[64]["limited_by"] == "lds"
    assert rows[64]["mix"]["mma"] > 0 and "ldmatrix" not in rows[64]["mix"]
    table = invoke("sweep", "matmul", "-c", "BLOCK=64,128", "--num-stages", "3", "--arch", "gfx942",
                   "--width", "160")
    assert "NO: shared 131072 B > 65536 B" in table.output, table.output


# --------------------------------------------------------------------------
# Across vendors
# --------------------------------------------------------------------------


def test_cross_vendor_diff(seed, compiled):
    from tritonscope.analyses.diff import diff_analyses
    from tritonscope.language.dialects import every_stage_key

    nv = analyze(compiled("matmul", block=32, arch="sm_90a"))
    d = diff_analyses(nv, seed["gfx942"], stages=every_stage_key())
    story = "\n".join(d.story)
    assert "A compiles for NVIDIA (PTX, SASS), B for AMD (AMDGCN)" in story
    assert "B uses mfma 32x32x8 instead of mma.sync m16n8k16" in story
    assert "MMA instruction tile (MxNxK): A 16x8x16 (mma.sync), B 32x32x8 (mfma)" in story
    assert "the accumulator encoding changes from nvidia_mma v2 (mma.sync) to amd_mfma v3 32x32x8 (MFMA)" in story
    rows = {r.name: r for r in d.rows}
    assert rows["MMA instruction"].b == "mfma 32x32x8 f32.f16"
    assert rows["registers per thread (AMD: VGPRs per lane)"].b == str(seed["gfx942"].summary.registers)
    assert rows["dynamic shared memory / LDS (bytes)"].b == f"{seed['gfx942'].summary.shared.dynamic:,}"
    assert rows["SGPRs per wave (AMD)"].a == "n/a"
    assert rows["mma (PTX / AMDGCN)"].a == "4" and int(rows["mma (PTX / AMDGCN)"].b) > 0
    stages = {s.key: s for s in d.stages}
    assert stages["ptx"].missing == "B" and stages["amdgcn"].missing == "A" and stages["python"].identical


def test_cli_cross_vendor_diff():
    result = invoke("diff", "matmul", "--a", "arch=sm_90a", "--b", "arch=gfx942", "--block", "32", "--stage", "none",
                    "--width", "160")
    assert result.exit_code == 0, result.output
    for part in ("B uses mfma 32x32x8 instead of mma.sync m16n8k16", "AMDGCN", "only in B", "waves/SIMD",
                 "dynamic shared memory / LDS (bytes)"):
        assert part in result.output, part


# --------------------------------------------------------------------------
# The AMDGCN dialect on lines of every family, and the code-object reader
# --------------------------------------------------------------------------

LINES = {
    "\tv_mfma_f32_32x32x8f16 a[0:15], v[2:3], v[4:5], a[0:15]": ("mma", "mfma 32x32x8 f16"),
    "\tv_mfma_f32_16x16x32_bf16 v[0:3], v[4:7], v[8:11], v[0:3]": ("mma", "mfma 16x16x32 bf16"),
    "\tv_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]": ("mma", "wmma 16x16x16 f16"),
    "\tbuffer_load_dwordx4 v[0:3], v1, s[4:7], 0 offen": ("global load", "global load buffer_load_dwordx4 (128-bit)"),
    "\tglobal_load_b128 v[0:3], v[4:5], off": ("global load", "global load global_load_b128 (128-bit)"),
    "\tbuffer_load_dword v6, s[8:11], 0 offen lds": ("async copy", "async copy buffer_load_dword (32-bit)"),
    "\tglobal_store_dwordx2 v[0:1], v[2:3], off": ("global store", "global store global_store_dwordx2 (64-bit)"),
    "\tds_read_b64_tr_b16 v[46:47], v34 offset:256": ("shared load", "shared load ds_read_b64_tr_b16 (64-bit)"),
    "\tds_read2st64_b64 v[0:3], v8 offset1:4": ("shared load", "shared load ds_read2st64_b64 (128-bit)"),
    "\tds_load_u16_d16_hi v1, v2": ("shared load", "shared load ds_load_u16_d16_hi (16-bit)"),
    "\tds_write_b128 v0, v[4:7]": ("shared store", "shared store ds_write_b128 (128-bit)"),
    "\ts_waitcnt vmcnt(1) lgkmcnt(0)": ("async wait", "async wait s_waitcnt"),
    "\ts_wait_loadcnt_dscnt 0x102": ("async wait", "async wait s_wait_loadcnt_dscnt"),
    "\ts_barrier": ("barrier", "barrier s_barrier"),
    "\tscratch_store_b32 off, v5, s32 offset:16": ("scratch store", "scratch store scratch_store_b32 (32-bit)"),
}


@pytest.mark.parametrize("line", LINES)
def test_classifier(line):
    ins = amdgcn.classify(line)
    assert (ins.cls, ins.name) == LINES[line]


def test_classifier_facts_and_noise():
    d = dialect("amdgcn")
    assert amdgcn.classify("\tds_read_b64_tr_b16 v[0:1], v2").facts["trans"] is True
    assert amdgcn.classify("\ts_wait_loadcnt_dscnt 0x102").facts["counters"] == {"loadcnt": 1, "dscnt": 2}
    assert amdgcn.classify("\ts_waitcnt vmcnt(1) lgkmcnt(0)").facts["counters"] == {"vmcnt": 1, "lgkmcnt": 0}
    mma = amdgcn.classify("\tv_mfma_f32_32x32x8_f16 a[0:15], v[2:3], v[4:5], a[0:15]").facts
    assert (mma["m"], mma["n"], mma["k"], mma["acc_registers"], mma["acc_in"]) == (32, 32, 8, 16, "AGPRs")
    assert amdgcn.classify("\tv_add_u32_e32 v1, v2, v3").cls is None
    assert amdgcn.classify(".LBB0_3:") is None and amdgcn.classify("; comment") is None
    assert d.noise("\t.loc\t1 17 13 is_stmt 0") == "debug"
    assert d.noise("\t.byte\t17                              ; DW_TAG_compile_unit") == "debug"
    assert d.noise("; Occupancy: 8") == "comment"
    assert d.noise('\t.amdgcn_target "amdgpu9.42-amd-amdhsa-unknown-gfx942"') == "header"
    assert d.noise("\t\t.amdhsa_next_free_vgpr 58") == "directive"
    assert d.noise("\tv_mfma_f32_32x32x8_f16 v[0:15], v[2:3], v[4:5], v[0:15]") is None


def test_parser_maps_lines_and_normalizer_drops_noise():
    text = ('\t.file\t1 "/k" "k.py"\n\t.loc\t1 17 13\n\tbuffer_load_dwordx2 v[8:9], v1, s[12:15], 0 offen\n'
            "\t.loc\t1 0 5 is_stmt 0\n\ts_mov_b32 s0, 0\n.LBB0_3:\n\t.loc\t1 19 16\n"
            "\tv_mfma_f32_32x32x8_f16 v[0:15], v[2:3], v[4:5], v[0:15]   ; a comment\n\ts_cbranch_scc1 .LBB0_3\n")
    st = amdgcn.parse(text, file="/k/k.py")
    locs = [(ln.text.strip().split()[0], ln.loc.line if ln.loc else None) for ln in st.lines]
    assert ("buffer_load_dwordx2", 17) in locs and ("s_mov_b32", None) in locs
    assert ("v_mfma_f32_32x32x8_f16", 19) in locs and (".LBB0_3:", None) in locs
    assert all(ln.loc.file == "/k/k.py" for ln in st.lines if ln.loc)
    norm = [t for _, t in amdgcn.normalize(text)]
    assert norm == ["buffer_load_dwordx2 v[8:9], v1, s[12:15], 0 offen", "s_mov_b32 s0, 0", ".LBB_0:",
                    "v_mfma_f32_32x32x8_f16 v[0:15], v[2:3], v[4:5], v[0:15]", "s_cbranch_scc1 .LBB_0"]


def test_real_stage_counts(seed):
    counts = class_counts("amdgcn", seed["gfx950"].artifact.stages["amdgcn"])
    assert counts["mma"] > 0 and counts["shared load"] > 0
    if triton_series() != "3.6":   # 3.9 turns on gfx950's direct-to-LDS loads (is_async_copy_enabled); 3.6 does not
        assert counts["async copy"] > 0 and "global load" not in counts
    trans = [i for i in (amdgcn.classify(ln) for ln in seed["gfx950"].artifact.stages["amdgcn"].splitlines())
             if i and i.cls == "shared load" and i.facts["trans"]]
    assert trans, "gfx950 reads the B operand with ds_read_b64_tr_b16"


def test_msgpack_reader():
    from tritonscope.inputs import codeobject

    blob = (b"\x82\xa4name\xa1k\xa6counts\x93\x05\xcd\x01\x00\xd0\xff")
    assert codeobject.unpackb(blob) == {"name": "k", "counts": [5, 256, -1]}
    assert codeobject.unpackb(b"\xcb" + struct.pack(">d", 1.5)) == 1.5
    with pytest.raises(codeobject.CodeObjectError):
        codeobject.kernel(b"not an elf at all")


def test_samples_lists_the_amd_targets():
    result = invoke("samples")
    assert result.exit_code == 0
    for arch in ("gfx942", "gfx950", "gfx1100", "gfx1200", "gfx1201"):
        assert re.search(rf"{arch}\s.*AMD .*yes", result.output), arch
    assert "gfx942" in invoke("compile", "--help").output


def test_spills_come_from_scratch(compiled):
    """RDNA3 has 256 VGPRs per lane: the 128x128 tile spills to scratch, and every view says so."""
    a = analyze(compiled("matmul", block=128, arch="gfx1100"))
    sp, res = a.summary.spills, a.artifact.resources
    assert res.registers == 256 and res.stack > 0 and res.vgpr_spills > 0
    assert sp.spills and sp.bytes == res.stack == kernel_info(a.artifact.stages["amdgcn"])["ScratchSize"]
    counts = class_counts("amdgcn", a.artifact.stages["amdgcn"])
    assert (sp.stores, sp.loads) == (counts["scratch store"], counts["scratch load"]) and sp.stores > 0
    row = dict(summary_rows(a))["spills"]
    assert row == (f"{sp.stack:,} bytes scratch per lane; {sp.stores:,} scratch stores and {sp.loads:,} scratch "
                   f"loads in AMDGCN")
