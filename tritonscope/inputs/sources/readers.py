"""Reading found files safely: sizes bounded, JSON depth, text heads and tails, the source lines IR files name."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tritonscope.core.errors import InputFileError
from tritonscope.inputs.limits import max_report_bytes
from tritonscope.language.dialects import dialect, for_suffix

def _read_json(path: Path, *, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as e:
        raise InputFileError(f"{path} is not {what}: it is not text.") from e
    except ValueError as e:
        raise InputFileError(f"{path} is not {what}: not valid JSON ({e}).") from e
    except RecursionError as e:  # [[[[...]]]] nested deeper than Python's JSON reader goes
        raise InputFileError(f"{path} is not {what}: its JSON is nested too deep to read.") from e
    except OSError as e:
        raise InputFileError(f"Cannot read {path}: {e.strerror or e}.") from e


def check_size(path: Path) -> None:
    """Refuse a file larger than `show` reads (max_report_bytes: 256 MB unless
    TRITONSCOPE_MAX_REPORT_MB says otherwise) before reading it: a stage file is a few MB, and
    reading and parsing a huge one takes minutes and gigabytes."""
    try:
        size = path.stat().st_size
    except OSError:
        return
    limit = max_report_bytes()
    if size > limit:
        raise InputFileError(
            f"{path} is {_megabytes(size)}; stage files larger than {_megabytes(limit)} are not read (a kernel's "
            "stage is a few MB).",
            hint="Check that this is the file you meant; to read it anyway, set TRITONSCOPE_MAX_REPORT_MB "
                 "(the limit `show` uses too) to a larger size.")


def _megabytes(n: int) -> str:
    return f"{n / (1 << 20):,.0f} MB" if n >= 10 << 20 else f"{n / (1 << 20):.2g} MB"


# module attributes {"ttg.num-warps" = 4 : i32, ...}    #blocked = #ttg.blocked<{...}>    (TTGIR, not TTIR)


def _head_and_tail(path: Path, size: int) -> str:
    """The first and last `size` bytes of a text file (as text): its header and its trailing attributes."""
    try:
        with path.open("rb") as f:
            head = f.read(size)
            f.seek(0, 2)
            end = f.tell()
            tail = b""
            if end > size:
                f.seek(max(size, end - size))
                tail = f.read(size)
    except OSError:
        return ""
    return (head + b"\n" + tail).decode("utf-8", errors="replace")


# An MLIR file's header: its aliases (#blocked = ..., #loc3 = loc(...)) come before the module's line, whose
# attributes say num-warps and the target.  A stage with many aliases puts that line past any fixed head.
_MODULE_LINE = re.compile(r"^module\b[^\n]*\n", re.M)
_MLIR_HEAD_LIMIT = 16 << 20


def mlir_head(f, size: int) -> str:
    """The first `size` characters of an open MLIR text file, read on (64 KB at a time, up to 16 MB) until the
    module's line is whole: a TTGIR of 600 layout aliases had its module attributes past 16 KB and was read as
    recording no num_warps and no target."""
    head = f.read(size)
    while not _MODULE_LINE.search(head) and len(head) < _MLIR_HEAD_LIMIT:
        more = f.read(65536)
        if not more:
            break
        head += more
    return head


def _read_head(path: Path, size: int) -> str:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as f:
            return f.read(size)
    except OSError:
        return ""


def ir_location(path: Path) -> tuple[str, int]:
    """(file, line) the TTIR's first `#loc` names: the kernel's def; ('', 0) when there is none."""
    try:
        with path.open("r", encoding="utf-8", errors="replace") as f:
            head = mlir_head(f, 4096)
    except OSError:
        return "", 0
    return dialect("ttir").def_location(head)


def llir_location(path: Path) -> tuple[str, int]:
    """(file, line) of the kernel's def from LLVM IR debug info (its DISubprogram and DIFile); ('', 0) if none.

    The debug info is at the end of the file: its head and tail are read.
    """
    return dialect("llir").def_location(_head_and_tail(path, 1 << 18))


def asm_location(path: Path, key: str = "ptx") -> tuple[str, int]:
    """(file, line) of the first `.loc` in AMDGCN or PTX (the kernel's def); ('', 0) when there is none."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "", 0
    return dialect(key).def_location(text)


# How much of a stage file the kernel's def is looked for in, by the kind of its dialect (the rest is the
# dialect's own def_location): an MLIR module's #loc aliases are at its top, LLVM IR's debug info at its end.
LOCATION_READERS = {"mlir": ir_location, "ir": llir_location}


def def_location(path: Path, key: str) -> tuple[str, int]:
    """(file, line) of the kernel's def a stage file (key: its files' key, "ttgir", "source") records."""
    found = for_suffix(f".{key}")
    if not found or found[0].def_location is None:
        return "", 0
    d = found[0]
    read = LOCATION_READERS.get(d.kind)
    return read(path) if read else asm_location(path, d.key)


# --------------------------------------------------------------------------


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise InputFileError(f"Cannot read {path}: {e.strerror or e}.") from e
