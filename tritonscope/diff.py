"""Two Analyses -> a ConfigDiff: what changed between two configs of one kernel.

Everything here is data: the summary rows (A, B, delta), the encoding of
each tensor role, one noise-free diff per stage, and a short plain list of
what changed ("B pipelines loads with cp.async (A does not)").  Renderers
live in render/diff_view.py.  Nothing here imports Triton, so saved JSON
reports diff without it.

Noise normalization (see `normalize_stage`) removes what differs between
two compiles of the same code without changing what the code does:
source locations, file paths, debug metadata, SSA/register/label
numbering.  Constant *values* are never rewritten; only the uniquing
suffix of a constant's SSA name (`%cst_3` -> `%cst`) is, because the value
stays visible on the line that defines it.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from tritonscope.analysis import Analysis
from tritonscope.errors import UsageError
from tritonscope.model import ARCHES, STAGE_KEYS

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
        return self.a != self.b


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
        a_label=side_label(a), b_label=side_label(b), kernel=a.artifact.spec.kernel,
        rows=summary_rows(a, b, fa, fb),
        roles=roles,
        stages=stage_diffs,
        story=story(a, b, fa, fb, roles),
        config_changes=config_changes(a, b),
    )


def side_label(an: Analysis) -> str:
    art = an.artifact
    return f"{art.spec.label()} (triton {art.triton_version})"


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
    return out


def _shape(shape) -> str | None:
    return "x".join(map(str, shape)) if shape else None


# --------------------------------------------------------------------------
# Facts about one side
# --------------------------------------------------------------------------

# mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
# wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
_MMA_RE = re.compile(r"\b(mma\.sync|wgmma\.mma_async)(?:\.sync)?\.aligned\.(m\d+n\d+k\d+)((?:\.\w+)*)")
# ld.global.v4.b32 / st.global.b16 / ld.global.nc.L1::evict_last.v2.b32
_GLOBAL_RE = re.compile(r"\b(ld|st)\.global((?:\.[\w:]+)*)")
# cp.async.ca.shared.global [ %r15 + 0 ], [ %rd5 + 0 ], 0x4, %r16;
_CP_ASYNC_RE = re.compile(r"\bcp\.async\.(ca|cg)\.shared\.global\s+\[[^\]]*\],\s*\[[^\]]*\],\s*(0x[0-9a-fA-F]+|\d+)")


@dataclass(frozen=True)
class Facts:
    mma: tuple[str, ...]             # ("mma.sync m16n8k16 f32.f16.f16.f32",)
    load_bits: tuple[int, ...]       # widths (bits) of global loads, sorted
    store_bits: tuple[int, ...]
    cp_async_bytes: tuple[int, ...]  # bytes per cp.async
    mix: dict[str, int]              # the PTX mix (SASS when no PTX)


def facts(an: Analysis) -> Facts:
    ptx = an.artifact.stages.get("ptx", "")
    mma: dict[str, None] = {}
    loads: set[int] = set()
    stores: set[int] = set()
    cp: set[int] = set()
    for line in ptx.splitlines():
        m = _MMA_RE.search(line)
        if m:
            mma[f"{m[1]} {m[2]}" + (f" {m[3].lstrip('.')}" if m[3] else "")] = None
        g = _GLOBAL_RE.search(line)
        if g:
            bits = _access_bits(g[2])
            if bits:
                (loads if g[1] == "ld" else stores).add(bits)
        c = _CP_ASYNC_RE.search(line)
        if c:
            cp.add(int(c[2], 0))
    mix = coarse_mix(ptx)
    return Facts(tuple(mma), tuple(sorted(loads)), tuple(sorted(stores)), tuple(sorted(cp)), mix)


# Coarse instruction classes, counted from the PTX text itself (one class per
# line, first match wins), so the summary and the sweep have stable columns.
_COARSE_PTX = (
    # cp.async.cg.shared.global [ %r1 + 0 ], [ %rd1 + 0 ], 0x10, %r2;
    ("async copy", re.compile(r"\bcp\.async\.(?:ca|cg)\.")),
    # cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [...]
    ("tma copy", re.compile(r"\bcp\.async\.bulk\b")),
    ("ldmatrix", re.compile(r"\bldmatrix\.")),
    ("stmatrix", re.compile(r"\bstmatrix\.")),
    ("mma", re.compile(r"\bmma\.sync\.aligned")),
    ("wgmma", re.compile(r"\bwgmma\.mma_async")),
    ("barrier", re.compile(r"\b(?:bar\.sync|barrier\.sync|barrier\.cta|mbarrier\.)")),
    ("global load", re.compile(r"\bld\.global")),
    ("global store", re.compile(r"\bst\.global")),
    ("shared load", re.compile(r"\bld\.shared")),
    ("shared store", re.compile(r"\bst\.shared")),
)


def coarse_mix(ptx: str) -> dict[str, int]:
    """PTX text -> {'async copy': 24, 'wgmma': 4, ...} (classes in MIX_ORDER)."""
    counts: dict[str, int] = {}
    for line in ptx.splitlines():
        s = line.strip()
        if not s or s.startswith("//"):
            continue
        for name, pattern in _COARSE_PTX:
            if pattern.search(s):
                counts[name] = counts.get(name, 0) + 1
                break
    return {k: counts[k] for k in MIX_ORDER if k in counts}


def _access_bits(suffixes: str) -> int | None:
    vec = 1
    bits = None
    for part in suffixes.split("."):
        if re.fullmatch(r"v\d+", part):
            vec = int(part[1:])
        elif re.fullmatch(r"[bsuf]\d+", part):
            bits = int(part[1:])
    return vec * bits if bits else None


# --------------------------------------------------------------------------
# Summary rows
# --------------------------------------------------------------------------

MIX_ORDER = ("async copy", "tma copy", "ldmatrix", "stmatrix", "mma", "wgmma", "barrier",
             "global load", "global store", "shared load", "shared store")


def summary_rows(a: Analysis, b: Analysis, fa: Facts, fb: Facts) -> list[SummaryRow]:
    from tritonscope.compile import fit_problems, occupancy

    ra, rb = a.artifact.resources, b.artifact.resources
    sa, sb = a.artifact.spec, b.artifact.spec
    rows = [
        _text_row("config", "config", sa.label(), sb.label()),
        _text_row("config", "triton", a.artifact.triton_version, b.artifact.triton_version),
        _num_row("resources", "dynamic shared memory (bytes)", ra.dynamic_shared, rb.dynamic_shared, ratio=True),
        _num_row("resources", "registers per thread", ra.registers, rb.registers),
        _num_row("resources", "spills (local bytes per thread)", ra.local, rb.local),
    ]
    pa, pb = fit_problems(a.artifact), fit_problems(b.artifact)
    rows.append(_text_row("fit", "fits " + _arch_pair(sa.arch, sb.arch),
                          "no" if pa else "yes", "no" if pb else "yes"))
    oa = None if pa else occupancy(a.artifact)
    ob = None if pb else occupancy(b.artifact)
    rows.append(_text_row("fit", "occupancy (blocks/SM, limited by)", _occ(oa), _occ(ob)))
    classes = [c for c in MIX_ORDER if c in fa.mix or c in fb.mix]
    classes += sorted((set(fa.mix) | set(fb.mix)) - set(classes))
    for c in classes:
        rows.append(_num_row("mix", f"{c} (PTX)", fa.mix.get(c, 0), fb.mix.get(c, 0)))
    rows.append(_text_row("mix", "MMA instruction", ", ".join(fa.mma) or "none", ", ".join(fb.mma) or "none"))
    rows.append(_text_row("mix", "cp.async size (bytes)", _list(fa.cp_async_bytes), _list(fb.cp_async_bytes)))
    rows.append(_text_row("mix", "global load width (bits)", _list(fa.load_bits), _list(fb.load_bits)))
    rows.append(_text_row("mix", "global store width (bits)", _list(fa.store_bits), _list(fb.store_bits)))
    return rows


def _arch_pair(a: str, b: str) -> str:
    return a if a == b else f"{a} / {b}"


def _occ(o: dict | None) -> str:
    if o is None:
        return "-"
    return f"{o['blocks_per_sm']} ({o['limited_by']})"


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
        delta += f" ({b / a:.3g}x)"
    return SummaryRow(group, name, fa, fb, delta, True)


# --------------------------------------------------------------------------
# Encodings by tensor role (from the TTGIR text)
# --------------------------------------------------------------------------

# #mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>
_ALIAS_RE = re.compile(r"^(#[\w.$-]+)\s*=\s*(#.*?)\s*(?:loc\(.*)?$")
# %acc_70 = tt.dot %a_67, %b_69, %arg7, inputPrecision = tf32 : tensor<..> * tensor<..> -> tensor<..>
# %acc_75 = ttng.warp_group_dot %a_73, %b_74, %arg7 {...} : !ttg.memdesc<..> * !ttg.memdesc<..> -> tensor<..>
_DOT_RE = re.compile(r"=\s*(tt\.dot|ttng\.warp_group_dot)\s")
# %a_22 = ttg.local_alloc : () -> !ttg.memdesc<3x64x64xf16, #shared, #smem, mutable>
# %a = ttg.local_alloc %x : (tensor<..>) -> !ttg.memdesc<...>
_ALLOC_RE = re.compile(r"^\s*%([\w.$-]+?)(?:_\d+)?\s*=\s*ttg\.local_alloc\b")


def roles_of(ttgir: str) -> dict[str, str]:
    """Tensor role -> its encoding (aliases expanded), read from TTGIR text."""
    aliases: dict[str, str] = {}
    out: dict[str, str] = {}
    dots = 0
    alloc_names: dict[str, int] = {}
    for raw in ttgir.splitlines():
        line = strip_mlir_loc(raw).rstrip()
        m = _ALIAS_RE.match(line)
        if m and not line.startswith("#loc"):
            aliases[m[1]] = m[2]
            continue
        if _DOT_RE.search(line):
            types = _split_top(_after_colon(line), (" * ", " -> "))
            if len(types) == 3:
                dots += 1
                suffix = "" if dots == 1 else f" (dot {dots})"
                for role, ty in zip(("A operand", "B operand", "accumulator"), types):
                    out[role + suffix] = _expand(_type_encoding(ty), aliases)
            continue
        m = _ALLOC_RE.match(line)
        if m:
            ty = _split_top(_after_colon(line), (" -> ",))[-1]
            name = m[1]
            alloc_names[name] = alloc_names.get(name, 0) + 1
            if alloc_names[name] > 1:
                name = f"{name} #{alloc_names[name]}"
            out[f"shared buffer {name}"] = _memdesc_summary(ty, aliases)
    return out


def role_encodings(a: Analysis, b: Analysis) -> list[RoleEncoding]:
    ra = roles_of(a.artifact.stages.get("ttgir", ""))
    rb = roles_of(b.artifact.stages.get("ttgir", ""))
    return [RoleEncoding(role, ra.get(role), rb.get(role)) for role in dict.fromkeys([*ra, *rb])]


def _after_colon(line: str) -> str:
    """The type part of an op line: after the last top-level ' : '."""
    depth = 0
    last = -1
    for i, ch in enumerate(line):
        if ch in "<({[":
            depth += 1
        elif ch in ">)}]" and not (ch == ">" and line[i - 1] == "-"):
            depth -= 1
        elif depth == 0 and line.startswith(" : ", i - 1) and ch == ":":
            last = i
    return line[last + 1:].strip() if last >= 0 else ""


def _split_top(text: str, seps: tuple[str, ...]) -> list[str]:
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        ch = text[i]
        if ch in "<({[":
            depth += 1
        elif ch in ">)}]" and not (ch == ">" and i and text[i - 1] == "-"):
            depth -= 1
        elif depth == 0:
            for sep in seps:
                if text.startswith(sep, i):
                    parts.append(text[start:i].strip())
                    i += len(sep)
                    start = i
                    break
            else:
                i += 1
                continue
            continue
        i += 1
    parts.append(text[start:].strip())
    return parts


def _type_params(ty: str) -> list[str]:
    """'tensor<16x16xf16, #mma>' -> ['16x16xf16', '#mma']."""
    lt = ty.find("<")
    if lt < 0 or not ty.endswith(">"):
        return [ty]
    return _split_top(ty[lt + 1:-1], (", ",))


def _type_encoding(ty: str) -> str:
    params = _type_params(ty)
    shape = params[0]
    enc = next((p for p in params[1:] if p.startswith("#")), "")
    kind = "smem" if ty.startswith("!ttg.memdesc") else "tensor"
    return f"{shape} {kind} {enc}".strip()


def _memdesc_summary(ty: str, aliases: dict[str, str]) -> str:
    params = _type_params(ty)
    enc = next((p for p in params[1:] if p.startswith("#") and p != "#smem"), "")
    return _expand(f"{params[0]} {enc}".strip(), aliases)


def _expand(text: str, aliases: dict[str, str]) -> str:
    """Replace #alias references by their definitions (with a visited set)."""
    seen: set[str] = set()

    def sub(m: re.Match) -> str:
        name = m.group(0)
        if name in aliases and name not in seen:
            seen.add(name)
            return _ALIAS_REF_RE.sub(sub, aliases[name])
        return name

    out = _ALIAS_REF_RE.sub(sub, text)
    return out.replace("#ttg.", "").replace("#ttng.", "")


