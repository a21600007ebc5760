"""The size cap on tritonscope's cache folder: the least recently used entries go first, nothing else ever.

Each test has a private TRITONSCOPE_CACHE_DIR in tmp_path holding entries
named as tritonscope names them, with mtimes set by hand (the order of use).
"""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from tritonscope.core import cache_prune
from tritonscope.core.output import write_cache

KiB = 1024


@pytest.fixture(params=["by fd", "by path"])
def cache(request, tmp_path, monkeypatch):
    """The cache folder; each test runs with folders opened as fds (POSIX) and by path (elsewhere)."""
    if request.param == "by fd" and not cache_prune._BY_FD:
        pytest.skip("no fd-relative calls here")
    monkeypatch.setattr(cache_prune, "_BY_FD", request.param == "by fd")
    root = tmp_path / "cache"
    root.mkdir()
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(root))
    monkeypatch.delenv(cache_prune.VARIABLE, raising=False)
    return root


def entry(root, folder: str, n: int, size: int, age: float):
    """An entry of `size` bytes in `folder`, last used `age` seconds ago."""
    path = root / folder / f"{n:040x}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(b"x" * size)
    stamp = time.time() - age
    os.utime(path, (stamp, stamp))
    return path


def names(root) -> set[str]:
    return {f"{p.parent.name}/{p.name}" for p in root.rglob("*") if p.is_file() and p.name != cache_prune.STAMP}


def test_the_least_recently_used_entries_go_first_across_folders(cache):
    # used in this order, oldest first, 100 KiB each, spread over the folders
    folders = ["results", "derived", "replay", "results", "remarks", "sweep", "derived", "results"]
    paths = [entry(cache, folder, n, 100 * KiB, age=1000 - n) for n, folder in enumerate(folders)]
    pruned = cache_prune.prune(cache, 350 * KiB)
    assert {p for p in paths if p.exists()} == set(paths[-3:])
    assert (pruned.entries, pruned.size, pruned.removed, pruned.freed) == (8, 800 * KiB, 5, 500 * KiB)


def test_a_store_keeps_the_folder_under_the_cap(cache, monkeypatch):
    monkeypatch.setenv(cache_prune.VARIABLE, "1")
    stored = []
    for n in range(6):
        path = cache / "results" / f"{n:040x}.json"
        assert write_cache(path, "x" * (300 * KiB))  # an eighth of the cap or more: every store scans
        stamp = time.time() - 100 + n  # stored in this order
        os.utime(path, (stamp, stamp))
        stored.append(path)
    assert [p.exists() for p in stored] == [False, False, False, True, True, True]
    assert sum(p.stat().st_size for p in stored[3:]) <= 1 << 20


def test_a_hit_of_the_result_cache_or_of_replay_renews_the_entry(cache, monkeypatch):
    from tritonscope.pipeline import replay, result_cache

    old = time.time() - 3600
    # result cache: a hit renews the entry and the recorded knob names every lookup needs
    build = {"version": "9.9", "stamp": "0" * 64}
    monkeypatch.setattr(result_cache, "triton_build", lambda: build)
    knobs = result_cache._knobs_path(build)
    write_cache(knobs, json.dumps({"invalidating_env": []}))
    assert result_cache.knob_names(build) == []
    os.utime(knobs, (old, old))
    assert result_cache.knob_names(build) == []
    assert knobs.stat().st_mtime > old + 3000

    # replay: a hit (which writes the kept output) renews the entry; a miss does not
    parts = {"argv": ["compile", "k.py"]}
    path = replay.entry_path(parts)
    write_cache(path, json.dumps({"parts": parts, "checks": {}, "stdout": "kept\n"}))
    os.utime(path, (old, old))
    monkeypatch.setattr(replay, "_still_true", lambda checks: False)
    assert not replay.try_replay(parts)
    assert path.stat().st_mtime == pytest.approx(old)
    monkeypatch.setattr(replay, "_still_true", lambda checks: True)
    assert replay.try_replay(parts)
    assert path.stat().st_mtime > old + 3000


