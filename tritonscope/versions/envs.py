"""Environments with another Triton: created on demand with pip, cached, listed, removed; or the user's.

A side `triton=3.4.0` is a virtual environment under
`<tritonscope cache>/triton-envs/triton-3.4.0/` holding that Triton (and
nothing else: tritonscope itself comes from this checkout, see
child.child_command).  It is built in a temporary folder beside it
(`.building-<version>-<pid>-<random>`) and renamed into place only once
pip succeeded and the new Python imports that Triton, so an interrupted
or failed install leaves nothing that looks like an environment.  The
builder holds a lock on `builder.lock` in that folder (its pid written in
it) for as long as it runs; the lock goes with the process, so a folder
whose lock nobody holds was left by a build that was killed: it is listed
as stale (never "being built" forever) and removed by the next build.

It is made with uv when uv is found (on PATH or beside this Python; `pip install uv`): a venv without
pip, then `uv pip install` from uv's shared cache, whose files it hard-links (a second environment of
a release uv has seen takes about a second); else with pip.  TRITONSCOPE_ENV_INSTALLER=pip (or uv)
chooses; the environment's record says which made it.  Environments count against tritonscope's
cache cap (core/cache_prune.py): each process that uses one takes it (`use_env`: renewed as used, and
locked against pruning while it runs); one the cap removed is made again when next needed, and the
command says why.  A Triton whose AMD backend needs an external ld.lld (3.4) gets one (lld.py).

A version that is the very Triton this Python imports is not made at all:
this interpreter is that side (`this_env`), with nothing downloaded.

A side `triton=/path/to/python` uses that interpreter as it is; it must
import triton.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from tritonscope.core.env import cache_dir
from tritonscope.core.errors import ExitCode, NotFoundError, TritonscopeError, UsageError

# 3.4.0, 3.4, 3.5.1, 3.6.0rc1, 3.3.1.post1
# ASCII digits (\d alone takes '٣'), at most 6 a part (int() of 4300 digits raises; no release has such numbers)
VERSION_RE = re.compile(r"^\d{1,6}\.\d{1,6}(\.\d{1,6})?((a|b|rc)\d{1,6})?(\.post\d{1,6})?$", re.ASCII)
OLDEST = (3, 2)  # the oldest Triton this tool's compile path knows (see triton_api)
PIP_TIMEOUT = 1800.0


class EnvError(TritonscopeError):
    """An environment that cannot be made or used (no such version, no network, broken): exit 3, as an
    environment that is not there."""

    exit_code = ExitCode.NOT_FOUND


@dataclass(frozen=True)
class TritonEnv:
    """One side's interpreter: its Python, the Triton it imports, where it came from."""
    python: str
    triton: str           # the version that Python imports (from the probe)
    origin: str           # "cache" (made by tritonscope) or "user" (triton=/path/to/python)
    path: str | None = None   # the environment's folder, for cached ones
    backends: tuple[str, ...] = ()
    backends_dir: str | None = None   # its triton/backends folder (where a wheel's own ld.lld would be)

    def label(self) -> str:
        return f"triton {self.triton}" + (f" ({self.python})" if self.origin == "user" else "")


def env_root() -> Path:
    return cache_dir() / "triton-envs"


def _env_python(folder: Path) -> Path:
    return folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def check_version(text: str) -> str:
    """A version as pip takes it ('3.4.0'); anything else is a UsageError before any install."""
    v = text.strip()
    if not VERSION_RE.match(v):
        raise UsageError(f"triton={text[:40]}{'...' if len(text) > 40 else ''}: not a Triton version or a path to a "
                         "Python.",
                         hint="For example triton=3.4.0, or triton=/path/to/venv/bin/python")
    major_minor = tuple(int(x) for x in v.split(".")[:2])
    if major_minor < OLDEST:
        raise UsageError(f"triton={v}: tritonscope compiles with Triton {OLDEST[0]}.{OLDEST[1]} or newer.",
                         hint="Name a version from 3.2 on, e.g. triton=3.4.0")
    return v


def is_python_path(text: str) -> bool:
    return "/" in text or os.sep in text or text.startswith(".")


