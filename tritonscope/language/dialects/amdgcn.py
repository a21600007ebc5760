"""AMDGCN assembly (Triton's HIP backend): parser (`.loc`), noise, diff normalizer, vocabulary and notes.

What the AMD GPU runs, as LLVM's AMDGPU backend prints it before assembling
the hsaco.  It plays the part of both PTX and SASS on NVIDIA: it is the
machine ISA, with DWARF `.loc` lines mapping instructions to Python lines.

The classifier names instructions with the words of dialects.CLASSES, so the
summary, diff, sweep and walkthrough count AMD kernels with the same words
as NVIDIA ones:

    v_mfma_* / v_wmma_* (matrix cores)            mma            "mfma 32x32x8 f16"
    buffer_/global_load_*, *_store_*              global load/store, with the width in bits
    buffer_load_* ... lds, global_load_lds_*      async copy     (global -> LDS without registers)
    ds_read_* / ds_load_* (incl. transposing)     shared load    (LDS)
    ds_write_* / ds_store_*                       shared store
    s_waitcnt, s_wait_*cnt                        async wait     (waits for outstanding memory ops)
    s_barrier, s_barrier_signal/_wait             barrier
    scratch_store_* / scratch_load_*              scratch store / scratch load (register spills)

Mnemonics and operand forms follow AMD's ISA references (CDNA3, CDNA4, RDNA3,
RDNA4; the notes link the one of the kernel's target, read from
`.amdgcn_target`) and LLVM's AMDGPU assembler syntax pages.
"""

from __future__ import annotations

import re

from tritonscope.language.dialects import asm_def_location, asm_files, Dialect, Instr, Renamer
from tritonscope.core.model import Line, Note, ParsedStage, SourceLoc

# --------------------------------------------------------------------------
# References: AMD's ISA documents, by GPU family
# --------------------------------------------------------------------------

_AMD_DOCS = "https://www.amd.com/content/dam/amd/en/documents/"
ISA_DOCS = {
    "CDNA2": _AMD_DOCS + "instinct-tech-docs/instruction-set-architectures/"
                         "instinct-mi200-cdna2-instruction-set-architecture.pdf",
    "CDNA3": _AMD_DOCS + "instinct-tech-docs/instruction-set-architectures/"
                         "amd-instinct-mi300-cdna3-instruction-set-architecture.pdf",
    "CDNA4": _AMD_DOCS + "instinct-tech-docs/instruction-set-architectures/"
                         "amd-instinct-cdna4-instruction-set-architecture.pdf",
    "RDNA3": _AMD_DOCS + "radeon-tech-docs/instruction-set-architectures/"
                         "rdna3-shader-instruction-set-architecture-feb-2023_0.pdf",
    "RDNA4": _AMD_DOCS + "radeon-tech-docs/instruction-set-architectures/rdna4-instruction-set-architecture.pdf",
}
# Every ISA document AMD publishes, for families without an entry above.
ISA_INDEX = "https://gpuopen.com/amd-isa-documentation/"


def family_of(gfx: str | None) -> str | None:
    """'gfx942' -> 'CDNA3' (the ISA document that describes it); None when unknown."""
    if not gfx:
        return None
    if gfx == "gfx90a":
        return "CDNA2"
    if gfx.startswith("gfx94"):
        return "CDNA3"
    if gfx.startswith("gfx95"):
        return "CDNA4"
    if gfx.startswith("gfx11"):
        return "RDNA3"
    if gfx.startswith("gfx120"):
        return "RDNA4"
    return None


def wave_size(text: str) -> int:
    """Lanes per wavefront: the kernel descriptor says `.amdhsa_wavefront_size32 1` for wave32 (RDNA, gfx12)."""
    return 32 if re.search(r"^\s*\.amdhsa_wavefront_size32\s+1\b", text, re.M) else 64


# --------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------

# 	.loc	1 17 13 is_stmt 0                 ; matmul.py:17:13
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)")
# 	.amdgcn_target "amdgpu9.42-amd-amdhsa-unknown-gfx942"     (3.6: "amdgcn-amd-amdhsa--gfx942")
_TARGET = re.compile(r'^\s*\.amdgcn_target\s+"[^"]*?(gfx\w+?)(?:[:"]|$)')
# matmul_kernel:                          ; @matmul_kernel
_FUNCTION = re.compile(r"^[A-Za-z_][\w$]*:")


