"""explain(analysis): every verdict family in order, and the fixes they propose."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace
from typing import Any, Iterable

from tritonscope.language.dialects import compiled, is_source, stage_keys
from tritonscope.language.mlir_syntax import alias_table
from tritonscope.analyses.explain.access import global_from_ptx, triton_bank_conflicts, verdict_bank_conflicts, verdict_global
from tritonscope.analyses.explain.inputs import _CUBIN, _METADATA_SHARED, _TTGIR, _occupancy_unknown, inputs_of
from tritonscope.analyses.explain.memory import verdict_occupancy, verdict_shared
from tritonscope.analyses.explain.model import Explanation, Recompile, Shape, Verdict
from tritonscope.analyses.explain.registers import live_registers, verdict_registers, verdict_spills
from tritonscope.analyses.explain.roofline import gpu_peaks, verdict_shape
from tritonscope.analyses.explain.tensor import tensor_cores_from_code, verdict_pipelining, verdict_tensor_cores
from tritonscope.analyses.explain.ttgir import ttgir_ops
from tritonscope.analyses.explain.verdicts import _Ctx

# ==========================================================================
# Entry point
# ==========================================================================


def python_lines(analysis) -> dict[int, str]:
    """File line -> source text of the kernel function."""
    art = analysis.artifact
    src = art.stages.get("python", "")
    return {art.python_first_line + i: text for i, text in enumerate(src.splitlines())}


def lacks_of(analysis) -> list[str]:
    """What a kernel found on disk lacks, in pipeline order: stages, the cubin, Triton's metadata."""
    art = analysis.artifact
    machine = "amdgcn" if analysis.summary.backend == "hip" or "amdgcn" in art.stages else None
    out = [] if "python" in art.stages else ["the Python source"]
    from tritonscope.inputs.sources.model import DERIVED  # (here: the sources package is not loaded for a compile)

    derived = set(DERIVED.values())  # made from the binary (SASS): asked for after it
    made = compiled(stage_keys("hip" if machine else "cuda"))
    out += [k for k in made if k not in derived and k not in art.stages]
    if art.resources.registers is None:
        out.append("the cubin" if not machine else "the code object's resources")
    out += [k for k in made if k in derived and k not in art.stages]
    if "shared" not in (art.metadata or {}):
        out.append("Triton's metadata (.json)")
    return out


