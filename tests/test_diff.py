"""tritonscope diff: noise normalization, the summary story, bad input."""

from __future__ import annotations

import json
import shutil

from typer.testing import CliRunner

from tritonscope.analyses.analysis import analyze
from tritonscope.cli import app
from tritonscope.analyses.diff import diff_analyses, normalize_stage, roles_of, strip_mlir_loc
from tritonscope.inputs.kernels import SAMPLES_DIR

runner = CliRunner()


def test_mlir_normalization_drops_locs_and_renumbers_ssa():
    a = ('#loc1 = loc("/home/x/k.py":8:0)\n'
         '    %offs_m_7 = arith.addi %offs_m_3, %c16_i32 : i32 loc(#loc12)\n'
         '    %0 = tt.splat %offs_m_7 : i32 -> tensor<16xi32> loc(callsite(#loc3 at #loc4))\n'
         '  tt.func public @k(%a_ptr: !tt.ptr<f16> loc("a_ptr"(#loc))) {\n')
    b = ('#loc1 = loc("/tmp/other/k.py":8:0)\n'
         '    %offs_m_2 = arith.addi %offs_m_9, %c16_i32 : i32 loc(#loc7)\n'
         '    %5 = tt.splat %offs_m_2 : i32 -> tensor<16xi32> loc(#loc9)\n'
         '  tt.func public @k(%a_ptr: !tt.ptr<f16> loc("a_ptr"(#loc))) {\n')
    na, nb = normalize_stage("ttgir", a), normalize_stage("ttgir", b)
    assert [t for _, t in na] == [t for _, t in nb]
    assert [t for _, t in na][0] == "    %offs_m = arith.addi %offs_m_1, %c16_i32 : i32"
    assert all("loc" not in t and "/home" not in t for _, t in na)
    # constant values and the constant's own name are kept: that is a real change
    c = normalize_stage("ttgir", "    %offs_m_7 = arith.addi %offs_m_3, %c32_i32 : i32\n")
    assert "%c32_i32" in c[0][1]
    assert strip_mlir_loc('%x = f(%y) : i32 loc(fused["a"(#loc1), #loc2])') == "%x = f(%y) : i32"


def test_ptx_and_llir_normalization_drop_debug_info_and_register_numbers():
    a = ('\t.file\t1 "/a/k.py"\n\t.loc\t1 8 0\n\tadd.s32 \t%r12, %r3, %r7;\n$L__BB0_3:\n\tbra.uni $L__BB0_3;\n'
         '\t.section\t.debug_info\n\t{\n\t.b8 1\n\t}\n')
    b = ('\t.file\t1 "/b/k.py"\n\t.loc\t1 9 0\n\tadd.s32 \t%r2, %r30, %r1;\n$L__BB0_7:\n\tbra.uni $L__BB0_7;\n')
    assert [t for _, t in normalize_stage("ptx", a)] == [t for _, t in normalize_stage("ptx", b)]
    la = "  %9 = add i32 %3, %4, !dbg !14\n!14 = !DILocation(line: 3, scope: !5)\n"
    lb = "  %12 = add i32 %7, %8, !dbg !20\n!20 = !DILocation(line: 4, scope: !5)\n"
    assert [t for _, t in normalize_stage("llir", la)] == [t for _, t in normalize_stage("llir", lb)]


def test_same_kernel_from_two_paths_diffs_as_identical(tmp_path, monkeypatch):
    from tritonscope.pipeline.triton_compile import compile_artifact
    from tritonscope.inputs.kernels import Request
    from tritonscope.pipeline.binding import build_spec

    copy = tmp_path / "copied_matmul.py"
    shutil.copy(SAMPLES_DIR / "matmul.py", copy)
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")   # a real second compile, not a cache hit
    a = analyze(compile_artifact(build_spec(Request("matmul", block=16, arch="sm_90a"), "sm_90a")))
    b = analyze(compile_artifact(build_spec(Request(f"{copy}:matmul_kernel", block=16, arch="sm_90a"), "sm_90a")))
    # the raw stages really differ (paths) ...
    assert str(tmp_path) in b.artifact.stages["ttgir"] and str(tmp_path) not in a.artifact.stages["ttgir"]
    assert str(tmp_path) in b.artifact.stages["ptx"]
    # ... and the diff ignores it
    d = diff_analyses(a, b)
    assert d.identical, [(s.key, s.lines[:6]) for s in d.stages if not s.identical]
    assert not d.story and not [r for r in d.rows if r.changed]


