"""Verdicts for a problem shape: waves over the SMs and the roofline."""

from __future__ import annotations

from typing import Any

from tritonscope.analyses.explain.memory import _block_names
from tritonscope.analyses.explain.model import Shape, Verdict
from tritonscope.analyses.explain.scalars import Scalars
from tritonscope.analyses.explain.tensor import _dot_unit
from tritonscope.analyses.explain.ttgir import DOTS, _prod
from tritonscope.analyses.explain.verdicts import _Ctx
from tritonscope.analyses.explain.work import work
from tritonscope.core.gpus import Gpu

# -------------------------------------------------------------- problem shape: waves and roofline


def gpu_peaks(arch: str, gpu: str | None = None) -> Gpu | None:
    """The GPU whose SM count and datasheet peaks bound the shape (core/gpus.json): `gpu` (--gpu) or the arch's
    reference part, as the cost model and the stand-in driver pick it; None when neither is in the table."""
    from tritonscope.core.gpus import find_gpu, reference_gpu

    return find_gpu(gpu) if gpu else reference_gpu(arch)


def _peak_kind(ctx: _Ctx) -> tuple[str, bool]:
    """Which datasheet rate bounds this kernel's math: (kind, on tensor cores)."""
    dots = [op for op in ctx.ops if op.name in DOTS]
    if not dots:
        return "fp32", False
    units = [_dot_unit(op, ctx.aliases)[0] for op in dots]
    elems = [t.elem for op in dots for t in op.types[:1]]
    elem = elems[0] if elems else "f16"
    if all(u == "FMA" for u in units):
        return "fp32", False
    if elem.startswith("f8") or "f8E" in elem:
        return "fp8", True
    if elem in ("i8", "ui8", "si8"):
        return "int8", True   # IMMA / IGMMA: the datasheet's INT8 TOPS (as the cost model prices it)
    if elem == "bf16":
        return "bf16", True
    if elem == "f32":
        return "tf32", True
    return "fp16", True


