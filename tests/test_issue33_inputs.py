"""Issue 33, hostile user: inputs that ended in exit 1 ("a tritonscope bug") or in Triton's own error.

Each now gets one message and its documented exit code, before any compile where it can be checked first:
a 5000-digit dim, offset or integer in --arg, an integer Triton cannot pass, `-c enable_fp_fusion=banana`,
`versions --timeout nan`, `versions --record` onto a file or into /proc, a tampered --replay record (a deep
manifest, an error that is a string, a compile with no stages, a gzip bomb), a managed environment whose
triton was removed or whose tritonscope-env.json is damaged, and an output name too long for the filesystem.
"""

from __future__ import annotations

import gzip
import importlib
import json
import shutil
import sys
import time
import zlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tritonscope.cli import app

runner = CliRunner()
RECORD = Path(__file__).parent / "data" / "versions" / "matmul_3.2_3.3"
DIGITS = "9" * 5000


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def _one_clean_error(result, code: int, words: str) -> None:
    assert result.exit_code == code, result.output
    assert words in " ".join(result.output.split()), result.output
    assert "Traceback" not in result.output and "unexpected" not in result.output and "bug" not in result.output
    assert len(result.output) < 2000, result.output  # a 5000-digit value is not echoed whole


def _no_compile(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("a compile started before the values were checked")

    for module, name in (("pipeline.triton_compile", "compile_artifact"), ("pipeline.triton_compile", "_compile"),
                         ("pipeline.child_compile", "compile_elsewhere"), ("measure.sweep", "run_sweep"),
                         ("versions", "compare_versions"), ("versions.envs", "resolve"),
                         ("versions.envs", "create_env")):
        monkeypatch.setattr(importlib.import_module(f"tritonscope.{module}"), name, boom)


# --------------------------------------------------------------------------
# --arg: dims, offsets and integers too large (exit 2, before any compile)
# --------------------------------------------------------------------------

HUGE_ARGS = [
    (f"a_ptr=fp16[{DIGITS},32]", "the dim"),
    (f"a_ptr=fp16[32,32]+{DIGITS}", "the offset"),
    (f"a_ptr=*fp16+{DIGITS}", "the offset"),
    (f"a_ptr=desc(fp16[{DIGITS},64],[64,64])", "the dim"),
    ("a_ptr=fp16[32,32]+100000000000000000000", "the offset"),        # 1e20: the address does not fit 64 bits
    ("a_ptr=fp16[4611686018427387904,4]", "spans 2**63 bytes or more"),  # each dim fits, the tensor does not
    (f"M={DIGITS}", "does not fit 64 bits"),
    (f"M={2**64}", "does not fit 64 bits"),
    (f"M={-2**63 - 1}", "does not fit 64 bits"),
]


@pytest.mark.parametrize("command", ["compile", "sweep", "diff"])
@pytest.mark.parametrize("arg,words", HUGE_ARGS)
def test_a_huge_dim_offset_or_integer_in_arg_is_refused_before_any_compile(monkeypatch, command, arg, words):
    _no_compile(monkeypatch)
    extra = {"compile": [], "sweep": ["-c", "BLOCK=16,32"], "diff": ["--a", "BLOCK=16", "--b", "BLOCK=32"]}[command]
    result = invoke(command, "matmul", *extra, "--arg", arg)
    _one_clean_error(result, 2, words)
    assert f"--arg {arg.partition('=')[0]}=" in result.output


def test_the_integers_triton_passes_are_accepted():
    from tritonscope.inputs.kernels import check_arg_text

    # i32, i64 and (from 2**63 to 2**64-1) u64: what Triton's specializer takes
    for value in (0, -2**63, 2**63 - 1, 2**63, 2**64 - 1):
        assert check_arg_text("M", str(value)) == value
    assert check_arg_text("x", "fp16[32,32]+8").offset == 8
    assert check_arg_text("x", "fp16[00000000000000000000000032]").shape == (32,)  # leading zeros are no size


@pytest.mark.parametrize("value,words", [
    ("banana", "-c enable_fp_fusion=banana: enable_fp_fusion is on or off: give true or false"),
    ("1", "-c enable_fp_fusion=1: enable_fp_fusion is on or off"),
])
def test_a_bool_launch_option_gets_a_bool_before_the_compile(monkeypatch, value, words):
    _no_compile(monkeypatch)
    _one_clean_error(invoke("compile", "matmul", "-c", f"enable_fp_fusion={value}"), 2, words)


def test_launch_option_types_are_checked():
    from tritonscope.core.errors import UsageError
    from tritonscope.inputs.kernels import check_launch_options

    assert check_launch_options({"enable_fp_fusion": False, "launch_pdl": True, "waves_per_eu": 2}) == \
        {"enable_fp_fusion": False, "launch_pdl": True, "waves_per_eu": 2}
    for bad in ({"launch_pdl": "yes"}, {"debug": 1}, {"waves_per_eu": "two"}, {"kpack": 2.5}, {"kpack": True},
                {"min_shared_mem": 2**70}):
        with pytest.raises(UsageError):
            check_launch_options(bad)


# --------------------------------------------------------------------------
# versions: --timeout, --record checked up front
# --------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["nan", "inf"])
def test_versions_timeout_nan_or_inf_is_refused(monkeypatch, value):
    _no_compile(monkeypatch)
    _one_clean_error(invoke("versions", "matmul", "--a", "3.6.0", "--timeout", value), 2, f"--timeout {value}")


def test_versions_record_onto_a_file_or_into_proc_fails_before_any_compile(monkeypatch, tmp_path):
    _no_compile(monkeypatch)
    afile = tmp_path / "afile"
    afile.write_text("x")
    _one_clean_error(invoke("versions", "matmul", "--a", "3.6.0", "--record", afile), 8,
                     "it is a file, and the record is a folder")
    _one_clean_error(invoke("versions", "matmul", "--a", "3.6.0", "--record", afile / "sub"), 8, "is not a folder")
    _one_clean_error(invoke("versions", "matmul", "--a", "3.6.0", "--record", "/proc/x"), 8,
                     "Cannot write /proc/x: no file can be made in /proc")
    rec = tmp_path / "rec"
    shutil.copytree(RECORD, rec)
    _one_clean_error(invoke("versions", "matmul", "--a", "3.6.0", "--record", rec), 8,
                     "already holds a record (manifest.json); not overwriting it")
    assert afile.read_text() == "x"


def test_versions_record_is_written_into_a_new_or_forced_folder(tmp_path):
    from tritonscope import versions as V
    from tritonscope.versions.run import Job, Side

    jobs = [Job("k", "sm_90a", {})]
    results = {(0, 0): {"error": {"message": "boom"}}, (1, 0): {"error": {"message": "boom"}}}
    folder = V.write_record(tmp_path / "new" / "rec", jobs, [Side("A", None), Side("B", None)], results)
    assert json.loads((folder / "manifest.json").read_text())["jobs"][0]["key"] == "k"


# --------------------------------------------------------------------------
# --replay of a tampered record: exit 7 with a message
# --------------------------------------------------------------------------

def _record(tmp_path, change) -> Path:
    folder = tmp_path / "rec"
    shutil.copytree(RECORD, folder)
    change(folder)
    return folder


def _manifest(folder: Path, edit) -> None:
    m = json.loads((folder / "manifest.json").read_text())
    edit(m)
    (folder / "manifest.json").write_text(json.dumps(m))


def _artifact(folder: Path, edit) -> None:
    path = folder / "000-a.json.gz"
    a = json.loads(gzip.decompress(path.read_bytes()))
    edit(a)
    path.write_bytes(gzip.compress(json.dumps(a).encode()))


TAMPERED = {
    "deep manifest": (lambda f: (f / "manifest.json").write_text("[" * 100_000 + "]" * 100_000),
                      "nested too deeply"),
    "error is a string": (lambda f: _manifest(f, lambda m: m["jobs"][0]["sides"].__setitem__(0, {"error": "boom"})),
                          "jobs[0].sides[0].error is a str"),
    "error message is a number": (lambda f: _manifest(f, lambda m: m["jobs"][0]["sides"].__setitem__(
        0, {"error": {"message": 7}})), "jobs[0].sides[0].error.message is a int"),
    "no stages": (lambda f: _artifact(f, lambda a: a.pop("stages")), "'stages'"),
    "empty stages": (lambda f: _artifact(f, lambda a: a.__setitem__("stages", {})), "has no stages"),
    "a stage that is no text": (lambda f: _artifact(f, lambda a: a["stages"].__setitem__("ttir", 5)), "stage 'ttir'"),
    "no sides": (lambda f: _manifest(f, lambda m: m["jobs"][0].__setitem__("sides", [])), "has 0 sides"),
    "a path for a file": (lambda f: _manifest(f, lambda m: m["jobs"][0]["sides"].__setitem__(
        0, {"artifact": "/etc/passwd"})), "is not a file name in the record's folder"),
    "not gzip": (lambda f: (f / "000-a.json.gz").write_bytes(b"plain"), "not a readable versions record"),
    "a cut gzip": (lambda f: (f / "000-a.json.gz").write_bytes((f / "000-a.json.gz").read_bytes()[:100]),
                   "not a readable versions record"),
}


@pytest.mark.parametrize("case", list(TAMPERED))
def test_a_tampered_record_is_a_bad_input_file(tmp_path, case):
    change, words = TAMPERED[case]
    _one_clean_error(invoke("versions", "--replay", _record(tmp_path, change)), 7, words)


def test_a_gzip_bomb_in_a_record_is_stopped_at_the_size_limit(tmp_path, monkeypatch):
    """1.5 MB of gzip that grows to 1.5 GB: decompressed as a stream and stopped at the limit (here 4 MB)."""
    def bomb(folder: Path) -> None:
        c = zlib.compressobj(9, zlib.DEFLATED, 31)
        chunk = b"a" * (1 << 20)
        parts = [c.compress(b'{"x": "')] + [c.compress(chunk) for _ in range(1500)] + [c.compress(b'"}'), c.flush()]
        (folder / "000-a.json.gz").write_bytes(b"".join(parts))

    folder = _record(tmp_path, bomb)
    assert (folder / "000-a.json.gz").stat().st_size < 2 << 20
    monkeypatch.setenv("TRITONSCOPE_MAX_REPORT_MB", "4")
    started = time.perf_counter()
    result = invoke("versions", "--replay", folder)
    _one_clean_error(result, 7, "its gzip data grows past the limit")
    assert "TRITONSCOPE_MAX_REPORT_MB" in result.output
    assert time.perf_counter() - started < 20


def test_an_untouched_record_still_replays():
    result = invoke("versions", "--replay", RECORD)
    assert result.exit_code == 0, result.output
    assert "matmul" in result.output


# --------------------------------------------------------------------------
# Managed environments: damaged ones get a message (no download here: the steps that would are faked)
# --------------------------------------------------------------------------

def _fake_env(root: Path, version: str, *, meta: str | None, triton: bool) -> Path:
    folder = root / "triton-envs" / f"triton-{version}"
    (folder / "bin").mkdir(parents=True)
    python = folder / "bin" / "python"
    python.write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    python.chmod(0o755)
    site = folder / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    if triton:
        (site / "triton").mkdir()
        (site / "triton" / "__init__.py").write_text("")
    if meta is not None:
        (folder / "tritonscope-env.json").write_text(meta)
    return folder


GOOD_META = json.dumps({"requested": "3.6.0", "triton": "3.6.0", "python": "3.11", "backends": ["nvidia", "amd"],
                        "created": "2025-01-01T00:00:00"})


def _never_install(monkeypatch):
    from tritonscope.versions import envs

    def boom(*a, **k):
        raise AssertionError("an environment would be made (pip): the damaged one was not refused")

    monkeypatch.setattr(envs, "create_env", boom)


def test_compile_with_an_environment_whose_triton_was_removed(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path))
    _never_install(monkeypatch)
    _fake_env(tmp_path, "3.6.0", meta=GOOD_META, triton=False)
    result = invoke("compile", "matmul", "--triton", "3.6.0")
    _one_clean_error(result, 3, "The cached environment for Triton 3.6.0 is damaged: its triton package is gone")
    assert "versions --add 3.6.0" in " ".join(result.output.split())
    listed = invoke("versions", "--envs")
    assert "broken" in listed.output and "ready" not in listed.output


