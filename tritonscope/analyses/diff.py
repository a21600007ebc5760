"""Two Analyses -> a ConfigDiff: what changed between two configs of one kernel.

Everything here is data: the summary rows (A, B, delta), the encoding of
each tensor role, one noise-free diff per stage, and a short plain list of
what changed ("B pipelines loads with cp.async (A does not)").  Renderers
live in render/diff_view.py.  Nothing here imports Triton, so saved JSON
reports diff without it.

Noise normalization (each dialect's `normalize`, see tritonscope/language/dialects)
removes what differs between two compiles of the same code without changing
what the code does: source locations, file paths, debug metadata,
SSA/register/label numbering.  Constant *values* are never rewritten; only the uniquing
suffix of a constant's SSA name (`%cst_3` -> `%cst`) is, because the value
stays visible on the line that defines it.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from tritonscope.language import mlir_syntax
from tritonscope.analyses.analysis import Analysis
from tritonscope.language.dialects import STAGE_KEYS
from tritonscope.core.errors import UsageError
from tritonscope.core.model import ARCHES
from tritonscope.analyses.summary import Occupancy, Spills, Summary

# --------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class SummaryRow:
    """One line of the A-vs-B table: a quantity, both values, and the change."""

    group: str          # "config", "resources", "mix", "fit"
    name: str           # "dynamic shared memory"
    a: str
    b: str
    delta: str = ""     # "+36,864 (4.0x)", "" when equal
    changed: bool = False


@dataclass(frozen=True)
class RoleEncoding:
    """The encoding of one tensor role on both sides (None: role absent)."""

    role: str           # "A operand", "B operand", "accumulator", "shared buffer a"
    a: str | None
    b: str | None

    @property
    def changed(self) -> bool:
        # as layouts: Triton 3.4's amd_mfma<{versionMajor = 4, versionMinor = 0, instrShape = [16, 16]}> is
        # 3.6's amd_mfma<{version = 4, instrShape = [16, 16, 32]}>
        from tritonscope.language.encodings import same_layout

        return not same_layout(self.a, self.b)


@dataclass(frozen=True)
class DiffLine:
    tag: str                  # " " same, "-" only in A, "+" only in B, "@" hunk header
    text: str                 # the normalized text
    a_line: int | None = None  # raw line number in A's stage (for notes)
    b_line: int | None = None
    notes: tuple[str, ...] = ()  # labels of the annotations on that line (either side)


@dataclass(frozen=True)
class StageDiff:
    key: str
    a_lines: int              # normalized line counts
    b_lines: int
    added: int
    removed: int
    lines: tuple[DiffLine, ...]   # unified hunks; empty when identical
    missing: str | None = None    # "A" / "B" when a side lacks the stage

    @property
    def identical(self) -> bool:
        return self.missing is None and not self.added and not self.removed


@dataclass
class ConfigDiff:
    a_label: str
    b_label: str
    kernel: str
    rows: list[SummaryRow]
    roles: list[RoleEncoding]
    stages: list[StageDiff]
    story: list[str]
    config_changes: list[str] = field(default_factory=list)  # "BLOCK: 16 -> 64"

    @property
    def identical(self) -> bool:
        return all(s.identical for s in self.stages)

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a_label, "b": self.b_label, "kernel": self.kernel,
            "identical": self.identical,
            "config_changes": self.config_changes,
            "story": self.story,
            "summary": [vars(r) for r in self.rows],
            "roles": [{"role": r.role, "a": r.a, "b": r.b, "changed": r.changed} for r in self.roles],
            "stages": [{"stage": s.key, "identical": s.identical, "missing": s.missing,
                        "added": s.added, "removed": s.removed, "a_lines": s.a_lines, "b_lines": s.b_lines,
                        "diff": [[d.tag, d.text, d.a_line, d.b_line, list(d.notes)] for d in s.lines]}
                       for s in self.stages],
        }


# --------------------------------------------------------------------------
# Same kernel?
# --------------------------------------------------------------------------


def different_kernels(a: Analysis, b: Analysis) -> str | None:
    """Why A and B are not one kernel (None when they are).

    Same kernel name and the same source, or the same name and the same
    target (an edited kernel, yesterday vs today), count as one kernel; a
    copy of a file at another path is the same kernel.
    """
    sa, sb = a.artifact.spec, b.artifact.spec
    if sa.kernel != sb.kernel:
        return f"A is {sa.kernel} and B is {sb.kernel}"
    same_source = _norm_python(a) == _norm_python(b)
    if not same_source and sa.target != sb.target:
        return f"A ({sa.target}) and B ({sb.target}) are both named {sa.kernel} but have different source"
    return None


def _norm_python(an: Analysis) -> list[str]:
    return [ln.rstrip() for ln in an.artifact.stages.get("python", "").splitlines() if ln.strip()]


def spec_key(spec) -> tuple:
    """What decides a compile, for 'A and B are the same config' (path excluded)."""
    return (spec.kernel, tuple(sorted(spec.args.items(), key=str)), tuple(sorted(spec.constexprs.items(), key=str)),
            spec.num_warps, spec.num_stages, spec.arch, tuple(sorted(spec.options.items(), key=str)))


# --------------------------------------------------------------------------
# The diff
# --------------------------------------------------------------------------


def diff_analyses(a: Analysis, b: Analysis, *, stages: tuple[str, ...] = STAGE_KEYS, context: int = 2,
                  force_different: bool = False) -> ConfigDiff:
    why = different_kernels(a, b)
    if why and not force_different:
        raise UsageError(f"Refusing to diff two different kernels: {why}.",
                         hint="Pass --force-different to diff them anyway.")
    fa, fb = facts(a), facts(b)
    roles = role_encodings(a, b)
    stage_diffs = [diff_stage(a, b, key, context=context) for key in stages
                   if key in a.artifact.stages or key in b.artifact.stages]
    return ConfigDiff(
        a_label=side_label(a, b), b_label=side_label(b, a), kernel=a.artifact.spec.kernel,
        rows=summary_rows(a, b, fa, fb),
        roles=roles,
        stages=stage_diffs,
        story=story(a, b, fa, fb, roles) + prediction_story(a.prediction, b.prediction),
        config_changes=config_changes(a, b),
    )


def side_label(an: Analysis, other: Analysis | None = None) -> str:
    """'BLOCK=16 w4 s3 sm_90a (triton 3.9.0)', plus the launch options that differ from the other side's."""
    art = an.artifact
    theirs = other.artifact.spec.options if other is not None else art.spec.options
    extra = "".join(f" {k}={v}" for k, v in art.spec.options.items() if theirs.get(k) != v)
    return f"{art.spec.label()}{extra} (triton {art.triton_version})"


