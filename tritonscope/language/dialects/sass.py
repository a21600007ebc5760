"""SASS from `nvdisasm -c -g`: parser (`//## File` markers), noise, diff normalizer, opcode vocabulary, notes.

Opcode meanings follow NVIDIA's CUDA binary utilities instruction-set
reference; width suffixes are bits.  The classes are the PTX ones
(dialects.CLASSES), so "async copy" counts cp.async in PTX and LDGSTS here.
"""

from __future__ import annotations

import re
from typing import Callable, NamedTuple

from tritonscope.language import refs
from tritonscope.language.dialects import Dialect, Instr, Renamer
from tritonscope.core.model import Line, Note, ParsedStage, SourceLoc

# --------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------

# //## File "./matmul.py", line 17  [inlined at "./matmul.py", line 9]
_MARKER = re.compile(r'^\s*//##\s*File\s+"([^"]*)",\s*line\s+(\d+)(?:.*inlined at\s+"([^"]*)",\s*line\s+(\d+))?')
# /*0290*/ ...
_ADDRESS = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/")


def parse(text: str, *, file: str = "", first_line: int = 1) -> ParsedStage:
    """Lines with the marker in effect.

    nvdisasm -g writes a marker before each run of instructions from one line:

        	//## File "./matmul.py", line 17
        	//## File "/x/triton/language/standard.py", line 41 inlined at "./matmul.py", line 9
                /*0290*/                   LDGSTS.E [R24], [R4.64], P1 ;

    The marker applies to the instructions that follow it, and is dropped from
    the displayed text.
    """
    lines = []
    current: SourceLoc | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        if "//##" in raw:
            m = _MARKER.match(raw)
            if m:
                if m.group(3):
                    current = SourceLoc(m.group(3), int(m.group(4)))
                else:
                    current = SourceLoc(m.group(1), int(m.group(2)))
                continue
        if _ADDRESS.match(raw):
            lines.append(Line(number, raw, raw, current))
        else:
            if raw.strip().startswith((".section", "//----")):
                current = None
            lines.append(Line(number, raw, raw, None))
    return ParsedStage("sass", tuple(lines))


# --------------------------------------------------------------------------
# Noise
# --------------------------------------------------------------------------


def noise(raw: str) -> str | None:
    """The ELF header (.headerflags, .elftype), section directives, `//##` markers and comment lines."""
    s = raw.strip()
    if not s:
        return None
    if s.startswith((".headerflags", ".elftype")):
        return "header"
    if s.startswith("//##"):
        return "debug"
    if s.startswith("//"):
        return "comment"
    if s.startswith(".") and not s.endswith(":"):  # .section, .align, .global ... (not a .L_x_3: label)
        return "directive"
    return None


# --------------------------------------------------------------------------
# Diff normalizer
# --------------------------------------------------------------------------

# SASS labels: .L_x_3
_LABEL = re.compile(r"\.L_x_\d+")
# /*0010*/ addresses
_ADDR = re.compile(r"/\*[0-9a-f]{4,}\*/\s*")
# /* 0x000fe200078e00ff */ encodings
_ENCODING = re.compile(r"\s*/\* 0x[0-9a-f]+ \*/")


def normalize(text: str) -> list[tuple[int, str]]:
    """Markers, addresses and encodings dropped; labels renumbered; indentation removed."""
    ren = Renamer(lambda t: ".L_x", lambda fam, n: f".L_x_{n}")
    out: list[tuple[int, str]] = []
    for i, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if s.startswith("//##") or s.startswith("/* 0x"):
            continue        # //## File "/path/k.py", line 17
        line = _ADDR.sub("", raw)
        line = _ENCODING.sub("", line)
        line = _LABEL.sub(ren, line).rstrip()
        if line.strip():
            out.append((i, line.strip()))
    return out


# --------------------------------------------------------------------------
# The vocabulary
# --------------------------------------------------------------------------

