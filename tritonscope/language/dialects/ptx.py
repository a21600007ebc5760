"""PTX: parser (`.file` / `.loc`), noise, diff normalizer, the instruction vocabulary and its notes.

One classifier (`classify`) names every instruction tritonscope counts: its
coarse class (`Instr.cls`, one of dialects.CLASSES), its fine mix name
(`Instr.name`, what Analysis.mix counts) and its numbers (`Instr.facts`:
bytes, vector width, instruction shape...).  The notes, the summary mix, the
diff, sweep and bench all read that one answer.
"""

from __future__ import annotations

import re

from tritonscope.language import refs
from tritonscope.language.dialects import asm_def_location, asm_files, Dialect, Instr, Renamer
from tritonscope.core.model import Line, Note, ParsedStage, SourceLoc

# --------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------

# .loc	1 17 21                         // matmul.py:17:21
# .loc	1 17 21, function_name $L__info_string0, inlined_at 1 9 3
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?:.*\binlined_at\s+(\d+)\s+(\d+)\s+(\d+))?")


def parse(text: str, *, file: str = "", first_line: int = 1) -> ParsedStage:
    """Lines with the `.loc` in effect.

    A `.loc` applies to every instruction after it until the next `.loc`; a new
    function body or a label does not reset it, as in DWARF line tables.  The
    `.loc` lines themselves are not shown.
    """
    raw_lines = text.splitlines()
    files = asm_files(text)
    lines = []
    current: SourceLoc | None = None
    for number, raw in enumerate(raw_lines, 1):
        if ".loc" in raw:
            m = _LOC.match(raw)
            if m:
                fid, line, col = m.group(1), int(m.group(2)), int(m.group(3))
                if m.group(4):  # inlined: the kernel's own line is where it was inlined
                    fid, line, col = m.group(4), int(m.group(5)), int(m.group(6))
                current = SourceLoc(files.get(fid, file), line, col) if line else None
                continue
        stripped = raw.strip()
        is_code = bool(stripped) and not stripped.startswith(("//", ".file", "{", "}", "$", "."))
        lines.append(Line(number, raw, raw, current if is_code else None))
        if stripped.startswith("}") and not raw.startswith("\t"):
            current = None  # end of a function
    return ParsedStage("ptx", tuple(lines))


# --------------------------------------------------------------------------
# Noise
# --------------------------------------------------------------------------

# .b8 47                                  // DW_AT_comp_dir        (DWARF bytes of a .debug_* section)
_DWARF_DATA = re.compile(r"^\s*\.b(?:8|16|32|64)\s")
# $L__tmp1:   $L__func_begin0:   $L__func_end0:   (labels only the line tables use)
_DEBUG_LABEL = re.compile(r"^\$L__(?:tmp|func_begin|func_end)\d+:")


def noise(raw: str) -> str | None:
    """Debug info (.file/.loc, .section .debug_* and its data), the module header, comment lines.

    A DWARF section's own braces are tab-indented lone `{` / `}` lines, which
    NVPTX never writes for code (a function body's braces start the line).
    """
    s = raw.strip()
    if not s:
        return None
    if s.startswith("//"):
        return "comment"
    if s.startswith((".file", ".loc")) or (s.startswith(".section") and ".debug" in s):
        return "debug"
    if _DWARF_DATA.match(raw) or _DEBUG_LABEL.match(s) or (s in ("{", "}") and raw.startswith("\t")):
        return "debug"
    if s.startswith((".version", ".target", ".address_size")):
        return "header"
    return None


# --------------------------------------------------------------------------
# Diff normalizer
# --------------------------------------------------------------------------

# PTX registers and labels: %r12, %rd3, %p1, $L__BB0_3 (not %tid.x / %ctaid)
_NAME = re.compile(r"%(?:r|rd|rs|f|fd|p|h|hh|b)\d+\b|\$L__BB\d+_\d+")
# $L__tmp1:  $L__func_begin0:  (debug-info labels)
_DEBUG_LABEL_LINE = re.compile(r"^\$L__(tmp|func_begin|func_end)\d+:")
# add.s32 %r1, %r2, %r3;  // matmul.py:12     (trailing comment: a source name)
_TRAILING_COMMENT = re.compile(r"\s*//.*$")


