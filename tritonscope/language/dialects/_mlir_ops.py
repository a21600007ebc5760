"""TTIR and TTGIR notes: one note per op tritonscope knows and one per layout encoding (mlir.py's annotator).

Kept apart from mlir.py (parser, noise, diff normalizer, classifier,
stage-file recognition) so that each module stays readable: the writers
here are a table of one function per op family (_OP_NOTES), plus the
target-specific ops (AMD, Blackwell, warp specialization).  An underscore
module: the registry's discovery skips it (it declares no dialect).
"""

from __future__ import annotations

import math
import re
from typing import Callable

from tritonscope.core.model import Line, Note, ParsedStage
from tritonscope.language import refs
from tritonscope.language.mlir_syntax import INSTR_SHAPE, OP as _OP, alias_table


def _enc():
    """tritonscope.language.encodings, imported when notes are first made (not for parsing or diffing)."""
    from tritonscope.language import encodings

    return encodings


# --------------------------------------------------------------------------
# Annotator
# --------------------------------------------------------------------------

# #ttg.slice<{dim = 0, parent = #blocked}>
_INLINE = re.compile(r"#(?:ttg|triton_gpu)\.(slice|dot_op)<\{([^}]*)\}>")
# {axis = 1 : i32}
_ATTR_INT = r"\b{}\s*=\s*(-?\d+)"


def _attr(name: str, text: str) -> int | None:
    m = re.search(_ATTR_INT.format(name), text)
    return int(m.group(1)) if m else None


def _x(shape) -> str:
    return "x".join(map(str, shape))


def _operands(text: str, op: str) -> list[str]:
    """The %values between the op name and the first ':' or '{' (good enough for tt.load/store)."""
    rest = text.split(op, 1)[1]
    rest = re.split(r"[:{]", rest, 1)[0]
    return re.findall(r"%[\w#]+", rest)


def _ptr_elem(text: str) -> str | None:
    # !tt.ptr<f16>
    m = re.search(r"!tt\.ptr<([\w]+)>", text)
    return m.group(1) if m else None


def _tensor(t) -> dict:
    """A tensor type as facts: {'shape': [16, 16], 'elem': 'f16', 'encoding': '#blocked'}."""
    return {"shape": list(t[1]), "elem": t[2], "encoding": t[3]}


class _Context:
    """Facts about the whole module that notes on single lines need."""

    def __init__(self, stage: ParsedStage):
        enc = _enc()
        self.aliases: dict = {}
        self.shapes: dict[str, list[tuple[int, ...]]] = {}
        self.mem_shapes: dict[str, list[tuple[int, ...]]] = {}
        self.dot_elem: dict[str, str] = {}
        self.shared_elem: dict[str, tuple[str, int]] = {}
        self._types: dict[str, list] = {}
        # Aliases of the whole module (a definition may go on over several lines): name -> text.
        self.alias_texts = alias_table("\n".join(ln.text for ln in stage.lines))
        for name, text in self.alias_texts.items():
            e = enc.alias_encoding(name, text)
            if e:
                self.aliases[e.alias] = e
        # module attributes {... ttg.target = "hip:gfx942" ...}: AMD wording (ds_read, waves) in the notes
        self.vendor = "amd" if any('ttg.target = "hip:' in ln.text for ln in stage.lines[:200]) else "nvidia"
        for line in stage.lines:
            t = line.text
            if t.startswith("#"):
                continue
            if "<" not in t:
                continue
            for container, shape, elem, encoding in self.types_of(t):
                if not encoding:
                    continue
                if container == "tensor":
                    self.shapes.setdefault(encoding, [])
                    if shape not in self.shapes[encoding]:
                        self.shapes[encoding].append(shape)
                else:
                    # memdesc<2x16x16xf16, #shared>: the last dim is the row
                    self.shared_elem.setdefault(encoding, (elem, shape[-1]))
                    self.mem_shapes.setdefault(encoding, [])
                    if shape not in self.mem_shapes[encoding]:
                        self.mem_shapes[encoding].append(shape)
            for m in _INLINE.finditer(t):
                if m.group(1) == "dot_op":
                    f = enc.parse_fields(m.group(2))
                    before = t[:m.start()]
                    # tensor<16x16xf16, #ttg.dot_op<...>: the element type just before the encoding
                    em = re.search(r"<(?:\d+x)+(\w+), $", before)
                    if em and isinstance(f.get("parent"), str):
                        self.dot_elem.setdefault(f["parent"], em.group(1))
            if "warp_group_dot " in t or "tt.dot " in t:
                # wgmma operands are memdescs: tensor<...> or memdesc<...xf16, ...> * ...
                m = re.search(r":\s*\S*<(?:\d+x)+(\w+),.*->\s*tensor<[\dx]+\w+, (#\w+)>", t)
                if m:
                    self.dot_elem.setdefault(m.group(2), m.group(1))

    def types_of(self, text: str) -> list:
        """encodings.tensor_types of a line, read once per line for the context and the op notes."""
        got = self._types.get(text)
        if got is None:
            got = self._types[text] = _enc().tensor_types(text)
        return got

    def as_dict(self) -> dict:
        return {"shapes": self.shapes, "dot_elem": self.dot_elem, "shared_elem": self.shared_elem,
                "mem_shapes": self.mem_shapes, "alias_texts": self.alias_texts, "vendor": self.vendor}

    def blocked_per_thread(self, encoding: str | None, shape: tuple[int, ...]) -> int | None:
        """Elements per thread (the drawn layout's number) for a tensor whose shape, per CTA, is a whole
        multiple of the CTA tile; None otherwise (copies make "handles" ambiguous)."""
        e = self.aliases.get(encoding or "")
        if not e or e.kind != "blocked":
            return None
        n = _enc().layout_numbers(e.text, shape, self.alias_texts)
        if not n or any(p % t for p, t in zip(n["shape_per_cta"], n["cta_tile"])):
            return None
        return n["elements_per_thread"]