_ALIAS_REF_RE = re.compile(r"#(?!ttg\.|ttng\.|tt\.)[A-Za-z_][\w$-]*")


# --------------------------------------------------------------------------
# Noise normalization
# --------------------------------------------------------------------------


def strip_mlir_loc(line: str) -> str:
    """Remove every ` loc(...)` (balanced, nested) from one MLIR line.

    %x = tt.get_program_id x : i32 loc(#loc2)  ->  %x = tt.get_program_id x : i32
    """
    from tritonscope.parse.mlir import strip_locs

    return strip_locs(line)[0]


class _Renamer:
    """Renumbers names by first appearance, per family.

    '%a_22' -> family '%a'; the first distinct member seen is '%a', the next
    '%a_1' ...  so two compiles of the same code agree, and an extra value in
    one family does not shift the names of every other family.
    """

    def __init__(self, family, spell):
        self.family = family      # token -> family name
        self.spell = spell        # (family, n) -> new token
        self.seen: dict[str, str] = {}
        self.counts: dict[str, int] = {}

    def __call__(self, m: re.Match) -> str:
        token = m.group(0)
        if token not in self.seen:
            fam = self.family(token)
            n = self.counts.get(fam, 0)
            self.counts[fam] = n + 1
            self.seen[token] = self.spell(fam, n)
        return self.seen[token]


