"""Triton's remarks as notes on the stage lines they name (the stream itself: triton_api.remarks).

`grouped`/`counted` pair each remark with its MLIR notes; `remark_notes`
puts a Note(kind="remark") on the Python line and the stage lines whose
locations the remark names.
"""

from __future__ import annotations

import os
from typing import Iterable

from tritonscope.triton_api.remarks import Remark

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
    from tritonscope.language.dialects import SOURCE, dialect
    from tritonscope.core.model import Note

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
