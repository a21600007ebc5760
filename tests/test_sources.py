"""Kernels that already compiled: Triton caches, dumps, captures, stage files (issue 11).

Everything here is made by real compiles in the test session, into private
folders: a Triton cache and a TRITON_KERNEL_DUMP folder (one compile fills
both), a binary-only cache (TRITON_STORE_BINARY_ONLY), and a capture of a
small program.  CPU only.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tritonscope.cli import app
from tritonscope.core.errors import ExitCode

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def _compile_into(env: dict[str, str], target: str = "matmul", **request):
    """Compile through Triton's JIT (fresh) with `env` set, so Triton writes its cache/dump there."""
    from tritonscope import triton_api
    from tritonscope.pipeline.triton_compile import launch_args
    from tritonscope.inputs.kernels import Request
    from tritonscope.pipeline.binding import build_spec

    loaded = build_spec(Request(target, arch="sm_90a", **request), "sm_90a")
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        triton_api.compile_kernel(loaded.jit_fn, launch_args(loaded), capability=90,
                                  num_warps=loaded.spec.num_warps, num_stages=loaded.spec.num_stages, fresh=True)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return loaded


@pytest.fixture(scope="session")
def made(tmp_path_factory):
    """{'cache', 'dump', 'binary'} folders filled by real sm_90a compiles (shared by the tests)."""
    base = tmp_path_factory.mktemp("sources")
    cache, dump, binary = base / "cache", base / "dump", base / "binary"
    env = {"TRITON_CACHE_DIR": str(cache), "TRITON_KERNEL_DUMP": "1", "TRITON_DUMP_DIR": str(dump)}
    _compile_into(env, "matmul", block=16)
    _compile_into(env, "vector_add")
    _compile_into({"TRITON_CACHE_DIR": str(binary), "TRITON_STORE_BINARY_ONLY": "1"}, "matmul", block=16)
    return {"cache": cache, "dump": dump, "binary": binary, "base": base}


def _entry_dir(folder: Path, name: str) -> Path:
    return next(p.parent for p in folder.glob(f"*/{name}.*"))


# --------------------------------------------------------------------------
# A Triton cache
# --------------------------------------------------------------------------


