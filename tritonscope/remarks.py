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
    try:
        yield result
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

NOTE_KIND = "remark"
_LABEL_CHARS = 60


def grouped(remarks: Iterable[Remark | dict]) -> list[tuple[Remark, list[Remark]]]:
    """Each remark or warning with the MLIR `note:`s that follow it (details of it, at its place).

    A note with nothing before it stands alone.
    """
    out: list[tuple[Remark, list[Remark]]] = []
    for r in remarks:
        r = r if isinstance(r, Remark) else Remark.from_dict(r)
        if r.severity == "note" and out:
            out[-1][1].append(r)
        else:
            out.append((r, []))
    return out


def counted(remarks: Iterable[Remark | dict]) -> int:
    """How many remarks and warnings (errors too) there are, their notes not counted."""
    return len(grouped(remarks))


def remark_notes(parsed: dict, remarks: Iterable[Remark | dict], file: str) -> list:
    """Note(kind="remark") for each remark, on the stage lines it names.

    Which lines: the Python line it points at; in the MLIR stages (TTIR,
    TTGIR) every op whose location is the remark's (line and column); in the
    other stages (LLVM IR, PTX, SASS, where one op becomes many lines) only
    the first line that carries that location.  When no line of a stage has
    the column, the line number alone decides (first match only).  A remark
    in another file (inlined library code) or with no location gets no note.
    `facts` = the remark's dict less its file, plus "notes": the messages of its MLIR notes.
    """
    from tritonscope.dialects import SOURCE, dialect
    from tritonscope.model import Note

    out: list[Note] = []
    for r, details in grouped(remarks):
        if not r.file or r.line <= 0 or not _same_kernel_file(r.file, file):
            continue
        # the file is the kernel's own (the note's stage says where); leaving it out keeps
        # the facts the same when a report writes paths relative to the kernel's folder
        facts = {k: v for k, v in r.to_dict().items() if k != "file"}
        facts["notes"] = [d.message for d in details]
        label = f"{r.severity}: {r.said}"
        if len(label) > _LABEL_CHARS:
            label = label[:_LABEL_CHARS - 1].rstrip() + "…"
        said = r.said + "".join(f" ({d.said})" for d in details)
        by = f"{made_by(r)}, " if r.stage else ""
        explanation = f"Triton {r.severity} ({by}{r.where()}): {said}"
        for key, stage in parsed.items():
            for number in _lines_named(stage, key, r, SOURCE, dialect(key).lexer == "mlir"):
                out.append(Note(key, number, NOTE_KIND, label, explanation, facts=facts))
    return out


_STAGE_WORDS = {"ttir": "TTIR", "ttgir": "TTGIR", "llir": "LLVM"}


def made_by(r: "Remark") -> str:
    """Who printed the remark: 'TTGIR pass TritonGPUAccelerateMatmul', or 'TTGIR passes' when the pass
    is not known ('' when not even the stage is)."""
    if not r.stage:
        return ""
    words = _STAGE_WORDS.get(r.stage, r.stage.upper())
    return f"{words} pass {r.pass_name}" if r.pass_name else f"{words} passes"


def _same_kernel_file(a: str, b: str) -> bool:
    if not b:
        return True
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    # a report saved with relative paths names './k.py'; a cache hit may name the
    # identical kernel's other path: the file name decides then
    return os.path.basename(a) == os.path.basename(b)


def _lines_named(stage, key: str, r: Remark, source: str, every_exact: bool) -> list[int]:
    if key == source:
        return [ln.number for ln in stage.lines if ln.loc and ln.loc.line == r.line][:1]
    same_line = [ln for ln in stage.lines if ln.loc and ln.loc.line == r.line
                 and os.path.basename(ln.loc.file) == os.path.basename(r.file)]
    exact = [ln.number for ln in same_line if ln.loc.col == r.col]
    if exact:
        return exact if every_exact else exact[:1]
    return [ln.number for ln in same_line[:1]]