def parse(text: str, *, file: str = "", first_line: int = 1) -> ParsedStage:
    """Lines with the `.loc` in effect.

    A `.loc` applies to the instructions after it until the next one; line 0
    means "no source line" (compiler-made code).  The `.loc` lines are not
    shown; a function's own label resets the location.
    """
    raw_lines = text.splitlines()
    files = asm_files(text)
    lines = []
    current: SourceLoc | None = None
    for number, raw in enumerate(raw_lines, 1):
        if ".loc" in raw:
            m = _LOC.match(raw)
            if m:
                line = int(m.group(2))
                current = SourceLoc(files.get(m.group(1), file), line, int(m.group(3))) if line else None
                continue
        if _FUNCTION.match(raw):
            current = None
        lines.append(Line(number, raw, raw, current if _is_code(raw) else None))
    return ParsedStage("amdgcn", tuple(lines))


def _is_code(raw: str) -> bool:
    s = raw.strip()
    return bool(s) and raw[0] in " \t" and not s.startswith((".", ";", "-")) and not s.endswith(":") \
        and ":" not in s.split(None, 1)[0]


def target_of(text: str) -> str | None:
    """The gfx name in `.amdgcn_target` (the stage says what it was compiled for)."""
    for raw in text.splitlines()[:40]:
        m = _TARGET.match(raw)
        if m:
            return m.group(1)
    return None


# --------------------------------------------------------------------------
# Noise
# --------------------------------------------------------------------------

# 	.byte	17                              ; DW_TAG_compile_unit      (DWARF data)
_DATA = re.compile(r"^\s*\.(?:byte|short|long|quad|ascii|asciz|uleb128|sleb128)\b")
# .Ltmp2:   .Lfunc_begin0:   .Lfunc_end0:   .Linfo_string0:   .Ldebug_info_start0:
_DEBUG_LABEL = re.compile(r"^\.L(?:tmp|func_begin|func_end|info_string|debug_|cu_begin|line_table|section_)\w*:")
#     .sgpr_count:     25        - .address_space:  global        (the .amdgpu_metadata YAML block)
_METADATA = re.compile(r"^\s+(?:- )?\.[a-z_]+:|^amdhsa\.\w+:|^(?:---|\.\.\.)$")


def noise(raw: str) -> str | None:
    """DWARF (.loc/.file/.cfi, debug sections and their data), the target header, directives, comments."""
    s = raw.strip()
    if not s:
        return None
    if s.startswith(";"):
        return "comment"
    if s.startswith((".loc", ".file", ".cfi_")) or (s.startswith(".section") and ".debug" in s):
        return "debug"
    if _DATA.match(raw) or _DEBUG_LABEL.match(s):
        return "debug"
    if s.startswith((".amdgcn_target", ".amdhsa_code_object_version")):
        return "header"
    if s.startswith(".") and not s.endswith(":") or _METADATA.match(raw):
        return "directive"   # .amdhsa_* kernel descriptor fields, .set, .p2align, the metadata YAML
    return None


# --------------------------------------------------------------------------
# Diff normalizer
# --------------------------------------------------------------------------

# .LBB0_3   (basic-block labels, numbered per function)
_LABEL = re.compile(r"\.LBB\d+_\d+")
# 	s_waitcnt vmcnt(0)                      ; comment after an instruction
_TRAILING_COMMENT = re.compile(r"\s*;.*$")


def normalize(text: str) -> list[tuple[int, str]]:
    """Debug info, comments (the kernel-info block too) and header dropped; labels renumbered.

    Register numbers are kept, as in SASS: allocation is part of what a
    change to the kernel changes.
    """
    ren = Renamer(lambda t: ".LBB", lambda fam, n: f".LBB_{n}")
    out: list[tuple[int, str]] = []
    for i, raw in enumerate(text.splitlines(), 1):
        if noise(raw) in ("debug", "comment", "header"):
            continue
        line = _TRAILING_COMMENT.sub("", raw)
        line = _LABEL.sub(ren, line).rstrip()
        if line.strip():
            out.append((i, line.strip()))
    return out


# --------------------------------------------------------------------------
# The vocabulary
# --------------------------------------------------------------------------

