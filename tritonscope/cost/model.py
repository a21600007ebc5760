"""Predicted time of one config at one problem on one GPU, from its compiled facts (features.py).

The model is a handful of throughput and latency terms, each the time the
busiest SM needs for its share of the launch, combined by a soft maximum
(the largest dominates; close ones add):

    tensor      FLOPs of its programs at the unit's rate (wgmma, mma.sync, FMA), a share of the datasheet peak
    issue       SASS instructions per program (the innermost loop's body x its trip count, the rest once per
                tile), x warps, at 4 warp-instructions per clock per SM; MUFU counts 8, shared accesses x their
                bank-conflict ways
    L2          global bytes the programs request (tiles re-read from L2), plus spill traffic
    DRAM        the compulsory bytes (each tensor once: the tile order is assumed to reuse L2) at the
                measured share of the datasheet bandwidth
    latency     per round of co-resident blocks: each main-loop iteration waits a memory latency, divided by
                the pipeline depth (num_stages - 1 with async copies); without async copies, each load-use
                wait of the SASS loop body (sass.load_waits) waits one, an L2 hit's for a pass re-reading
                what an earlier pass loaded; plus a prologue/epilogue per tile.  Where the warps of a
                block move in step (barriers and no async copies: a reduction), a block's loads follow its
                waits, so each round also takes one block's loads at the SM's L2 and DRAM rates

Wave quantization enters through programs per SM (ceil(grid / SMs)) and
rounds (ceil(programs per SM / blocks per SM)).  The constants (unit
efficiencies, latency, L2 bandwidth, DRAM share, issue share, launch
overhead, the soft-max exponent) come from calibration.json, fitted on
measured groups on one GPU, with the device, driver, Triton version and
date; a GPU without its own calibration uses those constants with its
datasheet figures, and says so.  Never reads a measured time.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, NamedTuple

from tritonscope.cost.features import Features
from tritonscope.core.gpus import Gpu, find_gpu, gpu_names, gpu_table, reference_gpu  # noqa: F401

HERE = Path(__file__).parent
TERMS = ("tensor", "issue", "shared", "L2", "DRAM", "latency")
# CDNA3 (MI300X, gfx942) in place of an NVIDIA SM's structure: AMD's CDNA3 ISA reference and CDNA 3 white paper,
# not fitted (no AMD GPU was measured).  A CU has 4 SIMDs, each 16 lanes wide: a wave64 VALU instruction takes a
# SIMD 4 clocks, so a CU issues one wavefront instruction a clock (an SM: 4 warp instructions); its scalar unit
# issues one SALU instruction a clock beside them; transcendentals run at a quarter of the VALU rate; the LDS
# serves 128 bytes a clock (a wave64 32-bit access: 2 clocks, a warp's: 1); scratch is cached in the 32 KB
# vector L1, apart from the LDS.
CDNA = {"lanes": 64, "valu_per_clock": 1.0, "salu_per_clock": 1.0, "sfu_weight": 4.0, "lds_passes": 2,
        "l1_bytes": 32768}
_VALU = ("fp", "other", "sfu", "shfl")   # cost classes the CU's VALU issues (memory, matrix and SALU apart)
REGIME_WORDS = {"tensor": "tensor-core bound", "issue": "instruction-issue bound",
                "shared": "shared-memory bound (bank conflicts)", "L2": "L2-bandwidth bound",
                "DRAM": "memory-bandwidth bound", "latency": "latency bound"}


@dataclass
class Prediction:
    """A predicted time with its breakdown; `predicted_ms` None means no prediction (`why` says why)."""

    predicted_ms: float | None
    gpu: str
    regime: str | None = None            # the dominant term: "tensor", "issue", "L2", "DRAM", "latency"
    terms_ms: dict[str, float] = field(default_factory=dict)
    expected_error: float | None = None  # typical |predicted/measured - 1| for this regime (held-out)
    bound_ms: float | None = None        # the roofline lower bound: FLOPs at the datasheet peak, compulsory bytes
    calibration: str = ""                # where the constants come from
    notes: list[str] = field(default_factory=list)
    why: str | None = None               # no prediction: the reason
    facts: dict[str, Any] = field(default_factory=dict)  # what the terms were computed from
    # AMD: from datasheet figures and NVIDIA-fitted constants only, not measured on any AMD GPU (its expected
    # error doubled); in to_dict only where set (NVIDIA's datasheet-only GPUs say so in `calibration`)
    datasheet_only: bool = False

    @property
    def ok(self) -> bool:
        return self.predicted_ms is not None

    @property
    def regime_words(self) -> str:
        return REGIME_WORDS.get(self.regime or "", self.regime or "")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if not self.datasheet_only:
            del d["datasheet_only"]
        d["regime_words"] = self.regime_words if self.ok else None
        return d


@lru_cache(maxsize=1)
def calibration() -> dict[str, Any]:
    return json.loads((HERE / "calibration.json").read_text())


def constants_for(gpu: Gpu) -> tuple[dict[str, float], str, bool]:
    """(constants, where they come from, measured on this GPU)."""
    cal = calibration()
    own = cal.get("gpus", {}).get(gpu.name)
    base = cal["constants"]
    if own:
        merged = {**base, **own.get("constants", {})}
        return merged, _provenance(own), True
    src = cal.get("fitted_on", {})
    return dict(base), (f"datasheet only: no constants measured on the {gpu.name}; efficiencies and latency "
                        f"from the {src.get('gpu', '?')} calibration ({src.get('date', '?')})"), False


def _provenance(own: dict[str, Any]) -> str:
    bits = [own.get("device"), own.get("driver") and f"driver {own['driver']}",
            own.get("triton") and f"Triton {own['triton']}", own.get("date")]
    return "calibrated on " + ", ".join(b for b in bits if b)


def _soft_max(values: list[float], p: float) -> float:
    top = max(values)
    if top <= 0:
        return 0.0
    return top * sum((v / top) ** p for v in values) ** (1.0 / p)


def _loop_waits(lp: dict[str, Any], n: int) -> float | None:
    """Load-use waits of `n` TTGIR iterations of one loop (None: not known, features before v3, or no LDG).

    A loop ptxas unrolled k times runs its body n // k times (`waits` each); the n % k iterations left (all
    of them when n < k) run in the straight code after it (its remainder), at that code's waits per load."""
    ldgs, waits = lp.get("ldgs"), lp.get("waits")
    if not ldgs or waits is None:
        return None
    k = max(1, int(lp.get("unroll") or 1))
    full, rest = divmod(max(0, n), k)
    total = float(full * waits)
    if rest:
        tail_ldgs, tail_waits = lp.get("tail_ldgs") or 0, lp.get("tail_waits") or 0
        per_load = tail_waits / tail_ldgs if tail_ldgs else waits / ldgs
        total += rest * (ldgs / k) * per_load
    return total


