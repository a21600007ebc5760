"""The code-generation environment a capture records and a recompile replays; the ptxas of a compile."""

from __future__ import annotations

import os
import subprocess
from typing import Any
from tritonscope.triton_api.env import CODEGEN_ENV

# The code-generation environment of a compile (a capture records it, a
# recompile replays it).
#
# Triton puts the environment variables that change its output *and are
# set* into its cache key and into every kernel's metadata JSON
# (`get_cache_invalidating_env_vars()`, 3.6 and 3.9 alike; bools come back
# spelled 'true'/'false').  The tool paths are not among them, yet they
# change the text: torch's Inductor sets TRITON_PTXAS_PATH to torch's own
# ptxas inside the program (CUDA 13: PTX `.version 9.0`), so the same TTIR
# recompiled with Triton's bundled ptxas (12.8) says `.version 8.7`.  The
# knobs below are named by (group, attribute) and their variable names are
# read from triton.knobs; a value is recorded, never a file's contents.
# ==========================================================================

CODEGEN_KNOBS = (
    ("nvidia", "ptxas"), ("nvidia", "ptxas_blackwell"), ("nvidia", "ptxas_options"),
    ("nvidia", "disable_ptxas_opt"), ("nvidia", "mock_ptx_version"), ("nvidia", "libdevice_path"),
    ("nvidia", "cuobjdump"), ("nvidia", "nvdisasm"),
    ("language", "fp32_default"), ("language", "default_fp_fusion"), ("language", "force_disable_fp_fusion"),
    ("compilation", "disable_line_info"), ("compilation", "use_ir_loc"), ("compilation", "enable_asan"),
    ("compilation", "front_end_debugging"),
)
# The tool knobs (a path each): attribute -> variable, for a Triton whose knobs we cannot read.
TOOL_KNOBS = {"ptxas": "TRITON_PTXAS_PATH", "ptxas_blackwell": "TRITON_PTXAS_BLACKWELL_PATH",
              "cuobjdump": "TRITON_CUOBJDUMP_PATH", "nvdisasm": "TRITON_NVDISASM_PATH"}


def _codegen_knobs():
    """(group, attr, the knobs group object, the variable Triton reads) for each knob of CODEGEN_KNOBS that
    this Triton has (none when triton.knobs cannot be imported)."""
    try:
        from triton import knobs
    except Exception:
        return
    for group, attr in CODEGEN_KNOBS:
        obj = getattr(knobs, group, None)
        key = getattr(type(obj).__dict__.get(attr), "key", None) if obj is not None else None
        if isinstance(key, str):
            yield group, attr, obj, key


def codegen_knob_keys() -> dict[str, str]:
    """{'TRITON_PTXAS_PATH': 'knobs.nvidia.ptxas', ...}: every variable of CODEGEN_KNOBS, named by Triton."""
    out: dict[str, str] = {}
    for group, attr, _, key in _codegen_knobs():
        out[key] = f"knobs.{group}.{attr}"
    for attr, key in TOOL_KNOBS.items():
        out.setdefault(key, f"knobs.nvidia.{attr}")
    for key in CODEGEN_ENV:
        out.setdefault(key, "environment")
    return out


def tool_knob_keys() -> set[str]:
    """The variables that hold a tool's path (TRITON_PTXAS_PATH, TRITON_PTXAS_BLACKWELL_PATH, ...)."""
    return {k for k, where in codegen_knob_keys().items() if where.startswith("knobs.nvidia.")
            and where.rsplit(".", 1)[1] in TOOL_KNOBS}


def cache_invalidating_env() -> dict[str, str]:
    """The variables Triton puts in its cache key that are set now, as Triton spells them."""
    try:
        from triton._C.libtriton import get_cache_invalidating_env_vars

        return {str(k): str(v) for k, v in get_cache_invalidating_env_vars().items()}
    except Exception:
        return {}


def codegen_environment(capability: int | None = None) -> dict[str, Any]:
    """What a compile in this process runs with: {'vars': {NAME: value}, 'tools': {...}, 'complete': True}.

    `vars` holds every cache-invalidating variable that is set and every
    knob of CODEGEN_KNOBS that is set (in os.environ, or on triton.knobs
    from Python); `complete` says that a variable not listed was unset, so
    a replay clears it.  `tools` (with a capability) is the ptxas a compile
    for that arch uses (compile_tools).
    """
    found = cache_invalidating_env()
    for key in found:
        if key in os.environ:  # the spelling the program used ('1', not Triton's 'true')
            found[key] = os.environ[key]
    for _, attr, obj, key in _codegen_knobs():
        if key in os.environ:
            found[key] = os.environ[key]
        elif attr in getattr(obj, "__dict__", {}) and obj.__dict__[attr] is not None:  # set from Python only
            found[key] = str(obj.__dict__[attr])
    for key in CODEGEN_ENV:
        if key in os.environ:
            found.setdefault(key, os.environ[key])
    out: dict[str, Any] = {"vars": dict(sorted(found.items())), "complete": True}
    if capability:
        out["tools"] = compile_tools(capability)
    return out