def config_changes(a: Analysis, b: Analysis) -> list[str]:
    sa, sb = a.artifact.spec, b.artifact.spec
    out = []
    for name in list(dict.fromkeys([*sa.constexprs, *sb.constexprs])):
        va, vb = sa.constexprs.get(name, "-"), sb.constexprs.get(name, "-")
        if va != vb:
            out.append(f"{name}: {va} -> {vb}")
    for label, va, vb in (("num_warps", sa.num_warps, sb.num_warps), ("num_stages", sa.num_stages, sb.num_stages),
                          ("arch", sa.arch, sb.arch), ("dtype", sa.dtype, sb.dtype),
                          ("shape", _shape(sa.shape), _shape(sb.shape)),
                          ("triton", a.artifact.triton_version, b.artifact.triton_version)):
        if va != vb:
            out.append(f"{label}: {va} -> {vb}")
    for name in list(dict.fromkeys([*sa.args, *sb.args])):
        va, vb = sa.args.get(name, "-"), sb.args.get(name, "-")
        if va != vb and not (sa.shape != sb.shape and isinstance(va, (int, str))):
            out.append(f"{name}: {va} -> {vb}")
    for name in list(dict.fromkeys([*sa.options, *sb.options])):  # launch options: maxnreg, num_ctas, ...
        va, vb = sa.options.get(name, "-"), sb.options.get(name, "-")
        if va != vb:
            out.append(f"{name}: {va} -> {vb}")
    return out


def _shape(shape) -> str | None:
    return "x".join(map(str, shape)) if shape else None


# --------------------------------------------------------------------------
# Facts about one side
# --------------------------------------------------------------------------

# The machine stage whose instruction classes the summary rows and the story compare.
MIX_STAGE = "ptx"


