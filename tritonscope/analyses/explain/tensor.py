"""Verdicts: pipelining and tensor cores."""

from __future__ import annotations

import re
from typing import Any

from tritonscope.language.dialects.python import DOT_CALL as _DOT_CALL_RE
from tritonscope.language.mlir_syntax import EXACT_PRECISION, INSTR_SHAPE, NUM_STAGES_ATTR, VERSION_MAJOR
from tritonscope.analyses.explain.memory import _fits, shared_buffers
from tritonscope.analyses.explain.model import Verdict
from tritonscope.analyses.explain.ttgir import ASYNC_COPIES, DOTS, Op, ttgir_ops
from tritonscope.analyses.explain.verdicts import _Ctx, _ev, _lines, _py_ev
from tritonscope.analyses.explain.work import dot_flops

# -------------------------------------------------------------- pipelining


def verdict_pipelining(ctx: _Ctx) -> list[Verdict]:
    out = []
    loops = [op for op in ctx.ops if op.name == "scf.for"]
    remarks = ctx.analysis.artifact.remarks or []
    buffers = {b["op"]: b for b in shared_buffers(ctx.ops)}
    copies_of = max((b["copies"] for b in buffers.values() if not b["barrier"]), default=1)
    for loop in loops:
        inside = [op for op in ctx.ops if loop.index in op.loops]
        direct = [op for op in inside if op.loops and op.loops[-1] == loop.index]
        asyncs = [op for op in inside if op.name in ASYNC_COPIES]
        plain = [op for op in direct if op.name in ("tt.load", "tt.descriptor_load")]
        dots = [op for op in inside if op.name in DOTS]
        if not asyncs and not plain:
            continue
        py_lines = sorted({op.py for op in inside if op.py is not None})
        lo, hi = (py_lines[0], py_lines[-1]) if py_lines else (loop.py, loop.py)
        mine = [r for r in remarks if lo is not None and lo <= int(r.get("line", 0)) <= (hi or lo)
                and re.search(r"pipelin|vectoriz|poor performance", str(r.get("message", "")), re.I)]
        attr = NUM_STAGES_ATTR.search(loop.text)
        evidence = [_ev(loop)] + _py_ev(ctx, loop.py)
        facts: dict[str, Any] = {"loop_line": loop.number, "python_line": loop.py, "async_copies": len(asyncs),
                                 "plain_loads": len(plain), "dots": len(dots),
                                 "num_stages": ctx.spec.num_stages if ctx.stages_known else None,
                                 "remarks": [r.get("message") for r in mine]}
        for r in mine:
            evidence.append(("remark", int(r.get("line", 0)), f"{r.get('severity')}: {r.get('message')}"))
        if asyncs and not plain:
            known = ctx.spec.num_stages if ctx.stages_known else None  # never a guessed default
            buffers = copies_of if copies_of > 1 else known
            stages = int(attr.group(1)) if attr else known
            facts.update(stages=stages, buffers=buffers)
            evidence.insert(1, _ev(asyncs[0]))
            title = (f"loop at line {loop.py} is pipelined" + (f" ({stages} stages)" if stages else "")
                     + f": {len(asyncs)} async copies" + (f" into {buffers} shared buffers per operand"
                                                          if buffers else ""))
            out.append(Verdict("pipelining", "ok" if not mine else "info", title, tuple(evidence),
                               _lines(loop.py), facts=facts))
            continue
        evidence.insert(1, _ev(plain[0]))
        evidence.extend(_py_ev(ctx, plain[0].py))
        title = (f"loop at line {loop.py} is not pipelined: {len(plain)} global load(s) inside it wait for memory "
                 "every iteration" + (f" (its tl.dot at line {dots[0].py} waits with them)" if dots else ""))
        if attr:
            facts["loop_num_stages"] = int(attr.group(1))
        fix, checked = _pipeline_fix(ctx, loop, mine, facts)
        out.append(Verdict("pipelining", "warn", title, tuple(evidence), _lines(loop.py, plain[0].py),
                           fix=fix, fix_checked=checked, facts=facts))
    return out


