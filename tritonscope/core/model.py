"""The data that flows through tritonscope: records, no behaviour.

CLI -> compile (KernelSpec -> Artifact) -> parse (Artifact -> ParsedStage)
-> annotate (ParsedStage -> Note) -> render.  Nothing here imports Triton.
Records are frozen except Artifact (built up by the compile).  What each
stage's language is (title, parser, classifier...) lives in
tritonscope/language/dialects, one module per dialect.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# --------------------------------------------------------------------------
# Targets
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Arch:
    """A GPU target and the per-SM limits that decide whether a config fits.

    Figures are from the CUDA C Programming Guide's compute-capability table
    (max shared memory per block is the opt-in maximum).
    """

    name: str               # canonical spelling, e.g. "sm_90a"
    capability: int         # 80, 86, 89, 90, 100, 120
    gpus: str               # example parts, for the summary
    max_shared_per_block: int
    shared_per_sm: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    regs_per_sm: int = 65536
    max_regs_per_thread: int = 255
    # The arch's reference part (its SM count, its datasheet peaks) is in core/gpus.json (gpus.reference_gpu).
    backend: str = "cuda"   # Triton's backend name (GPUTarget.backend)
    warp_size: int = 32

    @property
    def target_arch(self) -> int:
        """What Triton's GPUTarget calls the arch: the compute capability."""
        return self.capability

    def target_words(self) -> dict:
        """How triton_api names this target: a CUDA capability, or (backend, gfx name, wave size)."""
        if self.backend == "cuda":
            return {"capability": self.capability}
        return {"target": (self.backend, self.target_arch, self.warp_size)}


@dataclass(frozen=True)
class HipArch:
    """An AMD target (Triton's HIP backend) and the limits that decide whether a config fits.

    Where a field means what it means for NVIDIA it has the same name, so
    code that only asks "how much shared memory may one block use" reads
    either record: `max_shared_per_block` is the LDS one workgroup may
    allocate, `shared_per_sm` the LDS of the unit its waves share (a CU on
    CDNA, a WGP on RDNA in Triton's default WGP mode).

    Occupancy on AMD is counted in waves per SIMD: each SIMD holds up to
    `max_waves_per_simd` waves, as many as its VGPR file allows (VGPRs are
    allocated per wave in granules), and the LDS and the workgroup limit cap
    how many workgroups a CU/WGP holds.  Figures from AMD's ISA references:
    "AMD Instinct MI200 (CDNA2) ISA", "AMD Instinct MI300 (CDNA3) ISA",
    "AMD Instinct CDNA4 ISA", "RDNA3 ISA" and "RDNA4 ISA" (sections on the
    unified VGPR file, SGPR/VGPR allocation, and the LDS), and the same
    numbers as LLVM's AMDGPU backend uses for its "; Occupancy:" line
    (AMDGPUBaseInfo.cpp: getTotalNumVGPRs, getVGPRAllocGranule,
    getMaxWavesPerEU, getMaxWorkGroupsPerCU), which tests check against.
    """

    name: str                   # "gfx942"
    family: str                 # "CDNA3", "RDNA3"
    gpus: str                   # example parts, for the summary
    warp_size: int              # 64 on CDNA; 32 on RDNA (Triton compiles wave32 there)
    max_shared_per_block: int   # LDS per workgroup, bytes (what Triton's HIP launcher checks)
    shared_per_sm: int          # LDS per CU (CDNA) / WGP (RDNA), bytes
    simds_per_cu: int           # SIMDs sharing that LDS: 4 in a CDNA CU and in an RDNA WGP
    max_waves_per_simd: int     # 8 on CDNA2-4, 16 on RDNA3/4
    vgprs_per_simd: int         # VGPRs per lane in one SIMD's register file (at this wave size)
    vgpr_granule: int           # VGPRs are allocated per wave in multiples of this
    max_vgprs_per_wave: int     # 512 on CDNA2+ (256 arch VGPRs + 256 AGPRs, one file); 256 on RDNA
    unified_agprs: bool         # AGPRs come out of the same file as VGPRs (CDNA2+)
    sgprs_per_simd: int | None  # 800 on CDNA; None on RDNA, where each wave has a fixed 106 and SGPRs never limit
    max_workgroups_per_cu: int  # barrier resources: 16 per CU, 32 per WGP (RDNA, WGP mode)
    capability: None = None     # not a CUDA target
    backend: str = "hip"

    @property
    def target_arch(self) -> str:
        """What Triton's GPUTarget calls the arch: the gfx name."""
        return self.name

    target_words = Arch.target_words  # (backend, gfx name, wave size), as triton_api names it

    @property
    def max_threads_per_sm(self) -> int:
        return self.max_waves_per_simd * self.simds_per_cu * self.warp_size


