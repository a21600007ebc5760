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

from tritonscope.analyses.analysis import Analysis
from tritonscope.language.dialects import PLUMBING_OPS, PIPELINE, SOURCE, Instr, dialect, instructions
from tritonscope.core.model import Line, Note

__all__ = ["PIPELINE", "by_source_line", "chain", "chain_text", "line_view", "mix_view", "op_name", "side_by_side",
           "walkthrough"]


def op_name(key: str, text: str) -> str | None:
    """The op / instruction a stage line holds (its dialect's classifier), or None for labels, directives, data."""
    ins = dialect(key).classify(text)
    return ins.op if ins else None


def _compiled(analysis: Analysis) -> tuple[str, ...]:
    """The stages of this analysis other than the source, in its (pipeline) order."""
    return tuple(k for k in analysis.parsed if k != SOURCE)


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
    stage = analysis.parsed.get(SOURCE)
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


def side_by_side(analysis: Analysis, stages: tuple[str, ...], width: int, *, max_rows: int = 12,
                 hide: frozenset[str] | None = None) -> Table:
    """Rows = Python lines; columns = what each line became in each stage.

    Noise lines of a kind in `hide` (default: all; none with --raw) are folded,
    and a caption line per stage says how many.
    """
    from tritonscope.language.dialects import dialect
    from tritonscope.outputs.render import noise

    stages = tuple(s for s in stages if s in analysis.parsed and s != SOURCE)[:3] or ("ttgir", "ptx")
    src = python_lines(analysis)
    maps = {k: by_source_line(analysis, k) for k in stages}
    folded_notes = []
    for k in stages:
        kinds = noise.classify(k, analysis.parsed[k].lines)
        hide_here = noise.DEFAULT_HIDE if hide is None else hide
        hidden: dict[str, int] = {}
        for n, lines in maps[k].items():
            kept = [ln for ln in lines if kinds.get(ln.number) not in hide_here]
            for ln in lines:
                if kinds.get(ln.number) in hide_here:
                    hidden[kinds[ln.number]] = hidden.get(kinds[ln.number], 0) + 1
            maps[k][n] = kept
        maps[k] = {n: lines for n, lines in maps[k].items() if lines}
        if hidden:
            folded_notes.append(f"{dialect(k).title}: {noise.message(hidden)}")
    py_w = max(20, min(40, width // 4))
    col_w = max(16, (width - py_w - 3 * (len(stages) + 1) - 1) // len(stages))
    table = Table(box=box.SIMPLE_HEAD, show_lines=True, padding=(0, 1), expand=False)
    table.add_column("Python", width=py_w, no_wrap=True, overflow="ellipsis")
    for k in stages:
        table.add_column(dialect(k).title, width=col_w, no_wrap=True, overflow="ellipsis")
    for n in sorted(set().union(*[m.keys() for m in maps.values()])):
        cells = [Text(_clip(f"{n:>3} {src.get(n, '').strip()}", py_w), style="bold")]
        for k in stages:
            rows = [_clip(_squeeze(s), col_w) for s in _dedent([ln.text for ln in maps[k].get(n, [])])]
            if len(rows) > max_rows:
                rows = rows[:max_rows] + [f"… {len(rows) - max_rows} more lines"]
            cells.append(Text("\n".join(rows)))
        table.add_row(*cells)
    if folded_notes:
        table.caption = "\n".join(folded_notes)
        table.caption_justify = "left"
    return table


# --------------------------------------------------------------------------
# One line
# --------------------------------------------------------------------------


def chain(analysis: Analysis, n: int, stages: tuple[str, ...] | None = None) -> list[tuple[str, Counter]]:
    """Per stage (default: every compiled stage), the ops Python line n became, with counts, in first-seen order."""
    out = []
    for k in _compiled(analysis) if stages is None else stages:
        ops: Counter = Counter()
        for ln in by_source_line(analysis, k).get(n, []):
            name = op_name(k, ln.text)
            if name:
                ops[name] += 1
        out.append((k, ops))
    return out




# Stages the one-line chain leaves out: LLVM IR repeats the PTX story with more noise.
_CHAIN_QUIET = ("llir",)


def chain_text(analysis: Analysis, n: int, stages: tuple[str, ...] | None = None) -> str:
    """'tt.dot → tt.dot → mma.sync.aligned.m16n8k16... → HMMA.16816.F32': the interesting ops per stage."""
    parts = []
    for k, ops in chain(analysis, n, stages):
        if k in _CHAIN_QUIET:
            continue
        keep = [f"{name}" + (f" x{c}" if c > 1 else "") for name, c in ops.items() if not PLUMBING_OPS.match(name)]
        if keep:
            parts.append(f"{k.upper()}: " + ", ".join(keep))
    return "  →  ".join(parts)


def line_view(analysis: Analysis, n: int, stages: tuple[str, ...] | None = None) -> RenderableType:
    stages = _compiled(analysis) if stages is None else stages
    src = python_lines(analysis)
    if n not in src:
        from tritonscope.core.errors import UsageError

        lo, hi = min(src), max(src)
        raise UsageError(f"Line {n} is not part of {analysis.artifact.spec.kernel} (lines {lo}-{hi}).",
                         hint=f"Pick a line between {lo} and {hi}; `--stage python` shows them numbered.")
    parts: list[RenderableType] = [
        Text(f"{n}: {src[n].strip()}", style="bold"),
        Text(chain_text(analysis, n, stages) or "(no ops in the other stages come from this line)", style="cyan"),
    ]
    # Triton's remarks on this line, once here (the stage lines below carry them too)
    for note in remark_notes_of_line(analysis, n):
        said = _note_text(note)
        said.rstrip()
        parts.append(said)
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
                if note.kind != REMARK:
                    body.append_text(_note_text(note, indent=7))
        body.rstrip()
        parts.append(Panel(body, title=f"{dialect(k).title} · {len(lines)} lines", title_align="left",
                           box=box.SIMPLE_HEAD))
    return Group(*parts)


REMARK = "remark"  # the kind of the notes that carry Triton's own remarks (remarks.remark_notes)


def remark_notes_of_line(analysis: Analysis, n: int) -> list[Note]:
    """The remark notes on Python line n (one per remark), from the source stage."""
    stage = analysis.parsed.get(SOURCE)
    numbers = {ln.number for ln in stage.lines if ln.loc and ln.loc.line == n} if stage else set()
    return [note for note in analysis.notes if note.stage == SOURCE and note.kind == REMARK and note.line in numbers]


def _note_text(note: Note, *, indent: int = 0) -> Text:
    style = "yellow" if note.kind in ("cost", REMARK) else "green"
    t = Text(" " * indent)
    if note.kind == REMARK:  # the explanation names it already: "Triton warning (k.py:20:16): ..."
        t.append("▸ ", style=f"bold {style}")
    else:
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


def _first_note(analysis: Analysis, key: str, **facts) -> Note | None:
    """The first note of a stage whose facts have every given value: _first_note(a, "ttir", op="tt.store")."""
    return next((n for n in analysis.notes
                 if n.stage == key and all(n.facts.get(k) == v for k, v in facts.items())), None)


def _counted(analysis: Analysis, key: str) -> dict[str, list[tuple[Line, Instr]]]:
    """Fine mix name -> the (line, instruction) pairs counted under it, in first-seen order."""
    out: dict[str, list[tuple[Line, Instr]]] = {}
    stage = analysis.parsed.get(key)
    for line, ins in instructions(key, stage.lines) if stage else ():
        out.setdefault(ins.name, []).append((line, ins))
    return out


def _of_class(counted: dict[str, list[tuple[Line, Instr]]], *classes: str) -> dict[str, list[tuple[Line, Instr]]]:
    return {name: occ for name, occ in counted.items() if occ[0][1].cls in classes}


def _x(shape) -> str:
    return "x".join(map(str, shape))


def _mma_text(ins: Instr) -> str:
    """'mma.sync m16n8k16' / 'wgmma m64n256k16' / 'tcgen05.mma kind::f16': how the walkthrough names an MMA."""
    return f"{ins.facts['family']} {ins.facts['shape']}" if ins.cls != "wgmma" else f"wgmma {ins.facts['shape']}"


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

    _walk_python(analysis, out, note_para, refs)
    _walk_ttir(analysis, out, note_para, refs)
    _walk_ttgir(analysis, out, note_para, refs)
    for walk in _OWN_SECTIONS.values():
        walk(analysis, out, note_para, refs)
    _walk_remarks(analysis, out, note_para, refs)
    _walk_machine(analysis, out, note_para, refs)
    _walk_ending(analysis, out, note_para, refs)
    return Group(*out)


def _walk_python(analysis: Analysis, out: list, note_para, refs: dict[str, None]) -> None:
    """The launch grid, the program's tile indices, its loads and stores, the dot (from the Python source)."""
    spec = analysis.artifact.spec
    _section(out, "Triton (Python)")
    src = python_lines(analysis)
    grid = tuple(spec.grid) if spec.grid else None
    shape = "x".join(map(str, spec.shape)) if spec.shape else None
    ttir_store = _first_note(analysis, "ttir", op="tt.store")
    stored = ttir_store.facts.get("shape") if ttir_store else None
    tile = _x(stored) if stored and len(stored) == 2 else None
    if grid:
        progs = math.prod(grid)
        out.append(_para(
            f"The launch grid is {grid}: {progs} programs"
            + (f" for a {shape} problem" if shape else "")
            + (f", each computing one {tile} output tile." if tile else ".")))
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
    dot = _first_note(analysis, "ttir", op="tt.dot")
    if dot and "a" in dot.facts:
        da, db, dc = dot.facts["a"], dot.facts["b"], dot.facts["c"]
        out.append(_para(f"tl.dot does the tile matmul: {_x(da['shape'])} {da['elem']} x {_x(db['shape'])} {db['elem']} "
                         f"accumulated into {_x(dc['shape'])} {dc['elem']}."))


def _walk_ttir(analysis: Analysis, out: list, note_para, refs: dict[str, None]) -> None:
    """TTIR: explicit tensor types and broadcasting, with the counts of the ops that show it."""
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
        for want in ({"op": "tt.splat", "what": "pointer"}, {"op": "tt.splat", "what": "scalar"},
                     {"op": "tt.expand_dims"}, {"op": "tt.broadcast"}, {"op": "tt.load"}, {"op": "tt.store"},
                     {"op": "scf.for"}):
            note_para(_first_note(analysis, "ttir", **want), "  e.g. ")


def _walk_ttgir(analysis: Analysis, out: list, note_para, refs: dict[str, None]) -> None:
    """TTGIR: the layouts, and the memory and compute ops after pipelining."""
    spec = analysis.artifact.spec
    if "ttgir" in analysis.parsed:
        _section(out, "Triton GPU IR (TTGIR)")
        out.append(_para("TTGIR adds a layout (encoding) to every tensor: which thread and register holds which "
                         "element, and how shared memory is arranged."))
        for note in _notes(analysis, "ttgir", "encoding"):
            note_para(note, "  ")
        ttgir_ops = _ops(analysis, "ttgir")
        mem = ["ttg.local_alloc", "ttg.async_copy_global_to_local", "ttg.async_commit_group", "ttg.async_wait",
               "ttg.local_load", "ttg.local_store", "tt.dot", "ttng.warp_group_dot", "ttng.warp_group_dot_wait",
               "ttng.fence_async_shared", "ttng.async_tma_copy_global_to_local", "ttg.convert_layout",
               *_TARGET_OPS]
        counts = ", ".join(f"{ttgir_ops[o]} {o}" for o in mem if ttgir_ops.get(o))
        if counts:
            out.append(_para(f"Memory and compute ops after pipelining ({spec.num_stages} stages): {counts}."))
        for op in ("ttg.local_alloc", "ttg.async_copy_global_to_local", "ttg.async_commit_group", "ttg.async_wait",
                   "ttg.local_load", "ttng.warp_group_dot", "ttg.convert_layout", *_TARGET_OPS):
            note_para(_first_note(analysis, "ttgir", op=op), "  ")
        # On AMD and Blackwell the dot's note names the instructions its encoding implies.
        dot_target = _first_note(analysis, "ttgir", op="tt.dot")
        if dot_target and dot_target.facts.get("target_encoding"):
            note_para(dot_target, "  ")


def _walk_ptx(analysis: Analysis, out: list, note_para, refs: dict[str, None]) -> None:
    """PTX: global -> shared copies, shared -> registers, the tensor cores, and the rest."""
    spec = analysis.artifact.spec
    ptx = _counted(analysis, "ptx")
    if "ptx" in analysis.parsed:
        _section(out, "PTX")
        elem_bytes = _elem_bytes(analysis)
        copies = _of_class(ptx, "async copy")
        if copies:
            out.append(Text("Global → shared", style="bold"))
            for occ in copies.values():
                f = occ[0][1].facts
                size = f.get("bytes")
                per = f" = {size // elem_bytes} elements of {elem_bytes} bytes per thread per instruction" \
                    if size and elem_bytes else ""
                out.append(_para(f"  {len(occ)} x cp.async.{f.get('cache', '')}.shared.global, {size} bytes{per}."))
            cm = _first_note(analysis, "ttgir", op="ttg.async_copy_global_to_local")
            if cm:
                out.append(_para(f"  As the TTGIR layout dictates: {cm.explanation}"))
            note_para(_first_note(analysis, "ptx", cls="async copy"), "  ")
            commits = sum(map(len, _of_class(ptx, "async commit").values()))
            waits = sum(map(len, _of_class(ptx, "async wait").values()))
            out.append(_para(f"  {commits} cp.async.commit_group and {waits} cp.async.wait_group keep up to "
                             f"{spec.num_stages - 1} tiles in flight while the current one is used."))
            refs.setdefault(_ref("CP_ASYNC_COMMIT"), None)
        ldm = _of_class(ptx, "ldmatrix")
        if ldm:
            out.append(Text("Shared → registers", style="bold"))
            src_lines = python_lines(analysis)
            for occ in ldm.values():
                where = _python_lines_of(analysis, "ptx", {line.number for line, _ in occ})
                what = "; ".join(f"line {n}: {src_lines.get(n, '').strip()}" for n in where)
                out.append(_para(f"  {len(occ)} x {occ[0][1].op}" + (f"  (for {what})" if what else "")))
            note_para(_first_note(analysis, "ptx", cls="ldmatrix", count=4), "  ")
            note_para(_first_note(analysis, "ptx", cls="ldmatrix", count=2, trans=True)
                      or _first_note(analysis, "ptx", cls="ldmatrix", count=2), "  ")
        mmas = _of_class(ptx, "mma", "wgmma", "tcgen05 mma")
        if mmas:
            out.append(Text("Tensor cores", style="bold"))
            for occ in mmas.values():
                out.append(_para(f"  {len(occ)} x {_mma_text(occ[0][1])}"))
            note_para(_first_note(analysis, "ptx", cls="mma") or _first_note(analysis, "ptx", cls="wgmma")
                      or _first_note(analysis, "ptx", cls="tcgen05 mma"), "  ")
            for cls in ("tmem alloc", "tmem load"):   # Blackwell: the accumulator lives in tensor memory
                note_para(_first_note(analysis, "ptx", cls=cls), "  ")
            enc = _first_note(analysis, "ttgir", encoding="nvidia_mma")
            if enc and "across_warps" in enc.facts:
                out.append(_para(f"  Across warps ({enc.label}): " + enc.facts["across_warps"]))
        other = _of_class(ptx, "global load", "global store", "shared load", "shared store", "barrier", "mbarrier",
                          "tma copy", "stmatrix", "wgmma sync", "tmem alloc", "tmem load", "tmem store",
                          "tcgen05 sync")
        if other:
            out.append(_para("  Also: " + ", ".join(f"{len(occ)} {name}" for name, occ in other.items()) + "."))


def _walk_sass(analysis: Analysis, out: list, note_para, refs: dict[str, None]) -> None:
    """SASS: what the GPU runs, and which SASS each PTX instruction became."""
    sass = _counted(analysis, "sass")
    if sass:
        _section(out, "SASS")
        out.append(_para("What the GPU runs (nvdisasm): "
                         + "; ".join(f"{len(occ)} x {_sass_name(occ[0][1])}" for occ in sass.values()) + "."))
        pairs = [("async copy", "cp.async"), ("async commit", "cp.async.commit_group"),
                 ("async wait", "cp.async.wait_group"), ("ldmatrix", "ldmatrix"), ("mma", "mma.sync"),
                 ("wgmma", "wgmma.mma_async"), ("tma copy", "cp.async.bulk.tensor"), ("barrier", "bar.sync"),
                 ("tcgen05 mma", "tcgen05.mma"), ("tmem load", "tcgen05.ld"), ("tmem store", "tcgen05.st"),
                 ("tcgen05 sync", "tcgen05.commit")]
        for cls, ptx_name in pairs:
            names = sorted({occ[0][1].facts["variant"] for occ in _of_class(sass, cls).values()})
            if names:
                out.append(_para(f"  PTX {ptx_name} → SASS {', '.join(names)}"))
        refs.setdefault(_ref("SASS"), None)


# The stages the walkthrough tells in sections of their own (NVIDIA's PTX, and the SASS each PTX instruction
# became; _memory_path follows both).  Any other stage whose dialect counts classes (AMDGCN) is told through its
# class words: _walk_machine, and _class_path for the memory path.
_OWN_SECTIONS = {"ptx": _walk_ptx, "sass": _walk_sass}


def _walk_remarks(analysis: Analysis, out: list, note_para, refs: dict[str, None]) -> None:
    """What Triton itself said (its remarks, as notes on the source)."""
    src = python_lines(analysis)
    said = [n for n in analysis.notes if n.stage == SOURCE and n.kind == REMARK]
    if said:
        from tritonscope.triton_api.remarks import Remark
        from tritonscope.analyses.remarks import made_by

        _section(out, "What Triton itself says")
        first = analysis.artifact.python_first_line
        for note in said:
            f = note.facts
            line = f.get("line") or note.line + first - 1
            where = f"line {line}" + (f" ({src[line].strip()})" if line in src else "")
            remark = Remark.from_dict(f)
            by = f", from the {made_by(remark)}" if remark.stage else ""
            out.append(_para(f"  {where}: {f.get('severity', 'remark')}{by}: {remark.said}"))
            for detail in f.get("notes") or ():
                out.append(_para(f"    note: {detail}"))


def _walk_machine(analysis: Analysis, out: list, note_para, refs: dict[str, None]) -> None:
    """Machine code without a section of its own (AMDGCN), told through its dialect's classes."""
    for key in _compiled(analysis):
        if key not in _OWN_SECTIONS and dialect(key).classes and _counted(analysis, key):
            _machine_section(analysis, key, out, note_para)


def _walk_ending(analysis: Analysis, out: list, note_para, refs: dict[str, None]) -> None:
    """The memory path, and the references the sections cited."""
    path = _memory_path(analysis) or next(
        (p for p in (_class_path(analysis, k) for k in _compiled(analysis) if k not in _OWN_SECTIONS
                     and dialect(k).classes) if p), "")
    if path:
        _section(out, "Memory path")
        out.append(_para(path))
    if refs:
        _section(out, "References")
        out.append(_para("\n".join(f"  - {r}" for r in refs)))


# TTGIR ops of AMD and Blackwell targets the walkthrough counts and explains (their notes: dialects/mlir.py).
_TARGET_OPS = ("amdg.buffer_load", "amdg.buffer_load_to_local", "amdg.buffer_store", "amdg.in_thread_transpose",
               "ttng.tmem_alloc", "ttng.tc_gen5_mma", "ttng.tmem_load", "ttg.warp_specialize")


def _machine_section(analysis: Analysis, key: str, out: list, note_para) -> None:
    """A machine-code stage told through the class words of its dialect (AMDGCN: global, LDS, matrix cores)."""
    counted = _counted(analysis, key)
    first = next(iter(counted.values()))[0][1]
    target = first.facts.get("target") or next((n.facts.get("target") for n in _notes(analysis, key)
                                                if n.facts.get("target")), None)
    _section(out, dialect(key).title)
    out.append(_para(f"What the GPU runs{f' ({target})' if target else ''}: "
                     + "; ".join(f"{len(occ)} x {name}" for name, occ in counted.items()) + "."))
    src_lines = python_lines(analysis)
    groups = (("Global → LDS, without registers", ("async copy",)),
              ("Global memory", ("global load", "global store")),
              ("Registers → LDS", ("shared store",)),
              ("LDS → registers", ("shared load",)),
              ("Matrix cores", ("mma",)),
              ("Waiting", ("async wait", "barrier")),
              ("Spills", ("scratch store", "scratch load")))
    for title, classes in groups:
        of = _of_class(counted, *classes)
        if not of:
            continue
        out.append(Text(title, style="bold"))
        for name, occ in of.items():
            where = _python_lines_of(analysis, key, {line.number for line, _ in occ})
            what = "; ".join(f"line {n}: {src_lines.get(n, '').strip()}" for n in where[:3])
            out.append(_para(f"  {len(occ)} x {name}" + (f"  (for {what})" if what else "")))
        for cls in classes:
            note_para(_first_note(analysis, key, cls=cls), "  ")
        if classes == ("mma",):
            enc = next((n for n in _notes(analysis, "ttgir", "encoding")
                        if n.facts.get("encoding") in ("amd_mfma", "amd_wmma")), None)
            note_para(enc, "  Layout: ")


def _class_path(analysis: Analysis, key: str) -> str:
    """'global --buffer_load_dwordx2 64-bit--> registers --ds_write_b64--> LDS ...' from a stage's class words."""
    counted = _counted(analysis, key)

    def ops(*classes: str) -> list[str]:
        return list(dict.fromkeys(occ[0][1].op for occ in _of_class(counted, *classes).values()))

    mma = ops("mma")
    if not mma:
        return ""
    steps = ["global"]
    if ops("async copy"):
        steps.append(f"--{', '.join(ops('async copy'))}--> LDS")
    elif ops("global load") and ops("shared store"):
        steps.append(f"--{', '.join(ops('global load'))}--> registers --{', '.join(ops('shared store'))}--> LDS")
    elif ops("global load"):
        steps.append(f"--{', '.join(ops('global load'))}--> registers")
    if ops("shared load"):
        steps.append(f"--{', '.join(ops('shared load'))}--> registers")
    steps.append(f"--{', '.join(mma)}--> matrix cores")
    return "  " + " ".join(steps)


def _sass_name(ins: Instr) -> str:
    """'LDGSTS (32-bit)', 'HMMA.16816.F32': a SASS instruction as the walkthrough lists it."""
    f = ins.facts
    return f["variant"] + (f" ({f['bits']}-bit)" if "bits" in f else "")


def _python_lines_of(analysis: Analysis, key: str, numbers: set[int]) -> list[int]:
    """Python lines (of the kernel's file) that the given stage lines come from."""
    return [n for n, lines in sorted(by_source_line(analysis, key).items()) if any(ln.number in numbers for ln in lines)]


def _ref(name: str) -> str:
    from tritonscope.language import refs

    return getattr(refs, name)


def _elem_bytes(analysis: Analysis) -> int | None:
    """Element size of the async-copied tensors (the TTGIR copy's pointer type)."""
    note = _first_note(analysis, "ttgir", op="ttg.async_copy_global_to_local")
    bits = note.facts.get("elem_bits") if note else None
    return bits // 8 if bits else None


def _memory_path(analysis: Analysis) -> str:
    ptx, sass = _counted(analysis, "ptx"), _counted(analysis, "sass")

    def firsts(counted, cls: str) -> list[Instr]:
        return [occ[0][1] for occ in _of_class(counted, cls).values()]

    steps = ["global"]
    cp = firsts(ptx, "async copy")
    if cp:
        names = [f"cp.async.{i.facts['cache']}" + (f" {i.facts['bytes']}B" if "bytes" in i.facts else "") for i in cp]
        steps.append(f"--{', '.join(names)}{' / LDGSTS' if firsts(sass, 'async copy') else ''}--> shared")
    elif firsts(ptx, "tma copy"):
        steps.append("--TMA cp.async.bulk.tensor--> shared")
    else:
        return ""
    ldm = [f"x{i.facts['count']}{'.trans' if i.facts['trans'] else ''}" for i in firsts(ptx, "ldmatrix")
           if "count" in i.facts]
    mma, wg = firsts(ptx, "mma"), firsts(ptx, "wgmma")
    if ldm and not firsts(ptx, "tcgen05 mma"):  # tcgen05.mma reads shared memory itself (ldmatrix: epilogue)
        steps.append(f"--ldmatrix {', '.join(ldm)}{' / LDSM' if firsts(sass, 'ldmatrix') else ''}--> registers")
    if mma:
        steps.append(f"--{', '.join(map(_mma_text, mma))}{' / HMMA' if firsts(sass, 'mma') else ''}--> tensor cores")
    elif wg:
        steps.append(f"--{', '.join(map(_mma_text, wg))} (operands read from shared memory)"
                     f"{' / HGMMA' if firsts(sass, 'wgmma') else ''}--> tensor cores")
    elif firsts(ptx, "tcgen05 mma"):   # Blackwell: operands from shared memory, accumulator in tensor memory
        tc = firsts(ptx, "tcgen05 mma")
        steps.append(f"--{', '.join(map(_mma_text, tc))} (operands read from shared memory)"
                     f"{' / UTCHMMA' if firsts(sass, 'tcgen05 mma') else ''}--> tensor memory")
        if firsts(ptx, "tmem load"):
            steps.append("--tcgen05.ld--> registers")
    return "  " + " ".join(steps)
