"""TTIR / TTGIR notes: ops and layout encodings, with the numbers from the line itself."""

from __future__ import annotations

import math
import re

from tritonscope.annotate import encodings as enc
from tritonscope.annotate import refs
from tritonscope.model import Note, ParsedStage

# %a_23 = ttg.async_copy_global_to_local %a_20, %a_21 mask %acc_22 {contiguity = 2 : i32} : ...
_OP = re.compile(r"^\s*(?:%[\w#:]+(?:, %[\w#:]+)*\s*=\s*)?\"?([a-z_]+\.[a-z_.]+)\"?")
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
    m = re.search(r"!tt\.ptr<([\w]+)>", text)
    return m.group(1) if m else None


class _Context:
    """Facts about the whole module that notes on single lines need."""

    def __init__(self, stage: ParsedStage):
        self.aliases: dict[str, enc.Encoding] = {}
        self.shapes: dict[str, list[tuple[int, ...]]] = {}
        self.dot_elem: dict[str, str] = {}
        self.shared_elem: dict[str, tuple[str, int]] = {}
        for line in stage.lines:
            t = line.text
            if t.startswith("#"):
                e = enc.parse_alias(t)
                if e:
                    self.aliases[e.alias] = e
                continue
            if "<" not in t:
                continue
            for container, shape, elem, encoding in enc.tensor_types(t):
                if not encoding:
                    continue
                if container == "tensor":
                    self.shapes.setdefault(encoding, [])
                    if shape not in self.shapes[encoding]:
                        self.shapes[encoding].append(shape)
                else:
                    # memdesc<2x16x16xf16, #shared>: the last dim is the row
                    self.shared_elem.setdefault(encoding, (elem, shape[-1]))
            for m in _INLINE.finditer(t):
                if m.group(1) == "dot_op":
                    f = enc.parse_fields(m.group(2))
                    before = t[:m.start()]
                    em = re.search(r"<(?:\d+x)+(\w+), $", before)
                    if em and isinstance(f.get("parent"), str):
                        self.dot_elem.setdefault(f["parent"], em.group(1))
            if "warp_group_dot " in t or "tt.dot " in t:
                # wgmma operands are memdescs: tensor<...> or memdesc<...xf16, ...> * ...
                m = re.search(r":\s*\S*<(?:\d+x)+(\w+),.*->\s*tensor<[\dx]+\w+, (#\w+)>", t)
                if m:
                    self.dot_elem.setdefault(m.group(2), m.group(1))

    def as_dict(self) -> dict:
        return {"shapes": self.shapes, "dot_elem": self.dot_elem, "shared_elem": self.shared_elem}

    def blocked_per_thread(self, encoding: str | None, shape: tuple[int, ...]) -> int | None:
        """Elements per thread for a tensor whose shape is a whole multiple of the CTA tile."""
        e = self.aliases.get(encoding or "")
        if not e or e.kind != "blocked":
            return None
        tiles = enc.blocked_tiles(e.fields)
        if not tiles or len(shape) != len(tiles.cta_tile) or any(s % c for s, c in zip(shape, tiles.cta_tile)):
            return None
        return math.prod(sp * (s // c) for sp, s, c in zip(e.fields["sizePerThread"], shape, tiles.cta_tile))


def _note(stage, line, kind, label, text, ref=None) -> Note:
    return Note(stage.key, line.number, kind, label, text, ref)


def annotate(stage: ParsedStage) -> list[Note]:
    ctx = _Context(stage)
    notes: list[Note] = []
    seen_inline: set[str] = set()
    for line in stage.lines:
        t = line.text
        if not t.strip():
            continue
        if t.startswith("#"):
            e = ctx.aliases.get(t.split("=", 1)[0].strip())
            if e:
                got = enc.explain(e, ctx.as_dict())
                if got:
                    notes.append(_note(stage, line, "encoding", *got))
            continue
        # First use of each distinct inline encoding gets its note.
        for m in _INLINE.finditer(t):
            if m.group(0) in seen_inline:
                continue
            seen_inline.add(m.group(0))
            got = enc.explain_inline(m.group(1), enc.parse_fields(m.group(2)))
            if got:
                notes.append(_note(stage, line, "encoding", got[0], got[1], refs.ENCODINGS))
        m = _OP.match(t)
        if not m:
            continue
        try:
            got = _op_note(m.group(1), t, ctx)
        except Exception:  # a note is never worth a crash: new IR spellings just get none
            got = None
        if got:
            notes.append(_note(stage, line, *got))
    return notes


def _op_note(op: str, t: str, ctx: _Context):
    types = enc.tensor_types(t)
    tensors = [x for x in types if x[0] == "tensor"]
    out_shape = tensors[-1][1] if tensors else None
    if op == "tt.func":
        args = re.findall(r"(%\w+): [^{,)]+\{tt\.divisibility = (\d+)", t)
        if args:
            names = ", ".join(a for a, _ in args)
            div = sorted({d for _, d in args})
            return ("op", "kernel arguments specialized",
                    f"tt.divisibility = {'/'.join(div)} on {names}: the JIT saw values divisible by "
                    f"{'/'.join(div)}, which lets the compiler prove alignment and use vector and async copies.",
                    refs.TT_OPS)
        return None
    if op == "tt.get_program_id":
        axis = re.search(r"get_program_id (\w)", t)
        ax = {"x": 0, "y": 1, "z": 2}.get(axis.group(1) if axis else "", None)
        return ("op", f"program id axis {ax}",
                f"tl.program_id({ax}): this program's index along grid axis {ax}; it selects which tile to compute.",
                refs.TT_OPS) if ax is not None else None
    if op == "tt.make_range":
        s, e = _attr("start", t), _attr("end", t)
        if s is None or e is None:
            return None
        return ("op", f"arange [{s}, {e})",
                f"tl.arange({s}, {e}): a {e - s}-element tensor holding {s} .. {e - 1}, the per-element offsets "
                f"within one tile.", refs.TT_OPS)
    if op == "tt.splat":
        src = re.search(r"tt\.splat (%[\w#]+) : ([^ ]+) ->", t)
        if not src or not out_shape:
            return None
        what = "pointer" if src.group(2).startswith("!tt.ptr") else "scalar"
        return ("op", f"splat {what} → {_x(out_shape)}",
                f"Copies the {what} {src.group(1)} ({src.group(2)}) into every element of a {_x(out_shape)} tensor, "
                f"because it is combined element-wise with a tensor of that shape.", refs.TT_OPS)
    if op == "tt.expand_dims":
        axis = _attr("axis", t)
        if axis is None or len(tensors) < 2:
            return None
        return ("op", f"expand_dims axis {axis}",
                f"Inserts a size-1 dimension at axis {axis}: {_x(tensors[0][1])} → {_x(tensors[-1][1])} "
                f"(the [{':, None' if axis == 1 else 'None, :'}] indexing).", refs.TT_OPS)
    if op == "tt.broadcast":
        if len(tensors) < 2:
            return None
        return ("op", f"broadcast {_x(tensors[0][1])} → {_x(tensors[-1][1])}",
                f"Repeats the size-1 dimensions so both operands of the next element-wise op have shape "
                f"{_x(tensors[-1][1])}: NumPy-style broadcasting made explicit.", refs.TT_OPS)
    if op == "tt.addptr":
        elem = _ptr_elem(t)
        bits = enc.elem_bits(elem) if elem else None
        shape = f"{_x(out_shape)} " if out_shape else ""
        return ("op", "pointer + offset",
                f"Advances each of the {shape}pointers by its offset in elements"
                + (f" ({bits // 8} bytes per {elem} element)." if bits else "."), refs.TT_OPS)
    if op in ("tt.load", "tt.store"):
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
        return ("op", f"{op.split('.')[1]} {'masked' if masked else 'unmasked'}", text, refs.TT_OPS)
    if op == "tt.dot":
        if len(tensors) < 3:
            return None
        a, b, c = tensors[0], tensors[1], tensors[-1]
        prec = re.search(r"inputPrecision = (\w+)", t)
        text = (f"Tile matmul: {_x(a[1])} {a[2]} x {_x(b[1])} {b[2]} accumulated into {_x(c[1])} {c[2]} "
                f"(tl.dot); this is what becomes tensor-core instructions.")
        if prec and a[2] == "f32":
            text += f" inputPrecision = {prec.group(1)}: f32 inputs are rounded to {prec.group(1)} for the tensor cores."
        return ("op", f"dot {_x(a[1])}·{_x(b[1])}", text, refs.TT_OPS)
    if op == "scf.for":
        m = re.search(r"scf\.for (%[\w#]+) = (%[\w#-]+) to (%[\w#-]+) step (%[\w#-]+)", t)
        if not m:
            return None
        n_iter = len(re.findall(r"%[\w#]+ = %[\w#-]+", t.split("iter_args", 1)[1])) if "iter_args" in t else 0
        return ("op", "loop",
                f"Loop {m.group(1)} from {m.group(2)} to {m.group(3)} step {m.group(4)}"
                + (f", carrying {n_iter} values between iterations (iter_args: the accumulator and, after "
                   f"pipelining, buffer indices and async tokens)." if n_iter else "."), refs.SCF)
    if op == "tt.reduce":
        axis = _attr("axis", t)
        return ("op", f"reduce axis {axis}",
                f"Reduces along axis {axis} with the combine region below (tl.sum/tl.max/...): within a thread, "
                f"then across lanes with shuffles, then across warps through shared memory if needed.",
                refs.TT_OPS) if axis is not None else None
    if op == "ttg.convert_layout":
        encs = [x[3] for x in tensors]
        if len(encs) >= 2:
            return ("cost", f"layout conversion {encs[0]} → {encs[-1]}",
                    f"Moves a {_x(out_shape)} tensor from {encs[0]} to {encs[-1]}: threads must exchange elements, "
                    f"usually through shared memory with a barrier. It costs time; it exists because the producer "
                    f"and the consumer want different layouts.", refs.TTG_OPS)
        return None
    if op == "ttg.async_copy_global_to_local":
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
        return ("op", "async copy global→shared" + (f" {cont * bits // 8}B" if cont and bits else ""), text,
                refs.TTG_OPS)
    if op == "ttg.async_commit_group":
        return ("op", "commit async group",
                "Closes the async copies issued so far into one group (cp.async.commit_group), so they can be "
                "waited for together.", refs.TTG_OPS)
    if op == "ttg.async_wait":
        n = _attr("num", t)
        return ("op", f"wait until ≤{n} groups pending",
                f"Waits until at most {n} committed copy groups are still in flight (cp.async.wait_group {n}): "
                f"the software pipeline keeps the next tiles loading while this one is used.",
                refs.TTG_OPS) if n is not None else None
    if op == "ttg.local_alloc":
        md = [x for x in types if x[0] == "!ttg.memdesc"]
        if not md:
            return None
        shape, elem = md[-1][1], md[-1][2]
        bits = enc.elem_bits(elem)
        size = f" = {math.prod(shape) * bits // 8:,} bytes" if bits else ""
        text = f"Allocates shared memory for {_x(shape)} {elem}{size}."
        if len(shape) == 3 and "(" in t.split("ttg.local_alloc", 1)[1][:3] or ": ()" in t:
            text += f" The leading {shape[0]} is the number of pipeline buffers." if len(shape) == 3 else ""
        return ("op", f"shared alloc {_x(shape)}", text, refs.TTG_OPS)
    if op == "ttg.local_load":
        dst = tensors[-1] if tensors else None
        text = "Reads a tile from shared memory into registers"
        if dst:
            m = _INLINE.search(t)
            if m and m.group(1) == "dot_op":
                f = enc.parse_fields(m.group(2))
                text += f" as MMA operand {'A' if f.get('opIdx') == 0 else 'B'} ({_x(dst[1])} {dst[2]})"
            else:
                text += f" ({_x(dst[1])} {dst[2]}, {dst[3]})"
        return ("op", "shared → registers", text + ".", refs.TTG_OPS)
    if op == "ttg.local_store":
        return ("op", "registers → shared", "Writes a register tensor into a shared-memory buffer.", refs.TTG_OPS)
    if op == "ttg.local_dealloc":
        return ("op", "shared free", "Releases a shared-memory allocation.", refs.TTG_OPS)
    if op == "ttg.memdesc_index":
        return ("op", "select pipeline buffer",
                "Picks one buffer of a multi-buffered shared allocation (the pipeline stage in use).", refs.TTG_OPS)
    if op in ("ttng.warp_group_dot", "ttng.warp_group_dot_wait"):
        if op.endswith("_wait"):
            n = _attr("pendings", t)
            return ("op", f"wgmma wait ≤{n}",
                    f"Waits until at most {n} warp-group MMA groups are still running (wgmma.wait_group {n}).",
                    refs.TTNG_OPS) if n is not None else None
        md = [x for x in types if x[0] == "!ttg.memdesc"]
        src = "shared memory" if len(md) >= 2 else "registers (A) and shared memory (B)"
        return ("op", "warp-group MMA (wgmma)",
                f"Hopper tensor-core matmul issued by a whole warpgroup (4 warps), asynchronous, reading operands "
                f"from {src}" + (f"; result {_x(out_shape)}" if out_shape else "") + ".", refs.TTNG_OPS)
    if op == "ttng.fence_async_shared":
        return ("op", "async proxy fence",
                "Makes earlier ordinary shared-memory writes visible to the async proxy (wgmma, TMA) "
                "before it reads them (fence.proxy.async).", refs.TTNG_OPS)
    if op.startswith("ttng.async_tma_copy_global_to_local"):
        return ("op", "TMA load", "Tensor Memory Accelerator copy global → shared, described by a tensor map "
                "and completed through an mbarrier (cp.async.bulk.tensor).", refs.TTNG_OPS)
    if op.startswith("ttng.async_tma_copy_local_to_global"):
        return ("op", "TMA store", "Tensor Memory Accelerator copy shared → global (cp.async.bulk.tensor).",
                refs.TTNG_OPS)
    if op in ("ttng.init_barrier", "ttng.wait_barrier", "ttng.barrier_expect", "ttng.arrive_barrier",
              "ttng.inval_barrier"):
        what = {"ttng.init_barrier": "initializes", "ttng.wait_barrier": "waits on",
                "ttng.barrier_expect": "sets the expected transaction bytes of",
                "ttng.arrive_barrier": "arrives on", "ttng.inval_barrier": "invalidates"}[op]
        return ("op", op.split(".")[1].replace("_", " "),
                f"{what.capitalize()} an mbarrier in shared memory (used to track async copies such as TMA).",
                refs.TTNG_OPS)
    if op in ("gpu.barrier", "ttg.barrier"):
        return ("op", "CTA barrier", "All threads of the CTA wait here (bar.sync).", refs.TTG_OPS)
    return None
