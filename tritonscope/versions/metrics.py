"""What matters for speed in one compile, as numbers two Triton versions can be compared on.

Everything is read from the Analysis (the compile's real stages): nothing is
estimated here but the predicted time, which is tritonscope/cost's (and says
"no prediction" with its reason where the model does not cover the kernel).

The main loop is the loop reader's (tritonscope/language/loops.py: the
innermost loop with the most tensor-core instructions, else the most loads
from global memory, else the most instructions), in the machine stage the
summary counts (PTX on NVIDIA, AMDGCN on AMD).  In it:

- memory waits: AMD `s_waitcnt` on the vector-memory counter (vmcnt; loadcnt
  on RDNA4/gfx12), NVIDIA `cp.async.wait_group`, `wgmma.wait_group` and
  mbarrier waits; a *drain* is a wait for zero outstanding operations
  (`vmcnt(0)`, `wait_group 0`), which stalls the loop until every load in
  flight has landed;
- loads by path: buffer loads (`buffer_load_*`, AMD) vs global loads;
  async copies (global -> shared/LDS without registers); tensor-core
  instructions (mma, wgmma, mfma, wmma).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from tritonscope.language.mlir_syntax import (  # the TTGIR patterns these figures count
    ASYNC_COPY_OPS as _TTGIR_ASYNC_RE, BUFFER_LOAD_OP as _TTGIR_BUFFER_LOAD_RE, CONVERT_LAYOUT_OP as _CONVERT_RE,
    ENCODING_KIND as _ENCODING_RE, LOAD_OP as _TTGIR_LOAD_RE,
)
from tritonscope.language.loops import TENSOR_CORE  # the loop reader's tensor-core classes


@dataclass
class LoopFacts:
    """The main loop of the machine stage: what it holds per iteration."""

    stage: str                       # "amdgcn" or "ptx"
    lines: int                       # instructions in its body
    memory_waits: int                # waits for outstanding global memory operations (see the module doc)
    drains: int                      # of those, waits for zero outstanding
    mma: int
    buffer_loads: int
    global_loads: int                # global loads not through buffer descriptors
    async_copies: int
    shared_loads: int
    shared_stores: int
    barriers: int
    waits_text: list[str] = field(default_factory=list)  # the wait instructions, as written (first 8)


@dataclass
class SpeedFacts:
    """One side's figures (None: not known for this compile)."""

    triton: str
    arch: str
    backend: str
    registers: int | None
    agprs: int | None
    sgprs: int | None
    spill_bytes: int | None
    spill_ops: int | None
    shared: int | None
    occupancy: float | None          # resident threads / the maximum (0..1)
    occupancy_text: str | None       # "4 waves/SIMD (vgprs)" / "2 blocks/SM (shared)"
    num_stages: int | None
    mma: dict[str, int]              # tensor-core instruction -> count ("mfma 16x16x16 f16": 8)
    load_bits: list[int]             # widths of global/buffer loads (bits), sorted
    buffer_loads: int                # machine stage, whole kernel
    global_loads: int
    async_copies: int
    ttgir_async_copies: int          # TTGIR: async copies the pipeliner made
    ttgir_buffer_loads: int
    ttgir_loads: int
    converts: int                    # ttg.convert_layout ops
    encodings: list[str]             # layout kinds the TTGIR uses (blocked, amd_mfma, dot_op...)
    remarks: list[str]               # Triton's remarks/warnings (messages, without file positions)
    loop: LoopFacts | None
    predicted_ms: float | None
    prediction_gpu: str | None
    no_prediction: str | None        # why there is no prediction
    instructions: int                # machine-stage instructions counted by class

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def main_loop_facts(text: str, stage: str) -> LoopFacts | None:
    """What the loop reader's main loop (tritonscope/language/loops.py) holds; None when there is no loop."""
    from tritonscope.language.dialects import dialect
    from tritonscope.language.loops import innermost_loops, main_loop

    lines = text.splitlines()
    lp = main_loop(innermost_loops(stage, lines))
    if lp is None:
        return None
    quoted = dialect(stage).quoted
    f = LoopFacts(stage=stage, lines=0, memory_waits=0, drains=0, mma=0, buffer_loads=0, global_loads=0,
                  async_copies=0, shared_loads=0, shared_stores=0, barriers=0)
    for i, ins in lp.body:
        line = lines[i]
        f.lines += 1
        cls = ins.cls
        if cls in TENSOR_CORE:
            f.mma += 1
        elif cls == "global load":
            if ins.facts.get("via") == "buffer":
                f.buffer_loads += 1
            else:
                f.global_loads += 1
        elif cls == "async copy":
            f.async_copies += 1
        elif cls == "shared load":
            f.shared_loads += 1
        elif cls == "shared store":
            f.shared_stores += 1
        elif cls == "barrier":
            f.barriers += 1
        wait = _memory_wait(ins, line, stage)
        if wait is not None:
            f.memory_waits += 1
            f.drains += int(wait)
            if len(f.waits_text) < 8:
                f.waits_text.append(quoted(line))
    return f


