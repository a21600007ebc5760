"""Two pipelines side by side: where the passes of two configs first diverge (diff --passes)."""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass, field, replace

from tritonscope.analyses.passes.model import PassTrace, Step, TextRef
from tritonscope.language.dialects.mlir_passes import skeleton
from tritonscope.analyses.passes.run import trace_passes

# The stages whose pass managers are dumped, in pipeline order.

# --------------------------------------------------------------------------
# diff --passes: the first pass where two configs part ways
# --------------------------------------------------------------------------
#
# Two configs of one kernel (BLOCK 16 vs 64, 4 vs 8 warps) give IR that
# differs everywhere in numbers: shapes, constants, layout parameters, how
# many copies of a per-element sequence the lowering writes.  Those
# differences are the config itself.  What the user wants is the first pass
# that *does something different* to the two kernels.  The rule:
#
# 1. Each dump is read as a skeleton: locations dropped, SSA names -> `%`,
#    digits in symbol names -> `N` (Triton mangles constexprs into the
#    names of the functions it inlines: `zeros__Tc16_c16T_cfp32`),
#    layout aliases -> their kind (`#blocked3` -> `#blocked`), layout
#    definitions dropped (their parameters follow from the shapes), every
#    number (shapes, constants, attributes) -> `N`, the allocation shape of
#    a shared-memory view dropped (a tile cut from a bigger buffer is the
#    tile size speaking), and runs of one repeated item (`f32, f32, f32`)
#    -> `f32, ...`.
# 2. A step's effect is the set of distinct skeleton lines it adds and the
#    set it removes (sets, not counts: 4 more identical convert_layouts is
#    the tile size speaking, a convert_layout on one side only is not).
# 3. Steps are paired by pass name in order (difflib over the name lists,
#    so a pass only one side runs is seen).  The first pair whose effects
#    differ, or the first pass one side runs alone that changes its IR, is
#    where the configs diverge.  Unchanged steps on both sides are skipped
#    without reading any text.
#
# Whether the first dumps already differ (a constexpr that switches code on
# or off in the source) is reported too, as `from_start`.

@dataclass(frozen=True)
class Divergence:
    """Where two pass traces first part ways (see the rule above)."""

    name: str                       # the pass
    stage: str                      # ttir | ttgir | llir
    step_a: int | None              # its step on side A (None: only B runs it)
    step_b: int | None
    only_a: tuple[str, ...]         # skeleton lines A's step adds (+) or removes (-) and B's does not
    only_b: tuple[str, ...]
    ops_a: dict[str, int] = field(default_factory=dict)   # A's op-count changes at that step (+/-)
    ops_b: dict[str, int] = field(default_factory=dict)
    from_start: bool = False        # the first dumps already differ beyond the config
    compared: int = 0               # step pairs compared before it
    # Triton's remarks from that stage's passes that only one side got (remarks are tied to a stage, not a pass)
    remarks_a: tuple[str, ...] = ()
    remarks_b: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        d = asdict(self)
        for key in ("only_a", "only_b", "remarks_a", "remarks_b"):
            d[key] = list(d[key])
        return d


def _op_deltas(step: Step | None) -> dict[str, int]:
    if step is None:
        return {}
    out = {k: v for k, v in step.ops_added.items()}
    for k, v in step.ops_removed.items():
        out[k] = out.get(k, 0) - v
    return dict(sorted(out.items()))


def first_divergence(a: PassTrace, b: PassTrace, *, shown: int = 8) -> tuple[Divergence | None, bool]:
    """(where A and B first diverge, whether their first dumps already differ); (None, ...) if they never do.

    Both traces must still be open (their dump texts are read).
    """
    import difflib

    cache: dict[tuple[int, TextRef], list[str]] = {}

    def skel(trace: PassTrace, ref: TextRef) -> list[str]:
        key = (id(trace), ref)
        if key not in cache:
            cache[key] = skeleton(trace.text(ref))
        return cache[key]

    def effect(trace: PassTrace, step: Step) -> tuple[frozenset, frozenset]:
        if not step.changed or step.after is None:
            return frozenset(), frozenset()
        before, after = set(skel(trace, step.before)), set(skel(trace, step.after))
        return frozenset(after - before), frozenset(before - after)

    def lines(mine, theirs) -> tuple[str, ...]:
        added = sorted(mine[0] - theirs[0])
        removed = sorted(mine[1] - theirs[1])
        return tuple([f"+ {x.strip()}" for x in added][:shown] + [f"- {x.strip()}" for x in removed][:shown])

    def said(div: Divergence) -> Divergence:

        ra = {f"{r.severity}: {r.said}" for r in a.remarks if r.stage == div.stage and r.severity != "note"}
        rb = {f"{r.severity}: {r.said}" for r in b.remarks if r.stage == div.stage and r.severity != "note"}
        return replace(div, remarks_a=tuple(sorted(ra - rb)), remarks_b=tuple(sorted(rb - ra)))

    from_start = bool(a.steps and b.steps) and skel(a, a.steps[0].before) != skel(b, b.steps[0].before)
    names_a = [(s.stage, s.name) for s in a.steps]
    names_b = [(s.stage, s.name) for s in b.steps]
    compared = 0
    matcher = difflib.SequenceMatcher(None, names_a, names_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for sa, sb in zip(a.steps[i1:i2], b.steps[j1:j2]):
                if not sa.changed and not sb.changed:
                    continue
                compared += 1
                ea, eb = effect(a, sa), effect(b, sb)
                if ea != eb:
                    return said(Divergence(sa.name, sa.stage, sa.index, sb.index, lines(ea, eb), lines(eb, ea),
                                           _op_deltas(sa), _op_deltas(sb), from_start, compared)), from_start
            continue
        # a run of passes only one side runs (or runs in another order): the
        # first of them that changes the IR is a divergence
        alone = [(s, None) for s in a.steps[i1:i2] if s.changed] + [(None, s) for s in b.steps[j1:j2] if s.changed]
        if alone:
            sa, sb = min(alone, key=lambda p: (p[0] or p[1]).index)
            step = sa or sb
            trace = a if sa else b
            e = effect(trace, step)
            only = lines(e, (frozenset(), frozenset()))
            return said(Divergence(step.name, step.stage, sa.index if sa else None, sb.index if sb else None,
                                   only if sa else (), only if sb else (), _op_deltas(sa), _op_deltas(sb),
                                   from_start, compared)), from_start
    return None, from_start


def trace_both(request_a, request_b, default_arch: str) -> tuple[PassTrace, PassTrace]:
    """trace_passes for two requests at once (two child processes; the parsing overlaps too).

    Remarks keep their stage only (no second compile to tie them to passes):
    the divergence compares a stage's remarks.
    """
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="tritonscope-passes") as pool:
        fa = pool.submit(trace_passes, request_a, default_arch, attribute=False)
        fb = pool.submit(trace_passes, request_b, default_arch, attribute=False)
        try:
            ta = fa.result()
        except BaseException:
            with contextlib.suppress(BaseException):
                fb.result().close()
            raise
        try:
            tb = fb.result()
        except BaseException:
            ta.close()
            raise
    return ta, tb