_PROBE = ("import json, sys, os\n"
          "import triton\n"
          "b = os.path.join(os.path.dirname(triton.__file__), 'backends')\n"
          "names = sorted(n for n in os.listdir(b) if os.path.isfile(os.path.join(b, n, 'compiler.py'))) "
          "if os.path.isdir(b) else []\n"
          "print(json.dumps({'triton': triton.__version__, 'python': sys.version.split()[0], 'backends': names, 'backends_dir': b}))\n")


def probe(python: str, *, timeout: float = 120) -> dict:
    """What `python` imports: its Triton's version and backends; an EnvError when it cannot."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PYTHONNOUSERSITE"] = "1"
    try:
        proc = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True, timeout=timeout, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise EnvError(f"Cannot run {python}: {e}",
                       hint="Point triton= at a Python interpreter that imports triton.") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise EnvError(f"{python} cannot import triton: {last}",
                       hint="Install Triton into that environment, or name a version (triton=3.6.0) for "
                            "tritonscope to make one.")
    try:
        facts = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError, RecursionError):
        raise EnvError(f"{python} gave no answer to the Triton probe.") from None
    if not _probe_answer(facts):   # a Python of the user's may print anything: never a crash on it, nor shown raw
        raise EnvError(f"{python} gave an answer to the Triton probe that is not Triton's version and backends.",
                       hint="Point triton= at a Python interpreter that imports triton.")
    return facts


def _probe_answer(facts) -> bool:
    """Whether the probe's JSON is what _PROBE prints: printable strs, and a list of backend names."""
    def text(v) -> bool:
        return isinstance(v, str) and v.isprintable() and 0 < len(v) <= 4096

    return (isinstance(facts, dict) and text(facts.get("triton")) and len(facts["triton"]) <= 100
            and text(facts.get("python")) and (facts.get("backends_dir") is None or text(facts["backends_dir"]))
            and isinstance(facts.get("backends"), list)
            and all(isinstance(b, str) and b.isidentifier() for b in facts["backends"]))


def user_env(python: str) -> TritonEnv:
    """triton=/path/to/python: that interpreter, checked to import triton."""
    p = Path(python).expanduser()
    if not p.exists():
        raise NotFoundError(f"triton={python}: no such file.",
                            hint="Give the Python of an environment with Triton, e.g. triton=/opt/venv/bin/python")
    if p.is_dir():  # the environment's folder: its Python
        p = _env_python(p)
        if not p.exists():
            raise NotFoundError(f"triton={python}: a folder with no bin/python.")
    facts = probe(str(p))
    return TritonEnv(python=str(p), triton=facts["triton"], origin="user", backends=tuple(facts["backends"]),
                     backends_dir=facts.get("backends_dir"))


_RECORD_TEXTS = ("requested", "triton", "python", "created", "triton_dir", "installer")