@dataclass(frozen=True)
class Facts:
    mma: tuple[str, ...]             # ("mma.sync m16n8k16 row.col.f32.f16.f16.f32",)
    mma_short: tuple[str, ...]       # ("mma.sync m16n8k16",): family and shape, for the story
    load_bits: tuple[int, ...]       # widths (bits) of global loads, sorted
    store_bits: tuple[int, ...]
    cp_async_bytes: tuple[int, ...]  # bytes per cp.async
    mix: dict[str, int]              # MIX_STAGE's instruction classes (dialects.CLASSES order)
    stage: str = MIX_STAGE           # the stage counted: PTX on CUDA, AMDGCN on AMD (the first that counts)


def facts(an: Analysis) -> Facts:
    """One side's instructions, as its machine stage's classifier names them (one pass over the text).

    CUDA compiles are counted in PTX, AMD ones in AMDGCN (dialects.machine_stage:
    the first stage in pipeline order whose dialect counts instructions); both
    classifiers use the same class words and fact names, so the sides compare.
    """
    from tritonscope.language.dialects import instructions, machine_stage, order_classes

    stage = machine_stage(an.artifact.stages) or MIX_STAGE

    mma: dict[str, None] = {}
    short: dict[str, None] = {}
    loads: set[int] = set()
    stores: set[int] = set()
    cp: set[int] = set()
    counts: dict[str, int] = {}
    for _, ins in instructions(stage, an.artifact.stages.get(stage, "").splitlines()):
        counts[ins.cls] = counts.get(ins.cls, 0) + 1
        f = ins.facts
        # A dialect names the facts it knows; one that lacks these (a new one) still counts.
        if ins.cls in ("mma", "wgmma", "tcgen05 mma"):
            head = f"{f['family']} {f['shape']}" if "family" in f and "shape" in f else ins.name
            mma[head + (f" {'.'.join(f['qualifiers'])}" if f.get("qualifiers") else "")] = None
            short[head] = None
        elif ins.cls in ("global load", "global store") and "bytes" in f:
            (loads if ins.cls == "global load" else stores).add(f["bytes"] * 8)
        elif ins.cls == "async copy" and "bytes" in f:
            cp.add(f["bytes"])
    mix = {k: counts[k] for k in order_classes(counts)}
    return Facts(tuple(mma), tuple(short), tuple(sorted(loads)), tuple(sorted(stores)), tuple(sorted(cp)), mix,
                 stage)


# --------------------------------------------------------------------------
# Summary rows
# --------------------------------------------------------------------------


def summary_rows(a: Analysis, b: Analysis, fa: Facts, fb: Facts) -> list[SummaryRow]:
    """The A-vs-B table: both sides' Analysis.summary (computed once) and the coarse mix."""
    ua, ub = a.summary, b.summary
    sa, sb = a.artifact.spec, b.artifact.spec
    amd = "hip" in (ua.backend, ub.backend)
    rows = [
        _text_row("config", "config", sa.label(), sb.label()),
        _text_row("config", "triton", a.artifact.triton_version, b.artifact.triton_version),
        _num_row("resources", "dynamic shared memory / LDS (bytes)" if amd else "dynamic shared memory (bytes)",
                 ua.shared.dynamic, ub.shared.dynamic, ratio=True),
        _num_row("resources", "registers per thread (AMD: VGPRs per lane)" if amd else "registers per thread",
                 ua.registers, ub.registers),
    ]
    if amd:
        for name, va, vb in (("AGPRs per lane (AMD)", ua.agprs, ub.agprs), ("SGPRs per wave (AMD)", ua.sgprs, ub.sgprs)):
            row = _num_row("resources", name, va, vb)
            na = "n/a" if ua.backend != "hip" else row.a
            nb = "n/a" if ub.backend != "hip" else row.b
            rows.append(SummaryRow(row.group, row.name, na, nb, row.delta, row.changed and "n/a" not in (na, nb)))
    rows.append(_num_row("resources", "spills (stack / scratch + local bytes per thread)" if amd else
                         "spills (stack + local bytes per thread)", ua.spills.bytes, ub.spills.bytes))
    if ua.spills.spills or ub.spills.spills:
        rows.append(_text_row("resources", "spill instructions (SASS / AMDGCN)" if amd else "spill instructions (SASS)",
                              _spill_ops(ua.spills, ua.backend), _spill_ops(ub.spills, ub.backend)))
    pa, pb = _problems(ua), _problems(ub)
    rows.append(_text_row("fit", "fits " + _arch_pair(sa.arch, sb.arch),
                          "no" if pa else "yes", "no" if pb else "yes"))
    rows.append(_text_row("fit", "occupancy (blocks/SM or waves/SIMD, limited by)" if amd else
                          "occupancy (blocks/SM, limited by)", _occ(ua.occupancy), _occ(ub.occupancy)))
    from tritonscope.language.dialects import dialect, order_classes

    stage = " / ".join(dict.fromkeys(dialect(f.stage).title for f in (fa, fb)))
    for c in order_classes([*fa.mix, *fb.mix]):
        rows.append(_num_row("mix", f"{c} ({stage})", fa.mix.get(c, 0), fb.mix.get(c, 0)))
    rows.append(_text_row("mix", "MMA instruction", ", ".join(fa.mma) or "none", ", ".join(fb.mma) or "none"))
    rows.append(_text_row("mix", "cp.async size (bytes)", _list(fa.cp_async_bytes), _list(fb.cp_async_bytes)))
    rows.append(_text_row("mix", "global load width (bits)", _list(fa.load_bits), _list(fb.load_bits)))
    rows.append(_text_row("mix", "global store width (bits)", _list(fa.store_bits), _list(fb.store_bits)))
    rows.extend(_prediction_rows(a.prediction, b.prediction))
    return rows


