"""Found kernels tell only what their files record (issue 23).

A lone stage file, a dump folder, an Inductor cache: every fact a file
records (target, warps, line info) is read from it, a value that had to be
guessed says so, and a folder whose files come from two compiles is refused
with what each file says.  Everything comes from real compiles in the test
session (sm_90a, num_warps=8, so Triton's default of 4 would show), CPU only.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tritonscope.cli import app
from tritonscope.core.errors import ExitCode

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def artifact(*args) -> dict:
    result = invoke("open", *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["artifact"]


@pytest.fixture(scope="session")
def found(tmp_path_factory):
    """{'cache8', 'dump8', 'dump4'}: Triton's own cache and TRITON_KERNEL_DUMP folders of matmul at 8 and 4 warps."""
    from test_sources import _compile_into

    base = tmp_path_factory.mktemp("found")
    out = {"base": base}
    for warps in (8, 4):
        env = {"TRITON_CACHE_DIR": str(base / f"cache{warps}"), "TRITON_KERNEL_DUMP": "1",
               "TRITON_DUMP_DIR": str(base / f"dump{warps}")}
        _compile_into(env, "matmul", block=32, num_warps=warps)
        out[f"cache{warps}"] = base / f"cache{warps}"
        out[f"dump{warps}"] = next((base / f"dump{warps}").iterdir())
    return out


def _lone(found, tmp_path: Path, ext: str, where: str = "dump8") -> Path:
    src = next(found[where].glob(f"matmul_kernel.{ext}")) if where.startswith("dump") else \
        next(found[where].glob(f"*/matmul_kernel.{ext}"))
    path = tmp_path / f"lone.{ext}"
    path.write_bytes(src.read_bytes())
    return path


# --------------------------------------------------------------------------
# 1. What a lone stage file records
# --------------------------------------------------------------------------


@pytest.mark.parametrize("ext,arch", [("ptx", "sm_90a"), ("cubin", "sm_90a"), ("llir", "?"), ("ttgir", "sm_90a")])
def test_lone_file_reads_its_target_and_warps(found, tmp_path, ext, arch):
    art = artifact(_lone(found, tmp_path, ext))
    assert art["spec"]["num_warps"] == 8                       # .reqntid 256, nvvm.reqntid, EIATTR_REQNTID
    assert art["spec"]["arch"] == arch
    assert not any("num_warps" in w and "guess" in w for w in art["warnings"])
    # num_stages is in no stage file: shown as Triton's default, and said to be a guess
    assert any("num_stages" in w and "guess" in w for w in art["warnings"])
    if arch == "?":  # NVIDIA LLVM IR names no SM: unknown, and said
        assert any("does not record its target" in w for w in art["warnings"])


def test_lone_ttir_says_num_warps_is_a_guess(found, tmp_path):
    art = artifact(_lone(found, tmp_path, "ttir"))
    assert art["spec"]["num_warps"] == 4
    assert any("num_warps" in w and "guess" in w for w in art["warnings"])
    text = invoke("open", _lone(found, tmp_path, "ttir"), "--stage", "none", "--width", "200").output
    assert "num_warps" in text and "a guess" in text           # the terminal says it too


def test_readers_match_the_tools(found):
    """The facts read without tools equal what cuobjdump prints and what the PTX says."""
    from tritonscope import triton_api
    from tritonscope.inputs import sources

    cubin = found["dump8"] / "matmul_kernel.cubin"
    facts = sources.cubin_facts(cubin.read_bytes())
    elf = triton_api.run_tool([triton_api.tool_path("cuobjdump"), "-elf", str(cubin)])
    assert "EIATTR_REQNTID" in elf and "0x100 0x1 0x1" in elf  # 256 threads
    assert facts["threads"] == 256 and facts["arch"] == 90
    assert sources.ptx_facts(found["dump8"] / "matmul_kernel.ptx")["num_warps"] == 8
    assert sources.ptx_facts(found["dump4"] / "matmul_kernel.ptx")["num_warps"] == 4