def compile_tools(capability: int) -> dict[str, dict[str, Any]]:
    """The ptxas a compile for `capability` uses here (Triton's own choice, get_ptxas):

    {'ptxas': {'knob': 'TRITON_PTXAS_PATH', 'path': ..., 'version': '12.8', 'ptx_isa': '8.7', 'bundled': True}}
    ({} when Triton or the tool cannot be found).  3.6 uses `ptxas-blackwell`
    from sm_100 on, 3.9 from sm_90 on: the knob named is the one that applies.
    """
    try:
        from triton import knobs
        from triton.backends.nvidia import compiler as nv

        tool = nv.get_ptxas(capability)
    except Exception:
        return {}
    descriptors = type(knobs.nvidia).__dict__
    candidates = []
    for attr in ("ptxas", "ptxas_blackwell"):
        try:
            if getattr(knobs.nvidia, attr).path == tool.path:
                candidates.append(attr)
        except Exception:
            continue
    chosen = [a for a in candidates if os.environ.get(getattr(descriptors.get(a), "key", ""))] or candidates or ["ptxas"]
    descriptor = descriptors.get(chosen[0])
    info: dict[str, Any] = {"knob": getattr(descriptor, "key", TOOL_KNOBS[chosen[0]]), "path": tool.path,
                            "version": str(tool.version),
                            "bundled": os.path.realpath(tool.path) == os.path.realpath(
                                getattr(descriptor, "default_path", "") or "")}
    try:
        isa = int(nv.ptx_get_version(str(tool.version)))
        info["ptx_isa"] = f"{isa // 10}.{isa % 10}"
    except Exception:
        pass
    return {"ptxas": info}


def replay_environment(recorded: dict[str, str], *, complete: bool, cache_vars_known: bool,
                       base: dict[str, str] | None = None) -> tuple[dict[str, str], dict[str, str], set[str]]:
    """(environment, missing tools, names that matter) for compiling again as a recorded compile did.

    The environment is `base` (default os.environ) with the recorded values
    set; with `complete` every other code-generation variable is cleared,
    and with `cache_vars_known` (Triton's metadata lists them) every other
    cache-invalidating one.  A recorded tool path that is not an executable
    file here is left out (Triton then uses its bundled tool) and returned in
    `missing`, so the caller can say so.
    """
    env = dict(os.environ if base is None else base)
    knob_keys = codegen_knob_keys()
    current_cache = set(cache_invalidating_env())
    names = set(knob_keys) | current_cache | set(recorded)
    if complete or cache_vars_known:
        for key in current_cache - set(recorded):
            env.pop(key, None)
    if complete:
        for key in set(knob_keys) - set(recorded):
            env.pop(key, None)
    tools = tool_knob_keys()
    missing: dict[str, str] = {}
    for key, value in recorded.items():
        if key in tools and not (os.path.isfile(value) and os.access(value, os.X_OK)):
            missing[key] = value
            env.pop(key, None)
            continue
        if key in env and _same_setting(env[key], str(value)):  # '1' here, Triton's 'true' in the metadata
            continue
        env[key] = str(value)
    return env, missing, names


# `ptxas --version`'s last lines:  Cuda compilation tools, release 12.9, V12.9.86
_PTXAS_RELEASE_RE = None
_ptxas_versions: dict[tuple[str, int, int], str | None] = {}


def ptxas_version(path: str) -> str | None:
    """'12.9' from `path --version` (cached per file and mtime); None when it is not a ptxas that runs here."""
    global _PTXAS_RELEASE_RE
    import re

    if _PTXAS_RELEASE_RE is None:
        _PTXAS_RELEASE_RE = re.compile(r"release (\d+\.\d+)")
    try:
        st = os.stat(path)
        key = (os.path.realpath(path), st.st_mtime_ns, st.st_size)
    except OSError:
        return None
    if key not in _ptxas_versions:
        try:
            out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30,
                                 errors="replace").stdout
            m = _PTXAS_RELEASE_RE.search(out) if "ptx" in out.lower() else None
            _ptxas_versions[key] = m.group(1) if m else None
        except (OSError, subprocess.SubprocessError):
            _ptxas_versions[key] = None
    return _ptxas_versions[key]