def _prediction_rows(pa: dict | None, pb: dict | None) -> list[SummaryRow]:
    """Predicted time on one GPU (compile/diff --predict): both sides, and B over A."""
    if not pa and not pb:
        return []

    def ms(p: dict | None) -> str:
        if not p:
            return "-"
        return f"{p['predicted_ms']:.4g}" if p.get("predicted_ms") is not None else "no prediction"

    ta, tb = (pa or {}).get("predicted_ms"), (pb or {}).get("predicted_ms")
    delta = f"{tb / ta:.3g}x" if ta and tb else ""
    gpu = (pa or pb or {}).get("gpu") or "?"
    if any((p or {}).get("datasheet_only") for p in (pa, pb)):   # AMD: never measured on an AMD GPU (cost/model.py)
        gpu += ", datasheet only"
    return [SummaryRow("predicted", f"predicted time (ms, {gpu})", ms(pa), ms(pb), delta, bool(delta) and ta != tb),
            _text_row("predicted", "limited by", (pa or {}).get("regime_words") or "-",
                      (pb or {}).get("regime_words") or "-")]


def prediction_story(pa: dict | None, pb: dict | None) -> list[str]:
    """'B is predicted 1.82x faster than A on H100 SXM: tensor 0.161 -> 0.088 ms, ...' (the terms that moved most)."""
    if not pa or not pb or pa.get("predicted_ms") is None or pb.get("predicted_ms") is None:
        why = [f"{side}: no prediction ({p.get('why') or 'not covered'})" for side, p in (("A", pa), ("B", pb))
               if p and p.get("predicted_ms") is None]
        return why
    ta, tb = pa["predicted_ms"], pb["predicted_ms"]
    if ta == tb:
        return [f"A and B are predicted equally fast on {pa.get('gpu')} ({ta:.4g} ms)"]
    faster, ratio = ("B", ta / tb) if tb < ta else ("A", tb / ta)
    terms_a, terms_b = pa.get("terms_ms") or {}, pb.get("terms_ms") or {}
    moved = sorted(set(terms_a) | set(terms_b), key=lambda k: -abs(terms_b.get(k, 0) - terms_a.get(k, 0)))[:3]
    words = ", ".join(f"{k} {terms_a.get(k, 0):.3g} -> {terms_b.get(k, 0):.3g} ms" for k in moved)
    close = ""
    errors = [e for e in (pa.get("expected_error"), pb.get("expected_error")) if e is not None]
    if errors and ratio - 1 < max(errors):
        close = f" (within the expected error, ±{max(errors):.0%}: measure both)"
    regimes = ""
    if pa.get("regime") != pb.get("regime"):
        regimes = f"; A is {pa.get('regime_words')}, B {pb.get('regime_words')}"
    honest = ("; datasheet only, not measured on any AMD GPU (expected error doubled)"
              if pa.get("datasheet_only") or pb.get("datasheet_only") else "")
    return [f"{faster} is predicted {ratio:.2f}x faster on {pa.get('gpu')}{close}: {words}{regimes}{honest}"]


