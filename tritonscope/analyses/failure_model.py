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
        """The Failure of a saved report's `failure` object; a value of the wrong type (a report edited by hand,
        or damaged) is a ValueError naming the field.  Keys this version does not know are left out."""
        kw = _fields(cls, d, "failure")
        kw["diagnostics"] = [Diagnostic(**_fields(Diagnostic, x, f"failure.diagnostics[{i}]"))
                             for i, x in enumerate(_list(kw.get("diagnostics"), "failure.diagnostics"))]
        kw["fixes"] = [FixCheck(**_fields(FixCheck, x, f"failure.fixes[{i}]"))
                       for i, x in enumerate(_list(kw.get("fixes"), "failure.fixes"))]
        kw["earlier"] = [_earlier(x, f"failure.earlier[{i}]")
                         for i, x in enumerate(_list(kw.get("earlier"), "failure.earlier"))]
        kw["explanation"] = [_check(x, "str", f"failure.explanation[{i}]")
                             for i, x in enumerate(_list(kw.get("explanation"), "failure.explanation"))]
        if kw.get("op") is not None:
            kw["op"] = FailingOp(**_fields(FailingOp, kw["op"], "failure.op"))
        if kw.get("reproducer") is not None:
            kw["reproducer"] = Reproducer(**_fields(Reproducer, kw["reproducer"], "failure.reproducer"))
        return cls(**kw)


# A saved report's values, checked by the type each field is declared with (the nested lists and objects are
# checked by Failure.from_dict itself).
_TYPES = {"str": (str,), "int": (int,), "bool": (bool,), "float | None": (int, float, type(None)),
          "bool | None": (bool, type(None)), "list[int]": (list,)}
_SAID = {"str": "a string", "int": "an integer", "bool": "true or false", "float | None": "a number or null",
         "bool | None": "true, false or null"}
_NESTED = {"list[Diagnostic]", "list[str]", "list[FixCheck]", "list[tuple[str, float]]",
           "FailingOp | None", "Reproducer | None"}


def _fields(cls, d: Any, what: str) -> dict[str, Any]:
    """The fields of dataclass `cls` in the object `d`, their types checked; a field without a default must be
    there."""
    import dataclasses

    if not isinstance(d, dict):
        raise ValueError(f"{what} is {_kind(d)}, not an object")
    kw = {}
    for f in dataclasses.fields(cls):
        if f.name not in d:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ValueError(f"{what} has no '{f.name}'")
            continue
        value = d[f.name]
        if f.type == "list[int]":
            value = [_check(x, "int", f"{what}.{f.name}[{i}]") for i, x in enumerate(_list(value, f"{what}.{f.name}"))]
        elif f.type not in _NESTED:
            _check(value, f.type, f"{what}.{f.name}")
        kw[f.name] = value
    return kw


def _check(value: Any, type_name: str, what: str) -> Any:
    types = _TYPES[type_name]
    # JSON's true is not a line number (bool is an int to Python)
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        raise ValueError(f"{what} is {_kind(value)}, not {_SAID[type_name]}")
    return value


def _list(value: Any, what: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"{what} is {_kind(value)}, not a list")
    return value


def _earlier(x: Any, what: str) -> tuple[str, float]:
    if not (isinstance(x, list) and len(x) == 2 and isinstance(x[0], str)
            and isinstance(x[1], (int, float)) and not isinstance(x[1], bool)):
        raise ValueError(f"{what} is not a pass's name and its seconds")
    return (x[0], x[1])


def _kind(value: Any) -> str:
    """'int 5', 'a string', 'a list': what a damaged field holds, in a few words (never its whole text)."""
    if isinstance(value, bool) or isinstance(value, float) or (isinstance(value, int) and abs(value) < 10**18):
        return f"{type(value).__name__} {value!r}"
    said = {dict: "an object", list: "a list", str: "a string", type(None): "null"}
    return said.get(type(value), type(value).__name__)


def report_dict(failure: Failure, *, full: bool = False) -> dict[str, Any]:
    """The saved form (--json, --save FILE.json): the schema tag, then the report."""
    return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "failure": failure.to_dict(full=full)}


def failure_from_report(data: Any, source: str = "the report") -> Failure | None:
    """The Failure of a saved failure report, or None when `data` is no such report; a damaged one (a field of
    the wrong type, one missing) is an InputFileError (exit 7) naming `source` and the field."""
    if isinstance(data, dict) and data.get("schema") == SCHEMA and isinstance(data.get("failure"), dict):
        version = data.get("schema_version")
        if version != SCHEMA_VERSION or isinstance(version, bool):  # a later version's fields would be misread
            from tritonscope.core.errors import InputFileError

            shown = repr(version) if isinstance(version, (int, str)) and len(repr(version)) <= 20 else _kind(version)
            raise InputFileError(f"{source} uses failure report schema version {shown}; this "
                                 f"tritonscope reads version {SCHEMA_VERSION}.",
                                 hint="Save it again with this version: `tritonscope compile ... --save FILE.json`.")
        try:
            return Failure.from_dict(data["failure"])
        except (ValueError, TypeError, RecursionError) as e:
            from tritonscope.core.errors import InputFileError

            why = "it is nested too deeply" if isinstance(e, RecursionError) else str(e)
            raise InputFileError(f"{source} is a damaged failure report: {why}.",
                                 hint="Save it again with `tritonscope compile ... --save FILE.json`.") from None
    return None
