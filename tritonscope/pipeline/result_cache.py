"""tritonscope's own cache of whole compile results, read before Triton is entered.

Why: every process that enters Triton's JIT first hashes Triton itself
(`triton_key()` reads libtriton, about 0.45 s of a 1.2 s warm `compile`)
before it even looks in Triton's cache.  A repeat of the same compile only
has to prove that nothing it depends on changed, which costs a few file
hashes and a hundred stat calls, and can then hand back the Artifact it
kept (stages, metadata, resources, SASS, specialization, remarks) without
importing Triton at all.

What the key covers (`key_parts`):

- the request as the user gave it (target, -c, --arg, --block, warps,
  stages, shape, dtype, launch options) and the canonical target arch (the
  local GPU's when none was named);
- the kernel file's bytes and its path;
- tritonscope's version and the size and mtime of its own source files;
- Python's version, PYTHONPATH;
- Triton's version and build: the path, size and mtime of every file whose
  contents Triton's own cache key hashes (triton_api.triton_build);
- the environment: every variable Triton says changes its cache key (asked
  once per Triton build, with the answer kept next to the entries), the
  code-generation variables tritonscope records, and every set variable that
  looks like a compiler knob (TRITON_*, MLIR_*, LLVM_*, ...), less the few
  that only say where files go (TRITON_CACHE_DIR, ...).

Each entry also lists the files the result was built from beyond the kernel
file, with their SHA-256, checked on every hit: the modules of the user's
tree that were loaded with the kernel (anything outside the standard library,
site-packages, Triton and tritonscope), and the files of every @triton.jit
function the kernel calls (wherever they live, as Triton's dependency hash
follows them).

Each entry also keeps what the kernel module's import read (inputs/import_watch): the environment
variables it read, with their values (None: unset), and the files it opened under its folder (a config
file), with their mtime and size; a repeat where one differs is a miss.

Not covered (a stale answer is possible; `--no-cache` or
TRITON_ALWAYS_COMPILE=1 compiles afresh): a module that a kernel file would
import only if it existed (try/except ImportError); a change to an imported
library in site-packages other than Triton that defines no kernel but
changes what the kernel file computes at import; tools outside Triton's
package that TRITON_*_PATH variables do not name; and a file edited twice
within one mtime tick with the same size (Triton's build and tritonscope's
own sources are checked by stat, the kernel and its modules by content).

Entries go through output.write_cache (atomic, never half-written); any
unreadable, foreign or stale entry is a miss, never an error.  A hit renews
the entry's mtime, so that the size cap (cache_prune) removes it last.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any

from tritonscope.inputs import import_watch

# Bumped when the entry format or the key's meaning changes.
SCHEMA = 2
FOLDER = "results"

# Compiler-knob-looking variables that only say where things go, not what is generated.
NEUTRAL_ENV = frozenset({
    "TRITON_CACHE_DIR", "TRITON_HOME", "TRITON_DUMP_DIR", "TRITON_OVERRIDE_DIR", "TRITON_PRINT_AUTOTUNING",
    "TRITON_CACHE_MANAGER", "TRITON_REMOTE_CACHE_BACKEND", "TRITON_ALWAYS_COMPILE",
})


def enabled() -> bool:
    """False when the user asked for fresh compiles: TRITON_ALWAYS_COMPILE=1 or TRITONSCOPE_RESULT_CACHE=0.

    (The test suite turns it off in conftest.py: a test that fakes a Triton
    failure must reach Triton; tests/test_result_cache.py turns it on.)
    """
    def off(name: str, words: tuple[str, ...]) -> bool:
        return os.environ.get(name, "").strip().lower() in words

    return not (off("TRITON_ALWAYS_COMPILE", ("1", "true", "on", "yes"))
                or off("TRITONSCOPE_RESULT_CACHE", ("0", "false", "off", "no")))


# --------------------------------------------------------------------------
# The key
# --------------------------------------------------------------------------


def kernel_file(target: str) -> Path | None:
    """The file a target names, found as kernels.resolve_target finds it but without parsing the samples.

    None when it is not a file (the compile path then reports why).
    """
    from tritonscope.inputs.kernels import _MODULE_PATH_RE, SAMPLES_DIR, module_file

    # C:\\k.py is a Windows path, not file "C" and kernel "\\k.py"
    if ":" in target and not re.match(r"^[A-Za-z]:[\\/]", target):
        path = Path(target.rpartition(":")[0]).expanduser()
        text = target.rpartition(":")[0]
        if not path.is_file() and not text.endswith(".py") and _MODULE_PATH_RE.match(text):
            return module_file(text)  # package.module:kernel
    elif target.endswith(".py"):
        path = Path(target).expanduser()
    else:
        path = SAMPLES_DIR / f"{target}.py"
    try:
        return path.resolve() if path.is_file() else None
    except OSError:
        return None


def triton_build() -> dict[str, str] | None:
    """Triton's version and build stamp (a seam: tests fake another version here)."""
    from tritonscope import triton_api

    return triton_api.triton_build()