def _family(token: str) -> str:
    # %r12 -> %r ; %rd3 -> %rd ; $L__BB0_3 -> $L__BB
    if token.startswith("$"):
        return "$L__BB"
    return re.sub(r"\d+$", "", token)


def normalize(text: str) -> list[tuple[int, str]]:
    """Debug sections, .file/.loc and comments dropped; registers and labels renumbered."""
    ren = Renamer(_family, lambda fam, n: f"{fam}{n}" if fam.startswith("%") else f"$L__BB{n}")
    out: list[tuple[int, str]] = []
    in_debug = False
    for i, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if in_debug:
            if s == "}":
                in_debug = False
            continue
        if s.startswith(".section") and ".debug" in s:
            in_debug = True      # .section .debug_info { ... } (paths, line tables)
            continue
        if s.startswith((".file", ".loc", "//")) or _DEBUG_LABEL_LINE.match(s):
            continue
        line = _TRAILING_COMMENT.sub("", raw)
        line = _NAME.sub(ren, line).rstrip()
        if line.strip():
            out.append((i, line))
    return out


# --------------------------------------------------------------------------
# The vocabulary
# --------------------------------------------------------------------------

# @%p1 cp.async.ca.shared.global [ %r21 + 0 ], [ %rd5 + 0 ], 0x4, %r22;   -> cp.async.ca.shared.global
_OP = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.:]*)")
_NOT_CODE = ("//", ".", "$", "{", "}")
# cp.async.ca.shared.global [ %r21 + 0 ], [ %rd5 + 0 ], 0x4, %r22;   (the last operand: source size)
_CP_ASYNC = re.compile(r"cp\.async\.(ca|cg)\.shared\S*?\.global\S*\s+\[[^\]]*\],\s*\[[^\]]*\],\s*"
                       r"(0x[0-9a-fA-F]+|\d+)(\s*,\s*%\w+)?")
# cp.async.wait_group 1;
_WAIT_GROUP = re.compile(r"wait_group\s+(0x[0-9a-fA-F]+|\d+)\b")  # Triton 3.2 writes 0x2
# cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
_BULK_DIMS = re.compile(r"\.(\d)d\.")
# ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16   (stmatrix alike)
_MATRIX = re.compile(r"^(?:ld|st)matrix\.sync\.aligned\.(m\d+n\d+)\.x(\d)(\.trans)?(?:\.shared(?:::cta)?\.(\w+))?")
# mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
# wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16
_MMA_SHAPE = re.compile(r"^(mma\.sync|wgmma\.mma_async)(?:\.sp)?(?:\.sync)?\.aligned\.m(\d+)n(\d+)k(\d+)((?:\.\w+)*)")
# wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {...}, %rd77, ...   ({ = A from registers, % = descriptor)
_WGMMA_A = re.compile(r"wgmma\.mma_async\S*\s+\{[^}]*\},\s*(\{|%)")
# wgmma.wait_group.sync.aligned 1;
_WGMMA_WAIT = re.compile(r"wait_group\.sync\.aligned\s+(0x[0-9a-fA-F]+|\d+)\b")
# ld.global.v4.b32 / st.shared.v2.f32 / ld.global.nc.L1::evict_last.v4.b32
_LDST = re.compile(r"\b(ld|st)\.(global|shared)(?:::cta)?((?:\.[\w:]+)*?)\.(?:(v\d)\.)?([busf]\d+)\b")


def classify(text: str) -> Instr | None:
    """The instruction on a PTX line, or None for directives, labels, braces and comments."""
    s = text.lstrip()
    if not s or s.startswith(_NOT_CODE):
        return None
    m = _OP.match(text)
    if not m:
        return None
    op = m.group(1)
    fn = _BY_HEAD.get(op.split(".", 1)[0])
    return (fn(op, text) if fn else None) or Instr(op)


