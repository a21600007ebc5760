"""The annotated views: side by side, one line, walkthrough, instruction mix.

Each view takes an Analysis and returns rich renderables; nothing here
compiles or prints.  Rows are matched to Python by line number in the
kernel's own file (library code inlined from triton/language is left out).
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter

from rich import box
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from tritonscope.analysis import Analysis
from tritonscope.model import STAGE_BY_KEY, STAGE_KEYS, Line, Note

PIPELINE = tuple(k for k in STAGE_KEYS if k != "python")

# ttg.async_copy_global_to_local / %x = tt.dot ...
_MLIR_OP = re.compile(r"^\s*(?:%[\w#:]+(?:, %[\w#:]+)*\s*=\s*)?\"?([a-z_]+\.[a-z_.]+)")
# @%p1 cp.async.ca.shared.global [..]   /   mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {
_PTX_OP = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.:]*)")
#         /*0290*/                   LDGSTS.E [R24], [R4.64], P1 ;
_SASS_OP = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P[0-9T]\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_x]+)*)")
# %9 = tail call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
_LLVM_OP = re.compile(r"^\s*(?:%[\w.]+\s*=\s*)?(?:tail\s+)?(?:call\s+[^@]*(@[\w.]+)|([a-z]+))")


def op_name(key: str, text: str) -> str | None:
    """The op / instruction a stage line holds, or None for labels, directives and data."""
    if key in ("ttir", "ttgir"):
        m = _MLIR_OP.match(text)
        return m.group(1) if m else None
    if key == "ptx":
        s = text.strip()
        if not s or s.startswith(("//", ".", "$", "{", "}")):
            return None
        m = _PTX_OP.match(text)
        return m.group(1).rstrip(";") if m else None
    if key == "sass":
        m = _SASS_OP.match(text)
        return m.group(1) if m else None
    if key == "llir":
        m = _LLVM_OP.match(text)
        return (m.group(1) or m.group(2)) if m else None
    return None


def _same_file(a: str, b: str) -> bool:
    return os.path.basename(a) == os.path.basename(b)


def by_source_line(analysis: Analysis, key: str) -> dict[int, list[Line]]:
    """Python line -> the lines of one stage that came from it."""
    out: dict[int, list[Line]] = {}
    stage = analysis.parsed.get(key)
    if not stage:
        return out
    files = Counter(line.loc.file for line in stage.lines if line.loc)
    if not files:
        return out
    # The kernel's file as this stage names it: usually the spec's file, but a
    # Triton cache hit can carry the path of an identical kernel compiled from
    # elsewhere, so fall back to the file most locations point at.
    kernel_file = analysis.artifact.spec.file
    own = {f for f in files if _same_file(f, kernel_file)} or {files.most_common(1)[0][0]}
    for line in stage.lines:
        if line.loc and line.loc.line and line.loc.file in own:
            out.setdefault(line.loc.line, []).append(line)
    return out


def python_lines(analysis: Analysis) -> dict[int, str]:
    stage = analysis.parsed.get("python")
    return {ln.loc.line: ln.text for ln in stage.lines} if stage else {}


def _clip(text: str, width: int) -> str:
    text = text.replace("\t", "    ").rstrip()
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def _squeeze(text: str) -> str:
    """Collapse the runs of blanks PTX and SASS use for alignment (columns are narrow)."""
    lead = len(text) - len(text.lstrip())
    return text[:lead] + re.sub(r"\s+", " ", text.strip())


def _dedent(lines: list[str]) -> list[str]:
    pad = min((len(s) - len(s.lstrip()) for s in lines if s.strip()), default=0)
    return [s[pad:] for s in lines]


# --------------------------------------------------------------------------
# Side by side
# --------------------------------------------------------------------------


def side_by_side(analysis: Analysis, stages: tuple[str, ...], width: int, *, max_rows: int = 12) -> Table:
    """Rows = Python lines; columns = what each line became in each stage."""
    stages = tuple(s for s in stages if s in analysis.parsed and s != "python")[:3] or ("ttgir", "ptx")
    src = python_lines(analysis)
    maps = {k: by_source_line(analysis, k) for k in stages}
    py_w = max(20, min(40, width // 4))
    col_w = max(16, (width - py_w - 3 * (len(stages) + 1) - 1) // len(stages))
    table = Table(box=box.SIMPLE_HEAD, show_lines=True, padding=(0, 1), expand=False)
    table.add_column("Python", width=py_w, no_wrap=True, overflow="ellipsis")
    for k in stages:
        table.add_column(STAGE_BY_KEY[k].title, width=col_w, no_wrap=True, overflow="ellipsis")
    for n in sorted(set().union(*[m.keys() for m in maps.values()])):
        cells = [Text(_clip(f"{n:>3} {src.get(n, '').strip()}", py_w), style="bold")]
        for k in stages:
            rows = [_clip(_squeeze(s), col_w) for s in _dedent([ln.text for ln in maps[k].get(n, [])])]
            if len(rows) > max_rows:
                rows = rows[:max_rows] + [f"… {len(rows) - max_rows} more lines"]
            cells.append(Text("\n".join(rows)))
        table.add_row(*cells)
    return table


# --------------------------------------------------------------------------
# One line
# --------------------------------------------------------------------------


def chain(analysis: Analysis, n: int, stages: tuple[str, ...] = PIPELINE) -> list[tuple[str, Counter]]:
    """Per stage, the ops/instructions Python line n became, with counts, in first-seen order."""
    out = []
    for k in stages:
        ops: Counter = Counter()
        for ln in by_source_line(analysis, k).get(n, []):
            name = op_name(k, ln.text)
            if name:
                ops[name] += 1
        out.append((k, ops))
    return out


_CHAIN_SKIP = re.compile(r"^(arith\.|mov|cvt|bfe|SGXT|ULEA|add|mul|mad|shl|shr|and|or|xor|setp|selp|sub|IMAD|IADD|LOP|SHF|MOV|ISETP|SEL|"
                         r"LEA|CS2R|S2R|S2UR|ULDC|UMOV|UIADD|USHF|ULOP|IABS|I2F|F2I|MUFU|NOP|VIADD|UISETP|USEL|"
                         r"PLOP|R2UR|BRA|EXIT|bra|ret|tt\.splat|tt\.broadcast|tt\.expand_dims|tt\.addptr|"
                         r"tt\.make_range|ttg\.memdesc|scf\.yield|getelementptr|icmp|select|zext|sext|trunc|"
                         r"extractvalue|insertvalue|extractelement|insertelement|bitcast|br|phi|shufflevector|fadd|fmul)")


def chain_text(analysis: Analysis, n: int, stages: tuple[str, ...] = PIPELINE) -> str:
    """'tt.dot → tt.dot → mma.sync.aligned.m16n8k16... → HMMA.16816.F32': the interesting ops per stage."""
    parts = []
    for k, ops in chain(analysis, n, stages):
        if k == "llir":
            continue
        keep = [f"{name}" + (f" x{c}" if c > 1 else "") for name, c in ops.items() if not _CHAIN_SKIP.match(name)]
        if keep:
            parts.append(f"{k.upper()}: " + ", ".join(keep))
    return "  →  ".join(parts)


def line_view(analysis: Analysis, n: int, stages: tuple[str, ...] = PIPELINE) -> RenderableType:
    src = python_lines(analysis)
    if n not in src:
        from tritonscope.errors import UsageError

        lo, hi = min(src), max(src)
        raise UsageError(f"Line {n} is not part of {analysis.artifact.spec.kernel} (lines {lo}-{hi}).",
                         hint=f"Pick a line between {lo} and {hi}; `--stage python` shows them numbered.")
    parts: list[RenderableType] = [
        Text(f"{n}: {src[n].strip()}", style="bold"),
        Text(chain_text(analysis, n, stages) or "(no ops in the other stages come from this line)", style="cyan"),
    ]
    for k in stages:
        lines = by_source_line(analysis, k).get(n, [])
        if not lines:
            continue
        notes = analysis.notes_for(k)
        body = Text()
        for text, ln in zip(_dedent([ln.text for ln in lines]), lines):
            body.append(f"{ln.number:>5}  ", style="dim")
            body.append(text.replace("\t", "    ").rstrip() + "\n")
            for note in notes.get(ln.number, []):
                body.append_text(_note_text(note, indent=7))
        body.rstrip()
        parts.append(Panel(body, title=f"{STAGE_BY_KEY[k].title} · {len(lines)} lines", title_align="left",
                           box=box.SIMPLE_HEAD))
    return Group(*parts)


def _note_text(note: Note, *, indent: int = 0) -> Text:
    style = "yellow" if note.kind == "cost" else "green"
    t = Text(" " * indent)
    t.append(f"▸ {note.label}: ", style=f"bold {style}")
    t.append(note.explanation, style=style)
    if note.reference:
        t.append(f" [{note.reference}]", style="dim")
    t.append("\n")
    return t


# --------------------------------------------------------------------------
# Instruction mix
# --------------------------------------------------------------------------


def mix_view(analysis: Analysis) -> Table:
    table = Table(title="Instruction mix", box=box.SIMPLE_HEAD, title_justify="left")
    table.add_column("stage")
    table.add_column("class")
    table.add_column("count", justify="right")
    for key, counts in analysis.mix.items():
        for i, (cls, n) in enumerate(sorted(counts.items(), key=lambda kv: kv[0])):
            table.add_row(key.upper() if i == 0 else "", cls, str(n))
    return table


# --------------------------------------------------------------------------
# Walkthrough
# --------------------------------------------------------------------------


def _ops(analysis: Analysis, key: str) -> Counter:
    c: Counter = Counter()
    for ln in analysis.parsed.get(key, ()).lines if key in analysis.parsed else ():
        name = op_name(key, ln.text)
        if name:
            c[name] += 1
    return c


def _notes(analysis: Analysis, key: str, kind: str | None = None) -> list[Note]:
    return [n for n in analysis.notes if n.stage == key and (kind is None or n.kind == kind)]


def _first_note(analysis: Analysis, key: str, label_prefix: str) -> Note | None:
    return next((n for n in analysis.notes if n.stage == key and n.label.startswith(label_prefix)), None)


def _para(text: str) -> Text:
    return Text(text)


def _section(out: list, title: str) -> None:
    out.append(Text(""))
    out.append(Text(title, style="bold underline"))


def _top_args(call: str) -> list[str]:
    """'a + b[:, None], acc' -> ['a + b[:, None]', 'acc'] (split on top-level commas)."""
    out, depth, cur = [], 0, ""
    for ch in call:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + [cur.strip()] if cur.strip() else out


def walkthrough(analysis: Analysis) -> RenderableType:
    """Seed 001's story, generated: one section per stage in pipeline order, with counts."""
    a = analysis.artifact
    spec = a.spec
    out: list[RenderableType] = []
    refs: dict[str, None] = {}

    def note_para(note: Note | None, prefix: str = "") -> None:
        if note:
            out.append(_para(f"{prefix}{note.label}: {note.explanation}"))
            if note.reference:
                refs[note.reference] = None

    out.append(Rule(f"What Triton does with {spec.kernel} ({spec.label()})", align="left"))

    # ---- Python: the program / tile index arithmetic ----------------------
    _section(out, "Triton (Python)")
    src = python_lines(analysis)
    grid = tuple(spec.grid) if spec.grid else None
    shape = "x".join(map(str, spec.shape)) if spec.shape else None
    ttir_store = _first_note(analysis, "ttir", "store")
    tile = re.search(r"Stores (\d+x\d+)", ttir_store.explanation) if ttir_store else None
    if grid:
        progs = math.prod(grid)
        out.append(_para(
            f"The launch grid is {grid}: {progs} programs"
            + (f" for a {shape} problem" if shape else "")
            + (f", each computing one {tile.group(1)} output tile." if tile else ".")))
    pid_lines = [(n, t.strip()) for n, t in src.items() if "tl.program_id(" in t]
    for n, t in pid_lines:
        out.append(_para(f"  line {n}: {t}"))
    consts = spec.constexprs
    # offs_m = pid_m * BLOCK + tl.arange(0, BLOCK)
    idx = re.compile(r"(\w+)\s*=\s*\(?(\w+)\s*\*\s*(\w+)\s*\+\s*tl\.arange\(0,\s*(\w+)\)")
    for n, t in src.items():
        m = idx.search(t)
        if m:
            step = consts.get(m.group(3), m.group(3))
            size = consts.get(m.group(4), m.group(4))
            last = f"{size - 1}" if isinstance(size, int) else f"{size}-1"
            out.append(_para(
                f"  line {n}: {m.group(1)} = {m.group(2)} * {step} + [0 .. {last}]: program {m.group(2)} covers "
                f"indices {step} * {m.group(2)} .. {step} * {m.group(2)} + {last}, so the tile's top-left corner is "
                f"at {step} * {m.group(2)}."))
    for n, t in src.items():
        if "tl.store(" in t or "tl.load(" in t:
            kind = "stores" if "tl.store(" in t else "loads"
            args = _top_args(t.strip().split("(", 1)[1].rsplit(")", 1)[0])
            ptr = args[0] if args else ""
            out.append(_para(f"  line {n} {kind} through pointers {ptr}: a [:, None] row index times the row "
                             f"stride plus a [None, :] column index, i.e. one address per tile element."))
    dot = _first_note(analysis, "ttir", "dot")
    if dot:
        out.append(_para(f"tl.dot does the tile matmul: {dot.explanation.split(' (tl.dot)')[0].replace('Tile matmul: ', '')}."))

    # ---- TTIR ---------------------------------------------------------------
    ttir_ops = _ops(analysis, "ttir")
    if ttir_ops:
        _section(out, "Triton IR (TTIR)")
        show = ["tt.get_program_id", "tt.make_range", "tt.splat", "tt.expand_dims", "tt.broadcast", "tt.addptr",
                "tt.load", "tt.store", "tt.dot", "scf.for", "tt.reduce"]
        counts = ", ".join(f"{ttir_ops[o]} {o}" for o in show if ttir_ops.get(o))
        out.append(_para(
            "TTIR looks like the Python, but tensor types and broadcasting are explicit: scalars become tensors with "
            f"tt.splat, [:, None] / [None, :] become tt.expand_dims + tt.broadcast, and pointer arithmetic is "
            f"tt.addptr. Counts: {counts}."))
        for prefix in ("splat pointer", "splat scalar", "expand_dims", "broadcast", "load", "store", "loop"):
            note_para(_first_note(analysis, "ttir", prefix), "  e.g. ")

    # ---- TTGIR --------------------------------------------------------------
    if "ttgir" in analysis.parsed:
        _section(out, "Triton GPU IR (TTGIR)")
        out.append(_para("TTGIR adds a layout (encoding) to every tensor: which thread and register holds which "
                         "element, and how shared memory is arranged."))
        for note in _notes(analysis, "ttgir", "encoding"):
            note_para(note, "  ")
        ttgir_ops = _ops(analysis, "ttgir")
        mem = ["ttg.local_alloc", "ttg.async_copy_global_to_local", "ttg.async_commit_group", "ttg.async_wait",
               "ttg.local_load", "ttg.local_store", "tt.dot", "ttng.warp_group_dot", "ttng.warp_group_dot_wait",
               "ttng.fence_async_shared", "ttng.async_tma_copy_global_to_local", "ttg.convert_layout"]
        counts = ", ".join(f"{ttgir_ops[o]} {o}" for o in mem if ttgir_ops.get(o))
        if counts:
            out.append(_para(f"Memory and compute ops after pipelining ({spec.num_stages} stages): {counts}."))
        for prefix in ("shared alloc", "async copy", "commit async", "wait until", "shared → registers",
                       "warp-group MMA", "layout conversion"):
            note_para(_first_note(analysis, "ttgir", prefix), "  ")

    # ---- PTX ----------------------------------------------------------------
    mix = analysis.mix.get("ptx", {})
    if "ptx" in analysis.parsed:
        _section(out, "PTX")
        elem_bytes = _elem_bytes(analysis)
        copies = {k: v for k, v in mix.items() if k.startswith("async copy")}
        if copies:
            out.append(Text("Global → shared", style="bold"))
            for k, v in copies.items():
                m = re.search(r"\.(ca|cg) (\d+)B", k)
                size = int(m.group(2)) if m else None
                per = f" = {size // elem_bytes} elements of {elem_bytes} bytes per thread per instruction" \
                    if size and elem_bytes else ""
                out.append(_para(f"  {v} x cp.async.{m.group(1) if m else ''}.shared.global, {size} bytes{per}."))
            cm = _first_note(analysis, "ttgir", "async copy")
            if cm:
                out.append(_para(f"  As the TTGIR layout dictates: {cm.explanation}"))
            note_para(_first_note(analysis, "ptx", "cp.async"), "  ")
            commits, waits = mix.get("async commit group", 0), mix.get("async wait group", 0)
            out.append(_para(f"  {commits} cp.async.commit_group and {waits} cp.async.wait_group keep up to "
                             f"{spec.num_stages - 1} tiles in flight while the current one is used."))
            refs.setdefault(_ref("CP_ASYNC_COMMIT"), None)
        ldm = {k: v for k, v in mix.items() if k.startswith("ldmatrix")}
        if ldm:
            out.append(Text("Shared → registers", style="bold"))
            src_lines = python_lines(analysis)
            for k, v in ldm.items():
                variant = k.split()[1]
                where = _python_lines_of(analysis, "ptx", f"ldmatrix.sync.aligned.m8n8.{variant}.shared")
                what = "; ".join(f"line {n}: {src_lines.get(n, '').strip()}" for n in where)
                out.append(_para(f"  {v} x ldmatrix.sync.aligned.m8n8.{variant}.shared.b16"
                                 + (f"  (for {what})" if what else "")))
            note_para(_first_note(analysis, "ptx", "ldmatrix x4"), "  ")
            note_para(_first_note(analysis, "ptx", "ldmatrix x2 .trans") or _first_note(analysis, "ptx", "ldmatrix x2"),
                      "  ")
        mmas = {k: v for k, v in mix.items() if k.startswith(("mma ", "wgmma m"))}
        if mmas:
            out.append(Text("Tensor cores", style="bold"))
            for k, v in mmas.items():
                out.append(_para(f"  {v} x {k.replace('mma ', 'mma.sync ') if k.startswith('mma ') else k}"))
            note_para(_first_note(analysis, "ptx", "mma ") or _first_note(analysis, "ptx", "wgmma m"), "  ")
            enc = _first_note(analysis, "ttgir", "mma v")
            if enc:
                out.append(_para(f"  Across warps ({enc.label}): " + enc.explanation.split(". ", 1)[-1]))
        other = {k: v for k, v in mix.items() if k.startswith(("global", "shared", "barrier", "mbarrier", "tma",
                                                                  "stmatrix", "wgmma "))
                 and not k.startswith("wgmma m")}
        if other:
            out.append(_para("  Also: " + ", ".join(f"{v} {k}" for k, v in other.items()) + "."))

    # ---- SASS ---------------------------------------------------------------
    smix = analysis.mix.get("sass", {})
    if smix:
        _section(out, "SASS")
        out.append(_para("What the GPU runs (nvdisasm): "
                         + "; ".join(f"{v} x {_sass_name(k)}" for k, v in smix.items()) + "."))
        pairs = [("async copy", "cp.async"), ("async commit", "cp.async.commit_group"),
                 ("async wait", "cp.async.wait_group"), ("ldmatrix", "ldmatrix"), ("mma", "mma.sync"),
                 ("wgmma", "wgmma.mma_async"), ("tma", "cp.async.bulk.tensor"), ("barrier", "bar.sync")]
        for cls, ptx_name in pairs:
            names = sorted({k.split(" ")[-2] if k.endswith("-bit") else k.split(" ")[-1]
                            for k in smix if k.startswith(cls + " ")})
            if names:
                out.append(_para(f"  PTX {ptx_name} → SASS {', '.join(names)}"))
        refs.setdefault(_ref("SASS"), None)

    # ---- The path ---------------------------------------------------------
    path = _memory_path(analysis)
    if path:
        _section(out, "Memory path")
        out.append(_para(path))
    if refs:
        _section(out, "References")
        out.append(_para("\n".join(f"  - {r}" for r in refs)))
    return Group(*out)