def _encoding_facts(kind: str, fields: dict, alias: str | None = None) -> dict:
    facts = {"encoding": kind, "fields": dict(fields)}
    if alias:
        facts["alias"] = alias
    return facts


def annotate(stage: ParsedStage) -> list[Note]:
    enc = _enc()
    ctx = _Context(stage)
    ctx.lines = stage.lines  # for ops whose note reads their regions (ttg.warp_specialize)
    notes: list[Note] = []
    seen_inline: set[str] = set()

    def add(line: Line, kind: str, label: str, text: str, ref, facts: dict) -> None:
        notes.append(Note(stage.key, line.number, kind, label, text, ref, facts))

    for line in stage.lines:
        t = line.text
        if not t.strip():
            continue
        if t.startswith("#"):
            e = ctx.aliases.get(t.split("=", 1)[0].strip())
            if e:
                got = enc.explain_note(e, ctx.as_dict())
                if got:
                    facts = {**_encoding_facts(e.kind, e.fields, e.alias), **got[3]}
                    if e.kind == "nvidia_mma":
                        # What the warps do, for the walkthrough's "across warps" paragraph:
                        # everything after the note's first sentence (the instruction itself).
                        facts["across_warps"] = got[1].split(". ", 1)[-1]
                    add(line, "encoding", got[0], got[1], got[2], facts)
            continue
        # First use of each distinct inline encoding gets its note.
        for m in _INLINE.finditer(t):
            if m.group(0) in seen_inline:
                continue
            seen_inline.add(m.group(0))
            fields = enc.parse_fields(m.group(2))
            got = enc.explain_inline_note(m.group(0), m.group(1), fields, ctx.as_dict())
            if got:
                add(line, "encoding", got[0], got[1], refs.ENCODINGS,
                    {**_encoding_facts(m.group(1), fields), "attribute": m.group(0), **got[2]})
        m = _OP.match(t)
        if not m:
            part = _PARTITION.match(t)
            if part:  # a warp-specialized partition's header line
                add(line, *_partition_note(part.group(1), int(part.group(2))))
            continue
        try:
            got = _op_note(m.group(1), t, ctx)
        except Exception:  # a note is never worth a crash: new IR spellings just get none
            got = None
        if got:
            kind, label, text, ref, facts = got
            add(line, kind, label, text, ref, {"op": m.group(1), **facts})
    return notes