#         /*0290*/                   LDGSTS.E.BYPASS.128 [R5+0x18000], desc[UR14][R10.64], P3 ;
_INSTR = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P[0-9T]\s+)?([A-Z][A-Z0-9_]*)((?:\.[A-Z0-9_x]+)*)")
# width modifiers -> bits (no modifier: 32)
WIDTH_BITS = {"64": 64, "128": 128, "U8": 8, "S8": 8, "U16": 16, "S16": 16}
# DEPBAR.LE SB0, 0x1 ;
_DEPBAR = re.compile(r"SB\d+,\s*(0x[0-9a-f]+|\d+)")
_MEMORY = {"LDG": ("global", "load"), "STG": ("global", "store"), "LDS": ("shared", "load"),
           "STS": ("shared", "store")}


# What explain reads from SASS lines (nvdisasm's own, and `nvdisasm -lrm count`'s)
# /*0010*/  S2R R40, SR_TID.X ;   // |    2  |        |        |         |   (group 2: live registers)
LIVE_REGISTERS = re.compile(r"/\*([0-9a-fA-F]{4,})\*/.*?//\s*\|\s*(\d*)\s*\|")
# /*0010*/   (group 1: the address)
ADDRESS = re.compile(r"/\*([0-9a-fA-F]{4,})\*/")
# One SASS instruction per line (nvdisasm -c), optionally predicated; a local-memory access is a spill:
#         /*0080*/                   STL [R1+0xefc], R13 ;
#         /*0a50*/              @!P0 LDL.LU R7, [R1+0x8] ;
SPILL_ACCESS = re.compile(r"\s*/\*[0-9a-fA-F]+\*/\s+(?:@!?U?P[0-9T]+\s+)?(STL|LDL)\b")


def classify(text: str) -> Instr | None:
    """The instruction on a SASS line (op = opcode with modifiers), or None for anything else.

    facts of a counted instruction: opcode, mods, `variant` (how tables name
    it: "LDGSTS", "LDSM.16.M88.4", "HMMA.16816.F32") and, for memory
    operations, their width in bits.
    """
    m = _INSTR.match(text)
    if not m:
        return None
    opcode = m.group(1)
    known = OPCODES.get(opcode)
    handler = known.read if known is not None else (_tma if opcode.startswith("UTMA") else None)
    op = opcode + m.group(2)
    if handler is None:
        return Instr(op)  # most lines (IMAD, MOV, ...): nothing to count, nothing to say
    mods = [x for x in m.group(2).split(".") if x]
    return handler(op, opcode, mods, text)


def _facts(opcode: str, mods: list[str], **more) -> dict:
    return {"opcode": opcode, "mods": mods, "variant": opcode, **more}


def _bits(mods: list[str]) -> int:
    return next((WIDTH_BITS[x] for x in mods if x in WIDTH_BITS), 32)


def _ldgsts(op, opcode, mods, text):
    bits = _bits(mods)
    return Instr(op, "async copy", f"async copy LDGSTS {bits}-bit",
                 _facts(opcode, mods, bits=bits, bypass="BYPASS" in mods))


def _depbar(op, opcode, mods, text):
    n = _DEPBAR.search(text)
    return Instr(op, "async wait", "async wait DEPBAR", _facts(opcode, mods, pending=int(n.group(1), 0) if n else None))


def _matrix(op, opcode, mods, text):
    cls = "ldmatrix" if opcode == "LDSM" else "stmatrix"
    count = int(mods[-1]) if mods and mods[-1].isdigit() else (mods[-1] if mods else "")
    return Instr(op, cls, f"{cls} {op}", _facts(opcode, mods, variant=op, count=count,
                                                 trans=any(x.startswith("MT") for x in mods)))


def _hmma(op, opcode, mods, text):
    variant = "HMMA." + ".".join(mods)
    # HMMA.16816.F32: m16 n8 k16
    shape = re.fullmatch(r"(\d{2})(\d)(\d+)", mods[0]) if mods else None
    return Instr(op, "mma", f"mma {variant}", _facts(
        opcode, mods, variant=variant, shape=f"m{shape.group(1)}n{shape.group(2)}k{shape.group(3)}" if shape else None))