def _pipeline_fix(ctx: _Ctx, loop: Op, mine: list[dict], facts: dict) -> tuple[str, bool]:
    spec = ctx.spec
    text = " ".join(str(r.get("message", "")) for r in mine)
    if "Forcing a different order" in text or "transposed before SMEM" in text:
        return ("Triton disabled the pipelined load of a dot operand whose order differs from its shared layout "
                "(its remark above): store that operand in the order tl.dot wants (K-major for fp8: "
                "load a [N, K] tile and tl.trans it) so it can go to shared memory as it is", False)
    # a lone TTGIR does not say its num_stages (its metadata would): a not-pipelined loop then asks for 3 too
    known = ctx.inputs is None or "num_stages" in (ctx.analysis.artifact.metadata or {})
    if not known or spec.num_stages < 2 or facts.get("loop_num_stages", 2) < 2:
        a = ctx.compile({"num_stages": 3})
        if a is not None:
            again = [v for v in verdict_pipelining(_Ctx(a, ttgir_ops(a.parsed["ttgir"]),
                                                        a.artifact.stages.get("ttgir", ""), ctx.aliases, None,
                                                        ctx.python))
                     if v.facts.get("python_line") == loop.py]
            ok = bool(again) and again[0].severity in ("ok", "info")
            facts["fix"] = {"num_stages": 3, "pipelined": ok, "shared": a.summary.shared.dynamic,
                            "fits": _fits(a)}
            if ok:
                return (f"num_stages=3 (now {spec.num_stages if known else 'unknown'}): the loop then prefetches "
                        "with async copies; "
                        f"{a.summary.shared.dynamic:,} B of shared memory, "
                        + ("fits" if _fits(a) else "does NOT fit") + " (checked by compiling)", True)
            return ("num_stages=3 did not pipeline it either (checked): the loads are probably too narrow for "
                    "cp.async (at least 4 bytes per thread) or not used by a dot", True)
    if not known:
        return ("num_stages=3: the loop can then prefetch with async copies, when each thread copies >= 4 "
                "contiguous bytes", False)
    return ("loads that feed a tl.dot in the loop are pipelined when num_stages >= 2 and each thread copies "
            ">= 4 contiguous bytes; check the global-access verdict", False)


# -------------------------------------------------------------- tensor cores