_CDNA = dict(warp_size=64, simds_per_cu=4, max_waves_per_simd=8, vgprs_per_simd=512, vgpr_granule=8,
             max_vgprs_per_wave=512, unified_agprs=True, sgprs_per_simd=800, max_workgroups_per_cu=16)
# RDNA3 Navi31/32 and RDNA4 have the 1.5x VGPR file: 1536 VGPRs per SIMD lane in wave32, granule 24.
_RDNA = dict(warp_size=32, simds_per_cu=4, max_waves_per_simd=16, vgprs_per_simd=1536, vgpr_granule=24,
             max_vgprs_per_wave=256, unified_agprs=False, sgprs_per_simd=None, max_workgroups_per_cu=32)
_KIB = 1024

ARCHES: dict[str, Arch | HipArch] = {
    a.name: a
    for a in (
        Arch("sm_80", 80, "A100, A30", 166912, 167936, 2048, 32),
        Arch("sm_86", 86, "RTX 30xx, A10, A40", 101376, 102400, 1536, 16),
        Arch("sm_89", 89, "L4, L40, RTX 40xx", 101376, 102400, 1536, 24),
        Arch("sm_90a", 90, "H100, H200", 232448, 233472, 2048, 32),
        Arch("sm_100a", 100, "B200, GB200", 232448, 233472, 2048, 32),
        Arch("sm_120", 120, "RTX 50xx, RTX PRO 6000", 101376, 102400, 1536, 32),
        # CDNA2/3: 64 KiB of LDS per CU, all of it available to one workgroup.
        HipArch("gfx90a", "CDNA2", "MI210, MI250X", max_shared_per_block=64 * _KIB, shared_per_sm=64 * _KIB, **_CDNA),
        HipArch("gfx942", "CDNA3", "MI300X, MI300A, MI325X", max_shared_per_block=64 * _KIB,
                shared_per_sm=64 * _KIB, **_CDNA),
        # CDNA4 grew the LDS to 160 KiB per CU.
        HipArch("gfx950", "CDNA4", "MI350X, MI355X", max_shared_per_block=160 * _KIB, shared_per_sm=160 * _KIB,
                **_CDNA),
        # RDNA3/4: 128 KiB of LDS per WGP, at most 64 KiB per workgroup.
        HipArch("gfx1100", "RDNA3", "RX 7900 XTX, Radeon PRO W7900", max_shared_per_block=64 * _KIB,
                shared_per_sm=128 * _KIB, **_RDNA),
        HipArch("gfx1101", "RDNA3", "RX 7800 XT, RX 7700 XT", max_shared_per_block=64 * _KIB,
                shared_per_sm=128 * _KIB, **_RDNA),
        HipArch("gfx1200", "RDNA4", "RX 9060 XT", max_shared_per_block=64 * _KIB, shared_per_sm=128 * _KIB, **_RDNA),
        HipArch("gfx1201", "RDNA4", "RX 9070 XT, Radeon AI PRO R9700", max_shared_per_block=64 * _KIB,
                shared_per_sm=128 * _KIB, **_RDNA),
    )
}
# Triton compiles capability 90 and 100 for the "a" (architecture-specific)
# variants automatically, so "sm_90" and "sm_90a" name the same target.
ARCH_ALIASES = {"sm_90": "sm_90a", "sm_100": "sm_100a", "sm_120a": "sm_120"}
DEFAULT_ARCH = "sm_90a"