def test_block16_vs_block64_tells_the_story(compiled):
    a = analyze(compiled("matmul", block=16))
    b = analyze(compiled("matmul", block=64))
    d = diff_analyses(a, b)
    story = "\n".join(d.story)
    assert "B uses wgmma.mma_async m64n64k16 instead of mma.sync m16n8k16" in story
    assert "B needs 24x the shared memory (49,152 vs 2,048 bytes)" in story
    assert "accumulator encoding changes from nvidia_mma v2 (mma.sync) to nvidia_mma v3 (wgmma)" in story
    rows = {r.name: r for r in d.rows}
    assert rows["dynamic shared memory (bytes)"].delta == "+47,104 (24x)"
    assert rows["wgmma (PTX)"].a == "0" and rows["wgmma (PTX)"].b != "0"
    roles = {r.role: r for r in d.roles}
    assert "nvmma_shared" in roles["A operand"].b and "dot_op" in roles["A operand"].a
    assert "swizzled_shared" in roles["shared buffer a"].a
    assert d.config_changes == ["BLOCK: 16 -> 64"]
    ttgir = next(s for s in d.stages if s.key == "ttgir")
    assert not ttgir.identical and any(x.tag == "+" and "versionMajor = 3" in x.text for x in ttgir.lines)


def test_roles_of_reads_dot_operands():
    ttgir = ('#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>\n'
             '    %acc = tt.dot %a, %b, %c, inputPrecision = tf32 : tensor<16x16xf16, #ttg.dot_op<{opIdx = 0, '
             'parent = #mma, kWidth = 2}>> * tensor<16x16xf16, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>> '
             '-> tensor<16x16xf32, #mma> loc(#loc5)\n')
    roles = roles_of(ttgir)
    assert roles["accumulator"] == "16x16xf32 tensor nvidia_mma<{versionMajor = 2, versionMinor = 0, " \
                                   "warpsPerCTA = [2, 2], instrShape = [16, 8]}>"
    assert "opIdx = 1" in roles["B operand"] and "versionMajor = 2" in roles["B operand"]


def test_cli_diff_summary():
    r = runner.invoke(app, ["diff", "matmul", "--a", "BLOCK=16", "--b", "BLOCK=64", "--arch", "sm_90",
                            "--stage", "none", "--width", "160", "--no-color"])
    assert r.exit_code == 0, r.output
    assert "B uses wgmma.mma_async m64n64k16 instead of mma.sync m16n8k16" in r.output
    assert "B needs 24x the shared memory" in r.output
    assert "49,152" in r.output and "+47,104 (24x)" in r.output


def test_cli_identical_configs_say_so():
    r = runner.invoke(app, ["diff", "matmul", "--a", "BLOCK=16", "--b", "BLOCK=16,num_warps=4", "--arch", "sm_90"])
    assert r.exit_code == 0
    assert "A and B are the same config" in r.output


def test_cli_refuses_different_kernels(tmp_path):
    r = runner.invoke(app, ["diff", "matmul", "vector_add", "--arch", "sm_90"])
    assert r.exit_code == 2
    assert "different kernels" in r.output and "--force-different" in r.output


def test_cli_bad_side_assignment():
    r = runner.invoke(app, ["diff", "matmul", "--a", "BLOCK"])
    assert r.exit_code == 2 and "expected NAME=VALUE" in r.output


def test_diff_saved_reports_and_bad_report(tmp_path, compiled):
    from tritonscope.outputs.report import analysis_to_dict

    for name, block in (("old.json", 16), ("new.json", 32)):
        (tmp_path / name).write_text(json.dumps(analysis_to_dict(analyze(compiled("matmul", block=block)))))
    r = runner.invoke(app, ["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["config_changes"] == ["BLOCK: 16 -> 32"] and not data["identical"]
    out = tmp_path / "d.json"
    r = runner.invoke(app, ["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"), "--save", str(out)])
    assert r.exit_code == 0 and json.loads(out.read_text())["kernel"] == "matmul_kernel"
    r = runner.invoke(app, ["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"), "--save", str(out)])
    assert r.exit_code == 8 and "--force" in r.output

    bad = tmp_path / "future.json"
    bad.write_text(json.dumps({"schema": "tritonscope.report", "schema_version": 99}))
    r = runner.invoke(app, ["diff", str(tmp_path / "old.json"), str(bad)])
    assert r.exit_code == 7
    assert "schema version 99" in " ".join(r.output.split())  # the message wraps with the path's length
