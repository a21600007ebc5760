"""Replay of a repeated `tritonscope compile`: the same bytes without typer or Triton, and a miss on any change.

test_result_cache's small kernel (with a @triton.jit helper in a module
beside it) in tmp_path, a private TRITONSCOPE_CACHE_DIR, and the command run
in this process through the real entry point (tritonscope.launch.main).
Whether a run was replayed is told by whether it reached the typer app
(tritonscope.cli.main), which a replay never imports.
"""

from __future__ import annotations

import json
import sys
import uuid

import pytest

from test_result_cache import HELPER, KERNEL  # the result cache's own test kernel and its @triton.jit helper
from tritonscope import launch
from tritonscope.pipeline import replay, result_cache

@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    folder = tmp_path_factory.mktemp("replay")
    helper = f"rp_helper_{uuid.uuid4().hex[:8]}"
    (folder / f"{helper}.py").write_text(HELPER)
    (folder / "k.py").write_text(KERNEL.format(helper=helper))
    return folder, helper


@pytest.fixture
def cli(setup, monkeypatch, capsys):
    """run(*words, env=...) -> (exit code, stdout, whether the typer app ran)."""
    import tritonscope.cli

    folder, _ = setup
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.chdir(folder)
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(folder / "cache"))
    for name in ("TRITONSCOPE_RESULT_CACHE", "TRITON_ALWAYS_COMPILE", "TRITONSCOPE_REPLAY", "NO_COLOR",
                 "TRITON_DEFAULT_FP_FUSION"):
        monkeypatch.delenv(name, raising=False)
    # other work on this tree must not change tritonscope's stamp half way through
    monkeypatch.setattr(result_cache, "tritonscope_build", lambda: {"version": "test", "stamp": "pinned"})
    real_main = tritonscope.cli.main
    reached = []

    def counting_main():
        reached.append(1)
        real_main()

    monkeypatch.setattr(tritonscope.cli, "main", counting_main)

    def run(*words, env=None):
        import os

        saved = {k: os.environ.get(k) for k in env or {}}
        for k, v in (env or {}).items():
            monkeypatch.setenv(k, v)
        reached.clear()
        capsys.readouterr()
        monkeypatch.setattr(sys, "argv", ["tritonscope", *words])
        code = 0
        try:
            launch.main()
        except SystemExit as e:
            code = e.code or 0
        for k, v in saved.items():
            if v is None:
                monkeypatch.delenv(k)
            else:
                monkeypatch.setenv(k, v)
        return code, capsys.readouterr().out, bool(reached)

    return run


BASE = ("compile", "k.py:add_kernel", "--arg", "x_ptr=*fp32", "--arg", "out_ptr=*fp32", "--arg", "n=1024",
        "-c", "BLOCK=128", "--arch", "sm_80", "--width", "100", "--no-color")


def test_a_repeat_is_replayed_and_any_change_is_a_miss(cli, setup):
    folder, helper = setup
    code, first, ran = cli(*BASE)
    assert code == 0 and ran and "add_kernel" in first
    entries = list((folder / "cache" / replay.FOLDER).glob("*.json"))
    assert len(entries) == 1

    code, again, ran = cli(*BASE)
    assert (code, ran) == (0, False), "the repeat reached the typer app"
    # the same bytes but the summary's hash row, which says it is replayed, in the same width (issue 33)
    rows = [(a, b) for a, b in zip(first.splitlines(), again.splitlines()) if a != b]
    assert len(first.splitlines()) == len(again.splitlines()) and len(rows) == 1, rows
    assert "compiled in" in rows[0][0] and "replayed" in rows[0][1] and len(rows[0][0]) == len(rows[0][1])

    # the display: another width, NO_COLOR, COLUMNS
    assert cli(*BASE[:-3], "--width", "120", "--no-color")[2]
    assert cli(*BASE, env={"COLUMNS": "90"})[2]
    assert cli(*BASE, env={"NO_COLOR": "1"})[2]
    # a compiler knob
    assert cli(*BASE, env={"TRITON_DEFAULT_FP_FUSION": "0"})[2]
    # replay turned off, or the result cache off
    assert cli(*BASE, env={"TRITONSCOPE_REPLAY": "0"})[2]
    assert cli(*BASE, env={"TRITON_ALWAYS_COMPILE": "1"})[2]
    # and still a hit after all of those
    assert cli(*BASE)[2] is False