def _ssa_spelling(fam: str, n: int) -> str:
    # numbered values stay numbers (%0, %1); named ones get _N after the first
    if fam == "%":
        return f"%{n}"
    return fam if n == 0 else f"{fam}_{n}"


def _mlir_family(token: str) -> str:
    # %offs_m_2 -> %offs_m ; %cst_0 -> %cst ; %c64_i32 -> %c64_i32 ; %arg7 -> %arg ; %12 -> %
    name = token[1:]
    if name.isdigit():
        return "%"
    if re.fullmatch(r"arg\d+", name):
        return "%arg"
    return "%" + re.sub(r"_\d+$", "", name)


def _llvm_family(token: str) -> str:
    name = token[1:]
    if name.isdigit():
        return "%"
    return "%" + re.sub(r"[._]?\d+$", "", name)


def _ptx_family(token: str) -> str:
    # %r12 -> %r ; %rd3 -> %rd ; $L__BB0_3 -> $L__BB
    if token.startswith("$"):
        return "$L__BB"
    return re.sub(r"\d+$", "", token)


# MLIR SSA values: %acc_57 (also in %acc_57#0, %acc_57:7)
_MLIR_SSA_RE = re.compile(r"%[A-Za-z_$.][\w$.-]*?(?=[^\w$.-]|$)|%\d+")
# LLVM values: %12, %.pre, %offs_m
_LLVM_SSA_RE = re.compile(r"%[\w$.-]+")
# PTX registers and labels: %r12, %rd3, %p1, $L__BB0_3 (not %tid.x / %ctaid)
_PTX_NAME_RE = re.compile(r"%(?:r|rd|rs|f|fd|p|h|hh|b)\d+\b|\$L__BB\d+_\d+")
# SASS labels: .L_x_3
_SASS_LABEL_RE = re.compile(r"\.L_x_\d+")


