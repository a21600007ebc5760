"""Round 11's hostile review of the session's new surface: each bad input found there, refused with one clear
message (a typed error, its documented exit code), before any compile; a planted environment folder or linker
script never run, followed or written through.

- tritonscope.explain / tritonscope.tune: a wrong type or value for any keyword is a UsageError naming it
  (was: AttributeError / IndexError / TypeError from deep inside, or a truthy "no" taken as True);
- TRITONSCOPE_ENV_INSTALLER: said as the user typed it (was: lowercased);
- a managed environment folder that is a symbolic link, another user's or writable by others: never used
  (was: its bin/python ran), listed as not used, never walked, locked, pruned, nor followed by --remove;
- lld.wrapper: a link planted at its temporary name is not written through; a folder others can write is
  refused; TRITON_HIP_LLD_PATH set to a folder is said in the hint, and never silently replaced.
"""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

import tritonscope
from tritonscope.cli import app
from tritonscope.core import cache_prune as C
from tritonscope.core.errors import ExitCode, UsageError
from tritonscope.versions import envs as E
from tritonscope.versions import lld as L

runner = CliRunner()
ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False


# --------------------------------------------------------------------------
# 1. tritonscope.explain / tritonscope.tune: bad arguments, before any compile
# --------------------------------------------------------------------------

EXPLAIN_BAD = [
    ({"shapes": 5}, "shapes: int 5 is not a list of shapes"),
    ({"shapes": [(math.nan,)]}, "shapes: tuple (nan,) is not a shape"),
    ({"shapes": [(4096.0, 4096)]}, "is not a shape"),                 # a float is refused, never rounded
    ({"gpu": 5}, "gpu must be a str, not int 5"),
    ({"constexprs": [1, 2]}, "constexprs must be a dict of names and values, not list [1, 2]"),
    ({"constexprs": {1: 2}}, "constexprs: its keys must be str names, not int 1"),
    ({"options": "x"}, "options must be a dict of names and values, not str 'x'"),
    ({"args": [1]}, "args must be a dict of names and values, not list [1]"),
    ({"check_fixes": "no"}, "check_fixes must be True or False, not str 'no'"),
    ({"predict": math.nan}, "predict must be True or False, not float nan"),
    ({"kernel": 5}, "kernel must be a str, not int 5"),
    ({"gpu": ""}, "gpu is empty"),                                  # was: taken as no GPU named
    ({"gpu": "  "}, "gpu is empty"),
]


@pytest.mark.parametrize("given,said", EXPLAIN_BAD, ids=[next(iter(g)) + str(i) for i, (g, _) in enumerate(EXPLAIN_BAD)])
def test_explain_refuses_each_bad_argument_by_name(given, said, monkeypatch):
    from tritonscope.pipeline import compile_path

    monkeypatch.setattr(compile_path.Pipeline, "compile", lambda *a, **k: pytest.fail("compiled"))
    with pytest.raises(UsageError) as e:
        tritonscope.explain("vector_add", **given)
    assert said in e.value.message and e.value.exit_code == ExitCode.USAGE
    assert "\x1b" not in e.value.message


TUNE_BAD = [
    ({"constexprs": {"BLOCK": []}}, "constexprs['BLOCK'] is empty: an axis needs at least one value"),
    ({"constexprs": [1]}, "constexprs must be a dict of names and values, not list [1]"),
    ({"num_warps": []}, "num_warps is empty"),
    ({"top": 0}, "top must be an int from 1 to 2**31-1, not int 0"),
    ({"top": -1}, "top must be an int from 1 to 2**31-1"),
    ({"top": math.nan}, "top must be an int from 1 to 2**31-1, not float nan"),
    ({"top": "5"}, "top must be an int from 1 to 2**31-1, not str '5'"),
    ({"top": True}, "top must be an int from 1 to 2**31-1, not bool True"),
    ({"jobs": 0}, "jobs must be an int from 1 to 2**31-1, not int 0"),
    ({"jobs": -3}, "jobs must be an int from 1 to 2**31-1"),
    ({"grid": 5}, "grid must be a str, not int 5"),
    ({"shape": (math.nan,)}, "shape: tuple (nan,) is not a shape"),
    ({"shape": (float("inf"), 4)}, "shape: tuple (inf, 4) is not a shape"),
    ({"full": "yes"}, "full must be True or False, not str 'yes'"),
    ({"gpu": 5}, "gpu must be a str, not int 5"),
    ({"gpu": ""}, "gpu is empty"),
    ({"top": 10**5000}, "top must be an int from 1 to 2**31-1, not an int of 16610 bits"),
    ({"jobs": 2**40}, "jobs must be an int from 1 to 2**31-1"),
    ({"num_warps": [10**5000]}, "num_warps is out of range (an int of 16610 bits)"),   # was: str()'s ValueError
    ({"num_stages": -10**5000}, "num_stages is out of range"),
]