def test_cache_listing_reads_metadata(made):
    result = invoke("open", made["cache"], "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["kind"] == "triton-cache"
    rows = {r["name"]: r for r in data["kernels"]}
    assert set(rows) == {"matmul_kernel", "add_kernel"}
    mm = rows["matmul_kernel"]
    assert mm["arch"] == "sm_90a" and "w4" in mm["config"] and mm["shared"] == 2048
    assert isinstance(mm["registers"], int) and mm["registers"] > 0 and mm["spills"] == 0
    assert mm["source"].endswith("samples/matmul.py:8") and mm["missing"] == []


def test_cache_listing_table_filter_and_sort(made):
    result = invoke("open", made["cache"], "--sort", "-registers", "--width", "160")
    assert result.exit_code == 0, result.output
    assert "matmul_kernel" in result.output and "add_kernel" in result.output
    only = invoke("open", made["cache"], "--where", "name=matmul*", "--json")
    assert [r["name"] for r in json.loads(only.output)["kernels"]] == ["matmul_kernel"]
    bad = invoke("open", made["cache"], "--where", "colour=red")
    assert bad.exit_code == ExitCode.USAGE
    bad_sort = invoke("open", made["cache"], "--sort", "regs")
    assert bad_sort.exit_code == ExitCode.USAGE


def test_cubin_facts_match_cuobjdump(made):
    from tritonscope import triton_api
    from tritonscope.inputs import sources

    cubin = next(made["cache"].glob("*/matmul_kernel.cubin"))
    facts = sources.cubin_facts(cubin.read_bytes())
    text = triton_api.run_tool([triton_api.tool_path("cuobjdump"), "-res-usage", str(cubin)])
    reg, stack, shared = map(int, re.search(r"REG:(\d+) STACK:(\d+) SHARED:(\d+)", text).groups())
    assert (facts["registers"], facts["stack"], facts.get("static_shared", 0)) == (reg, stack, shared)


def test_cache_kernel_opens_in_every_view(made):
    cache = made["cache"]
    data = json.loads(invoke("open", cache, "--kernel", "matmul_kernel", "--json").output)
    art = data["artifact"]
    assert list(art["stages"]) == ["python", "ttir", "ttgir", "llir", "ptx", "sass"]
    assert art["spec"]["arch"] == "sm_90a" and art["spec"]["num_stages"] == 3
    assert "tt.divisibility=16" in art["specialization"][0]["attrs"]
    for extra in (["--stage", "ttgir"], ["--view", "walkthrough"], ["--view", "side-by-side"], ["--line", "19"],
                  ["--view", "mix"]):
        result = invoke("open", cache, "--kernel", "matmul_kernel", "--width", "120", *extra)
        assert result.exit_code == 0, (extra, result.output[-800:])
    assert "tt.dot" in invoke("open", cache, "-k", "matmul_kernel", "--stage", "ttgir", "--max-lines", "0").output


def test_cache_kernel_by_hash_and_save(made, tmp_path):
    key = _entry_dir(made["cache"], "matmul_kernel").name
    report = tmp_path / "r.json"
    result = invoke("open", made["cache"], "--kernel", key[:6], "--stage", "none", "--save", report)
    assert result.exit_code == 0, result.output
    assert json.loads(report.read_text())["artifact"]["spec"]["kernel"] == "matmul_kernel"
    shown = invoke("show", report, "--stage", "none")
    assert shown.exit_code == 0 and "matmul_kernel" in shown.output, shown.output
    missing = invoke("open", made["cache"], "--kernel", "nope")
    assert missing.exit_code == ExitCode.NOT_FOUND and "nope" in missing.output, missing.output
    # a folder of several kernels needs --kernel for anything but the listing
    several = invoke("open", made["cache"], "--emit", tmp_path / "e")
    assert several.exit_code == ExitCode.USAGE and "--kernel" in several.output and not (tmp_path / "e").exists()


# --------------------------------------------------------------------------
# TRITON_KERNEL_DUMP, binary-only caches, single files
# --------------------------------------------------------------------------


def test_dump_folder_opens(made):
    data = json.loads(invoke("open", made["dump"], "--json").output)
    assert data["kind"] == "dump" and {r["name"] for r in data["kernels"]} == {"matmul_kernel", "add_kernel"}
    one = json.loads(invoke("open", made["dump"], "-k", "matmul_kernel", "--json").output)["artifact"]
    assert one["spec"]["arch"] == "sm_90a"              # from the TTGIR's module attributes
    assert "sass" in one["stages"] and "python" in one["stages"]


def test_inductor_cache_layout(made, tmp_path):
    """Inductor keeps Triton caches under triton/<device>/, next to its generated modules."""
    import shutil

    device = tmp_path / "torchinductor_me" / "triton" / "0"
    shutil.copytree(made["cache"], device)
    (tmp_path / "torchinductor_me" / "ab").mkdir()
    (tmp_path / "torchinductor_me" / "ab" / "cabc.py").write_text("# generated\n")
    (device / "LAUNCHER").mkdir()  # Triton also caches its launcher modules: not kernels
    (device / "LAUNCHER" / "cuda_utils.so").write_bytes(b"\x7fELF")
    data = json.loads(invoke("open", tmp_path / "torchinductor_me", "--json").output)
    assert data["kind"] == "inductor-cache" and len(data["kernels"]) == 2 and not data["warnings"]


def test_binary_only_cache_says_what_is_missing(made):
    data = json.loads(invoke("open", made["binary"], "--json").output)
    # Triton keeps <name>.source (the pre-pass TTIR) even then: the Python file is found through it
    has_source = bool(list(made["binary"].glob("*/*.source")))
    assert data["kernels"][0]["missing"] == ([] if has_source else ["python"]) + ["ttir", "ttgir", "llir", "ptx"]
    one = invoke("open", made["binary"], "-k", "matmul_kernel", "--stage", "none")
    assert one.exit_code == 0, one.output
    assert "only the binary" in one.output
    art = json.loads(invoke("open", made["binary"], "-k", "matmul_kernel", "--json").output)["artifact"]
    assert "sass" in art["stages"] and "ttgir" not in art["stages"]
    assert any("only the binary" in w for w in art["warnings"])
    recompiled = invoke("open", made["binary"], "--recompile", "--arch", "sm_80", "--stage", "none")
    assert recompiled.exit_code == (0 if has_source else ExitCode.BAD_INPUT_FILE), recompiled.output
    bare = made["base"] / "bare"  # a cubin and its metadata only: nothing to recompile from
    (bare / "X").mkdir(parents=True)
    for ext in ("cubin", "json"):
        src = next(made["binary"].glob(f"*/matmul_kernel.{ext}"))
        (bare / "X" / src.name).write_bytes(src.read_bytes())
    (bare / "X" / "__grp__matmul_kernel.json").write_text("{}")
    assert invoke("open", bare, "--recompile", "--arch", "sm_80").exit_code == ExitCode.BAD_INPUT_FILE
    shown = invoke("open", bare / "X", "--stage", "none")  # one kernel's folder opens it
    assert shown.exit_code == 0 and "No Python source" in shown.output, shown.output


@pytest.mark.parametrize("ext", ["ttir", "ttgir", "llir", "ptx", "cubin", "json"])
def test_single_stage_file(made, tmp_path, ext):
    src = _entry_dir(made["cache"], "matmul_kernel") / f"matmul_kernel.{ext}"
    path = tmp_path / f"k.{ext}"  # alone: no siblings to lean on
    path.write_bytes(src.read_bytes())
    result = invoke("open", path, "--json")
    if ext == "json":  # metadata alone has no stage to show
        assert result.exit_code == ExitCode.BAD_INPUT_FILE, result.output
        return
    assert result.exit_code == 0, result.output
    art = json.loads(result.output)["artifact"]
    expected = {"cubin": "sass"}.get(ext, ext)
    assert expected in art["stages"] and art["spec"]["kernel"] == "matmul_kernel"
    assert any("has no" in w for w in art["warnings"])
    shown = invoke("open", path, "--width", "120")
    assert shown.exit_code == 0, shown.output


# --------------------------------------------------------------------------
# Damaged and foreign input: a clear error and exit code, never a traceback
# --------------------------------------------------------------------------


def test_damaged_and_foreign_input(made, tmp_path):
    def code(path) -> int:
        result = invoke("open", path)
        assert "Traceback" not in result.output and "unexpected" not in result.output, result.output
        return result.exit_code

    assert code(tmp_path / "missing") == ExitCode.NOT_FOUND
    empty = tmp_path / "empty"
    empty.mkdir()
    assert code(empty) == ExitCode.BAD_INPUT_FILE
    foreign = tmp_path / "foreign"
    (foreign / "sub").mkdir(parents=True)
    (foreign / "sub" / "notes.txt").write_text("hello")
    assert code(foreign) == ExitCode.BAD_INPUT_FILE
    broken = tmp_path / "broken"
    entry = broken / "ABC"
    entry.mkdir(parents=True)
    for f in _entry_dir(made["cache"], "matmul_kernel").iterdir():
        (entry / f.name).write_bytes(f.read_bytes())
    (entry / "matmul_kernel.json").write_text("{ not json")
    assert code(broken) == ExitCode.BAD_INPUT_FILE
    (tmp_path / "k.ttgir").write_text("this is not MLIR\n")
    assert code(tmp_path / "k.ttgir") == ExitCode.BAD_INPUT_FILE
    (tmp_path / "k.cubin").write_bytes(b"not an elf")
    assert code(tmp_path / "k.cubin") == ExitCode.BAD_INPUT_FILE
    (tmp_path / "other.json").write_text('{"schema": 2}')
    assert code(tmp_path / "other.json") == ExitCode.BAD_INPUT_FILE
    (tmp_path / "notes.txt").write_text("x")
    assert code(tmp_path / "notes.txt") == ExitCode.BAD_INPUT_FILE
    capture = tmp_path / "cap"
    capture.mkdir()
    (capture / "capture.json").write_text('{"format": "other"}')
    assert code(capture) == ExitCode.BAD_INPUT_FILE


# --------------------------------------------------------------------------
# --emit
# --------------------------------------------------------------------------


def test_emit_round_trip(made, tmp_path):
    out = tmp_path / "emitted"
    result = invoke("open", made["cache"], "-k", "matmul_kernel", "--emit", out, "--stage", "none")
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(f"matmul_kernel.{e}" for e in ("py", "ttir", "ttgir", "llir", "ptx", "sass", "cubin", "json"))
    cache_entry = _entry_dir(made["cache"], "matmul_kernel")
    for ext in ("ttir", "ttgir", "llir", "ptx", "cubin"):  # never filtered: byte for byte
        assert (out / f"matmul_kernel.{ext}").read_bytes() == (cache_entry / f"matmul_kernel.{ext}").read_bytes()
    again = json.loads(invoke("open", out, "--json").output)["artifact"]
    first = json.loads(invoke("open", made["cache"], "-k", "matmul_kernel", "--json").output)["artifact"]
    assert again["stages"] == first["stages"]
    assert invoke("open", made["cache"], "-k", "matmul_kernel", "--emit", out).exit_code == ExitCode.OUTPUT_ERROR
    assert invoke("open", made["cache"], "-k", "matmul_kernel", "--emit", out, "--force",
                  "--stage", "none").exit_code == 0


def test_compile_emit(tmp_path, compiled):
    out = tmp_path / "c"
    result = invoke("compile", "matmul", "--block", "16", "--arch", "sm_90a", "--emit", out, "--stage", "none")
    assert result.exit_code == 0, result.output
    art = compiled("matmul", block=16)
    for key in ("ttir", "ttgir", "llir", "ptx", "sass"):
        assert (out / f"matmul_kernel.{key}").read_text() == art.stages[key]
    assert (out / "matmul_kernel.cubin").read_bytes()[:4] == b"\x7fELF"
    meta = json.loads((out / "matmul_kernel.json").read_text())
    assert meta["tritonscope"]["constexprs"] == {"BLOCK": 16}
    (tmp_path / "file").write_text("")
    assert invoke("compile", "matmul", "--emit", tmp_path / "file").exit_code == ExitCode.OUTPUT_ERROR


# --------------------------------------------------------------------------
# Recompiling what was found
# --------------------------------------------------------------------------


def _same_code(key: str, a: str, b: str) -> bool:
    """Equal once locations are stripped (TTIR: and SSA names, which a re-parse renames)."""
    from tritonscope.analyses.diff import normalize_stage

    na = [t for _, t in normalize_stage(key, a)]
    nb = [t for _, t in normalize_stage(key, b)]
    if key == "ttir":
        na, nb = _canonical_names(na), _canonical_names(nb)
    return na == nb


def _canonical_names(lines: list[str]) -> list[str]:
    names: dict[str, str] = {}

    def rename(m):
        return names.setdefault(m.group(0), f"%v{len(names)}")

    return [re.sub(r"%[A-Za-z_][\w$.]*", rename, line) for line in lines]


def test_recompile_cached_sm90a_for_sm80_equals_direct_compile(made, compiled):
    data = json.loads(invoke("open", made["cache"], "-k", "matmul_kernel", "--recompile", "--arch", "sm_80",
                             "--json").output)["artifact"]
    direct = compiled("matmul", block=16, arch="sm_80")
    assert data["spec"]["arch"] == "sm_80"
    for key in ("ttir", "ttgir", "llir", "ptx"):
        assert _same_code(key, data["stages"][key], direct.stages[key]), key
    assert data["resources"]["registers"] == direct.resources.registers


def test_recompile_diff_and_usage(made):
    result = invoke("open", made["cache"], "-k", "matmul_kernel", "--recompile", "--arch", "sm_80", "--diff",
                    "--width", "120")
    assert result.exit_code == 0, result.output
    assert "sm_80" in result.output and "sm_90a" in result.output
    assert invoke("open", made["cache"], "-k", "matmul_kernel", "--arch", "sm_80").exit_code == ExitCode.USAGE
    assert invoke("open", made["cache"], "-k", "matmul_kernel", "--diff").exit_code == ExitCode.USAGE
    # constexprs are folded into a cache entry's IR
    assert invoke("open", made["cache"], "-k", "matmul_kernel", "--recompile",
                  "-c", "BLOCK=32").exit_code == ExitCode.USAGE


# --------------------------------------------------------------------------
# Capture (CPU: a program that compiles ahead of time; launches need a GPU)
# --------------------------------------------------------------------------

PROGRAM = textwrap.dedent('''
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource


    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


    if __name__ == "__main__":
        sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
        attrs = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]], (2,): [["tt.divisibility", 16]]}
        for block in (256, 1024):
            src = ASTSource(fn=add_kernel, signature=sig, constexprs={(4,): block}, attrs=attrs)
            triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "num_stages": 2})
        raise SystemExit(3)
''')


@pytest.fixture(scope="session")
def captured(tmp_path_factory):
    base = tmp_path_factory.mktemp("capture")
    prog = base / "prog.py"
    prog.write_text(PROGRAM)
    env = {**os.environ, "TRITON_CACHE_DIR": str(base / "triton-cache")}
    result = subprocess.run([sys.executable, "-m", "tritonscope", "capture", "-o", str(base / "cap"), "--",
                             sys.executable, str(prog)], env=env, capture_output=True, text=True, timeout=300)
    return base / "cap", result


def test_capture_records_every_compile(captured):
    cap, result = captured
    assert result.returncode == ExitCode.PROGRAM_FAILED, result.stderr  # 14: the program failed, its status named
    assert "The program (" in result.stderr and "exited with status 3." in result.stderr
    assert "2 kernels recorded" in result.stderr
    data = json.loads(invoke("open", cap, "--json").output)
    assert data["kind"] == "capture" and len(data["kernels"]) == 2
    configs = sorted(r["config"] for r in data["kernels"])
    assert configs == ["BLOCK=1024 w4 s2", "BLOCK=256 w4 s2"]
    assert all(r["source"].endswith("prog.py:8") and r["launches"] == 0 for r in data["kernels"])
    record = json.loads(next(cap.glob("kernels/*/record.json")).read_text())
    assert record["signature"]["x_ptr"] == "*fp32" and record["attrs"]["x_ptr"] == ["tt.divisibility=16"]
    assert "def add_kernel" in record["source"] and list(cap.glob("process-*.json"))


def test_capture_opens_and_recompiles_with_other_constexpr(captured):
    cap, _ = captured
    rows = json.loads(invoke("open", cap, "--json").output)["kernels"]
    key = next(r["key"] for r in rows if r["config"].startswith("BLOCK=256"))
    art = json.loads(invoke("open", cap, "-k", key, "--json").output)["artifact"]
    assert art["spec"]["constexprs"] == {"BLOCK": 256} and art["python_first_line"] == 8
    again = json.loads(invoke("open", cap, "-k", key, "--recompile", "-c", "BLOCK=1024", "--json").output)["artifact"]
    other = next(r["key"] for r in rows if r["config"].startswith("BLOCK=1024"))
    orig = json.loads(invoke("open", cap, "-k", other, "--json").output)["artifact"]
    for stage in ("ttgir", "ptx"):
        assert _same_code(stage, again["stages"][stage], orig["stages"][stage])


def test_capture_refuses_bad_output(tmp_path):
    (tmp_path / "x").write_text("")
    into_file = invoke("capture", "-o", tmp_path / "x", "--", "true")
    assert into_file.exit_code == ExitCode.OUTPUT_ERROR and "it is a file" in into_file.output
    assert (tmp_path / "x").read_text() == ""   # the file is left as it was
    nothing = invoke("capture", "-o", tmp_path / "y")
    assert nothing.exit_code == ExitCode.USAGE and "Nothing to run" in nothing.output and not (tmp_path / "y").exists()


def test_capture_describes_arguments_without_data():
    from tritonscope.inputs.capture import describe_arg

    class FakeTensor:
        dtype = "torch.float16"
        shape = (32, 32)

        def stride(self):
            return (32, 1)

        def storage_offset(self):
            return 2

        def data_ptr(self):
            return 0x10004

    assert describe_arg(FakeTensor()) == {"dtype": "float16", "shape": [32, 32], "strides": [32, 1],
                                          "storage_offset": 2, "align16": False}
    assert describe_arg(48) == {"type": "int", "value": 48, "div16": True}


# --------------------------------------------------------------------------
# The capture made on the device (tests/gpu/make_capture_fixture.py), checked in
# --------------------------------------------------------------------------

FIXTURE = Path(__file__).resolve().parent / "data" / "capture"
needs_fixture = pytest.mark.skipif(not (FIXTURE / "capture.json").is_file(),
                                   reason="tests/data/capture/ not made yet (tests/gpu/make_capture_fixture.py)")


@needs_fixture
def test_checked_in_capture_lists_launches_and_autotuning():
    data = json.loads(invoke("open", FIXTURE, "--json").output)
    rows = data["kernels"]
    names = [r["name"] for r in rows]
    assert names.count("add_kernel") == 2 and "scale_kernel" in names
    assert all(r["arch"] == "sm_90a" for r in rows) and sum(r["launches"] or 0 for r in rows) >= 5
    assert data["capture"]["autotune"][0]["kernel"] == "scale_kernel"
    table = invoke("open", FIXTURE, "--width", "160")
    assert table.exit_code == 0 and "autotuning" in table.output


@needs_fixture
def test_checked_in_capture_opens_every_kernel_and_recompiles(tmp_path):
    from tritonscope.inputs import sources

    source = sources.open_source(FIXTURE)
    aligned = {}
    for entry in source.entries:
        result = invoke("open", FIXTURE, "-k", entry.key, "--stage", "none", "--width", "120")
        assert result.exit_code == 0, result.output
        if entry.name == "add_kernel" and entry.launch_info.get("args"):
            art = sources.load_artifact(entry)
            aligned[entry.launch_info["args"][0][0]["align16"]] = art.specialization[0].attrs
    assert aligned == {True: ("tt.divisibility=16",), False: ()}  # the unaligned view lost divisibility
    key = source.entries[0].key
    again = invoke("open", FIXTURE, "-k", key, "--recompile", "--arch", "sm_80", "--emit", tmp_path / "e",
                   "--stage", "none")
    assert again.exit_code == 0, again.output
    assert (tmp_path / "e" / f"{source.entries[0].name}.cubin").is_file()


# --------------------------------------------------------------------------
# Launch options on the command line: each gives what a real launch gives
# --------------------------------------------------------------------------


def _compiled_json(*args: str) -> dict:
    result = invoke("compile", *args, "--arch", "sm_90a", "--stage", "none", "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["artifact"]


def test_maxnreg_limits_registers():
    free = _compiled_json("vector_add", "-c", "BLOCK=4096")
    limited = _compiled_json("vector_add", "-c", "BLOCK=4096", "--maxnreg", "32")
    assert free["resources"]["registers"] > 32 and free["metadata"]["maxnreg"] is None
    assert limited["metadata"]["maxnreg"] == 32 and limited["spec"]["options"] == {"maxnreg": 32}
    assert limited["resources"]["registers"] <= 32 and limited["resources"]["stack"] > 0  # it spills
    assert invoke("compile", "vector_add", "--maxnreg", "7").exit_code == ExitCode.USAGE


def test_unaligned_pointer_loses_divisibility():
    def x_attrs(art):
        return next(s["attrs"] for s in art["specialization"] if s["name"] == "x_ptr")

    aligned = _compiled_json("vector_add")
    off_by_one = _compiled_json("vector_add", "--arg", "x_ptr=fp32[4096]+1")
    off_by_16_bytes = _compiled_json("vector_add", "--arg", "x_ptr=fp32[4096]+4")
    assert x_attrs(aligned) == ["tt.divisibility=16"] and x_attrs(off_by_16_bytes) == ["tt.divisibility=16"]
    assert x_attrs(off_by_one) == []
    func = next(line for line in off_by_one["stages"]["ttir"].splitlines() if "tt.func" in line)
    assert re.search(r"%x_ptr: !tt.ptr<f32> loc", func) and "%y_ptr: !tt.ptr<f32> {tt.divisibility = 16" in func
    assert off_by_one["spec"]["args"]["x_ptr"] == "fp32[4096]+1"


def test_fp_fusion_and_num_ctas():
    assert _compiled_json("vector_add", "--no-fp-fusion")["metadata"]["enable_fp_fusion"] is False
    two = _compiled_json("vector_add", "--num-ctas", "2")
    assert two["metadata"]["num_ctas"] == 2 and two["spec"]["options"] == {"num_ctas": 2}
    assert invoke("compile", "vector_add", "--num-ctas", "3").exit_code == ExitCode.USAGE


def test_offset_argument_syntax():
    from tritonscope.inputs.kernels import TensorArg, parse_arg_value

    assert parse_arg_value("fp16[32,32].T+2") == TensorArg("fp16", (32, 32), True, 2)
    assert str(parse_arg_value("*fp16+8")) == "*fp16+8" and parse_arg_value("fp16[8]").offset == 0


def test_run_makes_the_unaligned_view():
    """`run --arg x=fp32[8]+1` launches with a real view one element into its storage."""
    pytest.importorskip("torch")
    from tritonscope.inputs.kernels import TensorArg
    from tritonscope.measure.runner import make_tensor

    t = make_tensor(TensorArg("fp32", (8,), offset=1), "cpu")
    assert t.shape == (8,) and t.storage_offset() == 1 and t.data_ptr() % 16 != 0
    tt = make_tensor(TensorArg("fp16", (4, 6), True, 2), "cpu")
    assert tt.shape == (4, 6) and tt.stride() == (1, 4) and tt.storage_offset() == 2


def test_capture_counts_launches_from_the_hooks(captured, tmp_path):
    """What the launch hooks record (no GPU here: the hooks are called as Triton calls them)."""
    import shutil
    from types import SimpleNamespace

    from tritonscope.inputs.capture import _Recorder

    cap = tmp_path / "cap"
    shutil.copytree(captured[0], cap)
    key = next(p.name for p in (cap / "kernels").iterdir())
    recorder = _Recorder(cap)
    handle = object()
    kernel = SimpleNamespace(metadata=SimpleNamespace(hash=key), function=handle, name="add_kernel")
    jit_fn = SimpleNamespace(arg_names=["x_ptr", "y_ptr", "out_ptr", "n"])
    # 3.6 has no kernel-load hook: the first launch is seen by name, then the handle is known
    recorder.on_launch(SimpleNamespace(data={"name": "add_kernel", "function": handle}))
    recorder.on_jit_launch(jit_fn, kernel, (1.5, 2, None, 4096), {}, lambda meta: (meta["n"] // 1024,))
    for _ in range(4):
        recorder.on_launch(SimpleNamespace(data={"name": "add_kernel", "function": handle}))
    recorder.flush()
    from tritonscope.inputs.sources import open_source

    entry = next(e for e in open_source(cap).entries if e.key == key)
    assert entry.launches == 5 and entry.launch_info["grids"] == [[4]]
    assert entry.launch_info["args"][0][3] == {"type": "int", "value": 4096, "div16": True}


# --------------------------------------------------------------------------
# The code-generation environment: recorded by a capture, replayed by a recompile
# --------------------------------------------------------------------------

ENV_PROGRAM = textwrap.dedent('''
    import os
    import sys

    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource


    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


    if __name__ == "__main__":
        # what torch's Inductor does: point Triton at another ptxas from inside the program
        os.environ["TRITON_PTXAS_PATH"], os.environ["TRITON_PTXAS_BLACKWELL_PATH"] = sys.argv[1:3]
        sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
        attrs = {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]], (2,): [["tt.divisibility", 16]]}
        src = ASTSource(fn=add_kernel, signature=sig, constexprs={(4,): 256}, attrs=attrs)
        triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "num_stages": 2})
''')
PTXAS_KNOBS = {"ptxas": "TRITON_PTXAS_PATH", "ptxas_blackwell": "TRITON_PTXAS_BLACKWELL_PATH"}


def _logging_tools(folder: Path) -> dict[str, Path]:
    """{'TRITON_PTXAS_PATH': wrapper, ...}: copies of Triton's bundled ptxas that log every call."""
    from triton import knobs

    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for attr, key in PTXAS_KNOBS.items():
        real = type(knobs.nvidia).__dict__[attr].default_path
        wrapper = folder / f"{attr}-wrapped"
        wrapper.write_text(f'#!/bin/sh\necho "$@" >> "{folder}/calls.log"\nexec "{real}" "$@"\n')
        wrapper.chmod(0o755)
        out[key] = wrapper
    return out


@pytest.fixture(scope="module")
def env_capture(tmp_path_factory):
    """A capture of a program that sets TRITON_PTXAS_PATH / _BLACKWELL_PATH itself (as Inductor does)."""
    base = tmp_path_factory.mktemp("envcap")
    tools = _logging_tools(base / "tools")
    prog = base / "prog.py"
    prog.write_text(ENV_PROGRAM)
    env = {**os.environ, "TRITON_CACHE_DIR": str(base / "triton-cache")}
    for key in PTXAS_KNOBS.values():
        env.pop(key, None)
    result = subprocess.run([sys.executable, "-m", "tritonscope", "capture", "-o", str(base / "cap"), "--",
                             sys.executable, str(prog), str(tools["TRITON_PTXAS_PATH"]),
                             str(tools["TRITON_PTXAS_BLACKWELL_PATH"])],
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return base / "cap", tools, base / "tools" / "calls.log"


def _used_knob() -> str:
    """The ptxas knob a compile for sm_90 reads here (3.6: TRITON_PTXAS_PATH; 3.9: ..._BLACKWELL_PATH)."""
    from tritonscope import triton_api

    return triton_api.compile_tools(90)["ptxas"]["knob"]


def test_capture_records_the_code_generation_environment(env_capture):
    cap, tools, _ = env_capture
    from tritonscope.inputs import sources

    (entry,) = sources.open_source(cap).entries
    codegen = entry.record["codegen"]
    assert codegen["complete"] is True
    for key, wrapper in tools.items():  # set inside the program, after triton was imported
        assert codegen["vars"][key] == str(wrapper)
    ptxas = codegen["tools"]["ptxas"]
    assert ptxas["knob"] == _used_knob() and ptxas["path"] == str(tools[_used_knob()])
    assert ptxas["bundled"] is False and re.fullmatch(r"\d+\.\d+", ptxas["version"])
    assert re.fullmatch(r"\d+\.\d+", ptxas["ptx_isa"])
    # open shows it: the summary's environment and a note on the tool
    art = sources.load_artifact(entry)
    assert art.env[_used_knob()] == str(tools[_used_knob()])
    assert any(f"from {_used_knob()}=" in w and "A --recompile uses the same file" in w
               for w in art.warnings), art.warnings
    shown = invoke("open", cap, "-k", entry.key, "--stage", "none", "--width", "300")
    assert shown.exit_code == 0 and f"{_used_knob()}={tools[_used_knob()]}" in shown.output


def test_recompile_uses_the_recorded_ptxas(env_capture):
    """The recorded TRITON_PTXAS_PATH is applied in a child process, and nothing leaks into this one."""
    cap, tools, log = env_capture
    from tritonscope.inputs import sources

    (entry,) = sources.open_source(cap).entries
    original = sources.load_artifact(entry)
    log.unlink(missing_ok=True)
    again = sources.recompile(entry, original)
    calls = log.read_text().splitlines() if log.exists() else []
    assert any("--gpu-name=sm_90a" in c or "sm_90a" in c and "-o" in c for c in calls), calls
    assert "recorded environment" in again.warnings[0] and str(tools[_used_knob()]) in again.warnings[0]
    assert again.env[_used_knob()] == str(tools[_used_knob()])
    for key in ("ttgir", "llir", "ptx"):
        assert _same_code(key, again.stages[key], original.stages[key]), key
    assert not any(k in os.environ for k in PTXAS_KNOBS.values())  # never leaks into this process
    from triton import knobs

    assert knobs.nvidia.ptxas.path == type(knobs.nvidia).__dict__["ptxas"].default_path


def _edited_capture(cap: Path, to: Path, *, vars: dict | None = None, tools: dict | None = None,
                    ptx_version: str | None = None) -> Path:
    """A copy of `cap` whose record says another environment (a synthetic record)."""
    import shutil

    shutil.copytree(cap, to)
    record_path = next(to.glob("kernels/*/record.json"))
    record = json.loads(record_path.read_text())
    if vars is not None:
        record["codegen"]["vars"] = record["env"] = vars
    if tools is not None:
        record["codegen"]["tools"] = tools
    record_path.write_text(json.dumps(record))
    if ptx_version:
        ptx = next(to.glob("kernels/*/*.ptx"))
        ptx.write_text(re.sub(r"^\.version \d+\.\d+", f".version {ptx_version}", ptx.read_text(), flags=re.M))
    return to


def test_recompile_says_when_the_recorded_ptxas_is_missing(env_capture, tmp_path):
    """A capture made where another ptxas was (11.1 here: a version no machine of ours has, since a ptxas of
    the recorded version is used when one is found), recompiled where it is not."""
    from tritonscope import triton_api
    from tritonscope.inputs import sources

    missing = {key: f"/nonexistent/torch/bin/{attr}" for attr, key in PTXAS_KNOBS.items()}
    cap = _edited_capture(env_capture[0], tmp_path / "cap", vars=missing, ptx_version="7.1",
                          tools={"ptxas": {"knob": _used_knob(), "path": missing[_used_knob()], "version": "11.1",
                                           "ptx_isa": "7.1", "bundled": False}})
    (entry,) = sources.open_source(cap).entries
    original = sources.load_artifact(entry)
    assert any("That file is not on this machine" in w for w in original.warnings)  # open says it already
    again = sources.recompile(entry, original)
    here = triton_api.compile_tools(90)["ptxas"]
    said = [w for w in again.warnings if "not on this machine" in w and w.startswith(f"{_used_knob()}=")]
    assert said, again.warnings
    assert "(ptxas 11.1, PTX ISA 7.1)" in said[0] and f"ptxas {here['version']}" in said[0]
    assert f"`.version 7.1` captured, `.version {here['ptx_isa']}` now" in said[0]
    assert f".version {here['ptx_isa']}" in again.stages["ptx"]
    assert _used_knob() not in again.env  # what exists here was used: Triton's bundled ptxas
    text = invoke("open", cap, "-k", entry.key, "--recompile", "--stage", "none", "--width", "400")
    assert text.exit_code == 0 and "not on this machine" in text.output


def test_recompile_applies_recorded_knobs_exactly(env_capture, tmp_path, monkeypatch):
    """A recorded TRITON_DISABLE_LINE_INFO=1 is applied; one set only in this process is not."""
    from tritonscope.inputs import sources

    def loc_lines(art) -> int:
        return sum(1 for line in art.stages["ptx"].splitlines() if line.lstrip().startswith(".loc"))

    cap = _edited_capture(env_capture[0], tmp_path / "off", vars={"TRITON_DISABLE_LINE_INFO": "1"})
    (entry,) = sources.open_source(cap).entries
    original = sources.load_artifact(entry)
    assert loc_lines(original) > 0
    assert original.env == {"TRITON_DISABLE_LINE_INFO": "1"}
    without = sources.recompile(entry, original)
    assert loc_lines(without) == 0 and without.env.get("TRITON_DISABLE_LINE_INFO") == "1"
    assert "TRITON_DISABLE_LINE_INFO" not in os.environ
    # the record lists no TRITON_DISABLE_LINE_INFO (complete): this process's value must not reach the compile
    plain = _edited_capture(env_capture[0], tmp_path / "on", vars={})
    (entry,) = sources.open_source(plain).entries
    monkeypatch.setenv("TRITON_DISABLE_LINE_INFO", "1")
    with_lines = sources.recompile(entry, sources.load_artifact(entry))
    assert loc_lines(with_lines) > 0 and "TRITON_DISABLE_LINE_INFO" not in with_lines.env


def test_replay_environment_rules(tmp_path, monkeypatch):
    from tritonscope import triton_api

    tool = tmp_path / "ptxas"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PTXAS_OPTIONS", "-v")
    monkeypatch.setenv("TRITON_PTXAS_PATH", "/somewhere/else/ptxas")
    recorded = {"TRITON_PTXAS_BLACKWELL_PATH": str(tool), "TRITON_PTXAS_PATH": "/gone/ptxas",
                "TRITON_DEFAULT_FP_FUSION": "0"}
    env, missing, names = triton_api.replay_environment(recorded, complete=True, cache_vars_known=True)
    assert env["TRITON_PTXAS_BLACKWELL_PATH"] == str(tool) and env["TRITON_DEFAULT_FP_FUSION"] == "0"
    assert missing == {"TRITON_PTXAS_PATH": "/gone/ptxas"} and "TRITON_PTXAS_PATH" not in env
    assert "PTXAS_OPTIONS" not in env  # complete: a knob the record does not list was unset
    assert {"PTXAS_OPTIONS", "TRITON_PTXAS_PATH", "TRITON_DEFAULT_FP_FUSION"} <= names
    # an older record (no `complete`): what it does not say is left as it is
    env, _, _ = triton_api.replay_environment({}, complete=False, cache_vars_known=False)
    assert env["PTXAS_OPTIONS"] == "-v" and env["TRITON_PTXAS_PATH"] == "/somewhere/else/ptxas"
    assert os.environ["PTXAS_OPTIONS"] == "-v"  # the caller's environment is never changed
    # Triton's metadata spells a set bool 'true': the same setting as this process's '1' (no child needed)
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
    env, _, _ = triton_api.replay_environment({"TRITON_DEFAULT_FP_FUSION": "true"}, complete=False,
                                              cache_vars_known=True)
    assert env["TRITON_DEFAULT_FP_FUSION"] == "1"


def test_cache_metadata_gives_the_cache_invalidating_environment(made):
    """Triton writes the cache-invalidating variables that were set into each kernel's metadata."""
    from tritonscope.inputs import sources

    entry = next(e for e in sources.open_source(made["cache"]).entries if e.name == "matmul_kernel")
    meta = dict(entry.metadata, TRITON_F32_DEFAULT="ieee")
    recorded = sources.recorded_environment(dataclasses.replace(entry, metadata=meta))
    assert recorded["vars"]["TRITON_F32_DEFAULT"] == "ieee" and recorded["cache_vars_known"]
    assert recorded["complete"] is False  # the tool knobs are not in a cache entry


def test_capture_names_a_signal_as_a_shell_does(tmp_path):
    """A program killed by SIGTERM: capture exits 14 and says 143 (128+15), not 241 (-15 as an exit status)."""
    killed = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"
    result = subprocess.run([sys.executable, "-m", "tritonscope", "capture", "-o", str(tmp_path / "cap"), "--",
                             sys.executable, "-c", killed], capture_output=True, text=True, timeout=120)
    assert result.returncode == ExitCode.PROGRAM_FAILED, result.stderr
    assert "was killed by signal 15 (SIGTERM, a shell reports 143)" in " ".join(result.stderr.split())