def verdict_shape(ctx: _Ctx, shape: Shape, gpu: Gpu | None,
                  occupancy_unknown: str | None = None) -> list[Verdict]:
    """Waves and the roofline for one problem shape (explain() skips both when the shape has no grid)."""
    out = []
    dims = "x".join(map(str, shape.dims))
    s = ctx.summary
    tiles = _prod(shape.grid)
    sms = gpu.sms if gpu else 0
    occ = s.occupancy.blocks_per_sm if s.occupancy and not occupancy_unknown else None
    facts: dict[str, Any] = {"shape": list(shape.dims), "grid": list(shape.grid), "tiles": tiles, "sms": sms,
                             "blocks_per_sm": occ, "gpu": gpu.name if gpu else None}
    if sms and occ:
        per_wave = sms * occ
        waves = tiles / per_wave
        full, rest = divmod(tiles, per_wave)
        last = rest / per_wave if rest else 1.0
        facts.update(per_wave=per_wave, waves=waves, last_wave_utilization=last,
                     busy_sms_first_wave=min(tiles, sms))
        if tiles < sms:
            severity = "warn"
            title = (f"shape {dims}: {tiles} tiles for {sms} SMs ({gpu.name}): {sms - tiles} SMs stay idle")
        else:
            severity = "warn" if (waves < 4 and last < 0.5) else ("info" if last < 0.75 else "ok")
            title = (f"shape {dims}: {tiles} tiles, {per_wave} run at once ({sms} SMs x {occ}): {waves:.2f} waves, "
                     f"the last one {last:.0%} full")
        fix = ""
        names = _block_names(ctx)
        if severity == "warn" and names:
            fix = ("smaller tiles (" + ", ".join(f"{n}={ctx.spec.constexprs[n] // 2}" for n in names)
                   + f" gives about {tiles * (2 ** min(2, len(names)))} tiles), split-K, or a persistent kernel "
                   "looping over tiles")
        out.append(Verdict("waves", severity, title, (), (), fix=fix, facts=facts))
    elif sms:
        out.append(Verdict("waves", "info", f"shape {dims}: {tiles} tiles for {sms} SMs (occupancy unknown"
                           + (f": it {occupancy_unknown})" if occupancy_unknown else ")"), facts=facts))
    # roofline
    w = work(ctx.ops, ctx.ttgir, shape.args, shape.grid)
    compulsory = _compulsory_bytes(shape.args)
    kind, tensor = _peak_kind(ctx)
    rf: dict[str, Any] = {"shape": list(shape.dims), "flops": w.flops, "bytes_loaded": w.bytes_loaded,
                          "bytes_stored": w.bytes_stored, "bytes_compulsory": compulsory, "peak_kind": kind,
                          "tensor_cores": tensor, "gpu": gpu.name if gpu else None,
                          "flops_per_program": w.flops_per_program, "programs": w.programs}
    if w.flops is None:
        out.append(Verdict("roofline", "info", f"shape {dims}: loop bounds not known from the arguments; no roofline",
                           facts=rf))
        return out
    rate = gpu.rate(kind) if gpu is not None else None
    if gpu is None or not rate or not gpu.gbs:
        whose = f"the {gpu.name}" if gpu is not None else ctx.spec.arch
        out.append(Verdict("roofline", "info", f"shape {dims}: {w.flops / 1e9:,.1f} GFLOP, "
                           f"{(w.bytes_loaded + w.bytes_stored) / 1e6:,.1f} MB requested; no datasheet {kind} peak for "
                           f"{whose} in the GPU table (use --gpu)", facts=rf))
        return out
    peak = rate * 1e12
    bw = gpu.gbs * 1e9
    requested = w.bytes_loaded + w.bytes_stored
    dram = min(requested, compulsory) if compulsory else requested
    # Wave-aware compute bound: a program runs on one SM, at most 1/SMs of the peak.  With equal programs
    # some SM runs at least ceil(tiles / SMs) of them; when programs differ (persistent kernels), the busiest
    # one alone takes its FLOPs at one SM's rate.
    compute_s = w.flops / peak
    if sms and w.flops_per_program:
        if Scalars(ctx.ops, ctx.ttgir, shape.args, shape.grid).pid_dependent:
            compute_s = max(compute_s, w.flops_per_program / (peak / sms))
        else:
            compute_s = max(compute_s, -(-tiles // sms) * w.flops_per_program / (peak / sms))
    memory_s = dram / bw
    bound = max(compute_s, memory_s)
    which = "compute" if compute_s >= memory_s else "memory"
    intensity = w.flops / dram if dram else float("inf")
    rf.update(peak_tflops=rate, bandwidth_gbs=gpu.gbs, bytes_dram=dram, compute_s=compute_s,
              memory_s=memory_s, bound_s=bound, bound=which, intensity=intensity,
              ridge=peak / bw, ideal_compute_s=w.flops / peak)
    title = (f"shape {dims}: {which}-bound; cannot beat {bound * 1e3:.4g} ms on {gpu.name} "
             f"({w.flops / 1e9:,.1f} {'GOP' if kind == 'int8' else 'GFLOP'} at {rate:g} "
             f"{'TOPS' if kind == 'int8' else 'TFLOP/s'} {kind}"
             + (" (wave-quantized)" if compute_s > w.flops / peak * 1.0001 else "")
             + f" = {compute_s * 1e3:.4g} ms; {dram / 1e6:,.1f} MB at {gpu.gbs:,.0f} GB/s = {memory_s * 1e3:.4g} ms)")
    out.append(Verdict("roofline", "info", title, (), (), facts=rf))
    return out


def _compulsory_bytes(args: dict[str, Any]) -> int:
    """Every tensor argument read or written once: the least DRAM traffic (0 when no tensor has a shape)."""
    from tritonscope.core.dtypes import dtype_bits
    from tritonscope.inputs.kernels import TensorArg, parse_arg_value

    total = 0
    for v in args.values():
        v = parse_arg_value(v) if isinstance(v, str) else v
        if isinstance(v, TensorArg) and v.shape:
            bits = max(8, dtype_bits(v.dtype) or 0)  # an i1 tensor holds a byte per element
            total += _prod(v.shape) * bits // 8
    return total