def _sass_name(cls: str) -> str:
    """'async copy LDGSTS 32-bit' -> 'LDGSTS (32-bit)'; 'mma HMMA.16816.F32' -> 'HMMA.16816.F32'."""
    words = cls.split(" ")
    name = next((w for w in words if w[:1].isupper()), cls)
    return name + (f" ({words[-1]})" if words[-1].endswith("-bit") else "")


def _python_lines_of(analysis: Analysis, key: str, prefix: str) -> list[int]:
    """Python lines whose stage lines start an op with this prefix."""
    out: list[int] = []
    for n, lines in sorted(by_source_line(analysis, key).items()):
        if any((op_name(key, ln.text) or "").startswith(prefix) for ln in lines):
            out.append(n)
    return out


def _ref(name: str) -> str:
    from tritonscope.annotate import refs

    return getattr(refs, name)


def _elem_bytes(analysis: Analysis) -> int | None:
    """Element size of the async-copied tensors, from the TTGIR pointer type."""
    for ln in analysis.parsed.get("ttgir").lines if "ttgir" in analysis.parsed else ():
        if "async_copy_global_to_local" in ln.text:
            m = re.search(r"!tt\.ptr<(\w+)>", ln.text)
            if m:
                from tritonscope.annotate.encodings import elem_bits

                bits = elem_bits(m.group(1))
                return bits // 8 if bits else None
    return None