def test_lone_llir_has_line_info(found, tmp_path):
    llir = _lone(found, tmp_path, "llir")
    assert "!DIFile" in llir.read_text() and "!dbg" in llir.read_text()
    art = artifact(llir)
    assert "python" in art["stages"] and not any(w.startswith("No Python source") for w in art["warnings"])
    shown = invoke("open", llir, "--line", "19", "--width", "160")
    assert shown.exit_code == 0, shown.output
    assert "tl.dot" in shown.output and "mma" in shown.output   # the dot's LLVM IR lines


def test_emitted_llir_opens_with_line_info(compiled, tmp_path):
    out = tmp_path / "emitted"
    result = invoke("compile", "matmul", "--arch", "sm_90a", "--num-warps", "8", "--emit", out, "--stage", "none")
    assert result.exit_code == 0, result.output
    lone = tmp_path / "alone.llir"
    shutil.copy(out / "matmul_kernel.llir", lone)
    shown = invoke("open", lone, "--line", "19", "--width", "160")
    assert shown.exit_code == 0, shown.output
    assert artifact(lone)["spec"]["num_warps"] == 8


# --------------------------------------------------------------------------
# 3. A dump folder whose files come from two compiles
# --------------------------------------------------------------------------


def _mixed(found, tmp_path: Path) -> Path:
    folder = tmp_path / "dump" / "KEY"
    shutil.copytree(found["dump4"], folder)
    shutil.copy(found["dump8"] / "matmul_kernel.ttgir", folder / "matmul_kernel.ttgir")
    return folder


def test_mixed_dump_folder_is_refused_with_a_reason(found, tmp_path):
    folder = _mixed(found, tmp_path)
    one = invoke("open", folder)
    assert one.exit_code == ExitCode.BAD_INPUT_FILE, one.output
    assert "more than one compile" in one.output and ".ttgir say 8" in " ".join(one.output.split())
    # in a listing, the mixed folder is skipped with the reason; the others list
    shutil.copytree(found["dump4"], folder.parent / "GOOD")
    listing = json.loads(invoke("open", folder.parent, "--json").output)
    assert [r["key"] for r in listing["kernels"]] == ["GOOD"]
    assert any("more than one compile" in w for w in listing["warnings"])


def test_dump_of_one_compile_shows_its_warps(found):
    art = artifact(found["dump8"])
    assert art["spec"]["num_warps"] == 8


# --------------------------------------------------------------------------
# 4. A dump recompile's stage count
# --------------------------------------------------------------------------


def test_dump_recompile_says_num_stages_is_a_guess(found):
    art = artifact(found["dump8"], "--recompile")
    said = [w for w in art["warnings"] if "guess" in w]
    assert said and "num_stages=3" in said[0] and "--num-stages" in said[0]
    assert art["spec"]["num_warps"] == 8
    # a cache records it: no guess
    art = artifact(found["cache8"], "--recompile")
    assert not any("guess" in w for w in art["warnings"])


# --------------------------------------------------------------------------
# 8. Bad metadata
# --------------------------------------------------------------------------


