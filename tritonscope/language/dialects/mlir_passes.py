"""What MLIR's pass manager prints around Triton's modules, and the classes of ops a pass changes.

The per-pass dumps (MLIR_ENABLE_DUMP) are MLIR text: their headers, the
module attributes passes set (shared memory, pipeline stages), the timing
report, the skeleton two configs' dumps are compared on, and the coarse op
classes a pass adds or removes.  analyses/passes reads dumps with these;
no pattern of MLIR text lives there.  (No DIALECTS here: TTIR and TTGIR are
mlir.py's; this module is the pass manager's side of the same language.)
"""

from __future__ import annotations

import re

from tritonscope.language.mlir_syntax import LOC

# --------------------------------------------------------------------------
# Dump headers, module attributes, timing reports
# --------------------------------------------------------------------------

# // -----// IR Dump Before TritonGPUPipeline: tritongpu-pipeline{num-stages=3} ('builtin.module' operation) //----- //
# // -----// IR Dump Before Canonicalizer (canonicalize) ('tt.func' operation: @matmul_kernel) //----- //
HEADER = re.compile(r"^// -----// IR Dump (?P<when>Before|After) (?P<rest>.*?) "
                    r"\('(?P<anchor>[^']+)' operation(?:: @(?P<func>.*))?\) //----- //\s*$")
# // -----// SoftwarePipeliner internal IR Dump After: LowerLoops
INTERNAL = re.compile(r"^// -----// (?P<what>.*?)(?: //----- //)?\s*$")
# #blocked = #ttg.blocked<{sizePerThread = [1, 2], ...}>
ALIAS = re.compile(r"^(#[\w.$-]+) = (.*?)\s*$")
# module attributes {"ttg.num-warps" = 4 : i32, ttg.shared = 8192 : i32, ...}
SHARED = re.compile(r"\bttg\.shared = (\d+) : i32")
# {loop.cluster = 1 : i32, loop.stage = 2 : i32}    {tt.scheduled_max_stage = 2 : i32}
STAGE_ATTR = re.compile(r"\b(?:loop\.stage|tt\.scheduled_max_stage) = (\d+) : i32")
#     0.0061 (  1.9%)  TritonGPUPipeline
#     0.0000 (  0.0%)    (A) DominanceInfo
TIMING = re.compile(r"^\s+(\d+\.\d+) \(\s*[\d.]+%\)(\s+)(.+?)\s*$")


# --------------------------------------------------------------------------
# The coarse classes of ops a pass adds or removes (TTIR, TTGIR, and the
# LLVM dialect's inline asm and NVVM ops before they become LLVM IR)
# --------------------------------------------------------------------------
#
# The words are CLASSES' where they mean the same ("async copy", "async
# wait", "barrier", "shared load"...); three name what only MLIR stages have
# (a layout conversion, a shared allocation, a dot before it is lowered to
# MMA instructions or FMAs).  The table's order is the order pass tables list
# them.  The MLIR dialects keep `classes=()`: the instruction mix counts the
# machine stages, not these.
OP_CLASSES: tuple[tuple[str, re.Pattern], ...] = (
    # ttg.async_copy_global_to_local / ttng.async_tma_copy_global_to_local / cp.async.ca.shared.global
    ("async copy", re.compile(r"async_copy_global_to_local|async_tma_copy|buffer_load_to_local"
                              r"|cp\.async\.(?:ca|cg|bulk)\b|nvvm\.cp\.async\.shared")),
    # ttg.async_commit_group / cp.async.commit_group
    ("async commit", re.compile(r"async_commit_group|cp\.async\.commit[._]group")),
    # ttg.async_wait / ttng.wait_barrier / cp.async.wait_group / ttng.warp_group_dot_wait: waits for async work
    ("async wait", re.compile(r"ttg\.async_wait|ttng\.wait_barrier|cp\.async\.wait[._]group|warp_group_dot_wait"
                              r"|wgmma\.wait_group|wgmma_wait_group|async_tma_store_wait|nvvm\.cp\.async\.wait")),
    # gpu.barrier / nvvm.barrier0 / bar.sync / barrier.sync / ttng.barrier_expect
    ("barrier", re.compile(r"\bgpu\.barrier\b|\bttg\.barrier\b|nvvm\.barrier|\bbar\.sync\b|\bbarrier\.sync\b"
                           r"|ttng\.(?:init_barrier|barrier_expect|arrive_barrier)|mbarrier")),
    # %a_29 = ttg.convert_layout %a_19 : tensor<16x16xf16, #blocked1> -> ...
    ("convert_layout", re.compile(r"\bttg\.convert_layout\b")),
    # %0 = ttg.local_alloc : () -> !ttg.memdesc<...>
    ("shared alloc", re.compile(r"\bttg\.local_alloc\b")),
    # ttg.local_load / ldmatrix.sync.aligned...
    ("shared load", re.compile(r"\bttg\.local_load\b|ldmatrix")),
    # ttg.local_store / stmatrix.sync.aligned...
    ("shared store", re.compile(r"\bttg\.local_store\b|stmatrix")),
    # tt.dot / ttng.warp_group_dot / ttng.tc_gen5_mma / mma.sync.aligned / wgmma.mma_async / nvg.wgmma
    ("dot", re.compile(r"\btt\.dot\b|ttng\.warp_group_dot\b|ttng\.tc_gen5_mma|mma\.sync|wgmma\.mma_async"
                       r"|\bnvg\.wgmma\b")),
)
OP_CLASS_ORDER = tuple(name for name, _ in OP_CLASSES)
# The classes only MLIR stages name (the rest are CLASSES' words)
OWN_CLASSES = ("convert_layout", "shared alloc", "dot")
_KIND_CLASSES: dict[str, tuple[str, ...]] = {}