def verdict_tensor_cores(ctx: _Ctx) -> list[Verdict]:
    dots = [op for op in ctx.ops if op.name in DOTS]
    if not dots:
        return []
    from tritonscope.language.dialects import instructions, naming

    mma_lines = []
    for key in naming("mma"):
        st = ctx.analysis.parsed.get(key)
        if st is not None:
            found = [(line, ins) for line, ins in instructions(key, st.lines) if ins.cls in ("mma", "wgmma")]
            if found:
                mma_lines = [(key, line, ins) for line, ins in found]
                break
    out = []
    by_line: dict[Any, list[Op]] = {}
    for op in dots:  # 3.9 splits one tl.dot into several (prefetched k-slices): one verdict per Python line
        by_line.setdefault(op.py if op.py is not None else op.index, []).append(op)
    for group in by_line.values():
        op = group[0]
        unit, detail = _dot_unit(op, ctx.aliases)
        operand_elems = [t.elem for t in op.types[:2]]
        tf32 = ("f32" in operand_elems and unit != "FMA"
                and not EXACT_PRECISION.search(op.text))
        here = [(k, line, ins) for k, line, ins in mma_lines if line.loc is not None and line.loc.line == op.py]
        if not tf32 and here:
            tf32 = any("tf32" in ins.op for _, _, ins in here)
        evidence = [_ev(op)]
        if here:
            k, line, ins = here[0]
            evidence.append((k, line.number, line.text.strip()))
        evidence.extend(_py_ev(ctx, op.py))
        facts = {"unit": unit, "detail": detail, "tf32": tf32, "operands": operand_elems, "ops": len(group),
                 "instruction": here[0][2].op if here else None, "flops": sum(dot_flops(o) or 0 for o in group)}
        remarks = [r for r in (ctx.analysis.artifact.remarks or []) if int(r.get("line", 0)) == op.py
                   and "MMA" in str(r.get("message", ""))]
        for r in remarks:
            evidence.append(("remark", int(r.get("line", 0)), f"{r.get('severity')}: {r.get('message')}"))
        if unit == "FMA":
            shape = [t.shape for t in op.types[:2]]
            out.append(Verdict(
                "tensor cores", "warn", f"tl.dot at line {op.py} runs on FMA (CUDA cores), not tensor cores "
                f"(operands {operand_elems[0]} {shape})", tuple(evidence), _lines(op.py),
                fix="tensor cores need every dot dimension >= 16 and fp16/bf16/fp8 (or fp32 as TF32, "
                    "input_precision='tf32') operands", facts=facts))
            continue
        title = f"tl.dot at line {op.py} uses tensor cores: {detail}"
        fix = ""
        severity = "ok"
        if tf32:
            title += "; fp32 operands are multiplied as TF32 (10-bit mantissa)"
            fix = ("TF32 is Triton's default for fp32 tl.dot: pass input_precision='ieee' for exact fp32 (FMA, far "
                   "slower) or 'tf32x3' for near-fp32 accuracy on tensor cores")
            severity = "info"
        if remarks:
            severity = "info"
            title += " (" + remarks[0].get("message", "") + ")"
        out.append(Verdict("tensor cores", severity, title, tuple(evidence), _lines(op.py), fix=fix, facts=facts))
    return out


def tensor_cores_from_code(ctx: _Ctx) -> list[Verdict] | str:
    """Without the TTGIR: the MMA instructions of the PTX (else SASS, AMDGCN), one verdict per Python line;
    or why nothing can be said (a tl.dot on FMA looks like any other math there)."""
    from tritonscope.language.dialects import instructions, naming

    found: list[tuple[str, Any, Any]] = []
    for key in naming("mma"):
        st = ctx.analysis.parsed.get(key)
        if st is not None:
            found = [(key, line, ins) for line, ins in instructions(key, st.lines) if ins.cls in ("mma", "wgmma")]
            if found:
                break
    if not found:
        return ("no TTGIR here: a tl.dot left on FMA cannot be told apart from other math in the machine code, "
                "and it has no MMA instruction")
    by_line: dict[Any, list] = {}
    for key, line, ins in found:
        by_line.setdefault(line.loc.line if line.loc is not None else None, []).append((key, line, ins))
    spread: list[int] = []   # lines the machine code's line info names but that hold no tl.dot
    if len(by_line) > 1:
        by_line, spread = _dot_lines_only(ctx, by_line, found)
    out = []
    for py, group in by_line.items():
        key, line, ins = group[0]
        op = ins.op.lower()
        unit = ("tcgen05" if "tcgen05" in op else "wgmma" if ins.cls == "wgmma" or "gmma" in op
                else "MFMA" if "mfma" in op else "WMMA" if "wmma" in op else "mma")
        tf32 = any("tf32" in i.op.lower() for _, _, i in group)
        if isinstance(py, tuple):  # line info spread over lines none of which is known to hold the tl.dot
            where = ("one or more of lines " + ", ".join(map(str, py)) + " (the machine code's line info ties them "
                     "to all of these; which one holds the tl.dot cannot be told without the Python source)")
        else:
            where = f"line {py}" if py is not None else "an unknown line (no line info)"
        title = (f"tensor cores at {where}: {len(group)} {ins.op} in the {key.upper()}"
                 + ("; fp32 operands multiplied as TF32" if tf32 else "")
                 + (f"; the line info also names line(s) {', '.join(map(str, spread))}, which hold no tl.dot"
                    if spread else "")
                 + " (no TTGIR here: read from the machine code, so a tl.dot left on FMA would not show)")
        if isinstance(py, tuple):
            evidence = [(key, line.number, line.text.strip())]
            facts = {"unit": unit, "detail": ins.op, "tf32": tf32, "instruction": ins.op, "count": len(group),
                     "from": key, "python_line": None, "line_info_lines": list(py)}
            out.append(Verdict("tensor cores", "info" if tf32 else "ok", title, tuple(evidence), (), facts=facts))
            continue
        evidence = [(key, line.number, line.text.strip())] + _py_ev(ctx, py)
        facts = {"unit": unit, "detail": ins.op, "tf32": tf32, "instruction": ins.op, "count": len(group),
                 "from": key, "python_line": py}
        out.append(Verdict("tensor cores", "info" if tf32 else "ok", title, tuple(evidence), _lines(py),
                           facts=facts))
    return out