def _arch_pair(a: str, b: str) -> str:
    return a if a == b else f"{a} / {b}"


def _occ(o: Occupancy | None) -> str:
    if o is None:
        return "-"
    if o.waves_per_simd is not None:
        return f"{o.waves_per_simd} waves/SIMD ({o.limited_by})"
    return f"{o.blocks_per_sm} ({o.limited_by})"


def _spill_story(sp: Spills, backend: str = "cuda") -> str:
    """'3,960 bytes of stack per thread, 2,981 STL and 3,814 LDL' (AMD: scratch per lane, scratch stores/loads)."""
    from tritonscope.analyses.summary import SPILL_WORDS

    words = SPILL_WORDS.get(backend, SPILL_WORDS["cuda"])
    where = ("stack" if backend == "cuda" else words[3]) if sp.stack else "local memory"
    ops = _spill_ops(sp, backend)
    return f"{sp.bytes or 0:,} bytes of {where} per {words[4]}" + (f", {ops.replace(', ', ' and ')}" if ops else "")


def _problems(summary: Summary) -> tuple[str, ...]:
    return summary.fit.problems if summary.fit else ()


def _spill_ops(sp: Spills, backend: str = "cuda") -> str | None:
    from tritonscope.analyses.summary import SPILL_WORDS

    if sp.stores is None and sp.loads is None:
        return None
    store_op, load_op = SPILL_WORDS.get(backend, SPILL_WORDS["cuda"])[:2]
    return f"{sp.stores or 0:,} {store_op}, {sp.loads or 0:,} {load_op}"


def _list(values) -> str:
    return ", ".join(map(str, values)) or "-"


def _text_row(group: str, name: str, a: Any, b: Any) -> SummaryRow:
    a, b = ("unknown" if a is None else str(a)), ("unknown" if b is None else str(b))
    return SummaryRow(group, name, a, b, "" if a == b else "changed", a != b)


def _num_row(group: str, name: str, a: int | None, b: int | None, *, ratio: bool = False) -> SummaryRow:
    fa = "unknown" if a is None else f"{a:,}"
    fb = "unknown" if b is None else f"{b:,}"
    if a is None or b is None or a == b:
        return SummaryRow(group, name, fa, fb, "", a != b)
    delta = f"{b - a:+,}"
    if ratio and a and b:
        times = f"{b / a:.3g}"
        delta += f" ({_percent(b, a)})" if times == "1" else f" ({times}x)"
    return SummaryRow(group, name, fa, fb, delta, True)


# --------------------------------------------------------------------------
# Encodings by tensor role (from the TTGIR text)
# --------------------------------------------------------------------------

# A dot's line and a shared allocation's name: mlir_syntax's patterns
from tritonscope.language.mlir_syntax import DOT_OP as _DOT_RE, LOCAL_ALLOC_NAME as _ALLOC_RE


def roles_of(ttgir: str) -> dict[str, str]:
    """Tensor role -> its encoding (aliases expanded), read from TTGIR text."""
    aliases = mlir_syntax.alias_table(ttgir)
    out: dict[str, str] = {}
    dots = 0
    alloc_names: dict[str, int] = {}
    for raw in ttgir.splitlines():
        if raw.startswith("#"):
            continue
        line = mlir_syntax.strip_locs(raw)[0].rstrip()
        if _DOT_RE.search(line):
            types = mlir_syntax.split_top(mlir_syntax.type_part(line), (" * ", " -> "))
            if len(types) == 3:
                dots += 1
                suffix = "" if dots == 1 else f" (dot {dots})"
                for role, ty in zip(("A operand", "B operand", "accumulator"), types):
                    out[role + suffix] = _role_encoding(ty, aliases, with_kind=True)
            continue
        m = _ALLOC_RE.match(line)
        if m:
            types = mlir_syntax.split_top(mlir_syntax.type_part(line), (" -> ",))
            name = m[1]
            alloc_names[name] = alloc_names.get(name, 0) + 1
            if alloc_names[name] > 1:
                name = f"{name} #{alloc_names[name]}"
            out[f"shared buffer {name}"] = _role_encoding(types[-1] if types else "", aliases, with_kind=False)
    return out


