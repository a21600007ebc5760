"""PTX notes: async copies, ldmatrix, mma/wgmma, TMA, barriers, vector loads/stores."""

from __future__ import annotations

import re

from tritonscope.annotate import refs
from tritonscope.model import Note, ParsedStage

# @%p1 cp.async.ca.shared.global [ %r21 + 0 ], [ %rd5 + 0 ], 0x4, %r22;
_INSTR = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.:]*)")
# cp.async.ca.shared.global [ %r21 + 0 ], [ %rd5 + 0 ], 0x4, %r22;
_CP_ASYNC = re.compile(r"cp\.async\.(ca|cg)\.shared(?:::cta)?\.global\S*\s+\[[^\]]*\],\s*\[[^\]]*\],\s*(0x[0-9a-f]+|\d+)(\s*,\s*%\w+)?")
# ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
_LDMATRIX = re.compile(r"ldmatrix\.sync\.aligned\.(m\d+n\d+)\.x(\d)(\.trans)?\.shared(?:::cta)?\.(\w+)")
# stmatrix.sync.aligned.m8n8.x4.trans.shared.b16
_STMATRIX = re.compile(r"stmatrix\.sync\.aligned\.(m\d+n\d+)\.x(\d)(\.trans)?\.shared(?:::cta)?\.(\w+)")
# mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
_MMA = re.compile(r"mma\.sync\.aligned\.m(\d+)n(\d+)k(\d+)\.(row|col)\.(row|col)((?:\.\w+){2,4})")
# wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {...}, %rd77, %rd78, ...
_WGMMA = re.compile(r"wgmma\.mma_async(?:\.sp)?\.sync\.aligned\.m(\d+)n(\d+)k(\d+)((?:\.\w+)+)\s+\{[^}]*\},\s*(\{|%)")
# ld.global.v4.b32 / st.shared.v2.f32 / ld.global.nc.L1::evict_last.v4.b32
_LDST = re.compile(r"\b(ld|st)\.(global|shared)(?:::cta)?((?:\.[\w:]+)*?)\.(?:(v\d)\.)?([busf]\d+)\b")
_BITS = re.compile(r"\d+")


def annotate(stage: ParsedStage) -> list[Note]:
    notes = []
    for line in stage.lines:
        t = line.text
        if not t or t.lstrip().startswith(("//", ".")):
            continue
        m = _INSTR.match(t)
        if not m:
            continue
        try:
            got = _note(m.group(1), t)
        except Exception:
            got = None
        if got:
            notes.append(Note(stage.key, line.number, *got))
    return notes


