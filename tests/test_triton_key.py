"""Issue 15: Triton's cache key, hashed early on a thread (triton_api.start_key_digest), is Triton's own key."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from tritonscope import triton_api


def _triton_key_function():
    """Triton's own cached triton_key, even where this process installed the early key."""
    import triton.runtime.cache as cache

    return getattr(cache.triton_key, "original", cache.triton_key)


def _digest_of(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


def _state(**changes):
    """A finished digest state for this Triton's library, as start_key_digest leaves it."""
    import threading

    path = triton_api._libtriton_path()
    thread = threading.Thread(target=lambda: None)
    thread.start()
    state = {"pid": os.getpid(), "path": path, "stamp": triton_api._file_stamp(path), "thread": thread,
             "stop": threading.Event(), "digest": _digest_of(path)}
    state.update(changes)
    return state


class _Uncomputed:
    """Triton's triton_key as it is before its first call (lru_cache empty), whatever this process did."""

    def __init__(self, fn):
        self.__wrapped__ = fn.__wrapped__

    def cache_info(self):
        return type("Info", (), {"currsize": 0})()


def test_the_recipe_gives_tritons_own_key():
    own = _triton_key_function().__wrapped__()  # Triton's function itself, uncached
    assert triton_api.key_from_recipe(_digest_of(triton_api._libtriton_path())) == own


@pytest.mark.skipif(triton_api.triton_series() not in ((3, 6), (3, 9)), reason="recipe checked on 3.6 and 3.9")
def test_the_supported_tritons_recipe_is_known():
    # If this fails, the early key is silently off (a slower cold compile), not wrong.
    assert triton_api._recipe_fingerprint(_triton_key_function()) in triton_api._KEY_RECIPES


def test_key_to_install_is_tritons_and_refuses_when_unsure():
    fn = _Uncomputed(_triton_key_function())
    own = fn.__wrapped__()
    if triton_api._recipe_fingerprint(_triton_key_function()) in triton_api._KEY_RECIPES:
        assert triton_api.key_to_install(_state(), fn) == own
    # the library changed after it was hashed
    ino, size, mtime = triton_api._file_stamp(triton_api._libtriton_path())
    assert triton_api.key_to_install(_state(stamp=(ino, size, mtime + 1)), fn) is None
    # another file was hashed, or the thread did not finish
    assert triton_api.key_to_install(_state(path=__file__), fn) is None
    assert triton_api.key_to_install(_state(digest=None), fn) is None
    # a recipe not known here (any other function)

    def triton_key():
        return "other"

    triton_key.cache_info = fn.cache_info
    assert triton_api.key_to_install(_state(), triton_key) is None
    # the key was computed already in this process
    computed = _Uncomputed(_triton_key_function())
    computed.cache_info = lambda: type("Info", (), {"currsize": 1})()
    assert triton_api.key_to_install(_state(), computed) is None


_COMPILE = """
import json, sys
from tritonscope import triton_api
if sys.argv[1] == "early":
    triton_api.start_key_digest()
from tritonscope.pipeline.triton_compile import compile_artifact
from tritonscope.inputs.kernels import Request
from tritonscope.pipeline.binding import build_spec
import triton.runtime.cache as cache
a = compile_artifact(build_spec(Request(target="vector_add", arch="sm_90a"), "sm_90a"))
original = getattr(cache.triton_key, "original", None)
print(json.dumps({"installed": original is not None, "key": cache.triton_key(),
                  "own": (original or cache.triton_key).__wrapped__(), "hash": a.kernel_hash,
                  "ptx": a.stages["ptx"]}))
"""


def test_a_compile_with_the_early_key_is_named_as_tritons_own(tmp_path):
    """Two fresh processes, each with its own empty caches: one with the early key, one without."""
    runs = {}
    for how in ("early", "late"):
        env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / how / "triton"),
                   TRITONSCOPE_CACHE_DIR=str(tmp_path / how / "own"))
        out = subprocess.run([sys.executable, "-c", _COMPILE, how], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        runs[how] = json.loads(out.stdout.strip().splitlines()[-1])
    known = triton_api._recipe_fingerprint(_triton_key_function()) in triton_api._KEY_RECIPES
    assert runs["early"]["installed"] is known
    assert runs["late"]["installed"] is False
    assert runs["early"]["key"] == runs["early"]["own"] == runs["late"]["key"]
    # the same cache key gives the same kernel hash (Triton's cache folder and metadata), and the same text
    assert runs["early"]["hash"] == runs["late"]["hash"]
    assert runs["early"]["ptx"] == runs["late"]["ptx"]
    folders = [sorted(p.name for p in (tmp_path / how / "triton").iterdir()) for how in ("early", "late")]
    assert folders[0] == folders[1] and folders[0]
