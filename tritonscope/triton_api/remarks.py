"""Triton's own remarks and warnings, with the file:line:col they name.

Triton explains many missed optimizations itself ("MMA version 3 acceleration
not applied ...", "... the pipelined load for this operand will be disabled,
so poor performance is expected", "vectorization fails vec = 1"), but only
when `MLIR_ENABLE_DIAGNOSTICS` asks for remarks, and only on stderr, as MLIR
prints diagnostics:

    /work/k.py:19:16: remark: MMA version 3 acceleration not applied due to ...
            acc += tl.dot(a, b)
                   ^
    /work/k.py:19:16: note: Target compute capability (90) supports MMA v3.

This module turns that text into data (`parse_remarks`) and captures it
around an in-process compile (`collect_remarks`).  It never imports triton.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from dataclasses import asdict, dataclass
from typing import Iterable, Iterator

# What Triton reads to print diagnostics: remarks and warnings (errors always print).
DIAGNOSTICS = "remarks,warnings"
# The attribute collect_remarks puts Triton's stderr on, on the exception of a compile that failed.
STDERR_ATTR = "tritonscope_stderr"
SEVERITIES = ("error", "warning", "remark", "note")


@dataclass(frozen=True)
class Remark:
    """One diagnostic Triton emitted: where it points and what it says.

    `severity` is MLIR's word: remark, warning, error or note (a note adds
    detail to the diagnostic before it).  `stage` is the compile stage whose
    passes emitted it (ttir, ttgir, llir) and `step`/`pass_name` the pass,
    when known (the passes command knows; a plain compile does not).
    """

    file: str
    line: int
    col: int
    severity: str
    message: str
    stage: str = ""
    step: int = 0          # the pass step that printed it (passes command), 0 if unknown
    pass_name: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Remark":
        return cls(str(d.get("file", "")), int(d.get("line", 0)), int(d.get("col", 0)),
                   str(d.get("severity", "remark")), str(d.get("message", "")), str(d.get("stage", "")),
                   int(d.get("step", 0)), str(d.get("pass_name", "")))

    def where(self) -> str:
        name = os.path.basename(self.file) if self.file else "?"
        return f"{name}:{self.line}:{self.col}"

    @property
    def said(self) -> str:
        """The message without a repeat of its severity ("warning: Warning: Forcing ..." reads badly)."""
        head = f"{self.severity}: "
        return self.message[len(head):] if self.message[:len(head)].lower() == head else self.message


# /work/main/samples/matmul.py:19:16: remark: MMA version 3 acceleration not applied due to ...
# /tmp/k.py:56:16: warning: Warning: Forcing a different order [0, 1] on SMEM than ...
_DIAG_RE = re.compile(r"^(?P<file>[^\s:][^:]*?):(?P<line>\d+):(?P<col>\d+): "
                      r"(?P<sev>remark|warning|error|note): (?P<msg>.*)$")
# loc("x"): warning: ...   (a diagnostic on an op with no file location)
_DIAG_NOLOC_RE = re.compile(r"^(?P<file>loc\(.*?\)|<unknown>|-): (?P<sev>remark|warning|error|note): (?P<msg>.*)$")


def parse_remarks(lines: Iterable[str], *, stage: str = "") -> list[Remark]:
    """Diagnostics in `lines` (stderr text), in order, each reported once.

    MLIR follows each diagnostic with the source line and a caret; those and
    any other stderr output (IR dumps, timing reports) are skipped.  Triton
    sometimes emits the same diagnostic twice (once per walk of the op):
    duplicates are dropped.
    """
    out: list[Remark] = []
    seen: set[tuple] = set()
    for raw in lines:
        line = raw.rstrip("\n")
        if not line or line[0].isspace() or ": " not in line:
            continue
        m = _DIAG_RE.match(line)
        if m:
            r = Remark(m["file"], int(m["line"]), int(m["col"]), m["sev"], m["msg"].strip(), stage)
        else:
            m = _DIAG_NOLOC_RE.match(line)
            if not m:
                continue
            r = Remark("", 0, 0, m["sev"], m["msg"].strip(), stage)
        key = (r.file, r.line, r.col, r.severity, r.message)
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def is_diagnostic_line(line: str) -> bool:
    return bool(_DIAG_RE.match(line) or _DIAG_NOLOC_RE.match(line))


def remarks_for_file(remarks: Iterable[Remark], file: str) -> dict[int, list[Remark]]:
    """{line: [remarks]} for the diagnostics that point into `file`."""
    real = os.path.realpath(file)
    out: dict[int, list[Remark]] = {}
    for r in remarks:
        if r.file and os.path.realpath(r.file) == real:
            out.setdefault(r.line, []).append(r)
    return out


class RemarkList(list):
    """The list `collect_remarks` yields; filled when the block ends."""

    stderr_text: str = ""


@contextlib.contextmanager
def collect_remarks(*, echo_other: bool = True) -> Iterator[RemarkList]:
    """Capture Triton's diagnostics around an in-process compile.

        with collect_remarks() as remarks:
            compiled = triton_api.compile_kernel(...)
        artifact_remarks = list(remarks)

    Sets MLIR_ENABLE_DIAGNOSTICS for the block (Triton reads it when it
    builds each pass manager) and sends file descriptor 2 to a temporary
    file, since MLIR writes diagnostics from C++ straight to stderr.  When
    the block ends, stderr is restored, the diagnostics are parsed into the
    yielded list, and (with `echo_other`) every other line is written back to
    the real stderr, so nothing the compile printed is lost.

    A compile served from Triton's cache prints nothing: store the remarks
    with whatever you cache.  Not thread-safe (fd 2 is process-wide): hold
    the compile lock around it.
    """
    result = RemarkList()
    previous = os.environ.get("MLIR_ENABLE_DIAGNOSTICS")
    wanted = set(filter(None, (previous or "").split(","))) | set(DIAGNOSTICS.split(","))
    os.environ["MLIR_ENABLE_DIAGNOSTICS"] = ",".join(sorted(wanted))
    try:
        sys.stderr.flush()
    except Exception:
        pass
    saved = os.dup(2)
    capture = tempfile.TemporaryFile(mode="w+b", prefix="tritonscope-remarks-")
    os.dup2(capture.fileno(), 2)
    # On a terminal, Python's own writes (a progress spinner's frames, Python
    # warnings) keep going to it as they happen; only what C++ writes to fd 2
    # is held back and sorted.  Elsewhere (a pipe, a notebook, pytest's
    # capture) everything is held and the rest echoed in order afterwards.
    python_err, real_err = None, sys.stderr
    if _on_fd2(real_err) and _isatty(real_err):
        try:
            python_err = os.fdopen(os.dup(saved), "w", buffering=1, encoding=getattr(real_err, "encoding", None)
                                   or "utf-8", errors="backslashreplace")
            sys.stderr = python_err
        except (OSError, ValueError):
            python_err = None
    failed: BaseException | None = None
    try:
        yield result
    except BaseException as e:
        failed = e
        raise
    finally:
        if python_err is not None:
            if sys.stderr is python_err:
                sys.stderr = real_err
            try:
                python_err.close()
            except Exception:
                pass
        try:
            sys.stderr.flush()
        except Exception:
            pass
        os.dup2(saved, 2)
        os.close(saved)
        if previous is None:
            os.environ.pop("MLIR_ENABLE_DIAGNOSTICS", None)
        else:
            os.environ["MLIR_ENABLE_DIAGNOSTICS"] = previous
        capture.seek(0)
        text = capture.read().decode(errors="replace")
        capture.close()
        result.stderr_text = text
        result.extend(parse_remarks(text.splitlines()))
        if echo_other:
            other = _without_diagnostics(text)
            if failed is not None and other.strip():
                # a failed compile: what Triton printed (an assertion, a reproducer of the whole stage) is
                # kept on the error (STDERR_ATTR) for its failure report, which says it better; whoever
                # reports no failure echoes it (pipeline/compile_path.py)
                try:
                    setattr(failed, STDERR_ATTR, text)
                    other = ""
                except Exception:
                    pass
            if other.strip():
                try:
                    sys.stderr.write(other)
                    sys.stderr.flush()
                except Exception:
                    pass


def _on_fd2(stream) -> bool:
    try:
        return stream is not None and stream.fileno() == 2
    except (AttributeError, OSError, ValueError):
        return False


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False


def _without_diagnostics(text: str) -> str:
    """stderr text less the diagnostics and their source/caret lines."""
    out = []
    in_diagnostic = False
    for line in text.splitlines(keepends=True):
        if is_diagnostic_line(line.rstrip("\n")):
            in_diagnostic = True
            continue
        # MLIR follows a diagnostic with the source line, a caret line and
        # blank lines, all indented or empty: they belong to it.
        if in_diagnostic and (not line.strip() or line[:1].isspace()):
            continue
        in_diagnostic = False
        out.append(line)
    return "".join(out)


# --------------------------------------------------------------------------
# Remarks as notes on stage lines
# --------------------------------------------------------------------------
