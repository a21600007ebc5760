"""The summary's words, shared by the terminal, HTML and Markdown reports.

One list of (label, value) rows, written from `Analysis.summary` (the
numbers, computed once in summary.py) and the spec, so the three reports
cannot say different things.  Each renderer only decides how a row looks
(the terminal adds the instruction mix and the compile time, which HTML and
Markdown show in their own places or leave out to stay reproducible).
"""

from __future__ import annotations

from tritonscope.analyses.analysis import Analysis
from tritonscope.core.model import constexpr_words
from tritonscope.analyses.summary import SPILL_WORDS, Spills, Summary

BAD_LABELS = frozenset({"fits"})  # rows a renderer shows as a problem


def summary_rows(analysis: Analysis) -> list[tuple[str, str]]:
    """(label, value) pairs: what was compiled, for what, and what it costs."""
    a = analysis.artifact
    spec = a.spec
    s: Summary = analysis.summary
    rows = [("kernel", f"{spec.kernel}  ({spec.target})"),
            ("target", f"{s.arch} ({s.gpus})" if s.gpus else s.arch),
            ("config", ", ".join([*(f"{k}={constexpr_words(v)}" for k, v in spec.constexprs.items()),
                                  f"num_warps={spec.num_warps}", f"num_stages={spec.num_stages}"]))]
    if spec.autotune:
        rows.append(("autotune", autotune_text(spec.autotune)))
    if spec.heuristics:
        rows.append(("heuristics", f"{', '.join(spec.heuristics)} computed by @triton.heuristics from the arguments"))
    if spec.asked:
        rows.append(("import asked", asked_text(spec.asked, spec.arch, spec.gpu)))
    if spec.options:
        rows.append(("options", ", ".join(f"{k}={v}" for k, v in spec.options.items())))
    if spec.shape:
        rows.append(("problem", "x".join(map(str, spec.shape)) + (f"  {spec.dtype}" if spec.dtype else "")
                     + (f"  grid={s.grid}" if s.grid else "")))
    rows.append(("arguments", ", ".join(
        f"{x.name}: {x.type}" + (f" {{{', '.join(x.attrs)}}}" if x.attrs else "")
        + (f" = {constexpr_words(x.value)}" if x.type == "constexpr" else "") for x in a.specialization)))
    rows.append(("triton", a.triton_version
                 + ("" if s.fp_fusion is None else f", fp fusion {'on' if s.fp_fusion else 'off'}")
                 + (f"  ({', '.join(f'{k}={v}' for k, v in a.env.items())})" if a.env else "")))
    limit = f" (limit {s.shared.limit_per_block:,})" if s.shared.limit_per_block is not None else ""
    unknown = getattr(s, "unknown", None) or {}
    if s.backend == "hip":
        rows.append(("LDS", f"unknown: {unknown['shared']}" if "shared" in unknown
                     else f"{s.shared.dynamic:,} bytes per workgroup{limit}"))
        rows.append(("registers", registers_text(s)))
    else:
        rows.append(("shared memory", f"unknown: {unknown['shared']}" if "shared" in unknown
                     else f"{s.shared.dynamic:,} bytes dynamic{limit}"))
        rows.append(("registers", "unknown" if s.registers is None else f"{s.registers} per thread"))
    rows.append(("spills", spills_text(s.spills, s.backend)))
    if s.fit is not None:
        if s.fit.problems:
            rows.append(("fits", "NO: " + "; ".join(s.fit.problems)))
        elif s.occupancy is not None:
            rows.append(("occupancy", occupancy_text(s.occupancy)))
        elif "occupancy" in unknown:
            rows.append(("occupancy", f"unknown: {unknown['occupancy']}"))
    if analysis.prediction is not None:
        rows.append(("predicted", prediction_text(analysis.prediction)))
    if s.remarks:
        rows.append(("remarks", remarks_text(s.remarks, a.remarks)))
    rows.append(("hash", a.kernel_hash[:16]))
    return rows


def prediction_text(p: dict) -> str:
    """'0.0123 ms on H100 SXM, limited by DRAM bandwidth (expected error ±13%); terms: ...; roofline 0.0110 ms'."""
    if p.get("predicted_ms") is None:
        return f"no prediction on {p.get('gpu') or '?'}: {p.get('why') or 'not covered'}"
    text = f"{p['predicted_ms']:.4g} ms on {p.get('gpu')}"
    if p.get("regime_words") or p.get("regime"):
        text += f", {p.get('regime_words') or p.get('regime')}"
    if p.get("expected_error") is not None:
        text += f" (expected error ±{p['expected_error']:.0%})"
    if (p.get("facts") or {}).get("in_step"):
        text += "; a block's warps move in step (barriers, no async copies): its loads and waits take turns"
    terms = p.get("terms_ms") or {}
    if terms:
        text += "; terms " + ", ".join(f"{k} {v:.3g} ms" for k, v in sorted(terms.items(), key=lambda kv: -kv[1])[:4])
    if p.get("bound_ms"):
        text += f"; roofline bound {p['bound_ms']:.4g} ms ({p['predicted_ms'] / p['bound_ms']:.2f}x)"
    if p.get("calibration") and "datasheet" in str(p["calibration"]).lower():
        text += f"; {p['calibration']}"
    return text


