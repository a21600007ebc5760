"""The records of an explanation: Verdict, Fix, Explanation, and how a compile's Explain section travels."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable


KINDS = ("shared memory", "occupancy", "registers", "spills", "global access", "pipelining", "tensor cores",
         "bank conflicts", "waves", "roofline")
# ok: nothing to change; info: worth knowing; warn: costs speed; bad: it will not launch
SEVERITIES = ("ok", "info", "warn", "bad")


@dataclass(frozen=True)
class Verdict:
    """One finding: what, how bad, the lines that show it, and what to change.

    evidence: (stage, line number in that stage, the line's text); stage
    "python" uses the file's line numbers.  fix_checked: tritonscope compiled
    the fix and `facts["fix"]` says what that compile showed.
    """

    kind: str
    severity: str
    title: str
    evidence: tuple[tuple[str, int, str], ...] = ()
    python_lines: tuple[int, ...] = ()
    fix: str = ""
    fix_checked: bool = False
    facts: dict = field(default_factory=dict, hash=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["evidence"] = [list(e) for e in self.evidence]
        d["python_lines"] = list(self.python_lines)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Verdict:
        return cls(d["kind"], d["severity"], d["title"], tuple(tuple(e) for e in d.get("evidence", ())),
                   tuple(d.get("python_lines", ())), d.get("fix", ""), bool(d.get("fix_checked")),
                   dict(d.get("facts", {})))


@dataclass
class Explanation:
    kernel: str
    label: str                 # the config: 'BLOCK_SIZE=128 w4 s3 sm_90a fp32'
    arch: str
    triton_version: str
    file: str
    verdicts: list[Verdict]
    python: dict[int, str] = field(default_factory=dict)  # file line -> source text, for the lines cited
    checked_compiles: int = 0  # how many fixes were compiled to check them
    # A kernel that already compiled: where it was found ("" for a compile), what that source lacks
    # (stages, the cubin, Triton's metadata), and each verdict that could not be judged, with why.
    source: str = ""
    lacks: list[str] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)  # [{"kind": ..., "reason": ...}]

    def of(self, kind: str) -> list[Verdict]:
        return [v for v in self.verdicts if v.kind == kind]

    def skip_reason(self, kind: str) -> str | None:
        return next((s["reason"] for s in self.skipped if s["kind"] == kind), None)

    def to_dict(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "label": self.label, "arch": self.arch, "triton_version": self.triton_version,
                "file": self.file, "verdicts": [v.to_dict() for v in self.verdicts],
                "python": {str(k): v for k, v in sorted(self.python.items())},
                "checked_compiles": self.checked_compiles, "source": self.source, "lacks": list(self.lacks),
                "skipped": [dict(s) for s in self.skipped]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Explanation:
        return cls(d["kernel"], d["label"], d["arch"], d["triton_version"], d.get("file", ""),
                   [Verdict.from_dict(v) for v in d["verdicts"]],
                   {int(k): v for k, v in (d.get("python") or {}).items()}, int(d.get("checked_compiles", 0)),
                   str(d.get("source") or ""), [str(x) for x in d.get("lacks") or []],
                   [{"kind": str(x["kind"]), "reason": str(x["reason"])} for x in d.get("skipped") or []])


# A compile's Explain section travels with its Analysis as plain data (Explanation.to_dict(), like the
# pass table: the field Analysis.explain), so that every report renderer, report.relative_paths and
# `show` see it.
def explanation_of(analysis) -> dict[str, Any] | None:
    """explain's verdicts an Analysis carries (`compile --explain`, a report saved with them), or None."""
    return analysis.explain


def attach_explanation(analysis, explained: dict[str, Any] | None):
    """Carry explain's verdicts (Explanation.to_dict(); None: none) into the analysis' views and reports."""
    analysis.explain = explained
    return analysis


# A fix to compile: {"num_stages": 2} | {"num_warps": 8} | {"constexprs": {"BLOCK": 64}} |
# {"args": {"K": "1008"}} | {"maxnreg": 128}.  The callable returns the Analysis, or None when it
# could not compile; it raises FixNotCheckable for a change it cannot compile at all.
Recompile = Callable[[dict], Any]


class FixNotCheckable(Exception):
    """A Recompile cannot compile this kind of change here (the fix is then marked "not checked: <reason>")."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Shape:
    """A problem shape to judge the config against: its launch grid and arguments (from the example launch)."""

    dims: tuple[int, ...]
    grid: tuple[int, ...] | None
    args: dict[str, Any]              # the runtime arguments for this shape (ints and tensor descriptions)
    flops: int | None = None          # what the example launch says the problem costs
    why: str = ""                     # grid None: why no launch is known for this shape