def _meta(folder: Path) -> dict | None:
    """The environment's record (tritonscope-env.json), its values typed: a text that is not a str, holds a control
    character or runs past 300 characters is left out (as if not recorded), and so is a backends list that is not
    one of strs; None when it cannot be read or is not a JSON object."""
    try:
        data = json.loads((folder / "tritonscope-env.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    out = {k: v for k, v in data.items() if k in _RECORD_TEXTS and isinstance(v, str) and v.isprintable()
           and len(v) <= 300}
    backends = data.get("backends")
    if isinstance(backends, list) and all(isinstance(b, str) and b.isidentifier() for b in backends):
        out["backends"] = backends
    return out


def damage(folder: Path) -> str | None:
    """Why the environment in `folder` cannot be used (its record unreadable, its Python or its triton package
    gone), in words; None when it is whole.  Files only: no Python is started."""
    if _meta(folder) is None:
        return "its tritonscope-env.json is missing or unreadable"
    if not _env_python(folder).exists():
        return f"it has no {_env_python(folder).relative_to(folder)}"
    recorded = (_meta(folder) or {}).get("triton_dir")  # where the probe found it (older records: not kept)
    if isinstance(recorded, str) and recorded:
        if not (folder / recorded / "__init__.py").exists():  # a relative path is the environment's own
            return f"its triton package is gone (no {recorded})"
    elif not any(folder.glob("lib/python*/site-packages/triton/__init__.py")) and \
            not (folder / "Lib/site-packages/triton/__init__.py").exists():
        return "its triton package is gone (no site-packages/triton)"
    return None


def not_ours(folder: Path) -> str | None:
    """Why the folder (an environment, or the folder of environments) must not be used, in words: a symbolic link,
    not a folder, another user's, or writable by others (its Python would run what another local user put there,
    e.g. in a shared TRITONSCOPE_CACHE_DIR); None when it is ours, or absent.  Without uids (Windows): None."""
    try:
        st = os.lstat(folder)
    except OSError:
        return None
    import stat

    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a folder"
    if hasattr(os, "geteuid"):
        if st.st_uid != os.geteuid():
            return f"it belongs to another user (uid {st.st_uid})"
        if st.st_mode & 0o022:
            return f"others can write to it (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def check_ours(version: str) -> None:
    """An EnvError when the environment folder for `version` (or the folder of environments) is not ours
    (not_ours): it is never run, used, pruned or replaced."""
    root = env_root()
    for folder in (root, root / f"triton-{version}"):
        why = not_ours(folder)
        if why is not None:
            raise EnvError(f"Triton {version}: the environment folder {folder} is not used: {why}.",
                           hint="Remove it yourself if it is safe to, or point the side at a Python you trust "
                                "(triton=/path/to/venv/bin/python); TRITONSCOPE_CACHE_DIR should be a folder of "
                                "your own.")


def cached_env(version: str) -> TritonEnv | None:
    """The cached environment for `version`, when complete; None when there is none (or a damaged one)."""
    folder = env_root() / f"triton-{version}"
    check_ours(version)
    if damage(folder) is not None:
        return None
    meta = _meta(folder) or {}
    return TritonEnv(python=str(_env_python(folder)), triton=meta.get("triton", version), origin="cache",
                     path=str(folder), backends=tuple(meta.get("backends") or ()),
                     backends_dir=next((str(p) for p in folder.glob("lib/python*/site-packages/triton/backends")), None))


def resolve(text: str, *, install: bool = True, progress: Callable[[str], None] | None = None,
            remake: bool = False) -> TritonEnv:
    """A side's `triton=` value -> its environment: a path to a Python, or a version (made when missing).

    A damaged cached environment (damage()) is an EnvError naming what is wrong and the command that makes it
    again; with `remake` (`versions --add`) it is removed and made again (not with `install=False`: then it is
    only said).  A version that is the Triton this Python imports is this interpreter (`this_env`), unless
    `remake` asks for an environment of its own."""
    if is_python_path(text):
        return user_env(text)
    version = check_version(text)
    for _attempt in range(3):   # an environment pruned between our look and our taking it is made again
        found = cached_env(version)
        if found is not None:
            if _take(found, install=install, progress=progress):
                return found
            continue
        made = _resolve_missing(version, install=install, progress=progress, remake=remake)
        if made.origin != "cache" or _take(made, install=install, progress=progress, added=True):
            return made
    raise EnvError(f"The environment for Triton {version} was removed by another process each time it was made.",
                   hint="Run again; raise TRITONSCOPE_CACHE_MAX_MB if the cache cap keeps removing it.")


def _take(env: TritonEnv, *, install: bool, progress: Callable[[str], None] | None, added: bool = False) -> bool:
    """Take a cached environment for this process (used now, never pruned while it runs: cache_prune.use_env) and
    give it the ld.lld its Triton needs (lld.ensure); False when it was pruned meanwhile.  Then the cache is
    pruned to its cap when due (at once when the environment was just made: `added`)."""
    from tritonscope.core import cache_prune
    from tritonscope.versions import lld

    if not cache_prune.use_env(env.path):
        return False
    lld.ensure(env, install=install, install_into=install_into, progress=progress)
    size = cache_prune.env_freed_bytes(env.path) if added else 0
    cap, cap_words = cache_prune.setting()
    if progress and cap and size > cap // 2:
        progress(f"Triton {env.triton}: this environment holds {size / (1 << 20):,.0f} MiB, more than half of "
                 f"tritonscope's cache cap of {cap_words}: the cap removes it when it is the least recently used. "
                 "Raise TRITONSCOPE_CACHE_MAX_MB to keep several, or install uv (pip install uv): the environments "
                 "it makes hard-link uv's cache and count only their own files.")
    cache_prune.after_store(Path(env.path) / "tritonscope-env.json", size)
    return True


def _resolve_missing(version: str, *, install: bool, progress: Callable[[str], None] | None,
                     remake: bool) -> TritonEnv:
    """No complete environment for `version`: a damaged one is said (or, with `remake`, removed), this Python when
    it imports that very Triton, else one is made (said why, when the cache cap removed it)."""
    from tritonscope.core import cache_prune

    folder = env_root() / f"triton-{version}"
    why = damage(folder) if folder.is_dir() else None
    if why is not None:
        if not remake or not install:
            raise EnvError(f"The cached environment for Triton {version} is damaged: {why}.",
                           hint=f"Make it again with `tritonscope versions --add {version}` (or remove it with "
                                f"`tritonscope versions --remove {version}`).", context=str(folder))
        if progress:
            progress(f"Triton {version}: the cached environment is damaged ({why}): making it again")
        _remove(folder)
    here = None if remake else this_env(version)
    if here is not None:  # that very Triton is the one this Python imports: nothing to make or download
        if progress:
            progress(f"Triton {version}: the Triton this Python imports ({here.python}); no environment made")
        return here
    pruned = cache_prune.pruned_note(env_root(), version)
    if not install:
        raise NotFoundError(f"No environment for Triton {version} (--no-install: pip is not run): {pruned}."
                            if pruned else f"No environment for Triton {version} yet (--no-install: pip is not run).",
                            hint=f"Make it with: tritonscope versions --add {version}")
    if pruned and progress:
        progress(f"Triton {version}: {pruned}; making it again")
    made = create_env(version, progress=progress)
    cache_prune.pruned_note(env_root(), version, forget=True)
    return made


def same_version(a: str, b: str) -> bool:
    """Whether pip's `triton==a` is the release `b` ('3.9' and '3.9.0' are one; '3.9.0+git1234' is not
    3.9.0)."""
    try:
        from packaging.version import InvalidVersion, Version
    except ImportError:  # pip vendors packaging, but a bare Python may lack it: release numbers padded
        return _padded(a) == _padded(b)
    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return a == b


def _padded(v: str) -> str:
    return ".".join((v.split(".") + ["0", "0"])[:3]) if re.match(r"^\d+(\.\d+)*$", v) else v


def this_env(version: str) -> TritonEnv | None:
    """This interpreter as the side of Triton `version`, when the Triton it imports is that release (files only:
    Triton is not imported); None otherwise."""
    from tritonscope import triton_api

    build = triton_api.triton_build()
    if build is None or not same_version(version, build["version"]):
        return None
    backends_dir = os.path.join(build["path"], "backends")
    try:
        names = sorted(n for n in os.listdir(backends_dir) if os.path.isfile(os.path.join(backends_dir, n, "compiler.py")))
    except OSError:
        names = []
    return TritonEnv(python=sys.executable, triton=build["version"], origin="this", backends=tuple(names),
                     backends_dir=backends_dir)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


LOCK_NAME = "builder.lock"


def hold_build_lock(folder: Path):
    """Lock `folder` (a build in progress) for this process: an open file holding an exclusive lock, this pid
    written in it.  The lock lasts while the file stays open and goes with the process, however it ends."""
    fh = open(folder / LOCK_NAME, "w")
    try:
        import fcntl

        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except ImportError:  # no flock (Windows): the pid alone says whether the builder runs
        pass
    fh.write(json.dumps({"pid": os.getpid(), "started": time.time()}))
    fh.flush()
    return fh


def builder(folder: Path) -> tuple[int | None, bool]:
    """(the pid of the process building in `folder`, whether it still runs).  A folder whose lock is held is
    being built; one whose lock nobody holds, or whose pid is gone, was left by a build that stopped."""
    # .building-3.4.0-12345-abcd (the pid is in the name, and in the lock file)
    m = re.match(r"^\.(?:building|removing)-.+-(\d+)-[^-]+$", folder.name)
    pid = int(m.group(1)) if m else None
    lock = folder / LOCK_NAME
    if pid is None or not _alive(pid):
        return pid, False
    try:
        import fcntl
    except ImportError:
        return pid, True
    try:
        fh = open(lock)
    except FileNotFoundError:  # made before its lock was written, or by an older tritonscope: the pid says
        return pid, True
    except OSError:
        return pid, True
    with fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return pid, True   # held: its builder runs
        return pid, False      # nobody holds it: the pid in the name is another process now


def clean_unfinished() -> list[str]:
    """Remove build folders left by a process that no longer runs (killed mid-install); their names."""
    root = env_root()
    removed = []
    if not root.is_dir():
        return removed
    for p in root.iterdir():
        if p.name.startswith((".building-", ".removing-")) and not builder(p)[1]:
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p.name)
    return removed


