"""Verdicts: registers and spills."""

from __future__ import annotations

from typing import Any

from tritonscope.language.dialects.sass import (  # the SASS patterns explain reads with
    ADDRESS as _ADDR_RE, LIVE_REGISTERS as _LRM_RE, SPILL_ACCESS as _SPILL_RE,
)
from tritonscope.analyses.explain.memory import _block_names
from tritonscope.analyses.explain.model import Verdict
from tritonscope.analyses.explain.verdicts import _Ctx, _py_ev

# -------------------------------------------------------------- registers




def live_registers(cubin: bytes) -> dict[int, int] | str:
    """SASS address -> live general-purpose registers there (`nvdisasm -lrm count`); why not, as text."""
    import tempfile
    from pathlib import Path

    from tritonscope import triton_api

    tool = triton_api.tool_path("nvdisasm")
    if not tool or not Path(tool).exists():
        return "nvdisasm was not found"
    with tempfile.TemporaryDirectory(prefix="tritonscope-lrm-") as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        try:
            text = triton_api.run_tool([tool, "-lrm", "count", "-c", str(path)], timeout=60)
        except Exception as e:  # e.g. "Invalid register count : '255'", or 3.9's sm_80 cubins
            return "nvdisasm -lrm failed: " + (str(e).strip().splitlines() or ["?"])[-1]
    return parse_live_registers(text) or "nvdisasm -lrm printed no register counts"


def parse_live_registers(text: str) -> dict[int, int]:
    out: dict[int, int] = {}
    for line in text.splitlines():
        m = _LRM_RE.search(line)
        if m:
            out[int(m.group(1), 16)] = int(m.group(2) or 0)
    return out


def verdict_registers(ctx: _Ctx, live: dict[int, int] | str | None) -> Verdict | None:
    s = ctx.summary
    if s.registers is None:
        return None
    sass = ctx.analysis.parsed.get("sass")
    facts: dict[str, Any] = {"registers": s.registers, "threads": s.threads_per_block}
    lines: tuple[int, ...] = ()
    if s.backend == "cuda":
        evidence: list[tuple[str, int, str]] = [("sass", 0, f"REG:{s.registers} (cuobjdump -res-usage)")]
        title = f"{s.registers} registers per thread"
    else:  # AMD: VGPRs per lane, from the code object's metadata (the hsaco, or the .amdgcn's metadata block)
        machine = "amdgcn" if "amdgcn" in ctx.analysis.parsed else "hsaco"
        evidence = [(machine, 0, f".vgpr_count: {s.registers} (the code object's metadata)")]
        title = f"{s.registers} VGPRs per lane"
    if isinstance(live, str):
        facts["live_unavailable"] = live
        title += f" (live registers unknown: {live})"
    elif live and sass is not None:
        peak = max(live.values()) if live else 0
        by_line: dict[int, int] = {}
        at_peak = []
        for line in sass.lines:
            m = _ADDR_RE.search(line.text)
            if not m:
                continue
            n = live.get(int(m.group(1), 16))
            if n is None:
                continue
            if n >= peak * 0.95 and line.loc is not None:
                by_line[line.loc.line] = by_line.get(line.loc.line, 0) + 1
                if n == peak:
                    at_peak.append(line)
        top = sorted(by_line, key=lambda k: -by_line[k])[:3]
        lines = tuple(top)
        facts.update(live_peak=peak, peak_lines={str(k): by_line[k] for k in top})
        title += f"; at most {peak} live at once"
        if top:
            title += " (around line " + ", ".join(map(str, top)) + ")"
        for line in at_peak[:2]:
            evidence.append(("sass", line.number, line.text.strip()))
        for ln in top:
            evidence.extend(_py_ev(ctx, ln))
    severity = "info"
    fix = ""
    if s.registers >= 224:
        severity = "warn"
        fix = ("near the 255-register ceiling: smaller tiles (the accumulator is BLOCK_M x BLOCK_N / threads "
               "registers per thread) or more warps")
    return Verdict("registers", severity, title, tuple(evidence), lines, fix=fix, facts=facts)


# -------------------------------------------------------------- spills



def verdict_spills(ctx: _Ctx) -> Verdict | None:
    sp = ctx.summary.spills
    if not sp.known:
        return None
    if not sp.spills:
        return Verdict("spills", "ok", "no spills" + (f" (stack frame {sp.frame_bytes} B, no STL/LDL)"
                                                      if sp.frame_bytes else ""),
                       facts={"stack": sp.stack, "local": sp.local, "stores": sp.stores, "loads": sp.loads})
    sass = ctx.analysis.parsed.get("sass")
    by_line: dict[int, list[int]] = {}
    first: dict[int, Any] = {}
    for line in (sass.lines if sass else ()):
        m = _SPILL_RE.search(line.text)
        if m and line.loc is not None:
            counts = by_line.setdefault(line.loc.line, [0, 0])
            counts[0 if m.group(1) == "STL" else 1] += 1
            first.setdefault(line.loc.line, line)
    top = sorted(by_line, key=lambda k: -sum(by_line[k]))[:4]
    evidence = [("sass", 0, f"STACK:{sp.stack} LOCAL:{sp.local} (cuobjdump -res-usage)")]
    for ln in top[:2]:
        evidence.append(("sass", first[ln].number, first[ln].text.strip()))
    for ln in top:
        evidence.extend(_py_ev(ctx, ln))
    title = (f"spills: {sp.frame_bytes:,} B stack frame per thread, {sp.stores or 0:,} STL and {sp.loads or 0:,} LDL"
             + (" (most at line " + ", ".join(f"{k}: {by_line[k][0]} STL/{by_line[k][1]} LDL" for k in top[:3]) + ")"
                if top else ""))
    facts = {"stack": sp.stack, "local": sp.local, "stores": sp.stores, "loads": sp.loads,
             "lines": {str(k): {"stl": v[0], "ldl": v[1]} for k, v in by_line.items()}}
    fix, checked = _spill_fix(ctx, facts)
    return Verdict("spills", "warn", title, tuple(evidence), tuple(top), fix=fix, fix_checked=checked, facts=facts)


def _spill_fix(ctx: _Ctx, facts: dict) -> tuple[str, bool]:
    """More warps share the tile (fewer values per thread): compile 2x, 4x, 8x the warps, stop at the first without spills."""
    spec = ctx.spec
    if ctx.summary.fit is not None and not ctx.summary.fit.ok:
        return ("make the config fit first (see shared memory); then more warps or smaller tiles "
                "(fewer values per thread)", False)
    tried = []
    warps = spec.num_warps
    while warps < 16:
        warps *= 2
        a = ctx.compile({"num_warps": warps})
        if a is None:
            continue
        sp = a.summary.spills
        tried.append({"num_warps": warps, "spill_bytes": sp.bytes, "registers": a.summary.registers})
        if sp.known and not sp.spills:
            facts["fix"] = tried[-1]
            return (f"num_warps={warps} (each thread holds 1/{warps // spec.num_warps} as much): no spills, "
                    f"{a.summary.registers} registers (checked by compiling)", True)
    facts["fix_tried"] = tried
    names = _block_names(ctx)
    if names:
        return ("smaller " + ", ".join(names) + " (more warps alone did not remove the spills"
                + (": tried " + ", ".join(f"w{t['num_warps']} {t['spill_bytes']:,} B" for t in tried) if tried else "")
                + ")", bool(tried))
    return "fewer live values per thread: smaller tiles or more warps", bool(tried)