def explain(analysis, *, recompile: Recompile | None = None, shapes: Iterable[Shape] = (), gpu: str | None = None,
            cubin: bytes | None = None, triton_banks: bool = True, source: str = "",
            where: str = "compile") -> Explanation:
    """Every verdict for one compile.  `recompile` checks fixes (None: fixes stay unchecked);
    `cubin` gives live registers (nvdisasm -lrm); `triton_banks` asks Triton for its bank-conflict count.

    `source` names a kernel found on disk ("capture tests/data/capture, kernel 01c9a1bc..."), and `where`
    words it in reasons ("stage file"): a verdict whose input that source lacks is skipped, with the reason.
    """
    ttgir_stage = analysis.parsed.get("ttgir")
    ttgir = analysis.artifact.stages.get("ttgir", "")
    ops = ttgir_ops(ttgir_stage) if ttgir_stage is not None else []
    inp = inputs_of(analysis, where)
    ctx = _Ctx(analysis, ops, ttgir, alias_table(ttgir), recompile, python_lines(analysis), inputs=inp)
    verdicts: list[Verdict] = []
    skipped: list[dict[str, str]] = []

    def skip(kind: str, reason: str) -> None:
        item = {"kind": kind, "reason": reason}
        if item not in skipped:  # each shape of several without a launch says so once
            skipped.append(item)

    def add(kind: str, fn, *args) -> None:
        ctx.refused = []
        got = fn(ctx, *args)
        if got is None:
            return
        if isinstance(got, str):  # a reason: nothing can be judged
            skip(kind, got)
            return
        for v in got if isinstance(got, list) else [got]:
            if ctx.refused and v.fix:  # a fix it wanted to compile, but could not here
                why = "; ".join(dict.fromkeys(ctx.refused))
                v = replace(v, fix=v.fix + (f"; other candidates not checked: {why}" if v.fix_checked
                                            else f" (not checked: {why})"), facts={**v.facts, "not_checked": why})
            verdicts.append(v)

    def need(kind: str, reason: str | None, fn, *args) -> None:
        if reason:
            skip(kind, reason)
        else:
            add(kind, fn, *args)

    shared_unknown = None if inp.ttgir or inp.shared else inp.needs(_METADATA_SHARED, f"{_TTGIR} (its buffers)")
    need("shared memory", shared_unknown, verdict_shared)
    occupancy_unknown = _occupancy_unknown(inp)
    need("occupancy", occupancy_unknown, verdict_occupancy)
    live = live_registers(cubin) if cubin and inp.registers else None
    need("registers", None if inp.registers else inp.needs(_CUBIN), verdict_registers, live)
    need("spills", None if inp.spills else inp.needs("the cubin or the SASS (STACK and LOCAL, STL and LDL)"),
         verdict_spills)
    if inp.ttgir and inp.ptx:
        add("global access", verdict_global)
    elif inp.ptx:
        add("global access", global_from_ptx)
    elif inp.backend != "cuda":
        skip("global access", "access widths are read from the PTX, and an AMD target has none (its AMDGCN "
                              "widths are not judged)")
    else:
        skip("global access", inp.needs("the PTX (the access widths)" + ("" if inp.ttgir else
                                                                          f" and {_TTGIR} (the tiles)")))
    need("pipelining", None if inp.ttgir else inp.needs(f"{_TTGIR} (its loops and async copies)"),
         verdict_pipelining)
    if inp.ttgir:
        add("tensor cores", verdict_tensor_cores)
    elif inp.ptx or inp.machine:
        add("tensor cores", tensor_cores_from_code)
    else:
        skip("tensor cores", inp.needs(f"{_TTGIR} (its tl.dot ops) or the PTX (its MMA instructions)"))
    if inp.ttgir:
        counts = None
        if triton_banks:
            try:
                counts = triton_bank_conflicts(ctx)
            except Exception:
                counts = None
        add("bank conflicts", verdict_bank_conflicts, counts)
    else:
        skip("bank conflicts", inp.needs(f"{_TTGIR} (its register and shared layouts)"))
    peaks = gpu_peaks(analysis.artifact.spec.arch, gpu)
    for shape in shapes:
        dims = "x".join(map(str, shape.dims))
        if shape.grid is None:
            why = shape.why or "no launch grid is known (give the kernel an EXAMPLES entry whose launch returns a grid)"
            skip("waves", f"shape {dims}: {why}")
            skip("roofline", f"shape {dims}: {why}")
        elif not inp.ttgir:
            skip("waves", f"shape {dims}: " + inp.needs(f"{_TTGIR} (its dots, loads and loops)"))
            skip("roofline", f"shape {dims}: " + inp.needs(f"{_TTGIR} (its dots, loads and loops)"))
        else:
            add("waves", verdict_shape, shape, peaks, occupancy_unknown)
    cited = {ln for v in verdicts for ln in v.python_lines} | {e[1] for v in verdicts for e in v.evidence
                                                               if is_source(e[0]) or e[0] == "remark"}
    spec = analysis.artifact.spec
    label = spec.label() if ctx.stages_known else re.sub(r"\bs\d+\b", "s?", spec.label(), count=1)
    return Explanation(spec.kernel, label, spec.arch, analysis.artifact.triton_version, spec.file, verdicts,
                       {k: v for k, v in ctx.python.items() if k in cited}, ctx.compiles, source,
                       lacks_of(analysis) if source else [], skipped)


