"""A bound launch (Loaded) -> Artifact: one real Triton compile, with its stages, remarks and resources.

The compile itself is Triton's (see the triton_api package); this module asks
for it again when Triton's cache answered with another file's kernel or
without remarks, and adds what Triton does not give as text: the Python
source with its file line numbers, the SASS and the resource usage (the
bundled tools on the cubin, triton_api/cubin.py; for AMD targets, the hsaco's
metadata, inputs/codeobject.py).  Triton's exceptions become typed errors in
inputs/compile_errors.py; remarks kept across cache hits are
remarks_cache.py's.  Whether the config fits, and whether it spills, is
analyses/summary.py's.
"""

from __future__ import annotations

import inspect
import os
import time
from typing import Any, Callable

from tritonscope import triton_api
from tritonscope.core.errors import CompileError
from tritonscope.core.model import ARCHES, ArgSpecialization, Artifact
from tritonscope.inputs.codeobject import hip_resources
from tritonscope.inputs.compile_errors import compile_error
from tritonscope.inputs.kernels import Loaded, kernel_value, stand_in_args
from tritonscope.language.dialects import stages as dialect_stages
from tritonscope.language.mlir_syntax import KERNEL_FILE_LOC
from tritonscope.pipeline.remarks_cache import kept_remarks
from tritonscope.triton_api.cubin import cuda_resources, sass_and_resources


def launch_args(loaded: Loaded) -> dict[str, Any]:
    """Every parameter by name, as a keyword launch binds it: runtime arguments as stand-ins Triton's
    specializer accepts, constexprs as the kernel receives them (a dtype as triton.language's)."""
    spec = loaded.spec
    runtime = stand_in_args(spec.args)
    bound: dict[str, Any] = {}
    for name, is_const, _ in triton_api.kernel_params(loaded.jit_fn):
        if is_const:
            bound[name] = kernel_value(spec.constexprs[name])
        elif name in runtime:
            bound[name] = runtime[name]
    return bound


def compile_artifact(loaded: Loaded, *, remarks: bool = True, guard: bool = True,
                     meanwhile: Callable[[], None] | None = None, sass: bool = True) -> Artifact:
    """One compile of `loaded` for its arch, with Triton's remarks (see remarks_cache.kept_remarks).

    `meanwhile` runs while the SASS is disassembled (see sass_and_resources):
    the command line loads what it draws with there.

    `remarks=False` leaves Triton's stderr alone (the `passes` child reads it
    whole) and the Artifact's remarks empty.  `guard=False` skips the runaway
    guard (kernels.runaway_guard); `compile --timeout` does, as its compile
    runs in a child process that is stopped when time is up.  `sass=False`
    does not run nvdisasm (the SASS stage is there only when the SASS cache
    holds it already); the resource usage is read as always.
    """
    if guard:
        from tritonscope.pipeline.binding import runaway_guard

        runaway_guard(loaded)
    spec = loaded.spec
    collect = remarks
    arch = ARCHES[spec.arch]
    args = launch_args(loaded)
    started = time.perf_counter()
    compiled = _compile(loaded, args, arch, remarks=collect)
    if _cached_from_other_file(compiled.asm.get("ttir", ""), spec.file):
        # Triton's cache key ignores the file a kernel came from, so an identical
        # kernel compiled from another path comes back with that path in every
        # location.  Compile this one afresh so the stages name the user's file.
        compiled = _compile(loaded, args, arch, fresh=True, remarks=collect)
    remarks = kept_remarks(compiled, spec.file) if collect else []
    if remarks is None:
        # Triton's cache answered, so nothing was printed, and no remarks were
        # kept for this kernel: compile it once more to hear them.
        compiled = _compile(loaded, args, arch, fresh=True)
        remarks = kept_remarks(compiled, spec.file) or []
    seconds = time.perf_counter() - started

    specialization = [
        ArgSpecialization(name, ty, () if ty == "constexpr" else tuple(attrs),
                          spec.constexprs.get(name, spec.args.get(name)) if ty == "constexpr" else None)
        for name, ty, attrs in triton_api.specialization_of(loaded.jit_fn, args, **arch.target_words())
    ]

    lines, first = inspect.getsourcelines(triton_api.python_function(loaded.jit_fn))
    stages: dict[str, str] = {"python": "".join(lines)}
    # The texts Triton gives for every stage this backend has a dialect for (the derived
    # SASS is added below; binaries such as the cubin and the hsaco are no stage).
    for d in dialect_stages(arch.backend):
        if isinstance(compiled.asm.get(d.key), str):
            stages[d.key] = compiled.asm[d.key]
    warnings: list[str] = []
    if arch.backend == "hip":
        resources = hip_resources(compiled, warnings)
    else:
        sass_text, resources_text = sass_and_resources(compiled.asm.get("cubin"), warnings, meanwhile=meanwhile,
                                                       disassemble=sass)
        if sass_text is not None:
            stages["sass"] = sass_text
        resources = cuda_resources(resources_text, compiled.metadata)
    return Artifact(
        spec=spec,
        triton_version=triton_api.triton_version(),
        kernel_hash=compiled.kernel_hash,
        stages=stages,
        python_first_line=first,
        metadata={k: compiled.metadata[k] for k in sorted(compiled.metadata) if k not in ("hash",)},
        resources=resources,
        specialization=specialization,
        warnings=warnings,
        env=triton_api.codegen_env(),
        compile_seconds=seconds,
        remarks=remarks,
    )



def _cached_from_other_file(ttir: str, file: str) -> str | None:
    """The kernel file the IR's locations name, when it is not `file`."""
    m = KERNEL_FILE_LOC.search(ttir)
    if m and os.path.realpath(m.group(1)) != os.path.realpath(file):
        return m.group(1)
    return None


def _compile(loaded: Loaded, args, arch, fresh: bool = False, remarks: bool = True):
    spec = loaded.spec
    if arch.backend == "hip" and not triton_api.has_backend("amd"):
        raise CompileError(f"Triton {triton_api.triton_version()} has no HIP backend, so it cannot compile for "
                           f"{arch.name}.", hint="Install a Triton wheel that includes triton/backends/amd.")
    try:
        from tritonscope.core.model import TRITON_OPTIONS

        return triton_api.compile_kernel(
            loaded.jit_fn, args, **arch.target_words(),
            num_warps=spec.num_warps, num_stages=spec.num_stages, fresh=fresh, remarks=remarks,
            options={k: v for k, v in spec.options.items() if k in TRITON_OPTIONS},
        )
    except KeyboardInterrupt:
        raise
    except Exception as e:  # Triton raises many types; classify what we can
        raise compile_error(e, spec, loaded.jit_fn) from e