def test_lookup_renews_the_entry_it_answers_from(cache, monkeypatch):
    from tritonscope.pipeline import result_cache
    from tritonscope.inputs.kernels import Request

    kernel = cache.parent / "k.py"
    kernel.write_text("# a kernel\n")
    monkeypatch.setattr(result_cache, "triton_build", lambda: {"version": "9.9", "stamp": "1" * 64})
    monkeypatch.setattr(result_cache, "knob_names", lambda build: [])
    monkeypatch.setattr(result_cache, "decode_artifact", lambda data: object())
    request = Request(f"{kernel}:k", constexprs={}, args={}, arch="sm_80")
    parts = result_cache.key_parts(request, "sm_80")
    path = result_cache.entry_path(parts)
    write_cache(path, json.dumps({"key": result_cache.key_of(parts), "deps": [], "reads": {"env": {}, "files": []},
                                   "artifact": {}}))
    old = time.time() - 3600
    os.utime(path, (old, old))
    assert result_cache.lookup(request, "sm_80") is not None
    assert path.stat().st_mtime > old + 3000


def test_hits_of_derived_remarks_and_sweep_entries_renew_them(cache, tmp_path):
    """Every folder's hit counts as a use: the SASS kept for a cubin, a compile's remarks, a sweep row."""
    import hashlib
    import importlib
    from types import SimpleNamespace

    from tritonscope.measure import sweep

    cubin_mod = importlib.import_module("tritonscope.triton_api.cubin")
    remarks_mod = importlib.import_module("tritonscope.pipeline.remarks_cache")

    old = time.time() - 3600
    cubin = b"\x7fELF a cubin"
    derived = cache / "derived" / f"{hashlib.sha256(cubin).hexdigest()[:32]}.json"
    write_cache(derived, json.dumps({"sass": "kept sass", "resources": "kept"}))
    kernel = tmp_path / "k.py"
    kernel.write_text("# a kernel\n")
    remarks = cache / "remarks" / f"{'ab' * 16}.json"
    write_cache(remarks, json.dumps({"file": os.path.realpath(kernel), "remarks": []}))
    row = sweep.SweepRow(0, "BLOCK=16 w4 s3 sm_90a", {"BLOCK": 16}, 4, 3, "sm_90a", None, ok=True)
    sweep.cache.store_row("cd" * 16, row)
    swept = sweep.cache.cache_path("cd" * 16)
    for path in (derived, remarks, swept):
        os.utime(path, (old, old))

    assert cubin_mod.sass_and_resources(cubin, []) == ("kept sass", "kept")
    hit = SimpleNamespace(cache_hit=True, kernel_hash="ab" * 16, remarks=[])
    assert remarks_mod.kept_remarks(hit, str(kernel)) == []
    assert sweep.cache.cached_row("cd" * 16, 3).cached
    for path in (derived, remarks, swept):
        assert path.stat().st_mtime > old + 3000, path
    missed = cache / "derived" / f"{'ef' * 16}.json"
    assert remarks_mod.kept_remarks(SimpleNamespace(cache_hit=True, kernel_hash="ef" * 16, remarks=[]),
                                str(kernel)) is None and not missed.exists()


@pytest.mark.parametrize("text", ["[]", "null", '"s"', '{"sass": 3, "resources": "r"}', "[" * 100_000, "\udcff",
                                  '{"file": "elsewhere.py", "remarks": []}'])