def role_encodings(a: Analysis, b: Analysis) -> list[RoleEncoding]:
    ra = roles_of(a.artifact.stages.get("ttgir", ""))
    rb = roles_of(b.artifact.stages.get("ttgir", ""))
    return [RoleEncoding(role, ra.get(role), rb.get(role)) for role in dict.fromkeys([*ra, *rb])]


def _role_encoding(ty: str, aliases: dict[str, str], *, with_kind: bool) -> str:
    """One operand's type as a role entry, aliases expanded and dialect prefixes dropped:

        tensor<16x16xf32, #mma>                  ->  '16x16xf32 tensor nvidia_mma<{versionMajor = 2, ...}>'
        !ttg.memdesc<2x16x16xf16, #shared, #smem>  ->  '2x16x16xf16 swizzled_shared<{...}>'   (with_kind=False)
    """
    try:
        t = mlir_syntax.parse_type(ty) if ty else None
    except mlir_syntax.MlirSyntaxError:
        t = None
    if t is None or t.kind == "scalar":
        head, encs = ty, []
    else:
        dims = "".join(f"{'?' if d is None else d}x" for d in t.shape)
        head = dims + t.elem
        encs = [p for p in (t.encoding, *t.params) if p and p.startswith("#")]
    if with_kind:
        enc = encs[0] if encs else ""
        text = f"{head} {'smem' if t is not None and t.kind == 'memdesc' else 'tensor'} {enc}".strip()
    else:
        enc = next((p for p in encs if p != "#smem"), "")
        text = f"{head} {enc}".strip()
    from tritonscope.language.encodings import normalize_spelling

    # one spelling for what Triton versions write differently (amd_mfma's version), so both sides read alike
    return normalize_spelling(mlir_syntax.expand_aliases(text, aliases)).replace("#ttg.", "").replace("#ttng.", "")


# --------------------------------------------------------------------------
# Noise normalization
# --------------------------------------------------------------------------


def strip_mlir_loc(line: str) -> str:
    """Remove every ` loc(...)` (balanced, nested) from one MLIR line.

    %x = tt.get_program_id x : i32 loc(#loc2)  ->  %x = tt.get_program_id x : i32
    """
    return mlir_syntax.strip_locs(line)[0]


def normalize_stage(key: str, text: str) -> list[tuple[int, str]]:
    """Stage text -> [(raw line number, normalized text)] with noise removed (the stage dialect's normalizer)."""
    from tritonscope.language.dialects import dialect

    return dialect(key).normalize(text)


def diff_stage(a: Analysis, b: Analysis, key: str, *, context: int = 2) -> StageDiff:
    ta, tb = a.artifact.stages.get(key), b.artifact.stages.get(key)
    if ta is None or tb is None:
        return StageDiff(key, 0, 0, 0, 0, (), missing="A" if ta is None else "B")
    na, nb = normalize_stage(key, ta), normalize_stage(key, tb)
    la, lb = [t for _, t in na], [t for _, t in nb]
    notes_a, notes_b = a.notes_for(key), b.notes_for(key)
    sm = difflib.SequenceMatcher(None, la, lb, autojunk=False)
    added = removed = 0
    out: list[DiffLine] = []
    for group in sm.get_grouped_opcodes(context):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        out.append(DiffLine("@", f"@@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@"))
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                for x, y in zip(range(a1, a2), range(b1, b2)):
                    out.append(DiffLine(" ", la[x], na[x][0], nb[y][0], _labels(notes_a, na[x][0])))
                continue
            for x in range(a1, a2):
                removed += 1
                out.append(DiffLine("-", la[x], na[x][0], None, _labels(notes_a, na[x][0])))
            for y in range(b1, b2):
                added += 1
                out.append(DiffLine("+", lb[y], None, nb[y][0], _labels(notes_b, nb[y][0])))
    return StageDiff(key, len(la), len(lb), added, removed, tuple(out))


def _labels(notes: dict, line: int) -> tuple[str, ...]:
    return tuple(n.label for n in notes.get(line, ()))


# --------------------------------------------------------------------------
# The story: a short plain list of what changed
# --------------------------------------------------------------------------