def reference_device(arch_name: str, gpu=None) -> dict[str, Any]:
    """The GPU a kernel file is told it runs on when it asks while it imports (kernels.load_module), as
    torch.cuda.get_device_properties and Triton's driver describe it: the `device` figures of `gpu` (a
    gpus.Gpu, --gpu) or of the arch's reference part, from core/gpus.json; the arch's own limits (opt-in
    shared memory per block, 64K registers, warp size) where the part's record has none."""
    from tritonscope.core.gpus import reference_gpu

    arch = ARCHES[arch_name]
    part = gpu or reference_gpu(arch_name)
    device = dict(part.device)
    device.update(sms=part.sms, capability=tuple(device["capability"]))
    if part.clock_ghz:
        device.setdefault("sm_clock_rate", round(part.clock_ghz * 1e6))  # kHz, as CUDA gives clockRate
    device.setdefault("max_shared_mem", arch.max_shared_per_block)
    device["max_num_regs"] = 65536
    device["warp_size"] = arch.warp_size
    device["memory_bytes"] = device.pop("memory_gib") << 30
    return device


def arch_for_capability(capability: int) -> Arch | None:
    return next((a for a in ARCHES.values() if a.capability == capability), None)


def arches_of(backend: str) -> list[str]:
    """The arch names of one backend ("cuda", "hip"), in table order."""
    return [a.name for a in ARCHES.values() if a.backend == backend]


# --------------------------------------------------------------------------
# What was compiled
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class KernelSpec:
    """Everything needed to reproduce one compile.

    `args` maps each non-constexpr parameter to its description: a tensor
    ("fp16[32,32]"), a bare pointer ("*fp16"), or a Python scalar / None.
    """

    target: str                    # what the user typed: "matmul" or "k.py:kernel"
    kernel: str                    # the @triton.jit function's name
    file: str                      # absolute path of the file that defines it
    args: dict[str, Any]
    constexprs: dict[str, Any]
    num_warps: int
    num_stages: int
    arch: str                      # canonical arch name, a key of ARCHES
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    grid: tuple[int, ...] | None = None
    options: dict[str, Any] = field(default_factory=dict)  # extra Triton options
    # What the kernel file's import asked of the GPU ("the target", "the device properties"), answered
    # for the arch's reference GPU (core/gpus.json, model.reference_device); empty when it asked nothing.
    asked: tuple[str, ...] = ()
    # For an @triton.autotune kernel, which of its configs this is: {"index", "count", "of", "chosen_by",
    # "prune"}; a tuner times them all on a GPU and may keep another.
    autotune: dict[str, Any] | None = None
    heuristics: tuple[str, ...] = ()  # constexprs its @triton.heuristics computed from the arguments
    gpu: str | None = None            # the GPU named with --gpu that `asked` was answered for (None: reference)

    def label(self, *, options: bool = False) -> str:
        """The one short description of a config: 'BLOCK=16 w4 s3 sm_90a'; with `options`, the launch
        options it compiles with follow as a launch passes them: 'BLOCK=16 w4 s3 sm_90a fp16 maxnreg=64'."""
        parts = [f"{k}={constexpr_words(v)}" for k, v in self.constexprs.items()]
        parts += [f"w{self.num_warps}", f"s{self.num_stages}", self.arch]
        if self.dtype:
            parts.append(self.dtype)
        if options and (words := option_words(self.options)):
            parts.append(words)
        return " ".join(parts)

    def launch_options(self) -> dict[str, Any]:
        """The Triton launch options that are set (an example's launch-only params are not among them)."""
        return set_options(self.options)


# The launch options (beyond num_warps/num_stages) that go to Triton's compile: KernelSpec.options
# also holds an example's launch-only params, which do not.  The first three have flags of their own;
# the rest are the backends' other options a launch may pass as keywords (`-c waves_per_eu=2`), checked
# against the target's own backend (its CUDAOptions / HIPOptions fields) when the spec is built.
TRITON_OPTIONS = ("maxnreg", "num_ctas", "enable_fp_fusion",
                  # NVIDIA
                  "launch_cooperative_grid", "launch_pdl", "enable_reflect_ftz", "ptx_version", "min_shared_mem",
                  "sched4reg", "clc",
                  # AMD
                  "waves_per_eu", "matrix_instr_nonkdim", "kpack", "schedule_hint", "allow_flush_denorm",
                  "wgp_cu_mode",
                  # both
                  "debug", "default_dot_input_precision", "max_num_imprecise_acc_default", "sanitize_overflow")