class _Launch(NamedTuple):
    """How the launch lands on the GPU: every term is the time the busiest SM needs for its share."""

    clock: float   # GHz
    sms: int
    warps: int     # per program
    programs: int
    per_sm: int    # programs on the busiest SM
    rounds: int    # of co-resident blocks on it
    active: int    # SMs with a program
    blocks: int    # co-resident blocks per SM


def predict_features(f: Features | Mapping[str, Any], gpu: Gpu,
                     constants: dict[str, float] | None = None) -> Prediction:
    """The model proper: compiled facts + GPU -> Prediction.  Pure arithmetic (the benchmark refits it).

    `f` is a Features, or its stored form (Features.to_dict: a sweep row's, a measured file's)."""
    f = as_features(f)
    if constants is None:
        constants, source, measured = constants_for(gpu)
    else:
        source, measured = "constants given by the caller", True
    c = constants
    notes: list[str] = []
    why = _refusal(f, gpu)
    if why:
        return Prediction(predicted_ms=None, gpu=gpu.name, why=why)
    L = _launch(f, gpu, c, notes)
    S, W, G, per_sm, clock = L.sms, L.warps, L.programs, L.per_sm, L.clock
    unit = f.dot_unit
    tensor_s, why = _tensor_seconds(f, gpu, c, L)
    if why:
        return Prediction(predicted_ms=None, gpu=gpu.name, why=why)
    loop, out = f.sass_loop or {}, f.sass_outside or {}
    iters = max(0, int(f.main_iters or 0))
    outer = max(1, int(f.outer_iters or 1))
    many = f.sass_loops or []
    amd = gpu.vendor == "amd"
    if amd:
        per_thread, wavefronts, iters = _amd_instructions(f, c, loop, out, iters, outer, many, notes)
    else:
        per_thread, wavefronts, iters = _instructions(f, c, loop, out, iters, outer, many)
    # Each of the 4 schedulers of an SM issues one instruction a clock only while it has enough ready warps to
    # cover dependent-instruction latency: below `issue_warps` resident warps, issue slows in proportion.
    warps_sm = min(L.blocks, per_sm) * W
    per_clock = CDNA["valu_per_clock"] if amd else 4
    issue_s = per_sm * per_thread * W / (per_clock * clock * 1e9 * c["issue_eff"] *
                                         min(1.0, warps_sm / c["issue_warps"]))
    if not amd and f.spill_instructions:
        # local memory (spills) is cached in L1, whose data path the shared accesses use too: a warp's LDL/STL
        # of b bytes a thread takes b / 4 wavefronts of it, every main-loop iteration
        wavefronts += c.get("spill_l1_weight", 0.0) * (f.local_bytes_loop or 0) / 4 * max(iters, 1)
    shared_s = per_sm * wavefronts * W / (clock * 1e9 * c["shared_eff"])
    spill_traffic, spill_dram = _spill_traffic(f, gpu, c, L, loop, iters, outer, notes, amd)
    bytes_p = (f.bytes_loaded_per_program or 0) + (f.bytes_stored_per_program or 0) + spill_traffic
    l2_s = per_sm * bytes_p / _l2_rate(c, clock)
    dram, miss = _dram_bytes(f, gpu, c, L, many, spill_dram, notes)
    dram_s = dram / _dram_rate(gpu, c)
    latency_s = _latency_seconds(f, c, L.rounds, many, iters, outer, miss)
    in_step = moves_in_step(f)
    if in_step:
        # The warps of a block wait at every barrier for each other, so a block's own loads and its waits
        # follow one another: only other blocks overlap them.  Each round of co-resident blocks then takes
        # at least its waits plus one block's loads at the SM's rates.
        latency_s += L.rounds * _block_load_seconds(f, gpu, c, clock, G)
        notes.append("the warps of a block move in step (barriers, no async copies): its loads and waits "
                     "overlap only other blocks'")
    serial = serial_softmax(f)
    if serial and tensor_s:
        # exp2 (MUFU) between dependent MMAs in one iteration (attention's softmax): a warp's MMAs wait for its
        # softmax and its softmax for its MMAs, so within a block they add; only other blocks overlap them
        tensor_s += issue_s * c.get("softmax_serial", 0.0) / min(L.blocks, per_sm)
        notes.append("exp2 between dependent MMAs in the main loop: the softmax's issue adds to the MMAs' time, "
                     "overlapped only by other blocks")
    terms = {"tensor": tensor_s, "issue": issue_s, "shared": shared_s, "L2": l2_s, "DRAM": dram_s, "latency": latency_s}
    body = _overlapped(f, c, terms, warps_sm)
    launch = c["launch_us"] * 1e-6
    total = body + launch
    regime = max(terms, key=terms.get)
    if L.active < S:
        notes.append(f"{G} programs for {S} SMs: {S - L.active} SMs idle")
    err = _expected_error(regime, measured)
    if amd and not measured:
        source = _amd_source(gpu, err)
    bound = _bound_seconds(f, gpu, unit)
    facts = {"programs": G, "sms": S, "programs_per_sm": per_sm, "blocks_per_sm": L.blocks, "rounds": L.rounds,
             "main_iters": iters, "instructions_per_thread": round(per_thread), "bytes_per_program": bytes_p,
             "dram_bytes": dram, "launch_ms": launch * 1e3, "dot_unit": unit, "pipelined": f.pipelined,
             "bank_ways_loop": f.bank_ways_loop, "in_step": in_step}
    return Prediction(predicted_ms=total * 1e3, gpu=gpu.name, regime=regime,
                      terms_ms={k: v * 1e3 for k, v in terms.items()}, expected_error=err,
                      bound_ms=bound * 1e3 if bound else None, calibration=source, notes=notes, facts=facts,
                      datasheet_only=amd and not measured)