# pip's lines, as a progress bar would summarise them:
#   Collecting triton==3.4.0
#   Downloading triton-3.4.0-cp311-cp311-manylinux_2_27_x86_64.whl (155.5 MB)
#   Installing collected packages: setuptools, triton
_PIP_STEP_RE = re.compile(r"^\s*(Collecting|Downloading|Installing collected packages|Successfully installed)\b.*")
# ERROR: Could not find a version that satisfies the requirement triton==3.1.7 (from versions: 3.2.0, 3.3.0)
_NO_VERSION_RE = re.compile(r"Could not find a version that satisfies the requirement \S+ \(from versions: ([^)]*)\)")
# uv's lines:  Resolved 3 packages in 568ms / Downloading triton (148.3MiB) / Installed 3 packages in 743ms
_UV_STEP_RE = re.compile(r"^\s*(Resolved|Downloading|Prepared|Installed|Uninstalled)\b.*")
#   ╰─▶ Because there is no version of triton==3.2.7 and you require triton==3.2.7, we can conclude ...
_UV_NO_VERSION_RE = re.compile(r"Because there is no version of |only the following versions of \S+ are available")
_NETWORK_RE = re.compile(r"error sending request|dns error|Failed to fetch|client error \(Connect\)|"
                         r"tcp connect error|Failed to establish a new connection|Temporary failure in name resolution|"
                         r"Name or service not known|Network is unreachable|Could not fetch URL|ProxyError|"
                         r"Connection refused|Read timed out|ConnectTimeoutError")