def apply_change(config, change: dict):
    """A pipeline Config with one fix applied (what `recompile` compiles): constexprs and arguments added
    (-c wins over --block, so --block may stay), launch options by a launch's own names."""
    launch = {k: int(change[k]) for k in ("num_stages", "num_warps", "maxnreg") if k in change}
    return config.with_values(constexprs=change.get("constexprs"), args=change.get("args")).with_launch(**launch)


# ==========================================================================
# check: the same facts as assertions
# ==========================================================================

# tensor-cores   pipelined   no-spills   width>=128   shared<=96KiB   registers<=128   occupancy>=50%
_EXPECT_RE = re.compile(r"^\s*(!?)\s*([a-zA-Z][\w-]*)\s*(?:(<=|>=|==|!=|<|>)\s*([\d.]+)\s*([a-zA-Z%]*))?\s*$")
_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
          "bits": 1, "bit": 1, "%": 0.01}
FLAGS = {"tensor-cores": "every tl.dot runs on tensor cores", "pipelined": "every loop with global loads is pipelined",
         "no-spills": "no STL/LDL spills", "fits": "the config fits the arch",
         "no-bank-conflicts": "no shared load/store has a bank conflict", "tf32": "a tl.dot multiplies in TF32"}
MEASURES = {"width": "narrowest global load/store, bits", "shared": "dynamic shared memory per block, bytes",
            "registers": "registers per thread", "occupancy": "resident threads / the SM's maximum (0-1 or %)",
            "stages": "fewest pipeline buffers of a pipelined loop", "spills": "spill bytes (stack frame) per thread",
            "blocks": "blocks per SM"}
_ALIASES = {"tensor_cores": "tensor-cores", "tc": "tensor-cores", "tensorcores": "tensor-cores",
            "no_spills": "no-spills", "nospills": "no-spills", "no-spill": "no-spills",
            "no_bank_conflicts": "no-bank-conflicts", "pipeline": "pipelined", "global-width": "width",
            "access-width": "width", "smem": "shared", "regs": "registers", "num-stages": "stages"}


@dataclass(frozen=True)
class Expectation:
    text: str
    name: str
    negate: bool = False
    op: str | None = None
    value: float | None = None


@dataclass(frozen=True)
class CheckResult:
    arch: str
    expr: str
    held: bool
    actual: str
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_expectation(text: str) -> Expectation:
    from tritonscope.core.errors import UsageError, close_matches

    known = list(FLAGS) + list(MEASURES)
    m = _EXPECT_RE.match(text)
    hint = ("Expectations: " + ", ".join(FLAGS) + "; or " + ", ".join(f"{k}<=N / {k}>=N" for k in MEASURES)
            + " (e.g. width>=128, shared<=96KiB, occupancy>=50%).")
    if not m:
        raise UsageError(f"Cannot read the expectation {text!r}.", hint=hint)
    neg, name, op, num, unit = m.groups()
    name = name.lower().replace("_", "-")
    name = _ALIASES.get(name, _ALIASES.get(name.replace("-", "_"), name))
    if name not in known:
        raise UsageError(f"Unknown expectation {name!r}.{close_matches(name, known)}", hint=hint)
    if name in FLAGS:
        if op:
            raise UsageError(f"{name!r} is a yes/no expectation; it takes no comparison.", hint=hint)
        return Expectation(text.strip(), name, bool(neg))
    if not op:
        raise UsageError(f"{name!r} needs a comparison, e.g. {name}<=128.", hint=hint)
    scale = _UNITS.get(unit.lower())
    if scale is None:
        raise UsageError(f"Unknown unit {unit!r} in {text!r}.", hint="Units: KiB, MiB (bytes) or % (occupancy).")
    value = float(num) * scale
    if name == "occupancy" and not unit and value > 1:
        value /= 100  # occupancy>=50 means 50%
    return Expectation(text.strip(), name, bool(neg), op, value)