def tritonscope_build() -> dict[str, str]:
    """tritonscope's version and a stamp of its own sources (a developer's edit invalidates entries)."""
    from tritonscope._version import __version__

    root = Path(__file__).resolve().parents[1]  # the tritonscope package
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                try:
                    st = os.stat(os.path.join(dirpath, name))
                except OSError:
                    continue
                digest.update(f"{os.path.relpath(dirpath, root)}/{name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return {"version": __version__, "stamp": digest.hexdigest()}


def knob_names(build: dict[str, str]) -> list[str] | None:
    """The variables Triton said change its cache key, as recorded for this build; None if never asked."""
    from tritonscope.core import cache_prune

    path = _knobs_path(build)
    data = cache_prune.load_entry(path)
    if not isinstance(data, dict) or "invalidating_env" not in data:
        return None
    names = data["invalidating_env"]
    cache_prune.touch(path)  # every lookup needs it: pruning it first would make every entry a miss
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else None


def record_knob_names(build: dict[str, str]) -> list[str]:
    """Ask Triton (imports it) which variables change its cache key, and keep the answer for this build."""
    from tritonscope import triton_api
    from tritonscope.core.output import write_cache

    names = triton_api.cache_invalidating_env_names()
    write_cache(_knobs_path(build), json.dumps({"triton": build, "invalidating_env": names}))
    return names


def _knobs_path(build: dict[str, str]) -> Path:
    from tritonscope.core.env import cache_dir

    return cache_dir() / FOLDER / f"triton-{build['version']}-{build['stamp'][:20]}.json"


def env_values(knobs: list[str]) -> dict[str, str | None]:
    """The values (None: unset) of every variable that can change the result."""
    from tritonscope import triton_api

    names = set(knobs) | set(triton_api.CODEGEN_ENV)
    names |= {k for k in os.environ if k.startswith(triton_api.KNOB_PREFIXES)}
    names |= {"PYTHONPATH"}
    return {k: os.environ.get(k) for k in sorted(names - NEUTRAL_ENV)}


def request_fields(request, arch: str) -> dict[str, Any]:
    """What the user asked for, as given (the compile turns it into a KernelSpec the same way every time)."""
    return {
        "target": request.target,
        "constexprs": dict(request.constexprs or {}),
        "args": dict(request.args or {}),
        "block": request.block,
        "num_warps": request.num_warps,
        "num_stages": request.num_stages,
        "shape": request.shape,
        "dtype": request.dtype,
        "options": {k: v for k, v in sorted((request.options or {}).items())},
        "arch": arch,
        **({"config": request.config} if getattr(request, "config", None) is not None else {}),
        **({"gpu": request.gpu} if getattr(request, "gpu", None) else {}),
        **({"grid": request.grid} if getattr(request, "grid", None) else {}),   # --grid: the spec's grid
    }


def key_parts(request, arch: str, *, knobs: list[str] | None = None) -> dict[str, Any] | None:
    """Everything the result depends on, as one JSON-able dict; None when it cannot be known cheaply.

    `knobs`: Triton's cache-invalidating variable names, else the ones
    recorded for this build (None when never recorded: a miss).
    """
    path = kernel_file(request.target)
    build = triton_build()
    if path is None or build is None:
        return None
    if knobs is None:
        knobs = knob_names(build)
        if knobs is None:
            return None
    try:
        kernel_bytes = path.read_bytes()
    except OSError:
        return None
    return {
        "schema": SCHEMA,
        "request": request_fields(request, arch),
        "kernel": {"path": str(path), "sha256": hashlib.sha256(kernel_bytes).hexdigest()},
        "tritonscope": tritonscope_build(),
        "python": list(sys.version_info[:3]) + [sys.implementation.name],
        "triton": build,
        "env": env_values(knobs),
    }


def key_of(parts: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def entry_path(parts: dict[str, Any]) -> Path:
    from tritonscope.core.env import cache_dir

    return cache_dir() / FOLDER / f"{key_of(parts)[:40]}.json"


# --------------------------------------------------------------------------
# Looking up and storing
# --------------------------------------------------------------------------


@dataclass
class Entry:
    """One kept compile: its file and its content (key, parts, deps, the encoded artifact, perhaps the analysis).

    It travels with the artifact it holds (pipeline.compile_path.Compiled.entry), so that the
    artifact's Analysis can be read from it or added to it.
    """

    path: Path
    data: dict[str, Any]
    artifact: Any = None  # the decoded artifact (set by lookup, and by store to the one it kept)

    def analysis(self) -> dict[str, Any] | None:
        """The analysis kept with this entry (a report dict), or None.

        analyze() parses and annotates every stage, which costs as much again as
        the rest of a warm repeat; its result depends only on the artifact and
        tritonscope's own code, both in the key, so the command keeps it beside
        the artifact as a report dict (report.analysis_to_dict, what `show`
        reads back): outputs/cached.analysis_of.
        """
        kept = self.data.get("analysis")
        return kept if isinstance(kept, dict) else None

    def keep_analysis(self, analysis: dict[str, Any]) -> bool:
        """Add the analysis (a report dict) to this entry and its file; False when it cannot be written."""
        from tritonscope.core.output import write_cache

        self.data["analysis"] = analysis
        try:
            return write_cache(self.path, json.dumps(self.data))
        except (TypeError, ValueError):  # not JSON after all: keep the artifact alone
            self.data.pop("analysis", None)
            return False


# The entries the innermost `recording()` has seen looked up or stored (replay keeps a command's
# output only when it used exactly one); None outside one.
_RECORDING: contextvars.ContextVar[list[Entry] | None] = contextvars.ContextVar("result_entries", default=None)


@contextlib.contextmanager
def recording():
    """`with recording() as used:` the entries looked up or stored inside, in order."""
    used: list[Entry] = []
    token = _RECORDING.set(used)
    try:
        yield used
    finally:
        _RECORDING.reset(token)


def _seen(entry: Entry) -> Entry:
    used = _RECORDING.get()
    if used is not None:
        used.append(entry)
    return entry


def lookup(request, arch: str) -> Entry | None:
    """The kept entry (its `.artifact` decoded) for this config on `arch`, or None (never raises: a bad entry is a miss)."""
    try:
        parts = key_parts(request, arch)
        if parts is None:
            return None
        path = entry_path(parts)
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("key") != key_of(parts) or not deps_unchanged(data.get("deps")):
            return None
        if not import_watch.reads_unchanged(data.get("reads")):  # what the module read at import changed
            return None
        artifact = decode_artifact(data["artifact"])
    except Exception:  # an optimisation only: anything odd means "compile"
        return None
    from tritonscope.core import cache_prune

    cache_prune.touch(path)  # used now: the last to be pruned
    return _seen(Entry(path, data, artifact))


def store(request, arch: str, loaded, artifact) -> Entry | None:
    """Keep `artifact` for this config on `arch`: its entry, or None when it is not kept (incomplete, or not encodable).

    Call after the compile: Triton is imported by then, so this is where the
    list of cache-invalidating variables is asked for, once per build.
    """
    if "sass" not in artifact.stages:  # a missing tool: try again next time rather than keep a partial result
        return None
    try:
        build = triton_build()
        if build is None:
            return None
        knobs = knob_names(build)
        if knobs is None:
            knobs = record_knob_names(build)
        parts = key_parts(request, arch, knobs=knobs)
        if parts is None or parts["kernel"]["path"] != str(Path(loaded.spec.file).resolve()):
            return None
        payload = {
            "key": key_of(parts),
            "parts": parts,
            "deps": dependency_hashes(loaded, parts["kernel"]["path"]),
            "reads": import_watch.reads_of(parts["kernel"]["path"]),
            "artifact": encode_artifact(artifact),
        }
    except Exception:
        return None
    from tritonscope.core.output import write_cache

    entry = Entry(entry_path(parts), payload, artifact)
    _seen(entry)
    return entry if write_cache(entry.path, json.dumps(payload)) else None


def dependency_hashes(loaded, kernel_path: str) -> list[list[str]]:
    """[[path, sha256]] of the files beyond the kernel file that the result was built from."""
    from tritonscope import triton_api

    # each file by the path it was loaded through, not the file a link pointed to then: a hit reads the
    # path again, so a repointed link is a change (as a re-import would follow it)
    files = set(user_module_files())
    try:
        files |= {os.path.abspath(f) for f in triton_api.jit_dependency_files(loaded.jit_fn)}
    except Exception:
        pass
    build = triton_build() or {}
    skipped = tuple(p + os.sep for p in (build.get("path"), str(Path(__file__).resolve().parents[1])) if p)
    out = []
    for f in sorted(files):
        real = os.path.realpath(f)
        if f == kernel_path or real == kernel_path or real.startswith(skipped) or not os.path.isfile(f):
            continue
        out.append([f, file_sha256(f)])
    return out


def user_module_files() -> list[str]:
    """Files of the loaded modules that are the user's own (not the standard library, site-packages or
    tritonscope), each by the path it was imported through."""
    import sysconfig

    roots = [p for p in sysconfig.get_paths().values() if p]
    roots += [p for p in (sys.prefix, sys.base_prefix, sys.exec_prefix) if p]
    roots.append(os.path.dirname(os.path.dirname(__file__)))  # the tritonscope package
    # as written and with links resolved: most files are told apart without a realpath each
    prefixes = tuple({r.rstrip(os.sep) + os.sep for root in roots for r in (root, os.path.realpath(root))})

    def library(path: str) -> bool:
        return path.startswith(prefixes) or "site-packages" in path or "dist-packages" in path

    out = set()
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if not file or not file.endswith(".py") or library(file):
            continue
        if not library(os.path.realpath(file)):
            out.add(os.path.abspath(file))  # as imported: a link is read again through the link
    return sorted(out)


def deps_unchanged(deps) -> bool:
    if not isinstance(deps, list):
        return False
    for item in deps:
        try:
            path, digest = item
            if file_sha256(path) != digest:
                return False
        except (OSError, ValueError, TypeError):
            return False
    return True


def file_sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# --------------------------------------------------------------------------
# The Artifact as JSON, exactly (tuples and records come back as they were)
# --------------------------------------------------------------------------


class NotEncodable(TypeError):
    """A value JSON cannot carry exactly (bytes, a Triton object): the result is not kept."""


def encode_artifact(artifact) -> dict[str, Any]:
    return _encode(artifact)


def decode_artifact(data: dict[str, Any]):
    return _decode(data)


def _encode(obj: Any) -> Any:
    if obj is None or isinstance(obj, (str, bool, int, float)):
        return obj
    if is_dataclass(obj) and not isinstance(obj, type):
        return {"__record__": type(obj).__name__, **{f.name: _encode(getattr(obj, f.name)) for f in fields(obj)}}
    if isinstance(obj, tuple):
        return {"__tuple__": [_encode(v) for v in obj]}
    if isinstance(obj, list):
        return [_encode(v) for v in obj]
    if isinstance(obj, dict):
        if not all(isinstance(k, str) for k in obj) or "__record__" in obj or "__tuple__" in obj:
            raise NotEncodable("a dict with non-string or reserved keys")
        return {k: _encode(v) for k, v in obj.items()}
    raise NotEncodable(type(obj).__name__)


def _decode(obj: Any) -> Any:
    if isinstance(obj, list):
        return [_decode(v) for v in obj]
    if not isinstance(obj, dict):
        return obj
    if "__tuple__" in obj:
        return tuple(_decode(v) for v in obj["__tuple__"])
    if "__record__" in obj:
        from tritonscope.core import model

        cls = getattr(model, obj["__record__"], None)
        if cls is None or not is_dataclass(cls):
            raise ValueError(f"unknown record {obj['__record__']!r}")
        return cls(**{k: _decode(v) for k, v in obj.items() if k != "__record__"})
    return {k: _decode(v) for k, v in obj.items()}