def _note(op: str, t: str):
    if op.startswith("cp.async.") and not op.startswith("cp.async.bulk"):
        if op.startswith("cp.async.commit_group"):
            return ("instruction", "commit group",
                    "cp.async.commit_group: the cp.async copies issued so far by this thread form one group.",
                    refs.CP_ASYNC_COMMIT)
        if op.startswith("cp.async.wait_group"):
            n = re.search(r"wait_group\s+(\d+)", t)
            return ("instruction", f"wait ≤{n.group(1)} groups" if n else "wait group",
                    (f"cp.async.wait_group {n.group(1)}: waits until at most {n.group(1)} of this thread's most recent "
                     f"copy groups are pending" + (" (all copies done)." if n.group(1) == "0" else ".")) if n else
                    "cp.async.wait_group: waits for earlier copy groups.", refs.CP_ASYNC_WAIT)
        if op.startswith("cp.async.wait_all"):
            return ("instruction", "wait all", "cp.async.wait_all: waits for every pending copy.", refs.CP_ASYNC_WAIT)
        c = _CP_ASYNC.search(t)
        if c:
            size = int(c.group(2), 0)
            level = {"ca": "cache in L1 and L2 (.ca)", "cg": "cache in L2 only, bypassing L1 (.cg)"}[c.group(1)]
            text = (f"Asynchronous copy of {size} bytes global → shared by each thread, without using registers; "
                    f"{level}.")
            if c.group(3):
                text += (" The last operand is the source size: fewer (0) bytes are read for masked-off elements "
                         "and the rest is zero-filled.")
            return ("instruction", f"cp.async.{c.group(1)} {size}B", text, refs.CP_ASYNC)
        return None
    if op.startswith("ldmatrix."):
        m = _LDMATRIX.search(t)
        if not m:
            return None
        n, trans = int(m.group(2)), bool(m.group(3))
        text = (f"Warp-wide load of {n} {m.group(1)[1:].replace('n', 'x')} matrices of 16-bit elements from shared "
                f"memory (= {n * 64} elements, {n * 128} bytes); each thread receives {n} 32-bit register(s) in the "
                f"fragment layout of the warp-level mma instructions.")
        if n == 4:
            text += " Four 8x8 matrices make one 16x16 16-bit tile."
        if trans:
            text += " .trans transposes each 8x8 matrix while loading."
        return ("instruction", f"ldmatrix x{n}{' .trans' if trans else ''}", text, refs.LDMATRIX)
    if op.startswith("stmatrix."):
        m = _STMATRIX.search(t)
        if not m:
            return None
        n = int(m.group(2))
        return ("instruction", f"stmatrix x{n}{' .trans' if m.group(3) else ''}",
                f"Warp-wide store of {n} 8x8 16-bit matrices from registers to shared memory (the reverse of ldmatrix).",
                refs.STMATRIX)
    if op.startswith("mma.sync."):
        m = _MMA.search(t)
        if not m:
            return None
        mm, nn, kk = m.group(1), m.group(2), m.group(3)
        types = m.group(6).strip(".").split(".")
        d, a, b = (types + [None] * 3)[:3]
        return ("instruction", f"mma m{mm}n{nn}k{kk} {a}→{d}",
                f"One warp multiplies A[{mm}x{kk}] ({a}, {m.group(4)}-major fragment) by B[{kk}x{nn}] ({b}, "
                f"{m.group(5)}-major) and adds C into D[{mm}x{nn}] ({d}) on the tensor cores.", refs.MMA)
    if op.startswith("wgmma."):
        if op.startswith("wgmma.fence"):
            return ("instruction", "wgmma fence", "Orders register/shared accesses before the next wgmma reads them.",
                    refs.WGMMA_FENCE)
        if op.startswith("wgmma.commit_group"):
            return ("instruction", "wgmma commit", "Groups the wgmma operations issued so far so they can be waited on.",
                    refs.WGMMA_COMMIT)
        if op.startswith("wgmma.wait_group"):
            n = re.search(r"wait_group\.sync\.aligned\s+(\d+)", t)
            return ("instruction", f"wgmma wait ≤{n.group(1)}" if n else "wgmma wait",
                    f"Waits until at most {n.group(1)} wgmma groups are pending." if n else "Waits for wgmma groups.",
                    refs.WGMMA_WAIT)
        m = _WGMMA.search(t)
        if not m:
            return None
        mm, nn, kk = m.group(1), m.group(2), m.group(3)
        types = m.group(4).strip(".").split(".")
        a_src = "registers" if m.group(5) == "{" else "shared memory (descriptor)"
        return ("instruction", f"wgmma m{mm}n{nn}k{kk}",
                f"A warpgroup (4 warps, 128 threads) asynchronously computes D[{mm}x{nn}] ({types[0]}) += "
                f"A[{mm}x{kk}] x B[{kk}x{nn}] ({'/'.join(types[1:3])}); A from {a_src}, B from shared memory "
                f"(descriptor).", refs.WGMMA)
    if op.startswith("cp.async.bulk.tensor"):
        dims = re.search(r"\.(\d)d\.", op)
        direction = "global → shared" if ".shared" in op.split(".global")[0] else "shared → global"
        return ("instruction", "TMA copy", f"Tensor Memory Accelerator bulk copy of a {dims.group(1) + '-D ' if dims else ''}"
                f"tile {direction}, addressed by a tensor map; completion is tracked by an mbarrier.",
                refs.CP_ASYNC_BULK_TENSOR)
    if op.startswith("mbarrier."):
        what = op.split(".")[1]
        return ("instruction", f"mbarrier {what}",
                f"mbarrier.{what}: an operation on a shared-memory barrier object (used to wait for async copies).",
                refs.MBARRIER)
    if op.startswith(("bar.sync", "barrier.sync", "bar.warp.sync")):
        if op.startswith("bar.warp"):
            return ("instruction", "warp barrier", "Synchronizes the threads of a warp.", refs.BAR)
        return ("instruction", "CTA barrier",
                "bar.sync: every thread of the CTA waits here (like __syncthreads), e.g. before reusing shared memory.",
                refs.BAR)
    if op.startswith("fence.proxy.async"):
        return ("instruction", "async proxy fence",
                "Makes ordinary (generic proxy) shared-memory writes visible to async-proxy readers such as wgmma "
                "and TMA.", refs.FENCE)
    if op.startswith(("ld.global", "st.global", "ld.shared", "st.shared")):
        m = _LDST.search(t)
        if not m:
            return None
        kind, space, vec, bits = m.group(1), m.group(2), m.group(4), int(m.group(5)[1:])
        n = int(vec[1:]) if vec else 1
        width = f"v{n} x {bits}-bit" if vec else f"scalar {bits}-bit"
        return ("instruction", f"{space} {'load' if kind == 'ld' else 'store'} {vec or 'scalar'}",
                f"{'Load from' if kind == 'ld' else 'Store to'} {space} memory, {width} = {n * bits // 8} bytes per "
                f"thread" + (" (vectorized)." if vec else "."), refs.LD if kind == "ld" else refs.ST)
    return None