@pytest.mark.parametrize("given,said", TUNE_BAD, ids=[next(iter(g)) + str(i) for i, (g, _) in enumerate(TUNE_BAD)])
def test_tune_refuses_each_bad_argument_by_name_before_the_gpu_check(given, said, monkeypatch):
    """Checked before the first compile and before the GPU check (this machine has none: NoGPUError, exit 9,
    was what top=0, jobs=-3 or full='yes' got, and num_warps=[] went on to a grid of the kernel's own)."""
    from tritonscope.pipeline import compile_path

    monkeypatch.setattr(compile_path.Pipeline, "compile", lambda *a, **k: pytest.fail("compiled"))
    with pytest.raises(UsageError) as e:
        tritonscope.tune("vector_add", **given)
    assert said in e.value.message and e.value.exit_code == ExitCode.USAGE


def test_compile_refuses_an_int_too_large_to_print():
    with pytest.raises(UsageError, match=r"block is out of range \(an int of 16610 bits\)"):
        tritonscope.compile("vector_add", block=10**5000)


def test_compile_refuses_a_non_mapping_constexprs_and_options():
    with pytest.raises(UsageError, match=r"options must be a dict of names and values, not str 'x'"):
        tritonscope.compile("vector_add", options="x")
    with pytest.raises(UsageError, match=r"args must be a dict"):
        tritonscope.compile("vector_add", args=[("n", 1)])


def test_good_shapes_still_pass():
    from tritonscope.api import _shape_list, _shape_text

    assert _shape_text((4096, 4096)) == "4096x4096" and _shape_text("64x64") == "64x64"
    assert _shape_list((4096, 4096)) == [(4096, 4096)] and _shape_list(["64x64", (1, 2)]) == ["64x64", (1, 2)]
    assert _shape_list(()) == [] and _shape_list(None) == [] and _shape_list("8x8") == ["8x8"]


# --------------------------------------------------------------------------
# 2. TRITONSCOPE_ENV_INSTALLER
# --------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["BANANA", "ban\x1bana", "pip3"])
def test_a_bad_installer_is_said_as_given(value):
    with pytest.raises(UsageError) as e:
        E.installer({E.INSTALLER_VARIABLE: value})
    assert repr(value) in e.value.message and "\x1b" not in e.value.message
    assert "give uv, pip or auto" in e.value.message and e.value.hint