def ptxas_candidates() -> list[str]:
    """Every ptxas on this machine a recompile may use, in order: Triton's bundled ones, $CUDA_HOME/bin,
    /usr/local/cuda*/bin, then PATH (each file once)."""
    import glob
    import shutil

    found: list[str] = []
    try:
        from triton import knobs

        descriptors = type(knobs.nvidia).__dict__
        found += [getattr(descriptors.get(a), "default_path", None) or "" for a in ("ptxas", "ptxas_blackwell")]
    except Exception:
        pass
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            found.append(os.path.join(os.environ[var], "bin", "ptxas"))
    found += sorted(glob.glob("/usr/local/cuda*/bin/ptxas"))
    found.append(shutil.which("ptxas") or "")
    out, seen = [], set()
    for path in found:
        if path and os.path.isfile(path) and os.access(path, os.X_OK) and os.path.realpath(path) not in seen:
            seen.add(os.path.realpath(path))
            out.append(path)
    return out


def find_ptxas(recorded: dict[str, Any]) -> dict[str, str] | None:
    """The recorded compile's ptxas, or one of its version, on this machine: {'path', 'version', 'how'}.

    `recorded` is a capture's tools['ptxas'] ({'path', 'version', ...}).  The
    recorded file is used when it runs here and says the recorded version
    ('how': 'recorded'); else the first candidate of that version ('how':
    'same version').  None when there is none (the caller warns, naming both
    versions).
    """
    version = str(recorded.get("version") or "")
    path = str(recorded.get("path") or "")
    if path and os.path.isfile(path) and os.access(path, os.X_OK):
        here = ptxas_version(path)
        if here and (not version or here == version):
            return {"path": path, "version": here, "how": "recorded"}
    if not version:
        return None
    for candidate in ptxas_candidates():
        if ptxas_version(candidate) == version:
            return {"path": candidate, "version": version, "how": "same version"}
    return None


def ptxas_knobs(capability: int) -> list[str]:
    """The variables naming the ptxas a compile for `capability` runs here (3.6: TRITON_PTXAS_PATH below
    sm_100; 3.9: TRITON_PTXAS_BLACKWELL_PATH from sm_90), read from Triton's own choice (get_ptxas)."""
    try:
        from triton import knobs
        from triton.backends.nvidia import compiler as nv

        chosen = nv.get_ptxas(capability)
    except Exception:
        return [TOOL_KNOBS["ptxas"]]
    descriptors = type(knobs.nvidia).__dict__
    keys = []
    for attr in ("ptxas", "ptxas_blackwell"):
        try:
            if getattr(knobs.nvidia, attr) is chosen or getattr(knobs.nvidia, attr).path == chosen.path:
                keys.append(getattr(descriptors.get(attr), "key", TOOL_KNOBS[attr]))
        except Exception:
            continue
    return keys or [TOOL_KNOBS["ptxas"]]


def use_original_ptxas(recorded: dict[str, Any], capability: int, env: dict[str, str]) -> dict[str, str] | None:
    """Point the ptxas knob(s) a compile for `capability` reads at the recorded compile's ptxas, in `env`.

    Returns find_ptxas's answer plus 'knobs' (the variables set), or None
    when no such ptxas is here (then `env` is unchanged).
    """
    found = find_ptxas(recorded)
    if found is None:
        return None
    keys = ptxas_knobs(capability)
    try:
        from triton import knobs

        defaults = {getattr(d, "key", None): getattr(d, "default_path", None)
                    for d in type(knobs.nvidia).__dict__.values()}
    except Exception:
        defaults = {}
    for key in keys:
        default = defaults.get(key)
        if key not in env and default and os.path.realpath(default) == os.path.realpath(found["path"]):
            continue  # Triton's own choice already: no variable, no child process needed
        env[key] = found["path"]
    return {**found, "knobs": ", ".join(keys)}


def _same_setting(a: str, b: str) -> bool:
    """Two spellings of one value, as Triton's getenv_bool reads them ('1' and 'true')."""
    truthy, falsy = {"1", "true", "on", "yes", "y"}, {"0", "false", "off", "no", "n"}
    a, b = a.strip().lower(), b.strip().lower()
    return a == b or (a in truthy and b in truthy) or (a in falsy and b in falsy)


# ==========================================================================
# Triton's own shared-memory bank-conflict count (explain's cross-check)
#
# Gluon's `bank_conflicts(register_type, shared_type)` counts the excess
# wavefronts of the ld.shared/st.shared Triton would emit for a register
# layout and a shared layout.  It only runs inside a gluon kernel being
# compiled, so the child compiles a one-line probe kernel per pair (no GPU:
# the compile stops nowhere near PTX) and reads what it printed.
# ==========================================================================