def _mma(op, opcode, mods, text):
    variant = ".".join([opcode, *mods[:1]])
    return Instr(op, "mma", f"mma {variant}", _facts(opcode, mods, variant=variant))


def _hgmma(op, opcode, mods, text):
    variant = ".".join([opcode, *mods[:1]])
    return Instr(op, "wgmma", f"wgmma {variant}", _facts(opcode, mods, variant=variant))


def _tma(op, opcode, mods, text):
    return Instr(op, "tma copy", f"tma {opcode}", _facts(opcode, mods))


def _fixed(cls: str, name: str):
    return lambda op, opcode, mods, text: Instr(op, cls, name, _facts(opcode, mods))


def _memory(op, opcode, mods, text):
    space, access = _MEMORY[opcode]
    bits = _bits(mods)
    return Instr(op, f"{space} {access}", f"{space} {access} {opcode} {bits}-bit", _facts(opcode, mods, bits=bits))


def _utcmma(op, opcode, mods, text):
    return Instr(op, "tcgen05 mma", f"tcgen05 mma {opcode}", _facts(opcode, mods))


class Opcode(NamedTuple):
    """What one SASS opcode is, in the one vocabulary: how `classify` reads it (its class, the words tables show a
    reader: dialects.CLASSES), and the cost model's class of it (cost/sass.py: the terms of its time)."""

    read: Callable | None    # (op, opcode, mods, text) -> Instr with its class; None: no class (tables count it not)
    cost: str | None         # the cost model's class: every tensor-core op "mma", each memory path its own
                             # ("ldg", "ldgsts", "tma", "lds", ...), arithmetic "fp", special functions "sfu",
                             # shuffles, atomics, barriers "sync"; None: no work (padding, the program's end)


def _only_cost(cost: str | None) -> Opcode:
    return Opcode(None, cost)


# Opcode -> Opcode(read, cost); an opcode not here is read as itself (no class) and costs "other", one starting
# UTMA is a TMA copy (UTMAPF, UTMACCTL: "other" to the cost model).  Blackwell (sm_100): tcgen05.mma is
# UTC{H,Q,O,I}MMA by input kind (f16/bf16, f8f6f4, mxf4, i8); tcgen05.ld / .st are LDTM / STTM, tcgen05.cp UTCCP,
# tcgen05.commit UTCBAR, and the TMEM allocator's bookkeeping UTCATOMSWS.
OPCODES: dict[str, Opcode] = {
    # tensor cores
    "HMMA": Opcode(_hmma, "mma"), "IMMA": Opcode(_mma, "mma"), "DMMA": Opcode(_mma, "mma"),
    "HGMMA": Opcode(_hgmma, "mma"), "QGMMA": Opcode(_hgmma, "mma"), "IGMMA": Opcode(_hgmma, "mma"),
    "UTCHMMA": Opcode(_utcmma, "mma"), "UTCQMMA": Opcode(_utcmma, "mma"), "UTCMMA": Opcode(_utcmma, "mma"),
    # (the cost model has not counted these two as tensor-core work: kept as it was, not measured)
    "UTCOMMA": Opcode(_utcmma, "other"), "UTCIMMA": Opcode(_utcmma, "other"),
    "LDTM": Opcode(_fixed("tmem load", "tmem load LDTM"), "other"),
    "STTM": Opcode(_fixed("tmem store", "tmem store STTM"), "other"),
    "UTCCP": Opcode(_fixed("tmem store", "tmem copy UTCCP"), "other"),
    "UTCBAR": Opcode(_fixed("tcgen05 sync", "tcgen05 commit UTCBAR"), "other"),
    "UTCATOMSWS": Opcode(_fixed("tmem alloc", "tmem alloc UTCATOMSWS"), "other"),
    # memory
    "LDG": Opcode(_memory, "ldg"), "STG": Opcode(_memory, "stg"), "LDS": Opcode(_memory, "lds"),
    "STS": Opcode(_memory, "sts"), "LDSM": Opcode(_matrix, "lds"), "STSM": Opcode(_matrix, "sts"),
    "LDGSTS": Opcode(_ldgsts, "ldgsts"), "UTMALDG": Opcode(_tma, "tma"), "UTMASTG": Opcode(_tma, "tma"),
    "UBLKCP": Opcode(_tma, "tma"), "LDL": _only_cost("ldl"), "STL": _only_cost("stl"),
    # waits and barriers
    "LDGDEPBAR": Opcode(_fixed("async commit", "async commit LDGDEPBAR"), "sync"), "DEPBAR": Opcode(_depbar, "sync"),
    "SYNCS": Opcode(_fixed("mbarrier", "mbarrier SYNCS"), "sync"),
    "BAR": Opcode(_fixed("barrier", "barrier BAR"), "sync"),
    "WARPSYNC": _only_cost("sync"), "WARPGROUP": _only_cost("sync"),
    # arithmetic, special functions, shuffles, atomics
    **{op: _only_cost("fp") for op in ("FFMA", "FADD", "FMUL", "FMNMX", "HFMA2", "HADD2", "HMUL2", "FSETP", "FSEL")},
    "MUFU": _only_cost("sfu"), "SHFL": _only_cost("shfl"),
    **{op: _only_cost("atom") for op in ("RED", "ATOM", "ATOMG", "REDG")},
    # no work: padding and the end of the program
    **{op: _only_cost(None) for op in ("NOP", "EXIT", "BRA", "RET", "BPT")},
}
# Opcodes that are no work (the loop reader's `not_work`: a loop of only these is padding)
NOT_WORK = frozenset(op for op, o in OPCODES.items() if o.cost is None)


