"""Verdicts: shared memory and occupancy."""

from __future__ import annotations

from typing import Any

from tritonscope.language.mlir_syntax import ALLOC_FROM_VALUE, RESULT_NAME
from tritonscope.analyses.explain.inputs import _METADATA_SHARED
from tritonscope.analyses.explain.model import Verdict
from tritonscope.analyses.explain.ttgir import Op, _prod
from tritonscope.analyses.explain.verdicts import _Ctx, _ev, _lines, _py_ev

# -------------------------------------------------------------- shared memory


def shared_buffers(ops: list[Op]) -> list[dict[str, Any]]:
    """Each ttg.local_alloc: shape, element bits, bytes of one copy, copies (the leading dim of a multi-buffer)."""
    out = []
    for op in ops:
        if op.name != "ttg.local_alloc":
            continue
        md = next((t for t in op.types if t.kind == "memdesc" and t.static), None)
        if md is None:
            continue
        shape = list(md.shape)
        bits = md.bits or 0
        barrier = md.elem == "i64" and len(shape) == 1
        has_source = "(tensor<" in op.text or ALLOC_FROM_VALUE.search(op.text) is not None
        copies = shape[0] if len(shape) >= 3 and not has_source else 1
        total = _prod(shape) * bits // 8
        name = RESULT_NAME.match(op.text)
        out.append({"op": op.index, "line": op.number, "python_line": op.py, "shape": shape, "elem": md.elem,
                    "name": name.group(1) if name else "",
                    "bytes": total, "copies": copies, "bytes_per_copy": total // max(1, copies),
                    "barrier": barrier, "from_registers": has_source, "encoding": md.encoding or ""})
    return out


def _block_names(ctx: _Ctx) -> list[str]:
    spec = ctx.spec
    names = [n for n in spec.constexprs if "BLOCK" in n.upper() and isinstance(spec.constexprs[n], int)
             and not isinstance(spec.constexprs[n], bool)]
    return names


def _fits(analysis) -> bool:
    fit = analysis.summary.fit
    return fit is not None and fit.ok


def verdict_shared(ctx: _Ctx) -> Verdict | None:
    s = ctx.summary
    spec = ctx.spec
    buffers = shared_buffers(ctx.ops)
    if ctx.inputs is not None and not ctx.inputs.shared:
        return _shared_from_buffers(ctx, buffers)
    dynamic = s.shared.dynamic
    limit = s.shared.limit_per_block
    if not buffers and not dynamic:
        return None
    evidence = []
    for b in buffers:
        op = ctx.ops[b["op"]]
        evidence.append(_ev(op))
        evidence.extend(_py_ev(ctx, b["python_line"]))
    staged = ctx.staged(buffers)
    per_stage = sum(b["bytes_per_copy"] for b in staged)
    facts: dict[str, Any] = {"buffers": buffers, "dynamic": dynamic, "limit": limit, "bytes_per_stage": per_stage,
                             "allocated": sum(b["bytes"] for b in buffers),
                             "num_stages": spec.num_stages if ctx.stages_known else None}
    lines = _lines([b["python_line"] for b in buffers])
    parts = [(f"{b['name']} " if b["name"] else "") + f"{'x'.join(map(str, b['shape']))}x{b['elem']} = {b['bytes']:,} B" +
             (f" ({b['copies']} copies of {b['bytes_per_copy']:,})" if b["copies"] > 1 else "")
             for b in buffers if not b["barrier"]]
    breakdown = "; ".join(parts)
    if limit is None:
        return Verdict("shared memory", "info", f"uses {dynamic:,} B of shared memory per block ({breakdown})",
                       tuple(evidence), lines, facts=facts)
    fit = s.fit
    if fit is not None and not fit.shared_per_block:
        fixes, checked, found = _shared_fixes(ctx, per_stage, dynamic, limit)
        facts["fixes"] = found
        title = (f"needs {dynamic:,} B of shared memory per block; {spec.arch} allows {limit:,}"
                 + (f" ({breakdown})" if breakdown else ""))
        return Verdict("shared memory", "bad", title, tuple(evidence), lines, fix=fixes, fix_checked=checked,
                       facts=facts)
    # It fits: how much room is left, and how many stages would still fit (an estimate from the buffers).
    room = limit - dynamic
    facts["room"] = room
    if per_stage and ctx.stages_known:
        facts["max_stages_estimate"] = spec.num_stages + room // per_stage
    title = f"{dynamic:,} of {limit:,} B of shared memory per block ({dynamic / limit:.0%})"
    if breakdown:
        title += f": {breakdown}"
    fix = ""
    if per_stage and room // per_stage >= 1:
        fix = (f"room for about {room // per_stage} more stage(s) of {per_stage:,} B "
               + (f"(num_stages up to ~{facts['max_stages_estimate']}; " if ctx.stages_known else "(")
               + "an estimate from the buffers, not compiled)")
    return Verdict("shared memory", "ok", title, tuple(evidence), lines, fix=fix, facts=facts)


