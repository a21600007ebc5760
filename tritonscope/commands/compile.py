"""tritonscope compile: one real compile, every stage, annotated."""

from __future__ import annotations

from typing import Optional

import typer

from tritonscope.commands import checks, printing, running
from tritonscope.commands import requests as build
from tritonscope.commands.options import (CONFIG, GRID, OUTPUT, STAGE_VIEWS, TARGET_HELP, ConfigOpt, EmitOpt, ForceOpt,
                                          GpuOpt, KeepPathsOpt, NoCacheOpt, PythonOpt, ReportSaveOpt, TimeoutOpt,
                                          TritonOpt, Values, composed)
from tritonscope.core.errors import CompileError, CompileTimeoutError


@composed
def compile_cmd(
    ctx: typer.Context,
    target: str = typer.Argument(..., help=TARGET_HELP + " Or a kernel that already compiled (a capture, a "
                                                           "Triton or Inductor cache, a stage file), as `open` "
                                                           "reads it: it is recompiled with -c/-w/-s/--arch."),
    found_kernel: Optional[str] = typer.Option(None, "--kernel", "-k",
                                               help="For a folder of kernels: compile this one, by its name or (a "
                                                    "prefix of) its hash, as `tritonscope open` lists them."),
    kernel: Values = CONFIG + GRID,
    config: Optional[str] = ConfigOpt,
    predict: bool = typer.Option(False, "--predict",
                                 help="Also predict the kernel's time at its launch (GPU-less cost model, see "
                                      "README 'Predicted time'): a 'predicted' summary row, in --json under "
                                      "\"prediction\" and in --save reports."),
    gpu: Optional[str] = GpuOpt,
    views: Values = STAGE_VIEWS,
    passes: bool = typer.Option(False, "--passes",
                                help="Also record what each compiler pass did (one compile with Triton's per-pass "
                                     "dumps, in a private cache): the pass table is shown and goes into --save "
                                     "reports (see `tritonscope passes`)."),
    explain: bool = typer.Option(False, "--explain",
                                 help="Also run explain's verdicts (fixes checked by compiling; with --shape, the "
                                      "waves and roofline for it): shown after the summary and saved as an "
                                      "Explain section in --save reports (see `tritonscope explain`)."),
    out: Values = OUTPUT,
    save: Optional[str] = ReportSaveOpt,
    emit: Optional[str] = EmitOpt,
    force: bool = ForceOpt,
    timeout: Optional[float] = TimeoutOpt,
    no_cache: bool = NoCacheOpt,
    keep_paths: bool = KeepPathsOpt,
    triton: Optional[str] = TritonOpt,
    python: Optional[str] = PythonOpt,
):
    """Compile a kernel for a config and show every stage, annotated.

    Examples:

      tritonscope compile matmul --block 16

      tritonscope compile matmul --block 16 --arch sm_80 --stage ttgir,ptx

      tritonscope compile matmul --block 16 --view walkthrough

      tritonscope compile matmul --block 16 --line 19

      tritonscope compile matmul --block 16 --view side-by-side --stages ttgir,ptx,sass

      tritonscope compile matmul --block 16 --view mix

      tritonscope compile matmul --block 16 --stage ptx --raw

      tritonscope compile matmul --block 16 --emit out/ --stage none

      tritonscope compile matmul --block 32 --arch gfx942 --emit out-gfx942/ --stage none

      tritonscope compile matmul --block 16 --passes --stage none --save report.html

      tritonscope compile matmul --block 16 --explain --stage none --save report.html

      tritonscope compile kernels.py:add_kernel --arg x_ptr='*fp32' --arg y_ptr='*fp32' --arg out_ptr='*fp32' --arg n=4096 -c BLOCK=1024

      tritonscope compile liger_kernel.ops.rms_norm:_rms_norm_forward_kernel --arg Y_ptr=bf16[4,4096] ... -c casting_mode=0

      tritonscope compile matmul_autotuned --config 3 --stage none

      tritonscope compile matmul_grouped --shape 4096x4096x4096 --predict --gpu H100 --stage none

      tritonscope compile matmul --arch gfx942 --triton 3.6.0 --stage amdgcn

      tritonscope compile captures/ -k add_kernel --predict --stage none
    """
    from tritonscope.analyses.explain.run import is_found_target
    from tritonscope.analyses.summary import out_of_resources

    env = out.env(ctx)
    view = checks.check_view(views.view)
    checks.check_line(views.line)
    checks.check_timeout(timeout)
    hide = checks.noise_filter(out.raw, out.keep)
    if is_found_target(target):  # a kernel that already compiled: recompiled where -c/-w/-s/--arch change it
        analysis = _found(target, found_kernel, kernel, env, gpu=gpu, predict=predict, config=config,
                          others={"--passes": passes, "--explain": explain, "--emit": emit, "--timeout": timeout,
                                  "--triton": triton, "--python": python, "--no-cache": no_cache},
                          save=save, force=force, stage=views.stage, quiet=out.as_json)
        printing.output_analysis(analysis, env, as_json=out.as_json, save=save, force=force, keep_paths=keep_paths,
                          hide=hide, stage=views.stage, view=view, line=views.line, layouts=views.layouts,
                          max_lines=out.max_lines)
        return
    checks.refuse_kernel_option(target, found_kernel)
    # the one Config: values checked, the arch resolved, e.g. --maxnreg for an AMD target refused (exit 2)
    request = kernel.config(target, config=config, gpu=gpu)
    _check_early(views.stage, gpu=gpu, save=save, force=force, emit=emit)
    _check_line_in_file(target, views.line)
    other = _other_triton(triton, python, passes=passes, explain=explain, env=env, quiet=out.as_json)
    trace = None
    try:
        compiled, trace = _compiled(request, env, other=other, passes=passes, out=out, no_cache=no_cache,
                                    timeout=timeout)
    except (CompileError, CompileTimeoutError) as e:  # a failure inside Triton: its report, then exit 5 (11)
        printing.output_failure(e, env, as_json=out.as_json, save=save, force=force, emit=emit,
                               keep_paths=keep_paths)
        raise
    artifact = compiled.artifact
    if emit:
        _emit(artifact, emit, env, force=force, passes=passes)
    analysis = running.analysis_of(compiled)
    if trace is not None:
        analysis.passes = trace.to_dict()
    _extras(analysis, layouts=views.layouts, predict=predict or gpu is not None, gpu=gpu)
    if explain:  # the verdicts ride with the analysis into the views, --json and --save
        running.explain_into_report(analysis, request, env, shapes=[kernel.shape] if kernel.shape else [],
                            progress=not out.as_json)
    printing.output_analysis(analysis, env, as_json=out.as_json, save=save, force=force, keep_paths=keep_paths, hide=hide,
                      stage=views.stage, view=view, line=views.line, layouts=views.layouts, max_lines=out.max_lines)
    err = out_of_resources(analysis)
    if err is not None:
        raise err


