"""LLVM IR: parser (`!dbg !N` -> `!N = !DILocation(line:, column:, scope:)`), noise, diff normalizer, op names.

No notes and no instruction classes: the walkthrough and the mix read the
stages before (TTGIR) and after (PTX, SASS) it.
"""

from __future__ import annotations

import re

from tritonscope.language.dialects import Dialect, Instr, Renamer, ssa_spelling
from tritonscope.core.model import Line, ParsedStage, SourceLoc

# !24 = !DILocation(line: 18, column: 21, scope: !4)
# !30 = !DILocation(line: 5, column: 9, scope: !7, inlinedAt: !31)
_DILOC = re.compile(r"^(![0-9]+)\s*=\s*(?:distinct\s+)?!DILocation\((.*)\)\s*$")
# !4 = distinct !DISubprogram(name: "matmul_kernel", ..., file: !3, line: 8, ...)
_SCOPE = re.compile(r"^(![0-9]+)\s*=\s*(?:distinct\s+)?!(?:DISubprogram|DILexicalBlock\w*)\((.*)\)\s*$")
# !3 = !DIFile(filename: "matmul.py", directory: "/home/u/k")
_DIFILE = re.compile(r'^(![0-9]+)\s*=\s*(?:distinct\s+)?!DIFile\(filename:\s*"([^"]*)",\s*directory:\s*"([^"]*)"')
# %9 = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x(), !dbg !14
_DBG = re.compile(r",?\s*!dbg\s+(![0-9]+)")
# line: 18   file: !3   name: "matmul_kernel"
_FIELD = re.compile(r"(\w+):\s*(\"[^\"]*\"|![0-9]+|-?\d+)")


def parse(text: str, *, file: str = "", first_line: int = 1) -> ParsedStage:
    raw_lines = text.splitlines()
    dilocs: dict[str, dict[str, str]] = {}
    scopes: dict[str, dict[str, str]] = {}
    files: dict[str, str] = {}
    for raw in raw_lines:
        if not raw.startswith("!"):
            continue
        m = _DILOC.match(raw)
        if m:
            dilocs[m.group(1)] = dict(_FIELD.findall(m.group(2)))
            continue
        m = _SCOPE.match(raw)
        if m:
            scopes[m.group(1)] = dict(_FIELD.findall(m.group(2)))
            continue
        m = _DIFILE.match(raw)
        if m:
            d, f = m.group(3), m.group(2)
            files[m.group(1)] = f if f.startswith("/") or not d else f"{d.rstrip('/')}/{f}"

    def file_of(scope: str | None, seen: set[str]) -> str:
        while scope and scope not in seen:
            seen.add(scope)
            fields = scopes.get(scope)
            if not fields:
                return ""
            if "file" in fields and fields["file"] in files:
                return files[fields["file"]]
            scope = fields.get("scope")
        return ""

    cache: dict[str, SourceLoc | None] = {}

    def resolve(ref: str) -> SourceLoc | None:
        if ref in cache:
            return cache[ref]
        loc, seen, cur = None, set(), ref
        # Follow inlinedAt to the outermost frame: that is the kernel's own line.
        while cur in dilocs and cur not in seen:
            seen.add(cur)
            f = dilocs[cur]
            loc = SourceLoc(file_of(f.get("scope"), set()) or file, int(f.get("line", 0)), int(f.get("column", 0)))
            cur = f.get("inlinedAt", "")
        cache[ref] = loc
        return loc

    lines = []
    for number, raw in enumerate(raw_lines, 1):
        if raw.startswith("!") and _DILOC.match(raw):
            continue
        loc = None
        shown = raw
        if "!dbg" in raw:
            m = _DBG.search(raw)
            if m:
                loc = resolve(m.group(1))
                shown = _DBG.sub("", raw)
        lines.append(Line(number, shown, raw, loc))
    return ParsedStage("llir", tuple(lines))


def noise(raw: str) -> str | None:
    """Debug metadata (`!12 = ...`, `#dbg_value`), the module header, `;` comments."""
    s = raw.lstrip()
    if s.startswith(("!", "#dbg_")):
        return "debug"
    if s.startswith(("source_filename", "target datalayout", "target triple")):
        return "header"
    if s.startswith(";"):
        return "comment"
    return None


# LLVM values: %12, %.pre, %offs_m
_SSA = re.compile(r"%[\w$.-]+")
# , !dbg !14   (after an instruction)
_DBG_ATTACHED = re.compile(r",\s*!dbg !\d+")
# define void @k(...) !dbg !4 {
_DBG_BARE = re.compile(r"\s!dbg !\d+")


def _family(token: str) -> str:
    name = token[1:]
    if name.isdigit():
        return "%"
    return "%" + re.sub(r"[._]?\d+$", "", name)


def normalize(text: str) -> list[tuple[int, str]]:
    """Debug metadata and `!dbg` dropped, values renumbered by first appearance."""
    ren = Renamer(_family, ssa_spelling)
    out: list[tuple[int, str]] = []
    for i, raw in enumerate(text.splitlines(), 1):
        if raw.startswith("!") or raw.startswith("source_filename") or raw.lstrip().startswith("#dbg_"):
            continue        # !12 = !DILocation(...), !llvm.dbg.cu = ...
        line = _DBG_ATTACHED.sub("", raw)
        line = _DBG_BARE.sub("", line)
        line = _SSA.sub(ren, line).rstrip()
        if line.strip() and not line.lstrip().startswith(";"):
            out.append((i, line))
    return out


# %9 = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()   -> @llvm.nvvm.read.ptx.sreg.ctaid.x
# %5 = add i32 %3, %4                                     -> add
_OP = re.compile(r"^\s*(?:%[\w.]+\s*=\s*)?(?:tail\s+)?(?:call\s+[^@]*(@[\w.]+)|([a-z]+))")