def story(a: Analysis, b: Analysis, fa: Facts, fb: Facts, roles: list[RoleEncoding]) -> list[str]:
    out: list[str] = []
    ca, cb = fa.mix.get("async copy", 0), fb.mix.get("async copy", 0)
    if ca and not cb:
        out.append("A pipelines loads with cp.async (B does not)")
    elif cb and not ca:
        out.append("B pipelines loads with cp.async (A does not)")
    ta, tb = fa.mix.get("tma copy", 0), fb.mix.get("tma copy", 0)
    if bool(ta) != bool(tb):
        out.append(f"{'A' if ta else 'B'} loads through TMA (cp.async.bulk; {'B' if ta else 'A'} does not)")

    if fa.mma != fb.mma:
        ma, mb = ", ".join(fa.mma_short), ", ".join(fb.mma_short)
        if ma and mb:
            out.append(f"B uses {mb} instead of {ma}")
        elif mb:
            out.append(f"B uses {mb} (A has no tensor-core MMA)")
        elif ma:
            out.append(f"B has no tensor-core MMA (A uses {ma})")
    la, lb = fa.mix.get("ldmatrix", 0), fb.mix.get("ldmatrix", 0)
    if bool(la) != bool(lb):
        out.append(f"{'B' if lb else 'A'} loads MMA operands from shared memory with ldmatrix "
                   f"({'A' if lb else 'B'} does not)")

    ra, rb = a.artifact.resources, b.artifact.resources
    sa, sb = ra.dynamic_shared, rb.dynamic_shared
    if sa != sb:
        if sa and sb:
            ratio = sb / sa
            if _ratio(max(ratio, 1 / ratio)) == "1":  # 49,168 vs 49,152 is no "1x": say how much
                d = sb - sa
                out.append(f"B needs {abs(d):,} {'more' if d > 0 else 'fewer'} bytes of shared memory "
                           f"({_percent(sb, sa)}: {sb:,} vs {sa:,} bytes)")
            elif ratio >= 1:
                out.append(f"B needs {_ratio(ratio)}x the shared memory ({sb:,} vs {sa:,} bytes)")
            else:
                out.append(f"B needs {_ratio(1 / ratio)}x less shared memory ({sb:,} vs {sa:,} bytes)")
        else:
            out.append(f"{'B' if sb else 'A'} uses {max(sa, sb):,} bytes of shared memory "
                       f"({'A' if sb else 'B'} uses none)")
    if ra.registers and rb.registers and ra.registers != rb.registers:
        d = rb.registers - ra.registers
        out.append(f"B uses {abs(d)} {'more' if d > 0 else 'fewer'} registers per thread "
                   f"({rb.registers} vs {ra.registers})")
    spa, spb = a.summary.spills, b.summary.spills
    if (spa.bytes or 0) != (spb.bytes or 0) or bool(spa.spills) != bool(spb.spills):
        if spb.spills and not spa.spills:
            out.append(f"B spills: {_spill_story(spb, b.summary.backend)} (A does not)")
        elif spa.spills and not spb.spills:
            out.append(f"A spills {_spill_story(spa, a.summary.backend)} (B does not)")
        else:
            out.append(f"B spills {spb.bytes or 0:,} bytes per thread (A {spa.bytes or 0:,})")

    pa, pb = _problems(a.summary), _problems(b.summary)
    if pb and not pa:
        out.append(f"B does not fit {b.artifact.spec.arch}: {pb[0]}")
    elif pa and not pb:
        out.append(f"A does not fit {a.artifact.spec.arch}: {pa[0]} (B does)")
    elif pa and pb:
        out.append(f"neither fits: A {pa[0]}; B {pb[0]}")

    for what, xa, xb in (("global loads", fa.load_bits, fb.load_bits), ("global stores", fa.store_bits, fb.store_bits),
                         ("cp.async copies", tuple(x * 8 for x in fa.cp_async_bytes),
                          tuple(x * 8 for x in fb.cp_async_bytes))):
        if xa and xb and max(xa) != max(xb):
            out.append(f"B's widest {what} are {max(xb)}-bit (A: {max(xa)}-bit)")

    for r in roles:
        if not r.changed or r.role.startswith("shared buffer") and (r.a is None or r.b is None):
            continue
        if r.a is None or r.b is None:
            only, other = ("B", "A") if r.a is None else ("A", "B")
            out.append(f"only {only} has {_article(r.role)} {r.role} ({other} has none)")
            continue
        ka, kb = _enc_kind(r.a), _enc_kind(r.b)
        if ka != kb:
            out.append(f"the {r.role} encoding changes from {ka} to {kb}")
    changed = [r.role for r in roles if r.changed and r.a and r.b and _enc_kind(r.a) == _enc_kind(r.b)]
    if changed:
        out.append("encoding parameters change for: " + ", ".join(changed))

    sa_, sb_ = a.artifact.spec, b.artifact.spec
    if a.summary.backend != b.summary.backend:
        vendor = {"cuda": "NVIDIA (PTX, SASS)", "hip": "AMD (AMDGCN)"}
        out.insert(0, f"A compiles for {vendor.get(a.summary.backend, a.summary.backend)}, B for "
                      f"{vendor.get(b.summary.backend, b.summary.backend)}: instruction counts compare "
                      f"{_stage_title(fa)} with {_stage_title(fb)} by class")
        ta, tb = _mma_tiles(fa), _mma_tiles(fb)
        if ta and tb:
            out.append(f"MMA instruction tile (MxNxK): A {ta}, B {tb}")
    if a.artifact.triton_version != b.artifact.triton_version:
        out.insert(0, f"compiled by Triton {a.artifact.triton_version} (A) and {b.artifact.triton_version} (B)")
    if sa_.arch != sb_.arch:
        def parts(arch: str) -> str:  # a kernel opened from disk may not name its arch ("?")
            known = ARCHES.get(arch)
            return f"{arch} ({known.gpus})" if known else arch

        out.insert(0, f"A targets {parts(sa_.arch)}, B targets {parts(sb_.arch)}")
    return out