def _amd_source(gpu: Gpu, err: float) -> str:
    """Where an AMD prediction's figures come from: the datasheet and NVIDIA's fit, never an AMD measurement."""
    src = calibration().get("fitted_on", {})
    return (f"datasheet only, not measured on any AMD GPU; expected error doubled (±{err:.0%}): {gpu.name} peaks "
            f"from {gpu.source.split(' (')[0]}, efficiencies, latency and L2 rate from the {src.get('gpu', '?')} "
            f"calibration ({src.get('date', '?')}), CDNA3 issue rates from AMD's CDNA3 ISA")


def _refusal(f: Features, gpu: Gpu) -> str | None:
    """Why no prediction is made before any arithmetic (wrong arch, does not fit, occupancy unknown); None: go on."""
    if not gpu.has_peaks:
        return f"the {gpu.name}'s datasheet peaks are not in the GPU table (core/gpus.json): name one with --gpu"
    if f.arch not in gpu.arches:
        return (f"compiled for {f.arch}, but the {gpu.name} runs "
                f"{'/'.join(gpu.arches)}: compile for its arch (--arch)")
    if f.fits is False:
        return ("this config does not fit the GPU (shared memory or registers): "
                "it cannot launch, so it is not ranked")
    if not f.blocks_per_sm:
        return "occupancy unknown (registers or shared memory not known)"
    return None


