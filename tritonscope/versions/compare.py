"""Two versions' figures for one kernel -> its changes, how much worse it got, and the CI thresholds.

Sorting ("how much worse") adds up points, each documented here, so the
order can be explained: the predicted time's change in percent (when both
sides have a prediction), a third of the register change in percent, 50 for
spills that appear (20 when they grow), half the occupancy drop in percent,
10 per extra drain and 3 per extra memory wait in the main loop, a fifth of
the main loop's instruction change in percent, 10 for narrower loads, 2 per
extra layout conversion and 5 per new remark (improvements count negative).
A kernel that compiles with A and fails with B sorts first; one that fails
only with A (fixed by B) last.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from tritonscope.core.errors import UsageError

FAILS_FIRST = 1e9


@dataclass
class Change:
    what: str
    a: Any
    b: Any
    delta: str              # "+28%", "+2", "new", "lost"
    worse: bool | None      # True worse, False better, None neither (informational)
    points: float = 0.0


@dataclass
class KernelRow:
    kernel: str
    arch: str
    a: Any | None                     # SpeedFacts (None: A failed)
    b: Any | None
    a_error: dict | None = None
    b_error: dict | None = None
    changes: list[Change] = field(default_factory=list)
    score: float = 0.0
    failed_checks: list[str] = field(default_factory=list)   # the --fail-on rules it breaks
    unchecked: list[str] = field(default_factory=list)       # rules that could not be checked (a figure unknown)
    notes: list[str] = field(default_factory=list)           # how a side compiled it, when not as asked (from TTIR)

    @property
    def status(self) -> str:
        if self.a is None and self.b is None:
            return "fails in both"
        if self.b is None:
            return "fails in B"
        if self.a is None:
            return "fails in A"
        worse = any(c.worse for c in self.changes)
        better = any(c.worse is False for c in self.changes)
        if worse and better:
            return "mixed, worse" if self.score > 0 else "mixed, better" if self.score < 0 else "mixed"
        if worse:
            return "worse"
        if better:
            return "better"
        return "changed" if self.changes else "same"

    def to_dict(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "arch": self.arch, "status": self.status, "score": round(self.score, 2),
                "a": self.a.to_dict() if self.a is not None else None,
                "b": self.b.to_dict() if self.b is not None else None,
                "a_error": self.a_error, "b_error": self.b_error,
                "changes": [c.__dict__ for c in self.changes], "failed_checks": self.failed_checks,
                "unchecked": self.unchecked, "notes": self.notes,
                "predicted_ratio": predicted_ratio(self.a, self.b)}


def predicted_ratio(a, b) -> float | None:
    if a is None or b is None or not a.predicted_ms or not b.predicted_ms:
        return None
    return b.predicted_ms / a.predicted_ms


def _pct(a: float, b: float) -> float | None:
    return None if not a else (b - a) / a * 100


def _num(what: str, a, b, *, higher_is_worse: bool | None = True, pct_points: float = 0.0,
         step_points: float = 0.0) -> Change | None:
    if a is None or b is None or a == b:
        return None
    p = _pct(a, b)
    delta = f"{b - a:+g}" + (f" ({p:+.0f}%)" if p is not None else "")
    worse = None if higher_is_worse is None else ((b > a) == higher_is_worse)
    points = 0.0
    if higher_is_worse is not None:
        sign = 1 if higher_is_worse else -1
        points = sign * ((p or 0) * pct_points + (b - a) * step_points)
    return Change(what, a, b, delta, worse, points)


def compare(a, b) -> list[Change]:
    """Every change between two SpeedFacts that matters for speed (unchanged figures are left out)."""
    out: list[Change | None] = []
    ratio = predicted_ratio(a, b)
    if ratio is not None:
        p = (ratio - 1) * 100
        if abs(p) >= 0.5:
            out.append(Change("predicted time (ms)", round(a.predicted_ms, 5), round(b.predicted_ms, 5),
                              f"x{ratio:.2f} ({p:+.0f}%)", p > 0, p))
    amd = "hip" in (a.backend, b.backend)
    out += [
        _num("VGPRs" if amd else "registers", a.registers, b.registers, pct_points=1 / 3),
        _num("AGPRs", a.agprs, b.agprs, pct_points=0.0) if amd else None,
        _num("SGPRs", a.sgprs, b.sgprs, pct_points=0.0) if amd else None,
    ]
    if a.spill_bytes is not None and b.spill_bytes is not None and a.spill_bytes != b.spill_bytes:
        new = a.spill_bytes == 0 and b.spill_bytes > 0
        gone = b.spill_bytes == 0 and a.spill_bytes > 0
        pts = 50.0 if new else -50.0 if gone else (20.0 if b.spill_bytes > a.spill_bytes else -20.0)
        out.append(Change("spills / scratch (bytes per thread)", a.spill_bytes, b.spill_bytes,
                          "new" if new else "gone" if gone else f"{b.spill_bytes - a.spill_bytes:+d}", pts > 0, pts))
    out.append(_num("LDS (bytes)" if amd else "shared memory (bytes)", a.shared, b.shared, higher_is_worse=None))
    if a.occupancy is not None and b.occupancy is not None and a.occupancy != b.occupancy:
        p = _pct(a.occupancy, b.occupancy) or 0
        out.append(Change("occupancy", a.occupancy_text, b.occupancy_text, f"{p:+.0f}%", p < 0, -p * 0.5))
    la, lb = a.loop, b.loop
    if la is not None and lb is not None:
        out += [
            _num("loop: memory drains (wait for 0)", la.drains, lb.drains, step_points=10),
            _num("loop: memory waits", la.memory_waits, lb.memory_waits, step_points=3),
            _num("loop: instructions", la.lines, lb.lines, pct_points=0.2),
            _num("loop: tensor-core instructions", la.mma, lb.mma, higher_is_worse=None),
            _num("loop: buffer loads", la.buffer_loads, lb.buffer_loads, higher_is_worse=None),
            _num("loop: global loads", la.global_loads, lb.global_loads, higher_is_worse=None),
            _num("loop: async copies", la.async_copies, lb.async_copies, higher_is_worse=None),
            _num("loop: shared/LDS loads", la.shared_loads, lb.shared_loads, higher_is_worse=None),
        ]
    elif (la is None) != (lb is None):
        out.append(Change("main loop", "yes" if la else "none", "yes" if lb else "none", "changed", None))
    if a.mma != b.mma:
        out.append(Change("tensor-core instructions", _mma_text(a.mma), _mma_text(b.mma), "changed", None))
    out += [
        _num("buffer loads", a.buffer_loads, b.buffer_loads, higher_is_worse=None),
        _num("global loads", a.global_loads, b.global_loads, higher_is_worse=None),
        _num("async copies", a.async_copies, b.async_copies, higher_is_worse=None),
        _num("TTGIR async copies (pipelined loads)", a.ttgir_async_copies, b.ttgir_async_copies,
             higher_is_worse=None),
        _num("layout conversions", a.converts, b.converts, step_points=2),
    ]
    if a.load_bits != b.load_bits:
        wa, wb = max(a.load_bits, default=0), max(b.load_bits, default=0)
        worse = None if wa == wb else wb < wa
        out.append(Change("load widths (bits)", _list(a.load_bits), _list(b.load_bits), "changed", worse,
                          10.0 if worse else (-10.0 if worse is False else 0.0)))
    if a.encodings != b.encodings:
        out.append(Change("layouts", ", ".join(a.encodings), ", ".join(b.encodings), "changed", None))
    new = [r for r in b.remarks if r not in a.remarks]
    lost = [r for r in a.remarks if r not in b.remarks]
    for r in new:
        out.append(Change("new remark", None, r, "new", True, 5.0))
    for r in lost:
        out.append(Change("lost remark", r, None, "lost", False, -5.0))
    if a.no_prediction or b.no_prediction:
        why = b.no_prediction or a.no_prediction
        out.append(Change("predicted time", "no prediction", "no prediction", f"({why})", None))
    return [c for c in out if c is not None]


def _mma_text(mma: dict[str, int]) -> str:
    return ", ".join(f"{k} x{v}" for k, v in mma.items()) or "none"


def _list(values) -> str:
    return ", ".join(str(v) for v in values) or "none"


def make_row(kernel: str, arch: str, a, b, a_error=None, b_error=None) -> KernelRow:
    row = KernelRow(kernel, arch, a, b, a_error, b_error)
    if a is not None and b is not None:
        row.changes = compare(a, b)
        row.score = sum(c.points for c in row.changes)
    elif a is not None:      # compiles with A, fails with B: the worst kind of change
        row.score = FAILS_FIRST
    elif b is not None:      # fixed by B
        row.score = -FAILS_FIRST
    return row


def sort_rows(rows: list[KernelRow]) -> list[KernelRow]:
    """Worst first; kernels failing in both after the ones that got worse; stable by name."""
    def key(r: KernelRow):
        both = r.a is None and r.b is None
        return (-r.score if not both else 0.0, r.kernel, r.arch)
    return sorted(rows, key=key)


# --------------------------------------------------------------------------
# --fail-on rules
# --------------------------------------------------------------------------

# registers>+10%   spills>0   predicted>+5%   occupancy<-10%   drains>=+1
_RULE_RE = re.compile(r"^\s*([a-z_]+)\s*(>=|<=|>|<)\s*([+-]?)(\d+(?:\.\d+)?)(%?)\s*$")


def _loop(attr: str) -> Callable:
    return lambda f: getattr(f.loop, attr) if f.loop is not None else None


METRICS: dict[str, Callable] = {
    "registers": lambda f: f.registers, "vgprs": lambda f: f.registers, "agprs": lambda f: f.agprs,
    "sgprs": lambda f: f.sgprs, "spills": lambda f: f.spill_bytes, "scratch": lambda f: f.spill_bytes,
    "shared": lambda f: f.shared, "lds": lambda f: f.shared, "occupancy": lambda f: f.occupancy,
    "predicted": lambda f: f.predicted_ms, "waits": _loop("memory_waits"), "drains": _loop("drains"),
    "loop_instructions": _loop("lines"), "converts": lambda f: f.converts,
    "remarks": lambda f: len(f.remarks),
}


@dataclass(frozen=True)
class Rule:
    text: str
    metric: str
    op: str
    value: float
    relative: bool   # +10%: B's change from A in percent
    change: bool     # +N / -N: B minus A; a plain N: B's own value

    def check(self, a, b) -> bool | None:
        """True when B breaks the rule; None when a figure it needs is unknown."""
        get = METRICS[self.metric]
        vb = get(b)
        if vb is None:
            return None
        if self.change or self.relative:
            va = get(a)
            if va is None:
                return None
            if self.relative:
                if not va:
                    return None if vb == va else self._cmp(float("inf") if vb > va else float("-inf"))
                x = (vb - va) / va * 100
            else:
                x = vb - va
        else:
            x = vb
        return self._cmp(x)

    def _cmp(self, x: float) -> bool:
        return {">": x > self.value, ">=": x >= self.value, "<": x < self.value, "<=": x <= self.value}[self.op]


def parse_rule(text: str) -> Rule:
    """'registers>+10%' -> Rule; a bad rule is a UsageError (exit 2) before anything compiles."""
    m = _RULE_RE.match(text.lower())
    if not m or m.group(1) not in METRICS:
        name = m.group(1) if m else text.split(">")[0].split("<")[0].strip()
        from tritonscope.core.errors import close_matches

        raise UsageError(f"--fail-on {text!r}: expected METRIC>VALUE (e.g. registers>+10%, spills>0, "
                         f"predicted>+5%).{close_matches(name, METRICS)}",
                         hint="Metrics: " + ", ".join(METRICS) + ". +N% is B's change from A in percent, "
                              "+N/-N its change, a plain N B's own value.")
    metric, op, sign, number, pct = m.groups()
    value = float(number) * (-1 if sign == "-" else 1)
    return Rule(text, metric, op, value, relative=bool(pct), change=bool(sign) and not pct)


def apply_rules(rows: list[KernelRow], rules: list[Rule]) -> int:
    """Mark each row's broken rules; how many rows regressed (a kernel A compiles and B does not counts, and so
    does one that fails in both: a gate never passes a kernel it could not compile)."""
    bad = 0
    for r in rows:
        if r.a is not None and r.b is not None:
            for rule in rules:
                verdict = rule.check(r.a, r.b)
                if verdict is None:
                    r.unchecked.append(rule.text)
                elif verdict:
                    r.failed_checks.append(rule.text)
        elif r.a is not None and rules:
            r.failed_checks.append("compiles with A, fails with B")
        elif r.b is None and rules:
            r.failed_checks.append("fails with both versions")
        bad += bool(r.failed_checks)
    return bad
