"""Why a config is slow or does not fit, and what to change: verdicts from one compile.

`explain(analysis)` reads what one real compile produced (the TTGIR's
allocations, loops, dots and memory ops; the PTX/SASS instruction facts of
the dialect classifiers; the summary's fit, occupancy and spills; Triton's
remarks; live registers from `nvdisasm -lrm count`) and returns one Verdict
per finding.  Each verdict carries its evidence (stage, line, text), the
Python lines it is about, and a concrete fix.  Where a fix is cheap to test
(another num_stages or block size, a hint that an int argument is a
multiple of 16, more warps, a register cap), the caller's `recompile`
compiles it and the verdict says what that compile showed (`fix_checked`).

This module returns data and never prints (render/explain_view.py words it).
It never imports Triton: compiles go through the `recompile` callable the
command builds, and Triton's own bank-conflict count through triton_api in a
child process.

Verdict kinds, in the order they are reported:

    shared memory   each buffer's bytes (x copies), the total against the arch's limit,
                    and the largest num_stages / block size that fits (checked by compiling)
    occupancy       blocks per SM, the limiter, and what would lift it
    registers       registers per thread, the peak of live registers and the Python lines holding it
    spills          stack frame and STL/LDL, with the Python lines that spill
    global access   loads/stores narrower than they could be, why, and the hint that widens them
    pipelining      each loop: pipelined or not, with how many stages
    tensor cores    mma / wgmma / tcgen05 / MFMA / WMMA or FMA, and TF32
    bank conflicts  each shared load/store, from the layouts (and Triton's own count)
    waves           for a problem shape: tiles against SMs, the last wave's utilization
    roofline        for a problem shape: loop-aware FLOPs and bytes against the arch's peaks

A kernel that already compiled (what `tritonscope open` reads: a capture, a
Triton cache or dump, a single stage file) has only some of these inputs.
`inputs_of` says which; a verdict whose input is missing is not guessed but
listed in `Explanation.skipped` with the reason (a lone .ttgir has no
registers, a lone .ptx no layouts).  Tensor cores and access widths are read
from the PTX alone when there is no TTGIR.  A `recompile` that cannot
compile a change (no TTIR to recompile, constexprs folded into the IR)
raises FixNotCheckable, and the fix says "not checked" and why.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable, Iterable

from tritonscope.mlir_syntax import MlirType, alias_table, element_bits, find_types

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


@dataclass(frozen=True)
class GpuPeaks:
    """One part's datasheet figures (bench.PEAKS) with the SM count of its arch record."""

    name: str
    sms: int
    tflops: dict[str, float]          # "fp16", "bf16", "tf32", "fp8", "fp32" (dense)
    gbs: float                        # memory bandwidth, GB/s
    source: str


# ==========================================================================
# Reading the TTGIR: ops with their types, loops, allocations
# ==========================================================================

# %x = ttg.local_alloc : () -> ...      ttg.local_store %a, %b : ...      %acc:3 = scf.for %i = ...
_OP_RE = re.compile(r"^\s*(?:(?:%[\w$.#:-]+(?::\d+)?\s*,\s*)*%[\w$.#-]+(?::\d+)?\s*=\s*)?\"?([a-z_]+\.[\w.]+)\"?")
# %c64_i32 = arith.constant 64 : i32
_CONST_RE = re.compile(r"^\s*(%[\w$.-]+)\s*=\s*arith\.constant\s+(-?\d+)\s*:\s*i(?:32|64)\b")
# %0 = arith.addi %a, %b : i32
_SCALAR_RE = re.compile(r"^\s*(%[\w$.-]+)\s*=\s*(arith\.\w+|tt\.get_program_id|tt\.get_num_programs)\s+(.*?)\s*:\s*"
                        r"(?:i(?:32|64)|index)\s*$")
# scf.for %k = %c0_i32 to %K step %c64_i32 iter_args(...)
_FOR_RE = re.compile(r"scf\.for\s+%[\w$.-]+\s*=\s*(%[\w$.-]+)\s+to\s+(%[\w$.-]+)\s+step\s+(%[\w$.-]+)")
# {contiguity = 4 : i32}
_CONTIG_RE = re.compile(r"\bcontiguity\s*=\s*(\d+)")
# -> <64x64xf32, #shared, #smem, mutable>   (async copies print their destination without the type name)
_BARE_MEMDESC_RE = re.compile(r"->\s*(<\d[^>]*>)\s*$")
# !tt.ptr<f16>
_PTR_ELEM_RE = re.compile(r"!tt\.ptr<([\w]+)")

GLOBAL_LOADS = ("tt.load", "ttg.async_copy_global_to_local", "ttng.async_tma_copy_global_to_local",
                "tt.descriptor_load", "amdgpu.buffer_load", "amdgpu.buffer_load_to_local")
GLOBAL_STORES = ("tt.store", "ttng.async_tma_copy_local_to_global", "tt.descriptor_store", "amdgpu.buffer_store",
                 "tt.atomic_rmw", "tt.atomic_cas")
ASYNC_COPIES = ("ttg.async_copy_global_to_local", "ttng.async_tma_copy_global_to_local",
                "amdgpu.buffer_load_to_local")
DOTS = ("tt.dot", "ttng.warp_group_dot", "ttng.tc_gen5_mma", "tt.dot_scaled", "ttng.tc_gen5_mma_scaled")


@dataclass
class Op:
    """One TTGIR op line: its name, text, types, Python line and enclosing loops (innermost last)."""

    index: int                        # position in the stage's line list
    number: int                       # line number in the TTGIR
    name: str
    text: str
    py: int | None
    loops: tuple[int, ...]            # indexes of the enclosing scf.for ops
    types: list[MlirType]


def _types(text: str) -> list[MlirType]:
    types = list(find_types(text, ("tensor", "memdesc")))
    m = _BARE_MEMDESC_RE.search(text)
    if m:
        types.extend(find_types("!ttg.memdesc" + m.group(1)))
    return types


def ttgir_ops(stage) -> list[Op]:
    """Every op line of a parsed TTGIR/TTIR stage with the loops around it."""
    ops: list[Op] = []
    stack: list[int | None] = []      # open regions: the loop op's index, or None for other regions
    for i, line in enumerate(stage.lines):
        text = line.text.rstrip()
        stripped = text.lstrip()
        if not stripped or stripped.startswith(("#", "//")):
            continue
        if stripped.startswith("}"):
            closed = stack.pop() if stack else None
            # Triton puts a loop's own location on its closing line (`} loc(#loc12)`): the Python `for`
            if closed is not None and ops[closed].py is None and line.loc is not None:
                ops[closed].py = line.loc.line
            if not stripped.endswith("{"):
                continue
        m = _OP_RE.match(text)
        loops = tuple(x for x in stack if x is not None)
        if m:
            name = m.group(1)
            ops.append(Op(len(ops), line.number, name, text, line.loc.line if line.loc else None, loops,
                          _types(text) if name not in ("arith.constant",) else []))
        if text.endswith("{"):
            is_loop = bool(m) and m.group(1) == "scf.for" and not stripped.startswith("}")
            stack.append(ops[-1].index if is_loop else None)
    return ops


