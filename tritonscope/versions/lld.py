"""ld.lld for a Triton whose AMD backend links with an external one (Triton 3.4), found or installed.

Triton 3.4's AMD backend links each hsaco by running `ld.lld -flavor gnu -shared IN -o OUT`, and
its wheel carries no ld.lld (3.2 and 3.3 ship one in triton/backends/amd/llvm/bin; 3.5 on link
in-process).  It looks at TRITON_HIP_LLD_PATH, then its backend's llvm/bin/ld.lld,
/opt/rocm/llvm/bin/ld.lld and /usr/bin/ld.lld; a fresh machine has none of them, and the compile
ends with Triton's "ROCm linker /opt/rocm/llvm/bin/ld.lld not found".

Which linker a side uses (`choose`), first found:
  1. the wheel's own (triton/backends/amd/llvm/bin/ld.lld): nothing to do;
  2. TRITON_HIP_LLD_PATH, when the user set it to a file;
  3. the `ziglang` wheel in that environment: zig carries LLVM's lld (`zig ld.lld`, LLD 22 in
     ziglang 0.17.1), which links AMDGPU code objects.  `zig ld.lld` is lld's ELF driver alone, which
     refuses the `-flavor gnu` Triton passes, so Triton is pointed (TRITON_HIP_LLD_PATH) at a small
     script that drops it (`wrapper`);
  4. a system ld.lld (triton_api.SYSTEM_LLD_CANDIDATES: Debian's lld-19 and newer, ROCm's).

A managed environment (made by `versions`) of a Triton that needs one gets ziglang installed into it
(`ensure`) when none of these is found and installs are allowed: ziglang is a wheel on PyPI, so no
root and no system package are needed.  Where none can be had (`--no-install`, a Python of the user's,
no network), `hint` says in one line what to do, in `versions` rows and in `diff`/`compile --triton`.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from pathlib import Path
from typing import Callable

ZIGLANG = "ziglang==0.17.1"   # LLD 22.1.8: tried here on Triton 3.4.0's gfx942 matmul
WRAPPER = "ld.lld"            # the script, in the environment's bin/ (or tritonscope's cache for a user's Python)


def needs_external_lld(backends_dir: str | None) -> bool:
    """Whether the Triton whose backends are in `backends_dir` runs an ld.lld it does not ship (files only)."""
    if not backends_dir:
        return False
    amd = Path(backends_dir) / "amd"
    try:
        source = (amd / "compiler.py").read_text(encoding="utf-8", errors="replace")
    except OSError:   # no AMD backend
        return False
    return "ld.lld" in source and not (amd / "llvm" / "bin" / "ld.lld").is_file()


def zig_of(backends_dir: str | None) -> Path | None:
    """The zig binary of a ziglang wheel installed beside that Triton (same site-packages), if any."""
    if not backends_dir:
        return None
    zig = Path(backends_dir).parent.parent / "ziglang" / ("zig.exe" if os.name == "nt" else "zig")
    return zig if zig.is_file() and os.access(zig, os.X_OK) else None


def wrapper_text(zig: Path) -> str:
    """The ld.lld script for `zig`: Triton runs `ld.lld -flavor gnu -shared IN -o OUT` (lld's multi-flavor
    driver takes `-flavor`); `zig ld.lld` is the ELF driver, which refuses it, so it is dropped."""
    return ("#!/bin/sh\n"
            "# ld.lld for Triton's AMD backend (made by tritonscope): zig's lld, from the ziglang wheel\n"
            'if [ "$1" = "-flavor" ]; then shift 2; fi\n'
            f'exec {shlex.quote(str(zig))} ld.lld "$@"\n')


def _check_private(path: Path, *, folder: bool) -> None:
    """An OSError unless `path` is a real folder (or file), not a link, of this user's and writable by no one else:
    a script Triton runs must not be one another local user could have put there or could change."""
    import stat

    st = os.lstat(path)
    kind = stat.S_ISDIR if folder else stat.S_ISREG
    if not kind(st.st_mode) or (hasattr(os, "geteuid") and (st.st_uid != os.geteuid() or st.st_mode & 0o022)):
        raise PermissionError(f"{path} is not a private {'folder' if folder else 'file'} of this user's")


def wrapper(zig: Path, folder: Path) -> Path:
    """The ld.lld script for `zig` in `folder` (written when missing or different; atomically).  The folder and
    the script must be this user's alone (_check_private: an OSError otherwise); a planted script is replaced."""
    path = folder / WRAPPER
    text = wrapper_text(zig)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    _check_private(folder.parent, folder=True)   # whoever can write to the parent could swap the folder
    _check_private(folder, folder=True)
    try:
        _check_private(path, folder=False)
        if path.read_text() == text and os.access(path, os.X_OK):
            return path
    except OSError:
        pass
    tmp = folder / f".{WRAPPER}.{os.getpid()}.tmp"
    try:
        tmp.unlink()   # one a killed run of this pid left
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o700)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o755)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def given_problem(environ=None) -> str | None:
    """What is wrong with TRITON_HIP_LLD_PATH when it is set but is not an ld.lld Triton can run (a folder, a
    missing or non-executable file), in words; None when unset or fine.  Triton skips such a value without a
    word and then says only that /opt/rocm/llvm/bin/ld.lld is not found."""
    given = (os.environ if environ is None else environ).get("TRITON_HIP_LLD_PATH")
    if not given:
        return None
    if os.path.isdir(given):
        why = "is a folder, not an ld.lld"
    elif not os.path.exists(given):
        why = "does not exist"
    elif not os.path.isfile(given):
        why = "is not a file"
    elif not os.access(given, os.X_OK):
        why = "is not executable"
    else:
        return None
    return f"TRITON_HIP_LLD_PATH={given!r} {why}, so Triton has no ld.lld."