def normalize_stage(key: str, text: str) -> list[tuple[int, str]]:
    """Stage text -> [(raw line number, normalized text)] with noise removed."""
    out: list[tuple[int, str]] = []
    lines = text.splitlines()
    if key in ("ttir", "ttgir"):
        ren = _Renamer(_mlir_family, _ssa_spelling)
        for i, raw in enumerate(lines, 1):
            if raw.startswith("#loc"):
                continue        # #loc12 = loc("/path/file.py":17:13)
            line = strip_mlir_loc(raw).rstrip()
            line = _MLIR_SSA_RE.sub(ren, line)
            if line.strip():
                out.append((i, line))
    elif key == "llir":
        ren = _Renamer(_llvm_family, _ssa_spelling)
        for i, raw in enumerate(lines, 1):
            if raw.startswith("!") or raw.startswith("source_filename") or raw.lstrip().startswith("#dbg_"):
                continue        # !12 = !DILocation(...), !llvm.dbg.cu = ...
            line = re.sub(r",\s*!dbg !\d+", "", raw)        # , !dbg !14
            line = re.sub(r"\s!dbg !\d+", "", line)          # define ... !dbg !4 {
            line = _LLVM_SSA_RE.sub(ren, line).rstrip()
            if line.strip() and not line.lstrip().startswith(";"):
                out.append((i, line))
    elif key == "ptx":
        ren = _Renamer(_ptx_family, lambda fam, n: f"{fam}{n}" if fam.startswith("%") else f"$L__BB{n}")
        in_debug = False
        for i, raw in enumerate(lines, 1):
            s = raw.strip()
            if in_debug:
                if s == "}":
                    in_debug = False
                continue
            if s.startswith(".section") and ".debug" in s:
                in_debug = True      # .section .debug_info { ... } (paths, line tables)
                continue
            if s.startswith((".file", ".loc", "//")) or re.match(r"^\$L__(tmp|func_begin|func_end)\d+:", s):
                continue
            line = re.sub(r"\s*//.*$", "", raw)              # trailing comments (source names)
            line = _PTX_NAME_RE.sub(ren, line).rstrip()
            if line.strip():
                out.append((i, line))
    elif key == "sass":
        ren = _Renamer(lambda t: ".L_x", lambda fam, n: f".L_x_{n}")
        for i, raw in enumerate(lines, 1):
            s = raw.strip()
            if s.startswith("//##") or s.startswith("/* 0x"):
                continue        # //## File "/path/k.py", line 17
            line = re.sub(r"/\*[0-9a-f]{4,}\*/\s*", "", raw)  # /*0010*/ addresses
            line = re.sub(r"\s*/\* 0x[0-9a-f]+ \*/", "", line)
            line = _SASS_LABEL_RE.sub(ren, line).rstrip()
            if line.strip():
                out.append((i, line.strip()))
    else:
        for i, raw in enumerate(lines, 1):
            if raw.strip():
                out.append((i, raw.rstrip()))
    return out


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
    from tritonscope.compile import fit_problems

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
        ma, mb = _mma_short(fa.mma), _mma_short(fb.mma)
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
            if ratio >= 1:
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
    if (ra.local or 0) != (rb.local or 0):
        if rb.local and not ra.local:
            out.append(f"B spills: {rb.local} bytes of local memory per thread (A does not)")
        elif ra.local and not rb.local:
            out.append(f"A spills {ra.local} bytes of local memory per thread (B does not)")
        else:
            out.append(f"B spills {rb.local} bytes per thread (A {ra.local})")

    pa, pb = fit_problems(a.artifact), fit_problems(b.artifact)
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
            out.append(f"{'B' if r.a is None else 'A'} has a {r.role} that the other does not")
            continue
        ka, kb = _enc_kind(r.a), _enc_kind(r.b)
        if ka != kb:
            out.append(f"the {r.role} encoding changes from {ka} to {kb}")
    changed = [r.role for r in roles if r.changed and r.a and r.b and _enc_kind(r.a) == _enc_kind(r.b)]
    if changed:
        out.append("encoding parameters change for: " + ", ".join(changed))

    sa_, sb_ = a.artifact.spec, b.artifact.spec
    if a.artifact.triton_version != b.artifact.triton_version:
        out.insert(0, f"compiled by Triton {a.artifact.triton_version} (A) and {b.artifact.triton_version} (B)")
    if sa_.arch != sb_.arch:
        out.insert(0, f"A targets {sa_.arch} ({ARCHES[sa_.arch].gpus}), B targets {sb_.arch} ({ARCHES[sb_.arch].gpus})")
    return out


def _ratio(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".") if x < 10 else f"{x:.0f}"


def _mma_short(mma: tuple[str, ...]) -> str:
    # "mma.sync m16n8k16 row.col.f32.f16.f16.f32" -> "mma.sync m16n8k16"
    return ", ".join(dict.fromkeys(" ".join(m.split()[:2]) for m in mma))


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
    if where == "smem":
        return f"{kind} (read from shared memory)"
    return kind
