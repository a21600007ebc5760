"""Derived facts about one compile, computed once: what it needs, whether it fits, whether it spills.

Every consumer (the terminal, HTML and Markdown summaries, `diff`'s summary
rows, `sweep` and `bench` rows, saved reports) reads these records instead
of redoing the arithmetic, so they cannot drift apart.  Wording is left to
the renderers (render/summary_text.py); this module holds only numbers and
the fit problems' sentences (which are facts a user acts on).

Spills come from every source that knows them: cuobjdump's `STACK` (ptxas
spills to the stack frame, so a spilling kernel can say `STACK:3960
LOCAL:0`), its `LOCAL`, and the `STL`/`LDL` instructions in the SASS.

Pure arithmetic on an Artifact: no Triton import, so `show` can recompute a
summary for an old report.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from tritonscope.core.model import ARCHES, Artifact
from tritonscope.analyses.remarks import counted

# The driver reserves 1 KiB of shared memory per block on sm_80 and later.
_RESERVED_SHARED_PER_BLOCK = 1024
# Registers are allocated per warp in units of 256.
_REGISTER_UNIT = 256


@dataclass(frozen=True)
class SharedMemory:
    dynamic: int                       # bytes Triton asks for at launch (what its launch check compares)
    static: int | None                 # bytes declared in the cubin (cuobjdump SHARED); None: unknown
    limit_per_block: int | None        # the arch's opt-in maximum per block; None: unknown arch


@dataclass(frozen=True)
class Spills:
    """Local-memory traffic, from every source that knows it (None: that source was not available)."""

    stack: int | None                  # cuobjdump STACK: stack frame bytes per thread (ptxas spills here);
                                       # AMD: the code object's scratch (private segment) bytes per work-item
    local: int | None                  # cuobjdump LOCAL: local memory bytes per thread
    stores: int | None                 # STL instructions in the SASS (AMD: scratch_store_* in the AMDGCN)
    loads: int | None                  # LDL instructions in the SASS (AMD: scratch_load_*)

    @property
    def known(self) -> bool:
        return not (self.stack is None and self.local is None and self.stores is None and self.loads is None)

    @property
    def instructions(self) -> int:
        return (self.stores or 0) + (self.loads or 0)

    @property
    def frame_bytes(self) -> int:
        """Stack frame plus local memory, bytes per thread."""
        return (self.stack or 0) + (self.local or 0)

    @property
    def spills(self) -> bool | None:
        """Whether the kernel moves registers through local memory (None: unknown).

        With SASS, STL/LDL decide: a stack frame without them is a call
        frame, not spilling.  Without SASS, any stack or local bytes count.
        """
        if not self.known:
            return None
        if self.stores is not None or self.loads is not None:
            return self.instructions > 0
        return self.frame_bytes > 0

    @property
    def bytes(self) -> int | None:
        """The spill figure for one-number columns (sweep, bench, diff): frame bytes when it spills."""
        if not self.known:
            return None
        return self.frame_bytes if self.spills else 0


@dataclass(frozen=True)
class Fit:
    """Whether the config can launch on its arch, and why not."""

    shared_per_block: bool             # dynamic shared memory within the arch's per-block maximum
    registers_per_sm: bool | None      # registers x threads within the SM's register file; None: unknown
    problems: tuple[str, ...] = ()     # one sentence per limit it breaks

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class Occupancy:
    """Blocks per SM allowed by shared memory, registers, threads and the block limit."""

    blocks_per_sm: int
    warps_per_sm: int
    fraction: float                    # resident threads / the SM's maximum
    limited_by: str                    # "threads", "blocks", "shared", "registers"; AMD: "waves", "vgprs",
                                       # "sgprs", "lds", "workgroups"
    limits: dict[str, int] = field(default_factory=dict)  # blocks per SM each resource allows (AMD: waves per SIMD)
    # AMD targets count occupancy in waves per SIMD (blocks_per_sm is then workgroups per CU/WGP,
    # warps_per_sm waves per CU/WGP); None on NVIDIA.
    waves_per_simd: int | None = None
    unit: str = "SM"                   # what blocks_per_sm counts per: "SM", "CU", "WGP"


@dataclass(frozen=True)
class Summary:
    arch: str                          # the spec's arch, e.g. "gfx942"
    gpus: str | None                   # example parts; None: an arch this tritonscope does not know
    threads_per_block: int
    shared: SharedMemory
    registers: int | None              # per thread; None: cuobjdump was not available (AMD: VGPRs per lane,
                                       # AGPRs included where they share the file)
    spills: Spills
    fit: Fit | None                    # None: unknown arch
    occupancy: Occupancy | None        # None: it does not fit, or unknown arch
    fp_fusion: bool | None             # Triton's enable_fp_fusion; None: not in the metadata
    grid: tuple[int, ...] | None
    mix: dict[str, dict[str, int]] = field(default_factory=dict)  # stage -> instruction class -> count
    remarks: int = 0                   # Triton's remarks and warnings (their MLIR notes not counted)
    backend: str = "cuda"              # "hip" for AMD targets (then LDS, VGPRs, waves per SIMD)
    agprs: int | None = None           # AMD: accumulation VGPRs (in `registers` too, on CDNA's unified file)
    sgprs: int | None = None           # AMD: scalar registers per wave
    register_file: int | None = None   # AMD: VGPRs one lane may address (512 on CDNA2+, 256 on RDNA)
    # facts the files do not record, with the reason ({"shared": ..., "occupancy": ...}): shown as unknown,
    # never computed from a placeholder
    unknown: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Summary:
        """The inverse of to_dict (a saved report's "summary")."""
        fit = data.get("fit")
        occ = data.get("occupancy")
        grid = data.get("grid")
        return cls(
            arch=data["arch"],
            gpus=data.get("gpus"),
            threads_per_block=int(data["threads_per_block"]),
            shared=SharedMemory(**data["shared"]),
            registers=data.get("registers"),
            spills=Spills(**data["spills"]),
            fit=None if fit is None else Fit(fit["shared_per_block"], fit.get("registers_per_sm"),
                                             tuple(fit.get("problems", ()))),
            occupancy=None if occ is None else Occupancy(**occ),
            fp_fusion=data.get("fp_fusion"),
            grid=None if grid is None else tuple(grid),
            mix={k: dict(v) for k, v in (data.get("mix") or {}).items()},
            remarks=int(data.get("remarks") or 0),
            backend=data.get("backend", "cuda"),
            agprs=data.get("agprs"),
            sgprs=data.get("sgprs"),
            register_file=data.get("register_file"),
            unknown={str(k): str(v) for k, v in (data.get("unknown") or {}).items()},
        )


def summarize(artifact: Artifact, mix: dict[str, dict[str, int]] | None = None) -> Summary:
    """Every derived fact of one compile (`mix` from the analysis; omitted by sweep, which has its own)."""
    spec = artifact.spec
    res = artifact.resources
    arch = ARCHES.get(spec.arch)
    threads = spec.num_warps * (arch.warp_size if arch else 32)
    spills = _spills(artifact)
    fusion = artifact.metadata.get("enable_fp_fusion")
    fit = occ = None
    unknown: dict[str, str] = {}
    if artifact.metadata.get("shared_recorded") is False:  # a found kernel without Triton's metadata .json
        memory = "LDS" if arch is not None and arch.backend == "hip" else "shared memory"
        unknown["shared"] = f"the {memory} Triton allocates at launch is recorded only in its metadata .json"
        unknown["occupancy"] = f"it depends on the {memory}, which is not recorded"
    if arch is not None:
        fit = _fit(artifact, arch, threads)
        # occupancy needs the registers: without them (a stage file with no binary) it is unknown, never a guess
        if not fit.problems and res.registers is not None and "occupancy" not in unknown:
            occ = _hip_occupancy(artifact, arch) if arch.backend == "hip" else _occupancy(artifact, arch, threads)
    return Summary(
        arch=spec.arch,
        gpus=arch.gpus if arch else None,
        threads_per_block=threads,
        shared=SharedMemory(res.dynamic_shared, res.static_shared, arch.max_shared_per_block if arch else None),
        registers=res.registers,
        spills=spills,
        fit=fit,
        occupancy=occ,
        fp_fusion=None if fusion is None else bool(fusion),
        grid=None if spec.grid is None else tuple(spec.grid),
        # every stage that counts instructions (PTX, SASS; AMDGCN): the others' mixes are empty
        mix={k: dict(v) for k, v in (mix or {}).items() if v},
        remarks=counted(artifact.remarks),
        backend=arch.backend if arch else "cuda",
        agprs=res.agprs,
        sgprs=res.sgprs,
        register_file=getattr(arch, "max_vgprs_per_wave", None),
        unknown=unknown,
    )


def _spills(artifact: Artifact) -> Spills:
    """Spill bytes from the resources, spill instructions from the machine code (SASS; AMDGCN's scratch ops)."""
    from tritonscope.language.dialects import class_counts, dialect

    res = artifact.resources
    # A machine stage whose dialect names spill instructions (AMDGCN's scratch_store/scratch_load) counts
    # them; otherwise the SASS's STL/LDL do.
    spill_stage = next((k for k in artifact.stages if "scratch store" in dialect(k).classes), None)
    if spill_stage is None:
        stores, loads = local_accesses(artifact.stages.get("sass"))
        return Spills(res.stack, res.local, stores, loads)
    counts = class_counts(spill_stage, artifact.stages[spill_stage])
    return Spills(res.stack, res.local, counts.get("scratch store", 0), counts.get("scratch load", 0))


# How each backend's spills are named: (store instructions, load instructions, the stage they are counted in,
# the memory they go to, per what).  Summary.backend picks the row.
SPILL_WORDS = {"cuda": ("STL", "LDL", "SASS", "stack frame", "thread"),
               "hip": ("scratch stores", "scratch loads", "AMDGCN", "scratch", "lane")}


# One SASS instruction per line, a local-memory access (STL/LDL): the SASS dialect's pattern
from tritonscope.language.dialects.sass import SPILL_ACCESS as _LOCAL_ACCESS_RE


def local_accesses(sass: str | None) -> tuple[int | None, int | None]:
    """(STL count, LDL count) in a SASS listing; (None, None) without one."""
    if sass is None:
        return None, None
    stores = loads = 0
    if "STL" not in sass and "LDL" not in sass:  # the common case, without a pass over every line
        return stores, loads
    for line in sass.splitlines():
        if "STL" in line or "LDL" in line:
            m = _LOCAL_ACCESS_RE.match(line)
            if m:
                stores += m.group(1) == "STL"
                loads += m.group(1) == "LDL"
    return stores, loads


def _fit(artifact: Artifact, arch, threads: int) -> Fit:
    res = artifact.resources
    problems = []
    # Triton's own launch-time check compares the dynamic size alone
    # (CompiledKernel._init_handles raises OutOfResources on it).
    shared = res.dynamic_shared
    shared_ok = shared <= arch.max_shared_per_block
    if not shared_ok:
        what = "LDS per workgroup" if arch.backend == "hip" else "shared memory per block"
        problems.append(
            f"needs {shared} bytes of {what}; {arch.name} ({arch.gpus}) "
            f"has {arch.max_shared_per_block}")
    regs_ok = None
    if arch.backend == "hip":
        # LLVM never allocates more VGPRs than a wave may address: it spills to scratch instead
        # (see Spills), so AMD registers always fit.
        return Fit(shared_ok, None if res.registers is None else True, tuple(problems))
    if res.registers:
        regs_ok = res.registers * threads <= arch.regs_per_sm
        if not regs_ok:
            problems.append(
                f"needs {res.registers} registers x {threads} threads = {res.registers * threads}; "
                f"an SM has {arch.regs_per_sm}")
    return Fit(shared_ok, regs_ok, tuple(problems))


def _occupancy(artifact: Artifact, arch, threads: int) -> Occupancy:
    res = artifact.resources
    warps = artifact.spec.num_warps
    limits: dict[str, int] = {
        "threads": arch.max_threads_per_sm // threads,
        "blocks": arch.max_blocks_per_sm,
    }
    shared = res.dynamic_shared
    if shared:
        limits["shared"] = (arch.shared_per_sm // (shared + _RESERVED_SHARED_PER_BLOCK)
                            if shared <= arch.max_shared_per_block else 0)
    if res.registers:
        per_warp = -(-res.registers * 32 // _REGISTER_UNIT) * _REGISTER_UNIT
        limits["registers"] = arch.regs_per_sm // (per_warp * warps)
    blocks = min(limits.values())
    return Occupancy(blocks, blocks * warps, blocks * threads / arch.max_threads_per_sm,
                     min(limits, key=limits.get), limits)


# LLVM AMDGPU's getOccupancyWithNumSGPRs for gfx8/gfx9 (CDNA): waves per SIMD an SGPR count allows,
# from the 800 SGPRs of a SIMD (AMDGPUBaseInfo.cpp).  RDNA gives every wave a fixed SGPR block.
_SGPR_WAVES = ((80, 10), (88, 9), (100, 8))


def _hip_occupancy(artifact: Artifact, arch) -> Occupancy:
    """Waves per SIMD an AMD kernel keeps resident, and what limits it.

    Each limit is in waves per SIMD, as AMD's occupancy guides count it:
    the SIMD's wave slots; its VGPR file (per lane) over the VGPRs a wave
    occupies, rounded up to the allocation granule (AGPRs included on CDNA,
    where they share the file); its SGPRs (CDNA); and whole workgroups: the
    LDS of a CU/WGP over the LDS one workgroup uses, and the 16 (CU) or 32
    (WGP) workgroups the barrier hardware tracks, each workgroup's waves
    spread over the SIMDs.  Without LDS use, the register limits equal the
    "; Occupancy:" LLVM prints in the AMDGCN.
    """
    res = artifact.resources
    wg_waves = artifact.spec.num_warps
    simds = arch.simds_per_cu

    def per_simd(workgroups: int) -> int:
        return -(-workgroups * wg_waves // simds)

    limits: dict[str, int] = {"waves": arch.max_waves_per_simd}
    if res.registers:
        allocated = -(-max(res.registers, 1) // arch.vgpr_granule) * arch.vgpr_granule
        limits["vgprs"] = max(1, arch.vgprs_per_simd // allocated) if res.registers <= arch.max_vgprs_per_wave else 0
    if arch.sgprs_per_simd and res.sgprs:
        limits["sgprs"] = next((w for top, w in _SGPR_WAVES if res.sgprs <= top), 7)
    lds = res.dynamic_shared + (res.static_shared or 0)
    if lds:
        limits["lds"] = per_simd(arch.shared_per_sm // lds)
    limits["workgroups"] = per_simd(arch.max_workgroups_per_cu)
    waves = min(limits.values())
    limited_by = min(limits, key=limits.get)
    workgroups = waves * simds // wg_waves
    if "lds" in limits:
        workgroups = min(workgroups, arch.shared_per_sm // lds)
    workgroups = min(workgroups, arch.max_workgroups_per_cu)
    return Occupancy(workgroups, workgroups * wg_waves, waves / arch.max_waves_per_simd, limited_by, limits,
                     waves_per_simd=waves, unit="WGP" if arch.family.startswith("RDNA") else "CU")


def out_of_resources(analysis, *, more_hint: str = ""):
    """The error a config that will not launch gets (OutOfResourcesError, exit 6), or None when it fits: one
    wording for the command line and the Python API (`more_hint` adds the API's pointer to the result)."""
    from tritonscope.core.errors import OutOfResourcesError

    fit = analysis.summary.fit
    problems = fit.problems if fit else ()
    if not problems:
        return None
    spec = analysis.artifact.spec
    hint = "Use a smaller block size or fewer stages (each stage keeps another copy of the tiles in shared memory)."
    tuned = spec.autotune or {}
    if tuned.get("count", 1) > 1:  # a tuner skips a config that does not launch and times the others
        other = 2 if tuned.get("index") == 1 else 1
        hint = (f"This is config {tuned.get('index')} of {tuned['count']} of its @triton.autotune, which a tuner "
                f"would skip: try --config {other} (1 to {tuned['count']}), or `tritonscope sweep` to see which "
                "fit. Or use a smaller block size or fewer stages.")
    return OutOfResourcesError(
        f"{spec.kernel} ({spec.label()}) will not launch: " + "; ".join(problems) + ".", hint=hint + more_hint)
