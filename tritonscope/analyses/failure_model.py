"""A failure report as data: the failing pass, op and diagnostics, the fixes tried, the reproducer
(analyses/failure.py fills it in; outputs/render/failure_view.py draws it; --save keeps report_dict)."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any

SCHEMA = "tritonscope.failure"
SCHEMA_VERSION = 1

# Lines of IR shown around the failing op in the terminal (the whole module goes to --save and --emit).
EXCERPT_LINES = 40


@dataclass
class FailingOp:
    """The op a compile failed on, with the Python line it came from."""

    name: str                 # "scf.for"
    text: str                 # its IR line, locations removed
    file: str = ""
    line: int = 0
    col: int = 0
    source: str = ""          # the Python line's text
    how: str = ""             # how it was found (Triton's error points at it, or the pass works on it)
    count: int = 1            # ops of the same kind the pass works on (the first is shown)
    others: list[int] = field(default_factory=list)   # the Python lines of the others

    def where(self) -> str:
        return f"{os.path.basename(self.file)}:{self.line}" if self.file and self.line else ""


@dataclass
class Diagnostic:
    """One thing Triton printed about the failure: MLIR's error and notes, a C++ assertion, an LLVM error."""

    severity: str             # error | note | warning | remark | assertion | fatal
    message: str
    file: str = ""
    line: int = 0
    col: int = 0
    plain: str = ""           # the same in plain words, where a known pattern explains it

    def where(self) -> str:
        return f"{os.path.basename(self.file)}:{self.line}" if self.file and self.line else ""


@dataclass
class FixCheck:
    """One thing to try: the changed config, and whether it compiled."""

    label: str                # "fewer stages (num_stages=1)"
    flags: str                # how to ask for it: "-s 1", "AMDGCN_USE_BUFFER_OPS=0", "-c warp_specialize=False"
    tried: bool = False
    compiles: bool | None = None
    said: str = ""            # "compiles" / the error it fails with / why it was not tried
    seconds: float | None = None


@dataclass
class Reproducer:
    """MLIR's reproducer of the failing pass (TRITON_REPRODUCER_PATH): the IR before it and its pipeline."""

    file: str                 # the name it is saved under (--emit): "reproducer.mlir"
    pipeline: str             # "builtin.module(nvgpu-warp-specialization{...})"
    local: bool               # the failing pass alone (else the stage's whole pipeline)
    command: str              # "triton-opt --run-reproducer reproducer.mlir"
    runnable: bool            # triton-opt is here
    needs: str = ""           # what running it needs, where it cannot run here
    text: str = field(default="", repr=False)


@dataclass
class Failure:
    """A failed (or stopped) Triton compile, explained."""

    kernel: str
    file: str
    arch: str
    label: str
    triton_version: str
    error: str                                # Triton's exception: "RuntimeError: PassManager::run failed"
    stage: str = ""                           # ttir | ttgir | llir | ... ("" unknown)
    stage_function: str = ""                  # make_ttgir
    in_pass: bool = False                     # a pass failed (else Triton's Python, between or after passes)
    pass_name: str = ""
    pass_arg: str = ""
    step: int = 0                             # the pass's step in the whole compile (1-based)
    stage_step: int = 0                       # its place in its stage's pass manager (1-based)
    steps: int = 0                            # steps of the compile that ran, this one included
    where: str = ""                           # Triton's code it failed in: "triton/backends/amd/compiler.py:714"
    where_text: str = ""                      # that line
    diagnostics: list[Diagnostic] = field(default_factory=list)
    explanation: list[str] = field(default_factory=list)
    op: FailingOp | None = None
    ir_excerpt: str = ""                      # the IR the pass received, around the op ("> " marks the op)
    ir_lines: int = 0                         # lines of that IR in all
    reproducer: Reproducer | None = None
    fixes: list[FixCheck] = field(default_factory=list)
    timed_out: bool = False
    seconds: float | None = None              # the time limit, for a stopped compile
    earlier: list[tuple[str, float]] = field(default_factory=list)   # (pass, seconds) of the slowest earlier passes
    ir: str = field(default="", repr=False)   # the whole IR the pass received (--save, --emit)
    diagnose_seconds: float | None = None

    # --- words -----------------------------------------------------------
    def failed_in(self) -> str:
        """'pass NVGPUWarpSpecialization (ttgir pass 21, step 42)': the pass's place in its stage and in the
        compile; 'make_llir, after its passes (triton/backends/amd/compiler.py:714)'; '' when unknown."""
        if self.pass_name and (self.in_pass or self.timed_out):
            place = f"{self.stage} pass {self.stage_step}" if self.stage and self.stage_step else self.stage
            step = f"step {self.step}" if self.step else ""
            inner = ", ".join(x for x in (place, step) if x)
            return f"pass {self.pass_name}" + (f" ({inner})" if inner else "")
        if self.stage_function:
            after = ", after its passes" if self.pass_name else ""
            return f"{self.stage_function}{after}" + (f" ({self.where})" if self.where else "")
        return f"the {self.stage} stage" if self.stage else ""

    def one_line(self) -> str:
        """What a row or a status shows: 'pass X (ttgir pass 21, step 42) on scf.for at attn.py:19'."""
        parts = [self.failed_in()]
        if self.op is not None:
            parts.append(f"on {self.op.name}" + (f" at {self.op.where()}" if self.op.where() else ""))
        return " ".join(p for p in parts if p)

    # --- data ------------------------------------------------------------
    def to_dict(self, *, full: bool = False) -> dict[str, Any]:
        """The report as data; `full` adds the whole IR the pass received and the reproducer's text."""
        d = asdict(self)
        d["earlier"] = [list(x) for x in self.earlier]
        d["one_line"] = self.one_line()
        if not full:
            d.pop("ir")
            if d.get("reproducer"):
                d["reproducer"].pop("text")
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Failure":
        names = set(cls.__dataclass_fields__)
        kw = {k: v for k, v in d.items() if k in names}
        kw["diagnostics"] = [Diagnostic(**x) for x in kw.get("diagnostics") or []]
        kw["fixes"] = [FixCheck(**x) for x in kw.get("fixes") or []]
        kw["earlier"] = [tuple(x) for x in kw.get("earlier") or []]
        if kw.get("op"):
            kw["op"] = FailingOp(**kw["op"])
        if kw.get("reproducer"):
            kw["reproducer"] = Reproducer(**kw["reproducer"])
        return cls(**kw)


def report_dict(failure: Failure, *, full: bool = False) -> dict[str, Any]:
    """The saved form (--json, --save FILE.json): the schema tag, then the report."""
    return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "failure": failure.to_dict(full=full)}


def failure_from_report(data: Any) -> Failure | None:
    """The Failure of a saved failure report, or None when `data` is no such report."""
    if isinstance(data, dict) and data.get("schema") == SCHEMA and isinstance(data.get("failure"), dict):
        return Failure.from_dict(data["failure"])
    return None