def _prod(xs: Iterable[int]) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


def _pointee_bits(t: MlirType) -> int | None:
    m = _PTR_ELEM_RE.search(t.elem or "")
    return element_bits(m.group(1)) if m else t.bits


def _tensor_bytes(t: MlirType) -> int:
    bits = _pointee_bits(t) if "ptr" in (t.elem or "") else t.bits
    return _prod(t.shape) * (bits or 0) // 8 if t.static else 0


# ==========================================================================
# Scalars: loop trip counts from the arguments of one launch
# ==========================================================================

_ARITH = {
    "arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b, "arith.muli": lambda a, b: a * b,
    "arith.divsi": lambda a, b: int(a / b) if b else None, "arith.divui": lambda a, b: a // b if b else None,
    "arith.ceildivsi": lambda a, b: -(-a // b) if b else None, "arith.floordivsi": lambda a, b: a // b if b else None,
    "arith.remsi": lambda a, b: int(math.fmod(a, b)) if b else None, "arith.remui": lambda a, b: a % b if b else None,
    "arith.maxsi": max, "arith.minsi": min, "arith.maxui": max, "arith.minui": min,
    "arith.andi": lambda a, b: a & b, "arith.ori": lambda a, b: a | b, "arith.xori": lambda a, b: a ^ b,
    "arith.shli": lambda a, b: a << b, "arith.shrsi": lambda a, b: a >> b, "arith.shrui": lambda a, b: a >> b,
}
_UNARY = ("arith.index_cast", "arith.extsi", "arith.extui", "arith.trunci", "arith.index_castui")
# %a_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc("a_ptr"(#loc))   (3.6 may name them %arg0)
_FUNC_ARG_RE = re.compile(r"%([\w$.-]+):\s")
_ARG_LOC_RE = re.compile(r'loc\("([\w$.]+)"')


def function_args(ttgir: str) -> list[tuple[str, str, str]]:
    """[(ssa name, python name, the argument's text)] of the kernel's tt.func signature."""
    m = re.search(r"tt\.func\s+(?:public\s+)?@[\w$.]+\((.*)\)\s*(?:attributes\s*\{.*\}\s*)?\{", ttgir)
    if not m:
        return []
    sig = m.group(1)
    out = []
    starts = [(a.start(), a.group(1)) for a in _FUNC_ARG_RE.finditer(sig)]
    for k, (pos, ssa) in enumerate(starts):
        chunk = sig[pos: starts[k + 1][0] if k + 1 < len(starts) else len(sig)]
        loc = _ARG_LOC_RE.search(chunk)
        out.append((ssa, loc.group(1) if loc else ssa, chunk))
    return out


class Scalars:
    """Evaluates the kernel's scalar i32/i64 arithmetic for one program of one launch."""

    def __init__(self, ops: list[Op], ttgir: str, args: dict[str, Any], grid: tuple[int, ...] | None):
        self.grid = tuple(grid or ())
        self.base: dict[str, int] = {}
        for ssa, name, _ in function_args(ttgir):
            value = args.get(name)
            if isinstance(value, bool) or not isinstance(value, int):
                continue
            self.base["%" + ssa] = value
        self.defs: list[tuple[str, str, list[str]]] = []   # (result, op, operands) in program order
        for op in ops:
            c = _CONST_RE.match(op.text)
            if c:
                self.base[c.group(1)] = int(c.group(2))
                continue
            s = _SCALAR_RE.match(op.text)
            if s:
                operands = re.findall(r"%[\w$.-]+", s.group(3))
                axis = re.search(r"\b(x|y|z)\b", s.group(3))
                self.defs.append((s.group(1), s.group(2) + (f":{axis.group(1)}" if axis else ""), operands))
        self.uses_pid = any(op.startswith("tt.get_program_id") for _, op, _ in self.defs)
        self._ops = ops

    @property
    def pid_dependent(self) -> bool:
        """Whether loop trip counts change from program to program (persistent kernels, causal masks)."""
        if not self.uses_pid or not self.grid:
            return False
        g = list(self.grid) + [1] * (3 - len(self.grid))
        probes = [(0, 0, 0), (g[0] - 1, g[1] - 1, g[2] - 1), (g[0] // 2, g[1] // 2, g[2] // 2)]
        first = trip_counts(self._ops, self.values(probes[0]))
        return any(trip_counts(self._ops, self.values(p)) != first for p in probes[1:])

    def values(self, pid: tuple[int, int, int] = (0, 0, 0)) -> dict[str, int]:
        env = dict(self.base)
        for result, op, operands in self.defs:
            name, _, axis = op.partition(":")
            if name == "tt.get_program_id":
                env[result] = pid["xyz".index(axis or "x")]
                continue
            if name == "tt.get_num_programs":
                dim = "xyz".index(axis or "x")
                if dim < len(self.grid):
                    env[result] = self.grid[dim]
                continue
            vals = [env.get(o) for o in operands]
            if any(v is None for v in vals):
                continue
            if name in _UNARY and len(vals) == 1:
                env[result] = vals[0]
            elif name in _ARITH and len(vals) == 2:
                try:
                    v = _ARITH[name](*vals)
                except (ArithmeticError, ValueError):
                    v = None
                if v is not None:
                    env[result] = v
        return env


def trip_counts(ops: list[Op], env: dict[str, int]) -> dict[int, int | None]:
    """Loop op index -> iterations for one program (None: bounds not known from the arguments)."""
    out: dict[int, int | None] = {}
    for op in ops:
        if op.name != "scf.for":
            continue
        m = _FOR_RE.search(op.text)
        if not m:
            out[op.index] = None
            continue
        lb, ub, step = (env.get(x) for x in m.groups())
        out[op.index] = None if None in (lb, ub, step) or step <= 0 else max(0, -(-(ub - lb) // step))
    return out


# ==========================================================================
# Work per program: FLOPs and bytes, loop-aware
# ==========================================================================


def dot_flops(op: Op) -> int | None:
    """2*M*N*K of one dot op (A: MxK first, result MxN last)."""
    shaped = [t for t in op.types if t.static and len(t.shape) >= 2]
    if len(shaped) < 2:
        return None
    a, c = shaped[0], shaped[-1]
    m, k = a.shape[-2], a.shape[-1]
    n = c.shape[-1]
    batch = _prod(c.shape[:-2])
    return 2 * m * n * k * batch


def access_bytes(op: Op) -> int:
    """Bytes one global load/store op moves (its tensor of pointers, or its shared buffer for TMA)."""
    for t in op.types:
        if t.kind == "tensor" and "ptr" in (t.elem or ""):
            return _tensor_bytes(t)
    for t in op.types:
        if t.static:
            return _tensor_bytes(t)
    return 0


@dataclass(frozen=True)
class Work:
    flops: int | None                 # all programs together; None: a loop's bounds are unknown
    bytes_loaded: int | None
    bytes_stored: int | None
    programs: int
    flops_per_program: int | None     # the busiest program
    loops_known: bool


def work(ops: list[Op], ttgir: str, args: dict[str, Any], grid: tuple[int, ...] | None) -> Work:
    """FLOPs (tl.dot) and global bytes, each op multiplied by its loops' trip counts, summed over programs."""
    grid = tuple(grid or (1,))
    programs = _prod(grid)
    scalars = Scalars(ops, ttgir, args, grid)
    counted = [op for op in ops if op.name in DOTS or op.name in GLOBAL_LOADS or op.name in GLOBAL_STORES]

    def one(pid) -> tuple[int | None, int | None, int | None]:
        trips = trip_counts(ops, scalars.values(pid))
        flops = loaded = stored = 0
        for op in counted:
            n = 1
            for loop in op.loops:
                t = trips.get(loop)
                if t is None:
                    return None, None, None
                n *= t
            if op.name in DOTS:
                f = dot_flops(op)
                if f is None:
                    return None, None, None
                flops += f * n
            elif op.name in GLOBAL_LOADS:
                loaded += access_bytes(op) * n
            else:
                stored += access_bytes(op) * n
        return flops, loaded, stored

    if not scalars.pid_dependent or programs == 1:
        f, lo, st = one((0, 0, 0))
        if f is None:
            return Work(None, None, None, programs, None, False)
        return Work(f * programs, lo * programs, st * programs, programs, f, True)
    # Persistent kernels and the like: each program's loops depend on its id; add them up (sampled when many).
    pids = [(x, y, z) for z in range(grid[2] if len(grid) > 2 else 1)
            for y in range(grid[1] if len(grid) > 1 else 1) for x in range(grid[0])]
    stride = max(1, len(pids) // 2048)
    total = [0, 0, 0]
    busiest = 0
    sampled = pids[::stride]
    for pid in sampled:
        f, lo, st = one(pid)
        if f is None:
            return Work(None, None, None, programs, None, False)
        total[0] += f
        total[1] += lo
        total[2] += st
        busiest = max(busiest, f)
    scale = len(pids) / len(sampled)
    return Work(int(total[0] * scale), int(total[1] * scale), int(total[2] * scale), programs, busiest, True)


# ==========================================================================
# What there is to judge from
# ==========================================================================


@dataclass(frozen=True)
class Inputs:
    """Which inputs one analysis holds: all of them for a compile, some for a kernel found on disk.

    shared: Triton's dynamic shared memory (its metadata's "shared"); warps:
    num_warps from the metadata or the TTGIR; registers and spills: from the
    cubin (cuobjdump) or the SASS.  `where` words the source in reasons
    ("stage file", "cache entry", "compile").
    """

    ttgir: bool
    ptx: bool
    machine: bool                     # SASS or AMDGCN
    arch: bool
    warps: bool
    shared: bool
    registers: bool
    spills: bool
    backend: str = "cuda"
    where: str = "compile"

    def needs(self, *what: str) -> str:
        """'needs the cubin (...), which this stage file does not have'."""
        words = what[0] if len(what) == 1 else ", ".join(what[:-1]) + " and " + what[-1]
        return f"needs {words}, which this {self.where} does not have"


def inputs_of(analysis, where: str = "compile") -> Inputs:
    from tritonscope.model import ARCHES

    art = analysis.artifact
    meta = art.metadata or {}
    summary = analysis.summary
    return Inputs(ttgir="ttgir" in analysis.parsed, ptx="ptx" in analysis.parsed,
                  machine="sass" in analysis.parsed or "amdgcn" in analysis.parsed,
                  arch=art.spec.arch in ARCHES, warps="num_warps" in meta, shared="shared" in meta,
                  registers=summary.registers is not None, spills=summary.spills.known,
                  backend=summary.backend, where=where)


# Why each verdict cannot be judged without its input (the words of Explanation.skipped).
_TTGIR = "the TTGIR"
_CUBIN = "the cubin (cuobjdump's REG, STACK and LOCAL)"
_METADATA_SHARED = "Triton's metadata (.json: the dynamic shared memory)"


def _occupancy_unknown(inp: Inputs) -> str | None:
    missing = []
    if not inp.arch:
        missing.append("the target arch")
    if not inp.warps:
        missing.append("num_warps (Triton's metadata or the TTGIR)")
    if not inp.shared:
        missing.append(_METADATA_SHARED)
    if not inp.registers:
        missing.append(_CUBIN if inp.backend == "cuda" else "the code object's register counts")
    return inp.needs(*missing) if missing else None


# ==========================================================================
# The verdicts
# ==========================================================================


@dataclass
class _Ctx:
    analysis: Any
    ops: list[Op]
    ttgir: str
    aliases: dict[str, str]
    recompile: Recompile | None
    python: dict[int, str]
    compiles: int = 0
    cache: dict = field(default_factory=dict)
    inputs: Inputs | None = None
    refused: list[str] = field(default_factory=list)   # why changes asked for by the current verdict were not compiled

    @property
    def spec(self):
        return self.analysis.artifact.spec

    @property
    def summary(self):
        return self.analysis.summary

    @property
    def stages_known(self) -> bool:
        """Whether the config's num_stages is known: compiled here, or in the found kernel's metadata.
        (A stage file or a dump without one gets Triton's default in its spec: a guess, never quoted.)"""
        return self.inputs is None or "num_stages" in (self.analysis.artifact.metadata or {})

    def staged(self, buffers: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The buffers the pipeliner keeps one copy of per stage (num_stages or num_stages - 1 copies; any
        copies > 1 when num_stages is not known)."""
        n = self.spec.num_stages
        return [b for b in buffers if b["copies"] > 1 and (not self.stages_known or b["copies"] in (n, n - 1))]

    def compile(self, change: dict):
        """The Analysis of the config with `change` applied, or None (cached; counted).

        None also when the recompile cannot compile such a change here
        (FixNotCheckable): its reason goes into `refused`, for the verdict's fix.
        """
        if self.recompile is None:
            return None
        key = repr(sorted(change.items(), key=str))
        if key not in self.cache:
            try:
                self.compiles += 1
                self.cache[key] = self.recompile(change)
            except FixNotCheckable as e:
                self.compiles -= 1
                self.cache[key] = e
            except Exception:  # a candidate Triton rejects is simply not a fix
                self.cache[key] = None
        got = self.cache[key]
        if isinstance(got, FixNotCheckable):
            self.refused.append(got.reason)
            return None
        return got

    def refuses(self, change: dict) -> bool:
        """Whether the recompile says up front that it cannot compile such a change (its reason then goes
        into `refused`): for a fix with nothing to compile from here, e.g. an argument a found kernel has
        only as a type."""
        ask = getattr(self.recompile, "refuses", None)
        reason = ask(change) if callable(ask) else None
        if reason:
            self.refused.append(reason)
        return bool(reason)


def _ev(op: Op, stage: str = "ttgir") -> tuple[str, int, str]:
    return (stage, op.number, op.text.strip())


def _py_ev(ctx: _Ctx, line: int | None) -> list[tuple[str, int, str]]:
    if line is None or line not in ctx.python:
        return []
    return [("python", line, ctx.python[line].strip())]


def _lines(*groups) -> tuple[int, ...]:
    out: list[int] = []
    for g in groups:
        for x in (g if isinstance(g, (list, tuple, set)) else [g]):
            if isinstance(x, int) and x not in out:
                out.append(x)
    return tuple(out)


def _kib(n: int | None) -> str:
    return "?" if n is None else f"{n:,} B"


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
        has_source = "(tensor<" in op.text or re.search(r"local_alloc\s+%", op.text) is not None
        copies = shape[0] if len(shape) >= 3 and not has_source else 1
        total = _prod(shape) * bits // 8
        name = re.match(r"\s*%([A-Za-z_][\w$.]*?)(?:_\d+)?\s*=", op.text)
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


def verdict_occupancy(ctx: _Ctx) -> Verdict | None:
    s = ctx.summary
    occ = s.occupancy
    if occ is None:
        return None
    from tritonscope.model import ARCHES

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
            fix = f"at most {cap} registers per thread (--maxnreg {cap}) gives {want} blocks per SM"
            facts["maxnreg"] = cap
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


# -------------------------------------------------------------- registers


# /*0010*/  S2R R40, SR_TID.X ;   // |    2  |        |        |         |
_LRM_RE = re.compile(r"/\*([0-9a-fA-F]{4,})\*/.*?//\s*\|\s*(\d*)\s*\|")
# /*0010*/
_ADDR_RE = re.compile(r"/\*([0-9a-fA-F]{4,})\*/")


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

# STL [R1+0x10], R3 ;    @!P0 LDL.LU R7, [R1+0x8] ;
_SPILL_RE = re.compile(r"/\*[0-9a-fA-F]+\*/\s+(?:@!?U?P[0-9T]+\s+)?(STL|LDL)\b")


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


# -------------------------------------------------------------- global access width


def _global_widths(analysis) -> dict[int, dict[str, list[int]]]:
    """Python line -> {"load": [bits...], "store": [...]} of its PTX global accesses (cp.async counts as a load)."""
    from tritonscope.dialects import instructions

    ptx = analysis.parsed.get("ptx")
    out: dict[int, dict[str, list[int]]] = {}
    if ptx is None:
        return out
    for line, ins in instructions("ptx", ptx.lines):
        if ins.cls not in ("global load", "global store", "async copy") or line.loc is None:
            continue
        nbytes = ins.facts.get("bytes")
        if not nbytes:
            continue
        key = "store" if ins.cls == "global store" else "load"
        out.setdefault(line.loc.line, {}).setdefault(key, []).append(int(nbytes) * 8)
    return out


def global_access(analysis, ops: list[Op], aliases: dict[str, str]) -> list[dict[str, Any]]:
    """Each global load/store op: element bits, the widest access its tile allows, and the PTX widths of its line."""
    widths = _global_widths(analysis)
    threads = analysis.summary.threads_per_block
    out = []
    for op in ops:
        if op.name not in ("tt.load", "tt.store", "ttg.async_copy_global_to_local"):
            continue
        ptr = next((t for t in op.types if t.kind == "tensor" and "ptr" in (t.elem or "")), None)
        if ptr is None or not ptr.static:
            continue
        bits = _pointee_bits(ptr) or 0
        if not bits:
            continue
        # The tile along its contiguous dim, and what one thread holds: a vector cannot be wider.
        contig_dim = _fastest_dim(ptr.encoding, aliases, len(ptr.shape))
        per_thread = max(1, _prod(ptr.shape) // threads)
        possible = min(128, bits * min(ptr.shape[contig_dim], per_thread))
        possible = max(bits, 1 << (possible.bit_length() - 1))
        kind = "store" if op.name == "tt.store" else "load"
        got = (widths.get(op.py) or {}).get(kind, [])
        contiguity = _CONTIG_RE.search(op.text)
        dest = next((t for t in op.types if t.kind == "memdesc"), None)
        transposed = False
        if dest is not None and dest.encoding:
            shared = _resolve(dest.encoding, aliases)
            reg_order = _fastest_dim(ptr.encoding, aliases, len(ptr.shape))
            transposed = "transposed = true" in shared or (
                "order" in shared and _fastest_dim(shared, {}, len(ptr.shape)) != reg_order)
        out.append({"op": op.index, "line": op.number, "python_line": op.py, "kind": kind, "elem_bits": bits,
                    "transposed_shared": transposed,
                    "shape": list(ptr.shape), "possible_bits": possible, "ptx_bits": sorted(set(got)),
                    "min_bits": min(got) if got else None,
                    "contiguity": int(contiguity.group(1)) if contiguity else None,
                    "masked": " mask " in op.text or (op.name != "ttg.async_copy_global_to_local"
                                                      and op.text.count(",") >= (2 if kind == "store" else 1))})
    return out


def global_from_ptx(ctx: _Ctx) -> Verdict | None:
    """Without the TTGIR: the PTX's global access widths (how wide they could be needs the TTGIR's tiles)."""
    from tritonscope.dialects import instructions

    ptx = ctx.analysis.parsed.get("ptx")
    rows: dict[tuple[Any, str], list] = {}
    for line, ins in instructions("ptx", ptx.lines):
        if ins.cls not in ("global load", "global store", "async copy") or not ins.facts.get("bytes"):
            continue
        kind = "store" if ins.cls == "global store" else "load"
        rows.setdefault((line.loc.line if line.loc is not None else None, kind), []).append(
            (int(ins.facts["bytes"]) * 8, line))
    if not rows:
        return None
    accesses = [{"python_line": py, "kind": kind, "ptx_bits": sorted({b for b, _ in got}),
                 "min_bits": min(b for b, _ in got)} for (py, kind), got in rows.items()]
    narrowest = min(a["min_bits"] for a in accesses)
    evidence: list[tuple[str, int, str]] = []
    for (py, _), got in rows.items():
        bits, line = min(got, key=lambda x: x[0])
        if bits == narrowest and len(evidence) < 4:
            evidence.append(("ptx", line.number, line.text.strip()))
            evidence.extend(_py_ev(ctx, py))
    parts = [f"{'line ' + str(a['python_line']) if a['python_line'] is not None else 'no line'}: {a['kind']} "
             f"{'/'.join(map(str, a['ptx_bits']))}-bit" for a in accesses]
    title = (f"global accesses in the PTX: {'; '.join(parts)}; the narrowest is {narrowest}-bit (no TTGIR here: "
             "how wide its tiles would allow is not known)")
    return Verdict("global access", "info", title, tuple(evidence), _lines([a["python_line"] for a in accesses]),
                   facts={"accesses": accesses, "min_bits": narrowest, "from": "ptx"})


def _fastest_dim(encoding: str | None, aliases: dict[str, str], rank: int) -> int:
    text = aliases.get(encoding[1:], "") if encoding and encoding.startswith("#") else (encoding or "")
    m = re.search(r"order\s*=\s*\[(\d+)", text)
    return int(m.group(1)) if m and int(m.group(1)) < rank else rank - 1


def _undivisible_args(analysis) -> tuple[list[str], list[str]]:
    """(int args without tt.divisibility, pointer args without it) as Triton specialized this launch."""
    ints, ptrs = [], []
    for a in analysis.artifact.specialization:
        if a.type == "constexpr":
            continue
        has = any("divisibility" in x for x in a.attrs)
        if a.type.startswith("*"):
            if not has:
                ptrs.append(a.name)
        elif a.type.startswith(("i", "u")) and not has:
            ints.append(a.name)
    return ints, ptrs


def verdict_global(ctx: _Ctx) -> Verdict | None:
    accesses = global_access(ctx.analysis, ctx.ops, ctx.aliases)
    if not accesses:
        return None
    narrow = [a for a in accesses if a["min_bits"] is not None and a["min_bits"] < a["possible_bits"]]
    widths = sorted({w for a in accesses for w in a["ptx_bits"]})
    facts: dict[str, Any] = {"accesses": accesses, "min_bits": min(widths) if widths else None}
    if not narrow:
        return Verdict("global access", "ok",
                       "global loads and stores are as wide as their tiles allow (" +
                       ", ".join(f"{w}-bit" for w in widths) + ")", (), (), facts=facts)
    ints, ptrs = _undivisible_args(ctx.analysis)
    facts.update(ints_without_divisibility=ints, pointers_without_divisibility=ptrs)
    transposed = [a for a in narrow if a.get("transposed_shared")]
    evidence: list[tuple[str, int, str]] = []
    seen_py: list[int] = []
    for a in narrow[:4]:
        evidence.append(_ev(ctx.ops[a["op"]]))
        if a["python_line"] not in seen_py:
            evidence.extend(_py_ev(ctx, a["python_line"]))
            seen_py.append(a["python_line"])
    parts = []
    for a in narrow:
        parts.append(f"line {a['python_line']}: {a['kind']} of {a['elem_bits']}-bit elements "
                     f"{'/'.join(map(str, a['ptx_bits']))}-bit, could be {a['possible_bits']}-bit")
    title = "narrow global accesses: " + "; ".join(dict.fromkeys(parts))
    why = []
    if ints:
        why.append("Triton cannot tell that " + ", ".join(ints) + " " + ("is" if len(ints) == 1 else "are")
                   + " a multiple of 16 (no tt.divisibility), so rows/strides built from "
                   + ("it" if len(ints) == 1 else "them") + " may be unaligned")
    if ptrs:
        why.append("pointer " + ", ".join(ptrs) + " is not known to be 16-byte aligned")
    if transposed:
        lines_t = ", ".join(dict.fromkeys(str(a["python_line"]) for a in transposed))
        why.append(f"line {lines_t} copies into a shared buffer stored in the other order (transposed) from the "
                   "registers, so each element lands apart from its neighbours and is copied alone")
    if not why:
        why.append("the offsets are not provably contiguous/aligned along the fastest dimension "
                   "(a mask or an index that Triton's axis analysis cannot follow)")
    facts["why"] = why
    if transposed and not ints and not ptrs:
        fix = ("give that operand the order its shared buffer wants: the dot reads it K-major, so keep it K-major "
               "in memory (load a [N, K] tile of a transposed B and tl.trans it), or use 16-bit inputs, whose "
               "tensor-core path reads either order")
        return Verdict("global access", "warn", title + ". Why: " + "; ".join(why), tuple(evidence), tuple(seen_py),
                       fix=fix, facts=facts)
    fix, checked = _width_fix(ctx, narrow, ints, ptrs, facts)
    return Verdict("global access", "warn", title + ". Why: " + "; ".join(why), tuple(evidence), tuple(seen_py),
                   fix=fix, fix_checked=checked, facts=facts)


def _width_fix(ctx: _Ctx, narrow, ints: list[str], ptrs: list[str], facts: dict) -> tuple[str, bool]:
    spec = ctx.spec
    hint_code = []
    for n in ints:
        hint_code.append(f"{n} = tl.multiple_of({n}, 16)")
    change_args: dict[str, str] = {}
    for n in ints:
        v = spec.args.get(n)
        if isinstance(v, int) and not isinstance(v, bool):
            change_args[n] = str(-(-v // 16) * 16 if v % 16 else v)
    for n in ptrs:
        v = spec.args.get(n)
        if isinstance(v, str) and "+" in v:
            change_args[n] = v.split("+")[0].strip()
    if not ints and not ptrs:
        return ("tell Triton the offsets are contiguous and aligned: "
                "offs = tl.max_contiguous(tl.multiple_of(offs, BLOCK), BLOCK), and keep masks "
                "whole-vector (sizes that are multiples of the vector)", False)
    words = []
    if ints:
        words.append("pass " + ", ".join(ints) + " as multiples of 16 (pad the problem or the strides), "
                     "or assert it in the kernel: " + "; ".join(hint_code))
    if ptrs:
        words.append("pass 16-byte-aligned tensors for " + ", ".join(ptrs) + " (no storage offset)")
    fix = "; ".join(words)
    if not change_args:
        ctx.refuses({"args": {n: None for n in ints + ptrs}})
    if change_args:
        a = ctx.compile({"args": change_args})
        if a is not None:
            after = {x["op"]: x for x in global_access(a, ttgir_ops(a.parsed["ttgir"]), alias_table(
                a.artifact.stages.get("ttgir", "")))}
            before = {x["python_line"]: x["min_bits"] for x in narrow}
            widened = {}
            for x in after.values():
                if x["python_line"] in before and x["min_bits"] is not None:
                    widened[x["python_line"]] = max(widened.get(x["python_line"], 0), x["min_bits"])
            facts["fix"] = {"args": change_args, "bits_after": {str(k): v for k, v in widened.items()}}
            desc = ", ".join(f"{k}={v}" for k, v in change_args.items())
            gains = [f"line {k}: {before[k]} -> {v}-bit" for k, v in sorted(widened.items()) if v > (before[k] or 0)]
            if gains:
                fix += f" (checked: with {desc} the accesses widen, " + ", ".join(gains) + ")"
            else:
                fix += f" (checked: with {desc} they stay as narrow, so alignment is not the only cause)"
            return fix, True
    return fix, False


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
        attr = re.search(r"tt\.num_stages\s*=\s*(\d+)", loop.text)
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
    from tritonscope.dialects import instructions

    mma_lines = []
    for key in ("ptx", "amdgcn", "sass"):
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
                and not re.search(r"inputPrecision\s*=\s*(ieee|2\b)", op.text))
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
    from tritonscope.dialects import instructions

    found: list[tuple[str, Any, Any]] = []
    for key in ("ptx", "sass", "amdgcn"):
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


# acc = tl.dot(a, b, acc)      c = tl.dot_scaled(a, sa, "e2m1", b, sb, "e2m1")      acc += dot(a, b)
_DOT_CALL_RE = re.compile(r"\bdot(?:_scaled)?\s*\(")


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
        v = re.search(r"versionMajor\s*=\s*(\d+)", text)
        major = int(v.group(1)) if v else 2
        if major >= 5:
            return "tcgen05", "tcgen05.mma"
        if major == 3:
            return "wgmma", "wgmma (Hopper warpgroup MMA)"
        instr = re.search(r"instrShape\s*=\s*\[([\d, ]+)\]", text)
        return "mma", "mma.sync" + (f" {instr.group(1).replace(' ', '')} tiles" if instr else "") + \
            f" (MMA v{major})"
    if "amd_mfma" in text:
        return "MFMA", "MFMA (AMD matrix cores)"
    if "amd_wmma" in text:
        return "WMMA", "WMMA (AMD matrix cores)"
    return "FMA", "FMA"


# -------------------------------------------------------------- bank conflicts


def shared_accesses(ops: list[Op], aliases: dict[str, str]) -> list[dict[str, Any]]:
    """Each shared load/store of a register tensor: (register layout, shared layout, shape, bits, direction)."""
    out = []
    for op in ops:
        if op.name not in ("ttg.local_load", "ttg.local_store", "ttg.local_alloc", "ttg.async_copy_global_to_local"):
            continue
        tensor = next((t for t in op.types if t.kind == "tensor" and t.static and t.encoding), None)
        memdesc = next((t for t in op.types if t.kind == "memdesc" and t.static and t.encoding), None)
        if tensor is None or memdesc is None:
            continue
        shape = list(tensor.shape)
        bits = _pointee_bits(tensor) if "ptr" in (tensor.elem or "") else tensor.bits
        if not bits:
            continue
        contiguity = _CONTIG_RE.search(op.text)
        direction = "load" if op.name == "ttg.local_load" else "store"
        out.append({"op": op.index, "line": op.number, "python_line": op.py, "name": op.name,
                    "direction": direction, "shape": shape, "bits": bits, "elem": memdesc.elem,
                    "register_layout": _resolve(tensor.encoding, aliases),
                    "shared_layout": _resolve(memdesc.encoding, aliases),
                    "max_vector": int(contiguity.group(1)) if contiguity else None})
    return out


def _resolve(encoding: str, aliases: dict[str, str]) -> str:
    from tritonscope.mlir_syntax import expand_aliases

    if encoding.startswith("#") and encoding[1:] in aliases:
        return expand_aliases(aliases[encoding[1:]], aliases)
    return expand_aliases(encoding, aliases)


def bank_conflicts(register_layout: str, shared_layout: str, shape: list[int], bits: int,
                   max_vector: int | None = None) -> dict[str, Any] | None:
    """Wavefronts of a warp's ld.shared/st.shared of this register tensor, from the layouts.

    Each thread moves its registers in vectors of up to 16 bytes: as many
    consecutive registers as sit at consecutive, aligned shared offsets.  A
    16-byte access is served a quarter-warp at a time, an 8-byte one a
    half-warp at a time; each phase needs as many wavefronts as the most
    distinct 4-byte words it touches in one bank.  `excess` is the worst
    phase's wavefronts minus one (Triton's definition for gluon's
    `bank_conflicts`: 0 is conflict-free, 1 a two-way conflict); `ways` the
    same plus one.  None: a layout layouts.py cannot draw.
    """
    from tritonscope import layouts as L

    try:
        reg = L.describe(L.parse_encoding(register_layout, known_only=False), tuple(shape))
        sh = L.describe(L.parse_encoding(shared_layout, known_only=False), tuple(shape), elem_bits=bits)
    except Exception:
        return None
    if reg.kind != "distributed" or sh.kind != "shared":
        return None
    offsets = L.offset_grid(sh)
    lanes = L.lanes_per_warp(reg)
    per_lane = [[offsets.get(tuple(e)) for e in L.elements_of_thread(reg, 0, lane)] for lane in range(lanes)]
    if any(o is None for row in per_lane for o in row):
        return None
    nregs = len(per_lane[0])
    limit = max(1, 128 // bits)
    if max_vector:
        limit = min(limit, max_vector)
    vec = 1
    while vec * 2 <= min(limit, nregs) and all(
            row[i] % (vec * 2) == 0 and all(row[i + j] == row[i] + j for j in range(vec * 2))
            for row in per_lane for i in range(0, nregs, vec * 2)):
        vec *= 2
    access = vec * bits // 8
    phase = 32 if access <= 4 else (16 if access == 8 else 8)
    phase = min(phase, lanes)
    worst = 1
    worst_at = 0
    for i in range(0, nregs, vec):
        for start in range(0, lanes, phase):
            words: dict[int, set[int]] = {}
            for lane in range(start, start + phase):
                first = per_lane[lane][i] * bits // 8
                for b in range(first // 4, (first + max(access, 1) - 1) // 4 + 1):
                    words.setdefault(b % 32, set()).add(b)
            ways = max(len(v) for v in words.values())
            if ways > worst:
                worst, worst_at = ways, i
    return {"vector_bytes": access, "instructions": -(-nregs // vec), "ways": worst, "excess": worst - 1,
            "worst_register": worst_at}


def verdict_bank_conflicts(ctx: _Ctx, triton_counts: dict | None = None) -> list[Verdict]:
    from tritonscope import layouts as L

    out = []
    seen: dict[tuple, dict] = {}
    widths = _global_widths(ctx.analysis)
    for acc in shared_accesses(ctx.ops, ctx.aliases):
        key = (acc["register_layout"], acc["shared_layout"], tuple(acc["shape"]), acc["bits"], acc["direction"])
        op = ctx.ops[acc["op"]]
        evidence = [_ev(op)] + _py_ev(ctx, acc["python_line"])
        ldmatrix = _ldmatrix(acc)
        if ldmatrix:
            try:
                use = L.describe(L.parse_encoding(acc["shared_layout"], known_only=False), tuple(acc["shape"]),
                                 elem_bits=acc["bits"])
                rows = use.facts.get("row_reads") if use.kind == "shared" else None
            except Exception:
                rows = None
            if not rows:
                continue
            res = {"ways": rows["ways"], "excess": max(0, rows["ways"] - 1), "vector_bytes": 16,
                   "path": "ldmatrix (8 rows x 16 B)"}
        else:
            cap = None
            if acc["name"] == "ttg.async_copy_global_to_local":  # each thread copies what PTX's cp.async moves
                ptx = (widths.get(acc["python_line"]) or {}).get("load") or []
                cap = min([acc["max_vector"] or 16] + [max(1, b // acc["bits"]) for b in ptx])
            res = bank_conflicts(acc["register_layout"], acc["shared_layout"], acc["shape"], acc["bits"], cap)
            if res is None:
                continue
            res["path"] = "cp.async" if acc["name"] == "ttg.async_copy_global_to_local" else "ld/st.shared"
        if key in seen:
            seen[key]["evidence"].extend(evidence)
            continue
        facts = {**{k: acc[k] for k in ("direction", "shape", "bits", "elem", "register_layout", "shared_layout")},
                 **res}
        tkey = (acc["register_layout"], acc["shared_layout"], tuple(acc["shape"]), acc["bits"])
        if triton_counts is not None and not ldmatrix and tkey in triton_counts:
            facts["triton_excess"] = triton_counts[tkey]
        seen[key] = {"acc": acc, "facts": facts, "evidence": evidence}
    for item in seen.values():
        acc, facts = item["acc"], item["facts"]
        what = {"ttg.local_load": "shared load", "ttg.local_store": "shared store", "ttg.local_alloc": "shared store",
                "ttg.async_copy_global_to_local": "async copy into shared"}[acc["name"]]
        shape = "x".join(map(str, acc["shape"]))
        vb = facts["vector_bytes"]
        if facts["excess"] == 0:
            title = f"{what} of {shape}x{acc['elem']} at line {acc['python_line']}: conflict-free ({facts['path']}, {vb}-byte accesses)"
            severity = "ok"
            fix = ""
        else:
            title = (f"{what} of {shape}x{acc['elem']} at line {acc['python_line']}: {facts['ways']}-way bank "
                     f"conflict ({facts['path']}, {vb}-byte accesses: each access takes {facts['ways']} wavefronts "
                     f"instead of 1)")
            severity = "warn" if facts["ways"] >= 4 else "info"
            fix = ("a swizzled shared layout (or a register layout whose per-thread vector runs along the shared "
                   "order) removes them: give the tile's contiguous dimension the fastest order, make it at "
                   "least 16 bytes per thread, or let Triton pick the layout (gluon: "
                   "ttgl.bank_conflicts(reg_ty, shared_ty) counts a candidate)")
        if "triton_excess" in facts:
            agree = facts["triton_excess"] == facts["excess"]
            title += f"; Triton counts {facts['triton_excess']} excess" + ("" if agree else " (differs)")
        out.append(Verdict("bank conflicts", severity, title, tuple(dict.fromkeys(item["evidence"]))[:4],
                           _lines(acc["python_line"]), fix=fix, facts=facts))
    return out


def _ldmatrix(acc: dict) -> bool:
    """A 16-bit (or narrower) mma operand read from shared: Triton uses ldmatrix, 8 rows of 16 bytes."""
    return "dot_op" in acc["register_layout"] and "nvidia_mma" in acc["register_layout"] and acc["bits"] <= 16 \
        and acc["direction"] == "load"


def triton_bank_conflicts(ctx: _Ctx) -> dict | None:
    """Triton's own count (gluon's bank_conflicts, Triton >= 3.9) for each ld/st.shared pair, in a child process."""
    from tritonscope import triton_api

    items = []
    keys = []
    for acc in shared_accesses(ctx.ops, ctx.aliases):
        if _ldmatrix(acc) or acc["name"] == "ttg.async_copy_global_to_local":
            continue
        k = (acc["register_layout"], acc["shared_layout"], tuple(acc["shape"]), acc["bits"])
        if k in keys:
            continue
        keys.append(k)
        items.append({"register": k[0], "shared": k[1], "shape": list(k[2]), "elem": acc["elem"],
                      "num_warps": ctx.spec.num_warps, "capability": _capability(ctx.spec.arch)})
    if not items:
        return {}
    counts = triton_api.bank_conflicts_from_triton(items)
    if counts is None:
        return None
    return {k: c for k, c in zip(keys, counts) if isinstance(c, int)}


def _capability(arch: str) -> int:
    from tritonscope.model import ARCHES

    a = ARCHES.get(arch)
    return a.capability if a else 90


# -------------------------------------------------------------- problem shape: waves and roofline


def gpu_peaks(arch: str, gpu: str | None = None) -> GpuPeaks | None:
    """The datasheet figures of `gpu` (a bench.PEAKS key) or of the arch's reference part, with its SM count."""
    from tritonscope.bench import PEAKS, PEAKS_SOURCE
    from tritonscope.model import ARCHES

    a = ARCHES.get(arch)
    name = gpu or (a.reference_gpu if a is not None else None)
    if not name:
        return None
    key = next((k for k in PEAKS if k.lower() == name.lower()), None)
    if key is None:
        return None
    table = PEAKS[key]
    sms = int(table.get("sms") or (a.sms if a is not None and a.sms else 0))
    return GpuPeaks(key, sms, {k: v for k, v in table.items() if k not in ("gbs", "sms")}, table["gbs"],
                    PEAKS_SOURCE)


def _peak_kind(ctx: _Ctx) -> tuple[str, bool]:
    """Which datasheet rate bounds this kernel's math: (kind, on tensor cores)."""
    dots = [op for op in ctx.ops if op.name in DOTS]
    if not dots:
        return "fp32", False
    units = [_dot_unit(op, ctx.aliases)[0] for op in dots]
    elems = [t.elem for op in dots for t in op.types[:1]]
    elem = elems[0] if elems else "f16"
    if all(u == "FMA" for u in units):
        return "fp32", False
    if elem.startswith("f8") or "f8E" in elem:
        return "fp8", True
    if elem == "bf16":
        return "bf16", True
    if elem == "f32":
        return "tf32", True
    return "fp16", True


def verdict_shape(ctx: _Ctx, shape: Shape, gpu: GpuPeaks | None,
                  occupancy_unknown: str | None = None) -> list[Verdict]:
    """Waves and the roofline for one problem shape (explain() skips both when the shape has no grid)."""
    out = []
    dims = "x".join(map(str, shape.dims))
    s = ctx.summary
    tiles = _prod(shape.grid)
    sms = gpu.sms if gpu else 0
    occ = s.occupancy.blocks_per_sm if s.occupancy and not occupancy_unknown else None
    facts: dict[str, Any] = {"shape": list(shape.dims), "grid": list(shape.grid), "tiles": tiles, "sms": sms,
                             "blocks_per_sm": occ, "gpu": gpu.name if gpu else None}
    if sms and occ:
        per_wave = sms * occ
        waves = tiles / per_wave
        full, rest = divmod(tiles, per_wave)
        last = rest / per_wave if rest else 1.0
        facts.update(per_wave=per_wave, waves=waves, last_wave_utilization=last,
                     busy_sms_first_wave=min(tiles, sms))
        if tiles < sms:
            severity = "warn"
            title = (f"shape {dims}: {tiles} tiles for {sms} SMs ({gpu.name}): {sms - tiles} SMs stay idle")
        else:
            severity = "warn" if (waves < 4 and last < 0.5) else ("info" if last < 0.75 else "ok")
            title = (f"shape {dims}: {tiles} tiles, {per_wave} run at once ({sms} SMs x {occ}): {waves:.2f} waves, "
                     f"the last one {last:.0%} full")
        fix = ""
        names = _block_names(ctx)
        if severity == "warn" and names:
            fix = ("smaller tiles (" + ", ".join(f"{n}={ctx.spec.constexprs[n] // 2}" for n in names)
                   + f" gives about {tiles * (2 ** min(2, len(names)))} tiles), split-K, or a persistent kernel "
                   "looping over tiles")
        out.append(Verdict("waves", severity, title, (), (), fix=fix, facts=facts))
    elif sms:
        out.append(Verdict("waves", "info", f"shape {dims}: {tiles} tiles for {sms} SMs (occupancy unknown"
                           + (f": it {occupancy_unknown})" if occupancy_unknown else ")"), facts=facts))
    # roofline
    w = work(ctx.ops, ctx.ttgir, shape.args, shape.grid)
    compulsory = _compulsory_bytes(shape.args)
    kind, tensor = _peak_kind(ctx)
    rf: dict[str, Any] = {"shape": list(shape.dims), "flops": w.flops, "bytes_loaded": w.bytes_loaded,
                          "bytes_stored": w.bytes_stored, "bytes_compulsory": compulsory, "peak_kind": kind,
                          "tensor_cores": tensor, "gpu": gpu.name if gpu else None,
                          "flops_per_program": w.flops_per_program, "programs": w.programs}
    if w.flops is None:
        out.append(Verdict("roofline", "info", f"shape {dims}: loop bounds not known from the arguments; no roofline",
                           facts=rf))
        return out
    if gpu is None or kind not in gpu.tflops:
        out.append(Verdict("roofline", "info", f"shape {dims}: {w.flops / 1e9:,.1f} GFLOP, "
                           f"{(w.bytes_loaded + w.bytes_stored) / 1e6:,.1f} MB requested; no datasheet peaks for "
                           f"{ctx.spec.arch} (use --gpu)", facts=rf))
        return out
    peak = gpu.tflops[kind] * 1e12
    bw = gpu.gbs * 1e9
    requested = w.bytes_loaded + w.bytes_stored
    dram = min(requested, compulsory) if compulsory else requested
    # Wave-aware compute bound: a program runs on one SM, at most 1/SMs of the peak.  With equal programs
    # some SM runs at least ceil(tiles / SMs) of them; when programs differ (persistent kernels), the busiest
    # one alone takes its FLOPs at one SM's rate.
    compute_s = w.flops / peak
    if sms and w.flops_per_program:
        if Scalars(ctx.ops, ctx.ttgir, shape.args, shape.grid).pid_dependent:
            compute_s = max(compute_s, w.flops_per_program / (peak / sms))
        else:
            compute_s = max(compute_s, -(-tiles // sms) * w.flops_per_program / (peak / sms))
    memory_s = dram / bw
    bound = max(compute_s, memory_s)
    which = "compute" if compute_s >= memory_s else "memory"
    intensity = w.flops / dram if dram else float("inf")
    rf.update(peak_tflops=gpu.tflops[kind], bandwidth_gbs=gpu.gbs, bytes_dram=dram, compute_s=compute_s,
              memory_s=memory_s, bound_s=bound, bound=which, intensity=intensity,
              ridge=peak / bw, ideal_compute_s=w.flops / peak)
    title = (f"shape {dims}: {which}-bound; cannot beat {bound * 1e3:.4g} ms on {gpu.name} "
             f"({w.flops / 1e9:,.1f} GFLOP at {gpu.tflops[kind]:g} TFLOP/s {kind}"
             + (" (wave-quantized)" if compute_s > w.flops / peak * 1.0001 else "")
             + f" = {compute_s * 1e3:.4g} ms; {dram / 1e6:,.1f} MB at {gpu.gbs:,.0f} GB/s = {memory_s * 1e3:.4g} ms)")
    out.append(Verdict("roofline", "info", title, (), (), facts=rf))
    return out


def _compulsory_bytes(args: dict[str, Any]) -> int:
    """Every tensor argument read or written once: the least DRAM traffic (0 when no tensor has a shape)."""
    from tritonscope.kernels import DTYPES, TensorArg, parse_arg_value

    total = 0
    for v in args.values():
        v = parse_arg_value(v) if isinstance(v, str) else v
        if isinstance(v, TensorArg) and v.shape:
            bits = element_bits(_MLIR_ELEM.get(v.dtype, v.dtype)) or 0
            total += _prod(v.shape) * bits // 8
    del DTYPES
    return total


_MLIR_ELEM = {"fp16": "f16", "bf16": "bf16", "fp32": "f32", "fp64": "f64", "fp8e4nv": "f8E4M3FN", "fp8e5": "f8E5M2",
              "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64", "u8": "i8", "i1": "i1"}


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
    for key in ("ttir", "ttgir", "llir", machine or "ptx"):
        if key not in art.stages:
            out.append(key)
    if art.resources.registers is None:
        out.append("the cubin" if not machine else "the code object's resources")
    if "sass" not in art.stages and not machine:
        out.append("sass")
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
                                                               if e[0] in ("python", "remark")}
    spec = analysis.artifact.spec
    label = spec.label() if ctx.stages_known else re.sub(r"\bs\d+\b", "s?", spec.label(), count=1)
    return Explanation(spec.kernel, label, spec.arch, analysis.artifact.triton_version, spec.file, verdicts,
                       {k: v for k, v in ctx.python.items() if k in cited}, ctx.compiles, source,
                       lacks_of(analysis) if source else [], skipped)


def apply_change(request, change: dict):
    """A kernels.Request with one fix applied (what `recompile` compiles)."""
    cx = dict(request.constexprs or {})
    args = dict(request.args or {})
    options = dict(request.options or {})
    new = request
    if "constexprs" in change:  # -c wins over --block (kernels.build_spec), so --block may stay
        cx.update({k: str(v) for k, v in change["constexprs"].items()})
        new = replace(new, constexprs=cx)
    if "args" in change:
        args.update({k: str(v) for k, v in change["args"].items()})
        new = replace(new, args=args)
    if "num_stages" in change:
        new = replace(new, num_stages=int(change["num_stages"]))
    if "num_warps" in change:
        new = replace(new, num_warps=int(change["num_warps"]))
    if "maxnreg" in change:
        options["maxnreg"] = int(change["maxnreg"])
        new = replace(new, options=options)
    return new


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
    from tritonscope.errors import UsageError, close_matches

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