def _found(target: str, found_kernel, kernel: Values, env, *, gpu, predict: bool, config, others: dict, save,
           force: bool, stage, quiet: bool):
    """`compile` of a kernel that already compiled (as `open` finds it): its Analysis, recompiled with the
    command line's changes, predicted at its recorded grid (or --grid)."""
    from tritonscope.core.errors import UsageError
    from tritonscope.cost.found import analyze_found

    checks.refuse_for_found(target, **{"--block": kernel.block, "--arg": kernel.arg, "--dtype": kernel.dtype,
                                "--shape": kernel.shape, "--config": config})
    given = [name for name, value in others.items() if value not in (None, False)]
    if given:
        raise UsageError(f"{', '.join(given)}: not for a kernel that already compiled ({target}).",
                         hint=f"`tritonscope open {target} -k KERNEL --recompile` recompiles and diffs it; "
                              "`tritonscope explain` explains it.")
    _check_early(stage, gpu=gpu, save=save, force=force, emit=None)
    changes = build.recompile_changes(kernel.arch, kernel.num_warps, kernel.num_stages, kernel.constexpr, kernel.maxnreg,
                                      kernel.num_ctas, kernel.fp_fusion)
    return analyze_found(target, found_kernel, changes=changes, predict=predict, gpu=gpu, grid=kernel.grid,
                         status=running.spinner(env, not quiet))