# One writer per op family, found by _OP_NOTES: each takes the op, its line, the module's context, the
# line's types, its tensor types and the result's shape, and returns (kind, label, explanation,
# reference, facts), or None when the line does not say enough.
def _note_func(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """tt.func"""
    # %a_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}
    args = re.findall(r"(%\w+): [^{,)]+\{tt\.divisibility = (\d+)", t)
    if args:
        names = ", ".join(a for a, _ in args)
        div = sorted({d for _, d in args})
        return ("op", "kernel arguments specialized",
                f"tt.divisibility = {'/'.join(div)} on {names}: the JIT saw values divisible by "
                f"{'/'.join(div)}, which lets the compiler prove alignment and use vector and async copies.",
                refs.TT_OPS, {"divisibility": {a: int(d) for a, d in args}})
    return None


def _note_get_program_id(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """tt.get_program_id"""
    axis = re.search(r"get_program_id (\w)", t)
    ax = {"x": 0, "y": 1, "z": 2}.get(axis.group(1) if axis else "", None)
    return ("op", f"program id axis {ax}",
            f"tl.program_id({ax}): this program's index along grid axis {ax}; it selects which tile to compute.",
            refs.TT_OPS, {"axis": ax}) if ax is not None else None


def _note_make_range(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """tt.make_range"""
    s, e = _attr("start", t), _attr("end", t)
    if s is None or e is None:
        return None
    return ("op", f"arange [{s}, {e})",
            f"tl.arange({s}, {e}): a {e - s}-element tensor holding {s} .. {e - 1}, the per-element offsets "
            f"within one tile.", refs.TT_OPS, {"start": s, "end": e})


def _note_splat(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """tt.splat"""
    # %0 = tt.splat %a_ptr : !tt.ptr<f16> -> tensor<16x1x!tt.ptr<f16>>
    src = re.search(r"tt\.splat (%[\w#]+) : ([^ ]+) ->", t)
    if not src or not out_shape:
        return None
    what = "pointer" if src.group(2).startswith("!tt.ptr") else "scalar"
    return ("op", f"splat {what} → {_x(out_shape)}",
            f"Copies the {what} {src.group(1)} ({src.group(2)}) into every element of a {_x(out_shape)} tensor, "
            f"because it is combined element-wise with a tensor of that shape.", refs.TT_OPS,
            {"what": what, "source": src.group(1), "source_type": src.group(2), "shape": list(out_shape)})


def _note_expand_dims(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """tt.expand_dims"""
    axis = _attr("axis", t)
    if axis is None or len(tensors) < 2:
        return None
    return ("op", f"expand_dims axis {axis}",
            f"Inserts a size-1 dimension at axis {axis}: {_x(tensors[0][1])} → {_x(tensors[-1][1])} "
            f"(the [{':, None' if axis == 1 else 'None, :'}] indexing).", refs.TT_OPS,
            {"axis": axis, "from": list(tensors[0][1]), "to": list(tensors[-1][1])})


def _note_broadcast(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """tt.broadcast"""
    if len(tensors) < 2:
        return None
    return ("op", f"broadcast {_x(tensors[0][1])} → {_x(tensors[-1][1])}",
            f"Repeats the size-1 dimensions so both operands of the next element-wise op have shape "
            f"{_x(tensors[-1][1])}: NumPy-style broadcasting made explicit.", refs.TT_OPS,
            {"from": list(tensors[0][1]), "to": list(tensors[-1][1])})


def _note_addptr(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """tt.addptr"""
    enc = _enc()
    elem = _ptr_elem(t)
    bits = enc.elem_bits(elem) if elem else None
    shape = f"{_x(out_shape)} " if out_shape else ""
    return ("op", "pointer + offset",
            f"Advances each of the {shape}pointers by its offset in elements"
            + (f" ({bits // 8} bytes per {elem} element)." if bits else "."), refs.TT_OPS,
            {"shape": list(out_shape) if out_shape else None, "elem": elem, "elem_bits": bits})


def _note_load_store(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """tt.load / tt.store"""
    ops = _operands(t, op)
    masked = len(ops) >= (2 if op == "tt.load" else 3)
    elem = _ptr_elem(t)
    what = f"{_x(out_shape)} {elem or ''}".strip() if out_shape else "a scalar"
    verb = "Loads" if op == "tt.load" else "Stores"
    text = f"{verb} {what} {'from' if op == 'tt.load' else 'to'} global memory, "
    if masked:
        text += ("masked: elements whose mask is false are not " + ("read (they get `other`, else 0)."
                                                                    if op == "tt.load" else "written."))
    else:
        text += "unmasked: every address is assumed to be in bounds."
    enc_name = tensors[0][3] if tensors else None
    per = ctx.blocked_per_thread(enc_name, tensors[0][1]) if tensors else None
    if per:
        text += f" With {enc_name}, each thread handles {per} elements."
    return ("op", f"{op.split('.')[1]} {'masked' if masked else 'unmasked'}", text, refs.TT_OPS,
            {"shape": list(out_shape) if out_shape else None, "elem": elem, "masked": masked,
             "encoding": enc_name, "per_thread": per})


def _note_dot(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """tt.dot"""
    if len(tensors) < 3:
        return None
    a, b, c = tensors[0], tensors[1], tensors[-1]
    # inputPrecision = tf32
    prec = re.search(r"inputPrecision = (\w+)", t)
    text = (f"Tile matmul: {_x(a[1])} {a[2]} x {_x(b[1])} {b[2]} accumulated into {_x(c[1])} {c[2]} "
            f"(tl.dot); this is what becomes tensor-core instructions.")
    if prec and a[2] == "f32":
        text += f" inputPrecision = {prec.group(1)}: f32 inputs are rounded to {prec.group(1)} for the tensor cores."
    target = _dot_target(c[3], ctx)  # AMD: MFMA/WMMA, named after the result's encoding
    if target:
        text = text.replace("tensor-core instructions", target[0]).replace("tensor cores", "matrix cores")
        text += " " + target[1]
    return ("op", f"dot {_x(a[1])}·{_x(b[1])}", text, refs.TT_OPS,
            {"a": _tensor(a), "b": _tensor(b), "c": _tensor(c),
             "input_precision": prec.group(1) if prec else None, **(target[2] if target else {})})


def _note_for(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """scf.for"""
    # scf.for %k = %c0_i32 to %K step %c16_i32 iter_args(%acc = %cst) -> (...)
    m = re.search(r"scf\.for (%[\w#]+) = (%[\w#-]+) to (%[\w#-]+) step (%[\w#-]+)", t)
    if not m:
        return None
    n_iter = len(re.findall(r"%[\w#]+ = %[\w#-]+", t.split("iter_args", 1)[1])) if "iter_args" in t else 0
    return ("op", "loop",
            f"Loop {m.group(1)} from {m.group(2)} to {m.group(3)} step {m.group(4)}"
            + (f", carrying {n_iter} values between iterations (iter_args: the accumulator and, after "
               f"pipelining, buffer indices and async tokens)." if n_iter else "."), refs.SCF,
            {"induction": m.group(1), "lower": m.group(2), "upper": m.group(3), "step": m.group(4),
             "iter_args": n_iter})


def _note_reduce(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """tt.reduce"""
    axis = _attr("axis", t)
    return ("op", f"reduce axis {axis}",
            f"Reduces along axis {axis} with the combine region below (tl.sum/tl.max/...): within a thread, "
            f"then across lanes with shuffles, then across warps through shared memory if needed.",
            refs.TT_OPS, {"axis": axis}) if axis is not None else None


def _note_convert_layout(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """ttg.convert_layout"""
    encs = [x[3] for x in tensors]
    if len(encs) >= 2:
        return ("cost", f"layout conversion {encs[0]} → {encs[-1]}",
                f"Moves a {_x(out_shape)} tensor from {encs[0]} to {encs[-1]}: threads must exchange elements, "
                f"usually through shared memory with a barrier. It costs time; it exists because the producer "
                f"and the consumer want different layouts.", refs.TTG_OPS,
                {"from": encs[0], "to": encs[-1], "shape": list(out_shape)})
    return None


def _note_async_copy_global_to_local(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """ttg.async_copy_global_to_local"""
    enc = _enc()
    cont = _attr("contiguity", t)
    elem = _ptr_elem(t)
    bits = enc.elem_bits(elem) if elem else None
    src = tensors[0] if tensors else None
    per = ctx.blocked_per_thread(src[3], src[1]) if src else None
    text = f"Asynchronous copy of a {_x(src[1]) if src else ''} tile from global to shared memory (cp.async), " \
           f"not through registers."
    if per:
        text += f" With {src[3]} each thread copies {per} elements"
        if cont and bits:
            text += f", {cont} contiguous {elem} = {cont * bits // 8} bytes per copy instruction"
        text += "."
    masked = " mask " in t
    if masked:
        text += " Masked: elements with a false mask are filled with zeros."
    size = cont * bits // 8 if cont and bits else None
    return ("op", "async copy global→shared" + (f" {size}B" if size else ""), text, refs.TTG_OPS,
            {"shape": list(src[1]) if src else None, "elem": elem, "elem_bits": bits, "contiguity": cont,
             "bytes": size, "encoding": src[3] if src else None, "per_thread": per, "masked": masked})


def _note_async_commit_group(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """ttg.async_commit_group"""
    return ("op", "commit async group",
            "Closes the async copies issued so far into one group (cp.async.commit_group), so they can be "
            "waited for together.", refs.TTG_OPS, {})


def _note_async_wait(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """ttg.async_wait"""
    n = _attr("num", t)
    return ("op", f"wait until ≤{n} groups pending",
            f"Waits until at most {n} committed copy groups are still in flight (cp.async.wait_group {n}): "
            f"the software pipeline keeps the next tiles loading while this one is used.",
            refs.TTG_OPS, {"pending": n}) if n is not None else None


def _note_local_alloc(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """ttg.local_alloc"""
    enc = _enc()
    md = [x for x in types if x[0] == "!ttg.memdesc"]
    if not md:
        return None
    shape, elem = md[-1][1], md[-1][2]
    bits = enc.elem_bits(elem)
    nbytes = math.prod(shape) * bits // 8 if bits else None
    size = f" = {nbytes:,} bytes" if bits else ""
    text = f"Allocates shared memory for {_x(shape)} {elem}{size}."
    buffers = None
    if len(shape) == 3 and "(" in t.split("ttg.local_alloc", 1)[1][:3] or ": ()" in t:
        if len(shape) == 3:
            buffers = shape[0]
            text += f" The leading {shape[0]} is the number of pipeline buffers."
    return ("op", f"shared alloc {_x(shape)}", text, refs.TTG_OPS,
            {"shape": list(shape), "elem": elem, "bytes": nbytes, "buffers": buffers})


def _note_local_load(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """ttg.local_load"""
    enc = _enc()
    dst = tensors[-1] if tensors else None
    text = "Reads a tile from shared memory into registers"
    facts: dict = {"shape": list(dst[1]) if dst else None, "elem": dst[2] if dst else None,
                   "encoding": dst[3] if dst else None}
    if dst:
        m = _INLINE.search(t)
        if m and m.group(1) == "dot_op":
            f = enc.parse_fields(m.group(2))
            operand = "A" if f.get("opIdx") == 0 else "B"
            facts["operand"] = operand
            text += f" as MMA operand {operand} ({_x(dst[1])} {dst[2]})"
        else:
            text += f" ({_x(dst[1])} {dst[2]}, {dst[3]})"
    return ("op", "shared → registers", text + ".", refs.TTG_OPS, facts)


def _note_local_store(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """ttg.local_store"""
    return ("op", "registers → shared", "Writes a register tensor into a shared-memory buffer.", refs.TTG_OPS, {})


def _note_local_dealloc(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """ttg.local_dealloc"""
    return ("op", "shared free", "Releases a shared-memory allocation.", refs.TTG_OPS, {})


def _note_memdesc_index(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """ttg.memdesc_index"""
    return ("op", "select pipeline buffer",
            "Picks one buffer of a multi-buffered shared allocation (the pipeline stage in use).", refs.TTG_OPS,
            {})


def _note_warp_group_dot(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """ttng.warp_group_dot / ttng.warp_group_dot_wait"""
    if op.endswith("_wait"):
        n = _attr("pendings", t)
        return ("op", f"wgmma wait ≤{n}",
                f"Waits until at most {n} warp-group MMA groups are still running (wgmma.wait_group {n}).",
                refs.TTNG_OPS, {"pending": n}) if n is not None else None
    md = [x for x in types if x[0] == "!ttg.memdesc"]
    a_from = "shared" if len(md) >= 2 else "registers"
    src = "shared memory" if len(md) >= 2 else "registers (A) and shared memory (B)"
    return ("op", "warp-group MMA (wgmma)",
            f"Hopper tensor-core matmul issued by a whole warpgroup (4 warps), asynchronous, reading operands "
            f"from {src}" + (f"; result {_x(out_shape)}" if out_shape else "") + ".", refs.TTNG_OPS,
            {"a_from": a_from, "shape": list(out_shape) if out_shape else None})


def _note_fence_async_shared(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """ttng.fence_async_shared"""
    return ("op", "async proxy fence",
            "Makes earlier ordinary shared-memory writes visible to the async proxy (wgmma, TMA) "
            "before it reads them (fence.proxy.async).", refs.TTNG_OPS, {})


def _note_async_tma_copy_global_to_local(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """ttng.async_tma_copy_global_to_local*"""
    return ("op", "TMA load", "Tensor Memory Accelerator copy global → shared, described by a tensor map "
            "and completed through an mbarrier (cp.async.bulk.tensor).", refs.TTNG_OPS, {})


def _note_async_tma_copy_local_to_global(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """ttng.async_tma_copy_local_to_global*"""
    return ("op", "TMA store", "Tensor Memory Accelerator copy shared → global (cp.async.bulk.tensor).",
            refs.TTNG_OPS, {})


def _note_mbarrier(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """ttng.init_barrier / ttng.wait_barrier / ttng.barrier_expect / ttng.arrive_barrier / ttng.inval_barrier"""
    what = {"ttng.init_barrier": "initializes", "ttng.wait_barrier": "waits on",
            "ttng.barrier_expect": "sets the expected transaction bytes of",
            "ttng.arrive_barrier": "arrives on", "ttng.inval_barrier": "invalidates"}[op]
    return ("op", op.split(".")[1].replace("_", " "),
            f"{what.capitalize()} an mbarrier in shared memory (used to track async copies such as TMA).",
            refs.TTNG_OPS, {})


def _note_cta_barrier(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """gpu.barrier / ttg.barrier"""
    return ("op", "CTA barrier", "All threads of the CTA wait here (bar.sync).", refs.TTG_OPS, {})


# The op-note writers by op name (and by prefix, for ops with suffixed variants)
_OP_NOTES: dict[str, Callable] = {
    "tt.func": _note_func,
    "tt.get_program_id": _note_get_program_id,
    "tt.make_range": _note_make_range,
    "tt.splat": _note_splat,
    "tt.expand_dims": _note_expand_dims,
    "tt.broadcast": _note_broadcast,
    "tt.addptr": _note_addptr,
    "tt.load": _note_load_store,
    "tt.store": _note_load_store,
    "tt.dot": _note_dot,
    "scf.for": _note_for,
    "tt.reduce": _note_reduce,
    "ttg.convert_layout": _note_convert_layout,
    "ttg.async_copy_global_to_local": _note_async_copy_global_to_local,
    "ttg.async_commit_group": _note_async_commit_group,
    "ttg.async_wait": _note_async_wait,
    "ttg.local_alloc": _note_local_alloc,
    "ttg.local_load": _note_local_load,
    "ttg.local_store": _note_local_store,
    "ttg.local_dealloc": _note_local_dealloc,
    "ttg.memdesc_index": _note_memdesc_index,
    "ttng.warp_group_dot": _note_warp_group_dot,
    "ttng.warp_group_dot_wait": _note_warp_group_dot,
    "ttng.fence_async_shared": _note_fence_async_shared,
    "ttng.init_barrier": _note_mbarrier,
    "ttng.wait_barrier": _note_mbarrier,
    "ttng.barrier_expect": _note_mbarrier,
    "ttng.arrive_barrier": _note_mbarrier,
    "ttng.inval_barrier": _note_mbarrier,
    "gpu.barrier": _note_cta_barrier,
    "ttg.barrier": _note_cta_barrier,
}
_OP_NOTE_PREFIXES: tuple[tuple[str, Callable], ...] = (
    ("ttng.async_tma_copy_global_to_local", _note_async_tma_copy_global_to_local),
    ("ttng.async_tma_copy_local_to_global", _note_async_tma_copy_local_to_global),
)


def _op_note(op: str, t: str, ctx: _Context):
    """(kind, label, explanation, reference, facts) for one op line, or None."""
    types = ctx.types_of(t) if "<" in t else []
    tensors = [x for x in types if x[0] == "tensor"]
    out_shape = tensors[-1][1] if tensors else None
    write = _OP_NOTES.get(op) or next((w for p, w in _OP_NOTE_PREFIXES if op.startswith(p)), None)
    if write is not None:
        return write(op, t, ctx, types, tensors, out_shape)
    return _target_op_note(op, t, ctx, types, tensors, out_shape)


# --------------------------------------------------------------------------
# Target-specific ops: AMD (the TritonAMDGPU dialect: amdg. in 3.9, amdgpu. before), Blackwell
# (tcgen05 MMA and tensor memory), TMA/mbarrier helpers, and warp specialization.
# --------------------------------------------------------------------------

# #ttg.amd_mfma<{version = 3, warpsPerCTA = [4, 1], instrShape = [32, 32, 8], isTransposed = true}>
_AMD_MMA = re.compile(r"#ttg\.(amd_mfma|amd_wmma)<\{(.*)\}>")
# instrShape = [32, 32, 8]   (mlir_syntax.INSTR_SHAPE)
_INSTR_SHAPE = INSTR_SHAPE
# version = 3
_VERSION = re.compile(r"\bversion = (\d+)")
_MFMA_FAMILY = {1: "CDNA1", 2: "CDNA2", 3: "CDNA3", 4: "CDNA4"}
_WMMA_FAMILY = {1: "RDNA3", 2: "RDNA4", 3: "gfx1250"}


def _dot_target(enc_name: str | None, ctx: _Context):
    """(instructions, sentence, facts) for a dot whose result encoding is AMD's; None otherwise (NVIDIA text stays)."""
    name = (enc_name or "").lstrip("#")
    text = ctx.alias_texts.get(name, enc_name or "")  # alias_table keys have no '#'
    m = _AMD_MMA.search(text)
    if not m:
        return None
    kind, body = m.group(1), m.group(2)
    v = _VERSION.search(body)
    version = int(v.group(1)) if v else None
    shape = _INSTR_SHAPE.search(body)
    dims = [int(x) for x in shape.group(1).split(",")] if shape else ([16, 16, 16] if kind == "amd_wmma" else None)
    if kind == "amd_mfma":
        unit, family = "matrix-core instructions (MFMA)", _MFMA_FAMILY.get(version or 0)
    else:
        unit, family = "WMMA instructions", _WMMA_FAMILY.get(version or 0)
    what = "x".join(map(str, dims)) if dims else "?"
    sentence = (f"{enc_name} is AMD's {kind} layout (version {version}{f', {family}' if family else ''}): each wave "
                f"issues {'MFMA' if kind == 'amd_mfma' else 'WMMA'} {what} (MxNxK) instructions for its share of the "
                f"tile.")
    return unit, sentence, {"target_encoding": kind, "target_version": version, "instr_shape": dims, "family": family}


def _target_op_note(op: str, t: str, ctx: _Context, types: list, tensors: list, out_shape):
    """Notes for AMD ops, Blackwell's tensor-memory ops, TMA helpers and warp specialization (or None)."""
    if op.startswith(("amdg.", "amdgpu.")):
        return _amd_op_note(op.split(".", 1)[1], t, ctx, tensors, out_shape)
    if op.startswith(("ttng.tc_gen5", "ttng.tmem_")):
        return _tcgen05_note(op, t, types, out_shape)
    if op == "ttg.warp_specialize":
        return _warp_specialize_note(t, ctx)
    if op in ("ttg.warp_yield", "ttg.warp_return"):
        return ("op", "end of partition", f"{op}: the end of a warp-specialized partition's region "
                f"({'the default partition hands its results back' if op.endswith('yield') else 'a worker partition'}"
                f").", refs.TTG_OPS, {})
    if op == "ttng.async_tma_store_wait":
        n = _attr("pendings", t)
        return ("op", f"TMA store wait ≤{n}", f"Waits until at most {n} TMA stores are still reading shared memory "
                f"(cp.async.bulk.wait_group.read {n}), so their buffers can be reused.", refs.TTNG_OPS, {"pending": n})
    if op in ("ttng.tensormap_create", "ttng.reinterpret_tensor_descriptor", "ttng.tensormap_fenceproxy_acquire"):
        what = {"ttng.tensormap_create": "Builds a TMA tensor map (shape, strides, box, swizzle) in global scratch "
                                         "memory for a device-side tl.make_tensor_descriptor (tensormap.replace).",
                "ttng.reinterpret_tensor_descriptor": "Uses a tensor map's address as a TMA descriptor.",
                "ttng.tensormap_fenceproxy_acquire": "Makes a tensor map written by this kernel visible to the TMA "
                                                     "unit before it is used (fence.proxy.tensormap)."}[op]
        return ("op", op.split(".")[1].replace("_", " "), what, refs.TTNG_OPS, {})
    return None


def _amd_op_note(name: str, t: str, ctx: _Context, tensors: list, out_shape):
    enc = _enc()
    elem = _ptr_elem(t)
    bits = enc.elem_bits(elem) if elem else (enc.elem_bits(tensors[-1][2]) if tensors else None)
    cont = _attr("contiguity", t)
    size = cont * bits // 8 if cont and bits else None
    # %a_44 = amdg.buffer_load %a_ptr[%a_42], %mask, %other {...}   ->  base %a_ptr, 2 more operands
    base = re.search(r"(?:amdg|amdgpu)\.\w+ (?:%[\w#]+, )?(%[\w#]+)\[", t)
    after = t.split("]", 1)[1] if "]" in t else ""
    masked = bool(re.match(r"\s*(?:,\s*%|mask\s*=)", after))
    shape = list(out_shape) if out_shape else (list(tensors[0][1]) if tensors else None)
    facts = {"base": base.group(1) if base else None, "shape": shape, "elem": elem, "elem_bits": bits,
             "contiguity": cont, "bytes": size, "masked": masked}
    per_access = f"; contiguity {cont}: {size} bytes per lane per instruction" if size else ""
    why = (f" Buffer instructions address memory as a 32-bit offset from one base held in a buffer resource "
           f"descriptor, which the compiler may use because the JIT saw {facts['base'] or 'the pointer'} pointing into "
           f"less than 2 GiB (tt.pointer_range = 32); an out-of-range offset reads 0 and writes nothing, which is how "
           f"the mask is applied.")
    if name == "buffer_load":
        what = f"{_x(shape)} {elem or ''}".strip() if shape else "a tile"
        return ("op", "buffer load" + (f" {size}B" if size else ""),
                f"Loads {what} from global memory into registers with AMD buffer loads{per_access}"
                + (", masked" if masked else "") + "." + why, refs.AMD_OPS, facts)
    if name == "buffer_load_to_local":
        return ("op", "buffer load → LDS" + (f" {size}B" if size else ""),
                f"Copies a tile from global memory straight into LDS (shared memory) with buffer loads that write LDS "
                f"(buffer_load ... lds), not through registers: the AMD counterpart of cp.async{per_access}." + why,
                refs.AMD_OPS, {**facts, "to": "lds"})
    if name == "buffer_store":
        what = f"a {_x(shape)} tile" if shape else "a tile"
        return ("op", "buffer store" + (f" {size}B" if size else ""),
                f"Stores {what} to global memory with AMD buffer stores{per_access}." + why, refs.AMD_OPS, facts)
    if name.startswith("buffer_atomic"):
        return ("op", name.replace("_", " "), f"An atomic read-modify-write through a buffer descriptor "
                f"({name})." + why, refs.AMD_OPS, facts)
    if name == "in_thread_transpose":
        encs = [x[3] for x in tensors]
        return ("op", "in-thread transpose", f"Reorders the elements each thread holds ({' → '.join(encs)}) inside "
                f"its registers, so the tile can be written to LDS in the order the matrix instructions read it "
                f"(no data moves between threads).", refs.AMD_OPS, {"from": encs[0] if encs else None,
                                                                    "to": encs[-1] if encs else None})
    return ("op", f"AMD op {name}", f"{name}: an op of Triton's AMD-specific TritonAMDGPU dialect.", refs.AMD_OPS,
            {"amd_op": name})


def _tcgen05_note(op: str, t: str, types: list, out_shape):
    enc = _enc()
    md = [x for x in types if x[0] == "!ttg.memdesc"]
    if op.startswith("ttng.tc_gen5_mma"):
        if len(md) < 3:
            return None
        a, b, acc = md[0], md[1], md[2]
        scaled = op.endswith("_scaled")
        a_from = "tensor memory" if "tensor_memory" in (a[3] or "") or "#tmem" in (a[3] or "") else "shared memory"
        text = (f"Blackwell tensor-core MMA (tcgen05.mma{', block-scaled' if scaled else ''}): A[{_x(a[1])}] {a[2]} "
                f"from {a_from} x B[{_x(b[1])}] {b[2]} from shared memory, accumulated into D[{_x(acc[1])}] {acc[2]} "
                f"in tensor memory (TMEM), not registers. One thread issues it for the CTA; it runs asynchronously"
                + (" and signals an mbarrier when done (tcgen05.commit)." if "is_async" in t or len(md) > 3 else "."))
        return ("op", f"tcgen05 MMA {_x(acc[1])}", text, refs.TTNG_OPS,
                {"a": list(a[1]), "b": list(b[1]), "acc": list(acc[1]), "a_from": a_from, "elem": a[2],
                 "acc_elem": acc[2], "scaled": scaled, "async": "is_async" in t})
    if op == "ttng.tmem_alloc":
        if not md:
            return None
        shape, elem = md[-1][1], md[-1][2]
        bits = enc.elem_bits(elem) or 32
        nbytes = math.prod(shape) * bits // 8
        return ("op", f"TMEM alloc {_x(shape)}",
                f"Allocates tensor memory (TMEM) for {_x(shape)} {elem} = {nbytes:,} bytes (tcgen05.alloc): the 256 "
                f"KiB per SM (128 lanes x 512 columns of 32-bit cells) where tcgen05.mma keeps its accumulator.",
                refs.TTNG_OPS, {"shape": list(shape), "elem": elem, "bytes": nbytes})
    if op in ("ttng.tmem_load", "ttng.tmem_store"):
        load = op.endswith("load")
        shape = md[0][1] if md else out_shape
        return ("op", "TMEM → registers" if load else "registers → TMEM",
                (f"Reads {_x(shape)} from tensor memory into registers (tcgen05.ld), e.g. the finished accumulator "
                 f"for the epilogue." if load else
                 f"Writes a {_x(shape)} register tensor into tensor memory (tcgen05.st), e.g. to zero the "
                 f"accumulator.") if shape else ("Tensor memory → registers (tcgen05.ld)." if load else
                                                "Registers → tensor memory (tcgen05.st)."),
                refs.TTNG_OPS, {"shape": list(shape) if shape else None})
    if op == "ttng.tmem_copy":
        return ("op", "shared → TMEM", "Copies from shared memory into tensor memory (tcgen05.cp), e.g. MMA scales.",
                refs.TTNG_OPS, {})
    if op == "ttng.tc_gen5_commit":
        return ("op", "tcgen05 commit", "Makes an mbarrier arrive once every tcgen05 operation issued so far has "
                "completed (tcgen05.commit).", refs.TTNG_OPS, {})
    return None


# partition0(%b_27: !ttg.memdesc<...>, ...) num_warps(1) {
_PARTITION = re.compile(r"^\s*(partition\d+)\(.*\)\s*num_warps\((\d+)\)\s*\{\s*$")
# default {
_DEFAULT = re.compile(r"^\s*default\s*\{\s*$")
# ttg.warp_specialize(%a, %b) attributes {requestedRegisters = array<i32: 24, 24>}
_REQUESTED_REGS = re.compile(r"requestedRegisters = array<i32:([\d, ]*)>")
# "ttg.num-warps" = 8 : i32
_NUM_WARPS = re.compile(r'"ttg\.num-warps" = (\d+)')
# What a partition's ops say about its job.
_ROLES = (("loads (producer)", ("ttng.async_tma_copy_global_to_local", "ttg.async_copy_global_to_local",
                                "amdg.buffer_load_to_local", "tt.load", "tt.descriptor_load")),
          ("MMA", ("ttng.tc_gen5_mma", "ttng.warp_group_dot", "tt.dot", "ttng.tc_gen5_mma_scaled")),
          ("epilogue", ("ttng.async_tma_copy_local_to_global", "tt.store", "tt.descriptor_store", "ttng.tmem_load")))


def _partitions(lines, start: int) -> list[dict]:
    """The regions of the warp_specialize op on line index `start`: name, warps, ops, role, first line."""
    out: list[dict] = []
    indent = None
    for i in range(start + 1, len(lines)):
        text = lines[i].text
        head = _DEFAULT.match(text) or _PARTITION.match(text)
        here = len(text) - len(text.lstrip())
        if head:
            if indent is None:
                indent = here
            if here == indent:
                name = "default" if _DEFAULT.match(text) else head.group(1)
                out.append({"name": name, "warps": None if name == "default" else int(head.group(2)),
                            "line": lines[i].number, "ops": {}})
                continue
        if indent is not None and text.strip() and here <= indent - 2 and not head:
            break   # back at the warp_specialize's own level: the op is over
        m = _OP.match(text)
        if m and out:
            ops = out[-1]["ops"]
            ops[m.group(1)] = ops.get(m.group(1), 0) + 1
    for p in out:
        p["role"] = ", ".join(role for role, ops in _ROLES if any(o in p["ops"] for o in ops)) or None
    return out


def _warp_specialize_note(t: str, ctx: _Context):
    lines = getattr(ctx, "lines", ())
    index = next((i for i, ln in enumerate(lines) if ln.text == t), None)
    if index is None:
        return None
    parts = _partitions(lines, index)
    regs = _REQUESTED_REGS.search(t)
    requested = [int(x) for x in regs.group(1).split(",") if x.strip()] if regs else []
    default_warps = next((int(m.group(1)) for ln in lines[:80] for m in [_NUM_WARPS.search(ln.text)] if m), None)
    workers = [p for p in parts if p["name"] != "default"]
    for p, r in zip(workers, requested):
        p["registers"] = r
    for p in parts:
        if p["name"] == "default":
            p["warps"] = default_warps
    desc = "; ".join(f"{p['name']} ({p['warps']} warp{'s' if p['warps'] != 1 else ''}"
                     + (f", {p['registers']} registers per thread" if p.get("registers") else "") + ")"
                     + (f": {p['role']}" if p["role"] else "") for p in parts)
    return ("op", f"warp specialization: {len(parts)} partitions",
            f"The loop is split between groups of warps that run different code at the same time, handing tiles to "
            f"each other through shared memory and mbarriers: {desc}. Worker partitions get few registers "
            f"(setmaxnreg) so the default partition can have more.", refs.TTG_OPS,
            {"partitions": [{k: v for k, v in p.items() if k != "ops"} | {"ops": dict(p["ops"])} for p in parts],
             "requested_registers": requested})


def _partition_note(name: str, warps: int | None):
    return ("op", f"{name} ({warps} warp{'s' if warps != 1 else ''})" if warps else name,
            f"The code of warp-specialized partition {name}" + (f", run by {warps} warp{'s' if warps != 1 else ''}"
                                                                 if warps else ", run by the kernel's own warps")
            + " alongside the other partitions.", refs.TTG_OPS, {"partition": name, "warps": warps})