def test_changed_sources_and_builds_are_misses(cli, setup, monkeypatch):
    folder, helper = setup
    code, first, _ = cli(*BASE)
    assert code == 0 and cli(*BASE)[2] is False

    # tritonscope's own sources
    monkeypatch.setattr(result_cache, "tritonscope_build", lambda: {"version": "test", "stamp": "edited"})
    assert cli(*BASE)[2]
    monkeypatch.setattr(result_cache, "tritonscope_build", lambda: {"version": "test", "stamp": "pinned"})
    # Triton's build
    real_build = result_cache.triton_build
    monkeypatch.setattr(result_cache, "triton_build", lambda: {**real_build(), "stamp": "another build"})
    assert cli(*BASE)[2]
    monkeypatch.setattr(result_cache, "triton_build", real_build)
    # each of those runs kept its own output under the same command line: back to this build, a miss, then a hit
    assert cli(*BASE)[2]
    assert cli(*BASE)[2] is False

    # the @triton.jit helper the kernel calls, in another file: the output must show the new code
    helper_file = folder / f"{helper}.py"
    helper_file.write_text(HELPER.replace("x * 2", "x * 3"))
    try:
        code, changed, ran = cli(*BASE)
        assert code == 0 and ran
        assert changed != first
    finally:
        helper_file.write_text(HELPER)

    # the kernel file itself
    kernel = folder / "k.py"
    text = kernel.read_text()
    kernel.write_text(text + "\n# edited\n")
    try:
        assert cli(*BASE)[2]
    finally:
        kernel.write_text(text)


def test_only_output_only_runs_are_kept_or_replayed(cli, setup, tmp_path):
    folder, _ = setup
    # options with effects beyond the printed output are never replayed
    for extra in (["--save", str(tmp_path / "r.md")], ["--no-cache"], ["--emit", str(tmp_path / "e")],
                  ["--pager"], ["--timeout", "60"]):
        assert replay.plan([*BASE, *extra]) is None, extra
    assert replay.plan(["--debug", *BASE]) is None
    assert replay.plan(["show", "r.json"]) is None
    code, _, _ = cli(*BASE, "--save", str(tmp_path / "r.md"))
    assert code == 0 and (tmp_path / "r.md").exists()
    (tmp_path / "r.md").unlink()
    code, _, ran = cli(*BASE, "--save", str(tmp_path / "r.md"))
    assert ran and (tmp_path / "r.md").exists(), "a --save must write its file every time"

    # a run that fails is not kept: the repeat fails the same way, through the app
    bad = (*BASE, "--line", "999")
    code, _, ran = cli(*bad)
    assert code != 0 and ran
    code, _, ran = cli(*bad)
    assert code != 0 and ran


def test_a_damaged_entry_is_a_miss(cli, setup):
    folder, _ = setup
    words = (*BASE[:-3], "--width", "111", "--no-color")
    assert cli(*words)[0] == 0
    entry = replay.entry_path(replay.key_parts(list(words)))
    # the key depends on the working folder: compute it there
    assert entry.exists()
    data = json.loads(entry.read_text())
    data["stdout"] = 42
    entry.write_text(json.dumps(data))
    code, out, ran = cli(*words)
    assert code == 0 and ran and "add_kernel" in out
    # an entry whose output holds a control character our console never writes: a miss, never printed
    assert cli(*words)[2] is False
    data = json.loads(entry.read_text())
    data["stdout"] = "planted \x1b]52;c;AAAA\x07 text\n"
    entry.write_text(json.dumps(data))
    code, out, ran = cli(*words)
    assert code == 0 and ran and "\x1b]52" not in out and "add_kernel" in out
    entry.write_text("{not json")
    code, out, ran = cli(*words)
    assert code == 0 and ran and "add_kernel" in out


def test_a_symlinked_kernel_path_is_keyed_by_what_it_names_now(cli, setup):
    """Issue 23: replay checked the file the link named last time, so a repointed link replayed the old
    kernel's output, and a removed link still exited 0."""
    folder, helper = setup
    other = folder / "k_other.py"
    other.write_text(KERNEL.format(helper=helper).replace("twice(x)", "twice(x) + 1.0"))
    link = folder / "link.py"
    link.symlink_to(folder / "k.py")
    words = ("compile", "link.py:add_kernel", *BASE[2:], "--stage", "ttir")
    try:
        code, first, ran = cli(*words)
        assert code == 0 and ran and "arith.addf" not in first
        assert cli(*words)[2] is False  # a repeat through the same link is a replay
        link.unlink()
        link.symlink_to(other)
        code, now, ran = cli(*words)
        assert code == 0 and ran, "a repointed link replayed the file it named before"
        assert "arith.addf" in now
        # a fresh compile of what the link names, then the repeat: still the new kernel
        assert cli(*words, "--timeout", "300")[0] == 0
        code, again, _ = cli(*words)
        assert code == 0 and "arith.addf" in again
        # back to the first file: its own output again
        link.unlink()
        link.symlink_to(folder / "k.py")
        code, back, _ = cli(*words)
        assert code == 0 and "arith.addf" not in back
        link.unlink()
        code, _, ran = cli(*words)
        assert ran and code == 3, "a removed link must be 'not found', not a replay"
    finally:
        if link.is_symlink():
            link.unlink()