def test_a_bad_installer_exits_2_before_any_environment_is_made(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(E.INSTALLER_VARIABLE, "BANANA")
    res = runner.invoke(app, ["versions", "--add", "3.4.0"])
    assert res.exit_code == 2 and "TRITONSCOPE_ENV_INSTALLER='BANANA'" in " ".join(res.output.split())
    assert "Traceback" not in res.output and not (tmp_path / "cache" / "triton-envs" / "triton-3.4.0").exists()


# --------------------------------------------------------------------------
# 3. A planted environment folder
# --------------------------------------------------------------------------


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRITONSCOPE_CACHE_MAX_MB", raising=False)
    monkeypatch.delenv(E.INSTALLER_VARIABLE, raising=False)
    (tmp_path / "cache" / "triton-envs").mkdir(parents=True, mode=0o700)
    return tmp_path / "cache"


def _planted(folder: Path, mark: Path) -> Path:
    """A folder that looks like a whole environment of Triton 3.4.0 whose bin/python leaves `mark` when run."""
    (folder / "bin").mkdir(parents=True)
    (folder / "lib" / "python3.11" / "site-packages" / "triton").mkdir(parents=True)
    (folder / "lib" / "python3.11" / "site-packages" / "triton" / "__init__.py").write_text("")
    (folder / "tritonscope-env.json").write_text(json.dumps({"requested": "3.4.0", "triton": "3.4.0",
                                                             "backends": ["cuda", "hip"]}))
    py = folder / "bin" / "python"
    py.write_text(f"#!/bin/sh\necho ran > {mark}\n")
    py.chmod(0o755)
    return folder


def test_a_symlinked_environment_is_never_used_walked_or_followed(cache, tmp_path):
    mark = tmp_path / "ran"
    elsewhere = _planted(tmp_path / "elsewhere", mark)
    link = cache / "triton-envs" / "triton-3.4.0"
    link.symlink_to(elsewhere)
    with pytest.raises(E.EnvError) as e:
        E.resolve("3.4.0", install=False)
    assert "is not used: it is a symbolic link" in e.value.message and e.value.exit_code == ExitCode.NOT_FOUND
    assert not mark.exists()
    assert not (elsewhere / C.ENV_LOCK).exists() and not (elsewhere / C.ENV_USED).exists()   # nothing written there
    rows = [r for r in E.list_envs() if r["version"] == "3.4.0"]
    assert rows and rows[0]["state"] == "broken" and "symbolic link" in rows[0]["why"]
    assert not (elsewhere / C.ENV_LOCK).exists()    # --envs took no lock in it
    C.prune(cache, 0)
    assert (elsewhere / "bin" / "python").exists()
    assert E.remove_env("3.4.0") == "removed triton-3.4.0"
    assert not os.path.lexists(link) and (elsewhere / "bin" / "python").exists()   # the link went, not its target
    assert [p.name for p in (cache / "triton-envs").iterdir()] == []                 # no .removing-* left behind


def test_an_environment_others_can_write_to_is_never_run(cache, tmp_path):
    mark = tmp_path / "ran"
    folder = _planted(cache / "triton-envs" / "triton-3.4.0", mark)
    folder.chmod(0o777)
    with pytest.raises(E.EnvError, match=r"others can write to it \(mode 777\)"):
        E.resolve("3.4.0", install=False)
    assert not mark.exists()
    res = runner.invoke(app, ["versions", "vector_add", "--a", "3.4.0", "--no-install"])
    said = " ".join(res.output.split())
    assert res.exit_code == 3 and "others can write to it" in said and "Traceback" not in said
    assert not mark.exists()


@pytest.mark.skipif(not ROOT, reason="making a folder another user's needs root")
def test_another_users_environment_is_never_run_nor_pruned(cache, tmp_path):
    mark = tmp_path / "ran"
    folder = _planted(cache / "triton-envs" / "triton-3.4.0", mark)
    for p in [folder, *folder.rglob("*")]:
        os.lchown(p, 65534, -1)
    with pytest.raises(E.EnvError, match=r"it belongs to another user \(uid 65534\)"):
        E.resolve("3.4.0", install=False)
    assert not mark.exists()
    assert C.prune(cache, 0).removed == 0 and (folder / "bin" / "python").exists()


# --------------------------------------------------------------------------
# 4. The ld.lld script and TRITON_HIP_LLD_PATH
# --------------------------------------------------------------------------


def test_the_wrapper_never_writes_through_a_planted_link(tmp_path):
    folder = tmp_path / "bin"
    folder.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (folder / f".{L.WRAPPER}.{os.getpid()}.tmp").symlink_to(victim)
    zig = tmp_path / "zig"
    path = L.wrapper(zig, folder)
    assert victim.read_text() == "precious\n"
    assert path.read_text() == L.wrapper_text(zig) and not path.is_symlink()
    assert stat.S_IMODE(path.stat().st_mode) == 0o755


def test_the_wrapper_replaces_a_planted_script_and_refuses_a_folder_others_can_write(tmp_path):
    folder = tmp_path / "bin"
    folder.mkdir(mode=0o700)
    other = tmp_path / "other"
    other.write_text(L.wrapper_text(tmp_path / "zig"))   # the same text, but a link to a file of someone else's
    other.chmod(0o777)
    (folder / L.WRAPPER).symlink_to(other)
    path = L.wrapper(tmp_path / "zig", folder)
    assert not path.is_symlink() and path.read_text() == L.wrapper_text(tmp_path / "zig")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(OSError, match="not a private folder"):
        L.wrapper(tmp_path / "zig", shared)
    assert not (shared / L.WRAPPER).exists()
    with pytest.raises(OSError, match="not a private folder"):   # its own folder is private, its parent is not
        L.wrapper(tmp_path / "zig", shared / "bin")
    assert not (shared / "bin" / L.WRAPPER).exists()


def test_triton_hip_lld_path_set_to_a_folder_is_said_and_never_replaced(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_HIP_LLD_PATH", str(tmp_path))
    assert L.given_problem() == f"TRITON_HIP_LLD_PATH={str(tmp_path)!r} is a folder, not an ld.lld, so Triton has no ld.lld."
    hint = L.hint("3.4.0", SimpleNamespace(origin="cache"))
    assert "is a folder, not an ld.lld" in hint and "unset it" in hint
    monkeypatch.setenv("TRITON_HIP_LLD_PATH", str(tmp_path / "missing\x1b[2J"))
    assert "does not exist" in L.hint("3.4.0") and "\x1b" not in L.hint("3.4.0")
    monkeypatch.delenv("TRITON_HIP_LLD_PATH")
    assert L.given_problem() is None


def test_choose_keeps_the_users_triton_hip_lld_path_even_when_it_is_a_folder(tmp_path, monkeypatch):
    """The zig script is not put in its place: versions passes the user's value on to Triton, so the side's
    linker is the user's, and what is wrong with it is said (was: the zig script, said to be chosen)."""
    monkeypatch.setattr(L, "system_lld", lambda: "/usr/bin/ld.lld-19")
    amd = tmp_path / "site-packages" / "triton" / "backends" / "amd"
    amd.mkdir(parents=True)
    (amd / "compiler.py").write_text('lld = Path("/opt/rocm/llvm/bin/ld.lld")\n')   # Triton 3.4's lookup, in short
    env = E.TritonEnv(python=str(tmp_path / "bin" / "python"), triton="3.4.0", origin="cache", path=str(tmp_path),
                      backends=("amd",), backends_dir=str(amd.parent))
    linker, where = L.choose(env, {"TRITON_HIP_LLD_PATH": str(tmp_path)})
    assert linker is None and "is a folder, not an ld.lld" in where
    monkeypatch.setenv("TRITON_HIP_LLD_PATH", str(tmp_path))
    calls = []
    assert L.ensure(env, install=True, install_into=lambda *a, **k: calls.append(a)) is None and calls == []


# --------------------------------------------------------------------------
# 5. A sweep or tune axis of num_warps / num_stages no compile can take
# --------------------------------------------------------------------------


@pytest.mark.parametrize("flag,value,said", [("-w", "3", "--num-warps 3 is not a power of two from 1 to 32"),
                                             ("-w", "4,64", "--num-warps 64 is not a power of two"),
                                             ("-s", "0", "--num-stages 0 must be at least 1")])
@pytest.mark.parametrize("command", ["sweep", "tune"])
def test_a_bad_axis_value_is_exit_2_before_any_compile_or_gpu_check(command, flag, value, said, tmp_path, monkeypatch):
    """Was: sweep showed a FAILED row per config and exited 0; tune said there is no GPU (exit 9)."""
    from tritonscope.pipeline import compile_path

    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compile_path.Pipeline, "compile", lambda *a, **k: pytest.fail("compiled"))
    res = runner.invoke(app, [command, "vector_add", flag, value])
    assert res.exit_code == 2 and said in " ".join(res.output.split()) and "Traceback" not in res.output


@pytest.mark.parametrize("given,said", [({"num_warps": [4, 3]}, "num_warps=3 is not a power of two"),
                                        ({"num_stages": 0}, "num_stages=0 must be at least 1")])
def test_api_tune_refuses_a_bad_axis_value(given, said, monkeypatch):
    from tritonscope.pipeline import compile_path

    monkeypatch.setattr(compile_path.Pipeline, "compile", lambda *a, **k: pytest.fail("compiled"))
    with pytest.raises(UsageError, match=said):
        tritonscope.tune("vector_add", **given)


# --------------------------------------------------------------------------
# 6. The cache's own notes and records, damaged or hostile
# --------------------------------------------------------------------------


def test_a_damaged_pruned_note_is_left_unsaid_never_a_crash(cache):
    """.pruned.json's freed of 400 digits was an OverflowError (exit 1); its `when` reached the message as is."""
    notes = cache / "triton-envs" / C.PRUNED
    notes.write_text(json.dumps({"3.4.0": {"when": "\x1b[2Jnow\x00", "freed": int("9" * 400)}}))
    res = runner.invoke(app, ["versions", "vector_add", "--a", "3.4.0", "--no-install"])
    said = " ".join(res.output.split())
    assert res.exit_code == 3 and "Traceback" not in said and "\x1b" not in said and "\\x1b" not in said
    assert "its environment was removed on an earlier run to keep tritonscope's cache under its size cap" in said
    assert "freeing" not in said
    notes.write_text(json.dumps({"3.4.0": {"when": "2026-11-28 08:40", "freed": True}}))
    note = C.pruned_note(cache / "triton-envs", "3.4.0")
    assert "removed on 2026-11-28 08:40" in note and "freeing" not in note
    notes.write_text(json.dumps({"3.4.0": {"when": "2026-11-28 08:40", "freed": 3 << 20}}))
    assert C.pruned_note(cache / "triton-envs", "3.4.0").endswith("freeing 3.0 MiB")


def _record(cache: Path, version: str, meta) -> Path:
    folder = cache / "triton-envs" / f"triton-{version}"
    (folder / "bin").mkdir(parents=True)
    (folder / "lib" / "python3.11" / "site-packages" / "triton").mkdir(parents=True)
    (folder / "lib" / "python3.11" / "site-packages" / "triton" / "__init__.py").write_text("")
    (folder / "bin" / "python").write_text("")
    (folder / "tritonscope-env.json").write_text(json.dumps(meta))
    return folder


def test_an_environment_record_of_the_wrong_types_or_with_control_characters_is_listed(cache):
    """`versions --envs` on a record whose installer is a dict was rich's NotRenderableError (exit 1)."""
    _record(cache, "3.4.0", {"installer": {"a": 1}, "created": [1, 2], "triton": 5, "python": None})
    _record(cache, "3.4.1", {"installer": "\x1b[2Juv\x00", "created": "\x1b]0;x\x07", "triton": "\u202e3.4",
                             "python": "\r3.11", "backends": "hip"})
    res = runner.invoke(app, ["versions", "--envs"])
    assert res.exit_code == 0 and "Traceback" not in res.output
    assert not any(c in res.output for c in "\x1b\x00\x07\r\u202e")
    rows = {r["version"]: r for r in E.list_envs()}
    assert rows["3.4.0"]["installer"] is None and rows["3.4.0"]["triton"] is None and rows["3.4.0"]["state"] == "ready"
    assert rows["3.4.1"]["installer"] is None and rows["3.4.1"]["created"] is None
    env = E.cached_env("3.4.1")
    assert env.triton == "3.4.1" and env.backends == ()   # the version asked for; not ('h', 'i', 'p')


# --------------------------------------------------------------------------
# 7. diff's sides: whole numbers as typed, said in the side's words
# --------------------------------------------------------------------------


@pytest.mark.parametrize("item,said", [
    ("num_warps=0_4", "--a num_warps=0_4: not an integer"),     # was: taken as 4
    ("num_warps=\u0663", "--a num_warps=\u0663: not an integer"),  # Arabic-Indic 3: was taken as 3
    ("warps=3", "--a num_warps=3 is not a power of two from 1 to 32"),   # was: "--num-warps 3 ..."
    ("num_warps=99999999999999999999999", "--a num_warps=99999999999999999999... (23 characters): out of range"),
    ("num_warps=" + "9" * 5000, "(5000 characters): out of range"),     # was: int()'s ValueError, exit 1
    ("maxnreg=" + "9" * 5000, "--a maxnreg=99999999999999999999... (5000 characters): out of range"),
    ("stages=0", "--a num_stages=0 must be at least 1"),
    ("maxnreg=0_64", "--a maxnreg=0_64: not an integer"),        # was: taken as 64
    ("num_ctas=\u0662", "--a num_ctas=\u0662: not an integer"),
])
def test_a_side_number_is_ascii_digits_and_said_in_the_sides_words(item, said):
    from tritonscope.versions.config_diff import parse_side

    with pytest.raises(UsageError) as e:
        parse_side([item], "a")
    assert said in e.value.message


def test_good_side_numbers_still_pass():
    from tritonscope.versions.config_diff import parse_side

    got = parse_side(["BLOCK=16,num_warps=8,stages=2,maxnreg=64"], "b")
    assert got == {"constexprs": {"BLOCK": "16"}, "options": {"maxnreg": 64}, "num_warps": 8, "num_stages": 2}


def test_diff_with_a_bad_side_number_exits_2_before_any_compile(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path))
    res = runner.invoke(app, ["diff", "vector_add", "--a", "num_warps=0_4", "--b", "BLOCK=64"])
    assert res.exit_code == 2 and "--a num_warps=0_4: not an integer" in " ".join(res.output.split())


