"""Recompiling a kernel that already compiled: from its TTIR, or its captured Python function."""

from __future__ import annotations

import os
from typing import Any
from tritonscope.triton_api.env import _lock, quiet_known_warnings
from tritonscope.triton_api.jit import _json_safe
from tritonscope.triton_api.key import _install_key
from tritonscope.triton_api.standins import Compiled, _diagnosed, gpu_target

# Recompiling a kernel that already compiled (sources.py / `open --recompile`)
#
# A cache entry keeps `<name>.source`: the TTIR that `make_ir` produced from
# the Python function with the launch's specialization (divisibility,
# constexprs folded in), before any pass.  Running the backend's stages on it
# from "ttir" on is what `triton.compile` does after `make_ir`, so the result
# is the kernel that launch would give on another target.  (`triton.compile`
# of an IR *file* would skip the TTIR passes: it treats the file as already
# optimised.)  Without `.source`, the optimised `.ttir` is used: its passes
# run again, which leaves it as it is for the kernels we have checked.
# ==========================================================================


def compile_from_ttir(ttir_text: str, *, capability: int | None, num_warps: int, num_stages: int,
                      options: dict[str, Any] | None = None, target: tuple[str, Any, int] | None = None) -> Compiled:
    """Run Triton's pipeline (ttir passes onwards) on TTIR text for `capability` (or `target`, e.g.
    ("hip", "gfx942", 64), for the HIP backend's pipeline); no GPU needed."""
    import hashlib
    import tempfile
    from pathlib import Path

    from triton import __version__ as version
    from triton._C.libtriton import ir
    from triton.compiler import make_backend

    quiet_known_warnings()
    target = gpu_target(capability, target)
    backend = make_backend(target)
    opts = backend.parse_options({"num_warps": num_warps, "num_stages": num_stages, **(options or {})})
    import inspect

    language_args: tuple = ()
    if len(inspect.signature(backend.add_stages).parameters) >= 3:  # add_stages(stages, options, language)
        from triton.backends.compiler import Language

        language_args = (Language.TRITON,)
    seen: dict[str, Any] = {}
    with _lock, tempfile.TemporaryDirectory(prefix="tritonscope-ir-") as tmp, _diagnosed(seen):
        path = Path(tmp) / "kernel.ttir"
        path.write_text(ttir_text)
        context = ir.context()
        ir.load_dialects(context)
        backend.load_dialects(context)
        module = ir.parse_mlir_module(str(path), context)
        module.context = context
        stages: dict[str, Any] = {}
        backend.add_stages(stages, opts, *language_args)
        key = hashlib.sha256(f"{ttir_text}-{target}-{sorted(opts.__dict__.items(), key=str)}".encode()).hexdigest()
        metadata: dict[str, Any] = {"hash": key, "target": target, **opts.__dict__, "triton_version": version}
        asm: dict[str, Any] = {}
        for ext, step in stages.items():
            module = step(module, metadata)
            asm[ext] = module if isinstance(module, (str, bytes)) else str(module)
    metadata["target"] = {"backend": target.backend, "arch": target.arch, "warp_size": target.warp_size}
    return Compiled(asm=asm, metadata=_json_safe(metadata), kernel_hash=key, remarks=seen.get("remarks", []),
                    cache_hit=False)


def compile_ast(jit_fn, signature: dict[str, str], constants: dict[tuple, Any], attrs: dict[tuple, Any], *,
                capability: int | None, num_warps: int, num_stages: int, options: dict[str, Any] | None = None,
                target: tuple[str, Any, int] | None = None) -> Compiled:
    """triton.compile(ASTSource(...)) for `capability` (or an AMD `target`) with a recorded specialization."""
    import triton
    from triton.compiler import ASTSource

    quiet_known_warnings()
    _install_key()
    constants = {k: (_dtype_of(v) if isinstance(v, str) and signature.get(_name_at(jit_fn, k)) == "constexpr"
                     and _is_dtype_name(v) else v) for k, v in constants.items()}
    src = ASTSource(fn=jit_fn, signature=signature, constexprs=constants, attrs=attrs)
    target = gpu_target(capability, target)
    seen: dict[str, Any] = {}
    with _lock, _diagnosed(seen):
        kernel = triton.compile(src, target=target,
                                options={"num_warps": num_warps, "num_stages": num_stages, **(options or {})})
    meta = kernel.metadata
    meta_dict = meta._asdict() if hasattr(meta, "_asdict") else dict(vars(meta))
    return Compiled(asm=dict(kernel.asm), metadata=_json_safe(meta_dict), kernel_hash=str(meta_dict.get("hash", "")),
                    remarks=seen.get("remarks", []), cache_hit=seen.get("cache_hit"))


def _name_at(jit_fn, path: tuple) -> str:
    try:
        return jit_fn.arg_names[path[0]]
    except Exception:
        return ""


def _is_dtype_name(text: str) -> bool:
    import triton.language as tl

    return isinstance(getattr(tl, text, None), tl.dtype)


def _dtype_of(text: str):
    import triton.language as tl

    return getattr(tl, text)


def cache_folder(kernel_hash: str) -> str:
    """The folder of Triton's cache that holds a compile: cache.py's `_base32(hash)` ("" for a hash that is
    not hex)."""
    import base64

    try:
        return base64.b32encode(bytes.fromhex(kernel_hash)).decode().rstrip("=")
    except ValueError:
        return ""


def cached_stage_file(kernel_hash: str, name: str, ext: str) -> bytes | None:
    """A file Triton's own cache holds for a compile (`<cache>/<base32 hash>/<name>.<ext>`), else None.

    The folder name is cache.py's `_base32(hash)`; used by `compile --emit`
    for the cubin, which the Artifact does not keep.
    """
    from pathlib import Path

    try:
        from tritonscope.triton_api.env import knobs_module

        knobs = knobs_module()
        if knobs is not None:
            cache = knobs.cache.dir
        else:  # 3.2/3.3: TRITON_CACHE_DIR, else ~/.triton/cache
            from triton.runtime.cache import default_cache_dir

            cache = os.environ.get("TRITON_CACHE_DIR") or default_cache_dir()
        folder = cache_folder(kernel_hash)
        return (Path(cache) / folder / f"{name}.{ext}").read_bytes() if folder else None
    except Exception:
        return None


# ==========================================================================
