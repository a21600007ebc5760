"""tritonscope explain: why a config is slow or does not fit, and what to change (checked by compiling)."""

from __future__ import annotations

import json
from typing import List, Optional

import typer

from tritonscope.commands import _common as c

SAVE_FORMATS = {".json": "json", ".txt": "text", ".md": "markdown", ".markdown": "markdown", ".html": "html",
                ".htm": "html"}

ShapesOpt = typer.Option(None, "--shape", metavar="MxNxK",
                         help="A problem shape (repeatable, e.g. --shape 4096x4096x4096): tiles against SMs, the "
                              "last wave, and the roofline time bound.  The first also sets the compiled shape "
                              "of a sample.")
GpuOpt = typer.Option(None, "--gpu", help="The part whose datasheet peaks and SM count bound the time "
                                          "(H100, H200, H100 PCIe, H100 NVL, A100, B200; default: the arch's "
                                          "reference part).")
NoCheckOpt = typer.Option(False, "--no-check-fixes", help="Do not compile candidate fixes (faster; fixes are then "
                                                           "suggestions, not checked).")


def shapes_for(request, shapes: list[str], default_arch: str):
    """explain.Shape for each --shape: its grid and arguments from the kernel's example launch (no compile)."""
    from dataclasses import replace

    from tritonscope.explain import Shape
    from tritonscope.kernels import build_spec, parse_shape

    out = []
    for text in shapes:
        loaded = build_spec(replace(request, shape=text), default_arch)
        spec = loaded.spec
        out.append(Shape(parse_shape(text), spec.grid, dict(spec.args), (loaded.launch or {}).get("flops")))
    return out


def run_explain(request, env, *, shapes: list[str], gpu: Optional[str], check_fixes: bool, progress: bool = True,
                triton_banks: bool = True):
    """Request -> (Analysis, Explanation): one compile, the verdicts, candidate compiles for the fixes."""
    from tritonscope import triton_api
    from tritonscope.analysis import analyze
    from tritonscope.explain import apply_change, explain

    artifact = c.compile_request(request, env, progress=progress)
    analysis = analyze(artifact)
    arch = artifact.spec.arch
    pinned = request if request.arch else _with_arch(request, arch)

    def recompile(change: dict):
        import contextlib
        import io

        # a candidate Triton rejects (ptxas out of registers...) prints its own report: keep it out of ours
        with contextlib.redirect_stdout(io.StringIO()):
            return analyze(c.compile_request(apply_change(pinned, change), env, progress=False))

    cubin = triton_api.cached_stage_file(artifact.kernel_hash, artifact.spec.kernel, "cubin")
    problem = shapes_for(pinned, shapes, arch) if shapes else []
    err = env.console(stderr=True)
    work = lambda: explain(analysis, recompile=recompile if check_fixes else None, shapes=problem, gpu=gpu,  # noqa: E731
                           cubin=cubin, triton_banks=triton_banks)
    if progress and err.is_terminal:
        with err.status("checking what would help (compiling candidate fixes)..."):
            return analysis, work()
    return analysis, work()


def _with_arch(request, arch: str):
    from dataclasses import replace

    return replace(request, arch=arch)


def explain_cmd(
    ctx: typer.Context,
    target: str = typer.Argument(..., help=c.TARGET_HELP),
    constexpr: Optional[List[str]] = c.ConstexprOpt,
    block: Optional[int] = c.BlockOpt,
    arg: Optional[List[str]] = c.ArgOpt,
    num_warps: Optional[int] = c.WarpsOpt,
    num_stages: Optional[int] = c.StagesOpt,
    arch: Optional[str] = c.ArchOpt,
    shape: Optional[List[str]] = ShapesOpt,
    dtype: Optional[str] = c.DtypeOpt,
    maxnreg: Optional[int] = c.MaxnregOpt,
    num_ctas: Optional[int] = c.NumCtasOpt,
    fp_fusion: Optional[bool] = c.FpFusionOpt,
    gpu: Optional[str] = GpuOpt,
    no_check_fixes: bool = NoCheckOpt,
    as_json: bool = typer.Option(False, "--json", help="Print the verdicts as JSON."),
    save: Optional[str] = typer.Option(None, "--save", help="Save the verdicts: .txt, .md, .html or .json."),
    force: bool = c.ForceOpt,
    width: Optional[int] = c.WidthOpt,
    color: Optional[bool] = c.ColorOpt,
):
    """Explain a config: one verdict per finding, with the stage line and Python line that show it and a fix.

    Verdicts: shared memory (each buffer, the largest num_stages / block size
    that fits), occupancy (the limiter), registers (live registers from
    nvdisasm), spills, global access width (and the hint that widens it),
    pipelining of each loop, tensor cores and TF32, shared-memory bank
    conflicts, and for each --shape the waves and a roofline time bound.
    Fixes marked "checked" were compiled.  Exit code 0 whatever it finds
    (use `tritonscope check` to gate on it).

    Examples:

      tritonscope explain matmul_masked -c BLOCK_SIZE=128

      tritonscope explain softmax -c BLOCK=16384 -w 1

      tritonscope explain matmul_masked --shape 4096x4096x4096 --gpu H200
    """
    from tritonscope.env import env_of
    from tritonscope.errors import UsageError

    env = env_of(ctx).with_display(width=width, color=color)
    fmt = None
    if save:
        from tritonscope.output import check_path

        fmt = check_path(save, force=force, formats=SAVE_FORMATS, what="explain output")
    if gpu:
        from tritonscope.bench import PEAKS
        from tritonscope.errors import close_matches

        if not any(k.lower() == gpu.lower() for k in PEAKS):
            raise UsageError(f"Unknown GPU {gpu!r}.{close_matches(gpu, PEAKS)}", hint=f"GPUs: {', '.join(PEAKS)}.")
    if shape:
        from tritonscope.kernels import parse_shape

        for s in shape:
            parse_shape(s)
    request = c.make_request(target, constexpr, block, arg, num_warps, num_stages, arch,
                             shape[0] if shape else None, dtype, maxnreg=maxnreg, num_ctas=num_ctas,
                             fp_fusion=fp_fusion)
    _, expl = run_explain(request, env, shapes=list(shape or []), gpu=gpu, check_fixes=not no_check_fixes,
                          progress=not as_json)
    if as_json:
        typer.echo(json.dumps(expl.to_dict(), indent=1))
    else:
        from tritonscope.render.explain_view import explain_renderable

        console = env.console()
        console.print(explain_renderable(expl, console.width))
    if save:
        from tritonscope.output import write_atomic
        from tritonscope.render.explain_view import render_explanation

        write_atomic(save, render_explanation(expl, fmt, width or 120), force=force)