INSTALLER_VARIABLE = "TRITONSCOPE_ENV_INSTALLER"


def installer(environ=None) -> tuple[str, str | None]:
    """("uv", its path) when uv is found and TRITONSCOPE_ENV_INSTALLER does not say pip; else ("pip", None).

    uv is looked for on PATH, then beside this Python (`pip install uv` into this environment puts it there)."""
    raw = (os.environ if environ is None else environ).get(INSTALLER_VARIABLE, "")
    value = raw.strip().lower()
    if value not in ("", "auto", "uv", "pip"):   # said as given (repr: a control character is escaped)
        raise UsageError(f"{INSTALLER_VARIABLE}={raw[:60]!r}: give uv, pip or auto (uv when it is found).",
                         hint=f"unset {INSTALLER_VARIABLE}, or set it to uv or pip.")
    if value == "pip":
        return "pip", None
    beside = Path(sys.executable).parent / ("uv.exe" if os.name == "nt" else "uv")
    uv = shutil.which("uv") or (str(beside) if beside.is_file() and os.access(beside, os.X_OK) else None)
    if uv:
        return "uv", uv
    if value == "uv":
        raise EnvError(f"{INSTALLER_VARIABLE}=uv, but no uv is found (on PATH, or beside {sys.executable}).",
                       hint="Install it with `pip install uv`, or set it to pip.")
    return "pip", None


def _installer_words(kind: str, uv: str | None) -> str:
    if kind != "uv":
        return "pip"
    try:
        out = subprocess.run([uv, "--version"], capture_output=True, text=True, timeout=30).stdout.split()
    except (OSError, subprocess.TimeoutExpired):
        out = []
    return f"uv {out[1]}" if len(out) > 1 else "uv"