def _cp(op: str, text: str) -> Instr | None:
    if op.startswith("cp.async.bulk.tensor"):
        dims = _BULK_DIMS.search(op)
        to = "shared" if ".shared" in op.split(".global")[0] else "global"
        return Instr(op, "tma copy", "tma copy", {"dims": int(dims.group(1)) if dims else None, "to": to})
    if op.startswith("cp.async.bulk"):
        return Instr(op, "tma copy", "bulk copy")
    if op.startswith("cp.async.commit_group"):
        return Instr(op, "async commit", "async commit group")
    if op.startswith("cp.async.wait_group"):
        n = _WAIT_GROUP.search(text)
        return Instr(op, "async wait", "async wait group", {"pending": int(n.group(1), 0) if n else None})
    if op.startswith("cp.async.wait_all"):
        return Instr(op, "async wait", "async wait group", {"pending": 0, "all": True})
    if op.startswith(("cp.async.ca.", "cp.async.cg.")):
        cache = op.split(".")[2]
        c = _CP_ASYNC.search(text)
        if not c:
            return Instr(op, "async copy", f"async copy .{cache}", {"cache": cache})
        size = int(c.group(2), 0)
        return Instr(op, "async copy", f"async copy .{cache} {size}B",
                     {"cache": cache, "bytes": size, "src_size": bool(c.group(3))})
    return None


def _matrix(op: str, text: str) -> Instr | None:
    cls = op.split(".", 1)[0]      # ldmatrix / stmatrix
    m = _MATRIX.match(op)
    if not m:
        return Instr(op, cls, cls)
    n, trans = int(m.group(2)), bool(m.group(3))
    return Instr(op, cls, f"{cls} x{n}{'.trans' if trans else ''}",
                 {"shape": m.group(1), "count": n, "trans": trans, "elem": m.group(4)})


def _mma(op: str, text: str) -> Instr | None:
    head = op.split(".", 1)[0]
    if head == "wgmma" and not op.startswith("wgmma.mma_async"):
        for what in ("fence", "commit_group", "wait_group"):
            if op.startswith(f"wgmma.{what}"):
                n = _WGMMA_WAIT.search(text) if what == "wait_group" else None
                return Instr(op, "wgmma sync", f"wgmma {what}", {"pending": int(n.group(1), 0)} if n else {})
        return None
    m = _MMA_SHAPE.match(op)
    if not m:
        return None
    cls = "mma" if head == "mma" else "wgmma"
    shape = f"m{m.group(2)}n{m.group(3)}k{m.group(4)}"
    facts = {"family": m.group(1), "shape": shape, "m": int(m.group(2)), "n": int(m.group(3)),
             "k": int(m.group(4)), "qualifiers": [q for q in m.group(5).split(".") if q]}
    if cls == "wgmma":
        a = _WGMMA_A.search(text)
        facts["a_from"] = ("registers" if a.group(1) == "{" else "shared") if a else None
    return Instr(op, cls, f"{cls} {shape}", facts)


def _sync(op: str, text: str) -> Instr | None:
    if op.startswith("mbarrier."):
        return Instr(op, "mbarrier", "mbarrier", {"what": op.split(".")[1]})
    if op.startswith(("bar.sync", "barrier.sync", "barrier.cta.sync", "bar.cta.sync")):
        return Instr(op, "barrier", "barrier")
    return None