def _stage_title(f: Facts) -> str:
    from tritonscope.language.dialects import dialect

    return dialect(f.stage).title


def _mma_tiles(f: Facts) -> str:
    """'32x32x8 (mfma)', '64x32x16 (wgmma)': each MMA instruction's tile, from the facts' shapes."""
    out = []
    for head in f.mma_short:
        family, _, shape = head.partition(" ")
        m = re.fullmatch(r"m(\d+)n(\d+)k(\d+)", shape)
        tile = "x".join(m.groups()) if m else shape
        out.append(f"{tile} ({family})")
    return ", ".join(out)


def _article(word: str) -> str:
    """'an' before 'A operand', 'accumulator'; 'a' before 'B operand', 'shared buffer'."""
    return "an" if word[:1].lower() in "aeio" else "a"


def _percent(b: int, a: int) -> str:
    """B against A as a percentage, with the digits that keep it from reading 0: '+0.03%', '-1.5%'."""
    p = (b - a) / a * 100
    digits = 1
    while digits < 6 and float(f"{p:.{digits}f}") == 0:
        digits += 1
    return f"{p:+.{digits}f}%"


def _ratio(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".") if x < 10 else f"{x:.0f}"




def _enc_kind(enc: str) -> str:
    """'64x64xf32 tensor nvidia_mma<{versionMajor = 3, ...}>' -> 'nvidia_mma v3 (wgmma)' (for the story)."""
    m = re.match(r"\S+ (?:(tensor|smem) )?(\w+)", enc)
    if not m:
        return enc
    where, kind = m[1], m[2]
    v = re.search(r"versionMajor = (\d+)", enc)
    if kind == "dot_op":
        p = re.search(r"parent = (\w+)", enc)
        return f"dot_op (registers) of {p[1]}" + (f" v{v[1]}" if v else "") if p else kind
    if kind == "nvidia_mma" and v:
        return f"nvidia_mma v{v[1]} ({'wgmma' if v[1] == '3' else 'mma.sync'})"
    if kind in ("amd_mfma", "amd_wmma"):
        av = re.search(r"\bversion = (\d+)", enc)
        shape = re.search(r"instrShape = \[([\d, ]+)\]", enc)
        tile = "x".join(x.strip() for x in shape[1].split(",")) if shape else ""
        return f"{kind}{f' v{av[1]}' if av else ''}{f' {tile}' if tile else ''} ({kind[4:].upper()})"
    if where == "smem":
        return f"{kind} (read from shared memory)"
    return kind
