"""Layout drawings: who owns which element (registers) and where it lands (shared memory).

Takes LayoutUse records (layouts.py) and draws them for the terminal (rich
renderables) or as SVG.  Nothing here computes a layout: the owners and
offsets come from the linear-layout bases stored in the record, so a report
re-renders without Triton.
"""

from __future__ import annotations

import html
from typing import Any, Iterable

from rich import box
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from tritonscope.language.layouts import (LayoutUse, bank_of, cta_grid, elements_of_thread, first_owners, lanes_per_warp,
                                 offset_grid, partition_grid, tmem_grid)

# One background per warp (or per 16-byte bank group in shared memory), readable with black text.
PALETTE = ("#8ecae6", "#ffb703", "#90be6d", "#f4a6c0", "#cdb4db", "#f9c74f", "#a3c4bc", "#e9c46a",
           "#bde0fe", "#ffafcc", "#b5e48c", "#ffd6a5", "#caffbf", "#9bf6ff", "#fdffb6", "#d0d1ff")
MAX_ROWS = 64          # a window larger than this is cut, with a note
MAX_HW_THREADS = 64    # hardware view: threads listed before the note
MAX_HW_REGISTERS = 256  # hardware view: registers listed per thread before the note


def _as_use(item: Any) -> LayoutUse:
    return item if isinstance(item, LayoutUse) else LayoutUse.from_dict(item)


def _color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


# --------------------------------------------------------------------------
# Windows and labels
# --------------------------------------------------------------------------


def _plane(use: LayoutUse) -> tuple[int, int, str]:
    """(rows, cols, note) of the 2-D plane drawn: rank 1 is one row, rank 3+ draws index 0 of the leading dims."""
    shape = use.shape
    if len(shape) == 1:
        return 1, shape[0], ""
    if len(shape) == 2:
        return shape[0], shape[1], ""
    lead = ", ".join("0" for _ in shape[:-2])
    return shape[-2], shape[-1], f"Rank {len(shape)}: drawing [{lead}, :, :] only."


def _coord(use: LayoutUse, r: int, c: int) -> tuple[int, ...]:
    if len(use.shape) == 1:
        return (c,)
    return tuple([0] * (len(use.shape) - 2) + [r, c])


def _box(use: LayoutUse, rows: int, cols: int) -> tuple[int, ...]:
    """The drawn window as sizes per tensor dim: leading dims of rank 3+ at index 0."""
    if len(use.shape) == 1:
        return (cols,)
    return tuple([1] * (len(use.shape) - 2) + [rows, cols])