def set_options(options: dict[str, Any] | None) -> dict[str, Any]:
    """The Triton launch options (maxnreg, num_ctas, enable_fp_fusion) among `options` that are set."""
    return {k: v for k, v in (options or {}).items() if k in TRITON_OPTIONS and v is not None}


def option_words(options: dict[str, Any] | None) -> str:
    """'maxnreg=32 num_ctas=2 enable_fp_fusion=False': set launch options as a launch passes them ('' if none).

    The one spelling of launch options in labels, table headers and notes.
    """
    return " ".join(f"{k}={v}" for k, v in set_options(options).items())


def constexpr_words(value: Any) -> str:
    """16 -> '16'; 'tl.bfloat16' -> 'tl.bfloat16'; a string constexpr 'mean' -> "'mean'" (quoted, as in Python)."""
    if isinstance(value, str) and not value.startswith("tl."):
        return repr(value)
    return str(value)


@dataclass(frozen=True)
class Resources:
    registers: int | None = None          # per thread
    stack: int | None = None              # stack frame bytes per thread (cuobjdump STACK): ptxas spills here
    local: int | None = None              # local memory bytes per thread (cuobjdump LOCAL); see summary.Spills
    static_shared: int | None = None      # bytes declared in the cubin (AMD: the code object's group segment)
    dynamic_shared: int = 0               # bytes Triton asks for at launch
    # AMD code objects (registers = arch VGPRs, stack = scratch bytes per work-item, where spills go):
    agprs: int | None = None              # accumulation VGPRs (CDNA's MFMA accumulators)
    sgprs: int | None = None              # scalar registers per wave
    vgpr_spills: int | None = None        # VGPRs the compiler spilled to scratch (code object metadata)
    sgpr_spills: int | None = None


@dataclass(frozen=True)
class ArgSpecialization:
    """How Triton's JIT specialized one argument (what a real launch does)."""

    name: str
    type: str                 # "*fp16", "i32", "constexpr"
    attrs: tuple[str, ...]    # ("tt.divisibility=16",) and the like
    value: Any = None         # for constexprs and ints specialized to 1


@dataclass
class Artifact:
    """One real compile: every stage's text plus what Triton said about it."""

    spec: KernelSpec
    triton_version: str
    kernel_hash: str
    stages: dict[str, str]                 # stage key -> raw text, in pipeline order
    python_first_line: int                 # file line number of the first source line
    metadata: dict[str, Any]               # JSON-safe subset of Triton's metadata
    resources: Resources
    specialization: list[ArgSpecialization]
    warnings: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # code-generation env vars in effect
    compile_seconds: float = 0.0
    # Triton's own remarks and warnings with the file:line:col they name, as
    # remarks.Remark dicts ({"file", "line", "col", "severity", "message", "stage", ...}).
    remarks: list[dict] = field(default_factory=list)


# --------------------------------------------------------------------------
# Parsed stages and notes
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class SourceLoc:
    file: str
    line: int
    col: int = 0


@dataclass(frozen=True)
class Line:
    """One displayed line of a stage: text without location noise, raw kept."""

    number: int               # 1-based line number in the raw stage text
    text: str                 # what is shown: loc(...) / !dbg / .loc noise removed
    raw: str                  # the line exactly as the compiler wrote it
    loc: SourceLoc | None = None


@dataclass(frozen=True)
class ParsedStage:
    key: str
    lines: tuple[Line, ...]


@dataclass(frozen=True)
class Note:
    """An annotation on one line of one stage.

    `kind` says what the note is about (an op, an encoding, an instruction);
    each renderer decides how a kind looks.  `label` and `explanation` are
    for people; `facts` hold the same numbers for code.
    """

    stage: str
    line: int                 # Line.number it belongs to
    kind: str                 # "op", "encoding", "instruction", "cost", "info"
    label: str                # short: "cp.async 16B"
    explanation: str          # plain English with the real numbers
    reference: str | None = None  # URL or doc section
    # What the note says, as data (JSON-safe): {"op": "tt.store", "shape": [16, 16], "masked": False},
    # {"cls": "async copy", "bytes": 4}, {"encoding": "blocked", "fields": {...}}.  Views and the diff
    # read these, never the explanation.
    facts: dict = field(default_factory=dict, hash=False)