def cost_class(opcode: str) -> str | None:
    """The cost model's class of an opcode ("other" for one the vocabulary has no class for; None: no work)."""
    o = OPCODES.get(opcode)
    return o.cost if o is not None else "other"


# --------------------------------------------------------------------------
# Notes
# --------------------------------------------------------------------------


def annotate(stage: ParsedStage) -> list[Note]:
    """Notes for the instructions the walkthrough names (what each is in PTX terms)."""
    notes = []
    for line in stage.lines:
        ins = classify(line.text)
        if ins is None:
            continue
        got = _note(ins, line.text)
        if got:
            facts = {"op": ins.op, "cls": ins.cls, **ins.facts}
            notes.append(Note(stage.key, line.number, "instruction", got[0], got[1], refs.SASS, facts))
    return notes


def _note(ins: Instr, text: str):
    """(label, explanation) for one instruction, or None."""
    full, f = ins.op, ins.facts
    if ins.cls is None:
        if full.startswith("WARPGROUP"):  # not counted: it only brackets the HGMMAs
            return ("WARPGROUP", f"{full}: warpgroup synchronization around wgmma (PTX wgmma.fence / wait_group).")
        return None
    op, mods = f["opcode"], f["mods"]
    if op == "LDGSTS":
        b = f["bits"] // 8
        return (f"LDGSTS {b}B", f"{full}: global → shared asynchronous copy of {b} bytes per thread (PTX cp.async"
                f"{'.cg' if f['bypass'] else ''}){'; BYPASS skips L1' if f['bypass'] else ''}.")
    if op == "LDGDEPBAR":
        return ("LDGDEPBAR", "Closes a group of LDGSTS copies (PTX cp.async.commit_group).")
    if op == "DEPBAR":
        k = f["pending"]
        return ("DEPBAR", "Waits on a dependency barrier (PTX cp.async.wait_group"
                + (f" {k}: at most {k} copy groups still pending)." if k is not None else ")."))
    if op == "LDSM":
        x, trans = f["count"], f["trans"]
        return (f"LDSM x{x}{' .trans' if trans else ''}",
                f"{full}: PTX ldmatrix .x{x}{'.trans' if trans else ''}: {x} 8x8 16-bit matrices from shared memory.")
    if op == "STSM":
        return ("STSM", f"{full}: PTX stmatrix: 8x8 16-bit matrices from registers to shared memory.")
    if op == "HMMA":
        desc = f["shape"] or (mods[0] if mods else "")
        acc = mods[1] if len(mods) > 1 else ""
        return (f"HMMA {desc}", f"{full}: warp-level tensor-core MMA {desc} (PTX mma.sync), {acc} accumulator.")
    if op == "HGMMA":
        return ("HGMMA", f"{full}: warpgroup tensor-core MMA (PTX wgmma.mma_async).")
    if op.startswith("UTMA"):
        what = {"UTMALDG": "TMA load global → shared", "UTMASTG": "TMA store shared → global",
                "UTMAPF": "TMA prefetch", "UTMACCTL": "TMA descriptor cache control"}.get(op)
        return (op, f"{full}: {what} (PTX cp.async.bulk.tensor and friends).") if what else None
    if op == "BAR":
        return ("BAR", f"{full}: CTA-wide barrier (PTX bar.sync).")
    if op.startswith("UTC") and op.endswith("MMA"):
        kind = {"UTCHMMA": "f16/bf16", "UTCQMMA": "f8f6f4", "UTCOMMA": "mxf4", "UTCIMMA": "i8"}.get(op, "")
        return (op, f"{full}: Blackwell tensor-core MMA (PTX tcgen05.mma{f' kind {kind}' if kind else ''}): shared-"
                    f"memory descriptors (gdesc) in, accumulator in tensor memory (tmem), shape in the idesc.")
    if op in ("LDTM", "STTM"):
        return (full, f"{full}: PTX tcgen05.{'ld' if op == 'LDTM' else 'st'}: tensor memory "
                      f"{'→ registers' if op == 'LDTM' else '← registers'}.")
    if op == "UTCCP":
        return ("UTCCP", f"{full}: PTX tcgen05.cp: shared memory → tensor memory.")
    if op == "UTCBAR":
        return ("UTCBAR", f"{full}: PTX tcgen05.commit: an mbarrier arrives when the issued tcgen05 ops complete.")
    if op == "UTCATOMSWS":
        return ("UTCATOMSWS", f"{full}: tensor-memory allocator bookkeeping (PTX tcgen05.alloc / dealloc).")
    if op == "SYNCS":
        return ("SYNCS", f"{full}: an mbarrier operation in shared memory (PTX mbarrier.*).")
    if op in _MEMORY:
        space, kind = _MEMORY[op]
        b = f["bits"] // 8
        return (f"{op} {b * 8}-bit", f"{full}: {space} {kind} of {b} bytes per thread"
                + (" (vector)." if b > 4 else "."))
    return None