def op_classes(text: str) -> tuple[str, ...]:
    """The OP_CLASSES an MLIR op line (or an inline asm string) falls in, in table order."""
    return tuple(cls for cls, rx in OP_CLASSES if rx.search(text))


def kind_classes(kind: str) -> tuple[str, ...]:
    """The OP_CLASSES of an op name ("ttg.async_wait"); memoized: an op's name decides its class."""
    found = _KIND_CLASSES.get(kind)
    if found is None:
        found = _KIND_CLASSES[kind] = op_classes(kind)
    return found


def line_classes(kind: str, line: str) -> tuple[str, ...]:
    """The OP_CLASSES of one op: inline asm and NVVM/NVGPU ops by their text (the asm says what it is),
    every other op by its name."""
    if kind == "llvm.inline_asm" or kind.startswith(("nvvm.", "nvgpu.")):
        return op_classes(line)
    return kind_classes(kind)


def module_stage(op_names, encodings) -> str:
    """'llir', 'ttgir' or 'ttir': which stage an MLIR module is, by the ops and encodings it holds
    (for pass dumps with no stage marks).  LLVM-dialect ops and no tt.func: lowered to LLVM; a TTGIR
    op or encoding: TTGIR; else TTIR."""
    if any(k.startswith("llvm.") for k in op_names) and "tt.func" not in op_names:
        return "llir"
    if any(k.startswith(("ttg.", "ttng.", "amdgpu.")) for k in op_names) or any(
            v.startswith(("#ttg.", "#ttng.", "#triton_gpu.")) for v in encodings):
        return "ttgir"
    return "ttir"


# --------------------------------------------------------------------------
# The skeleton of a dump (what two configs' modules are compared on)
# --------------------------------------------------------------------------

# %offs_m_9   %22:3   %arg9   %c16_i32   %0#1
SSA = re.compile(r"%[\w.$-]+(?::\d+)?(?:#\d+)?")
# @triton.language.standard.zeros__Tc16_c16T_cfp32   (3.9: Triton mangles constexprs into names)
# @"triton.language.standard.zeros____(0, 0)cconstexpr_16__(1,)cconstexpr_fp32_"   (3.6, quoted)
SYMBOL = re.compile(r'@"[^"]*"|@[\w.$-]+')
# #blocked3   #mma1   #shared2   (not #loc, which is gone already)
ALIAS_USE = re.compile(r"#([a-z_]+?)\d+\b")
# tensor<16x16xf16>   memdesc<3x16x16xf16, #shared, #smem, mutable, 64x64>   ->  the dims
DIM = re.compile(r"(?<![\w.])\d+(?:x\d+)*x(?=[a-z!])|(?<![\w.])\d+(?:x\d+)+(?![\w.])")
# 16   -1   0.000000e+00   2.5   (not inside a name such as f16, i32, %c1)
NUM = re.compile(r"(?<![\w.#%^$])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\w.])")
# !ttg.memdesc<NxNxf16, #shared, #smem, mutable, NxN>: the shape of the buffer a view is cut from
ALLOC_SHAPE = re.compile(r", N(?:xN)+>")
# f32, f32, f32   ->  f32, ...        %, %, %  ->  %, ...
RUN = re.compile(r"(?<![\w.%])([\w.!<>%]+)(?:, \1(?![\w.]))+")


def skeleton(text: str) -> list[str]:
    """A dump's lines with what a config changes (numbers, names, layout parameters) taken out (the rule of analyses/passes/compare.py)."""
    out = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue  # #loc and layout definitions
        if "loc(" in line:
            line = LOC.sub("", line)
        line = SSA.sub("%", line)
        if "@" in line:
            line = SYMBOL.sub(lambda m: re.sub(r"\d+", "N", m.group(0)), line)
        line = ALIAS_USE.sub(r"#\1", line)
        line = DIM.sub(lambda m: re.sub(r"\d+", "N", m.group(0)), line)
        line = NUM.sub("N", line)
        if "memdesc<" in line:
            line = ALLOC_SHAPE.sub(">", line)
        line = RUN.sub(r"\1, ...", line)
        out.append(line.rstrip())
    return out
