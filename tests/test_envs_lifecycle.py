"""Issue 33, managed environments (versions/envs.py), with no network: pip is never run here.

- a build holds a lock (builder.lock, its pid in it) while it runs; a folder whose lock nobody holds, or whose
  pid is gone, is a stale build (listed so, and removed by the next build), never "being built" forever;
- a version that is the very Triton this Python imports is this interpreter: nothing is made or downloaded;
- `versions --add X --no-install` never runs pip;
- an environment whose triton package is gone is listed broken, with the reason.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tritonscope import triton_api
from tritonscope.cli import app
from tritonscope.versions import envs as E

runner = CliRunner()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path))
    return tmp_path


@pytest.fixture
def no_pip(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("an environment would be made (pip)")

    monkeypatch.setattr(E, "create_env", boom)


def _building(cache: Path, pid: int) -> Path:
    folder = cache / "triton-envs" / f".building-3.4.0-{pid}-abcd"
    folder.mkdir(parents=True)
    return folder


def test_a_build_that_holds_its_lock_is_being_built_and_one_that_does_not_is_stale(cache):
    folder = _building(cache, __import__("os").getpid())   # this process: alive
    (folder / E.LOCK_NAME).write_text(json.dumps({"pid": 1}))   # a lock file nobody holds
    (row,) = E.list_envs()
    assert row["state"] == "stale build" and "is gone" in row["why"]
    lock = E.hold_build_lock(folder)
    try:
        (row,) = E.list_envs()
        assert row["state"] == "being built" and row["why"].startswith("pid ")
        assert E.clean_unfinished() == []          # a running build is left alone
    finally:
        lock.close()
    assert E.clean_unfinished() == [folder.name]   # its lock is free now: stale, removed


def test_a_killed_builder_leaves_a_stale_build(cache):
    """A real process takes the lock and is killed (SIGKILL: no cleanup runs); its folder is stale at once."""
    root = cache / "triton-envs"
    root.mkdir()
    code = ("import sys, time, pathlib, tempfile, os\n"
            "from tritonscope.versions import envs as E\n"
            f"tmp = pathlib.Path(tempfile.mkdtemp(prefix=f'.building-3.4.0-{{os.getpid()}}-', dir={str(root)!r}))\n"
            "lock = E.hold_build_lock(tmp)\nprint('locked', flush=True)\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "locked"
        (row,) = E.list_envs()
        assert row["state"] == "being built"
    finally:
        proc.kill()
        proc.wait()
    (row,) = E.list_envs()
    assert row["state"] == "stale build"
    listed = runner.invoke(app, ["versions", "--envs", "--width", "200"])
    assert "stale build" in listed.stdout and "being built" not in listed.stdout
    assert E.clean_unfinished() and list(root.iterdir()) == []


def test_the_running_triton_is_reused_not_downloaded(cache, no_pip):
    version = triton_api.triton_build()["version"]
    said = []
    env = E.resolve(version, progress=said.append)
    assert env.python == sys.executable and env.triton == version and env.origin == "this"
    assert "nvidia" in env.backends and any("no environment made" in s for s in said)
    short = ".".join(version.split(".")[:2])   # pip's triton==3.9 is 3.9.0
    if version.endswith(".0"):
        assert E.resolve(short).python == sys.executable
    assert not (cache / "triton-envs").exists()


def test_same_version():
    assert E.same_version("3.9", "3.9.0") and E.same_version("3.6.0", "3.6.0")
    assert not E.same_version("3.9.0", "3.9.0+git1234") and not E.same_version("3.6.0", "3.9.0")
    assert E._padded("3.9") == "3.9.0" and E._padded("3.9.0rc1") == "3.9.0rc1"


def test_add_with_no_install_never_runs_pip(cache, no_pip):
    result = runner.invoke(app, ["versions", "--add", "3.4.0", "--no-install"])
    assert result.exit_code == 3, result.output
    assert "No environment for Triton 3.4.0 yet (--no-install" in " ".join(result.output.split())


def test_add_with_no_install_over_a_damaged_environment_says_so_and_keeps_it(cache, no_pip):
    folder = cache / "triton-envs" / "triton-3.4.0"
    (folder / "bin").mkdir(parents=True)
    (folder / "tritonscope-env.json").write_text("{damaged")
    result = runner.invoke(app, ["versions", "--add", "3.4.0", "--no-install"])
    assert result.exit_code == 3 and "is damaged" in " ".join(result.output.split())
    assert folder.is_dir()   # not removed: --no-install changes nothing


def test_an_environment_without_triton_is_broken_with_its_reason(cache):
    folder = cache / "triton-envs" / "triton-3.4.0"
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "python").write_text("#!/bin/sh\n")
    (folder / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    (folder / "tritonscope-env.json").write_text(json.dumps({"triton": "3.4.0", "triton_dir":
                                                             "lib/python3.11/site-packages/triton"}))
    (row,) = E.list_envs()
    assert row["state"] == "broken" and "triton package is gone" in row["why"]
    listed = runner.invoke(app, ["versions", "--envs", "--width", "200"])
    assert "broken: its triton package is gone" in listed.stdout and "ready" not in listed.stdout


def test_the_listing_says_what_an_environment_counts_against_the_cap_and_what_made_it(cache):
    folder = cache / "triton-envs" / "triton-3.4.0"
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "python").write_text("#!/bin/sh\n")
    (folder / "big.bin").write_bytes(b"\0" * (3 * 2**20))
    (folder / "tritonscope-env.json").write_text(json.dumps({"triton": "3.4.0", "installer": "uv"}))
    (row,) = E.list_envs()
    listed = runner.invoke(app, ["versions", "--envs", "--width", "200"])
    assert listed.exit_code == 0, listed.output
    text = " ".join(listed.stdout.split())
    assert "in the cache cap" in text and "made by" in text and " uv " in text
    assert f"{row['counted'] / 2**20:,.1f} MiB" in text and "3.0 MiB" in text