def _launch(f: Features, gpu: Gpu, c: dict[str, float], notes: list[str]) -> _Launch:
    """Programs per SM and rounds of co-resident blocks: wave quantization enters every term through them."""
    blocks = f.blocks_per_sm
    clock = gpu.clock_ghz
    if clock is None:
        clock = c["default_clock_ghz"]
        notes.append(f"clock not on the {gpu.name} datasheet: {clock:g} GHz assumed")
    S = gpu.sms
    W = int(f.num_warps)
    G = int(f.programs)
    per_sm = math.ceil(G / S)
    rounds = math.ceil(per_sm / blocks)
    active = min(G, S)
    return _Launch(clock, S, W, G, per_sm, rounds, active, blocks)


def _tensor_seconds(f: Features, gpu: Gpu, c: dict[str, float], L: _Launch) -> tuple[float, str | None]:
    """(seconds of the busiest SM's FLOPs at its unit's rate, why none): a GPU without the datasheet peak refuses."""
    unit = f.dot_unit
    tensor_s = 0.0
    if f.flops_per_program:
        kind = f.peak_kind or "fp32"
        peak = peak_of(gpu, "fp32" if unit == "fma" else kind)
        if peak is None:
            return tensor_s, f"no datasheet {kind} peak for the {gpu.name}"
        if kind == "tf32" and unit == "mfma" and "xf32" not in (f.mma_shape or "xf32"):
            kind = "fp32"   # an fp32 dot on AMD's matrix cores: v_mfma_*_f32 runs at the fp32 matrix rate
            peak = gpu.tflops.get(kind)
        eff = c.get(f"eff_{unit}", c["eff_mma"])
        if unit == "mma" and f.arch.startswith(("sm_90", "sm_100")):
            eff = c["eff_mma_legacy"]  # mma.sync on a GPU whose full rate needs wgmma / tcgen05
        if unit != "fma" and f.dot_kinds:
            peak, why = _mixed_peak(f.dot_kinds, gpu)
            if why:
                return tensor_s, why
        tensor_s = L.per_sm * f.flops_per_program / (peak * 1e12 * eff / L.sms)
    return tensor_s, None


