"""Keeps tritonscope's cache folder under a size cap by removing the entries used longest ago.

The folder (env.cache_dir()) gains an entry per compile, cubin and command
line (one in results/ holds MBs), and nothing else ever removes them: a
sweep of 1000 configs leaves GBs.  After each store, output.write_cache
calls `after_store`, which now and then scans the folder and, when its
entries add up to more than the cap, removes the least recently used ones.
"Used" is the file's mtime: a store sets it, and every hit renews it
(`touch`, once the entry is checked): result cache, replay, derived SASS,
remarks, sweep.

The cap is TRITONSCOPE_CACHE_MAX_MB, a whole number of MiB (1024 when unset
or empty).  0 turns it off, and so does a value that is not a whole number
(a typo must never delete entries); `setting()` says which applies, in words.

Cheap on purpose (no Triton, typer or rich, and no scan on most stores): a
process looks at the stamp file (.last-prune) on its first store and scans
only when no process has scanned for INTERVAL_S seconds; after that it
scans again only once it has stored an eighth of the cap itself (a long
sweep in one process).  A scan of 10,000 entries takes about 40 ms (a
1 GiB cache of compile results holds about 500).

What it may remove, and what never:
- only files named as tritonscope names its entries (a digest, or
  results/triton-*.json, and their temporary files) in its own FOLDERS:
  never another file, a symbolic link, or anything a link points to (each
  folder is opened without following links, and files are removed
  relative to it);
- not a temporary file younger than TEMP_GRACE_S: output.write_cache may be
  writing it (an older one was left by a killed writer);
- a file that another process removes first is simply gone, not an error.

Environments.  The Triton environments `versions` makes (triton-envs/triton-X, 0.6 GB each when pip made
them) count against the same cap and are pruned by the same rule, least recently used first, one whole
environment at a time.  Used is the mtime of its `.last-used` file, renewed by every process that takes
it (`use_env`), which also holds a shared lock on its `.in-use.lock` for as long as it runs: an
environment whose lock is held is in use and never removed, and a build (`.building-*`) is never a
candidate.  An environment counts the bytes that removing it frees: its files with no other hard link
(all of a pip-made one; a uv-made one's packages are hard links into uv's own cache, outside this
folder, so it counts only its own files).  Removing takes its lock exclusively, renames it out of the
way and notes the removal in triton-envs/.pruned.json, so that the command that next needs it says why
it is made again (`pruned_note`).
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections import namedtuple

from tritonscope.core.env import cache_dir

VARIABLE = "TRITONSCOPE_CACHE_MAX_MB"
DEFAULT_MB = 1024
FOLDERS = ("results", "replay", "derived", "remarks", "sweep")
ENVS = "triton-envs"          # environments: versions/envs.py
ENV_USED = ".last-used"       # its mtime: when a process last took the environment
ENV_LOCK = ".in-use.lock"     # held shared by each process using it, exclusively by the one removing it
PRUNED = ".pruned.json"       # {version: {"when": ..., "freed": bytes}}: environments removed for the cap
STAMP = ".last-prune"
INTERVAL_S = 60
TEMP_GRACE_S = 60

# 010f475c43daaba4894621c270a1a471689620a5.json, triton-3.5.0-0123456789abcdef0123.json
_ENTRY = r"(?:[0-9A-Za-z]{16,}|triton-[\w.+-]+)\.json"
_NAME = re.compile(_ENTRY)
# .010f475c43daaba4894621c270a1a471689620a5.json.k2j4_x9a.tmp (output._write_via_temp)
_TEMP = re.compile(rf"\.{_ENTRY}\.\w+\.tmp")

# Open each folder once, without following a link, and stat and remove by name relative to it:
# a folder swapped for a link between the scan and the removal cannot lead elsewhere.
_BY_FD = (hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY") and os.scandir in os.supports_fd
          and os.unlink in os.supports_dir_fd and os.stat in os.supports_dir_fd)


def _value(environ=None) -> str:
    return (os.environ if environ is None else environ).get(VARIABLE, "").strip()


def _malformed(value: str) -> bool:
    return bool(value) and not (value.isascii() and value.isdigit())


def _too_large(value: str) -> bool:
    """More than 15 digits of MiB (an exabyte and up): no disk holds it, and int() refuses 4300 digits and more."""
    return not _malformed(value) and len(value.lstrip("0")) > 15


def setting(environ=None) -> tuple[int | None, str]:
    """The cap in bytes (None: no cap) and where it came from, in words."""
    value = _value(environ)
    if not value:
        return DEFAULT_MB << 20, f"{DEFAULT_MB} MiB (the default)"
    if _malformed(value):
        return None, f"no cap: {VARIABLE}={value[:60]!r} is not a whole number of MiB"
    if _too_large(value):
        return None, f"no cap: {VARIABLE} is {len(value)} digits long, more than any disk holds"
    if int(value) == 0:
        return None, f"no cap ({VARIABLE}=0)"
    return int(value) << 20, f"{int(value)} MiB ({VARIABLE})"


def problem(environ=None) -> str | None:
    """What is wrong with TRITONSCOPE_CACHE_MAX_MB when it is set to something that is not a whole number.

    Such a value turns the cap off (a typo never deletes entries); the
    command line prints this as a warning so that it does not go unsaid.
    """
    value = _value(environ)
    if _malformed(value):
        return f"{VARIABLE}={value[:60]!r} is not a whole number of MiB, so tritonscope's cache is not pruned."
    if _too_large(value):
        return (f"{VARIABLE} is a number of {len(value)} digits, more than any disk holds, so tritonscope's cache is "
                "not pruned.")
    return None


def touch(path) -> None:
    """Mark a cache entry as just used (eviction goes by mtime); a failure is ignored."""
    try:
        if os.utime in os.supports_follow_symlinks:
            os.utime(path, follow_symlinks=False)
        else:
            os.utime(path)
    except OSError:
        pass


def load_entry(path):
    """An entry's JSON, or None when it cannot be read or is not JSON.

    Nothing is renewed: the caller checks the entry and calls `touch` once it answers.
    """
    import json

    try:
        with open(path, encoding="utf-8") as f:
            return json.loads(f.read())
    except (OSError, ValueError, RecursionError):  # a damaged entry is a miss (UnicodeDecodeError is a ValueError)
        return None


# What a scan found (entries, and their bytes) and what went (by this process or another, meanwhile).
# A named tuple, not a dataclass: making a dataclass costs about 1 ms, twice the rest of this module.
Pruned = namedtuple("Pruned", "entries size removed freed")


# Per cache folder, in this process: bytes stored since the last scan, and whether the stamp was looked at.
_stored: dict[str, int] = {}
_looked: set[str] = set()


def after_store(path, size: int) -> None:
    """Called after `size` bytes were stored at `path`: prune when the cache may have outgrown the cap.

    Does nothing for a path outside the cache folder; never raises.
    """
    cap = setting()[0]
    if cap is None:
        return
    root = os.path.abspath(cache_dir())
    if not os.path.abspath(path).startswith(root + os.sep):
        return
    try:
        if _due(root, cap, size):
            prune(root, cap)
    except OSError:  # pruning is housekeeping: the store itself succeeded
        pass


def _due(root: str, cap: int, size: int) -> bool:
    _stored[root] = _stored.get(root, 0) + size
    if _stored[root] >= cap // 8:
        return True
    if root in _looked:
        return False
    _looked.add(root)
    try:
        age = time.time() - os.stat(os.path.join(root, STAMP)).st_mtime
    except FileNotFoundError:
        return True
    return not 0 <= age < INTERVAL_S  # a stamp from the future (a clock set back) is no reason to wait


def prune(root, cap: int, *, now: float | None = None) -> Pruned:
    """Remove the least recently used entries under `root` until they add up to at most `cap` bytes."""
    root = os.path.abspath(root)
    _mark(root)
    now = time.time() if now is None else now
    folders, found = [], []
    try:
        for name in FOLDERS:
            folder = _open(os.path.join(root, name))
            if folder is not None:
                folders.append(folder)
                found += _entries(folder, now)
        found += _env_entries(os.path.join(root, ENVS))
        total = sum(entry[1] for entry in found)
        removed = freed = 0
        for mtime_ns, size, ino, spare, folder, name in sorted(found, key=lambda e: (e[0], e[5])):
            if total - freed <= cap:
                break
            if spare:   # a temporary file being written, an environment in use
                continue
            gone = _remove_env(folder, name, mtime_ns, size) if ino is None else _remove(folder, name, ino, mtime_ns)
            if gone:
                removed, freed = removed + 1, freed + size
    finally:
        for folder in folders:
            if isinstance(folder, int):
                os.close(folder)
    return Pruned(len(found), total, removed, freed)


def _mark(root: str) -> None:
    """Note a scan, for this process and (by the stamp's mtime) for the others."""
    _stored[root] = 0
    _looked.add(root)
    try:
        fd = os.open(os.path.join(root, STAMP), os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o666)
    except OSError:
        return
    try:
        os.utime(fd if os.utime in os.supports_fd else os.path.join(root, STAMP))
    except OSError:
        pass
    finally:
        os.close(fd)


def _open(path: str):
    """The folder as an fd opened without following a link, or its path where fds cannot be used; None if absent."""
    if _BY_FD:
        try:
            return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:  # missing, not a folder, or a link
            return None
    return path if os.path.isdir(path) and not os.path.islink(path) else None


def _entries(folder, now: float) -> list[tuple]:
    """(mtime_ns, size, inode, spare, folder, name) of each entry in the folder; spare: a temp file being written."""
    out = []
    try:
        with os.scandir(folder) as it:
            for entry in it:
                temp = _TEMP.fullmatch(entry.name)
                if not temp and not _NAME.fullmatch(entry.name):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:  # removed meanwhile
                    continue
                if not stat.S_ISREG(st.st_mode):  # a link, or a folder: not an entry
                    continue
                spare = bool(temp) and now - st.st_mtime < TEMP_GRACE_S
                out.append((st.st_mtime_ns, st.st_size, st.st_ino, spare, folder, entry.name))
    except OSError:
        pass
    return out


def _remove(folder, name: str, ino: int, mtime_ns: int) -> bool:
    """Remove the entry found by the scan; False when it was stored or used again since (or cannot be removed)."""
    fd = folder if isinstance(folder, int) else None
    where = name if fd is not None else os.path.join(folder, name)
    try:
        st = os.stat(where, dir_fd=fd, follow_symlinks=False)
        if st.st_ino != ino or st.st_mtime_ns != mtime_ns:
            return False
        os.unlink(where, dir_fd=fd)
    except FileNotFoundError:  # another process pruned it first
        return True
    except OSError:
        return False
    return True


# --------------------------------------------------------------------------
# Environments (triton-envs/triton-X): see the module doc
# --------------------------------------------------------------------------


def env_freed_bytes(folder) -> int:
    """What removing the environment in `folder` frees: its files with no other hard link (links not followed)."""
    total = 0
    for dirpath, dirs, files in os.walk(folder):
        for name in files:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_nlink <= 1:
                total += st.st_size
    return total


def _env_used_ns(folder: str) -> int | None:
    for name in (ENV_USED, "tritonscope-env.json"):   # an environment never taken since it was made: its record
        try:
            return os.stat(os.path.join(folder, name), follow_symlinks=False).st_mtime_ns
        except OSError:
            continue
    return None


def _lock(folder: str, shared: bool):
    """An open lock file of the environment, locked (shared or exclusive, never waiting); None when it is held the
    other way, or cannot be opened.  Without flock (Windows) an environment is never counted in use."""
    try:
        fd = os.open(os.path.join(folder, ENV_LOCK), os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o666)
    except OSError:
        return None
    try:
        import fcntl

        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except ImportError:
        pass
    except OSError:
        os.close(fd)
        return None
    return fd


def in_use(folder) -> bool:
    """Whether a running process holds the environment in `folder` (use_env)."""
    fd = _lock(str(folder), shared=False)
    if fd is None:
        return os.path.isdir(folder)
    os.close(fd)
    return False


_held: dict[str, int] = {}   # environments this process uses: folder -> its lock's fd, kept open until it exits


def use_env(folder) -> bool:
    """Take the environment in `folder` for this process: renewed as used now, and never pruned while this process
    runs.  False when it was pruned meanwhile (the caller makes it again)."""
    folder = os.path.abspath(folder)
    if folder in _held:
        try:
            same = os.path.samestat(os.fstat(_held[folder]), os.stat(os.path.join(folder, ENV_LOCK),
                                                                    follow_symlinks=False))
        except OSError:
            same = False
        if same:
            touch_env(folder)
            return True
        os.close(_held.pop(folder))   # removed and made again since: lock the new one
    fd = _lock(folder, shared=True)
    if fd is None:   # being removed (or not writable: then it is used unprotected, as before)
        return os.path.isdir(folder) and not os.path.exists(os.path.join(folder, ENV_LOCK))
    try:
        same = os.path.samestat(os.fstat(fd), os.stat(os.path.join(folder, ENV_LOCK), follow_symlinks=False))
    except OSError:
        same = False
    if not same:   # renamed away between our open and our lock: it is being removed
        os.close(fd)
        return False
    _held[folder] = fd
    touch_env(folder)
    return True


def touch_env(folder) -> None:
    """Mark the environment as used now."""
    path = os.path.join(folder, ENV_USED)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o666))
        os.utime(path)
    except OSError:
        pass


