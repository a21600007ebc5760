"""What a compile depends on: the code-generation environment, the build (read without importing Triton), the knobs Triton keys its cache on, the version."""

from __future__ import annotations

import functools
import os
import threading

# Environment variables that change code generation: recorded in artifacts.
CODEGEN_ENV = (
    "TRITON_DEFAULT_FP_FUSION",
    "TRITON_F32_DEFAULT",
    "TRITON_DISABLE_LINE_INFO",
    "DISABLE_PTXAS_OPT",
    "PTXAS_OPTIONS",
    "USE_IR_LOC",
)

_lock = threading.Lock()


@functools.cache
def triton_version() -> str:
    """The installed Triton's version, '3.9.0' (read from package metadata: no import).  Read once per process:
    the metadata lookup walks sys.path (about 10 ms), and every stage's notes ask for it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("triton")
    except PackageNotFoundError:  # a source checkout on sys.path
        import triton

        return triton.__version__


def wrap_stages(wrap, keys, *, cache_part: str) -> None:
    """Have Triton run each compile stage in `keys` ('ttir', 'ttgir', 'llir') as `wrap(key, stage_fn)`.

    Through Triton's public `knobs.runtime.add_stages_inspection_hook`: 3.6
    and 3.9 call it with the backend's stage table to edit, and 3.9 first
    calls it with no arguments for a part of the cache key (`cache_part`),
    so that wrapped compiles do not share cache entries with plain ones.
    """
    import hashlib

    from triton import knobs

    def hook(*args):
        if not args:
            return cache_part, hashlib.sha256(cache_part.encode()).hexdigest()
        table = args[1]
        for key in keys:
            if key in table:
                table[key] = wrap(key, table[key])
        return None

    knobs.runtime.add_stages_inspection_hook = hook


def knobs_module():
    """`triton.knobs` (Triton 3.4 and newer), or None: Triton 3.2 and 3.3 have no knobs module (their settings
    are environment variables read where they are used), so every caller says what it does without it."""
    try:
        from triton import knobs
    except ImportError:
        return None
    return knobs


def triton_series() -> tuple[int, int] | None:
    """(major, minor) of the installed Triton, e.g. (3, 9); None when Triton is not installed."""
    try:
        major, minor = triton_version().split(".")[:2]
    except Exception:
        return None
    return int(major), int("".join(c for c in minor if c.isdigit()) or 0)


def codegen_env() -> dict[str, str]:
    return {k: os.environ[k] for k in CODEGEN_ENV if k in os.environ}


# --------------------------------------------------------------------------
# What a compile result depends on (result_cache.py): the build, read without
# importing Triton, and what Triton itself says changes its cache key
# --------------------------------------------------------------------------

# The folders of the triton package whose files make a build: the ones
# triton_key() hashes (compiler, backends, language, libtriton), plus runtime
# (the JIT and its binder) and the tools bundled in backends/*/bin and lib.
_BUILD_FOLDERS = ("compiler", "backends", "language", "runtime", "_C")
_BUILD_SKIPPED = ("__pycache__", "include")  # CUDA headers only build the launcher


def triton_build() -> dict[str, str] | None:
    """{'version', 'path', 'stamp'} of the installed Triton, without importing it; None if absent.

    `stamp` digests the path, size and mtime of every file in the folders
    Triton's own cache key hashes (libtriton.so included).  Triton hashes
    their *contents* in every process that enters its JIT (`triton_key()`,
    about 0.45 s here, most of it the 400 MB libtriton); a reinstall,
    upgrade or rebuild changes sizes or mtimes, which is what tells builds
    apart at a cost of about a hundred stat calls.
    """
    import hashlib
    import importlib.util
    import re

    try:
        found = importlib.util.find_spec("triton")
    except (ImportError, ValueError):
        return None
    if found is None or not found.origin:
        return None
    root = os.path.dirname(os.path.realpath(found.origin))
    digest = hashlib.sha256()
    try:
        init = open(found.origin, "rb").read()
    except OSError:
        return None
    digest.update(init)
    for folder in _BUILD_FOLDERS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, folder)):
            dirnames[:] = sorted(d for d in dirnames if d not in _BUILD_SKIPPED)
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                digest.update(f"{os.path.relpath(path, root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    # __version__ = '3.9.0'
    m = re.search(rb"""^__version__\s*=\s*['"]([^'"]+)['"]""", init, re.MULTILINE)
    version = m.group(1).decode() if m else triton_version()
    return {"version": version, "path": root, "stamp": digest.hexdigest()}


def cache_invalidating_env_names() -> list[str]:
    """The environment variables Triton says change its cache key (3.6 and 3.9 alike).

    `get_cache_invalidating_env_vars()` answers only with the ones that are
    set, so each candidate is set for the length of one call: the names
    knobs.py declares, the code-generation ones we know, and any set variable
    that looks like a compiler knob.  Imports Triton: call it once per build
    and keep the answer (result_cache.py does).
    """
    import re

    from triton._C.libtriton import get_cache_invalidating_env_vars

    knobs = knobs_module()
    try:  # 3.2/3.3 have no knobs.py: the names come from the list below and the set variables
        with open(knobs.__file__ if knobs else "", encoding="utf-8") as f:
            declared = f.read()
    except OSError:
        declared = ""
    # env_bool("TRITON_DEFAULT_FP_FUSION", True)
    candidates = set(re.findall(r"""["']([A-Z][A-Z0-9_]{3,})["']""", declared)) | set(CODEGEN_ENV)
    candidates |= {k for k in os.environ if k.startswith(KNOB_PREFIXES)}
    with _lock:
        unset = [k for k in candidates if k not in os.environ]
        try:
            for k in unset:
                os.environ[k] = "1"
            names = set(get_cache_invalidating_env_vars())
        finally:
            for k in unset:
                os.environ.pop(k, None)
    return sorted(names)


# Prefixes of the variables Triton, MLIR, LLVM and ptxas read: result_cache.py
# keys on every set variable that starts with one (a superset of Triton's list).
KNOB_PREFIXES = ("TRITON_", "MLIR_", "LLVM_", "NVPTX", "PTXAS", "AMDGCN_", "DISABLE_", "ALLOW_", "USE_IR_",
                 "ENABLE_", "AMD_", "HIP_", "ROCM_")


def jit_dependency_files(jit_fn) -> list[str]:
    """Source files of the @triton.jit functions `jit_fn` calls, directly or not, itself included.

    Triton's JIT folds called kernels (and the globals they read) into its
    cache key; this follows the same names (`helper(x)`, `module.helper(x)`)
    through each function's globals, to name the files a result depends on.
    """
    seen: set[int] = set()
    files: set[str] = set()

    def names_of(code) -> set[str]:
        out = set(code.co_names)
        for const in code.co_consts:
            if hasattr(const, "co_names"):
                out |= names_of(const)
        return out

    def visit(fn) -> None:
        if fn is None or id(fn) in seen:
            return
        seen.add(id(fn))
        py = getattr(fn, "fn", None)
        code = getattr(py, "__code__", None)
        if code is None:
            return
        files.add(code.co_filename)
        scope = getattr(py, "__globals__", {})
        names = names_of(code)
        for name in names:
            value = scope.get(name)
            if value is None:
                continue
            if type(value).__name__ == "module":
                for attr in names:
                    member = getattr(value, attr, None)
                    if type(member).__name__ == "JITFunction":
                        visit(member)
            elif type(value).__name__ == "JITFunction":
                visit(value)

    visit(jit_fn)
    return sorted(files)


def quiet_known_warnings() -> None:
    """3.9 warns once per process that TRITON_DEFAULT_FP_FUSION is unset.

    We keep Triton's default (fusion on, as every 3.x release has) and record
    the value in the artifact, so the warning only adds noise to the CLI.
    """
    import warnings

    warnings.filterwarnings("ignore", message="TRITON_DEFAULT_FP_FUSION is unset")


# --------------------------------------------------------------------------