def peak_of(gpu: Gpu, kind: str) -> float | None:
    """The datasheet's dense tensor rate (TFLOP/s; TOPS for int8) of this kind of dot on `gpu`, None: not given."""
    return gpu.rate(kind)


def _mixed_peak(shares: Mapping[str, float], gpu: Gpu) -> tuple[float, str | None]:
    """(the rate of dots of several kinds, why none): each kind's share of the FLOPs at its own datasheet peak
    (SageAttention's int8 QK at the INT8 rate, its fp16 PV at the fp16 rate), so the time is the sum of theirs."""
    seconds_per_tflop = 0.0
    for kind, share in shares.items():
        peak = peak_of(gpu, kind)
        if not peak:
            return 0.0, f"no datasheet {kind} peak for the {gpu.name}"
        seconds_per_tflop += share / peak
    return 1.0 / seconds_per_tflop, None


def _weighted(counts: dict[str, int], c: dict[str, float]) -> float:
    """Issue slots of these instruction classes: tensor-core ops are the tensor term's, MUFU counts sfu_weight."""
    n = 0.0
    for cls, k in counts.items():
        if cls == "mma":
            continue
        w = 1.0
        if cls == "sfu":
            w = c["sfu_weight"]
        n += k * w
    return n


def _shared_wavefronts(counts: dict[str, int], ways: int) -> float:
    """Shared-memory wavefronts of these instruction classes: each access x its bank-conflict ways."""
    return sum(counts.get(k, 0) for k in ("lds", "sts", "ldgsts")) * max(1, ways)


def _instructions(f: Features, c: dict[str, float], loop: dict[str, int], out: dict[str, int], iters: int,
                  outer: int, many: list[dict[str, Any]]) -> tuple[float, float, int]:
    """(issue slots per thread, shared wavefronts, main-loop passes): each loop body x its trip count, the rest once."""
    if many:  # sibling loops, each with its own trip count; the rest of the code outside them once
        inside: dict[str, int] = {}
        for lp in many:
            for k, v in lp["counts"].items():
                inside[k] = inside.get(k, 0) + v
        rest = {k: max(0, (loop.get(k, 0) + out.get(k, 0)) - inside.get(k, 0)) for k in set(loop) | set(out)}
        # a SASS loop that ptxas unrolled k times runs ceil(iters / k) times: its body (predicated copies
        # included) issues that often, and its loads wait for memory that often
        passes_of = [math.ceil(lp["iters"] / max(1, lp.get("unroll") or 1)) for lp in many]
        per_thread = sum(_weighted(lp["counts"], c) * n for lp, n in zip(many, passes_of)) + _weighted(rest, c)
        wavefronts = sum(_shared_wavefronts(lp["counts"], 1) * n for lp, n in zip(many, passes_of))
        return per_thread, wavefronts, sum(passes_of)
    per_thread = _weighted(loop, c) * iters + _weighted(out, c) * outer
    wavefronts = _shared_wavefronts(loop, f.bank_ways_loop or 1) * iters + \
        _shared_wavefronts(out, f.bank_ways or 1) * outer
    return per_thread, wavefronts, iters


def _amd_instructions(f: Features, c: dict[str, float], loop: dict[str, int], out: dict[str, int], iters: int,
                      outer: int, many: list[dict[str, Any]], notes: list[str]) -> tuple[float, float, int]:
    """_instructions for a CDNA CU: (wavefront instructions of the busier of its VALU and its scalar unit, which
    issue side by side, per wave; LDS passes; main-loop passes).  Memory and matrix instructions have their own
    terms (L2, shared, tensor); no bank conflicts are counted (the bank model is NVIDIA's)."""
    cc = {**c, "sfu_weight": CDNA["sfu_weight"]}

    def part(counts: dict[str, int], keep) -> dict[str, int]:
        return {k: v for k, v in counts.items() if keep(k)}

    def run(keep) -> tuple[float, float, int]:
        sub = [dict(lp, counts=part(lp["counts"], keep)) for lp in many]
        return _instructions(f, cc, part(loop, keep), part(out, keep), iters, outer, sub)

    valu, _, passes = run(lambda k: k in _VALU)
    salu = run(lambda k: k == "salu")[0] * CDNA["valu_per_clock"] / CDNA["salu_per_clock"]
    wavefronts = _instructions(f, cc, loop, out, iters, outer, many)[1] * CDNA["lds_passes"]
    notes.append("AMD CU: VALU and scalar instructions at one wavefront instruction a clock each (CDNA3); no LDS "
                 "bank conflicts counted")
    return max(valu, salu), wavefronts, passes