# 	v_mfma_f32_32x32x8_f16 v[0:15], v[40:41], v[0:1], v[0:15]       -> "v_mfma_f32_32x32x8_f16", operands
_OP = re.compile(r"^\s+([a-z][a-z0-9_]*)\b\s*(.*)$")
# v_mfma_f32_32x32x8_f16  v_mfma_f32_32x32x8f16 (gfx90a)  v_wmma_f32_16x16x16_f16  v_mfma_f32_32x32x1_2b_f32
# v_mfma_scale_f32_32x32x64_f8f6f4  v_smfmac_f32_16x16x32_f16
_MMA = re.compile(r"^v_(mfma|smfmac|wmma|swmmac)_(?:scale_)?([a-z]+\d+)_(\d+)x(\d+)x(\d+)(?:_(\d+)b)?_?([a-z0-9_]*)$")
# v[0:15]  a[0:15]  v12  a3
_REG = re.compile(r"^([va])(?:\[(\d+):(\d+)\]|(\d+))$")
# buffer_load_dwordx2 / global_store_b128 / flat_load_dword / global_load_lds_dwordx4 / buffer_load_dword ... lds
_VMEM = re.compile(r"^(buffer|global|flat)_(load|store)_(.+)$")
# ds_read_b64, ds_read2_b32, ds_read_b64_tr_b16, ds_load_u16_d16_hi, ds_load_tr16_b128, ds_write_b64, ds_store_b128
_DS = re.compile(r"^ds_(read|load|write|store)(2st64|2)?_(.+)$")
# s_waitcnt vmcnt(1) lgkmcnt(0)
_COUNTER = re.compile(r"(\w+cnt)\((\d+)\)")
# s_wait_loadcnt_dscnt 0x0   s_wait_dscnt 0x1
_WAIT12 = re.compile(r"^s_wait_((?:\w+?cnt_?)+)$")

# The width of a memory access from its suffix: dwordx4 -> 128, b64 -> 64, u16 -> 16, ubyte -> 8.
_WIDTHS = (
    (re.compile(r"^dwordx(\d)"), lambda m: 32 * int(m.group(1))),
    (re.compile(r"^dword"), lambda m: 32),
    (re.compile(r"^(?:tr\d+_)?b(\d+)"), lambda m: int(m.group(1))),
    (re.compile(r"^(?:[ui](\d+)|(?:u|s)?(byte|short))"),
     lambda m: int(m.group(1)) if m.group(1) else (8 if m.group(2) == "byte" else 16)),
    (re.compile(r"^(?:d16|short)"), lambda m: 16),
)
# ds_read_b64_tr_b16 (CDNA4) / ds_load_tr16_b128 (gfx1250): element width of the transposing read
_TRANS = re.compile(r"(?:^|_)tr(?:_b)?(\d+)")


def _width(suffix: str) -> int | None:
    for rx, bits in _WIDTHS:
        m = rx.match(suffix)
        if m:
            return bits(m)
    return None


def classify(text: str) -> Instr | None:
    """The instruction on an AMDGCN line, or None for directives, labels and comments."""
    if not text or text[0] not in " \t":
        return None
    m = _OP.match(text)
    if not m:
        return None
    op, rest = m.group(1), m.group(2)
    fn = _BY_HEAD.get(op.split("_", 1)[0])
    return (fn(op, rest) if fn else None) or Instr(op)


def _mma(op: str, rest: str) -> Instr | None:
    m = _MMA.match(op)
    if not m:
        return None
    family, acc, mm, nn, kk, blocks, inputs = m.groups()
    shape = f"{mm}x{nn}x{kk}"
    ins = inputs.replace("_", ".") if inputs else acc
    facts = {"family": family, "shape": shape, "m": int(mm), "n": int(nn), "k": int(kk), "acc": acc,
             "inputs": ins, "qualifiers": [acc, ins], "blocks": int(blocks) if blocks else 1}
    operands = [o.strip() for o in rest.split(",")]
    dst = _REG.match(operands[0]) if operands and operands[0] else None
    if dst:
        facts["acc_registers"] = (int(dst.group(3)) - int(dst.group(2)) + 1) if dst.group(2) else 1
        facts["acc_in"] = "AGPRs" if dst.group(1) == "a" else "VGPRs"
    return Instr(op, "mma", f"{family} {shape} {ins}", facts)