def test_cache_entry_with_a_non_number_num_warps(found, tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(found["cache8"], cache)
    meta = next(cache.glob("*/matmul_kernel.json"))
    data = json.loads(meta.read_text())
    data["num_warps"] = "x"
    meta.write_text(json.dumps(data))
    for args in ([cache, "--kernel", "matmul_kernel"], [cache], [meta.parent], [meta]):
        result = invoke("open", *args)
        assert result.exit_code == ExitCode.BAD_INPUT_FILE, (args, result.output)
        assert "num_warps" in result.output and "Traceback" not in result.output


# --------------------------------------------------------------------------
# 2. An Inductor cache without its triton/ folder
# --------------------------------------------------------------------------


def test_inductor_cache_without_triton_folder_says_where_the_kernels_are(tmp_path):
    folder = tmp_path / "torchinductor_me"
    (folder / "ab").mkdir(parents=True)
    (folder / "ab" / "cabcdef.py").write_text("# generated by Inductor\n")
    (folder / "fxgraph").mkdir()
    result = invoke("open", folder)
    assert result.exit_code == ExitCode.BAD_INPUT_FILE, result.output
    said = " ".join(result.output.split())
    assert "Inductor cache without a triton/ folder" in said and "~/.triton/cache" in said
    assert "1 generated module" in said
    # a foreign folder's hint names Inductor caches only with their triton/ folder
    other = tmp_path / "other"
    (other / "sub").mkdir(parents=True)
    (other / "sub" / "notes.txt").write_text("x")
    assert "that holds a triton/ folder" in " ".join(invoke("open", other).output.split())


# --------------------------------------------------------------------------
# 8. What `open` accepts, and what it refuses
# --------------------------------------------------------------------------


def test_open_reads_mlir_modules(found, tmp_path):
    for ext, stage in (("ttgir", "ttgir"), ("ttir", "ttir")):
        path = tmp_path / f"{ext}.mlir"
        shutil.copy(found["dump8"] / f"matmul_kernel.{ext}", path)
        art = artifact(path)
        assert stage in art["stages"] and art["spec"]["kernel"] == "matmul_kernel"
    assert artifact(tmp_path / "ttgir.mlir")["spec"]["num_warps"] == 8
    (tmp_path / "other.mlir").write_text("func.func @f() { return }\n")
    assert invoke("open", tmp_path / "other.mlir").exit_code == ExitCode.BAD_INPUT_FILE


def test_open_bounds_file_sizes_as_show_does(found, tmp_path, monkeypatch):
    from tritonscope.inputs import sources
    from tritonscope.inputs import limits

    assert limits.MAX_REPORT_BYTES == 256 << 20                 # the bound `show` keeps, and `open` with it
    lone = _lone(found, tmp_path, "ptx")
    monkeypatch.setattr(limits, "MAX_REPORT_BYTES", 1000)        # the PTX is about 20 kB
    for path in (lone, found["dump8"]):
        result = invoke("open", path)
        assert result.exit_code == ExitCode.BAD_INPUT_FILE, result.output
        assert "are not read" in " ".join(result.output.split())
    with pytest.raises(Exception, match="not read"):
        sources.check_size(lone)


def test_open_refuses_an_emit_folder_missing_files(found, tmp_path):
    out = tmp_path / "emitted"
    assert invoke("open", found["cache8"], "--emit", out, "--stage", "none").exit_code == 0
    assert artifact(out)["spec"]["num_warps"] == 8              # whole: opens
    listed = json.loads((out / "matmul_kernel.json").read_text())["tritonscope"]["files"]
    assert len(listed) == 7 and "matmul_kernel.cubin" in listed
    for name in ("matmul_kernel.ptx", "matmul_kernel.cubin", "matmul_kernel.sass"):
        (out / name).unlink()
    result = invoke("open", out)
    assert result.exit_code == ExitCode.BAD_INPUT_FILE, result.output
    said = " ".join(result.output.split())
    assert "lacks 3 of its 7 files" in said and "matmul_kernel.cubin" in said
    (out / "matmul_kernel.ttir").write_text("truncated")
    assert "another size" in " ".join(invoke("open", out).output.split())


def test_recompile_diff_save_writes_the_diff(found, tmp_path):
    saved = tmp_path / "d.json"
    result = invoke("open", found["cache8"], "--recompile", "--num-warps", "4", "--diff", "--save", saved)
    assert result.exit_code == 0, result.output
    data = json.loads(saved.read_text())
    assert any(not s["identical"] for s in data["stages"])
    bad = invoke("open", found["cache8"], "--recompile", "--diff", "--save", tmp_path / "d.md")
    assert bad.exit_code == ExitCode.OUTPUT_ERROR and not (tmp_path / "d.md").exists()


# --------------------------------------------------------------------------
# 7. A capture of two autotunings
# --------------------------------------------------------------------------


def test_capture_records_each_autotuning_even_with_the_same_best(tmp_path, monkeypatch):
    """Triton 3.6 has no autotuning listener: capture wraps Autotuner.run; two tunings (two keys) that choose
    the same Config object are two runs, and the listing says 2."""
    from types import SimpleNamespace

    from triton.runtime import autotuner

    from tritonscope.inputs.capture import _Recorder

    config = autotuner.Config({"BLOCK": 256}, num_warps=2, num_stages=3)

    def tuning_run(self, n):  # what Autotuner.run does: benchmark a key it has not seen, cache the best
        key = (n,)
        if key not in self.cache:
            self.configs_timings = {config: [0.004]}
            self.bench_time = 0.5
            self.cache[key] = config
        self.best_config = self.cache[key]

    monkeypatch.setattr(autotuner.Autotuner, "run", tuning_run)
    recorder = _Recorder(tmp_path)
    recorder._install_autotune(SimpleNamespace(autotuning=SimpleNamespace()))   # no listener: the 3.6 path
    tuner = SimpleNamespace(cache={}, fn=SimpleNamespace(fn=SimpleNamespace(__name__="scale_kernel")))
    for n in (4096, 4096, 65536):
        autotuner.Autotuner.run(tuner, n)
    assert [t["key"] for t in recorder.tunings] == ["(4096,)", "(65536,)"]
    data = json.loads(next(tmp_path.glob("autotune-*.json")).read_text())
    assert len(data["tunings"]) == 2


# --------------------------------------------------------------------------
# 7. explain: tensor cores of a lone cubin, occupancy fixes that name every limit
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def grouped_cubin(tmp_path_factory) -> Path:
    """A pipelined sm_90a matmul's cubin alone: ptxas's line info ties its HGMMAs to the loop and load lines too."""
    out = tmp_path_factory.mktemp("grouped")
    result = invoke("compile", "matmul_grouped", "--arch", "sm_90a", "--emit", out / "e", "--stage", "none")
    assert result.exit_code == 0, result.output
    lone = out / "lone.cubin"
    shutil.copy(out / "e" / "matmul_grouped_kernel.cubin" if (out / "e" / "matmul_grouped_kernel.cubin").exists()
                else next((out / "e").glob("*.cubin")), lone)
    shutil.copy(next((out / "e").glob("*.sass")), out / "lone.sass")
    return lone


def _tensor_verdicts(path) -> list[dict]:
    result = invoke("explain", path, "--json")
    assert result.exit_code == 0, result.output
    return [v for v in json.loads(result.output)["verdicts"] if v["kind"] == "tensor cores"]


def test_lone_cubin_ties_tensor_cores_to_the_dot_line_only(grouped_cubin):

    sass = grouped_cubin.with_suffix(".sass").read_text()
    source = (Path(__file__).parent.parent / "samples" / "matmul_grouped.py").read_text().splitlines()
    named = {int(m.group(1)) for m in re.finditer(r'//## File "[^"]*matmul_grouped\.py", line (\d+)\s*\n'
                                                  r'(?:\s*//##.*\n)*\s*/\*[0-9a-f]+\*/\s+HGMMA', sass)}
    dot_line = next(i + 1 for i, t in enumerate(source) if "tl.dot(" in t)
    verdicts = _tensor_verdicts(grouped_cubin)
    assert [v["python_lines"] for v in verdicts] == [[dot_line]]
    assert verdicts[0]["facts"]["count"] == sass.count("HGMMA.")
    if len(named) > 1:  # ptxas spread them (it does on 3.6 and 3.9): the others are said to hold no dot
        assert "hold no tl.dot" in verdicts[0]["title"]


def test_without_the_source_the_spread_lines_are_not_claimed(grouped_cubin, tmp_path):
    sass = tmp_path / "k.sass"
    sass.write_text(re.sub(r'//## File "[^"]*"', '//## File "/nowhere/mg.py"', grouped_cubin.with_suffix(".sass")
                           .read_text()))
    verdicts = _tensor_verdicts(sass)
    assert len(verdicts) == 1 and verdicts[0]["python_lines"] in ([], [verdicts[0]["facts"]["python_line"]])
    if verdicts[0]["facts"].get("line_info_lines"):
        assert "cannot be told" in verdicts[0]["title"]


def test_occupancy_fix_names_every_limit():
    from types import SimpleNamespace

    from tritonscope.analyses.explain import verdict_occupancy
    from tritonscope.analyses.summary import Occupancy

    # 256 threads, 100,000 B of shared memory, 128 registers on sm_90a: shared and registers both allow 2
    occ = Occupancy(2, 16, 0.25, "shared", {"threads": 8, "blocks": 32, "shared": 2, "registers": 2})
    summary = SimpleNamespace(occupancy=occ, arch="sm_90a", threads_per_block=256, registers=128,
                              shared=SimpleNamespace(dynamic=100_000))
    ctx = SimpleNamespace(summary=summary, spec=SimpleNamespace(num_warps=8), compile=lambda change: None)
    v = verdict_occupancy(ctx)
    assert "3 blocks per SM need at most" in v.fix and "registers also cap it at 2" in v.fix
    assert "--maxnreg 80" in v.fix and v.facts["also_limited_by"] == {"registers": 2}
    # a limit no change to the kernel's resources lifts: said, no fix for the others offered
    occ = Occupancy(2, 16, 0.25, "shared", {"threads": 2, "blocks": 32, "shared": 2, "registers": 4})
    v = verdict_occupancy(SimpleNamespace(summary=SimpleNamespace(**{**vars(summary), "occupancy": occ}),
                                          spec=ctx.spec, compile=ctx.compile))
    assert "cannot fit" in v.fix and "threads limit" in v.fix and "shared memory" not in v.fix


# --------------------------------------------------------------------------
# 6. A recompile whose PTX ISA version differs from the original's
# --------------------------------------------------------------------------


def test_recompile_warns_when_the_ptx_version_differs(found, tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(found["cache8"], cache)
    ptx = next(cache.glob("*/matmul_kernel.ptx"))
    now = re.search(r"^\.version (\d+\.\d+)", ptx.read_text(), re.M).group(1)
    ptx.write_text(re.sub(r"^\.version \d+\.\d+", ".version 9.9", ptx.read_text(), flags=re.M))
    art = artifact(cache, "--recompile")
    said = [w for w in art["warnings"] if "`.version 9.9`" in w]
    assert said and f"`.version {now}`" in said[0]
    # the same PTX version: no such warning
    assert not any("`.version" in w for w in artifact(found["cache8"], "--recompile")["warnings"])


def test_a_dump_without_its_metadata_shows_shared_memory_and_occupancy_as_unknown(tmp_path):
    """No figure from an unknown: without Triton's metadata .json the shared memory a launch allocates is not
    recorded, so neither it nor the occupancy is computed from a placeholder 0 bytes, in the view or --json."""
    import json as _json

    from typer.testing import CliRunner

    from tritonscope.cli import app

    run = CliRunner()
    folder = tmp_path / "dump"
    made = run.invoke(app, ["compile", "matmul", "--block", "16", "--arch", "sm_90a", "--emit", str(folder),
                            "--stage", "none"])
    assert made.exit_code == 0, made.output
    for meta in folder.glob("*.json"):
        meta.unlink()
    shown = run.invoke(app, ["open", str(folder), "--stage", "none", "--width", "200", "--no-color"])
    assert shown.exit_code == 0, shown.output
    assert "shared memory  unknown:" in shown.output and "occupancy      unknown:" in shown.output
    assert "blocks/SM" not in shown.output
    data = _json.loads(run.invoke(app, ["open", str(folder), "--stage", "none", "--json"]).output)
    assert data["summary"]["occupancy"] is None and set(data["summary"]["unknown"]) == {"shared", "occupancy"}