def _shared_from_buffers(ctx: _Ctx, buffers: list[dict[str, Any]]) -> Verdict | str:
    """Without Triton's metadata: the TTGIR's buffers are a lower bound (scratch for layout conversions and
    reductions is added later, when the LLVM IR is made); over the arch's limit, that alone says it does not fit."""
    if not buffers:
        return ("its TTGIR allocates no shared buffer; what Triton adds later (scratch for layout conversions and "
                f"reductions) is in {_METADATA_SHARED}, which this {ctx.inputs.where} does not have")
    spec = ctx.spec
    limit = ctx.summary.shared.limit_per_block if ctx.inputs.arch else None
    allocated = sum(b["bytes"] for b in buffers)
    evidence = []
    for b in buffers:
        evidence.append(_ev(ctx.ops[b["op"]]))
        evidence.extend(_py_ev(ctx, b["python_line"]))
    staged = ctx.staged(buffers)
    per_stage = sum(b["bytes_per_copy"] for b in staged)
    breakdown = "; ".join((f"{b['name']} " if b["name"] else "") + f"{'x'.join(map(str, b['shape']))}x{b['elem']} = "
                          f"{b['bytes']:,} B" for b in buffers if not b["barrier"])
    facts: dict[str, Any] = {"buffers": buffers, "dynamic": None, "lower_bound": allocated, "limit": limit,
                             "bytes_per_stage": per_stage, "allocated": allocated,
                             "num_stages": spec.num_stages if ctx.stages_known else None}
    lines = _lines([b["python_line"] for b in buffers])
    if limit is not None and allocated > limit:
        fixes, checked, found = _shared_fixes(ctx, per_stage, allocated, limit)
        facts["fixes"] = found
        return Verdict("shared memory", "bad", f"needs at least {allocated:,} B of shared memory per block (its "
                       f"TTGIR's buffers: {breakdown}); {spec.arch} allows {limit:,}", tuple(evidence), lines,
                       fix=fixes, fix_checked=checked, facts=facts)
    title = (f"its TTGIR's buffers take {allocated:,} B of shared memory per block ({breakdown}); the whole size "
             "(with scratch for layout conversions and reductions) is in Triton's metadata, which is not here")
    return Verdict("shared memory", "info", title, tuple(evidence), lines, facts=facts)


