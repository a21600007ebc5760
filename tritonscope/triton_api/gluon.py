"""Layouts and bank conflicts from Triton itself (gluon), in a child process: the cross-check for layouts."""

from __future__ import annotations

import contextlib
import os
from typing import Any
from tritonscope.triton_api.env import quiet_known_warnings, triton_series, triton_version

# Layouts from Triton itself (the cross-check for layouts.py)
#
# Triton's gluon builder converts a layout to its linear layout.  It runs in a
# child process (child.run_in_child): in 3.6 converting a shared layout aborts
# the process, and a bad layout can kill it, so a crash must not take
# tritonscope down with it.
# ==========================================================================


def linear_layouts_from_triton(items: list[dict[str, Any]], *, timeout: float = 120) -> list[dict[str, Any]]:
    """Triton's own linear layouts for [{"spec": layouts.triton_spec(enc), "shape": [..]}].

    Each result is {"bases": {...}} or {"skipped": why} or {"error": what}.
    All items run in one child process; if it dies, each item is retried
    alone so that one crashing layout only loses its own answer.
    """
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tritonscope-layouts-") as tmp:
        # attribute-text specs are parsed from files written here: a child that aborts cannot leave them behind
        items = [{**it, "spec": {**it["spec"], "dir": tmp}} if it["spec"].get("kind") == "text" else it
                 for it in items]
        return _linear_layouts_batches(items, timeout)


def _linear_layouts_batches(items: list[dict[str, Any]], timeout: float) -> list[dict[str, Any]]:
    from tritonscope.core.child import ChildDiedError, run_in_child

    def run(batch):
        return run_in_child("tritonscope.triton_api:_linear_layouts_child", batch,
                            what="Triton's layout conversion", timeout=timeout)

    try:
        return run(items)
    except ChildDiedError:
        if len(items) == 1:
            raise
    results = []
    for item in items:
        try:
            results.append(run([item])[0])
        except ChildDiedError as e:
            tail = " | ".join((e.context or "").strip().splitlines()[-3:])
            results.append({"error": f"{e.message} {tail}".strip()})
    return results


