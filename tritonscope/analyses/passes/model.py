"""The records of a pass trace: steps, find and line events, and the trace that reads step texts back."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from tritonscope.core.errors import InputFileError, NotFoundError
from tritonscope.triton_api.remarks import Remark
from tritonscope.analyses.passes.classes import CLASS_ORDER
from tritonscope.language.dialects import dialect, pass_stages

# The stages whose pass managers are dumped, in pipeline order, and their titles in pass tables.
MLIR_STAGES = pass_stages()
STAGE_TITLES = {k: dialect(k).pass_title for k in MLIR_STAGES}


# --------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------


@dataclass
class DumpSummary:
    """What one dumped module contains, in kernel terms (no text)."""

    ops: Counter = field(default_factory=Counter)          # op kind -> count
    classes: Counter = field(default_factory=Counter)      # "async copy" -> count
    encodings: dict[str, str] = field(default_factory=dict)  # "#mma" -> "#ttg.nvidia_mma<{...}>"
    shared: int | None = None                              # module attribute ttg.shared (bytes)
    max_stage: int | None = None                           # highest loop.stage / scheduled_max_stage
    line_ops: dict[int, Counter] = field(default_factory=dict)  # Python line -> op kinds
    digest: str = ""                                       # hash of the loc-free text
    lines: int = 0                                         # loc-free lines

    def to_dict(self) -> dict:
        return {"ops": dict(self.ops), "classes": dict(self.classes), "encodings": dict(self.encodings),
                "shared": self.shared, "max_stage": self.max_stage, "lines": self.lines}


@dataclass(frozen=True)
class TextRef:
    """Where one dumped module lies: a byte range of a file."""

    path: str
    start: int
    end: int


@dataclass
class Step:
    """One pass run: the IR before it, the IR after it, and what changed.

    `name` and `arg` are as the dump header writes them (3.6: "Canonicalizer",
    "canonicalize"; 3.9: "CanonicalizerPass", "canonicalize{...}").
    `changed` is None when there is no "after" to compare with.
    """

    index: int
    name: str
    arg: str
    anchor: str                      # "builtin.module" or "tt.func @matmul_kernel"
    stage: str                       # ttir | ttgir | llir
    before: TextRef
    after: TextRef | None
    changed: bool | None = None
    lines_added: int = 0
    lines_removed: int = 0
    ops_added: dict[str, int] = field(default_factory=dict)
    ops_removed: dict[str, int] = field(default_factory=dict)
    classes: dict[str, int] = field(default_factory=dict)   # class -> delta (+/-)
    layouts_added: dict[str, str] = field(default_factory=dict)    # alias -> encoding
    layouts_removed: dict[str, str] = field(default_factory=dict)
    shared: tuple[int | None, int | None] | None = None   # (before, after) when it changed
    stages: tuple[int | None, int | None] | None = None   # pipeline stages (before, after) when changed
    seconds: float | None = None
    internal: list[str] = field(default_factory=list)     # pass-internal dumps ("LowerLoops")

    @property
    def title(self) -> str:
        return self.name

    def facts(self) -> list[str]:
        """Short phrases for what changed, in kernel terms (table cells, JSON)."""
        out: list[str] = []
        for alias, enc in self.layouts_added.items():
            if alias in self.layouts_removed:
                out.append(f"{alias} changed")
            else:
                out.append(f"{alias} assigned")
        for alias in self.layouts_removed:
            if alias not in self.layouts_added:
                out.append(f"{alias} gone")
        for cls in CLASS_ORDER:
            delta = self.classes.get(cls, 0)
            if delta:
                out.append(f"{delta:+d} {cls}")
        if self.stages:
            b, a = self.stages
            out.append(f"pipeline stages {a}" if b is None else f"pipeline stages {b}->{a}")
        if self.shared:
            b, a = self.shared
            out.append(f"shared {a} B" if b is None else f"shared {b}->{a} B")
        return out

    def to_dict(self) -> dict:
        d = asdict(self)
        d["before"] = asdict(self.before)
        d["after"] = asdict(self.after) if self.after else None
        for key in ("before", "after"):  # offsets are private to this run
            d.pop(key)
        d["facts"] = self.facts()
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Step":
        """A step of a saved pass table (no texts: `before`/`after` are None)."""
        names = {f for f in cls.__dataclass_fields__} - {"before", "after"}
        kw = {k: v for k, v in d.items() if k in names}
        for key in ("shared", "stages"):
            if kw.get(key) is not None:
                kw[key] = tuple(kw[key])
        if isinstance(kw.get("classes"), dict) and "wait" in kw["classes"]:
            # reports saved before the one class vocabulary named waits "wait"; now "async wait"
            kw["classes"] = {("async wait" if k == "wait" else k): v for k, v in kw["classes"].items()}
        return cls(before=None, after=None, **kw)  # type: ignore[arg-type]


@dataclass(frozen=True)
class FindEvent:
    """A step at which the count of a searched op or text changed."""

    step: int
    name: str
    stage: str
    kind: str        # "appears" | "removed" | "changed"
    before: int
    after: int

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class LineEvent:
    """A step that changed the ops one Python line became."""

    step: int
    name: str
    stage: str
    ops_after: dict[str, int]
    added: dict[str, int]
    removed: dict[str, int]

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class PassTrace:
    """Every pass step of one compile, its remarks, and where the texts lie.

    Use as a context manager (or call close()): the dump files live in a
    private temporary directory that is removed at the end.
    """

    kernel: str
    file: str
    arch: str
    label: str
    triton_version: str
    steps: list[Step]
    summaries: dict[TextRef, DumpSummary] = field(repr=False)
    remarks: list[Remark] = field(default_factory=list)
    compile_seconds: float | None = None
    seconds: float | None = None       # whole run: child compile + parse
    warnings: list[str] = field(default_factory=list)
    # The compile's Artifact (model.Artifact, with these remarks), so one
    # compile gives both the pass table and every stage (`compile --passes`).
    artifact: Any = field(default=None, repr=False)
    _workdir: Any = field(default=None, repr=False)

    # --- lifetime -----------------------------------------------------
    def close(self) -> None:
        if self._workdir is not None:
            self._workdir.cleanup()
            self._workdir = None

    def __enter__(self) -> "PassTrace":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def folder(self) -> str | None:
        """The private folder of a compiled trace (its dumps, Triton's stderr.txt, reproducers); None once closed
        or for a trace read from a file."""
        return getattr(self._workdir, "name", None)

    # --- queries --------------------------------------------------------
    @property
    def changed_steps(self) -> list[Step]:
        return [s for s in self.steps if s.changed]

    def step(self, which: str | int) -> Step:
        """A step by number ("37") or pass name (first changed run of it)."""
        text = str(which).strip()
        if text.isdigit():
            n = int(text)
            if not 1 <= n <= len(self.steps):
                raise NotFoundError(f"There is no step {n}: this compile has steps 1-{len(self.steps)}.",
                                    hint="Run `tritonscope passes TARGET` to see the table.")
            return self.steps[n - 1]
        low = text.lower()
        named = [s for s in self.steps if low in (s.name.lower(), s.name.lower().removesuffix("pass"),
                                                  s.arg.split("{")[0].lower())]
        if not named:
            named = [s for s in self.steps if low in s.name.lower()]
        if not named:
            from tritonscope.core.errors import close_matches

            names = sorted({s.name for s in self.steps})
            raise NotFoundError(f"No pass named {text!r} ran.{close_matches(text, names)}",
                                hint="Give a step number or one of: " + ", ".join(names[:12]) + " ...")
        changed = [s for s in named if s.changed]
        return (changed or named)[0]

    def text(self, ref: TextRef | None) -> str:
        """The module text of one dump (read back from the file by offset)."""
        if ref is None:
            return ""
        if self._workdir is None and not os.path.exists(ref.path):
            raise InputFileError("The pass dumps are gone (the trace was closed).",
                                 hint="Query the trace inside its `with` block.")
        with open(ref.path, "rb") as f:
            f.seek(ref.start)
            return f.read(ref.end - ref.start).decode(errors="replace")

    def summary_of(self, ref: TextRef | None) -> DumpSummary | None:
        return self.summaries.get(ref) if ref is not None else None

    def to_dict(self) -> dict:
        """The pass table as data.  Each remark names its `step` and `pass_name` (0 and "": pass
        unknown); each step lists its remarks as positions in `remarks`."""
        steps = []
        for s in self.steps:
            d = s.to_dict()
            d["remarks"] = [i for i, r in enumerate(self.remarks) if r.step == s.index]
            steps.append(d)
        return {
            "kernel": self.kernel, "file": self.file, "arch": self.arch, "label": self.label,
            "triton_version": self.triton_version, "compile_seconds": self.compile_seconds,
            "seconds": self.seconds, "warnings": list(self.warnings),
            "steps": steps,
            "remarks": [r.to_dict() for r in self.remarks],
        }

    @classmethod
    def from_dict(cls, d: dict) -> "PassTrace":
        """A saved pass table (to_dict()), for the table and remarks views: no texts, no Triton."""
        try:
            trace = cls(kernel=str(d.get("kernel", "?")), file=str(d.get("file", "")), arch=str(d.get("arch", "?")),
                        label=str(d.get("label", "")), triton_version=str(d.get("triton_version", "?")),
                        steps=[Step.from_dict(x) for x in d.get("steps", [])], summaries={},
                        remarks=[Remark.from_dict(r) for r in d.get("remarks", [])],
                        compile_seconds=d.get("compile_seconds"), warnings=list(d.get("warnings", [])))
        except (TypeError, ValueError, AttributeError) as e:
            raise InputFileError(f"The saved pass table is damaged: {type(e).__name__}: {e}",
                                 hint="Save it again with `tritonscope passes ... --save FILE.json`.") from e
        trace.seconds = d.get("seconds")
        return trace