def _window(use: LayoutUse, width: int, cell: int) -> tuple[int, int, str]:
    rows, cols, note = _plane(use)
    label_w = len(str(rows - 1)) + 1
    fit_cols = max(1, (width - label_w - 4) // (cell + 1))
    show_r, show_c = min(rows, MAX_ROWS), min(cols, fit_cols)
    if show_r < rows or show_c < cols:
        cut = (f"Showing rows 0-{show_r - 1} of {rows} and columns 0-{show_c - 1} of {cols} "
               f"(a window; use --cell 1 or a wider terminal for more).")
        note = (note + " " + cut).strip()
    return show_r, show_c, note


def _owner_label(owner: tuple[int, int, int], count: int, cell: int, lanes: int = 32) -> str:
    """The first owner of an element, '+' when other threads (or registers) hold copies."""
    w, lane, r = owner
    t = w * lanes + lane
    more = "+" if count > 1 else ""
    if cell >= 9:
        s = f"w{w}l{lane}r{r}"
    elif cell >= 6:
        s = f"{t}:{r}"
    elif cell >= 3:
        s = f"{t}"
    else:
        s = f"{w}"
    return (s + more)[:cell] if len(s + more) > cell else s + more


def default_cell(use: LayoutUse, width: int = 100) -> int:
    """The widest cell whose labels still fit every column in `width` (then a window)."""
    rows, cols, _ = _plane(use)
    room = width - len(str(rows - 1)) - 12
    if use.kind == "tensor_memory":
        return 7 if cols * 8 <= room else 3
    if use.kind == "shared":
        for cell in (7, max(3, len(str(_prod(use.shape) - 1)))):
            if cols * (cell + 1) <= room:
                return cell
        return max(3, len(str(_prod(use.shape) - 1)))
    for cell in (9, 6, 4, 2, 1):
        if cols * (cell + 1) <= room:
            return cell
    return 4


def _prod(xs) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


# --------------------------------------------------------------------------
# The grid
# --------------------------------------------------------------------------


def _borders(use: LayoutUse) -> tuple[int, int]:
    """Rows/cols between border lines: the mma instruction tile, 8 rows x 16 bytes in shared memory."""
    f = use.facts or {}
    if use.kind == "shared":
        return 8, max(1, 128 // (use.elem_bits or 16))
    tile = f.get("instr_tile")
    if tile and len(use.shape) >= 2 and use.name in ("nvidia_mma", "dot_op", "amd_mfma", "amd_wmma"):
        return tile[0], tile[1]
    return 0, 0


def grid(use: LayoutUse, *, width: int = 100, cell: int | None = None) -> RenderableType:
    """The element grid: each cell its owner (registers) or its offset (shared memory)."""
    cell = cell or default_cell(use, width)
    rows, cols, note = _window(use, width, cell)
    brow, bcol = _borders(use)
    label_w = len(str(rows - 1))
    lines: list[Text] = []
    head = Text(" " * (label_w + 1))
    for c in range(cols):
        if bcol and c and c % bcol == 0:
            head.append("│")
        head.append(str(c).rjust(cell)[-cell:] + " ", style="dim")
    lines.append(head)
    lanes = lanes_per_warp(use)
    box = _box(use, rows, cols)  # a large tensor: compute only the window drawn
    others = cta_grid(use, box) if use.bases.get("block") else {}
    if use.kind == "shared":
        offsets = offset_grid(use, box)
        parts = partition_grid(use, box)
        bits = use.elem_bits or 16
        per_phase = (use.facts or {}).get("per_phase")
        max_phase = (use.facts or {}).get("max_phase")
        order = (use.facts or {}).get("order") or [1, 0]
        row_is_dim0 = len(use.shape) < 2 or order[0] == len(use.shape) - 1
    elif use.kind == "tensor_memory":
        places = tmem_grid(use, box)
    else:
        owners = first_owners(use, box)
    for r in range(rows):
        if brow and r and r % brow == 0:
            nbars = (cols - 1) // bcol if bcol else 0
            lines.append(Text(" " * (label_w + 1) + "─" * (cols * (cell + 1) + nbars), style="dim"))
        line = Text(str(r).rjust(label_w) + " ", style="dim")
        for c in range(cols):
            if bcol and c and c % bcol == 0:
                line.append("│", style="dim")
            key = _coord(use, r, c)
            if others.get(key):  # held by another CTA of the cluster (this grid draws CTA 0)
                line.append(f"c{others[key]}".rjust(cell)[-cell:] + " ", style="dim")
                continue
            if use.kind == "tensor_memory":
                where = places.get(key)
                if where is None:
                    line.append("?".rjust(cell) + " ")
                    continue
                label = str(where[1]) if cell < 7 else f"{where[0]}/{where[1]}"
                line.append(label.rjust(cell)[-cell:], style=f"black on {_color(where[0] // 32)}")
                line.append(" ")
                continue
            if use.kind == "shared":
                off = offsets.get(key)
                if off is None:
                    line.append("?".rjust(cell) + " ")
                    continue
                group = bank_of(off, bits) // 4
                label = str(off) if cell < 7 else f"{off}/b{bank_of(off, bits)}"
                if parts:
                    label = f"{parts.get(key, 0)}:{off}"
                line.append(label.rjust(cell)[-cell:], style=f"black on {_color(group)}")
                line.append(" ")
            else:
                who = owners.get(key)
                if not who:
                    line.append("·".rjust(cell) + " ")
                    continue
                line.append(_owner_label(who[0], who[1], cell, lanes).rjust(cell),
                            style=f"black on {_color(who[0][0])}")
                line.append(" ")
        if use.kind == "shared" and per_phase and max_phase and row_is_dim0:
            line.append(f" phase {(r // per_phase) % max_phase}", style="dim")
        lines.append(line)
    parts: list[RenderableType] = [Text("\n").join(lines)]
    if note:
        parts.append(Text(note, style="yellow"))
    return Group(*parts)


def legend(use: LayoutUse, cell: int | None = None, width: int = 100) -> Text:
    cell = cell or default_cell(use, width)
    t = Text()
    if use.kind == "tensor_memory":
        t.append("cell = " + ("<TMEM lane>/<column>" if cell >= 7 else "<column>")
                 + " in tensor memory (Triton's column index); color = lanes 32w..32w+31, the only ones warp w of a "
                   "warpgroup can read: ")
        for g in range(4):
            t.append(f" lanes {32 * g}-{32 * g + 31} ", style=f"black on {_color(g)}")
            t.append(" ")
        return t
    if use.kind == "shared":
        bits = use.elem_bits or 16
        t.append(f"cell = element offset in shared memory ({bits}-bit elements"
                 + ("; offset/bank" if cell >= 7 else "") + "); color = bank group: ")
        for g in range(8):
            t.append(f" {4 * g}-{4 * g + 3} ", style=f"black on {_color(g)}")
            t.append(" ")
        return t
    warps = 1 << len(use.bases.get("warp", []))
    what = {9: "w<warp>l<lane>r<register>", 6: "<thread>:<register>", 3: "<thread>", 0: "<warp>"}
    key = next(v for k, v in what.items() if cell >= k)
    lanes = lanes_per_warp(use)
    t.append(f"cell = {key} of the owner (thread = {lanes}*warp + lane); '+' = other threads hold copies; "
             f"color = {'wave' if lanes == 64 else 'warp'}: ")
    for w in range(min(warps, len(PALETTE))):  # a hostile warpsPerCTA = [2**40] looped 2**40 times here
        t.append(f" {'wave' if lanes == 64 else 'warp'} {w} ", style=f"black on {_color(w)}")
        t.append(" ")
    if warps > len(PALETTE):
        t.append(f"(colors repeat after {len(PALETTE)} warps)", style="dim")
    if use.bases.get("block"):
        t.append(f"\nThis draws CTA 0 of {1 << len(use.bases['block'])}; 'c<k>' = an element only CTA k holds.",
                 style="dim")
    return t


def footer(use: LayoutUse) -> Text:
    """The numbers: elements per thread, replication, wrapping, contiguity (or banks)."""
    f = use.facts or {}
    shape = "x".join(map(str, use.shape))
    if use.kind == "tensor_memory":
        lines = [f"{shape} elements in tensor memory: {f.get('lanes_used', 0)} lanes x {f.get('columns_used', 0)} "
                 f"columns used (an SM has 128 lanes x 512 32-bit columns)."]
        if f.get("col_stride", 1) > 1:
            lines.append(f"colStride = {f['col_stride']}: in Triton's layout, consecutive elements of a row are "
                         f"{f['col_stride']} column indices apart (Triton counts packed 16-bit data in half "
                         f"columns).")
        if f.get("copies_per_element", 1) > 1:
            lines.append(f"Each element is stored {f['copies_per_element']} times (in {f['copies_per_element']} "
                         f"groups of 32 lanes).")
        lines.append("Warp w of a warpgroup reads only lanes 32w..32w+31 (tcgen05.ld/st), so a lane's row of the "
                     "tile goes to one warp.")
        return Text("\n".join(lines))
    if use.kind == "shared":
        bits = f.get("elem_bits", 16)
        lines = [f"{shape} elements x {bits} bits = {f.get('bytes', 0):,} bytes."]
        if f.get("partitions"):
            lines.append(f"Partitioned: dim {f.get('partition_dim')} is cut into {f['partitions']} x "
                         f"{f.get('groups')} pieces; piece i goes to buffer i mod {f['partitions']}. The cell is "
                         f"<buffer>:<offset in that buffer>.")
        if f.get("padding"):
            pads = ", ".join(f"{p} after every {i}" for i, p in f["padding"])
            lines.append(f"Padding: {pads} elements, so {f.get('padded_bytes', 0):,} bytes in all; the cell is the "
                         f"padded offset.")
        if f.get("rotating"):
            lines.append("Rotating: each block of perPhase x maxPhase rows XORs its phase with the block number.")
        if f.get("vec") is not None:
            lines.append(f"Swizzle: vec = {f.get('vec')} elements ({f.get('vec') * bits // 8} bytes) move together; "
                         f"the phase is (row / perPhase) mod maxPhase with perPhase = {f.get('per_phase')}, "
                         f"maxPhase = {f.get('max_phase')}; each row's vec-blocks are XORed with its phase.")
        rr = f.get("row_reads")
        if rr and rr.get("reads"):
            if rr["ways"] <= 1:
                lines.append(f"Bank conflicts: none. Reading 8 consecutive rows as 16-byte pieces "
                             f"({rr['piece_elements']} elements, as ldmatrix and cp.async do) hits 8 different "
                             f"groups of 4 banks at every one of the {rr['reads']} column blocks checked.")
            else:
                r0, c0 = rr["at"]
                lines.append(f"Bank conflicts: {rr['ways']}-way. Reading rows {r0}-{r0 + 7} at columns "
                             f"{c0}-{c0 + rr['piece_elements'] - 1} as 16-byte pieces puts {rr['ways']} pieces in "
                             f"the same group of 4 banks ({rr['ways']} wavefronts instead of 1).")
        elif rr is not None:
            lines.append("Bank check: needs at least 8 rows.")
        return Text("\n".join(lines))
    per = f.get("elements_per_thread", 0)
    threads = f.get("threads", 0)
    lanes = f.get("lanes_per_warp", 32)
    warp = "waves" if lanes == 64 else "warps"
    ctas = f.get("ctas", 1)
    lines = [f"{shape} = {f.get('elements', 0)} elements over {threads} threads "
             f"({threads // lanes if threads else 0} {warp} x {lanes} lanes): {per} register slot(s) per thread."]
    if ctas > 1:
        piece = "x".join(map(str, f.get("shape_per_cta") or use.shape))
        lines[0] = (f"{shape} = {f.get('elements', 0)} elements over {ctas} CTAs of {threads} threads "
                    f"({threads // lanes if threads else 0} {warp} x {lanes} lanes each); each CTA holds a "
                    f"{piece} piece: {per} register slot(s) per thread.")
    copies = f.get("copies_per_element", 1)
    if copies > 1:
        why = []
        if f.get("replicated_lanes", 1) > 1:
            why.append(f"{f['replicated_lanes']} lanes of a warp")
        if f.get("replicated_warps", 1) > 1:
            why.append(f"{f['replicated_warps']} {warp}")
        if f.get("replicated_registers", 1) > 1:
            why.append(f"{f['replicated_registers']} registers of a thread")
        if f.get("replicated_ctas", 1) > 1:
            why.append(f"{f['replicated_ctas']} CTAs")
        lines.append(f"Replicates: every element is held {copies} times (by {' x '.join(why)}).")
    else:
        lines.append("Replicates: no, every element has exactly one owner.")
    tile = f.get("cta_tile")
    tile_s = "x".join(map(str, tile)) if tile else "?"
    piece_shape = f.get("shape_per_cta") or use.shape
    if f.get("wraps"):
        reps = _prod(piece_shape) // max(1, _prod(min(a, b) for a, b in zip(piece_shape, tile or piece_shape)))
        lines.append(f"Wraps: yes, all warps together cover {tile_s} at once, so each thread repeats its "
                     f"pattern {reps} times to cover {'x'.join(map(str, piece_shape))}.")
    elif f.get("tile_larger_than_shape"):
        lines.append(f"Wraps: no; the layout's tile ({tile_s}) is larger than {shape}, hence the copies.")
    else:
        lines.append(f"Wraps: no, one pass of all warps ({tile_s}) covers the shape exactly.")
    contig = f.get("contiguous_elements", 1)
    dim = f.get("contiguous_dim", 0)
    if contig > 1:
        lines.append(f"Contiguity: each thread holds runs of {contig} consecutive elements along dim {dim}, "
                     f"so a load or store can move {contig} elements per instruction "
                     f"({contig * 2} bytes for fp16, {contig * 4} for fp32) when memory is contiguous there.")
    else:
        lines.append("Contiguity: 1, each register holds an element not next to the thread's previous one: "
                     "scalar loads unless the data is transposed.")
    return Text("\n".join(lines))


def warp_map(use: LayoutUse) -> Text | None:
    """Which warp computes each instruction tile of the layout's full tile (mma and dot_op)."""
    m = (use.facts or {}).get("warp_map")
    tile = (use.facts or {}).get("instr_tile")
    cta = (use.facts or {}).get("cta_tile")
    if not m or not tile or not cta:
        return None
    t = Text(f"Warp arrangement: each cell is one {tile[0]}x{tile[1]} tile of the layout's {cta[0]}x{cta[1]} "
             f"tile (copies repeat it):\n")
    for i, row in enumerate(m):
        t.append(f"  rows {i * tile[0]:>3}-{(i + 1) * tile[0] - 1:<3} ")
        for j, ws in enumerate(row):
            label = "w" + "/".join(map(str, ws)) if ws else "-"
            inside = i * tile[0] < (use.shape[-2] if len(use.shape) > 1 else 1) and j * tile[1] < use.shape[-1]
            t.append(f" {label:^7} ", style=f"black on {_color(ws[0])}" if inside and ws else "dim")
            t.append(" ")
        t.append("\n")
    out_r = len(use.shape) > 1 and cta[0] > use.shape[-2]
    out_c = cta[1] > use.shape[-1]
    if out_r or out_c:
        t.append(f"  (dim cells lie outside the {'x'.join(map(str, use.shape))} tensor: those warps hold copies "
                 f"of the elements inside)\n", style="dim")
    return t


def hardware_view(use: LayoutUse) -> RenderableType:
    """For each thread, the elements it holds, in register order."""
    if use.kind != "distributed":
        return Text("The hardware view is for register layouts.", style="dim")
    warps = 1 << len(use.bases.get("warp", []))
    lanes = 1 << len(use.bases.get("lane", []))
    registers = 1 << len(use.bases.get("register", []))
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    t.add_column("thread", justify="right")
    t.add_column("warp", justify="right")
    t.add_column("lane", justify="right")
    t.add_column("elements held (register 0, 1, ...)")
    shown = min(warps * lanes, MAX_HW_THREADS)
    for thread in range(shown):  # the first MAX_HW_THREADS threads (the break left 2**40 warps' loop running)
        w, ln = divmod(thread, lanes)
        els = elements_of_thread(use, w, ln, limit=MAX_HW_REGISTERS)
        t.add_row(str(thread), Text(str(w), style=f"black on {_color(w)}"), str(ln),
                  " ".join("(" + ",".join(map(str, e)) + ")" for e in els)
                  + (" ..." if registers > len(els) else ""))
    parts: list[RenderableType] = [t]
    if warps * lanes > shown:
        parts.append(Text(f"Showing threads 0-{shown - 1} of {warps * lanes}.", style="yellow"))
    if registers > MAX_HW_REGISTERS:
        parts.append(Text(f"Showing registers 0-{MAX_HW_REGISTERS - 1} of {registers} per thread.", style="yellow"))
    return Group(*parts)


def title_of(use: LayoutUse) -> str:
    shape = "x".join(map(str, use.shape))
    alias = use.alias or ""
    name = f"#{alias}" if alias.replace("_", "").isalnum() else (alias or use.name)
    return f"{name} on {shape}"


def layout_panel(use: LayoutUse, *, width: int = 100, cell: int | None = None, hardware: bool = False) -> Panel:
    use = _as_use(use)
    body: list[RenderableType] = [Text(use.encoding, style="bold")]
    if use.used_by:
        body.append(Text("used by: " + ", ".join(use.used_by), style="dim"))
    if use.kind == "text":
        body.append(Text(use.note or "This layout is not drawn.", style="yellow"))
        return Panel(Group(*body), title=title_of(use), box=box.ROUNDED, expand=False)
    body += [Text(""), grid(use, width=width - 4, cell=cell), Text(""), legend(use, cell, width - 4)]
    wm = warp_map(use)
    if wm is not None:
        body.append(wm)
    body.append(footer(use))
    if use.note:
        body.append(Text(use.note, style="yellow"))
    if hardware:
        body += [Text(""), Text("Hardware view: what each thread holds", style="bold"), hardware_view(use)]
    return Panel(Group(*body), title=title_of(use), box=box.ROUNDED, expand=False)


def layout_panels(analysis, *, width: int | None = None, cell: int | None = None) -> Iterable[RenderableType]:
    """compile --layouts: one panel per encoding and shape the TTGIR uses."""
    uses = [_as_use(x) for x in (analysis.layouts or [])]
    if not uses:
        yield Text("This kernel's TTGIR uses no layout encodings (or there is no TTGIR stage).", style="dim")
        return
    from rich.console import Console

    w = width or Console().width or 100
    yield Text(f"Layouts: {len(uses)} encoding/shape pairs in the TTGIR", style="bold")
    for use in uses:
        yield layout_panel(use, width=w, cell=cell)


# --------------------------------------------------------------------------
# SVG (reports)
# --------------------------------------------------------------------------


def layout_svg(use: LayoutUse | dict, *, cell_px: int = 34, max_rows: int = 64, max_cols: int = 64) -> str:
    """The grid as a standalone SVG string: owners (thread:register, colored by warp) or offsets (by bank group)."""
    use = _as_use(use)
    title = html.escape(f"{title_of(use)}  {use.encoding}")
    if use.kind == "text":
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="640" height="48" font-family="monospace" '
                f'font-size="12"><text x="4" y="18">{title}</text><text x="4" y="38" fill="#a60">'
                f'{html.escape(use.note or "not drawn")}</text></svg>')
    rows, cols, _ = _plane(use)
    rows, cols = min(rows, max_rows), min(cols, max_cols)
    box = _box(use, rows, cols)
    brow, bcol = _borders(use)
    top, left, h = 40, 28, int(cell_px * 0.6)
    width, height = left + cols * cell_px + 8, top + rows * h + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="monospace" font-size="{max(7, h - 8)}">',
           f'<text x="4" y="14" font-size="12">{title}</text>']
    if use.kind == "shared":
        offsets = offset_grid(use, box)
        bits = use.elem_bits or 16
    elif use.kind == "tensor_memory":
        places = tmem_grid(use, box)
    else:
        owners = first_owners(use, box)
    lanes = lanes_per_warp(use)
    others = cta_grid(use, box) if use.bases.get("block") else {}
    for c in range(cols):
        out.append(f'<text x="{left + c * cell_px + cell_px / 2}" y="{top - 4}" text-anchor="middle" '
                   f'fill="#777">{c}</text>')
    for r in range(rows):
        out.append(f'<text x="{left - 4}" y="{top + r * h + h - 4}" text-anchor="end" fill="#777">{r}</text>')
        for c in range(cols):
            key = _coord(use, r, c)
            if others.get(key):
                fill, label = "#ddd", f"c{others[key]}"
            elif use.kind == "tensor_memory":
                where = places.get(key)
                fill, label = ("#eee", "?") if where is None else (_color(where[0] // 32), str(where[1]))
            elif use.kind == "shared":
                off = offsets.get(key)
                fill, label = ("#eee", "?") if off is None else (_color(bank_of(off, bits) // 4), str(off))
            else:
                who = owners.get(key)
                fill, label = ("#eee", "·") if not who else (_color(who[0][0]), _owner_label(who[0], who[1], 6, lanes))
            x, y = left + c * cell_px, top + r * h
            out.append(f'<rect x="{x}" y="{y}" width="{cell_px}" height="{h}" fill="{fill}" stroke="#fff"/>'
                       f'<text x="{x + cell_px / 2}" y="{y + h - 4}" text-anchor="middle">{label}</text>')
    for r in range(brow, rows, brow or rows + 1):
        out.append(f'<line x1="{left}" y1="{top + r * h}" x2="{left + cols * cell_px}" y2="{top + r * h}" '
                   f'stroke="#000" stroke-width="2"/>')
    for c in range(bcol, cols, bcol or cols + 1):
        out.append(f'<line x1="{left + c * cell_px}" y1="{top}" x2="{left + c * cell_px}" y2="{top + rows * h}" '
                   f'stroke="#000" stroke-width="2"/>')
    out.append(f'<text x="4" y="{height - 10}" font-size="11" fill="#333">'
               f'{html.escape(footer(use).plain.splitlines()[0])}</text>')
    out.append("</svg>")
    return "\n".join(out)