def install_into(folder: Path, requirements: list[str], *, progress: Callable[[str], None] | None = None,
                 what: str = "", how: tuple[str, str | None] | None = None) -> str:
    """Install `requirements` into the environment in `folder` with uv or pip (installer()); its steps as progress
    lines; an EnvError (no such release, no network, anything else) when it fails.  Which installer, in words."""
    kind, uv = how or installer()
    python = str(_env_python(folder))
    quiet = ["--disable-pip-version-check", "--no-input", "--progress-bar", "off"]
    cmd = [uv, "pip", "install", "--python", python, *requirements] if kind == "uv" else \
        [python, "-m", "pip", "install", *quiet, *requirements]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PYTHONNOUSERSITE"] = "1"
    say = progress or (lambda _line: None)
    say(f"{what}: {kind} install {' '.join(requirements)}")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            start_new_session=True)
    lines: list[str] = []
    import threading

    # a timer, not a check per line: an install that prints nothing (a stalled download) is stopped all the same
    fired: list[bool] = []

    def stop() -> None:
        fired.append(True)
        proc.kill()

    timer = threading.Timer(PIP_TIMEOUT, stop)
    timer.daemon = True
    timer.start()
    try:
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.append(line.rstrip())
            m = _PIP_STEP_RE.match(line) or _UV_STEP_RE.match(line)
            if m:
                say(f"{what}: {m.group(0).strip()[:100]}")
        proc.wait()
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    finally:
        timer.cancel()
    if fired:
        raise EnvError(f"{kind} install {' '.join(requirements)} did not finish in {PIP_TIMEOUT:.0f} s and was stopped.",
                       hint="Nothing was kept; run again (a slow or stalled download), or point the side at an "
                            "environment you made: triton=/path/to/venv/bin/python",
                       context="\n".join(lines[-6:]) or None)
    if proc.returncode != 0:
        raise _pip_error(" ".join(requirements), "\n".join(lines), kind)
    return _installer_words(kind, uv)


def create_env(version: str, *, progress: Callable[[str], None] | None = None,
               pip_args: tuple[str, ...] = ()) -> TritonEnv:
    """Make the environment for Triton `version` (a venv + `uv pip install` or `pip install triton==version`), all
    or nothing."""
    import venv

    version = check_version(version)
    how = installer()
    root = env_root()
    root.mkdir(parents=True, exist_ok=True)
    clean_unfinished()
    final = root / f"triton-{version}"
    tmp = Path(tempfile.mkdtemp(prefix=f".building-{version}-{os.getpid()}-", dir=root))
    say = progress or (lambda _line: None)
    lock = None
    try:
        lock = hold_build_lock(tmp)
        say(f"Triton {version}: creating a virtual environment")
        venv.EnvBuilder(with_pip=how[0] == "pip", clear=True).create(str(tmp))   # uv needs no pip in it
        python = str(_env_python(tmp))
        made_with = install_into(tmp, [f"triton=={version}", *pip_args], progress=say, what=f"Triton {version}",
                                 how=how)
        facts = probe(python)
        (tmp / "tritonscope-env.json").write_text(json.dumps(
            {"requested": version, "triton": facts["triton"], "python": facts["python"],
             "backends": facts["backends"], "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
             "triton_dir": _triton_dir(tmp, facts.get("backends_dir")), "installer": made_with}, indent=1))
        try:
            if final.is_dir() and damage(final) is not None:  # a damaged one in the way: the new one replaces it
                _remove(final)
            lock.close()
            lock = None
            (tmp / LOCK_NAME).unlink(missing_ok=True)
            os.rename(tmp, final)
        except OSError as e:  # another process finished the same environment first: use that one
            if cached_env(version) is None:
                raise EnvError(f"The environment for Triton {version} was made but cannot be put in place at "
                               f"{final}: {e.strerror or e}.",
                               hint=f"Remove what is there with `tritonscope versions --remove {version}`, "
                                    "and run again.") from None
            shutil.rmtree(tmp, ignore_errors=True)
        say(f"Triton {version}: ready (made with {made_with})")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        if lock is not None:
            lock.close()
    found = cached_env(version)
    assert found is not None
    return found


def _triton_dir(folder: Path, backends_dir: str | None) -> str | None:
    """The triton package the environment's Python imports, relative to `folder` when inside it (the folder is
    renamed into place after the probe), for damage() to find; None when the probe did not say."""
    if not backends_dir:
        return None
    package = Path(os.path.realpath(Path(backends_dir).parent))
    try:
        return str(package.relative_to(os.path.realpath(folder)))
    except ValueError:
        return str(package)