def _compiled(request, env, *, other, passes: bool, out, no_cache: bool, timeout):
    """(Compiled, the pass trace or None): the compile in another Triton, with every pass dumped (--passes), or
    plain; a failure inside Triton carries its report (analyses/failure.py), with what to try checked."""
    trace = None
    if other is not None:
        from tritonscope.pipeline.compile_path import Compiled
        from tritonscope.versions import sides

        with running.spinner(env, not out.as_json)(f"compiling {request.target} with Triton {other.triton}..."):
            compiled = Compiled(sides.compile_with_triton(request, other, what=f"The compile of {request.target}",
                                                          timeout=timeout), request)
    elif passes:  # one compile in a child gives the stages and the pass table
        from tritonscope.pipeline.compile_path import Compiled

        try:
            with running.trace_request(request, env, progress=not out.as_json) as trace:
                compiled = Compiled(trace.artifact, request)
        except CompileError as e:
            from tritonscope.analyses.failure import attach

            attach(e, request, status=running.spinner(env, not out.as_json))
            raise
    else:
        compiled = running.compile_config(request, env, progress=not out.as_json, cache=not no_cache, timeout=timeout,
                                    diagnose="full")
    return compiled, trace


def _check_early(stage, *, gpu, save, force: bool, emit) -> None:
    """What can fail before the compile does: a bad --stage, an unknown --gpu, a --save or --emit that cannot be
    written."""
    from tritonscope.language.dialects import stage_keys

    checks.parse_stage_list(stage, stage_keys())
    checks.check_gpu(gpu)  # its arch is checked when the launch is bound (kernels._answers), before the compile
    if save:
        checks.check_report_path(save, force)
    if emit:
        from tritonscope.inputs.sources import check_emit_dir

        check_emit_dir(emit)


def _check_line_in_file(target: str, line: Optional[int]) -> None:
    """--line N past the end of the kernel's file: refused before the compile (exit 2).  A line inside the file
    but outside the kernel is refused once the kernel's source is read (its helpers' lines count too)."""
    if line is None:
        return
    from tritonscope.core.errors import TritonscopeError, UsageError
    from tritonscope.inputs.kernels import resolve_target

    try:
        path, _ = resolve_target(target)
        with open(path, encoding="utf-8", errors="replace") as fh:
            count = sum(1 for _ in fh)
    except (TritonscopeError, OSError):
        return  # the compile says what is wrong with the target
    if line > count:
        raise UsageError(f"--line {line}: {path.name} has {count} lines.",
                         hint="Give a line of the kernel; `--stage python` shows them numbered.")


def _other_triton(triton, python, *, passes: bool, explain: bool, env, quiet: bool):
    """--triton/--python: another Triton's environment (versions/sides.py), checked and made ready; None if not asked."""
    if triton is None and python is None:
        return None  # (and versions/ is not imported)
    from tritonscope.versions import sides

    other = sides.triton_choice(triton, python)
    if other is None:
        return None
    sides.check_value(other)
    if passes or explain:
        sides.refuse_with("--passes" if passes else "--explain", "it compiles again in this environment.")
    return sides.resolve(other, progress=None if quiet else sides.say(env))


def _extras(analysis, *, layouts: bool, predict: bool, gpu) -> None:
    """--layouts and --predict: what they add to the analysis."""
    if layouts:
        from tritonscope.language.layouts import layouts_of

        analysis.layouts = layouts_of(analysis)
    if predict:
        from tritonscope.cost import predict as predicted

        analysis.prediction = predicted(analysis, gpu=gpu).to_dict()


def _emit(artifact, emit: str, env, *, force: bool, passes: bool) -> None:
    """--emit DIR: each stage as a plain file, and the binary Triton's cache keeps for this compile."""
    from tritonscope.core.model import ARCHES
    from tritonscope.core.output import write_folder
    from tritonscope.inputs.sources import binaries_of_artifact, binary_ext, emit_files

    binaries = binaries_of_artifact(artifact)  # the .cubin / .hsaco Triton's cache keeps for this compile
    # every file or none: a full disk part way leaves no folder of 3 of 8 files
    write_folder(emit, lambda staging: emit_files(artifact, staging, binaries=binaries), force=force)
    wanted = binary_ext(ARCHES[artifact.spec.arch].backend) if artifact.spec.arch in ARCHES else None
    if wanted and wanted not in binaries:
        why = ("a --passes compile keeps it in a private cache: run the --emit without --passes" if passes else
               "run again with --no-cache to compile afresh")
        env.console(stderr=True).print(f"note: Triton's cache does not hold this compile's .{wanted}, so it "
                                       f"was not written ({why}).", markup=False)
