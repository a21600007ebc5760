"""Verdicts: global access width, and bank conflicts of shared loads and stores."""

from __future__ import annotations

import copy
import functools

from typing import Any

from tritonscope.language.mlir_syntax import ORDER_FIRST, alias_table
from tritonscope.analyses.explain.model import Verdict
from tritonscope.analyses.explain.ttgir import Op, _CONTIG_RE, _pointee_bits, _prod, ttgir_ops
from tritonscope.analyses.explain.verdicts import _Ctx, _ev, _lines, _py_ev

# -------------------------------------------------------------- global access width


def _global_widths(analysis) -> dict[int, dict[str, list[int]]]:
    """Python line -> {"load": [bits...], "store": [...]} of its PTX global accesses (cp.async counts as a load)."""
    from tritonscope.language.dialects import instructions

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
    from tritonscope.language.dialects import instructions

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
    m = ORDER_FIRST.search(text)
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
    from tritonscope.language.mlir_syntax import expand_aliases

    if encoding.startswith("#") and encoding[1:] in aliases:
        return expand_aliases(aliases[encoding[1:]], aliases)
    return expand_aliases(encoding, aliases)


def bank_conflicts(register_layout: str, shared_layout: str, shape: list[int], bits: int,
                   max_vector: int | None = None) -> dict[str, Any] | None:
    """bank_conflicts of these layouts, computed once per process for the same arguments (a sweep's
    configs share their layouts often; the answer depends on nothing else)."""
    found = _bank_conflicts_once(register_layout, shared_layout, tuple(shape), bits, max_vector)
    return copy.deepcopy(found)


@functools.lru_cache(maxsize=256)
def _bank_conflicts_once(register_layout: str, shared_layout: str, shape: tuple[int, ...], bits: int,
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
    from tritonscope.language import layouts as L

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
    from tritonscope.language import layouts as L

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
    from tritonscope.core.model import ARCHES

    a = ARCHES.get(arch)
    return a.capability if a else 90