def _pip_error(requirement: str, output: str, kind: str = "pip") -> EnvError:
    """pip's or uv's failure, in words: no such release, no network, or what it said."""
    pyver = f"{sys.version_info.major}.{sys.version_info.minor}"
    what = f"Triton {requirement.split()[0].split('==')[-1]}" if requirement.startswith("triton==") else requirement
    m = _NO_VERSION_RE.search(output)
    if m or _UV_NO_VERSION_RE.search(output):
        have = [v.strip() for v in m.group(1).split(",") if v.strip() and v.strip() != "none"] if m else []
        return EnvError(f"{what} cannot be installed for Python {pyver}: {kind} finds no such release.",
                        hint=("Releases pip finds: " + ", ".join(have[-12:])) if have else
                        f"{kind} found no such release: is the version right, and the package index reachable?")
    if _NETWORK_RE.search(output) or "No matching distribution" in output:
        return EnvError(f"{what} could not be installed: the package index is not reachable (no network?).",
                        hint="Connect and run again, or point the side at an environment you made: "
                             "triton=/path/to/venv/bin/python",
                        context="\n".join(output.strip().splitlines()[-6:]))
    return EnvError(f"{kind} could not install {what}.",
                    context="\n".join(output.strip().splitlines()[-12:]),
                    hint="Nothing was kept; fix what it says, or point the side at your own environment "
                         "(triton=/path/to/python).")


def list_envs() -> list[dict]:
    """Every cached environment (complete ones, and unfinished builds of processes still running)."""
    from tritonscope.core import cache_prune

    root = env_root()
    out = []
    if not root.is_dir():
        return out
    for p in sorted(root.iterdir()):
        if p.name.startswith("triton-") and not_ours(p) is not None:   # never read, walked or locked
            out.append({"version": p.name[len("triton-"):], "triton": None, "python": None, "created": None,
                        "size": 0, "state": "broken", "why": f"not used: {not_ours(p)}", "path": str(p),
                        "installer": None, "counted": 0, "in_use": False})
        elif p.name.startswith("triton-"):
            meta, why = _meta(p), damage(p)
            out.append({"version": p.name[len("triton-"):], "triton": (meta or {}).get("triton"),
                        "python": (meta or {}).get("python"), "created": (meta or {}).get("created"),
                        "size": _size(p), "state": "ready" if why is None else "broken", "why": why or "",
                        "path": str(p), "installer": (meta or {}).get("installer"),
                        # what it counts against the cache cap (what removing it frees), and whether a process uses it
                        "counted": cache_prune.env_freed_bytes(p), "in_use": cache_prune.in_use(p)})
        elif p.name.startswith(".building-"):
            pid, running = builder(p)
            out.append({"version": p.name.split("-")[1], "triton": None, "python": None, "created": None,
                        "size": _size(p), "state": "being built" if running else "stale build",
                        "why": (f"pid {pid} builds it" if running else
                                f"left by a build that stopped (pid {pid} is gone); the next build removes it"),
                        "path": str(p)})
    return out


def _size(p: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(p):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
            except OSError:
                pass
    return total


def remove_env(version: str) -> str:
    """Remove the cached environment for `version` ('all': every one); what was removed."""
    root = env_root()
    if version == "all":
        names = [p.name for p in root.iterdir() if p.name.startswith("triton-")] if root.is_dir() else []
        for n in names:
            _remove(root / n)
        names += clean_unfinished()
        return f"removed {len(names)} environment(s)"
    version = check_version(version)
    folder = root / f"triton-{version}"
    if not folder.exists():
        have = [e["version"] for e in list_envs() if e["state"] != "being built"]
        raise NotFoundError(f"No cached environment for Triton {version}.",
                            hint=("Cached: " + ", ".join(have)) if have else "None is cached.")
    _remove(folder)
    return f"removed triton-{version}"


def _remove(folder: Path) -> None:
    """Rename out of the way first, so a half-removed folder never looks like an environment."""
    gone = folder.parent / f".removing-{folder.name}-{os.getpid()}-{int(time.time())}"
    os.rename(folder, gone)
    if gone.is_symlink() or not gone.is_dir():   # the link itself goes, never what it points to
        gone.unlink()
    else:
        shutil.rmtree(gone, ignore_errors=True)