# --------------------------------------------------------------------------
# 8. An install that prints nothing is stopped all the same
# --------------------------------------------------------------------------


def test_a_silent_install_is_stopped_at_the_timeout_and_said(tmp_path, monkeypatch):
    """Was: the timeout was checked only when pip printed a line, so a stalled download (pip prints nothing with
    --progress-bar off) waited for ever; and a stopped install said only "pip could not install"."""
    import sys
    import time

    folder = tmp_path / "env"
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "python").symlink_to(sys.executable)
    monkeypatch.setattr(E, "PIP_TIMEOUT", 2.0)
    # a real pip install that reads its requirements from a FIFO nobody writes: it blocks, silent
    fifo = tmp_path / "reqs.txt"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(E.EnvError) as e:
        E.install_into(folder, ["-r", str(fifo)], what="test", how=("pip", None))
    assert time.monotonic() - started < 30
    assert "did not finish in 2 s and was stopped" in e.value.message and "Nothing was kept" in e.value.hint


def test_a_cache_cap_of_thousands_of_digits_is_no_cap_and_said(tmp_path, monkeypatch):
    """TRITONSCOPE_CACHE_MAX_MB of 5000 nines: int() refuses it (ValueError, exit 1 on every compile's store)."""
    huge = "9" * 5000
    assert C.setting({C.VARIABLE: huge}) == (None, f"no cap: {C.VARIABLE} is 5000 digits long, more than any disk holds")
    assert "5000 digits, more than any disk holds, so tritonscope's cache is not pruned" in C.problem({C.VARIABLE: huge})
    assert C.setting({C.VARIABLE: "0" * 30 + "5"})[0] == 5 << 20     # leading zeros are not digits of size
    assert C.setting({C.VARIABLE: "9" * 15})[0] == int("9" * 15) << 20
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv(C.VARIABLE, huge)
    C.after_store(tmp_path / "results" / ("a" * 40 + ".json"), 10)   # never raises
    assert len(C.problem({C.VARIABLE: "x" * 10_000})) < 200          # a long bad value is cut short


