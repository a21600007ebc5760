"""Path hygiene: stage texts and metadata carry absolute paths.

A path reaches a compile's output in four spellings, and a saved report
must lose all of them unless the user asks to keep paths:

    loc("/home/u/k/matmul.py":17:21)                   plain (MLIR, LLVM !DIFile)
    .file 1 "/tmp/\\303\\251t\\303\\251/va.py"               octal-escaped UTF-8 (PTX, nvdisasm)
    .file 1 "/tmp/e\\033[31mx/va.py"                     and octal-escaped control characters
    .b8 47 // DW_AT_comp_dir  .b8 104 ...  .b8 0       DWARF strings as bytes (PTX debug_info)
    ["libdevice", "/venv/.../libdevice.10.bc"]         metadata values (extern_libs)
"""

from __future__ import annotations

import functools
import os
import re

from tritonscope.language.dialects.ptx import DEBUG_B8, DEBUG_UNIT_LENGTH  # a PTX debug section's bytes


def relativize(text: str, folder: str, replacement: str = ".", *, keep_length: bool = False) -> str:
    """Rewrite every absolute path under `folder` as relative to it, in every spelling.

    '/home/u/k/matmul.py' with folder '/home/u/k' -> './matmul.py'.
    `keep_length`: a DWARF `.b8` string keeps its length (and the stage its
    line count, so line numbers stay those of the compile): the replacement
    is padded with '/', which names the same folder ('./////////').
    """
    folder, spellings = _spellings(folder)
    if not spellings:
        return text
    for spelling, pattern in spellings:
        if spelling in text:
            text = pattern.sub(lambda _m: replacement, text)
    if ".b8" in text:
        text = _relativize_dwarf_bytes(text, folder, replacement, keep_length=keep_length)
    return text


@functools.lru_cache(maxsize=256)
def _spellings(folder: str) -> tuple[str, tuple[tuple[str, re.Pattern], ...]]:
    """The folder, normalized, and each of its spellings with the expression that finds it as a folder:
    "/home/u/k/matmul.py" and directory: "/home/u/k", but not "/home/u/kk/...".  Kept per process: a
    saved report rewrites every string it holds (hundreds of thousands) with the same few folders."""
    folder = os.path.normpath(folder)
    if not folder or folder == os.sep:
        return folder, ()
    found = dict.fromkeys((folder, _octal(folder), _octal(folder, controls=True)))
    return folder, tuple((s, re.compile(re.escape(s) + r"(?![\w.\-]|\\[0-7]{3})")) for s in found)


def _octal(text: str, *, controls: bool = False) -> str:
    """How PTX and nvdisasm write a non-ASCII path: each UTF-8 byte above 127 as \\ooo.

    `controls`: a control character too (a folder named with an escape
    sequence: `.file 1 "/tmp/e\\033[31mx/k.py"`, `//## File "/tmp/e\\033[31mx/k.py"`).
    """
    return "".join(chr(b) if b < 128 and not (controls and (b < 32 or b == 127)) else f"\\{b:03o}"
                   for b in text.encode("utf-8"))


def _relativize_dwarf_bytes(text: str, folder: str, replacement: str, *, keep_length: bool = False) -> str:
    """Rewrite the folder inside the NUL-terminated `.b8` strings of a PTX debug section.

    Each string is one `.b8 N` line per byte.  A rewritten string is shorter,
    so the unit's `Length of Unit` is lowered by the same number of bytes and
    the section stays consistent.
    """
    lines = text.split("\n")
    old, new = folder.encode("utf-8"), replacement.encode("utf-8")
    if keep_length and len(new) <= len(old):
        new = new + b"/" * (len(old) - len(new))
    out: list[str] = []
    unit_at: int | None = None
    shrink = 0
    i = 0
    while i < len(lines):
        m = DEBUG_UNIT_LENGTH.match(lines[i])
        if m:
            if unit_at is not None and shrink:
                out[unit_at] = _shrunk(out[unit_at], shrink)
            unit_at, shrink = len(out), 0
        if not DEBUG_B8.match(lines[i]):
            out.append(lines[i])
            i += 1
            continue
        run = []
        while i < len(lines) and (b := DEBUG_B8.match(lines[i])) and int(b.group(1)) != 0:
            run.append((int(b.group(1)), b.group(2) or ""))
            i += 1
        if i < len(lines) and DEBUG_B8.match(lines[i]):
            run.append((0, DEBUG_B8.match(lines[i]).group(2) or ""))
            i += 1
        data = bytes(v for v, _ in run if v < 256)
        if len(run) > len(old) and old in data and len(data) == len(run):
            fixed = re.sub(re.escape(old) + rb"(?![\w.\-])", lambda _m: new, data[:-1]) + b"\0"
            comments = [c.strip() for _, c in run] + [""] * len(fixed)
            out.extend(f".b8 {byte}".ljust(40) + comments[k] if comments[k] else f".b8 {byte}"
                       for k, byte in enumerate(fixed))
            shrink += len(data) - len(fixed)
        else:
            out.extend(f".b8 {v}{c}" for v, c in run)
    if unit_at is not None and shrink:
        out[unit_at] = _shrunk(out[unit_at], shrink)
    return "\n".join(out)


def _shrunk(line: str, by: int) -> str:
    m = DEBUG_UNIT_LENGTH.match(line)
    return f".b32 {int(m.group(1)) - by}{m.group(2)}" if m else line


def install_folders() -> list[str]:
    """Where Python packages live (Triton's libdevice path in `extern_libs` is one of them).

    A saved report writes these as `<site-packages>`: they name the user's
    machine and virtualenv, and say nothing about the kernel.
    """
    import site
    import sysconfig

    found = [sysconfig.get_paths().get(k) for k in ("purelib", "platlib")]
    try:
        found += site.getsitepackages()
    except AttributeError:  # some embedded interpreters lack it
        pass
    found.append(site.getusersitepackages() if hasattr(site, "getusersitepackages") else None)
    # longest first, so a nested folder is rewritten before its parent
    return sorted({os.path.normpath(p) for p in found if p}, key=len, reverse=True)


def kernel_files(analysis) -> set[str]:
    """The kernel's file as the user named it and as the compiled stages name it.

    They differ when Triton's cache served a compile of the same source from
    another file: the IR then carries that file's path.  The TTIR's `tt.func`
    location names the file the stages were compiled from.  (Here, not in
    report.py, so that renderers can ask without importing report.py.)
    """
    from tritonscope.language.dialects import mlir_stages

    files = {analysis.artifact.spec.file} if analysis.artifact.spec.file else set()
    py = analysis.parsed.get("python")
    if py:
        files |= {ln.loc.file for ln in py.lines if ln.loc}
    for key in mlir_stages():
        stage = analysis.parsed.get(key)
        func = next((ln for ln in stage.lines if "tt.func" in ln.text and ln.loc), None) if stage else None
        if func:
            files.add(func.loc.file)
            break
    return files