def _memory_path(analysis: Analysis) -> str:
    mix, smix = analysis.mix.get("ptx", {}), analysis.mix.get("sass", {})
    steps = ["global"]
    cp = [k for k in mix if k.startswith("async copy")]
    if cp:
        steps.append(f"--{', '.join(k.replace('async copy ', 'cp.async') for k in cp)}"
                     f"{' / LDGSTS' if any(k.startswith('async copy LDGSTS') for k in smix) else ''}--> shared")
    elif any(k.startswith("tma") for k in mix):
        steps.append("--TMA cp.async.bulk.tensor--> shared")
    else:
        return ""
    ldm = [k.split(" ", 1)[1] for k in mix if k.startswith("ldmatrix")]
    mma = [k for k in mix if k.startswith("mma ")]
    wg = [k for k in mix if k.startswith("wgmma m")]
    if ldm:
        steps.append(f"--ldmatrix {', '.join(ldm)}"
                     f"{' / LDSM' if any(k.startswith('ldmatrix') for k in smix) else ''}--> registers")
    if mma:
        steps.append(f"--{', '.join(k.replace('mma ', 'mma.sync ') for k in mma)}"
                     f"{' / HMMA' if any(k.startswith('mma') for k in smix) else ''}--> tensor cores")
    elif wg:
        steps.append(f"--{', '.join(wg)} (operands read from shared memory)"
                     f"{' / HGMMA' if any(k.startswith('wgmma') for k in smix) else ''}--> tensor cores")
    return "  " + " ".join(steps)