def _wrapper_folder(env) -> Path:
    """Where a side's script goes: its own bin/ for an environment tritonscope made; tritonscope's cache for
    another Python (a user's environment is never written into)."""
    if env.origin == "cache" and env.path:
        return Path(env.path) / "bin"
    import hashlib

    from tritonscope.core.env import cache_dir

    return cache_dir() / "lld" / hashlib.sha256(env.python.encode()).hexdigest()[:16]


def system_lld() -> str | None:
    from tritonscope import triton_api

    for name in triton_api.SYSTEM_LLD_CANDIDATES:
        found = shutil.which(name) if "/" not in name else (name if os.path.isfile(name) else None)
        if found:
            return found
    return None


def choose(env, environ=None) -> tuple[str | None, str]:
    """(the ld.lld to point Triton at, or None when Triton needs none or none is found; where it came from, in
    words) for a side's environment (a versions TritonEnv)."""
    environ = os.environ if environ is None else environ
    if not needs_external_lld(env.backends_dir):
        own = Path(env.backends_dir or "") / "amd" / "llvm" / "bin" / "ld.lld"
        return None, ("its wheel's own" if env.backends_dir and own.is_file() else "none needed")
    given = environ.get("TRITON_HIP_LLD_PATH")
    if given:   # the user's choice is Triton's too (versions/run.py passes it on): never replaced by another
        if os.path.isfile(given):   # as Triton 3.4 checks it (one it cannot run fails there, with what_to_do)
            return given, "TRITON_HIP_LLD_PATH"
        return None, given_problem(environ) or "TRITON_HIP_LLD_PATH is not a file"
    zig = zig_of(env.backends_dir)
    if zig is not None:
        try:
            return str(wrapper(zig, _wrapper_folder(env))), "the ziglang wheel in its environment"
        except OSError:
            pass
    found = system_lld()
    if found:
        return found, "the system's"
    return None, "none found"


def ensure(env, *, install: bool, install_into: Callable[..., str], progress: Callable[[str], None] | None = None
           ) -> str | None:
    """The ld.lld for `env`, installing ziglang into it (with envs.install_into, given by the caller) when it is an
    environment tritonscope made, its Triton needs one, none is found and installs are allowed; None when none
    is needed or none could be had."""
    lld, _where = choose(env)
    if lld is not None or not needs_external_lld(env.backends_dir):
        return lld
    if os.environ.get("TRITON_HIP_LLD_PATH"):   # the user's linker is the one Triton runs: nothing to install
        return None
    if not install or env.origin != "cache" or not env.path:
        return None
    from tritonscope.core.errors import TritonscopeError

    say = progress or (lambda _line: None)
    say(f"Triton {env.triton}: its AMD backend links with an external ld.lld, which its wheel lacks: "
        f"installing {ZIGLANG} (zig's lld) into its environment")
    try:
        install_into(Path(env.path), [ZIGLANG], progress=say, what=f"Triton {env.triton}")
    except TritonscopeError as e:   # no network, say: the compile's row gives the hint
        say(f"Triton {env.triton}: {ZIGLANG} could not be installed ({e.message})")
        return None
    lld, _where = choose(env)
    return lld


def missing(version: str) -> str:
    return f"Triton {version}'s AMD backend needs ld.lld, which its wheel lacks, and none was found."


def what_to_do(env=None) -> str:
    """How to get an ld.lld for that side (tritonscope's own environment, or a Python of the user's)."""
    problem = given_problem()
    if problem:
        return (f"{problem} Point it at an ld.lld file (LLVM 19 or newer), or unset it: tritonscope then finds "
                "one, or installs the ziglang wheel's lld into the environments it makes.")
    if env is not None and getattr(env, "origin", None) == "cache":
        get = ("tritonscope installs the ziglang wheel's lld into the environments it makes, and could not here "
               "(--no-install, or no network): run again without --no-install")
    else:
        python = getattr(env, "python", None) or "python"
        get = f"Install the ziglang wheel beside that Triton ({python} -m pip install {ZIGLANG}; tritonscope uses its lld)"
    return (f"{get}, or install LLVM's lld (Debian/Ubuntu: apt-get install lld-19), or set "
            "TRITON_HIP_LLD_PATH to an ld.lld of LLVM 19 or newer.")


def hint(version: str, env=None) -> str:
    """One line for a compile that failed for want of ld.lld (a `versions` row): what is missing, what to do."""
    return f"{missing(version)} {what_to_do(env)}"


# Exception: ROCm linker /opt/rocm/llvm/bin/ld.lld not found. Set 'TRITON_HIP_LLD_PATH' to its path.
_MISSING_RE = re.compile(r"ROCm linker \S*ld\.lld not found|ld\.lld\S* not found|TRITON_HIP_LLD_PATH")


def is_missing_lld(text: str) -> bool:
    """Whether an error's text is Triton's 'no ld.lld' (3.4's AMD backend)."""
    return "ld.lld" in text and bool(_MISSING_RE.search(text))
