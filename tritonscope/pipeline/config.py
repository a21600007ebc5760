"""Request -> the same record, checked: every value checked and the arch resolved once.

Why: a kernels.Request keeps the user's words (`--arch H100`, `--arch 90`), and each
step that needed the target used to canonicalise them again.  `resolve` checks a
request once, right after the command line (or the Python API) is read: its values
are checked, the arch is canonical and never None (--arch, else the local GPU's,
else model.DEFAULT_ARCH), and a launch option the target cannot take is refused.
It returns the same record with `checked` set; everything downstream (binding, the
result cache, children, fix checks) reads that and nothing else.

`Config` is the name the pipeline gives a checked Request: one record, not two
(issue 32).  `asdict(config)` is what a child process rebuilds it from
(`Config(**payload)`).
"""

from __future__ import annotations

from dataclasses import fields, replace

from tritonscope.inputs.kernels import LAUNCH_FIELDS, LAUNCH_OPTIONS, Request

# A checked Request (resolve() made it): its arch is a key of model.ARCHES.
Config = Request

__all__ = ["Config", "LAUNCH_FIELDS", "LAUNCH_OPTIONS", "check_options_for_arch", "local_arch", "resolve",
           "with_grid"]


def local_arch() -> str:
    """The local GPU's arch when tritonscope knows it, else model.DEFAULT_ARCH (asks no GPU when Triton has none)."""
    from tritonscope import triton_api
    from tritonscope.core.model import DEFAULT_ARCH, arch_for_capability

    cap = triton_api.local_gpu_capability()
    found = arch_for_capability(cap) if cap else None
    return found.name if found else DEFAULT_ARCH


def resolve(request, default_arch: str | None = None) -> Config:
    """A kernels.Request (or a Config) -> its Config: every value checked (exit 2; 3 for an unknown arch), the arch
    canonicalised once, else `default_arch`, else the local GPU's; a launch option the arch cannot take refused."""
    from tritonscope.inputs.kernels import check_launch_options, checked_arch

    if getattr(request, "checked", False) and request.arch:
        return request
    # every value checked; the arch canonicalised, here only (an empty or unknown --arch fails here)
    arch = checked_arch(request) or default_arch or local_arch()
    check_options_for_arch(request.options, arch)
    values = {f.name: getattr(request, f.name, None) for f in fields(Request)}
    if values["grid"] is not None:
        from tritonscope.inputs.grid import parse_grid

        parse_grid(values["grid"])  # a bad --grid: exit 2 here, before any file is loaded
    return Request(**{**values, "arch": arch, "options": check_launch_options(request.options), "checked": True})


def with_grid(request, grid: str | None):
    """The request with --grid's text (checked: a bad expression is exit 2 now, before any compile)."""
    if grid is None:
        return request
    from tritonscope.inputs.grid import parse_grid

    parse_grid(grid)
    return replace(request, grid=grid)


def check_options_for_arch(options: dict | None, arch: str) -> None:
    """Refuse (exit 2, before any compile) a launch option the target cannot take, as its launch would.

    maxnreg is ptxas's register limit: Triton's HIP backend has no such
    option, and a launch that passes it on an AMD GPU fails.  num_ctas > 1
    is a thread-block cluster, which Triton's CUDA backend refuses below
    sm_90.  (Whether an AMD target takes num_ctas > 1 is the HIP backend's
    own check, made when it compiles.)  `arch` is canonical.
    """
    from tritonscope.core.errors import UsageError
    from tritonscope.core.model import ARCHES
    from tritonscope.core.words import field_data, said

    options = options or {}
    target = ARCHES[arch]
    if target.backend == "hip" and options.get("maxnreg") is not None:
        raise UsageError(f"{said('options', key='maxnreg')} is a CUDA launch option (ptxas's register limit); "
                         f"Triton's HIP backend has no such option, and a launch with maxnreg= on {target.name} fails.",
                         hint=f"Leave {said('options', key='maxnreg')} out for AMD targets.",
                         data=field_data("options", options["maxnreg"], key="maxnreg"))
    if target.backend == "cuda" and (options.get("num_ctas") or 1) > 1 and target.capability < 90:
        raise UsageError(f"{said('options', options['num_ctas'], key='num_ctas')} makes a thread-block cluster, "
                         f"which needs sm_90 or newer; Triton refuses it for {target.name}.",
                         hint=f"Use {said('options', 1, key='num_ctas')} (the default) on this target, or target "
                              "sm_90a or newer.", data=field_data("options", options["num_ctas"], key="num_ctas"))