def _linear_layouts_child(specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """In the child process: the linear layout of each spec, or why not."""
    import triton.experimental.gluon.language._layouts as L
    from triton._C.libtriton import gluon_ir, ir

    shared_ok = (triton_series() or (0, 0)) >= (3, 9)
    ctx = ir.context()
    ir.load_dialects(ctx)
    builder = gluon_ir.GluonOpBuilder(ctx)

    def build(s, rank):
        k = s["kind"]
        if k == "blocked":
            return L.BlockedLayout(s["spt"], s["tpw"], s["wpc"], s["order"])
        if k == "slice":
            return L.SliceLayout(s["dim"], build(s["parent"], rank + 1))
        if k == "mma":
            return L.NVMMADistributedLayout(s["version"], s["wpc"], s["instr"])
        if k == "dot_op":
            return L.DotOperandLayout(s["op"], build(s["parent"], rank), s["k_width"])
        if k == "swizzled":
            return L.SwizzledSharedLayout(s["vec"], s["per_phase"], s["max_phase"], s["order"])
        if k == "nvmma_shared":
            return L.NVMMASharedLayout(s["swizzle"], s["bits"], rank, s["transposed"])
        raise ValueError("unknown layout kind " + k)

    out: list[dict[str, Any]] = []
    for item in specs:
        spec, shape = item["spec"], item["shape"]
        if spec["kind"] == "text":
            out.append(_layout_from_text(builder, ctx, spec, shape, shared_ok))
            continue
        if spec["kind"] in ("swizzled", "nvmma_shared") and not shared_ok:
            out.append({"skipped": f"Triton {triton_version()} cannot convert shared layouts "
                                   "(it aborts the process); 3.9 can"})
            continue
        try:
            ll = builder.to_linear_layout(build(spec, len(shape))._to_ir(builder), list(shape))
        except Exception as e:
            out.append({"error": f"{type(e).__name__}: {e}"})
            continue
        if hasattr(ll, "offset_bases"):
            out.append({"bases": {"offset": ll.offset_bases}, "block": ll.block_bases})
        else:
            out.append({"bases": {"register": ll.reg_bases, "lane": ll.lane_bases, "warp": ll.warp_bases},
                        "block": ll.block_bases})
    return out


def _layout_from_text(builder, ctx, spec: dict[str, Any], shape: list[int], shared_ok: bool) -> dict[str, Any]:
    """Triton's own reading of an attribute string: parse it in a one-function module, convert.

    The attribute goes through Triton's MLIR parser and verifier (so a string
    Triton would reject says so), then through its gluon layout object, whose
    conversion is the one tritonscope's layouts must equal.  Tensor layouts
    also report getTotalElemsPerThread.  Padded shared layouts have no linear
    layout in Triton (the conversion aborts the process): their offset bases
    and padding, as Triton parsed them, are compared instead.
    """
    import os
    import tempfile

    from triton._C.libtriton import ir

    memdesc = spec.get("memdesc", False)
    if memdesc and not shared_ok:
        return {"skipped": f"Triton {triton_version()} cannot convert memory layouts (it aborts the process); 3.9 can"}
    if not shared_ok and "ctaLayout" in spec["text"]:
        return {"skipped": f"Triton {triton_version()} parses a WMMA ctaLayout but aborts converting it"}
    dims = "x".join(str(s) for s in shape)
    elem = spec.get("elem", "f16")
    space = spec.get("space", "#ttg.shared_memory")
    typ = f"!ttg.memdesc<{dims}x{elem}, #enc, {space}>" if memdesc else f"tensor<{dims}x{elem}, #enc>"
    text = (f"#enc = {spec['text']}\n"
            f'module attributes {{"ttg.num-warps" = 4 : i32, "ttg.num-ctas" = 1 : i32, '
            f'"ttg.threads-per-warp" = 32 : i32}} {{\n'
            f"  tt.func @f(%a: {typ}) {{ tt.return }}\n}}\n")
    fd, path = tempfile.mkstemp(suffix=".mlir", prefix="tritonscope-layout-", dir=spec.get("dir"))
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        try:
            module = ir.parse_mlir_module(path, ctx)
        except Exception as e:
            return {"rejected": f"Triton does not parse it: {type(e).__name__}: {e}"}
    finally:
        os.unlink(path)
    arg = module.get_function("f").args(0)
    try:
        layout = builder.get_gluon_layout_from_memdesc(arg) if memdesc else builder.get_gluon_layout_from_tensor(arg)
    except Exception as e:
        return {"error": f"no gluon layout: {type(e).__name__}: {e}"}
    kind = type(layout).__name__
    if kind == "PaddedSharedLayout":
        return {"bases": {"offset": [list(b) for b in layout.offset_bases]},
                "padding": [list(p) for p in layout.interval_padding_pairs], "kind": kind}
    try:
        ll = builder.to_linear_layout(layout._to_ir(builder), list(shape))
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"}
    res: dict[str, Any] = {"kind": kind}
    if hasattr(ll, "offset_bases"):
        res["bases"] = {"offset": ll.offset_bases, "block": ll.block_bases}
    elif hasattr(ll, "rows"):
        res["bases"] = {"row": ll.rows, "col": ll.cols}
    else:
        res["bases"] = {"register": ll.reg_bases, "lane": ll.lane_bases, "warp": ll.warp_bases,
                        "block": ll.block_bases}
        if hasattr(builder, "get_total_elems_per_thread"):
            res["elems_per_thread"] = builder.get_total_elems_per_thread(arg.get_type())
    return res


# ==========================================================================


def bank_conflicts_from_triton(items: list[dict[str, Any]], *, timeout: float = 120) -> list[int | None] | None:
    """Triton's count for [{"register", "shared", "shape", "elem", "num_warps", "capability"}]; None when this
    Triton has no gluon bank_conflicts or its process died."""
    from tritonscope.core.child import ChildDiedError, run_in_child

    if (triton_series() or (0, 0)) < (3, 9):  # 3.6's gluon cannot read shared layouts back (it aborts)
        return None
    known = [_banks_kept(item) for item in items]
    ask = [item for item, k in zip(items, known) if k is _MISSING]
    if ask:
        try:
            # the count is printed while the probe compiles: a cache hit would print nothing
            answers = run_in_child("tritonscope.triton_api:_bank_conflicts_child", ask,
                                   what="Triton's bank-conflict count", timeout=timeout,
                                   env={**os.environ, "TRITON_ALWAYS_COMPILE": "1"})
        except ChildDiedError:
            return None
        if not isinstance(answers, list) or len(answers) != len(ask):
            return None
        for item, count in zip(ask, answers):
            _keep_banks(item, count)
        got = iter(answers)
        known = [next(got) if k is _MISSING else k for k in known]
    return known


# Triton's answer for one item is kept in tritonscope's cache (derived/banks-<key>.json, keyed by the
# item and this Triton's version): asking costs a child process that imports Triton (about a second),
# and `explain` of the same kernel asks the same items every time.
_MISSING = object()


def _banks_path(item: dict[str, Any]):
    import hashlib
    import json

    from tritonscope.core.env import cache_dir

    key = json.dumps({"triton": triton_version(), "item": item}, sort_keys=True, default=str)
    return cache_dir() / "derived" / f"banks-{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"


def _banks_kept(item: dict[str, Any]):
    """The kept count (an int, or None where Triton refused the pair), else _MISSING."""
    from tritonscope.core.cache_prune import load_entry, touch

    path = _banks_path(item)
    entry = load_entry(path)
    if not (isinstance(entry, dict) and "banks" in entry):
        return _MISSING
    count = entry["banks"]
    if count is not None and (type(count) is not int or count < 0):
        return _MISSING  # a damaged entry is a miss
    touch(path)
    return count


def _keep_banks(item: dict[str, Any], count) -> None:
    import json

    from tritonscope.core.output import write_cache

    if count is None or (type(count) is int and count >= 0):
        write_cache(_banks_path(item), json.dumps({"banks": count}))  # an optimisation only: failures pass


def _bank_conflicts_child(items: list[dict[str, Any]]) -> list[int | None]:
    """In the child: gluon's bank_conflicts for each item (None where Triton refuses the pair)."""
    import io
    import re
    import tempfile

    import triton
    import triton.experimental.gluon as gluon
    import triton.experimental.gluon.language as ttgl
    from triton._C.libtriton import gluon_ir, ir
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    quiet_known_warnings()
    globals()["_ttgl"] = ttgl  # the probe's global name (this process only)

    @gluon.jit
    def _probe(reg_type: _ttgl.constexpr, shared_type: _ttgl.constexpr):  # noqa: F821
        c: _ttgl.constexpr = _ttgl.bank_conflicts(reg_type, shared_type)  # noqa: F821
        _ttgl.static_print("@@BANKS", c)  # noqa: F821

    ctx = ir.context()
    ir.load_dialects(ctx)
    builder = gluon_ir.GluonOpBuilder(ctx)
    dtypes = {"f16": ttgl.float16, "bf16": ttgl.bfloat16, "f32": ttgl.float32, "i8": ttgl.int8,
              "i32": ttgl.int32, "i16": ttgl.int16, "f64": ttgl.float64, "f8E4M3FN": ttgl.float8e4nv,
              "f8E5M2": ttgl.float8e5}
    out: list[int | None] = []
    for item in items:
        dims = "x".join(str(d) for d in item["shape"])
        elem = item["elem"]
        text = (f"#d = {item['register']}\n#s = {item['shared']}\n"
                f'module attributes {{"ttg.num-warps" = {item["num_warps"]} : i32, "ttg.num-ctas" = 1 : i32, '
                f'"ttg.threads-per-warp" = 32 : i32}} {{\n'
                f"  tt.func @f(%a: tensor<{dims}x{elem}, #d>, %b: !ttg.memdesc<{dims}x{elem}, #s, "
                f"#ttg.shared_memory>) {{ tt.return }}\n}}\n")
        try:
            with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
                f.write(text)
                f.flush()
                module = ir.parse_mlir_module(f.name, ctx)
            fn = module.get_function("f")
            reg = builder.get_gluon_layout_from_tensor(fn.args(0))
            shared = builder.get_gluon_layout_from_memdesc(fn.args(1))
            dtype = dtypes[elem]
            reg_ty = ttgl.distributed_type(dtype, list(item["shape"]), reg)
            shared_ty = ttgl.shared_memory_descriptor_type(dtype, list(item["shape"]), shared, list(item["shape"]))
            src = GluonASTSource(_probe, signature={"reg_type": "constexpr", "shared_type": "constexpr"},
                                 constexprs={(0,): reg_ty, (1,): shared_ty})
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                triton.compile(src, target=GPUTarget("cuda", int(item.get("capability", 90)), 32),
                               options={"num_warps": int(item["num_warps"])})
            m = re.search(r"@@BANKS\s+(-?\d+)", printed.getvalue())
            out.append(int(m.group(1)) if m else None)
        except Exception:
            out.append(None)
    return out


# --------------------------------------------------------------------------
# Version quirks for other Tritons run as a side (tritonscope/versions): added for `versions`
# --------------------------------------------------------------------------

# Triton 3.4's AMD backend links the hsaco with an external ld.lld, which its wheel
# lacks: it looks for TRITON_HIP_LLD_PATH, then /opt/rocm/llvm/bin/ld.lld.  3.6 and
# newer link in-process.  versions/lld.py gives a 3.4 environment one.