# --------------------------------------------------------------------------
# The cost model's reading (cost/sass.py: instructions by class, loops, load-use waits)
# --------------------------------------------------------------------------

# One instruction with its address, opcode, modifiers and operands (groups 1-4):
#         /*1a30*/              @!P1 BRA `(.L_x_0) ;
#         /*24d0*/                   HGMMA.64x256x16.F32 R24, gdesc[UR8].tnspB, R24 ;
COST_INSTR = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P[T\d]+\s+)?([A-Z][A-Z0-9_]*)((?:\.[\w]+)*)\s*([^;]*);")
# The label a branch goes to (group 1):
# BRA `(.L_x_0)
BRANCH_TARGET = re.compile(r"`\((\.L_\w+)\)")
# The width modifier of a local load/store or global load (group 1; none: 32 bits):
# LDL.64 R2, [R1+0x10] ;  STL.128 [R1], R4 ;  LDL.LU R3, [R1+0x8]
ACCESS_WIDTH = re.compile(r"\.(U8|S8|U16|S16|64|128)\b")
# width modifier -> bytes one thread moves
WIDTH_BYTES = {k: v // 8 for k, v in WIDTH_BITS.items()}
# A general register an operand names (group 1), and whether it is a `.64` pair (group 2):
#   LDG.E.128 R20, desc[UR12][R16.64]  ->  R20..R23 written;   HADD2.F32 R19, -RZ, R21.H1_H1  ->  R19, R21 named
REGISTER = re.compile(r"\bR(\d+)(\.64\b)?")
# An LDG's last modifier -> the registers it writes (anything else: 1)
LDG_REGISTERS = {"128": 4, "64": 2}

#         Function : matmul_kernel      .text.matmul_kernel:      /*0000*/  LDC R1, c[0x0][0x28] ;
_SIGNS = re.compile(r"Function\s*:|\.text\.|/\*[0-9a-f]{4}\*/", re.M)
#         Function : matmul_kernel
_KERNEL_NAME = re.compile(r"Function\s*:\s*([\w$]+)")


# --------------------------------------------------------------------------
# Loops and waits (what `diff --loop` and the versions report read)
# --------------------------------------------------------------------------

# .L_x_1:   (also the cost model's loop reader's label)
LOOP_LABEL = re.compile(r"^\s*(\.L_x_\d+|\.L_\w+):")
#         /*07b0*/              @!P0 BRA `(.L_x_1) ;       /*0c40*/   BRA.U !UP0, `(.L_x_2) ;
_LOOP_BRANCH = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P[T\d]+\s+)?BRA(?:\.\w+)*\s+(?:[^`;]*,\s*)?`\((\.L_\w+)\)")
#         /*0410*/              @!P0 BRA `(.L_x_0) ;   -> "@!P0 BRA `(.L_x_0)"
_TEXT = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(.*?)\s*;?\s*$")
#         /*0a10*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;   (wgmma.wait_group 0)
_WGMMA_WAIT = re.compile(r"\bWARPGROUP\.DEPBAR\S*\s+gsb\d+,\s*(0x[0-9a-f]+|\d+)")
#         /*3070*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R161+URZ+0x34000], R154 ;   (an mbarrier wait)
_MBARRIER_WAIT = re.compile(r"TRYWAIT|PHASECHK")


def _wait(ins: Instr, line: str) -> tuple[bool, str | None] | None:
    """(whether it drains, what it says) of a wait for memory, None for anything else: WARPGROUP.DEPBAR
    (wgmma.wait_group), DEPBAR on a scoreboard (cp.async.wait_group; no count read: not a drain), an mbarrier
    try-wait (SYNCS ... TRYWAIT)."""
    m = _WGMMA_WAIT.search(line)
    if m:
        n = int(m.group(1), 0)
        return n == 0, f"wgmma pending<={n}"
    if ins.cls == "async wait":
        n = ins.facts.get("pending")
        return (n == 0, f"cp.async pending<={n}") if n is not None else (False, None)
    if ins.cls == "mbarrier" and _MBARRIER_WAIT.search(ins.op):
        return False, "mbarrier wait"
    return None


def memory_wait(ins: Instr, line: str) -> bool | None:
    """None: not a wait for memory; else whether it waits for zero outstanding (a drain)."""
    w = _wait(ins, line)
    return None if w is None else w[0]


def wait_detail(ins: Instr, line: str) -> str | None:
    """What a wait for memory says beside its mark ("wgmma pending<=1", "cp.async pending<=0")."""
    w = _wait(ins, line)
    return None if w is None else w[1]


def instruction_text(line: str) -> str:
    """The instruction without its address, encoding comment or `;`."""
    m = _TEXT.match(line)
    return m.group(1) if m else line.strip()


DIALECTS = (
    Dialect(key="sass", title="SASS", ext="sass", lexer="sass", fence="", order=50, backends=("cuda",),
            parse=parse, normalize=normalize, classify=classify, annotate=annotate, noise=noise,
            kind="assembly", machine_code=True, columns=True, signs=_SIGNS, kernel_name=_KERNEL_NAME,
            loop_label=LOOP_LABEL, loop_branch=_LOOP_BRANCH, not_work=NOT_WORK, memory_wait=memory_wait,
            wait_detail=wait_detail,
            instruction_text=instruction_text,
            classes=("async copy", "async commit", "async wait", "tma copy", "ldmatrix", "stmatrix", "mma", "wgmma",
                     "barrier", "mbarrier", "global load", "global store", "shared load", "shared store",
                     "tcgen05 mma", "tmem load", "tmem store", "tmem alloc", "tcgen05 sync")),
)