def _env_entries(envs: str) -> list[tuple]:
    """(used mtime_ns, bytes removing it frees, None, in use, the envs folder, its name) per environment."""
    out = []
    try:
        with os.scandir(envs) as it:
            names = [e.name for e in it if e.name.startswith("triton-") and e.is_dir(follow_symlinks=False)]
    except OSError:
        return out
    for name in names:
        folder = os.path.join(envs, name)
        if not _own_folder(folder):   # another user's (a shared cache folder): never counted, never removed
            continue
        used = _env_used_ns(folder)
        if used is None:   # no record: not an environment (or one being put in place)
            continue
        out.append((used, env_freed_bytes(folder), None, in_use(folder), envs, name))
    return out


def _own_folder(folder: str) -> bool:
    """A real folder (not a link) of this user's (where the system has uids)."""
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and (not hasattr(os, "geteuid") or st.st_uid == os.geteuid())


def _remove_env(envs: str, name: str, used_ns: int, size: int) -> bool:
    """Remove an environment the scan chose, unless a process took it since: its lock held exclusively while it
    is renamed out of the way; noted for pruned_note."""
    import shutil

    folder = os.path.join(envs, name)
    fd = _lock(folder, shared=False)
    if fd is None:
        return False
    try:
        if _env_used_ns(folder) != used_ns:   # taken since the scan
            return False
        gone = os.path.join(envs, f".removing-{name}-{os.getpid()}-{int(time.time())}")
        try:
            os.rename(folder, gone)
        except OSError:
            return False
    finally:
        os.close(fd)
    _note_pruned(envs, name[len("triton-"):], size)
    shutil.rmtree(gone, ignore_errors=True)
    return True