def test_compile_with_an_environment_whose_record_is_damaged(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path))
    _never_install(monkeypatch)
    _fake_env(tmp_path, "3.6.0", meta="{not json", triton=True)
    _one_clean_error(invoke("compile", "matmul", "--triton", "3.6.0"), 3,
                     "its tritonscope-env.json is missing or unreadable")


def test_versions_add_over_a_damaged_environment_makes_it_again(tmp_path, monkeypatch):
    """The old code ran pip into a new folder, then could not rename it over the damaged one
    (OSError: Directory not empty, exit 1).  venv, pip and the probe are faked: nothing is downloaded."""
    import subprocess
    import venv

    from tritonscope.versions import envs

    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path))
    old = _fake_env(tmp_path, "3.6.0", meta="{damaged", triton=True)
    (old / "stale").write_text("left by the damaged environment")

    def fake_venv(self, folder):
        _fake_env(Path(folder).parent, "x", meta=None, triton=True)
        shutil.rmtree(folder)
        shutil.move(str(Path(folder).parent / "triton-envs" / "triton-x"), folder)

    class FakePip:
        def __init__(self, cmd, **kw):
            assert "triton==3.6.0" in cmd
            self.stdout, self.returncode = iter(["Successfully installed triton-3.6.0\n"]), 0

        def wait(self):
            return 0

        def kill(self):
            pass

    monkeypatch.setattr(venv.EnvBuilder, "create", fake_venv)
    monkeypatch.setattr(subprocess, "Popen", FakePip)
    monkeypatch.setattr(envs, "probe", lambda python, **kw: {"triton": "3.6.0", "python": "3.11",
                                                              "backends": ["amd", "nvidia"], "backends_dir": ""})
    result = invoke("versions", "--add", "3.6.0")
    assert result.exit_code == 0, result.output
    assert "damaged" in result.output and "making it again" in result.output
    folder = tmp_path / "triton-envs" / "triton-3.6.0"
    assert json.loads((folder / "tritonscope-env.json").read_text())["triton"] == "3.6.0"
    assert not (folder / "stale").exists()
    assert envs.cached_env("3.6.0") is not None


# --------------------------------------------------------------------------
# A file name longer than the filesystem takes: exit 8
# --------------------------------------------------------------------------

LONG = "a" * 300


@pytest.mark.parametrize("args", [
    ["compile", "matmul", "--save", f"{LONG}.json"],
    ["compile", "matmul", "--emit", LONG],
    ["sweep", "matmul", "-c", "BLOCK=16,32", "--save", f"{LONG}.csv"],
    ["versions", "--replay", str(RECORD), "--save", f"{LONG}.md"],
    ["versions", "--replay", str(RECORD), "--junit", f"{LONG}.xml"],
    ["versions", "matmul", "--a", "3.6.0", "--record", LONG],
])
def test_a_300_character_output_name_exits_8(monkeypatch, tmp_path, args):
    _no_compile(monkeypatch)
    monkeypatch.chdir(tmp_path)
    _one_clean_error(invoke(*args), 8, "A file or folder name is at most 255 bytes")