def _memory_wait(ins, line: str, stage: str) -> bool | None:
    """None: not a wait for global memory; else whether it waits for zero outstanding (a drain): the dialect's."""
    from tritonscope.language.dialects import dialect

    wait = dialect(stage).memory_wait
    return wait(ins, line) if wait is not None else None


def speed_facts(analysis, *, predict: bool = True) -> SpeedFacts:
    """One compile's figures (see the module doc)."""
    from tritonscope.language.dialects import instructions, machine_stage

    art = analysis.artifact
    s = analysis.summary
    stage = machine_stage(art.stages) or "ptx"
    text = art.stages.get(stage, "")
    mma: dict[str, int] = {}
    bits: set[int] = set()
    buffer = glob = async_ = counted = 0
    for _, ins in instructions(stage, text.splitlines()):
        counted += 1
        if ins.cls in TENSOR_CORE:
            mma[ins.name] = mma.get(ins.name, 0) + 1
        elif ins.cls == "global load":
            if ins.facts.get("via") == "buffer":
                buffer += 1
            else:
                glob += 1
            b = ins.facts.get("bits") or (ins.facts.get("bytes") or 0) * 8
            if b:
                bits.add(int(b))
        elif ins.cls == "async copy":
            async_ += 1
    ttgir = art.stages.get("ttgir", "")
    occ = s.occupancy
    occ_text = None
    if occ is not None:
        occ_text = (f"{occ.waves_per_simd} waves/SIMD ({occ.limited_by})" if occ.waves_per_simd is not None
                    else f"{occ.blocks_per_sm} blocks/{occ.unit} ({occ.limited_by})")
    pred_ms = gpu = why = None
    if predict:
        pred_ms, gpu, why = _prediction(analysis)
    return SpeedFacts(
        triton=art.triton_version, arch=art.spec.arch, backend=s.backend,
        registers=s.registers, agprs=s.agprs, sgprs=s.sgprs,
        spill_bytes=s.spills.bytes, spill_ops=(s.spills.instructions if s.spills.known else None),
        shared=s.shared.dynamic, occupancy=(round(occ.fraction, 4) if occ else None), occupancy_text=occ_text,
        num_stages=art.spec.num_stages, mma=mma, load_bits=sorted(bits), buffer_loads=buffer, global_loads=glob,
        async_copies=async_, ttgir_async_copies=len(_TTGIR_ASYNC_RE.findall(ttgir)),
        ttgir_buffer_loads=len(_TTGIR_BUFFER_LOAD_RE.findall(ttgir)), ttgir_loads=len(_TTGIR_LOAD_RE.findall(ttgir)),
        converts=len(_CONVERT_RE.findall(ttgir)), encodings=sorted(set(_ENCODING_RE.findall(ttgir))),
        remarks=_remark_messages(art.remarks), loop=main_loop_facts(text, stage) if text else None,
        predicted_ms=pred_ms, prediction_gpu=gpu, no_prediction=why, instructions=counted)


def _prediction(analysis) -> tuple[float | None, str | None, str | None]:
    try:
        from tritonscope.cost import predict

        p = predict(analysis)
    except Exception as e:  # the model is an extra: a failure in it is "no prediction", said with why
        return None, None, f"the cost model failed: {type(e).__name__}: {e}"
    if p.predicted_ms is None or not math.isfinite(p.predicted_ms) or p.predicted_ms <= 0:
        return None, p.gpu, p.why or "the cost model gave no time"
    # an AMD figure is from datasheet peaks, never measured: the GPU it names says so wherever it is shown
    gpu = f"{p.gpu}, datasheet only" if getattr(p, "datasheet_only", False) else p.gpu
    return p.predicted_ms, gpu, None


def _remark_messages(remarks) -> list[str]:
    out = []
    for r in remarks or []:
        sev = r.get("severity") if isinstance(r, dict) else getattr(r, "severity", None)
        msg = r.get("message") if isinstance(r, dict) else getattr(r, "message", None)
        if msg and sev != "note":
            out.append(f"{sev}: {msg}" if sev else str(msg))
    return sorted(set(out))
