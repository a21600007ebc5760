"""A repeated `tritonscope compile` prints what it printed last time, before typer, rich or Triton load.

(Except its compile time: the summary's `compiled in 0.74 s` is written back as `replayed ...`, in the same
width, `replayed_text`: no compile happened in this run.)

Why: a warm repeat from the result cache (result_cache.py) still pays for
importing the command line (typer, rich), parsing the options, and
highlighting six stages with Pygments: most of a 0.44 s run.  What `compile` prints is a function of its command line,
the terminal it prints to, and the compile result, so when all three are
unchanged the output is the same bytes, and can be written back as they are.

An entry is keyed by (`key_parts`):

- the command line, word for word, and the working folder (relative paths);
- the terminal: whether stdin, stdout and stderr are terminals, and the
  size rich draws for (that of the first of them that is a terminal);
- every environment variable that changes a compile (the compiler-knob
  prefixes of triton_api, the code-generation variables) or the display
  (NO_COLOR, FORCE_COLOR, TERM, COLUMNS, ...), and Python's executable and version.

and holds what must still be true for the output to be the same, checked on
every hit (`_still_true`):

- the result-cache key's inputs that can change under the same command line:
  which file the kernel path names now (a symlink repointed or removed, a
  folder renamed: the target is resolved again, as the compile would) and
  that file's and its dependencies' SHA-256, what the kernel module read at
  import (environment variables, files in its folder), tritonscope's and
  Triton's build stamps (result_cache), and the local GPU when no --arch was
  named;
- the versions (by file stamp) of the libraries that draw the output: rich,
  Pygments, typer.

Only `compile` with options from `REPLAYABLE` is replayed: anything that
writes a file (--save, --emit), pages, asks for a fresh compile
(--no-cache, --timeout) or debugging is run normally, as is every other
command.  A run is recorded only when it exits 0, printed nothing on stderr,
and was answered from or stored into one result-cache entry.  An unreadable
or stale entry is a miss, never an error, and so is one whose output holds
a control character a SafeConsole never writes (anything but newlines,
tabs and colour sequences): a planted entry cannot reach the terminal.  TRITONSCOPE_REPLAY=0 turns replay
off (TRITON_ALWAYS_COMPILE=1 and TRITONSCOPE_RESULT_CACHE=0 do too, as they
turn off the result cache).  A hit renews the entry's mtime, so that the
size cap (cache_prune) removes it last.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

SCHEMA = 1
FOLDER = "replay"
COMMANDS = frozenset({"compile"})

# The options whose effect is printed output only (each name as typed, with or without =VALUE).
REPLAYABLE = frozenset({
    "-c", "--constexpr", "--block", "--arg", "-w", "--num-warps", "-s", "--num-stages", "--arch", "--shape",
    "--dtype", "--stage", "--stages", "--view", "--line", "--layouts", "--max-lines", "--raw", "--keep",
    "--json", "--width", "--color", "--no-color", "--maxnreg", "--num-ctas", "--fp-fusion", "--no-fp-fusion",
})

# Variables that change how the output is drawn (rich reads these).
DISPLAY_ENV = ("NO_COLOR", "FORCE_COLOR", "TERM", "COLORTERM", "COLUMNS", "LINES", "TTY_COMPATIBLE",
               "TTY_INTERACTIVE", "JUPYTER_COLUMNS", "JUPYTER_LINES", "PYTHONIOENCODING", "LANG", "LC_ALL",
               "LC_CTYPE", "PYTHONPATH", "CUDA_VISIBLE_DEVICES", "XDG_CACHE_HOME", "HOME")
TOOL_PACKAGES = ("rich", "pygments", "typer")


def enabled() -> bool:
    from tritonscope.pipeline import result_cache

    return os.environ.get("TRITONSCOPE_REPLAY", "").strip().lower() not in ("0", "false", "off", "no") \
        and result_cache.enabled()


def plan(argv: list[str]) -> dict[str, Any] | None:
    """The replay key's parts for this command line, or None when it is not one that is replayed."""
    if not argv or argv[0] not in COMMANDS or not enabled():
        return None
    for word in argv[1:]:
        if word.startswith("-") and word.split("=", 1)[0] not in REPLAYABLE:
            return None
    return key_parts(argv)


def key_parts(argv: list[str]) -> dict[str, Any]:
    from tritonscope import triton_api

    # rich draws for the size of the first of stdin, stdout and stderr that is a terminal, even when
    # stdout is a file (`compile ... > out.txt` typed at a terminal): the same three, in the same order
    size = None
    for fd in (0, 1, 2):
        try:
            size = list(os.get_terminal_size(fd))
            break
        except OSError:
            continue
    names = set(DISPLAY_ENV) | set(triton_api.CODEGEN_ENV)
    names |= {k for k in os.environ if k.startswith(triton_api.KNOB_PREFIXES + ("TRITONSCOPE_",))}
    return {
        "schema": SCHEMA,
        "argv": list(argv),
        "cwd": os.getcwd(),
        "terminal": {"stdin": os.isatty(0), "stdout": os.isatty(1), "stderr": os.isatty(2), "size": size},
        "env": {k: os.environ.get(k) for k in sorted(names)},
        "python": [sys.executable, sys.version],
    }


def entry_path(parts: dict[str, Any]) -> Path:
    from tritonscope.core.env import cache_dir

    digest = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
    return cache_dir() / FOLDER / f"{digest[:40]}.json"


