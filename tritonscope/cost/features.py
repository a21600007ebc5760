"""The compiled facts the cost model reads, for one config at one problem (its grid and arguments).

Everything here comes from the compile: the TTGIR's dots, global loads and
stores and loops (with trip counts evaluated from the launch's arguments,
as explain's roofline does), the SASS instruction classes inside the
innermost loop and outside it, registers, shared memory, occupancy, spills,
pipeline depth, and the bank-conflict ways of the shared accesses (from the
layouts).  The result is a Features record (typed, frozen); its stored form
(Features.to_dict) is a flat dict of numbers and words, JSON-safe, so a
benchmark can store it beside a measured time and the model can be re-run
on it later without recompiling (model.predict_features takes either).

No Triton import: features come from an Analysis (or an Artifact).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping, NamedTuple

from tritonscope.cost.amdgcn import read_amdgcn
from tritonscope.cost.sass import read_sass

FEATURES_VERSION = 5   # 3: load-use waits per SASS loop (sass.load_waits); 4: int8 dots, mixed-kind dots (dot_kinds);
#                        5: tensors both loaded and stored (inplace_bytes)
TMA_OPS = ("ttng.async_tma_copy_global_to_local", "tt.descriptor_load", "ttng.async_tma_copy_local_to_global",
           "tt.descriptor_store")


@dataclass(frozen=True)
class Features:
    """The compiled facts of one config at one problem: what model.predict_features reads.

    Every field may be None where the facts do not say (an older FEATURES_VERSION, a bound's facts without the
    SASS): the model reads None as "not known" (no term from it).  The nested facts stay JSON-shaped: a SASS
    loop body is {class: instructions} (classes: the SASS vocabulary's cost field), a sibling loop and the main
    loop's waits are small dicts (see _sibling_loops, _sass_facts)."""

    version: int | None = None
    # the config, its launch and its resources (_config_facts)
    kernel: str | None = None
    arch: str | None = None
    num_warps: int | None = None
    num_stages: int | None = None
    constexprs: dict[str, Any] | None = None
    grid: list[int] | None = None
    programs: int | None = None
    pid_dependent: bool | None = None
    registers: int | None = None
    shared: int | None = None
    fits: bool | None = None
    blocks_per_sm: int | None = None
    limited_by: str | None = None
    spill_bytes: int | None = None
    spill_instructions: int | None = None
    # the TTGIR's work per program (the busiest), its dots and its main loop
    dot_unit: str | None = None                       # "wgmma", "mma", "tcgen05", "fma", "mfma"; None: no dots
    peak_kind: str | None = None                      # "fp16", "bf16", "tf32", "fp8", "int8", "fp32"
    dot_kinds: dict[str, float] | None = None         # dots of several kinds (int8 QK, fp16 PV): kind -> FLOP share
    pipelined: bool | None = None                     # the main loop copies asynchronously (cp.async, TMA)
    tma: bool | None = None
    flops_per_program: int | None = None
    bytes_loaded_per_program: int | None = None
    bytes_stored_per_program: int | None = None
    main_iters: int | None = None                     # main-loop iterations, the loops around it included
    outer_iters: int | None = None                    # iterations of the loops around the main loop
    loop_bytes_per_iter: int | None = None
    has_loop: bool | None = None
    loop_dots: int | None = None                      # dots in the main loop (attention: 2, its backward: 4)
    total_flops: int | None = None
    total_bytes: int | None = None
    compulsory_bytes: int | None = None
    inplace_bytes: int | None = None                  # tensors the kernel loads and stores (written back in place)
    # the SASS's side (_sass_facts; bound_facts: at its least)
    sass_loop: dict[str, int] | None = None           # the main loop's body: class -> instructions
    sass_outside: dict[str, int] | None = None        # the rest of the kernel
    sass_loops: list[dict[str, Any]] | None = None    # sibling innermost loops, each with its own trip count
    local_bytes_loop: int | None = None
    local_bytes_outside: int | None = None
    bank_ways_loop: int | None = None
    bank_ways: int | None = None
    loop_waits: dict[str, int] | None = None          # the main loop's LDGs and load-use waits (sass.load_waits)
    outside_ldgs: int | None = None
    outside_waits: int | None = None
    mma_shape: str | None = None
    bound: bool = False                               # the facts of the lower bound (no SASS read): never shown

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Features":
        """The record of a stored form (to_dict's; an older version's lacks some keys: None)."""
        return cls(**d)

    def to_dict(self) -> dict[str, Any]:
        """The stored form: every field in order, JSON-safe; `bound` only where it is set (as before the record)."""
        d = asdict(self)
        if not self.bound:
            del d["bound"]
        if (self.version or 0) < 4:   # fields of version 4 (int8 and mixed-kind dots): absent from older rows
            for key in ("dot_kinds", "loop_dots"):
                if d[key] is None:
                    del d[key]
        if (self.version or 0) < 5 and d["inplace_bytes"] is None:   # version 5's field: absent from older rows
            del d["inplace_bytes"]
        return d


# ops a tensor of pointers passes through on its way from a kernel argument to a load or store
_POINTER_STEPS = ("tt.addptr", "tt.splat", "tt.broadcast", "tt.expand_dims", "ttg.convert_layout", "tt.reshape",
                  "tt.trans")


def _inplace_bytes(ops, ttgir: str, args: dict[str, Any]) -> int:
    """Bytes of the tensor arguments the kernel both loads from and stores to (liger's cross entropy writes its
    gradient over its logits): the compulsory bytes count each tensor once, but such a tensor is read and then
    written back, twice its size in DRAM traffic.  A load's or store's pointer is followed back through the
    pointer arithmetic to a kernel argument; a pointer it cannot follow (a loop-carried one, a descriptor) counts
    as no argument (no bytes added)."""
    from tritonscope.analyses.explain import function_args
    from tritonscope.analyses.explain.roofline import _compulsory_bytes
    from tritonscope.language.mlir_syntax import SSA_VALUE

    names = {"%" + ssa: name for ssa, name, _ in function_args(ttgir)}
    defs: dict[str, tuple[str, list[str]]] = {}
    for op in ops:
        head, eq, rest = op.text.partition("=")
        result = head.strip()
        if eq and result.startswith("%") and ":" not in result and " " not in result:
            defs[result] = (op.name, SSA_VALUE.findall(rest.split(":")[0]))

    def root(value: str) -> str | None:
        for _ in range(32):
            if value in names:
                return names[value]
            name, operands = defs.get(value, ("", []))
            if name not in _POINTER_STEPS or not operands:
                return None
            value = operands[0]
        return None

    loaded, stored = set(), set()
    for op in ops:
        if op.name in ("tt.load", "tt.store"):
            operands = SSA_VALUE.findall(op.text.partition("=")[2] if op.name == "tt.load" else op.text)
            arg = root(operands[0]) if operands else None
            if arg is not None:
                (loaded if op.name == "tt.load" else stored).add(arg)
    both = loaded & stored
    return _compulsory_bytes({k: v for k, v in args.items() if k in both}) if both else 0


class NoFeatures(Exception):
    """Why the model cannot read this kernel (the caller turns it into "no prediction: ...")."""


def _dot_unit(ops, aliases) -> tuple[str | None, str | None, dict[str, float] | None]:
    """(unit, peak kind, FLOP share per kind) of the kernel's dots: ('wgmma', 'fp16', None), ('fma', 'fp32', None),
    or (None, None, None) without dots.  The kind is the one with the most FLOPs; the shares are given only where
    the dots are of several kinds (SageAttention's int8 QK and fp16 PV), each dot weighed by its own FLOPs."""
    from tritonscope.analyses.explain import DOTS, _dot_unit as unit_of, dot_flops

    dots = [op for op in ops if op.name in DOTS]
    if not dots:
        return None, None, None
    unit_text = unit_of(dots[0], aliases)[0].lower()
    if "wgmma" in unit_text:
        unit = "wgmma"
    elif "tcgen05" in unit_text:
        unit = "tcgen05"
    elif "mfma" in unit_text or "wmma" in unit_text:
        unit = "mfma"
    elif "fma" in unit_text:
        unit = "fma"
    else:
        unit = "mma"
    if unit == "fma":
        return unit, "fp32", None
    shares: dict[str, float] = {}
    for op in dots:
        kind = _elem_kind(next((t.elem for t in op.types[:1]), "f16") or "f16")
        shares[kind] = shares.get(kind, 0.0) + float(dot_flops(op) or 1)
    first = _elem_kind(next((t.elem for t in dots[0].types[:1]), "f16") or "f16")
    kind = max(shares, key=lambda k: (shares[k], k == first))
    total = sum(shares.values())
    mix = {k: round(v / total, 4) for k, v in sorted(shares.items())} if len(shares) > 1 else None
    return unit, kind, mix


def _elem_kind(elem: str) -> str:
    """The datasheet rate a tensor-core dot of this operand type runs at."""
    if elem.startswith("f8") or "f8E" in elem:
        return "fp8"
    if elem in ("i8", "ui8", "si8"):
        return "int8"   # IMMA / IGMMA: the datasheet's INT8 TOPS, not the fp16 rate
    if elem == "bf16":
        return "bf16"
    if elem == "f32":
        return "tf32"
    return "fp16"


_WAYS: dict[tuple, int] = {}   # a worker's sweep rows share layouts: each is drawn once per process


def _bank_ways(ops, aliases, loop_ops: set[int]) -> tuple[int, int]:
    """(worst ways of a shared access inside the main loop, worst anywhere); 1 = conflict-free.

    With a main loop, only its accesses are drawn: they run every iteration, the others once per tile, and
    drawing a layout costs a sweep row up to a second (the "anywhere" figure is then the loop's)."""
    from tritonscope.analyses.explain import _ldmatrix, bank_conflicts, shared_accesses

    in_loop, anywhere = 1, 1
    seen = _WAYS
    for acc in shared_accesses(ops, aliases):
        if _ldmatrix(acc):
            continue  # ldmatrix reads 8 rows of 16 bytes: Triton's swizzle keeps these conflict-free
        if loop_ops and acc["op"] not in loop_ops:
            continue
        key = (acc["register_layout"], acc["shared_layout"], tuple(acc["shape"]), acc["bits"], acc["max_vector"])
        if key not in seen:
            res = bank_conflicts(acc["register_layout"], acc["shared_layout"], acc["shape"], acc["bits"],
                                 acc["max_vector"])
            seen[key] = res["ways"] if res else 1
        ways = seen[key]
        anywhere = max(anywhere, ways)
        if acc["op"] in loop_ops:
            in_loop = max(in_loop, ways)
    return in_loop, anywhere


def features_of(analysis, grid: tuple[int, ...] | None = None, args: dict[str, Any] | None = None) -> Features:
    """The facts for one config at one problem; `grid`/`args` default to the compiled spec's own launch.

    Raises NoFeatures with the reason when a needed input is missing (no TTGIR, no SASS, no grid,
    loop bounds the arguments do not give)."""
    return _features(analysis.artifact, analysis.summary, analysis.parsed.get("ttgir"), grid, args)


def features_of_artifact(artifact, summary=None, grid=None, args=None, bound: bool = False) -> dict[str, Any]:
    """features_of for a bare Artifact (a sweep worker): parses the TTGIR alone, not every stage; in the stored
    form (Features.to_dict), which a sweep row keeps and a measured file holds.

    `bound=True` reads no SASS: the facts of the model's lower bound (see bound_facts), for `tune`'s first
    pass; such facts carry "bound": True and are never shown as a prediction."""
    from tritonscope.language.dialects import dialect
    from tritonscope.analyses.summary import summarize

    text = artifact.stages.get("ttgir")
    stage = dialect("ttgir").parse(text, file=artifact.spec.file, first_line=artifact.python_first_line) \
        if text else None
    return _features(artifact, summary or summarize(artifact), stage, grid, args, bound=bound).to_dict()


def bound_facts(lo: "_Loops", pipelined: bool) -> dict[str, Any]:
    """The SASS's side of the facts at the least the model can make of it: a lower bound on the prediction.

    model.predict_features is a soft maximum (increasing in every term) of terms that each grow with these
    facts: no instructions (issue and shared terms 0), no spills (spill_instructions comes from the SASS, so
    the summary has none), no sibling loops (no L2 re-reads from DRAM), no load-use waits, and no barriers (so
    no block moves in step: model.moves_in_step adds latency and only where the SASS shows them).  The latency
    of a loop counts only where the SASS cannot lower it: a pipelined single loop's iterations (the model
    counts them from the TTGIR either way); an unpipelined loop waits per load-use wait of the SASS, and
    sibling loops run ceil(iterations / unroll) times, so both keep only the per-tile latency (has_loop
    False: rounds x one latency x tile_fixed, less than the real rounds x (waits + outer x tile_fixed)).
    tests/test_cost.py checks bound <= prediction on every measured config."""
    return {"sass_loop": {}, "sass_outside": {}, "sass_loops": [], "local_bytes_loop": 0, "local_bytes_outside": 0,
            "bank_ways_loop": 1, "bank_ways": 1, "loop_waits": {}, "outside_ldgs": 0, "outside_waits": 0,
            "mma_shape": None, "bound": True,
            **({} if pipelined and len(lo.leaves) <= 1 else {"has_loop": False})}


def _thread_bytes(ops, loop: int, threads: int) -> int:
    """Bytes one thread loads per iteration of `loop` by the TTGIR: each global load's tensor spread over the
    threads, at least one element each (a tensor smaller than the block is replicated, not split)."""
    from tritonscope.analyses.explain import GLOBAL_LOADS, _prod, access_bytes

    total = 0.0
    for op in ops:
        if op.name in GLOBAL_LOADS and op.name not in TMA_OPS and op.loops and op.loops[-1] == loop:
            b = access_bytes(op)
            n = next((_prod(t.shape) for t in op.types if t.kind == "tensor" and t.static), 0)
            if not b or not n:
                return 0
            total += max(b / n, b / threads)
    return int(total)


def _unroll(sass_bytes: int, ttgir_bytes: int) -> int:
    """How many TTGIR iterations one pass of the SASS loop does: ptxas unrolls a loop it cannot count (the
    loop's LDGs load k times the bytes one iteration needs).  1 unless the ratio is a whole number >= 2."""
    if not sass_bytes or not ttgir_bytes or sass_bytes < 2 * ttgir_bytes or sass_bytes % ttgir_bytes:
        return 1
    return sass_bytes // ttgir_bytes


def _tma_bytes(op) -> int:
    """Bytes one TMA copy moves: its largest static tensor/memdesc (the tile, not the barrier)."""
    from tritonscope.analyses.explain import _tensor_bytes

    return max([_tensor_bytes(t) for t in op.types if t.static] or [0])


class _Loops(NamedTuple):
    """The TTGIR's counted ops and loops, read once: every program's counts walk them again."""

    ops: list
    counted: list          # dots, global loads and stores
    loops: list            # every scf.for
    main_loop: int | None  # the innermost loop holding a dot, else a global load
    leaves: list           # innermost loops (no loop inside), in program order


def _features(art, summary, ttgir_stage, grid, args, bound: bool = False) -> Features:
    """The facts of one config: the inputs checked, the TTGIR's work per program, the SASS's loops, in one record
    (`bound`: without the SASS, its side at the least it can be: bound_facts)."""
    from tritonscope.analyses.explain import DOTS, Scalars, _compulsory_bytes, ttgir_ops
    from tritonscope.language.mlir_syntax import alias_table

    spec = art.spec
    grid, args, sass_text = _checked_inputs(art, summary, ttgir_stage, grid, args, need_sass=not bound)
    amd = _is_amd(art, summary)
    ttgir = art.stages.get("ttgir", "")
    ops = ttgir_ops(ttgir_stage)
    aliases = alias_table(ttgir)
    programs = 1
    for g in grid:
        programs *= int(g)
    scalars = Scalars(ops, ttgir, args, grid)
    lo = _loops_of(ops)
    pid_dependent = scalars.pid_dependent and programs > 1
    busiest, total_flops, total_bytes = _busiest_program(lo, scalars, grid, programs, pid_dependent)
    # A store inside a conditional of a flattened loop (a persistent kernel's epilogue) runs once per tile,
    # not once per iteration; no program writes more than every tensor of the launch shared out.
    compulsory = _compulsory_bytes(args)
    if compulsory:
        busiest = dict(busiest, stored=min(busiest["stored"], -(-compulsory // programs)))
    unit, kind, mix = _dot_unit(ops, aliases)
    pipelined = _pipelined(ops, lo.main_loop)
    if bound:
        sass_facts = bound_facts(lo, pipelined)
        config = dict(_config_facts(spec, summary, grid, programs, pid_dependent), spill_instructions=None)
    else:
        sass = read_amdgcn(sass_text) if amd else read_sass(sass_text)
        sass_facts = _sass_facts(sass, lo, aliases, busiest, spec.num_warps, lanes=_lanes(art) if amd else 32,
                                 amd=amd)
        sass_facts["mma_shape"] = sass.mma_shapes[0] if sass.mma_shapes else None
        config = _config_facts(spec, summary, grid, programs, pid_dependent)
    facts = {
        "version": FEATURES_VERSION,
        **config,
        "dot_unit": unit, "peak_kind": kind, "dot_kinds": mix,
        "pipelined": pipelined,
        "tma": any(op.name in ("ttng.async_tma_copy_global_to_local", "tt.descriptor_load") for op in ops),
        "flops_per_program": busiest["flops"], "bytes_loaded_per_program": busiest["loaded"],
        "bytes_stored_per_program": busiest["stored"], "main_iters": busiest["main_iters"],
        "outer_iters": busiest["outer_iters"], "loop_bytes_per_iter": busiest["loop_loaded"],
        "has_loop": lo.main_loop is not None,
        "loop_dots": sum(1 for op in lo.counted if op.name in DOTS and op.loops and op.loops[-1] == lo.main_loop)
        if lo.main_loop is not None else 0,
        "total_flops": total_flops, "total_bytes": total_bytes, "compulsory_bytes": compulsory,
        "inplace_bytes": _inplace_bytes(ops, ttgir, args) if compulsory else None,
    }
    facts.update(sass_facts)
    return Features(**facts)


def _checked_inputs(art, summary, ttgir_stage, grid, args, need_sass: bool = True) -> tuple[tuple, dict, str]:
    """(grid, args, SASS text), or NoFeatures with the reason, before any parsing: the cheap checks first."""
    spec = art.spec
    grid = tuple(grid if grid is not None else (spec.grid or ()))
    args = dict(args if args is not None else (spec.args or {}))
    if not grid:
        raise NoFeatures("no launch grid is known for this kernel: give --grid (e.g. --grid 'cdiv(n, BLOCK)'), or "
                         "--shape where its file's EXAMPLES launch gives the grid")
    if ttgir_stage is None:
        raise NoFeatures("needs the TTGIR (its dots, loads and loops)")
    if _is_amd(art, summary):   # AMD: the AMDGCN's loops stand for the SASS's (cost/amdgcn.py)
        text = art.stages.get("amdgcn")
        if not text and need_sass:
            raise NoFeatures("needs the AMDGCN (instructions per loop iteration); the compile kept none")
        return grid, args, text
    sass_text = art.stages.get("sass")
    if not sass_text and need_sass:
        raise NoFeatures("needs the SASS (instructions per loop iteration); cuobjdump/nvdisasm gave none")
    return grid, args, sass_text


def _is_amd(art, summary) -> bool:
    """An AMD target (HIP backend): its machine code is AMDGCN, read by cost/amdgcn.py."""
    return summary.backend == "hip" or "amdgcn" in art.stages


def _lanes(art) -> int:
    """Lanes per wavefront of an AMD kernel (its descriptor says wave32; CDNA runs 64)."""
    from tritonscope.language.dialects.amdgcn import wave_size

    return wave_size(art.stages.get("amdgcn") or "")


def _loops_of(ops) -> _Loops:
    """The main loop and the innermost loops: the model counts iterations of the first, pairs the others with SASS."""
    from tritonscope.analyses.explain import DOTS, GLOBAL_LOADS, GLOBAL_STORES

    counted = [op for op in ops if op.name in DOTS or op.name in GLOBAL_LOADS or op.name in GLOBAL_STORES]
    loops = [op for op in ops if op.name == "scf.for"]
    # the main loop: the innermost loop holding a dot, else a global load
    main = None
    for op in counted:
        if op.loops and (main is None or (op.name in DOTS and main[1] not in DOTS)):
            main = (op.loops[-1], op.name)
    main_loop = main[0] if main else None
    # innermost loops (no loop inside), in program order: paired with SASS's innermost loops when they match
    leaves = [lp for lp in loops if not any(lp.index in o.loops for o in loops)]
    return _Loops(ops, counted, loops, main_loop, leaves)


def _one_program(pid, lo: _Loops, scalars) -> dict[str, Any] | None:
    """FLOPs, bytes and trip counts of program `pid` (programs can differ); None: a loop bound is not known."""
    from tritonscope.analyses.explain import trip_counts

    trips = trip_counts(lo.ops, scalars.values(pid))
    work = _program_work(lo, trips)
    if work is None:
        return None
    flops, loaded, stored, loop_loaded, leaf_loaded = work
    main_iters, outer_iters, leaf_iters = _program_iters(lo, trips)
    return {"flops": flops, "loaded": loaded, "stored": stored, "main_iters": main_iters,
            "outer_iters": outer_iters, "loop_loaded": loop_loaded, "leaf_iters": leaf_iters,
            "leaf_loaded": [leaf_loaded[lp.index] for lp in lo.leaves]}


def _program_work(lo: _Loops, trips) -> tuple[int, int, int, int, dict] | None:
    """(FLOPs, bytes loaded, stored, loaded per main-loop iteration, per innermost loop): each op x its trips."""
    from tritonscope.analyses.explain import DOTS, GLOBAL_LOADS, access_bytes, dot_flops

    flops = loaded = stored = loop_loaded = 0
    leaf_loaded = {lp.index: 0 for lp in lo.leaves}   # bytes each innermost loop loads over all its trips
    for op in lo.counted:
        n = 1
        for lp in op.loops:
            t = trips.get(lp)
            if t is None:
                return None
            n *= t
        if op.name in DOTS:
            f = dot_flops(op)
            if f is None:
                return None
            flops += f * n
        elif op.name in GLOBAL_LOADS:
            b = _tma_bytes(op) if op.name in TMA_OPS else access_bytes(op)
            loaded += b * n
            if op.loops and op.loops[-1] in leaf_loaded:
                leaf_loaded[op.loops[-1]] += b * n
            if lo.main_loop is not None and lo.main_loop in op.loops:
                loop_loaded += b
        else:
            stored += (_tma_bytes(op) if op.name in TMA_OPS else access_bytes(op)) * n
    return flops, loaded, stored, loop_loaded, leaf_loaded


def _program_iters(lo: _Loops, trips) -> tuple[int, int, list[int]]:
    """(main-loop iterations, iterations of the loops around it, each innermost loop's): what the latency counts."""
    main_iters = outer_iters = 1
    if lo.main_loop is not None:
        chain = [lp for lp in lo.loops if lp.index == lo.main_loop]
        enclosing = chain[0].loops if chain else ()
        for lp in enclosing:
            t = trips.get(lp)
            outer_iters *= t if t is not None else 0
        main_iters = outer_iters * (trips.get(lo.main_loop) or 0)
    leaf_iters = []
    for lp in lo.leaves:
        n = trips.get(lp.index) or 0
        for outer_lp in lp.loops:
            n *= trips.get(outer_lp) or 0
        leaf_iters.append(n)
    return main_iters, outer_iters, leaf_iters


def _busiest_program(lo: _Loops, scalars, grid, programs: int, pid_dependent: bool) -> tuple[dict, int, int]:
    """(the busiest program's counts, total FLOPs, total bytes): programs whose work depends on their id sampled."""
    if not pid_dependent:
        per = _one_program((0, 0, 0), lo, scalars)
        if per is None:
            raise NoFeatures("loop bounds are not known from the launch's arguments")
        return per, per["flops"] * programs, (per["loaded"] + per["stored"]) * programs
    g = list(grid) + [1] * (3 - len(grid))
    pids = [(x, y, z) for z in range(g[2]) for y in range(g[1]) for x in range(g[0])]
    stride = max(1, len(pids) // 512)
    sample = pids[::stride]
    got = [_one_program(p, lo, scalars) for p in sample]
    if any(x is None for x in got):
        raise NoFeatures("loop bounds are not known from the launch's arguments")
    busiest = max(got, key=lambda r: (r["flops"], r["loaded"] + r["stored"], r["main_iters"]))
    scale = len(pids) / len(sample)
    total_flops = int(sum(r["flops"] for r in got) * scale)
    total_bytes = int(sum(r["loaded"] + r["stored"] for r in got) * scale)
    return busiest, total_flops, total_bytes


def _sibling_loops(inner, lo: _Loops, busiest: dict, num_warps, lanes: int = 32) -> list[dict[str, Any]]:
    """Each innermost SASS loop with its own trip count and bytes, when they pair one to one with the TTGIR's."""
    # several sibling loops (a layer norm's three passes): each SASS loop body with its own trip count and the
    # bytes its loads move (a later pass re-reading what the first one read hits L2 only while the rows of the
    # co-resident programs fit there: model.py)
    if not (len(inner) == len(lo.leaves) and len(lo.leaves) > 1):
        return []
    threads = lanes * int(num_warps or 4)
    return [{"counts": dict(lp.counts), "iters": n, "loaded": b, "local_bytes": lp.local_bytes,
             "unroll": _unroll(lp.ldg_bytes, _thread_bytes(lo.ops, leaf.index, threads)),
             "ldgs": lp.ldgs, "waits": lp.waits, "tail_ldgs": lp.tail_ldgs, "tail_waits": lp.tail_waits}
            for lp, leaf, n, b in zip(inner, lo.leaves, busiest["leaf_iters"], busiest["leaf_loaded"])]


def _sass_facts(sass, lo: _Loops, aliases, busiest: dict, num_warps, lanes: int = 32,
                amd: bool = False) -> dict[str, Any]:
    """The SASS's side of the facts: instructions in the main loop and outside it, sibling loops, spills, waits
    (`lanes`: threads per warp, 32; an AMD wavefront's 64 where `amd`: the AMDGCN cost/amdgcn.py reads)."""
    inner = sass.innermost()
    body: dict[str, int] = {}
    best = None
    if inner and lo.main_loop is not None:
        best = sass.main()   # the loop reader's main loop (language/loops.main_loop): diff --loop's, versions'
        body = dict(best.counts)
    outside = {k: v - body.get(k, 0) for k, v in sass.counts.items()}
    sass_loops = _sibling_loops(inner, lo, busiest, num_warps, lanes)
    loop_local = 0
    loop_waits: dict[str, int] = {}
    if best is not None:
        loop_local = best.local_bytes
        threads = lanes * int(num_warps or 4)
        loop_waits = {"ldgs": best.ldgs, "waits": best.waits, "tail_ldgs": best.tail_ldgs,
                      "tail_waits": best.tail_waits, "unroll": _unroll(best.ldg_bytes,
                                                                      _thread_bytes(lo.ops, lo.main_loop, threads))}
    # the bank model is NVIDIA's (32 banks of 4 bytes, a warp's wavefronts): on AMD no conflicts are counted
    ways_loop, ways_any = _main_loop_ways(lo, aliases) if not amd else (1, 1)
    return {
        "sass_loop": body, "sass_outside": outside, "sass_loops": sass_loops,
        # bytes of local memory (spill) traffic one thread's LDL/STL move: per main-loop iteration, and outside it
        "local_bytes_loop": loop_local, "local_bytes_outside": max(0, sass.local_bytes - loop_local),
        "bank_ways_loop": ways_loop, "bank_ways": ways_any,
        # global loads and their load-use waits (sass.load_waits): the main loop's, and the code outside loops
        "loop_waits": loop_waits, "outside_ldgs": sass.ldgs - sum(lp.ldgs for lp in sass.loops if lp.depth == 0),
        "outside_waits": sass.waits,
    }


def _main_loop_ways(lo: _Loops, aliases) -> tuple[int, int]:
    """_bank_ways of the main loop's ops; a layout that cannot be drawn counts no conflicts (said in the terms)."""
    loop_ops = {op.index for op in lo.ops if lo.main_loop is not None and lo.main_loop in op.loops}
    try:
        return _bank_ways(lo.ops, aliases, loop_ops)
    except Exception:  # a layout layouts.py cannot draw: no conflicts counted (said in the terms)
        return 1, 1


def _pipelined(ops, main_loop: int | None) -> bool:
    """Whether the main loop copies global memory asynchronously (cp.async or TMA): memory overlaps compute."""
    if main_loop is None:
        return False
    return any(op.name in ("ttg.async_copy_global_to_local", "ttng.async_tma_copy_global_to_local")
               and main_loop in op.loops for op in ops)


def _config_facts(spec, summary, grid, programs: int, pid_dependent: bool) -> dict[str, Any]:
    """The config, its launch and its resources (registers, shared memory, occupancy, spills), as the model reads them."""
    occ = summary.occupancy
    fit_ok = bool(summary.fit.ok) if summary.fit is not None else None
    spills = summary.spills
    return {
        "kernel": spec.kernel, "arch": spec.arch, "num_warps": spec.num_warps, "num_stages": spec.num_stages,
        "constexprs": {k: v for k, v in (spec.constexprs or {}).items()
                       if isinstance(v, (int, float, str, bool))},
        "grid": list(grid), "programs": programs, "pid_dependent": bool(pid_dependent),
        "registers": summary.registers, "shared": summary.shared.dynamic, "fits": fit_ok,
        "blocks_per_sm": occ.blocks_per_sm if occ else None, "limited_by": occ.limited_by if occ else None,
        "spill_bytes": spills.bytes or 0, "spill_instructions": spills.instructions,
    }
