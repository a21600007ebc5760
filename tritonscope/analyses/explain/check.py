"""The `check` language: expectations about a compile, read against the verdicts."""

from __future__ import annotations

from typing import Any, Iterable

from tritonscope.analyses.explain.entry import CheckResult, Expectation
from tritonscope.analyses.explain.model import Explanation


# The verdict each expectation reads (a skipped one makes the expectation unknown).
VERDICT_OF = {"tensor-cores": "tensor cores", "tf32": "tensor cores", "pipelined": "pipelining",
              "stages": "pipelining", "no-spills": "spills", "spills": "spills", "fits": "shared memory",
              "shared": "shared memory", "registers": "registers", "occupancy": "occupancy", "blocks": "occupancy",
              "no-bank-conflicts": "bank conflicts", "width": "global access"}


def measure(expl: Explanation, analysis, name: str) -> tuple[Any, str]:
    """(value, words) of one expectation's quantity for a compile; (None, why) when it is not known."""
    s = analysis.summary
    why = expl.skip_reason(VERDICT_OF.get(name, ""))
    if why:
        return None, f"not known: {why}"
    if name in ("fits", "shared"):
        bound = next((v.facts["lower_bound"] for v in expl.of("shared memory") if "lower_bound" in v.facts), None)
        if bound is not None:  # only the TTGIR's buffers are known: a lower bound
            bad = any(v.severity == "bad" for v in expl.of("shared memory"))
            if name == "fits" and bad:
                return False, f"needs at least {bound:,} B of shared memory (its TTGIR's buffers)"
            return None, (f"not known: at least {bound:,} B (its TTGIR's buffers); the whole size is in Triton's "
                          "metadata, which is not here")
    if name == "tensor-cores":
        tc = expl.of("tensor cores")
        if not tc:
            return False, "no tl.dot"
        units = [v.facts.get("unit") for v in tc]
        return all(u != "FMA" for u in units), ", ".join(f"line {v.python_lines[0] if v.python_lines else '?'}: "
                                                         f"{v.facts.get('unit')}" for v in tc)
    if name == "tf32":
        tc = expl.of("tensor cores")
        return any(v.facts.get("tf32") for v in tc), ("TF32" if any(v.facts.get("tf32") for v in tc) else "no TF32")
    if name == "pipelined":
        loops = expl.of("pipelining")
        if not loops:
            return True, "no loop with global loads"
        bad = [v for v in loops if v.severity == "warn"]
        return not bad, ", ".join(f"line {v.facts.get('python_line')}: "
                                  + ("not pipelined" if v.severity == "warn" else f"{v.facts.get('stages')} stages")
                                  for v in loops)
    if name == "stages":
        loops = [v for v in expl.of("pipelining") if v.facts.get("stages")]
        if not loops:
            return 1, "no pipelined loop"
        n = min(v.facts["stages"] for v in loops)
        return n, f"{n} stages"
    if name == "no-spills":
        sp = s.spills
        if not sp.known:
            return None, "unknown (no SASS/cuobjdump)"
        return not sp.spills, ("no spills" if not sp.spills else
                               f"{sp.frame_bytes:,} B stack, {sp.stores or 0:,} STL, {sp.loads or 0:,} LDL")
    if name == "spills":
        sp = s.spills
        return (sp.bytes if sp.known else None), f"{sp.bytes or 0:,} B"
    if name == "fits":
        if s.fit is None:
            return None, "unknown arch"
        return s.fit.ok, "fits" if s.fit.ok else "; ".join(s.fit.problems)
    if name == "no-bank-conflicts":
        banks = expl.of("bank conflicts")
        worst = max((v.facts.get("ways", 1) for v in banks), default=1)
        return worst <= 1, f"worst {worst}-way" if worst > 1 else "conflict-free"
    if name == "width":
        g = expl.of("global access")
        bits = g[0].facts.get("min_bits") if g else None
        return bits, f"{bits}-bit" if bits else "no global access"
    if name == "shared":
        return s.shared.dynamic, f"{s.shared.dynamic:,} B"
    if name == "registers":
        return s.registers, f"{s.registers}" if s.registers is not None else "unknown"
    if name == "occupancy":
        if s.occupancy is None:
            return 0.0, "does not fit" if s.fit is not None else "unknown arch"
        return s.occupancy.fraction, f"{s.occupancy.fraction:.0%} ({s.occupancy.blocks_per_sm} blocks/SM, " \
                                     f"limited by {s.occupancy.limited_by})"
    if name == "blocks":
        return (s.occupancy.blocks_per_sm if s.occupancy else 0), \
            f"{s.occupancy.blocks_per_sm if s.occupancy else 0} blocks/SM"
    raise KeyError(name)


_CMP = {"<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b, "<": lambda a, b: a < b, ">": lambda a, b: a > b,
        "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


def evaluate(expl: Explanation, analysis, expectations: Iterable[Expectation]) -> list[CheckResult]:
    out = []
    for e in expectations:
        value, words = measure(expl, analysis, e.name)
        if value is None:  # `words` say why (a verdict not judged) or what is missing
            out.append(CheckResult(expl.arch, e.text, False, words,
                                   "" if words.startswith("not known") else "not measurable here"))
            continue
        held = _CMP[e.op](value, e.value) if e.op else bool(value)
        if e.negate:
            held = not held
        detail = ""
        if not held:
            related = {"tensor-cores": "tensor cores", "pipelined": "pipelining", "no-spills": "spills",
                       "spills": "spills", "width": "global access", "fits": "shared memory",
                       "shared": "shared memory", "occupancy": "occupancy", "registers": "registers",
                       "no-bank-conflicts": "bank conflicts", "stages": "pipelining", "blocks": "occupancy"}
            v = next((v for v in expl.of(related.get(e.name, "")) if v.severity in ("warn", "bad")), None) or \
                next(iter(expl.of(related.get(e.name, ""))), None)
            if v is not None and v.fix:
                detail = "fix: " + v.fix
        out.append(CheckResult(expl.arch, e.text, held, words, detail))
    return out