def test_a_damaged_or_unfitting_entry_is_a_miss_and_not_renewed(cache, tmp_path, text):
    """Derived SASS, kept remarks, sweep rows: a damaged entry (or one kept for another file) answers nothing."""
    import importlib
    from types import SimpleNamespace

    from tritonscope.measure import sweep

    cubin_mod = importlib.import_module("tritonscope.triton_api.cubin")
    remarks_mod = importlib.import_module("tritonscope.pipeline.remarks_cache")
    old = time.time() - 3600
    paths = [cache / "derived" / f"{'ab' * 16}.json", cache / "remarks" / f"{'ab' * 16}.json",
             sweep.cache.cache_path("ab" * 16)]
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, errors="surrogateescape")
        os.utime(path, (old, old))
    derived = cubin_mod.cache_dir() / "derived"
    assert derived == paths[0].parent
    kernel = tmp_path / "k.py"
    kernel.write_text("# a kernel\n")
    assert remarks_mod.kept_remarks(SimpleNamespace(cache_hit=True, kernel_hash="ab" * 16, remarks=[]), str(kernel)) is None
    assert sweep.cache.cached_row("ab" * 16, 0) is None
    with pytest.MonkeyPatch.context() as mp:  # the SASS entry: a miss means the tools run (stand-ins here)
        mp.setattr(cubin_mod.hashlib, "sha256", lambda data: SimpleNamespace(hexdigest=lambda: "ab" * 16))
        mp.setattr(cubin_mod, "_TOOLS", ())
        assert cubin_mod.sass_and_resources(b"\x7fELF", []) == (None, None)
    assert [p.stat().st_mtime == pytest.approx(old) for p in paths[1:]] == [True, True]


@pytest.mark.parametrize("value, cap", [("", 1024 << 20), ("  ", 1024 << 20), ("5", 5 << 20), (" 7 ", 7 << 20),
                                        ("0", None), ("abc", None), ("-5", None), ("1.5", None), ("1G", None),
                                        ("1_000", None), ("²", None)])
def test_the_setting_unset_is_1_gib_and_0_or_a_malformed_value_means_no_cap(value, cap):
    got, words = cache_prune.setting({cache_prune.VARIABLE: value})
    assert got == cap
    assert ("no cap" in words) == (cap is None)
    assert cache_prune.setting({})[0] == 1 << 30


@pytest.mark.parametrize("value", ["0", "garbage", "-1"])
def test_no_cap_means_no_scan_and_nothing_removed(cache, monkeypatch, value):
    monkeypatch.setenv(cache_prune.VARIABLE, value)
    monkeypatch.setattr(cache_prune, "prune", lambda *a, **k: pytest.fail("scanned with no cap"))
    old = entry(cache, "results", 1, 100 * KiB, age=1000)
    assert write_cache(cache / "results" / f"{2:040x}.json", "x" * (2 << 20))
    assert old.exists()


def test_stores_scan_once_per_process_and_not_within_the_interval(cache, monkeypatch):
    scans = []
    monkeypatch.setattr(cache_prune, "prune", lambda root, cap: scans.append(root) or cache_prune._mark(root))
    for n in range(3):
        write_cache(cache / "results" / f"{n:040x}.json", "small")
    assert scans == [str(cache)]  # the first store of the process; the stamp is fresh after it
    stale = time.time() - cache_prune.INTERVAL_S - 5
    os.utime(cache / cache_prune.STAMP, (stale, stale))
    write_cache(cache / "results" / f"{8:040x}.json", "small")
    assert len(scans) == 1  # this process looked at the stamp once, and that is all
    os.utime(cache / cache_prune.STAMP)

    cache_prune._looked.discard(str(cache))  # another process, just after
    write_cache(cache / "results" / f"{9:040x}.json", "small")
    assert len(scans) == 1

    cache_prune._looked.discard(str(cache))  # another process, a while later
    os.utime(cache / cache_prune.STAMP, (stale, stale))
    write_cache(cache / "results" / f"{10:040x}.json", "small")
    assert len(scans) == 2

    cache_prune.after_store(cache.parent / "elsewhere" / f"{11:040x}.json", 200 << 20)  # not the cache
    assert len(scans) == 2
    cache_prune.after_store(cache / "results" / f"{12:040x}.json", 128 << 20)  # an eighth of the cap, here
    assert len(scans) == 3