def _spill_traffic(f: Features, gpu: Gpu, c: dict[str, float], L: _Launch, loop: dict[str, int], iters: int,
                   outer: int, notes: list[str], amd: bool = False) -> tuple[float, float]:
    """(L2-equivalent spill bytes per program, spill bytes that overflow L1 to DRAM): spills cost where they live.
    `amd`: wavefronts of 64 lanes, scratch cached in the CU's vector L1, which the LDS does not share (CDNA)."""
    W, G, blocks = L.warps, L.programs, L.blocks
    lanes = CDNA["lanes"] if amd else 32
    threads = W * lanes
    spill_traffic = 0
    spill_dram = 0.0
    if not f.spill_instructions:
        return spill_traffic, spill_dram
    # spills inside the main loop (a GEMM's accumulators) stall every iteration: their L2-equivalent cost is
    # fitted (spill_factor); spills outside it are priced by where their bytes live (L1, else L2/DRAM)
    spill_traffic = (loop.get("ldl", 0) + loop.get("stl", 0)) * max(iters, 1) * W * lanes * 4 * c["spill_factor"]
    notes.append(f"spills: {f.spill_bytes} B per thread, counted as local-memory traffic")
    # Local memory is cached in L1: the spilled bytes of every co-resident thread stay there while they fit
    # in what shared memory leaves of it; the share that does not fit goes out to L2 and DRAM, each time a
    # LDL/STL moves it (the bytes the SASS's LDL/STL widths give).
    local = (f.local_bytes_loop or 0) * max(iters, 1) + (f.local_bytes_outside or 0) * outer
    footprint = (f.spill_bytes or 0) * threads * blocks
    l1 = CDNA["l1_bytes"] if amd else gpu.l1_bytes or c["default_l1_bytes"]
    room = l1 if amd else max(0, l1 - (f.shared or 0) * blocks)
    if local and footprint > room:
        spill_dram = (1 - room / footprint) * local * threads * G
        spill_traffic += spill_dram / G
        notes.append(f"spilled bytes of co-resident threads ({footprint // 1024} KiB per SM) overflow the "
                     f"{room // 1024} KiB of L1 left: {spill_dram / 1e6:.0f} MB of local traffic to DRAM")
    return spill_traffic, spill_dram


def _dram_bytes(f: Features, gpu: Gpu, c: dict[str, float], L: _Launch, many: list[dict[str, Any]],
                spill_dram: float, notes: list[str]) -> tuple[float, float]:
    """(DRAM bytes, share of a later pass's re-reads that misses L2): compulsory bytes, re-reads, spills."""
    G, S, blocks = L.programs, L.sms, L.blocks
    dram = max(f.compulsory_bytes or 0, 0)
    if not dram:
        dram = f.total_bytes or 0
    elif f.inplace_bytes:
        # a tensor the kernel loads and stores (a gradient written over its logits) is read and written back:
        # the compulsory bytes count it once
        dram += f.inplace_bytes
    # Sibling loops that walk the same data again (a layer norm's passes): the later passes re-read from L2
    # only while the first pass's bytes of every co-resident program fit in it; what does not fit is read
    # again from DRAM.
    reread_dram = 0.0
    miss = 0.0   # the share of a later pass's re-reads that misses the L2
    # the passes are the loops that load (a loop that only stores, liger's cross entropy's first, reads nothing
    # that a later pass could find in L2)
    passes = [lp.get("loaded") or 0 for lp in many if lp.get("loaded")]
    if len(passes) > 1:
        live = min(G, S * blocks) * passes[0]
        cap = (gpu.l2_bytes or c["default_l2_bytes"]) * c["l2_share"]
        if live > cap:
            miss = 1 - cap / live
            reread_dram = (1 - cap / live) * sum(min(b, passes[0]) for b in passes[1:]) * G
            notes.append(f"the rows of co-resident programs ({live / 2**20:.0f} MiB) exceed the L2 share "
                         f"({cap / 2**20:.0f} MiB): later passes re-read {reread_dram / 1e6:.0f} MB from DRAM")
    return dram + reread_dram + spill_dram, miss