def _ldst(op: str, text: str) -> Instr | None:
    if not op.startswith(("ld.global", "st.global", "ld.shared", "st.shared")):
        return None
    m = _LDST.search(op)
    if not m:
        return None
    access = "load" if m.group(1) == "ld" else "store"
    space, vec, bits = m.group(2), m.group(4), int(m.group(5)[1:])
    n = int(vec[1:]) if vec else 1
    return Instr(op, f"{space} {access}", f"{space} {access} {vec or 'scalar'}.{bits}",
                 {"space": space, "access": access, "vector": n if vec else None, "bits": bits,
                  "bytes": n * bits // 8})


# tcgen05.mma.cta_group::1.kind::f16    tcgen05.mma.sp.cta_group::2.kind::f8f6f4.block_scale
_TCGEN05_MMA = re.compile(r"^tcgen05\.mma(\.sp)?(?:\.cta_group::(\d))?(?:\.kind::(\w+))?((?:\.[\w:]+)*)")
# tcgen05.ld.sync.aligned.32x32b.x128.b32    tcgen05.st.sync.aligned.16x256b.x8.b32
_TCGEN05_LDST = re.compile(r"^tcgen05\.(ld|st)\.sync\.aligned\.(\w+?)\.x(\d+)")
# tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r26], 256;      (the column count)
_TMEM_COLUMNS = re.compile(r",\s*(\d+)\s*;")


def _tcgen05(op: str, text: str) -> Instr | None:
    """Blackwell's 5th-generation tensor-core family: MMA into tensor memory, and tensor memory itself."""
    what = op.split(".")[1] if "." in op else ""
    if what == "mma":
        m = _TCGEN05_MMA.match(op)
        kind = m.group(3) if m and m.group(3) else "?"
        group = int(m.group(2)) if m and m.group(2) else 1
        facts = {"family": "tcgen05.mma", "shape": f"kind::{kind}", "kind": kind, "cta_group": group,
                 "sparse": bool(m and m.group(1)), "qualifiers": [q for q in (m.group(4) if m else "").split(".") if q]}
        return Instr(op, "tcgen05 mma", f"tcgen05.mma kind::{kind}", facts)
    if what in ("ld", "st"):
        m = _TCGEN05_LDST.match(op)
        facts = {"shape": m.group(2), "count": int(m.group(3))} if m else {}
        cls = "tmem load" if what == "ld" else "tmem store"
        return Instr(op, cls, f"{cls} {facts.get('shape', '')}.x{facts.get('count', '?')}", facts)
    if what == "cp":
        return Instr(op, "tmem store", "tmem copy from shared", {"copy": True})
    if what in ("alloc", "dealloc", "relinquish_alloc_permit"):
        n = _TMEM_COLUMNS.search(text) if what != "relinquish_alloc_permit" else None
        return Instr(op, "tmem alloc", f"tmem {what}", {"what": what, "columns": int(n.group(1)) if n else None})
    if what.startswith(("commit", "wait", "fence")):
        return Instr(op, "tcgen05 sync", f"tcgen05.{what.split('::')[0]}", {"what": what})
    return None


_BY_HEAD = {"cp": _cp, "ldmatrix": _matrix, "stmatrix": _matrix, "mma": _mma, "wgmma": _mma,
            "mbarrier": _sync, "bar": _sync, "barrier": _sync, "ld": _ldst, "st": _ldst, "tcgen05": _tcgen05}


# --------------------------------------------------------------------------
# Notes
# --------------------------------------------------------------------------


def annotate(stage: ParsedStage) -> list[Note]:
    """Async copies, ldmatrix, mma/wgmma, TMA, barriers, vector loads/stores, each with its facts."""
    notes = []
    for line in stage.lines:
        ins = classify(line.text)
        if ins is None:
            continue
        try:
            got = _note(ins)
        except Exception:
            got = None
        if got:
            facts = {"op": ins.op, "cls": ins.cls, **ins.facts}
            notes.append(Note(stage.key, line.number, *got, facts))
    return notes


# One writer per instruction family: (op, class, facts) -> (kind, label, explanation, reference) or None.
def _note_async_commit(op: str, cls: str | None, f) -> tuple | None:
    """async commit"""
    return ("instruction", "commit group",
            "cp.async.commit_group: the cp.async copies issued so far by this thread form one group.",
            refs.CP_ASYNC_COMMIT)


def _note_async_wait(op: str, cls: str | None, f) -> tuple | None:
    """async wait"""
    if f.get("all"):
        return ("instruction", "wait all", "cp.async.wait_all: waits for every pending copy.", refs.CP_ASYNC_WAIT)
    n = f.get("pending")
    if n is None:
        return ("instruction", "wait group", "cp.async.wait_group: waits for earlier copy groups.",
                refs.CP_ASYNC_WAIT)
    return ("instruction", f"wait ≤{n} groups",
            f"cp.async.wait_group {n}: waits until at most {n} of this thread's most recent copy groups are "
            f"pending" + (" (all copies done)." if n == 0 else "."), refs.CP_ASYNC_WAIT)


def _note_async_copy(op: str, cls: str | None, f) -> tuple | None:
    """async copy"""
    if "bytes" not in f:
        return None
    size = f["bytes"]
    level = {"ca": "cache in L1 and L2 (.ca)", "cg": "cache in L2 only, bypassing L1 (.cg)"}[f["cache"]]
    text = f"Asynchronous copy of {size} bytes global → shared by each thread, without using registers; {level}."
    if f["src_size"]:
        text += (" The last operand is the source size: fewer (0) bytes are read for masked-off elements "
                 "and the rest is zero-filled.")
    return ("instruction", f"cp.async.{f['cache']} {size}B", text, refs.CP_ASYNC)


def _note_ldmatrix(op: str, cls: str | None, f) -> tuple | None:
    """ldmatrix"""
    if "count" not in f or f["elem"] is None:
        return None
    n, trans = f["count"], f["trans"]
    text = (f"Warp-wide load of {n} {f['shape'][1:].replace('n', 'x')} matrices of 16-bit elements from shared "
            f"memory (= {n * 64} elements, {n * 128} bytes); each thread receives {n} 32-bit register(s) in the "
            f"fragment layout of the warp-level mma instructions.")
    if n == 4:
        text += " Four 8x8 matrices make one 16x16 16-bit tile."
    if trans:
        text += " .trans transposes each 8x8 matrix while loading."
    return ("instruction", f"ldmatrix x{n}{' .trans' if trans else ''}", text, refs.LDMATRIX)


def _note_stmatrix(op: str, cls: str | None, f) -> tuple | None:
    """stmatrix"""
    if "count" not in f or f["elem"] is None:
        return None
    n = f["count"]
    return ("instruction", f"stmatrix x{n}{' .trans' if f['trans'] else ''}",
            f"Warp-wide store of {n} 8x8 16-bit matrices from registers to shared memory (the reverse of ldmatrix).",
            refs.STMATRIX)


def _note_mma(op: str, cls: str | None, f) -> tuple | None:
    """mma"""
    q = f["qualifiers"]
    if len(q) < 4 or q[0] not in ("row", "col") or q[1] not in ("row", "col"):
        return None
    d, a, b = (q[2:6] + [None] * 3)[:3]
    mm, nn, kk = f["m"], f["n"], f["k"]
    return ("instruction", f"mma m{mm}n{nn}k{kk} {a}→{d}",
            f"One warp multiplies A[{mm}x{kk}] ({a}, {q[0]}-major fragment) by B[{kk}x{nn}] ({b}, "
            f"{q[1]}-major) and adds C into D[{mm}x{nn}] ({d}) on the tensor cores.", refs.MMA)


def _note_wgmma_sync(op: str, cls: str | None, f) -> tuple | None:
    """wgmma sync"""
    if op.startswith("wgmma.fence"):
        return ("instruction", "wgmma fence", "Orders register/shared accesses before the next wgmma reads them.",
                refs.WGMMA_FENCE)
    if op.startswith("wgmma.commit_group"):
        return ("instruction", "wgmma commit", "Groups the wgmma operations issued so far so they can be waited on.",
                refs.WGMMA_COMMIT)
    n = f.get("pending")
    return ("instruction", f"wgmma wait ≤{n}" if n is not None else "wgmma wait",
            f"Waits until at most {n} wgmma groups are pending." if n is not None else "Waits for wgmma groups.",
            refs.WGMMA_WAIT)


def _note_wgmma(op: str, cls: str | None, f) -> tuple | None:
    """wgmma"""
    types = f["qualifiers"]
    if not types or f.get("a_from") is None:
        return None
    mm, nn, kk = f["m"], f["n"], f["k"]
    a_src = "registers" if f["a_from"] == "registers" else "shared memory (descriptor)"
    return ("instruction", f"wgmma m{mm}n{nn}k{kk}",
            f"A warpgroup (4 warps, 128 threads) asynchronously computes D[{mm}x{nn}] ({types[0]}) += "
            f"A[{mm}x{kk}] x B[{kk}x{nn}] ({'/'.join(types[1:3])}); A from {a_src}, B from shared memory "
            f"(descriptor).", refs.WGMMA)


def _note_tma_copy(op: str, cls: str | None, f) -> tuple | None:
    """tma copy"""
    if not op.startswith("cp.async.bulk.tensor"):
        return None
    dims = f.get("dims")
    direction = "global → shared" if f.get("to") == "shared" else "shared → global"
    return ("instruction", "TMA copy", f"Tensor Memory Accelerator bulk copy of a {f'{dims}-D ' if dims else ''}"
            f"tile {direction}, addressed by a tensor map; completion is tracked by an mbarrier.",
            refs.CP_ASYNC_BULK_TENSOR)


def _note_tcgen05_mma(op: str, cls: str | None, f) -> tuple | None:
    """tcgen05 mma"""
    pair = "a pair of CTAs (cta_group::2)" if f["cta_group"] == 2 else "its CTA (cta_group::1)"
    return ("instruction", f"tcgen05.mma kind::{f['kind']}",
            f"Blackwell 5th-generation tensor-core MMA, issued by one thread for {pair}: D in tensor memory (TMEM) "
            f"+= A (shared memory descriptor, or TMEM) x B (shared memory descriptor), kind::{f['kind']} inputs"
            + (", A structured-sparse" if f["sparse"] else "") + "; asynchronous (tcgen05.commit signals an "
            "mbarrier when it is done). The M/N shape is in the instruction descriptor operand: the TTGIR "
            "ttng.tc_gen5_mma shows the tile.", refs.TCGEN05)


def _note_tmem_access(op: str, cls: str | None, f) -> tuple | None:
    """tmem load / tmem store"""
    if f.get("copy"):
        return ("instruction", "tcgen05.cp", "Copies from shared memory into tensor memory (e.g. MMA scale "
                "factors).", refs.TCGEN05)
    if "shape" not in f:
        return None
    load = cls == "tmem load"
    if f["shape"] == "32x32b":
        how = (f"each of the warp's 32 threads {'reads' if load else 'writes'} {f['count']} consecutive 32-bit "
               f"columns of its own TMEM lane ({f['count']} registers)")
    else:
        how = f"the {f['shape']} access pattern, repeated {f['count']} times along the columns"
    return ("instruction", f"tcgen05.{'ld' if load else 'st'} {f['shape']}.x{f['count']}",
            f"Warp-wide {'read from' if load else 'write to'} tensor memory {'into' if load else 'from'} "
            f"registers: {how}" + (" (e.g. the accumulator for the epilogue)." if load else "."), refs.TCGEN05)


def _note_tmem_alloc(op: str, cls: str | None, f) -> tuple | None:
    """tmem alloc"""
    if f["what"] == "relinquish_alloc_permit":
        return ("instruction", "TMEM permit", "This CTA will allocate no more tensor memory, so other CTAs on "
                "the SM may.", refs.TCGEN05)
    n = f.get("columns")
    size = f" {n} columns (128 lanes x {n} x 4 bytes = {n * 512:,} bytes)" if n else ""
    return ("instruction", f"TMEM {f['what']}{f' {n} cols' if n else ''}",
            f"tcgen05.{f['what']}: {'allocates' if f['what'] == 'alloc' else 'frees'}{size} of tensor memory "
            f"(512 columns per SM)" + ("; the address is written to shared memory." if f["what"] == "alloc"
                                       else "."), refs.TCGEN05)


def _note_tcgen05_sync(op: str, cls: str | None, f) -> tuple | None:
    """tcgen05 sync"""
    what = f["what"]
    if what.startswith("commit"):
        return ("instruction", "tcgen05.commit", "Makes an mbarrier arrive once all tcgen05 operations this "
                "thread issued before it have completed.", refs.TCGEN05)
    if what.startswith("wait"):
        return ("instruction", f"tcgen05.{what}", f"Waits until this thread's earlier tcgen05."
                f"{what.split('::')[-1]} operations have completed.", refs.TCGEN05)
    return ("instruction", f"tcgen05.{what}", "Orders tcgen05 operations with the thread's other memory "
            "accesses.", refs.TCGEN05)


def _note_mbarrier(op: str, cls: str | None, f) -> tuple | None:
    """mbarrier"""
    what = f["what"]
    return ("instruction", f"mbarrier {what}",
            f"mbarrier.{what}: an operation on a shared-memory barrier object (used to wait for async copies).",
            refs.MBARRIER)


def _note_barrier(op: str, cls: str | None, f) -> tuple | None:
    """barrier"""
    return ("instruction", "CTA barrier",
            "bar.sync: every thread of the CTA waits here (like __syncthreads), e.g. before reusing shared memory.",
            refs.BAR)


def _note_bar_warp_sync(op: str, cls: str | None, f) -> tuple | None:
    """bar.warp.sync*"""
    return ("instruction", "warp barrier", "Synchronizes the threads of a warp.", refs.BAR)


def _note_fence_proxy_async(op: str, cls: str | None, f) -> tuple | None:
    """fence.proxy.async*"""
    return ("instruction", "async proxy fence",
            "Makes ordinary (generic proxy) shared-memory writes visible to async-proxy readers such as wgmma "
            "and TMA.", refs.FENCE)


def _note_memory_access(op: str, cls: str | None, f) -> tuple | None:
    """global load / global store / shared load / shared store"""
    space, access, n, bits = f["space"], f["access"], f["vector"], f["bits"]
    width = f"v{n} x {bits}-bit" if n else f"scalar {bits}-bit"
    return ("instruction", f"{space} {access} {f'v{n}' if n else 'scalar'}",
            f"{'Load from' if access == 'load' else 'Store to'} {space} memory, {width} = {f['bytes']} bytes per "
            f"thread" + (" (vectorized)." if n else "."), refs.LD if access == "load" else refs.ST)


# The note writers by instruction class, then by op prefix for instructions tables do not count
_CLASS_NOTES = {
    "async commit": _note_async_commit,
    "async wait": _note_async_wait,
    "async copy": _note_async_copy,
    "ldmatrix": _note_ldmatrix,
    "stmatrix": _note_stmatrix,
    "mma": _note_mma,
    "wgmma sync": _note_wgmma_sync,
    "wgmma": _note_wgmma,
    "tma copy": _note_tma_copy,
    "tcgen05 mma": _note_tcgen05_mma,
    "tmem load": _note_tmem_access,
    "tmem store": _note_tmem_access,
    "tmem alloc": _note_tmem_alloc,
    "tcgen05 sync": _note_tcgen05_sync,
    "mbarrier": _note_mbarrier,
    "barrier": _note_barrier,
    "global load": _note_memory_access,
    "global store": _note_memory_access,
    "shared load": _note_memory_access,
    "shared store": _note_memory_access,
}
_OP_NOTES = (
    ("bar.warp.sync", _note_bar_warp_sync),
    ("fence.proxy.async", _note_fence_proxy_async),
)


def _note(ins: Instr):
    """(kind, label, explanation, reference) for one classified instruction, or None."""
    op, cls, f = ins.op, ins.cls, ins.facts
    write = _CLASS_NOTES.get(cls) or next((w for prefix, w in _OP_NOTES if op.startswith(prefix)), None)
    return write(op, cls, f) if write is not None else None


# --------------------------------------------------------------------------
# Stage-file recognition, and what a lone .ptx records
# --------------------------------------------------------------------------

# .version 8.4      .target sm_90a      .visible .entry matmul_kernel(
_SIGNS = re.compile(r"^\s*\.(version|target|entry|visible)\b", re.M)
# .visible .entry matmul_kernel(
_KERNEL_NAME = re.compile(r"\.entry\s+([\w$]+)")
# .target sm_90a         .target sm_80, debug
TARGET = re.compile(r"^\s*\.target\s+sm_(\d+)([a-z]?)", re.M)
# .reqntid 128          .reqntid 128, 1, 1      (Triton asks for exactly num_warps x 32 threads)
REQNTID = re.compile(r"^\s*\.reqntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", re.M)
# .maxnreg 128
MAXNREG = re.compile(r"^\s*\.maxnreg\s+(\d+)", re.M)
# .version 8.7
VERSION = re.compile(r"^\s*\.version\s+(\d+\.\d+)", re.M)
# $L__BB0_2:
_LOOP_LABEL = re.compile(r"^(\$L__BB\d+_\d+):")
# 	@%p5 bra 	$L__BB0_2;    /   bra.uni 	$L__BB0_1;
_LOOP_BRANCH = re.compile(r"^\s*(?:@!?%p\d+\s+)?bra(?:\.uni)?\s+(\$L__BB\d+_\d+)\s*;")
# cp.async.wait_group 0;   wgmma.wait_group.sync.aligned 0;   cp.async.wait_group 0x2; (Triton 3.2 writes hex)
_WAIT_N = re.compile(r"\bwait_group(?:\.\w+)*\s+(0x[0-9a-fA-F]+|\d+)\b")

# A PTX debug section's bytes, which path hygiene (pipeline/paths.py) rewrites:
# .b8 47                                  // DW_AT_comp_dir
DEBUG_B8 = re.compile(r"^\.b8 (\d+)(\s*//.*)?$")
# .b32 50                                 // Length of Unit
DEBUG_UNIT_LENGTH = re.compile(r"^\.b32 (\d+)(\s*// Length of Unit.*)$")


def memory_wait(ins: Instr, line: str) -> bool | None:
    """None: not a wait for global memory; else whether it waits for zero outstanding (a drain).
    cp.async and wgmma group waits, mbarrier waits; `wait_group 0` and `wait_all` drain."""
    if ins.cls in ("async wait", "wgmma sync") or (ins.cls == "mbarrier" and "wait" in ins.op):
        m = _WAIT_N.search(line)
        if m:
            return int(m.group(1), 0) == 0
        return "wait_all" in line
    return None


def instruction_text(line: str) -> str:
    """The instruction without its `;`."""
    return line.strip().rstrip(";").rstrip()


DIALECTS = (
    Dialect(key="ptx", title="PTX", ext="ptx", lexer="ptx", fence="ptx", order=40, backends=("cuda",),
            parse=parse, normalize=normalize, classify=classify, annotate=annotate, noise=noise,
            kind="assembly", columns=True, signs=_SIGNS, kernel_name=_KERNEL_NAME, def_location=asm_def_location,
            loop_label=_LOOP_LABEL, loop_branch=_LOOP_BRANCH, memory_wait=memory_wait,
            instruction_text=instruction_text,
            classes=("async copy", "async commit", "async wait", "tma copy", "ldmatrix", "stmatrix", "mma", "wgmma",
                     "wgmma sync", "barrier", "mbarrier", "global load", "global store", "shared load",
                     "shared store", "tcgen05 mma", "tmem load", "tmem store", "tmem alloc", "tcgen05 sync")),
)