@pytest.mark.parametrize("text", ["3." + "9" * 5000, "9" * 5000 + ".1", "\u0663.\u0664.\u0660", "3.1234567.0"])
def test_a_version_of_thousands_of_digits_or_non_ascii_digits_is_refused(text, cache):
    """Was: int() of 5000 digits raised ValueError (exit 1); Arabic-Indic digits were taken as a version."""
    with pytest.raises(UsageError) as e:
        E.check_version(text)
    assert "not a Triton version or a path to a Python" in e.value.message and len(e.value.message) < 200
    res = runner.invoke(app, ["versions", "vector_add", "--a", text, "--no-install"])
    assert res.exit_code == 2 and "Traceback" not in res.output


def test_real_versions_still_pass():
    assert [E.check_version(v) for v in ("3.4.0", "3.4", "3.4.0rc1", "3.4.0.post1")] == \
        ["3.4.0", "3.4", "3.4.0rc1", "3.4.0.post1"]


@pytest.mark.parametrize("answer", ['[1]', '{"triton": 5}', '{}', '"x"',
                                    '{"triton": "\\u001b[2J3.4", "backends": ["hip"], "python": "3"}',
                                    '{"triton": "3.4.0", "backends": "hip", "python": "3.11"}'])
def test_a_user_python_whose_probe_answer_is_not_tritons_is_refused(answer, tmp_path):
    """triton=/path/to/python of the user's may print anything: was KeyError/TypeError (exit 1), or 'hip' taken
    as the backends ('h', 'i', 'p')."""
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\necho '{answer}'\n")
    fake.chmod(0o755)
    with pytest.raises(E.EnvError, match="gave an answer to the Triton probe that is not Triton's version"):
        E.user_env(str(fake))
    res = runner.invoke(app, ["versions", "vector_add", "--a", str(fake)])
    assert res.exit_code == 3 and "Traceback" not in res.output


def test_a_real_pythons_probe_still_passes():
    import sys

    env = E.user_env(sys.executable)
    assert env.triton and "nvidia" in env.backends and env.origin == "user"
