"""The dialects as the one home of stage-language knowledge: stage-file recognition, the questions
consumers ask instead of comparing stage keys, the one op-name and loc pattern, and the one class
vocabulary (passes included).  All on real checked-in stage files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tritonscope.language import dialects
from tritonscope.language.dialects import (
    CLASSES, compiled, dialect, for_suffix, is_machine_code, is_mlir, is_source, kernel_name, mlir_stages, naming,
    pass_stages, recognize,
)
from tritonscope.language.dialects import mlir_passes
from tritonscope.language.mlir_syntax import FILE_POS, LOC, LOC_DEF, OP, op_name

DATA = Path(__file__).parent / "data"
STAGES = DATA / "stages" / "3.9" / "matmul_b16_sm90a"    # files named by stage key (ttir, ttgir, llir, ptx, sass)
AMD = DATA / "open_amd" / "gfx1100_vector_add"            # a HIP dump folder: add_kernel.<stage>


def _head(path: Path, n: int = 1 << 16) -> str:
    return path.read_text(encoding="utf-8", errors="replace")[:n]


# --------------------------------------------------------------------------
# Stage-file recognition: each dialect says which files are its
# --------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["ttir", "ttgir", "llir", "ptx", "sass"])
def test_each_real_cuda_stage_file_is_recognized_as_its_own_dialect(key):
    head = _head(STAGES / key)
    assert recognize(f".{key}", head).key == key
    # the .mlir suffix is shared: TTGIR by its ttg. attributes, TTIR otherwise
    if dialect(key).is_mlir:
        assert recognize(".mlir", head).key == key
    # the stage's text is no other text stage's: the signs tell them apart (not SASS from PTX: nvdisasm's
    # listing begins with PTX's `.target sm_90a`, so a .sass is told by its suffix)
    for other in ("llir", "ptx", "amdgcn"):
        if other != key and not (key == "sass" and other == "ptx"):
            assert recognize(f".{other}", head) is None, (key, other)


@pytest.mark.parametrize("key", ["ttir", "ttgir", "llir", "amdgcn"])
def test_each_real_amd_stage_file_is_recognized(key):
    head = _head(AMD / f"add_kernel.{key}")
    assert recognize(f".{key}", head).key == key
    assert kernel_name(head, key) == "add_kernel"


def test_suffixes_the_dialects_claim():
    assert [d.key for d in for_suffix(".mlir")] == ["ttir", "ttgir"]
    assert [d.key for d in for_suffix(".source")] == ["ttir"]     # the pre-pass TTIR Triton's cache keeps
    assert [d.key for d in for_suffix(".PTX")] == ["ptx"]
    assert for_suffix(".json") == () and for_suffix(".cubin") == ()
    assert recognize(".json", "{}") is None
    assert recognize(".mlir", "hello\nworld\n") is None          # no module, no tt.func: not a Triton module


def test_kernel_name_and_def_location_from_real_files():
    for key in ("ttir", "ttgir", "llir", "ptx"):
        assert kernel_name(_head(STAGES / key, 200000), key) == "matmul_kernel", key
    assert kernel_name("        Function : matmul_kernel\n", "sass") == "matmul_kernel"  # cuobjdump's listing
    # the kernel's def: the TTIR's first #loc, the LLVM IR's DISubprogram, the PTX's first .loc
    file, line = dialect("ttir").def_location(_head(STAGES / "ttir"))
    assert file.endswith("matmul.py") and line > 0
    for key in ("llir", "ptx"):
        got = dialect(key).def_location((STAGES / key).read_text())
        assert got[0].endswith("matmul.py") and got[1] == line, (key, got)
    assert dialect("sass").def_location is None
    assert dialect("ttir").def_location("module {\n}\n") == ("", 0)


def test_open_reads_a_kernels_def_through_the_registry(tmp_path):
    from tritonscope.inputs.sources.files import file_entry

    for key in ("ttir", "ttgir", "llir", "ptx"):
        path = tmp_path / f"matmul_kernel.{key}"
        path.write_text((STAGES / key).read_text())
        entry = file_entry(path)
        assert entry.name == "matmul_kernel" and entry.source_file.split(":")[0].endswith("matmul.py"), key
        path.unlink()
    mlir = tmp_path / "k.mlir"
    mlir.write_text((STAGES / "ttgir").read_text())
    assert list(file_entry(mlir).files) == ["ttgir"]


# --------------------------------------------------------------------------
# Questions instead of stage-key comparisons
# --------------------------------------------------------------------------


def test_the_registry_answers_what_consumers_used_to_compare_keys_for():
    assert is_source("python") and not is_source("ttir") and not is_source("nonsense")
    assert compiled(["python", "ttir", "ptx"]) == ["ttir", "ptx"]
    assert mlir_stages() == ("ttir", "ttgir") and all(is_mlir(k) for k in mlir_stages()) and not is_mlir("llir")
    assert pass_stages() == ("ttir", "ttgir", "llir")
    assert [dialect(k).pass_title for k in pass_stages()] == ["TTIR", "TTGIR", "LLVM"]
    assert naming("mma") == ("ptx", "amdgcn", "sass")
    assert [k for k in dialects.every_stage_key() if is_machine_code(k)] == ["amdgcn", "sass"]
    assert [k for k in dialects.every_stage_key() if dialect(k).is_assembly] == ["ptx", "amdgcn", "sass"]


def test_explain_passes_and_sources_compare_no_stage_keys():
    """explain, passes and sources ask the registry; they compare no stage key (==, !=, in a literal tuple)."""
    keys = r'"(?:python|ttir|ttgir|llir|ptx|sass|amdgcn)"'
    rx = re.compile(rf"(==|!=)\s*{keys}|{keys}\s*(==|!=)|\bin\s*[(\[{{]\s*{keys}")
    root = Path(dialects.__file__).parents[2]
    found = [f"{p.relative_to(root)}:{n}" for folder in ("analyses/explain", "analyses/passes", "inputs/sources")
             for p in sorted((root / folder).glob("*.py"))
             for n, line in enumerate(p.read_text().splitlines(), 1) if rx.search(line)]
    assert found == []


# --------------------------------------------------------------------------
# One op-name pattern, one set of loc patterns
# --------------------------------------------------------------------------


def test_one_op_pattern_reads_every_real_mlir_op_line():
    names = [op_name(LOC.sub("", ln)) for ln in (STAGES / "ttgir").read_text().splitlines()]
    found = {n for n in names if n}
    assert {"tt.func", "tt.dot", "scf.for", "tt.return", "ttg.convert_layout", "arith.constant"} <= found
    assert op_name('  %5 = "tt.reduce"(%4) <{axis = 0 : i32}> ({') == "tt.reduce"
    assert op_name("  %22:3 = scf.for %arg9 = %c0_i32 to %K step %c16_i32 iter_args(") == "scf.for"
    assert op_name("  %-1_i32 = arith.constant -1 : i32") == "arith.constant"
    assert op_name('    "ttg.num-warps" = 4 : i32,') is None       # an attribute key, not an op
    assert op_name("  } loc(#loc3)") is None and OP.match("#blocked = #ttg.blocked<{}>") is None


def test_loc_patterns():
    line = '  %x = tt.get_program_id x : i32 loc(callsite(#loc20 at #loc21))'
    assert LOC.sub("", line) == "  %x = tt.get_program_id x : i32"
    m = LOC_DEF.match('#loc12 = loc("a"(#loc3))')
    assert m.group(1) == "#loc12" and m.group(2) == '"a"(#loc3)'
    assert FILE_POS.search('loc("/k/matmul.py":17:21)').groups() == ("/k/matmul.py", "17", "21")


# --------------------------------------------------------------------------
# One class vocabulary
# --------------------------------------------------------------------------


def test_pass_classes_are_the_dialects_words():
    """Every class `passes` counts is a word of CLASSES, or one of the few only MLIR stages name."""
    for word in mlir_passes.OP_CLASS_ORDER:
        assert word in CLASSES or word in mlir_passes.OWN_CLASSES, word
    assert not set(mlir_passes.OWN_CLASSES) & set(CLASSES)
    assert mlir_passes.line_classes("ttg.async_wait", "ttg.async_wait {num = 0 : i32}") == ("async wait",)
    asm = 'llvm.inline_asm has_side_effects asm_dialect = att "cp.async.wait_group 0x0;", ""  : () -> !llvm.void'
    assert mlir_passes.line_classes("llvm.inline_asm", asm) == ("async wait",)
    assert mlir_passes.line_classes("tt.dot", "") == ("dot",)
    assert mlir_passes.module_stage({"llvm.func": 1}, []) == "llir"
    assert mlir_passes.module_stage({"tt.func": 1}, ["#ttg.blocked<{}>"]) == "ttgir"
    assert mlir_passes.module_stage({"tt.func": 1}, []) == "ttir"


def test_a_saved_pass_table_with_the_old_wait_word_still_shows_its_waits():
    from tritonscope.analyses.passes import Step

    step = Step.from_dict({"index": 3, "name": "TritonGPUPipeline", "arg": "", "anchor": "builtin.module",
                           "stage": "ttgir", "classes": {"async copy": 2, "wait": 1}})
    assert step.classes == {"async copy": 2, "async wait": 1}
    assert "+1 async wait" in step.facts()