def _shared_fixes(ctx: _Ctx, per_stage: int, dynamic: int, limit: int) -> tuple[str, bool, list[dict]]:
    """The largest num_stages and the largest block size that fit, each checked by compiling (stop at the first)."""
    spec = ctx.spec
    found: list[dict] = []
    words: list[str] = []
    checked = False
    # num_stages: start from the estimate (each stage drops one copy of the staged buffers), go down.
    if spec.num_stages > 1:
        start = spec.num_stages - 1
        if per_stage:
            need = dynamic - limit
            start = max(1, min(start, spec.num_stages - -(-need // per_stage)))
        for stages in range(start, 0, -1):
            a = ctx.compile({"num_stages": stages})
            if a is None:
                continue
            checked = True
            if _fits(a):
                found.append({"num_stages": stages, "shared": a.summary.shared.dynamic})
                note = " (no software pipelining)" if stages == 1 else ""
                words.append(f"num_stages={stages} fits: {a.summary.shared.dynamic:,} B{note}")
                break
        else:
            if checked:
                words.append("no num_stages fits at this block size")
    # block size: halve the block constexprs together until it fits.
    names = _block_names(ctx)
    if names:
        sizes = {n: spec.constexprs[n] for n in names}
        factor = 2
        while all(v // factor >= 16 for v in sizes.values()):
            change = {n: v // factor for n, v in sizes.items()}
            a = ctx.compile({"constexprs": change})
            factor *= 2
            if a is None:
                continue
            checked = True
            if _fits(a):
                label = ", ".join(f"{n}={v}" for n, v in change.items())
                found.append({"constexprs": change, "num_stages": spec.num_stages,
                              "shared": a.summary.shared.dynamic})
                words.append(f"{label} fits with num_stages={spec.num_stages}: {a.summary.shared.dynamic:,} B")
                break
    if not words:
        return ("use smaller blocks or fewer stages (each stage keeps another copy of the tiles in shared memory)",
                False, found)
    return ("; ".join(words) + (" (checked by compiling)" if checked else ""), checked, found)


# -------------------------------------------------------------- occupancy


def _blocks_with_registers(limits: dict[str, int], arch, registers: int, warps: int) -> tuple[int, str]:
    """(blocks per SM, what limits them) when a thread uses `registers`, the other limits as they are: the
    occupancy arithmetic of analyses/summary.py (a warp's registers allocated in units of 256)."""
    from tritonscope.analyses.summary import _REGISTER_UNIT

    per_warp = -(-registers * 32 // _REGISTER_UNIT) * _REGISTER_UNIT
    limits = {**limits, "registers": arch.regs_per_sm // (per_warp * warps)}
    limiter = min(limits, key=limits.get)
    return limits[limiter], limiter


def verdict_occupancy(ctx: _Ctx) -> Verdict | None:
    s = ctx.summary
    occ = s.occupancy
    if occ is None:
        return None
    from tritonscope.core.model import ARCHES

    arch = ARCHES.get(s.arch)
    threads = s.threads_per_block
    limits = ", ".join(f"{k} {v}" for k, v in sorted(occ.limits.items(), key=lambda kv: kv[1]))
    title = (f"{occ.blocks_per_sm} block(s) of {threads} threads per SM ({occ.warps_per_sm} warps, "
             f"{occ.fraction:.0%} of the SM's threads), limited by {occ.limited_by} (blocks each allows: {limits})")
    facts = {"blocks_per_sm": occ.blocks_per_sm, "warps_per_sm": occ.warps_per_sm, "fraction": occ.fraction,
             "limited_by": occ.limited_by, "limits": dict(occ.limits)}
    severity = "warn" if occ.fraction < 0.125 else ("info" if occ.fraction < 0.5 else "ok")
    fix, checked = "", False
    want = occ.blocks_per_sm + 1
    # every other limit that also allows fewer than `want` blocks: a fix for one alone would not give them
    others = {k: v for k, v in occ.limits.items() if k != occ.limited_by and v < want}
    hard = {k: v for k, v in others.items() if k in ("threads", "blocks")}
    if hard:
        k, v = next(iter(hard.items()))
        fix = (f"{want} blocks per SM cannot fit: the SM's {k} limit also allows only {v}"
               + (f" (and {occ.limited_by} {occ.limits[occ.limited_by]})" if occ.limited_by in occ.limits else ""))
        facts["also_limited_by"] = dict(others)
        evidence = [("sass", 0, f"REG:{s.registers} (cuobjdump -res-usage)")] if s.registers else []
        return Verdict("occupancy", severity, title, tuple(evidence), (), fix=fix, fix_checked=False, facts=facts)
    if others:
        facts["also_limited_by"] = dict(others)
    if arch is not None and occ.limited_by == "registers" and s.registers:
        # registers are given per warp in units of 256: the most a thread may use for `want` blocks
        per_warp = arch.regs_per_sm // (want * ctx.spec.num_warps)
        cap = (per_warp // 256) * 256 // 32
        if cap >= 24:
            # what the cap gives by the same arithmetic: often more than `want` (the next limit may be
            # threads or blocks: sm_80, 4 warps, 32 registers -> 16 blocks, limited by threads, not 13)
            gives, limiter = _blocks_with_registers(occ.limits, arch, cap, ctx.spec.num_warps)
            fix = (f"at most {cap} registers per thread (--maxnreg {cap}) gives {gives} blocks per SM"
                   + (f" (limited by {limiter})" if limiter != "registers" else ""))
            facts["maxnreg"] = cap
            facts["blocks_at_maxnreg"] = gives
            if severity != "ok":
                a = ctx.compile({"maxnreg": cap})
                if a is not None and a.summary.occupancy is not None:
                    checked = True
                    sp = a.summary.spills
                    facts["fix"] = {"maxnreg": cap, "blocks_per_sm": a.summary.occupancy.blocks_per_sm,
                                    "registers": a.summary.registers, "spill_bytes": sp.bytes}
                    fix += (f" (checked: {a.summary.registers} registers, {a.summary.occupancy.blocks_per_sm} "
                            f"blocks per SM, " + (f"spills {sp.bytes:,} B" if sp.spills else "no spills") + ")")
        else:
            fix = "fewer live values per thread: smaller tiles, or more warps sharing the tile"
        if "shared" in others and fix:
            most = arch.shared_per_sm // want - 1024
            fix += (f"; shared memory also caps it at {others['shared']}, so {want} blocks also need at most "
                    f"{most:,} B of shared memory per block (now {s.shared.dynamic:,})")
            facts["shared_for_next_block"] = most
    elif arch is not None and occ.limited_by == "shared" and s.shared.dynamic:
        most = arch.shared_per_sm // want - 1024
        fix = (f"{want} blocks per SM need at most {most:,} B of shared memory per block "
               f"(now {s.shared.dynamic:,}): fewer stages or smaller tiles")
        facts["shared_for_next_block"] = most
        if "registers" in others:
            cap = (arch.regs_per_sm // (want * ctx.spec.num_warps) // 256) * 256 // 32
            fix += (f"; registers also cap it at {others['registers']}, so {want} blocks also need at most "
                    f"{cap} registers per thread (now {s.registers}"
                    + (f"; --maxnreg {cap})" if cap >= 24 else ": fewer live values per thread)"))
            facts["maxnreg"] = cap
    elif occ.limited_by == "blocks":
        fix = "the SM's block limit: give each program more work (bigger tiles) rather than more programs"
    elif occ.limited_by == "threads":
        fix = "" if occ.fraction >= 1 else "more warps per block would keep more threads resident"
    evidence = []
    if s.registers:
        evidence.append(("sass", 0, f"REG:{s.registers} (cuobjdump -res-usage)"))
    return Verdict("occupancy", severity, title, tuple(evidence), (), fix=fix, fix_checked=checked, facts=facts)