def _note_pruned(envs: str, version: str, size: int) -> None:
    import json

    notes = _pruned_notes(envs)
    notes[version] = {"when": time.strftime("%Y-%m-%d %H:%M"), "freed": size}
    tmp = os.path.join(envs, f".{PRUNED}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(notes, f)
        os.replace(tmp, os.path.join(envs, PRUNED))
    except OSError:
        pass


def _pruned_notes(envs: str) -> dict:
    data = load_entry(os.path.join(envs, PRUNED))
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def pruned_note(envs, version: str, *, forget: bool = False) -> str | None:
    """Why the environment for `version` is not there when the cap removed it (in words); `forget` drops the note
    (it is being made again)."""
    envs = str(envs)
    notes = _pruned_notes(envs)
    note = notes.get(version)
    if note is None:
        return None
    if forget:
        del notes[version]
        tmp = os.path.join(envs, f".{PRUNED}.{os.getpid()}.tmp")
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                __import__("json").dump(notes, f)
            os.replace(tmp, os.path.join(envs, PRUNED))
        except OSError:
            pass
    # the note is a file: a value of the wrong type or size (or a control character) is left unsaid, never a crash
    freed, when = note.get("freed"), note.get("when")
    size = (f", freeing {freed / (1 << 20):,.1f} MiB" if isinstance(freed, int) and not isinstance(freed, bool)
            and 0 <= freed < 1 << 63 else "")
    when = when if isinstance(when, str) and _WHEN.fullmatch(when) else "an earlier run"
    return (f"its environment was removed on {when} to keep tritonscope's cache under "
            f"its size cap of {setting()[1]}{size}")


_WHEN = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d")   # time.strftime("%Y-%m-%d %H:%M"), as _note_pruned writes it