def classify(text: str) -> Instr | None:
    """The instruction (or called function) a line holds; no classes."""
    m = _OP.match(text)
    return Instr(m.group(1) or m.group(2)) if m else None


def annotate(stage: ParsedStage) -> list:
    return []


# --------------------------------------------------------------------------
# Stage-file recognition, and what a lone .llir records
# --------------------------------------------------------------------------

# define ptx_kernel void @k(      target triple = "nvptx64-nvidia-cuda"      ; ModuleID = 'LLVMDialectModule'
_SIGNS = re.compile(r"^define\b|^target triple|^; ModuleID", re.M)
# define ptx_kernel void @matmul_kernel(ptr addrspace(1) %0, ...
_KERNEL_NAME = re.compile(r"^define\b[^@]*@([\w$.]+)\(", re.M)
# !4 = distinct !DISubprogram(name: "matmul_kernel", linkageName: "matmul_kernel", scope: !3, file: !3, line: 8, ...
SUBPROGRAM = re.compile(r'^!\d+\s*=\s*(?:distinct\s+)?!DISubprogram\((.*)\)\s*$', re.M)
# !3 = !DIFile(filename: "matmul.py", directory: "/work/main/samples")
DIFILE_DEF = re.compile(r'^(!\d+)\s*=\s*(?:distinct\s+)?!DIFile\(filename:\s*"([^"]*)",\s*directory:\s*"([^"]*)"', re.M)
# file: !3, line: 8   (fields of a DISubprogram)
_FILE_FIELD = re.compile(r"\bfile:\s*(!\d+)")
_LINE_FIELD = re.compile(r"\bline:\s*(\d+)")
# attributes #0 = { nounwind "nvvm.reqntid"="128" }           (Triton 3.5+)
NVVM_REQNTID = re.compile(r'"nvvm\.reqntid"="(\d+)(?:,(\d+))?(?:,(\d+))?"')
# !{ptr @k, !"reqntidx", i32 128}                              (older Tritons: nvvm.annotations)
NVVM_REQNTIDX = re.compile(r'!"reqntidx",\s*i32\s+(\d+)')
# "nvvm.maxnreg"="128"     !"maxnreg", i32 128
NVVM_MAXNREG = re.compile(r'"nvvm\.maxnreg"="(\d+)"|!"maxnreg",\s*i32\s+(\d+)')
# define ptx_kernel void @k(        target triple = "nvptx64-nvidia-cuda"       @llvm.nvvm.read.ptx.sreg.tid.x
NVIDIA = re.compile(r'^define\s+ptx_kernel\b|^target triple = "nvptx|@llvm\.nvvm\.|"nvvm\.', re.M)
# "target-cpu"="sm_100a"
TARGET_SM = re.compile(r'"target-cpu"="sm_(\d+)[a-z]?"')
# "amdgpu-flat-work-group-size"="1,256"
AMD_WORK_GROUP = re.compile(r'"amdgpu-flat-work-group-size"="\d+,(\d+)"')
# target triple = "amdgpu9.42-amd-amdhsa"     (3.6: "amdgcn-amd-amdhsa"; the arch then is in "target-cpu")
AMD_TRIPLE = re.compile(r'^target triple = "(amdgcn|amdgpu)[^"]*"', re.M)
# "target-cpu"="gfx942"
TARGET_GFX = re.compile(r'"target-cpu"="(gfx[0-9a-f]+)')
# amdgpu9.42 -> gfx942; amdgpu11.0.0 -> gfx1100 (the triple's subarch is the gfx number with dots)
AMD_SUBARCH = re.compile(r'^target triple = "amdgpu([0-9a-f.]+)-', re.M)


def def_location(text: str) -> tuple[str, int]:
    """(file, line) of the kernel's def from the debug info (its DISubprogram and DIFile); ('', 0) if none.

    Triton's LLVM IR keeps its line tables (`!dbg` on each instruction, one
    DISubprogram per function) at the end of the file.
    """
    files = {m.group(1): (m.group(2), m.group(3)) for m in DIFILE_DEF.finditer(text)}
    for m in SUBPROGRAM.finditer(text):
        body = m.group(1)
        file_ref = _FILE_FIELD.search(body)
        line = _LINE_FIELD.search(body)
        if file_ref and line and file_ref.group(1) in files:
            name, directory = files[file_ref.group(1)]
            full = name if name.startswith("/") or not directory else f"{directory}/{name}"
            return full, int(line.group(1))
    return "", 0


# 12:                                               ; preds = %5, %12
_LOOP_LABEL = re.compile(r"^([\w.$-]+):")
#   br i1 %40, label %12, label %41, !dbg !20      br label %12
_LOOP_BRANCH = re.compile(r"^\s*br\b.*")
#   label %12     (each target a branch names)
_LOOP_TARGETS = re.compile(r"label %([\w.$-]+)")


def instruction_text(line: str) -> str:
    """The instruction without its `!dbg` attachment."""
    return _DBG_ATTACHED.sub("", line).strip()


DIALECTS = (
    Dialect(key="llir", title="LLVM IR", ext="ll", lexer="llvm", fence="llvm", order=30, backends=("cuda", "hip"),
            parse=parse, normalize=normalize, classify=classify, annotate=annotate, noise=noise,
            kind="ir", signs=_SIGNS, kernel_name=_KERNEL_NAME, def_location=def_location,
            loop_label=_LOOP_LABEL, loop_branch=_LOOP_BRANCH, loop_targets=_LOOP_TARGETS,
            instruction_text=instruction_text,
            pass_title="LLVM"),  # its passes lower MLIR's llvm dialect before translation
)