def autotune_text(info: dict) -> str:
    """'config 1 of 4 (the first: a tuner times every config on a GPU and may keep another; --config N)'."""
    text = f"config {info.get('index')} of {info.get('count')}"
    if info.get("of") not in (None, info.get("count")):
        text += f" (of {info.get('of')} before pruning)"
    if info.get("chosen_by") == "predicted":
        error = info.get("expected_error")
        others = [f"{r['index']}: {r['predicted_ms']:.4g} ms" if r.get("predicted_ms") is not None
                  else f"{r['index']}: none ({r.get('why') or 'no prediction'})" for r in info.get("predictions", [])]
        text += (f", predicted fastest on {info.get('gpu')} (a prediction, not a timing"
                 + (f"; expected error ±{error * 100:.0f}%" if error else "") + f"; configs {', '.join(others)})"
                 ": a tuner times every config on a GPU and may keep another")
    else:
        how = "the first" if info.get("chosen_by") == "first" else "--config"
        text += f", {how}: a tuner times every config on a GPU and may keep another (--config N picks one)"
    if info.get("launch"):  # its prune_configs_by reads what a positional launch passes
        text += f"; bound as a launch passing {info['launch']} (its prune_configs_by reads them so)"
    if info.get("pre_hook") and info["pre_hook"] != "ran":
        text += f"; the config's pre_hook {info['pre_hook']}"
    return text


def asked_text(asked, arch: str, gpu: str | None = None) -> str:
    """'the target, the device properties: answered as sm_90a's reference GPU (NVIDIA H100 80GB HBM3, 132 SMs)'."""
    from tritonscope.core.gpus import find_gpu, reference_gpu

    if gpu:
        part = find_gpu(gpu)
        named = f"the {part.name} (--gpu, {part.sms} SMs)" if part else f"--gpu {gpu}"
        return f"{', '.join(asked)}: answered as {named}, not a real device"
    part = reference_gpu(arch)
    ref = f" ({part.device['name']}, {part.sms} SMs)" if part is not None and part.device else ""
    return f"{', '.join(asked)}: answered as {arch}'s reference GPU{ref}, not a real device"


def remarks_text(count: int, remarks: list[dict]) -> str:
    """'1 from Triton; warning at k.py:20:16: Warning: Forcing a different order ...' (the first one, cut)."""
    from tritonscope.analyses.remarks import grouped

    firsts = grouped(remarks)
    text = f"{count} from Triton"
    if firsts:
        r = firsts[0][0]
        message = r.said if len(r.said) <= 110 else r.said[:109].rstrip() + "…"
        text += f"; {r.severity} at {r.where()}: {message}"
    return text


def registers_text(s: Summary) -> str:
    """AMD: '60 VGPRs per lane (44 VGPRs + 16 AGPRs, of 512), 26 SGPRs per wave'."""
    if s.registers is None:
        return "unknown"
    text = f"{s.registers} VGPRs per lane"
    parts = []
    if s.agprs:
        parts.append(f"{s.registers - s.agprs} VGPRs + {s.agprs} AGPRs")
    if s.register_file:
        parts.append(f"of {s.register_file}")
    if parts:
        text += f" ({', '.join(parts)})"
    if s.sgprs is not None:
        text += f", {s.sgprs} SGPRs per wave"
    return text


def occupancy_text(o) -> str:
    """'2 blocks/SM, 8 warps/SM (25%), limited by shared'; AMD: '8 waves/SIMD (100%), 8 workgroups/CU, limited by vgprs'."""
    if o.waves_per_simd is not None:
        return (f"{o.waves_per_simd} waves/SIMD ({o.fraction:.0%}), {o.blocks_per_sm} workgroups/{o.unit}, "
                f"limited by {o.limited_by}")
    return f"{o.blocks_per_sm} blocks/SM, {o.warps_per_sm} warps/SM ({o.fraction:.0%}), limited by {o.limited_by}"


def spills_text(sp: Spills, backend: str = "cuda") -> str:
    """'none', 'unknown', or the stack/local bytes and the STL/LDL counts that show the spilling.

    >>> spills_text(Spills(3960, 0, 2981, 3814))
    '3,960 bytes stack frame per thread; 2,981 STL and 3,814 LDL in SASS'
    """
    if not sp.known:
        return "unknown"
    store_op, load_op, stage, where, who = SPILL_WORDS.get(backend, SPILL_WORDS["cuda"])
    frame = [f"{n:,} bytes {what} per {per}" for n, (what, per) in ((sp.stack, (where, who)),
                                                                     (sp.local, ("local memory", "thread"))) if n]
    counted = sp.stores is not None or sp.loads is not None
    if not sp.spills:
        if not frame:
            return "none"
        # a stack frame without STL/LDL is a call frame, not spilling
        return f"none ({'; '.join(frame)}, no {store_op}/{load_op} in {stage})"
    parts = frame + ([f"{sp.stores or 0:,} {store_op} and {sp.loads or 0:,} {load_op} in {stage}"]
                     if counted else [])
    return "; ".join(parts)
