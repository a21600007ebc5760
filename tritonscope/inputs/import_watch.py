"""What a kernel module's import does beyond defining kernels: what it reads, how it leaves, what it starts.

`watching(path, folders)` wraps the import of a kernel file (inputs/kernels.load_module):

- It records what the import read that can change what the kernel computes: every environment variable
  read (os.environ[...], .get, os.getenv, `in`; the value, or None when unset) by code outside Triton
  and tritonscope, and every file opened under the module's folders (its path with its mtime and size,
  or None when it did not exist), less the Python sources and bytecode the result cache already hashes.
  The result cache keeps these with its entry (`reads_of`), and a repeat whose environment or files
  differ is a miss (`reads_unchanged`), checked without importing anything.
- An `os._exit(N)` during the import raises ModuleExited instead of ending tritonscope silently.
- A non-daemon thread started during the import is made a daemon, so that it cannot keep tritonscope
  alive after its output (Python joins non-daemon threads at exit).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from pathlib import Path
from typing import Any

# Sources the result cache hashes itself (user_module_files), and what Python writes beside them.
_SKIPPED_SUFFIXES = (".py", ".pyc", ".pyo")


class ModuleExited(BaseException):
    """A kernel module called os._exit(code) while it imported (raised in place of the exit)."""

    def __init__(self, code: Any):
        super().__init__(code)
        self.code = code

    def __str__(self) -> str:
        return f"the module called os._exit({self.code}) at import"


class _Watch:
    def __init__(self, folders: list[str]):
        self.folders = tuple(f.rstrip(os.sep) + os.sep for f in folders)
        self.env: dict[str, str | None] = {}
        self.files: dict[str, tuple[int, int] | None] = {}


# thread id -> the imports being watched on that thread, innermost last (what a thread reads is its own import's)
_ACTIVE: dict[int, list[_Watch]] = {}
_LOCK = threading.Lock()
_DEPTH = 0  # watched imports under way in every thread: the patches are in place while it is above 0
# path of the kernel file (resolved) -> what its last import read
_READS: dict[str, dict[str, Any]] = {}
_HOOKED = False
_REAL_EXIT = os._exit
_REAL_GETITEM = os._Environ.__getitem__
_REAL_START = threading.Thread.start
_IGNORED_CALLERS: tuple[str, ...] = ()


def _ignored_callers() -> tuple[str, ...]:
    """Folders whose env reads are not recorded: tritonscope's own, Triton's (its knobs are in the key),
    and the modules that only pass a read on (os, collections.abc)."""
    global _IGNORED_CALLERS
    if not _IGNORED_CALLERS:
        roots = [str(Path(__file__).resolve().parents[1])]
        spec = None
        try:
            import importlib.util

            spec = importlib.util.find_spec("triton")
        except (ImportError, ValueError):
            pass
        if spec is not None and spec.submodule_search_locations:
            roots += [str(Path(p).resolve()) for p in spec.submodule_search_locations]
        _IGNORED_CALLERS = tuple(r.rstrip(os.sep) + os.sep for r in roots)
    return _IGNORED_CALLERS


_PASS_THROUGH = (os.__file__, getattr(sys.modules.get("_collections_abc"), "__file__", "") or "", __file__)


def _caller_file() -> str:
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename in _PASS_THROUGH:
        frame = frame.f_back
    return frame.f_code.co_filename if frame is not None else ""


def _current() -> _Watch | None:
    """The import being watched on this thread, if any."""
    stack = _ACTIVE.get(threading.get_ident())
    return stack[-1] if stack else None


def _getitem(self, key):
    try:
        value = _REAL_GETITEM(self, key)
    except KeyError:
        value = None
        raise
    finally:
        watch = _current() if _ACTIVE else None
        if watch is not None and self is os.environ and isinstance(key, str):
            try:
                caller = _caller_file()
                if not caller.startswith(_ignored_callers()):
                    watch.env.setdefault(key, value)
            except Exception:  # recording is best effort: never break the module's read
                pass
    return value


def _exit(code=0):
    if _ACTIVE and _current() is not None:
        raise ModuleExited(code)
    _REAL_EXIT(code)


def _start(self):
    if _ACTIVE and _current() is not None and not self.daemon:
        self.daemon = True  # started by the import: it must not hold tritonscope open at exit
    return _REAL_START(self)


def _audit(event: str, args: tuple) -> None:
    if event != "open" or not _ACTIVE:
        return
    try:
        watch = _current()
        target = args[0]
        if watch is None or isinstance(target, int) or target is None:
            return
        path = os.path.abspath(os.fsdecode(target))
        if not path.startswith(watch.folders) or path.endswith(_SKIPPED_SUFFIXES) \
                or f"{os.sep}__pycache__{os.sep}" in path or path in watch.files:
            return
        watch.files[path] = _stamp(path)
    except Exception:
        pass


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


@contextlib.contextmanager
def watching(path: Path, folders: list[str]):
    """Record what importing the kernel file `path` reads (kept for reads_of), turn os._exit into
    ModuleExited, and make the threads it starts daemons."""
    global _HOOKED, _DEPTH
    watch = _Watch(folders)
    me = threading.get_ident()
    with _LOCK:
        if not _HOOKED:
            sys.addaudithook(_audit)  # for the process's life; it returns at once outside a watched import
            _HOOKED = True
        if _DEPTH == 0:  # the first watched import (of any thread) puts the patches in place, the last removes them
            os._exit, os._Environ.__getitem__, threading.Thread.start = _exit, _getitem, _start
        _DEPTH += 1
        _ACTIVE.setdefault(me, []).append(watch)
    ok = False
    try:
        yield watch
        ok = True
    finally:
        with _LOCK:
            stack = _ACTIVE.get(me, [])
            if watch in stack:
                stack.remove(watch)
            if not stack:
                _ACTIVE.pop(me, None)
            _DEPTH -= 1
            if _DEPTH == 0:
                os._exit, os._Environ.__getitem__, threading.Thread.start = _REAL_EXIT, _REAL_GETITEM, _REAL_START
        if ok:
            _READS[str(Path(path).resolve())] = {
                "env": dict(sorted(watch.env.items())),
                "files": [[f, *(s if s is not None else (None, None))] for f, s in sorted(watch.files.items())],
            }


def reads_of(path: str | Path) -> dict[str, Any]:
    """What the last import of the kernel file `path` read ({"env": {...}, "files": [[path, mtime_ns, size]]});
    empty when it was not imported through load_module."""
    return _READS.get(str(Path(path).resolve()), {"env": {}, "files": []})


def reads_unchanged(reads: Any) -> bool:
    """Whether every variable and file an import read is as it was (a malformed record: False)."""
    if not isinstance(reads, dict):
        return False
    env, files = reads.get("env"), reads.get("files")
    if not isinstance(env, dict) or not isinstance(files, list):
        return False
    for name, value in env.items():
        if os.environ.get(name) != value:
            return False
    for item in files:
        if not isinstance(item, list) or len(item) != 3 or not isinstance(item[0], str):
            return False
        got = _stamp(item[0])
        if (list(got) if got is not None else [None, None]) != item[1:]:
            return False
    return True