def _dot_lines_only(ctx: _Ctx, by_line: dict[Any, list], found: list) -> tuple[dict[Any, list], list[int]]:
    """MMA instructions regrouped onto the Python lines that hold a tl.dot.

    ptxas's line info ties a dot's instructions to the lines scheduled
    around it as well (the loop header, the loads): the instructions belong
    to the lines whose source calls a dot.  The source is the kernel's
    Python stage, else the file the line info names when it is on this
    machine; without either, one group names every line, said as such.
    Returns (groups, lines the line info named that hold no dot).
    """
    source = dict(ctx.python)
    if not all(py in source for py in by_line if py is not None):
        files = {line.loc.file for _, line, _ in found if line.loc is not None and line.loc.file}
        if len(files) == 1:
            try:
                from pathlib import Path

                text = Path(next(iter(files))).read_text(encoding="utf-8", errors="replace").splitlines()
                source.update({i + 1: t for i, t in enumerate(text) if (i + 1) in by_line})
            except (OSError, ValueError):
                pass
    known = [py for py in by_line if py is not None]
    if not known or not all(py in source for py in known):
        everything = [item for group in by_line.values() for item in group]
        return {tuple(sorted(known)): everything}, []
    dots = [py for py in known if _DOT_CALL_RE.search(source[py])]
    if not dots:
        return by_line, []
    spread = sorted(py for py in known if py not in dots)
    if len(dots) == 1:
        return {dots[0]: [item for group in by_line.values() for item in group]}, spread
    return {py: by_line[py] for py in dots}, spread


def _dot_unit(op: Op, aliases: dict[str, str]) -> tuple[str, str]:
    """('mma'|'wgmma'|'tcgen05'|'MFMA'|'WMMA'|'FMA', a short description) of one dot op."""
    if op.name.startswith("ttng.tc_gen5"):
        return "tcgen05", "tcgen05.mma (Blackwell, accumulator in tensor memory)"
    if op.name == "ttng.warp_group_dot":
        return "wgmma", "wgmma (Hopper warpgroup MMA" + (", async)" if "isAsync = true" in op.text else ")")
    result = op.types[-1] if op.types else None
    enc = result.encoding if result is not None else None
    text = aliases.get(enc[1:], "") if enc and enc.startswith("#") else (enc or "")
    if "nvidia_mma" in text:
        v = VERSION_MAJOR.search(text)
        major = int(v.group(1)) if v else 2
        if major >= 5:
            return "tcgen05", "tcgen05.mma"
        if major == 3:
            return "wgmma", "wgmma (Hopper warpgroup MMA)"
        instr = INSTR_SHAPE.search(text)
        return "mma", "mma.sync" + (f" {instr.group(1).replace(' ', '')} tiles" if instr else "") + \
            f" (MMA v{major})"
    if "amd_mfma" in text:
        return "MFMA", "MFMA (AMD matrix cores)"
    if "amd_wmma" in text:
        return "WMMA", "WMMA (AMD matrix cores)"
    return "FMA", "FMA"
