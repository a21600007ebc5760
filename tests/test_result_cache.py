"""tritonscope's result cache: a repeat never enters Triton, and any change to an input is a miss.

Each test that compiles uses a small kernel of its own in tmp_path (with a
@triton.jit helper in a module beside it), a private TRITONSCOPE_CACHE_DIR,
and counts the compiles that reach compile_artifact.  Whether an entry
answers is asked of `lookup` directly where that is enough, so one compile
serves several changes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tritonscope.pipeline import result_cache
from tritonscope.inputs.kernels import Request

ROOT = Path(__file__).resolve().parent.parent

KERNEL = """\
import triton
import triton.language as tl
from {helper} import twice


@triton.jit
def add_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, twice(x), mask=mask)
"""

HELPER = """\
import triton


@triton.jit
def twice(x):
    return x * 2
"""


@pytest.fixture
def kernel(tmp_path, monkeypatch):
    """(kernel file, helper file, request maker, compile counter) with the cache on and private."""
    import importlib

    compile_mod = importlib.import_module("tritonscope.pipeline.triton_compile")
    helper = f"rc_helper_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{helper}.py").write_text(HELPER)
    path = tmp_path / "k.py"
    path.write_text(KERNEL.format(helper=helper))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRITONSCOPE_RESULT_CACHE", raising=False)
    monkeypatch.delenv("TRITON_ALWAYS_COMPILE", raising=False)
    monkeypatch.delenv("TRITON_DEFAULT_FP_FUSION", raising=False)
    # Other work on this tree (an edit of tritonscope's sources or of another
    # test module) must not turn a hit into a miss half way through a test:
    # pin tritonscope's stamp, and keep the dependencies found under tmp_path.
    monkeypatch.setattr(result_cache, "tritonscope_build", lambda: {"version": "test", "stamp": "pinned"})
    real_modules = result_cache.user_module_files
    monkeypatch.setattr(result_cache, "user_module_files",
                        lambda: [f for f in real_modules() if f.startswith(str(tmp_path.resolve()))])
    compiles = []
    real_compile = compile_mod.compile_artifact

    def counting(loaded, **kw):
        compiles.append(loaded.spec.label())
        return real_compile(loaded, **kw)

    monkeypatch.setattr(compile_mod, "compile_artifact", counting)

    def request(**kw) -> Request:
        fields = {"constexprs": {"BLOCK": "64"},
                  "args": {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "1024"}, "arch": "sm_80"}
        fields.update(kw)
        return Request(f"{path}:add_kernel", **fields)

    yield path, tmp_path / f"{helper}.py", request, compiles
    for name in [n for n in sys.modules if n.startswith(("_tritonscope_user_", helper))]:
        del sys.modules[name]


def compile_once(request):
    from tritonscope.commands.running import compile_request
    from tritonscope.core.env import Env

    return compile_request(request, Env(), progress=False).artifact


def test_a_repeat_is_answered_from_the_cache_with_the_same_artifact(kernel):
    path, _, request, compiles = kernel
    first = compile_once(request())
    again = compile_once(request())
    assert compiles == ["BLOCK=64 w4 s3 sm_80"]
    assert again == first
    assert again.stages["sass"] and again.specialization and again.resources.registers


def test_every_input_of_the_key_is_a_miss_when_it_changes(kernel, monkeypatch):
    path, helper, request, compiles = kernel
    compile_once(request())
    assert result_cache.lookup(request(), "sm_80") is not None

    changes = {
        "a constexpr": request(constexprs={"BLOCK": "128"}),
        "an argument": request(args={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "1000"}),
        "an argument's dtype": request(args={"x_ptr": "*fp16", "out_ptr": "*fp32", "n": "1024"}),
        "the warps": request(num_warps=8),
        "the stages": request(num_stages=2),
        "a launch option": request(options={"maxnreg": 64}),
    }
    for what, changed in changes.items():
        assert result_cache.lookup(changed, "sm_80") is None, what
    assert result_cache.lookup(request(), "sm_90a") is None, "the arch"

    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "0")
    assert result_cache.lookup(request(), "sm_80") is None, "a knob Triton keys on"
    monkeypatch.delenv("TRITON_DEFAULT_FP_FUSION")
    monkeypatch.setenv("MLIR_ENABLE_SOMETHING_NEW", "1")
    assert result_cache.lookup(request(), "sm_80") is None, "a knob-looking variable"
    monkeypatch.delenv("MLIR_ENABLE_SOMETHING_NEW")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(path.parent / "elsewhere"))
    assert result_cache.lookup(request(), "sm_80") is not None, "where Triton caches changes nothing"

    real_build = result_cache.triton_build()
    monkeypatch.setattr(result_cache, "triton_build", lambda: dict(real_build, version="3.99.0"))
    assert result_cache.lookup(request(), "sm_80") is None, "another Triton version"
    monkeypatch.setattr(result_cache, "triton_build", lambda: dict(real_build, stamp="rebuilt"))
    assert result_cache.lookup(request(), "sm_80") is None, "another build of the same version"
    monkeypatch.setattr(result_cache, "triton_build", lambda: real_build)
    monkeypatch.setattr(result_cache, "tritonscope_build", lambda: {"version": "9.9", "stamp": "pinned"})
    assert result_cache.lookup(request(), "sm_80") is None, "another tritonscope"
    monkeypatch.setattr(result_cache, "tritonscope_build", lambda: {"version": "test", "stamp": "pinned"})
    assert result_cache.lookup(request(), "sm_80") is not None, "everything back as it was"

    source = path.read_text()
    path.write_text(source + "\n# an edit\n")
    assert result_cache.lookup(request(), "sm_80") is None, "the kernel file"
    path.write_text(source)
    text = helper.read_text()
    helper.write_text(text.replace("x * 2", "x + x"))
    assert result_cache.lookup(request(), "sm_80") is None, "a module the kernel imports"
    helper.write_text(text)
    assert result_cache.lookup(request(), "sm_80") is not None
    assert compiles == ["BLOCK=64 w4 s3 sm_80"]


def test_a_changed_constexpr_compiles_and_both_configs_are_kept(kernel):
    _, _, request, compiles = kernel
    a = compile_once(request())
    b = compile_once(request(constexprs={"BLOCK": "128"}))
    assert b.spec.constexprs == {"BLOCK": 128} and "128" in b.stages["ttir"]
    assert compile_once(request()) == a and compile_once(request(constexprs={"BLOCK": "128"})) == b
    assert compiles == ["BLOCK=64 w4 s3 sm_80", "BLOCK=128 w4 s3 sm_80"]


def test_the_entry_names_the_helper_file_and_the_knobs_triton_keys_on(kernel):
    path, helper, request, _ = kernel
    compile_once(request())
    entry = json.loads(result_cache.entry_path(result_cache.key_parts(request(), "sm_80")).read_text())
    assert [Path(f).name for f, _ in entry["deps"]] == [helper.name]
    assert entry["parts"]["kernel"]["path"] == str(path.resolve())
    knobs = result_cache.knob_names(result_cache.triton_build())
    # asked of Triton once (get_cache_invalidating_env_vars), kept for this build
    assert {"TRITON_DEFAULT_FP_FUSION", "DISABLE_PTXAS_OPT", "TRITON_DISABLE_LINE_INFO"} <= set(knobs)
    assert set(knobs) <= set(entry["parts"]["env"])


def test_no_cache_compiles_again_and_a_damaged_entry_is_a_miss(kernel, monkeypatch):
    from tritonscope.commands.running import compile_request
    from tritonscope.core.env import Env

    _, _, request, compiles = kernel
    compile_once(request())
    compile_request(request(), Env(), progress=False, cache=False)
    assert len(compiles) == 2
    entry = result_cache.entry_path(result_cache.key_parts(request(), "sm_80"))
    entry.write_text(entry.read_text()[:100])
    assert result_cache.lookup(request(), "sm_80") is None
    compile_once(request())  # and the next compile keeps a whole entry again
    assert result_cache.lookup(request(), "sm_80") is not None
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    compile_once(request())
    assert len(compiles) == 4


def test_no_entry_without_the_recorded_knob_list_or_without_sass(kernel, monkeypatch):
    _, _, request, compiles = kernel
    artifact = compile_once(request())
    for knobs in Path(os.environ["TRITONSCOPE_CACHE_DIR"]).glob("results/triton-*.json"):
        knobs.unlink()
    # which variables matter is unknown until Triton is asked again: a miss, not a guess
    assert result_cache.lookup(request(), "sm_80") is None
    partial = result_cache.decode_artifact(result_cache.encode_artifact(artifact))
    del partial.stages["sass"]
    assert result_cache.store(request(constexprs={"BLOCK": "32"}), "sm_80", None, partial) is None


def test_artifacts_round_trip_exactly(compiled):
    artifact = compiled("matmul", block=16)
    data = json.loads(json.dumps(result_cache.encode_artifact(artifact)))
    back = result_cache.decode_artifact(data)
    assert back == artifact
    assert isinstance(back.spec.shape, tuple) and isinstance(back.specialization[0].attrs, tuple)
    with pytest.raises(result_cache.NotEncodable):
        result_cache.encode_artifact(type(artifact)(**{**artifact.__dict__, "metadata": {"x": b"bytes"}}))


def test_jit_dependencies_follow_helpers_through_modules(tmp_path, monkeypatch):
    from tritonscope import triton_api
    from tritonscope.inputs.kernels import load_module

    (tmp_path / "rc_deps_a.py").write_text(HELPER)
    (tmp_path / "rc_deps_k.py").write_text(KERNEL.replace("from {helper} import twice", "import rc_deps_a")
                                           .replace("twice(x)", "rc_deps_a.twice(x)"))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        module = load_module(tmp_path / "rc_deps_k.py")
        files = triton_api.jit_dependency_files(triton_api.jit_function(module.add_kernel))
    finally:
        for name in [n for n in sys.modules if n.startswith(("_tritonscope_user_", "rc_deps_"))]:
            del sys.modules[name]
    assert sorted(Path(f).name for f in files) == ["rc_deps_a.py", "rc_deps_k.py"]


def test_a_warm_repeat_of_the_cli_never_imports_triton(tmp_path):
    """The whole point: the second run answers before Triton is imported, with the same output."""
    env = dict(os.environ, TRITONSCOPE_CACHE_DIR=str(tmp_path), TRITONSCOPE_RESULT_CACHE="1", COLUMNS="100")
    env.pop("TRITON_ALWAYS_COMPILE", None)
    program = ("import sys\nfrom tritonscope.cli import main\n"
               "sys.argv = ['tritonscope', 'compile', 'matmul', '--block', '16', '--arch', 'sm_90', '--no-color']\n"
               "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
               "print('TRITON-IMPORTED' if 'triton' in sys.modules else 'TRITON-NOT-IMPORTED', file=sys.stderr)\n")

    def run():
        done = subprocess.run([sys.executable, "-c", program], env=env, cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout, done.stderr

    first, err = run()
    assert "TRITON-IMPORTED" in err
    again, err = run()
    if "TRITON-IMPORTED" in err:  # tritonscope's own sources were edited in between (a shared tree): once more
        again, err = run()
    assert "TRITON-NOT-IMPORTED" in err
    # the same output, but for the summary's hash row: the repeat says it was not compiled now (issue 33)
    rows = [(a, b) for a, b in zip(first.splitlines(), again.splitlines()) if a != b]
    assert len(first.splitlines()) == len(again.splitlines()) and len(rows) == 1, rows
    assert "compiled in" in rows[0][0] and "replayed" in rows[0][1] and "compiled in" not in rows[0][1]
    assert "SASS" in again and "mma" in again


def test_the_key_is_read_without_importing_triton(tmp_path):
    program = ("import sys\nfrom tritonscope.pipeline import result_cache\nfrom tritonscope.inputs.kernels import Request\n"
               "b = result_cache.triton_build()\n"
               "assert b['version'] and len(b['stamp']) == 64, b\n"
               "p = result_cache.key_parts(Request('matmul', block=16), 'sm_90a', knobs=[])\n"
               "assert p['kernel']['path'].endswith('matmul.py'), p\n"
               "assert 'triton' not in sys.modules and 'torch' not in sys.modules\n")
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True,
                          env=dict(os.environ, TRITONSCOPE_CACHE_DIR=str(tmp_path)))
    assert done.returncode == 0, done.stderr


def test_the_entry_travels_with_the_compile_and_keeps_its_analysis(kernel):
    """pipeline.compile_path: a compile gives its artifact with its entry; the analysis goes into that entry (no
    table keyed by id() on the side), and the next repeat reads it from there."""
    from tritonscope.commands.running import analysis_of, compile_request
    from tritonscope.core.env import Env

    _, _, request, compiles = kernel
    fresh = compile_request(request(), Env(), progress=False)
    assert fresh.loaded is not None and fresh.entry is not None and fresh.entry.analysis() is None
    assert fresh.config.arch == "sm_80"
    analysis_of(fresh)
    again = compile_request(request(), Env(), progress=False)
    assert again.loaded is None and again.entry is not None and compiles == ["BLOCK=64 w4 s3 sm_80"]
    assert again.entry.analysis()["artifact"]["spec"]["kernel"] == "add_kernel"
    assert analysis_of(again).summary.registers == analysis_of(fresh).summary.registers
    assert not hasattr(result_cache, "_ENTRIES")


def test_a_command_records_only_its_own_entries(kernel):
    """replay keeps a command's output only when the command used exactly one entry: recording() sees the
    entries looked up or stored inside it, not those of earlier commands in the same process."""
    _, _, request, _ = kernel
    compile_once(request())
    with result_cache.recording() as used:
        compile_once(request())
    assert len(used) == 1 and used[0].data["parts"]["request"]["arch"] == "sm_80"
    with result_cache.recording() as used:
        pass
    assert used == []