def _vmem(op: str, rest: str) -> Instr | None:
    m = _VMEM.match(op)
    if not m:
        return None
    via, access, suffix = m.groups()
    direct = access == "load" and (suffix.startswith(("lds_", "async_to_lds_")) or re.search(r"(?:^|\s)lds\b", rest))
    suffix = re.sub(r"^(?:lds|async_to_lds)_", "", suffix)
    bits = _width(suffix)
    if bits is None:
        return None
    facts = {"space": "global", "access": access, "via": via, "bits": bits, "bytes": bits // 8, "vector": None}
    if direct:
        return Instr(op, "async copy", f"async copy {op} ({bits}-bit)", {**facts, "to": "lds"})
    return Instr(op, f"global {access}", f"global {access} {op} ({bits}-bit)", facts)


def _ds(op: str, rest: str) -> Instr | None:
    m = _DS.match(op)
    if not m:
        return None
    verb, pair, suffix = m.groups()
    bits = _width(suffix)
    if bits is None:
        return None
    count = 2 if pair else 1
    access = "load" if verb in ("read", "load") else "store"
    trans = _TRANS.search(suffix)
    facts = {"space": "shared", "access": access, "bits": bits * count, "bytes": bits * count // 8,
             "count": count, "trans": bool(trans), "elem_bits": int(trans.group(1)) if trans else None}
    return Instr(op, f"shared {access}", f"shared {access} {op} ({bits * count}-bit)", facts)


def _scalar(op: str, rest: str) -> Instr | None:
    if op == "s_waitcnt" or op.startswith("s_waitcnt_"):
        counters = {k: int(v) for k, v in _COUNTER.findall(rest)}
        if op.startswith("s_waitcnt_") and not counters:   # s_waitcnt_vscnt null, 0x0
            n = re.search(r"(0x[0-9a-f]+|\d+)\s*$", rest)
            counters = {op.split("_", 2)[2]: int(n.group(1), 0)} if n else {}
        return Instr(op, "async wait", "async wait s_waitcnt", {"counters": counters})
    m = _WAIT12.match(op)
    if m:   # gfx12: one counter per instruction (s_wait_loadcnt 0x0), or two (s_wait_loadcnt_dscnt)
        n = re.search(r"(0x[0-9a-f]+|\d+)\s*$", rest)
        value = int(n.group(1), 0) if n else None
        names = [c for c in m.group(1).split("_") if c]
        if len(names) == 2 and value is not None:  # the second counter is in the low 6 bits
            counters = {names[0]: value >> 8, names[1]: value & 0x3F}
        else:
            counters = {name: value for name in names}
        return Instr(op, "async wait", f"async wait {op}", {"counters": counters})
    if op in ("s_barrier", "s_barrier_signal", "s_barrier_wait"):
        return Instr(op, "barrier", f"barrier {op}", {})
    return None


def _scratch(op: str, rest: str) -> Instr | None:
    m = re.match(r"^scratch_(load|store)_(.+)$", op)
    bits = _width(m.group(2)) if m else None
    if bits is None:
        return None
    access = m.group(1)
    return Instr(op, f"scratch {access}", f"scratch {access} {op} ({bits}-bit)",
                 {"space": "scratch", "access": access, "bits": bits, "bytes": bits // 8})


_BY_HEAD = {"v": _mma, "buffer": _vmem, "global": _vmem, "flat": _vmem, "ds": _ds, "s": _scalar,
            "scratch": _scratch}

# The classes this classifier names: CLASSES' words, plus register spills (which CLASSES has no word for).
_CLASSES = ("async copy", "async wait", "mma", "barrier", "global load", "global store", "shared load",
            "shared store", "scratch store", "scratch load")



# --------------------------------------------------------------------------
# The cost model's classes (cost/amdgcn.py reads them; the SASS vocabulary's `cost` field, for AMDGCN)
# --------------------------------------------------------------------------

# Transcendental VALU ops (quarter rate on CDNA3: the CDNA3 ISA's VALU chapter): the SASS MUFU's "sfu"
_SFU = re.compile(r"^v_(?:exp|log|rcp|rsq|sqrt|sin|cos)(?:_legacy)?_(?:f16|f32|f64)")
# Cross-lane VALU/LDS ops: DPP and permlane moves, ds_bpermute/ds_permute/ds_swizzle (SASS SHFL's "shfl")
_SHFL = re.compile(r"^(?:ds_(?:bpermute|permute|swizzle)|v_permlane|v_\w+_dpp$|v_readlane|v_writelane|"
                   r"v_readfirstlane)")
# No work for the cost model: padding, the end of the program, branches, and the counter waits (their cost is
# the latency they wait: cost/amdgcn.load_waits counts them)
_NO_COST = re.compile(r"^s_(?:nop|endpgm|branch|cbranch_\w+|waitcnt\w*|wait_\w+|setprio|sleep)$")
# Vector-memory atomics (global_atomic_add_f32, buffer_atomic_cmpswap) and LDS atomics (ds_add_u32 ...)
_ATOM = re.compile(r"^(?:(?:global|buffer|flat)_atomic_|ds_(?:add|sub|min|max|and|or|xor|inc|dec|cmpst|"
                   r"cmpswap|wrxchg)\w*(?:_rtn)?_[buif]\d+$)")
# Float VALU arithmetic: v_fma_f32, v_pk_fma_f16, v_add_f32_e32, v_max_f32, v_cvt_*_f32 ... (SASS FFMA/HFMA2's "fp")
_FP = re.compile(r"^v_(?:pk_)?\w*_(?:f16|bf16|f32|f64)(?:_e32|_e64|_sdwa)?$")

# The classes this vocabulary gives, as the cost model weighs them (cost/model.py):
#   the SASS ones (mma, ldg, ldgsts, stg, lds, sts, ldl, stl, sfu, sync, fp, shfl, atom, other), and
#   salu: scalar ALU (s_*): issued beside the VALU by the CU's scalar unit, so kept apart from it
COST_CLASSES = ("mma", "ldg", "ldgsts", "stg", "lds", "sts", "ldl", "stl", "sfu", "sync", "fp", "shfl", "atom",
                "other", "salu")
_BY_CLS = {"mma": "mma", "global load": "ldg", "async copy": "ldgsts", "global store": "stg", "shared load": "lds",
           "shared store": "sts", "scratch load": "ldl", "scratch store": "stl", "barrier": "sync"}


def cost_class(op: str, ins: Instr | None = None) -> str | None:
    """The cost model's class of an AMDGCN opcode (`ins`: its classify() reading, when at hand); None: no work
    (s_nop, s_endpgm, branches, and s_waitcnt, whose cost is the wait cost/amdgcn.load_waits counts)."""
    if _NO_COST.match(op):
        return None
    if ins is None:
        ins = classify("\t" + op)
    if ins is not None and ins.cls in _BY_CLS:
        return _BY_CLS[ins.cls]
    if _ATOM.match(op):
        return "atom"
    if _SHFL.match(op):
        return "shfl"
    if _SFU.match(op):
        return "sfu"
    if op.startswith("s_"):
        return "salu"
    if _FP.match(op):
        return "fp"
    return "other"

# --------------------------------------------------------------------------
# Notes
# --------------------------------------------------------------------------


def annotate(stage: ParsedStage) -> list[Note]:
    """Matrix-core, memory, wait and barrier instructions, each with its facts and its ISA document."""
    gfx = target_of("\n".join(ln.raw for ln in stage.lines[:40]))
    family = family_of(gfx)
    ref = ISA_DOCS.get(family or "", ISA_INDEX)
    wave = wave_size("\n".join(ln.raw for ln in stage.lines))
    notes = []
    for line in stage.lines:
        ins = classify(line.text)
        if ins is None:
            continue
        try:
            got = _note(ins, wave, family)
        except Exception:  # a note is never worth a crash
            got = None
        if got:
            facts = {"op": ins.op, "cls": ins.cls, **ins.facts, "target": gfx}
            notes.append(Note(stage.key, line.number, "instruction", got[0], got[1], ref, facts))
    return notes


def _note(ins: Instr, wave: int | None, family: str | None):
    """(label, explanation) for one classified instruction, or None."""
    op, cls, f = ins.op, ins.cls, ins.facts
    if cls == "mma":
        unit = "matrix cores (MFMA)" if f["family"] in ("mfma", "smfmac") else "WMMA units"
        who = f"One wavefront ({wave} lanes)"
        text = (f"{who} computes D[{f['m']}x{f['n']}] ({f['acc']}) += A[{f['m']}x{f['k']}] x B[{f['k']}x{f['n']}] "
                f"({f['inputs']}) on the {unit}")
        if f["blocks"] > 1:
            text += f", as {f['blocks']} independent blocks"
        if "acc_registers" in f:
            per = f"{f['m']}x{f['n']} values" + (f" x {f['blocks']} blocks" if f["blocks"] > 1 else "")
            text += f"; the accumulator is {f['acc_registers']} {f['acc_in']} per lane ({per} over {wave} lanes"
            values = f["m"] * f["n"] * f["blocks"] // wave
            text += ")" if values == f["acc_registers"] else f", {values} values per lane)"
        if f["family"] in ("smfmac", "swmmac"):
            text += "; A is 4:2 structured-sparse"
        return f"{f['family']} {f['shape']} {f['inputs']}", text + "."
    if cls == "async copy":
        return (f"{op} → LDS {f['bytes']}B",
                f"Loads {f['bytes']} bytes per lane from global memory straight into LDS (shared memory), without "
                f"passing through registers: the AMD counterpart of cp.async; s_waitcnt vmcnt waits for it.")
    if cls in ("global load", "global store"):
        via = {"buffer": "a buffer instruction: the address is a 32-bit offset from a buffer resource descriptor "
                         "(Triton uses these when it knows the tensor is under 2 GiB, tt.pointer_range = 32), and "
                         "out-of-range offsets read 0 / are dropped, which is how masks are applied",
               "global": "a global instruction with a 64-bit address per lane",
               "flat": "a flat instruction (the address may be global or LDS)"}[f["via"]]
        verb = "Loads" if f["access"] == "load" else "Stores"
        return (f"{f['via']} {f['access']} {f['bits']}-bit",
                f"{verb} {f['bytes']} bytes per lane ({f['bits']}-bit"
                + (", vectorized" if f["bits"] > 32 else "") + f") {'from' if f['access'] == 'load' else 'to'} "
                f"global memory with {via}.")
    if cls in ("shared load", "shared store"):
        verb = "Reads" if f["access"] == "load" else "Writes"
        text = f"{verb} {f['bytes']} bytes per lane {'from' if f['access'] == 'load' else 'to'} the LDS (shared memory)"
        if f["count"] == 2:
            text += " at two addresses"
        if f["trans"]:
            text += (f", transposing {f['elem_bits']}-bit elements across lanes on the way: each lane receives a "
                     f"column of what it would read row-wise, so a K-major operand arrives in the layout the matrix "
                     f"instructions want without extra shuffles")
        return (f"LDS {f['access']} {f['bits']}-bit" + (" transposed" if f["trans"] else ""), text + ".")
    if cls == "async wait":
        c = f["counters"]
        meaning = {"vmcnt": "vector memory loads (global/buffer)", "loadcnt": "vector memory loads",
                   "lgkmcnt": "LDS, scalar-memory and message operations", "dscnt": "LDS operations",
                   "kmcnt": "scalar memory loads", "storecnt": "vector memory stores", "vscnt": "vector memory stores",
                   "expcnt": "exports", "asynccnt": "async global->LDS copies", "tensorcnt": "tensor copies",
                   "xcnt": "memory address translations"}
        parts = [(f"all {meaning.get(k, k)} have completed ({k}(0))" if n == 0 else
                  f"at most {n} {meaning.get(k, k)} are outstanding ({k}({n}))") for k, n in c.items() if n is not None]
        if not parts:
            return None
        label = ", ".join(f"{k}({n})" for k, n in c.items())
        return (f"wait {label}",
                f"{op}: the wave stalls until " + " and ".join(parts) + "; AMD memory instructions return "
                "asynchronously, and this counter wait is what orders their results.")
    if cls == "barrier":
        if op == "s_barrier_signal":
            return ("barrier signal", "s_barrier_signal: this wave arrives at the workgroup barrier (the first half "
                    "of a barrier on RDNA4/gfx12, which splits s_barrier in two).")
        if op == "s_barrier_wait":
            return ("barrier wait", "s_barrier_wait: waits until every wave of the workgroup has signalled (the "
                    "second half of the gfx12 barrier).")
        return ("workgroup barrier", "s_barrier: every wave of the workgroup waits here (like __syncthreads), "
                "e.g. before LDS written by other waves is read.")
    if cls in ("scratch store", "scratch load"):
        return (f"spill {'store' if f['access'] == 'store' else 'reload'} {f['bits']}-bit",
                f"{op}: {'writes' if f['access'] == 'store' else 'reads back'} {f['bytes']} bytes per lane of scratch "
                f"(private) memory: a register spill, because the kernel needs more VGPRs than it may use.")
    if op.startswith("ds_bpermute") or op.startswith("ds_permute") or op.startswith("ds_swizzle"):
        return (op, f"{op}: lanes exchange values through the LDS crossbar (no LDS memory is used), e.g. for a "
                    "layout conversion or a reduction across lanes.")
    return None


# 	.amdgcn_target "amdgpu9.42-amd-amdhsa-unknown-gfx942"      .amdhsa_code_object_version 5
_SIGNS = re.compile(r"^\s*\.(amdgcn_target|amdhsa_code_object_version|amdhsa_kernel)\b", re.M)
# 	.amdhsa_kernel matmul_kernel
_KERNEL_NAME = re.compile(r"^\s*\.amdhsa_kernel\s+([\w$.]+)", re.M)
# .LBB0_2:                                ; =>This Inner Loop Header: Depth=1
_LOOP_LABEL = re.compile(r"^(\.LBB\d+_\d+):")
# 	s_cbranch_scc1 .LBB0_2        /   s_branch .LBB0_4
_LOOP_BRANCH = re.compile(r"^\s*s_(?:c)?branch\w*\s+(\.LBB\d+_\d+)")


def memory_wait(ins: Instr, line: str) -> bool | None:
    """None: not a wait for global memory; else whether it waits for zero outstanding (a drain):
    s_waitcnt on the vector-memory counter (vmcnt; loadcnt on RDNA4/gfx12)."""
    if ins.cls != "async wait":
        return None
    counters = ins.facts.get("counters") or {}
    for name in ("vmcnt", "loadcnt"):
        if name in counters:
            return counters[name] == 0
    return None


def wait_detail(ins: Instr, line: str) -> str | None:
    """What a wait for memory says beside its mark: its vector-memory counters ("vmcnt(0)")."""
    counters = ins.facts.get("counters") or {}
    return ", ".join(f"{k}({v})" for k, v in counters.items() if k in ("vmcnt", "loadcnt")) or None


def quoted(line: str) -> str:
    """The instruction without its trailing `;` comment, as tables quote it."""
    return line.split(";")[0].strip()


# The code object's metadata as the assembly prints it (inputs/codeobject.py reads a lone .amdgcn file with these)
#	.amdgpu_metadata          ...          .end_amdgpu_metadata
METADATA_BLOCK = re.compile(r"^\s*\.amdgpu_metadata\s*$(.*?)^\s*\.end_amdgpu_metadata", re.M | re.S)
#   - .agpr_count:     0            (a kernel's first key: the list item)
#     .vgpr_count:     58           (its other keys, as deep as the first)
#       - .offset:         0        (deeper: its .args, not read)
METADATA_KEY = re.compile(r"^(\s*)(- )?(\.?[\w.]+):\s*(.*?)\s*$")
# 		.amdhsa_kernel matmul_kernel         ...         .amdhsa_accum_offset 60
KERNEL_DESCRIPTOR = re.compile(r"^\s*\.amdhsa_(kernel|accum_offset|group_segment_fixed_size|"
                               r"private_segment_fixed_size)\s+(\S+)", re.M)


DIALECTS = (
    Dialect(key="amdgcn", title="AMDGCN", ext="amdgcn", lexer="text", fence="asm", order=45, backends=("hip",),
            parse=parse, normalize=normalize, classify=classify, annotate=annotate, noise=noise,
            kind="assembly", machine_code=True, signs=_SIGNS, kernel_name=_KERNEL_NAME,
            def_location=asm_def_location, loop_label=_LOOP_LABEL, loop_branch=_LOOP_BRANCH,
            memory_wait=memory_wait, wait_detail=wait_detail, instruction_text=quoted, quoted=quoted,
            classes=_CLASSES),
)