def _latency_seconds(f: Features, c: dict[str, float], rounds: int, many: list[dict[str, Any]], iters: int,
                     outer: int, miss: float) -> float:
    """Memory latency per round of co-resident blocks: per main-loop iteration (or load-use wait), plus per tile."""
    lat = c["latency_ns"] * 1e-9
    if not (f.has_loop and iters):
        return rounds * lat * c["tile_fixed"]
    depth = max(1, int(f.num_stages or 1) - 1) if f.pipelined else 1
    per_iter = lat / depth if f.pipelined else lat * c["unpipelined_factor"]
    waits = None
    if not f.pipelined:
        waits = _unpipelined_waits(f, c, many, iters, outer, miss)
    spent = waits * lat * c["unpipelined_factor"] if waits is not None else iters * per_iter
    return rounds * (spent + outer * lat * c["tile_fixed"])


def _unpipelined_waits(f: Features, c: dict[str, float], many: list[dict[str, Any]], iters: int, outer: int,
                       miss: float) -> float | None:
    """Memory latencies a thread waits without async copies, in DRAM latencies (None: not known, count iterations)."""
    # Without async copies a thread waits a latency at each load-use wait of its loop (features v3:
    # sass.load_waits), not once per iteration: a loop whose loads ptxas interleaves with their uses
    # waits once per load, with a fraction of the bytes in flight.
    lat = c["latency_ns"] * 1e-9
    if many:
        # Sibling loops after the first re-read what it loaded (a layer norm's passes): their waits last
        # an L2 hit's latency, except for the share of the co-resident rows the L2 does not hold.
        # a loop without loads waits for no memory (0); the first loop that loads reads from DRAM
        got = [0.0 if lp.get("ldgs") == 0 and lp.get("waits") is not None else _loop_waits(lp, int(lp["iters"]))
               for lp in many]
        while len(got) > 1 and got[0] == 0.0:
            got = got[1:]
        if all(w is not None for w in got):
            lat_l2 = c.get("l2_latency_ns", c["latency_ns"]) * 1e-9
            later = lat_l2 + miss * (lat - lat_l2)
            return (got[0] + sum(got[1:]) * later / lat)
        return None
    if f.loop_waits:
        w = _loop_waits(f.loop_waits, iters // outer)
        return w * outer if w is not None else None
    return None


def _l2_rate(c: dict[str, float], clock: float) -> float:
    """Bytes a second one SM reads from L2 (the fitted rate, scaled by the clock)."""
    return c["l2_gbs_per_sm"] * 1e9 * (clock / c["ref_clock_ghz"])


def _dram_rate(gpu: Gpu, c: dict[str, float]) -> float:
    """Bytes a second the whole GPU reads from DRAM (the datasheet bandwidth at the measured share)."""
    return gpu.gbs * 1e9 * c["dram_eff"]


def as_features(f: Features | Mapping[str, Any]) -> Features:
    """The record of facts given as one or in their stored form (a dict: Features.to_dict's)."""
    return f if isinstance(f, Features) else Features.from_dict(f)


def serial_softmax(f: Features | Mapping[str, Any]) -> bool:
    """Whether the main loop runs transcendentals (MUFU: exp2) beside its MMAs: attention's softmax between the QK
    and PV dots (or dS's in the backward pass), which the GPU runs in turn, not overlapped, within a warp."""
    f = as_features(f)
    loop = f.sass_loop or {}
    if f.dot_unit in (None, "fma") or not loop.get("mma") or not loop.get("sfu"):
        return False
    if f.loop_dots is not None:
        return f.loop_dots >= 2     # a dot that reads the softmax of another (features v4)
    # facts before v4 do not count the loop's dots: attention's exp2 runs a MUFU per few elements (8 or more per
    # loop pass); a GEMM's loop has at most a couple (a persistent kernel's tile-index reciprocal)
    return loop.get("sfu", 0) >= 4


def moves_in_step(f: Features | Mapping[str, Any]) -> bool:
    """Whether the warps of one block move in step: more than one warp, no async copies (an unpipelined loop),
    and barriers in the SASS (a cross-warp reduction's BAR: the "sync" class).  The bound's facts carry no SASS,
    so a bound never counts it (less latency, more overlap: still at most the prediction)."""
    f = as_features(f)
    if f.pipelined or int(f.num_warps or 1) < 2:
        return False
    parts = [f.sass_loop or {}, f.sass_outside or {}] + \
        [lp.get("counts") or {} for lp in f.sass_loops or []]
    return any(part.get("sync", 0) > 0 for part in parts)


def _block_load_seconds(f: Features, gpu: Gpu, c: dict[str, float], clock: float, programs: int) -> float:
    """Seconds one block's loads take on an SM no other block shares: every loaded byte at the SM's L2 rate, and
    the bytes it is first to read (its share of the compulsory bytes, less what it stores) at the SM's share of
    the DRAM bandwidth instead."""
    l2_rate, dram_rate = _l2_rate(c, clock), _dram_rate(gpu, c) / gpu.sms
    loaded = f.bytes_loaded_per_program or 0
    first = max(0.0, (f.compulsory_bytes or 0) / max(1, programs) - (f.bytes_stored_per_program or 0))
    first = min(first, loaded)
    return loaded / l2_rate + first * max(0.0, 1 / dram_rate - 1 / l2_rate)


def _overlapped(f: Features, c: dict[str, float], terms: dict[str, float], warps_sm: int) -> float:
    """The terms combined by a soft maximum: they overlap as far as other warps (or async copies) run meanwhile."""
    # Terms overlap because other warps run while one waits.  Async copies (a pipelined loop) overlap memory
    # with compute in one warp; without them only co-resident warps do, so with few warps the terms add up.
    p = c["softmax_p"]
    if not f.pipelined:
        p = 1 + (p - 1) * min(1.0, warps_sm / c["overlap_warps"])
    return _soft_max(list(terms.values()), p)


def _expected_error(regime: str, measured: bool) -> float:
    """The typical held-out error of this regime; doubled where the constants were not measured on this GPU."""
    errs = calibration().get("expected_error", {})
    err = errs.get(regime, errs.get("default", 0.5))
    if not measured:
        err = err * 2
    return err


def widest_error(gpu: Gpu) -> float:
    """The largest expected error of any regime on this GPU: how far above the best prediction a config could
    still be the fastest (Pruning keeps every config whose lower bound is within it)."""
    errs = [v for v in calibration().get("expected_error", {}).values() if isinstance(v, (int, float))] or [0.5]
    return max(errs) * (1 if constants_for(gpu)[2] else 2)


def _bound_seconds(f: Features, gpu: Gpu, unit: str | None) -> float:
    """The roofline lower bound (as explain's): FLOPs at the full datasheet peak, compulsory bytes at full bandwidth."""
    bound = 0.0
    if f.total_flops:
        kind = "fp32" if unit == "fma" else (f.peak_kind or "fp32")
        peak = peak_of(gpu, kind)
        if unit != "fma" and f.dot_kinds:
            peak = _mixed_peak(f.dot_kinds, gpu)[0] or None
        if peak:
            bound = f.total_flops / (peak * 1e12)
    return max(bound, (f.compulsory_bytes or 0) / (gpu.gbs * 1e9))
