"""Triton's cache key, its slow part (hashing libtriton) started early on a thread, with Triton's own recipe."""

from __future__ import annotations

import os
import threading
from typing import Any

# Triton's cache key, its slow part started early
#
# Before its first compile in a process, Triton computes `triton_key()`:
# SHA-256 over its Python files and its 500 MB shared library (about 0.3 s,
# 40% of a cold bare compile).  `start_key_digest` hashes the library on a
# thread as soon as a command that compiles starts (hashlib lets go of the
# GIL while it hashes, so this runs beside typer and Triton's import), and
# `_install_key` then hands Triton the key made by Triton's own recipe with
# that digest, the way Triton's own compile-warmup pool hands a precomputed
# key to its workers.  Only a recipe known here (by the SHA-256 of
# triton_key's source: 3.6 and 3.9 are identical) is replayed; any other
# Triton, a library that changed meanwhile, or a key already computed is
# left to Triton.  The key names a compile in Triton's cache (and so its
# metadata hash) and changes no stage's text; tests check it is Triton's own.
# --------------------------------------------------------------------------

_KEY_RECIPES = frozenset({"7d2c8021b5b5b005dc2a4457bc365b3d"})  # sha256(source)[:32]: 3.6.0 and 3.9.0
_digest: dict[str, Any] = {}
_KEY_CHUNK = 64 << 20


def _libtriton_in(package_dir: str) -> str:
    """The shared library triton_key hashes, in Triton's package folder."""
    import sysconfig

    ext = (sysconfig.get_config_var("EXT_SUFFIX") or ".so").split(".")[-1]
    return os.path.join(package_dir, "_C", f"libtriton.{ext}")


def _libtriton_path() -> str | None:
    """The shared library triton_key hashes, found without importing Triton."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("triton")
    except (ImportError, ValueError):
        return None
    locations = list(getattr(spec, "submodule_search_locations", None) or [])
    return _libtriton_in(locations[0]) if locations else None


def _file_stamp(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _digest_state() -> dict[str, Any] | None:
    """This process's digest, if one was started (a forked child has no thread: None)."""
    state = _digest.get("state")
    return state if state is not None and state["pid"] == os.getpid() else None


def start_key_digest() -> None:
    """Start hashing Triton's shared library on a daemon thread (once per process; imports no Triton)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if _digest_state() is not None or cores < 2:
        return  # started already, or no second core to hash on
    path = _libtriton_path()
    stamp = _file_stamp(path) if path else None
    if stamp is None:
        return
    state: dict[str, Any] = {"pid": os.getpid(), "path": path, "stamp": stamp, "stop": threading.Event()}

    def run():
        # Few, large updates over a mapping of the file: each hashlib call runs without the GIL, and
        # between calls this thread must win the GIL back from the busy main thread (up to 5 ms each;
        # 8 MB reads made the hash take 1.5 s instead of 0.3 s).
        import hashlib
        import mmap

        h = hashlib.sha256()
        try:
            with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                view = memoryview(mapped)
                try:
                    for start in range(0, len(mapped), _KEY_CHUNK):
                        if state["stop"].is_set():
                            return
                        h.update(view[start:start + _KEY_CHUNK])
                finally:
                    view.release()
        except (OSError, ValueError):
            return
        state["digest"] = h.hexdigest()

    state["thread"] = threading.Thread(target=run, name="tritonscope-key", daemon=True)
    _digest["state"] = state
    state["thread"].start()


def stop_key_digest() -> None:
    """No compile after all (the result cache answered): let the thread stop."""
    state = _digest_state()
    if state is not None:
        state["stop"].set()


def _recipe_fingerprint(fn) -> str | None:
    import hashlib
    import inspect

    try:
        return hashlib.sha256(inspect.getsource(fn).encode()).hexdigest()[:32]
    except (OSError, TypeError):
        return None


def key_from_recipe(library_digest: str) -> str:
    """triton_key() as Triton 3.6-3.9 compute it, with the library's digest given (runtime/cache.py)."""
    import hashlib
    import pkgutil

    import triton
    import triton.runtime.cache as cache

    def digest(file: str) -> str:
        with open(file, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()

    root = os.path.dirname(os.path.dirname(os.path.abspath(cache.__file__)))
    contents = [digest(cache.__file__)]
    for folder, prefix in ((os.path.join(root, "compiler"), "triton.compiler."),
                           (os.path.join(root, "backends"), "triton.backends.")):
        contents += [digest(lib.module_finder.find_spec(lib.name).origin)
                     for lib in pkgutil.walk_packages([folder], prefix=prefix)]
    contents.append(library_digest)
    contents += [digest(lib.module_finder.find_spec(lib.name).origin)
                 for lib in pkgutil.walk_packages([os.path.join(root, "language")], prefix="triton.language.")]
    return f"{getattr(cache, '__version__', triton.__version__)}" + "-".join(contents)


def _install_key() -> bool:
    """Give Triton its cache key from the early digest (see above); False when Triton computes its own."""
    state = _digest_state()
    if state is None or state.get("used"):
        return False
    state["used"] = True
    import triton.runtime.cache as cache

    key = key_to_install(state, cache.triton_key)
    if key is None:
        return False

    def triton_key() -> str:
        return key

    triton_key.original = cache.triton_key
    cache.triton_key = triton_key
    return True


def key_to_install(state: dict[str, Any], triton_key) -> str | None:
    """The key `triton_key` (Triton's function) would compute, made with `state`'s digest; None when unsure.

    Unsure: the key is computed already (or the function is not Triton's
    cached one), its recipe is not one known here, the digest is of another
    library file, or the file changed since it was hashed.
    """
    import triton.runtime.cache as cache

    if not hasattr(triton_key, "cache_info") or triton_key.cache_info().currsize:
        return None
    if _recipe_fingerprint(triton_key) not in _KEY_RECIPES:
        return None
    root = os.path.dirname(os.path.dirname(os.path.abspath(cache.__file__)))
    if os.path.realpath(_libtriton_in(root)) != os.path.realpath(state["path"]):
        return None
    state["thread"].join()
    digest = state.get("digest")
    if digest is None or _file_stamp(state["path"]) != state["stamp"]:
        return None
    try:
        return key_from_recipe(digest)
    except Exception:  # a file the recipe reads went missing: Triton computes (and reports) its own
        return None