def try_replay(parts: dict[str, Any]) -> bool:
    """Write the kept output and return True, or return False (a miss: run the command)."""
    path = entry_path(parts)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("parts") != parts or not _still_true(data.get("checks")):
            return False
        out = data["stdout"]
        if not isinstance(out, str) or not _only_drawing(out):
            return False
    except Exception:  # an optimisation only: anything odd means "run it"
        return False
    from tritonscope.core import cache_prune

    cache_prune.touch(path)  # used now: the last to be pruned
    try:
        sys.stdout.write(out)
        sys.stdout.flush()
    except BrokenPipeError:  # `tritonscope ... | head`: not an error
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
    return True


# What the output of a SafeConsole holds besides text: newlines, tabs and colour (SGR) sequences.
_DRAWING = re.compile(r"\x1b\[[0-9;]*m|[\n\t]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _only_drawing(text: str) -> bool:
    """No control character but those a SafeConsole writes (a damaged or planted entry is a miss)."""
    return not _CONTROL.search(_DRAWING.sub("", text))


def checks_now(argv: list[str], entry: dict[str, Any]) -> dict[str, Any]:
    """What must still hold for the output to be the same, from the result-cache entry the run used."""
    from tritonscope.pipeline import result_cache

    parts = entry["parts"]
    return {
        # the target as typed: on a hit it is resolved again, so a repointed or removed link is a miss
        "target": parts["request"]["target"],
        "kernel": parts["kernel"],
        "deps": entry.get("deps") or [],
        "reads": entry.get("reads"),   # what the kernel module read at import (env, config files)
        "tritonscope": result_cache.tritonscope_build(),
        "triton": result_cache.triton_build(),
        "gpu": None if _names_arch(argv) else _local_gpu(),
        "tools": _tool_stamps(),
    }


def _still_true(checks: Any) -> bool:
    from tritonscope.pipeline import result_cache

    if not isinstance(checks, dict):
        return False
    kernel = checks.get("kernel") or {}
    try:
        # what the user's path names now (the working folder is in the key): not the file it named last time
        named = result_cache.kernel_file(checks["target"])
        if named is None or str(named) != kernel["path"]:
            return False
        if result_cache.file_sha256(kernel["path"]) != kernel["sha256"]:
            return False
    except (OSError, KeyError, TypeError):
        return False
    from tritonscope.inputs import import_watch

    return (result_cache.deps_unchanged(checks.get("deps"))
            and import_watch.reads_unchanged(checks.get("reads"))
            and checks.get("tritonscope") == result_cache.tritonscope_build()
            and checks.get("triton") == result_cache.triton_build()
            and checks.get("tools") == _tool_stamps()
            and ("gpu" not in checks or checks["gpu"] is None or checks["gpu"] == _local_gpu()))


def _names_arch(argv: list[str]) -> bool:
    return any(w == "--arch" or w.startswith("--arch=") for w in argv)


def _local_gpu() -> str:
    """The local GPU's capability as the default arch sees it ("none" without one)."""
    from tritonscope import triton_api

    cap = triton_api.local_gpu_capability()
    return str(cap) if cap else "none"


def _tool_stamps() -> dict[str, Any]:
    import importlib.util

    out: dict[str, Any] = {}
    for name in TOOL_PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
            st = os.stat(spec.origin) if spec and spec.origin else None
        except (ImportError, ValueError, OSError):
            st = None
        out[name] = [spec.origin, st.st_size, st.st_mtime_ns] if st else None
    return out


class _Tee:
    """A stream that keeps a copy of what is written to it (everything else goes to the real stream)."""

    def __init__(self, stream):
        self._stream = stream
        self.chunks: list[str] = []
        self.broken = False  # the reader went away (`| head`): what was kept is cut short

    def write(self, text):
        self.chunks.append(text)
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self.broken = True
            raise

    def flush(self):
        try:
            return self._stream.flush()
        except BrokenPipeError:
            self.broken = True
            raise

    def __getattr__(self, name):
        return getattr(self._stream, name)


def run_recorded(parts: dict[str, Any], run) -> None:
    """Run the command (`run()`, which exits by SystemExit as typer does) and keep its output when it qualifies."""
    from tritonscope.pipeline import result_cache

    out, err = _Tee(sys.stdout), _Tee(sys.stderr)
    sys.stdout, sys.stderr = out, err
    code: Any = 0
    with result_cache.recording() as used:  # the result-cache entries this command looks up or stores
        try:
            run()
        except SystemExit as e:
            code = e.code
            raise
        finally:
            sys.stdout, sys.stderr = out._stream, err._stream
            if code in (0, None) and not any(err.chunks) and not out.broken:
                _store(parts, "".join(c for c in out.chunks if isinstance(c, str)), used)


# The summary's compile time, as a fresh compile prints it, and the blanks after it in its row
_COMPILED_IN = re.compile(r"compiled in (\d+\.\d\d) s( *)")


def replayed_text(text: str) -> str:
    """The output to write back: a fresh compile's 'compiled in 0.74 s' says that it is replayed, in the room the
    row has (the words are never longer than the row's text and blanks, so a panel's border stays put)."""
    def say(m: re.Match) -> str:
        room = len(m[0])
        for words in (f"replayed from the cache (the compile took {m[1]} s)", f"replayed ({m[1]} s compile)",
                      "replayed"):
            if len(words) <= room:
                return words.ljust(room)
        return m[0]

    return _COMPILED_IN.sub(say, text)


def _store(parts: dict[str, Any], text: str, used: list) -> None:
    from tritonscope.core.output import write_cache

    try:
        if len(used) != 1 or not text:
            return
        payload = {"parts": parts, "checks": checks_now(parts["argv"], used[0].data), "stdout": replayed_text(text)}
        write_cache(entry_path(parts), json.dumps(payload))
    except Exception:  # an optimisation only
        return