def test_links_are_not_followed_and_other_files_are_not_touched(cache, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    theirs = outside / f"{1:040x}.json"
    theirs.write_bytes(b"x" * (100 * KiB))
    (cache / "derived").symlink_to(outside, target_is_directory=True)  # a folder that is a link
    (cache / "results").mkdir()
    link = cache / "results" / f"{2:040x}.json"
    link.symlink_to(theirs)  # an entry that is a link
    others = [cache / "results" / "notes.json", cache / "results" / "README", cache / f"{3:040x}.json",
              cache / "other" / f"{4:040x}.json"]
    for path in others:
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"x" * (100 * KiB))
        os.utime(path, (0, 0))
    ours = entry(cache, "results", 5, 100 * KiB, age=10)

    pruned = cache_prune.prune(cache, 0)
    assert not ours.exists()
    assert theirs.exists() and link.is_symlink() and (cache / "derived").is_symlink()
    assert all(p.exists() for p in others)
    assert (pruned.entries, pruned.removed) == (1, 1)


def test_a_temporary_file_being_written_is_spared_and_a_left_over_one_is_not(cache):
    name = f"{1:040x}.json"
    writing = cache / "results" / f".{name}.k2j4_x9a.tmp"
    left = cache / "results" / f".{name}.zz81q0b.tmp"
    (cache / "results").mkdir()
    writing.write_bytes(b"x" * (100 * KiB))
    left.write_bytes(b"x" * (100 * KiB))
    stale = time.time() - cache_prune.TEMP_GRACE_S - 5
    os.utime(left, (stale, stale))
    done = entry(cache, "results", 2, 100 * KiB, age=cache_prune.TEMP_GRACE_S + 10)  # older than both

    cache_prune.prune(cache, 0)
    assert writing.exists()
    assert not left.exists() and not done.exists()


def test_entries_removed_by_another_process_meanwhile_are_not_an_error(cache, monkeypatch):
    paths = [entry(cache, "results", n, 100 * KiB, age=1000 - n) for n in range(6)]
    real_unlink, real_scandir = os.unlink, os.scandir

    def pruned_first(name, *, dir_fd=None):  # the other process wins the race for each removal
        real_unlink(name, dir_fd=dir_fd)
        real_unlink(name, dir_fd=dir_fd)

    monkeypatch.setattr(os, "unlink", pruned_first)
    pruned = cache_prune.prune(cache, 250 * KiB)
    assert [p.exists() for p in paths] == [False] * 4 + [True] * 2  # gone counts as freed: no extra removal
    assert pruned.removed == 4
    monkeypatch.setattr(os, "unlink", real_unlink)

    class Vanishing:  # a listing whose files are removed before they are looked at
        def __init__(self, folder):
            self.listing = real_scandir(folder)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.listing.close()

        def __iter__(self):
            for item in self.listing:
                real_unlink(cache / "results" / item.name)
                yield item

    monkeypatch.setattr(os, "scandir", Vanishing)
    assert cache_prune.prune(cache, 0).entries == 0
    assert not any(p.exists() for p in paths)


def test_processes_pruning_at_once_leave_the_folder_under_the_cap(cache):
    for n in range(2000):
        entry(cache, ("results", "derived", "replay")[n % 3], n, 1 * KiB, age=5000 - n)
    errors = []

    def prune():
        try:
            cache_prune.prune(cache, 500 * KiB)
        except Exception as e:  # pragma: no cover - the failure being tested for
            errors.append(e)

    threads = [threading.Thread(target=prune) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    left = names(cache)
    assert len(left) == 500
    assert left == {f"{('results', 'derived', 'replay')[n % 3]}/{n:040x}.json" for n in range(1500, 2000)}


def test_a_malformed_cap_is_said_on_every_command(tmp_path):
    """A typo turns pruning off (never deletes), and the command line says so, control characters shown."""
    import subprocess
    import sys

    from conftest import ROOT

    env = dict(os.environ, TRITONSCOPE_CACHE_DIR=str(tmp_path), TRITONSCOPE_CACHE_MAX_MB="1G\x1b[2J")
    out = subprocess.run([sys.executable, "-m", "tritonscope", "samples"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0
    assert "warning: TRITONSCOPE_CACHE_MAX_MB='1G\\x1b[2J' is not a whole number of MiB" in out.stderr
    assert "\x1b" not in out.stderr
    for good in ("", "0", "512"):
        assert cache_prune.problem({"TRITONSCOPE_CACHE_MAX_MB": good}) is None
