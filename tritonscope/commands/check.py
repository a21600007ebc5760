"""tritonscope check: assert what explain finds (tensor cores, pipelining, spills, widths, resources) for CI.

TARGET is what `explain` takes: a kernel to compile, or a kernel that
already compiled (a capture, a Triton cache or dump, a stage file), picked
with --kernel as `open` does.  An expectation whose verdict the found
kernel's stages cannot give (registers of a lone .ttgir) does not hold, and
the table says why.
"""

from __future__ import annotations

import json
from typing import List, Optional

import typer

from tritonscope.commands.options import CONFIG, DISPLAY, FOUND_TARGET_HELP, ForceOpt, FoundKernelOpt, Values, composed
from tritonscope.commands import checks, running
from tritonscope.commands import requests as build


@composed
def check_cmd(
    ctx: typer.Context,
    target: str = typer.Argument(..., help=FOUND_TARGET_HELP),
    kernel: Optional[str] = FoundKernelOpt,
    expect: Optional[List[str]] = typer.Option(
        None, "--expect", "-e", metavar="EXPR",
        help="An expectation (repeatable): tensor-cores, pipelined, no-spills, fits, no-bank-conflicts, tf32, "
             "width>=BITS, shared<=BYTES (KiB ok), registers<=N, occupancy>=FRACTION (or %), stages>=N, "
             "blocks>=N; prefix ! to negate.  Default: the kernel's EXAMPLES entry's \"expect\" list."),
    cfg: Values = CONFIG.but(arch=(Optional[List[str]], typer.Option(
        None, "--arch", help="Target GPU (repeatable: every expectation is checked for each arch); default as "
                             "compile.  A found kernel is recompiled for each."))),
    junit: Optional[str] = typer.Option(None, "--junit", metavar="FILE", help="Also write JUnit XML (.xml)."),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
    force: bool = ForceOpt,
    display: Values = DISPLAY.without("pager"),
):
    """Check expectations about a compiled kernel; exit 10 when one does not hold (for CI).

    Each expectation is judged from the same facts `explain` reports, for
    every --arch given.  A table shows what held and what did not (with
    explain's fix for what did not); --junit writes the same as JUnit XML.

    Examples:

      tritonscope check matmul --block 64 --expect tensor-cores --expect pipelined --expect no-spills

      tritonscope check matmul_masked -c BLOCK_SIZE=128 --expect fits --arch sm_80 --arch sm_90a

      tritonscope check ~/.triton/cache --kernel matmul_kernel --expect tensor-cores --expect no-spills
    """
    from tritonscope.analyses.explain.run import is_found_target
    from tritonscope.core.errors import CheckFailedError, UsageError
    from tritonscope.analyses.explain import evaluate, parse_expectation

    env = display.env(ctx)
    if junit:
        from tritonscope.core.output import check_path

        check_path(junit, force=force, formats={".xml": "junit"}, what="JUnit")
    parsed = [parse_expectation(e) for e in (expect or [])]
    archs = list(cfg.arch or [None])
    found = is_found_target(target)
    if found:
        checks.refuse_for_found(target, **{"--block": cfg.block, "--arg": cfg.arg, "--shape": cfg.shape, "--dtype": cfg.dtype})
        changes = build.recompile_changes(None, cfg.num_warps, cfg.num_stages, cfg.constexpr, cfg.maxnreg, cfg.num_ctas,
                                      cfg.fp_fusion)
        for a in archs:  # every --arch checked before anything is opened
            if a:
                build.recompile_changes(a, None, None, None, None, None, None)
        if not parsed:
            raise UsageError("No expectations: give --expect EXPR (a kernel found on disk has no EXAMPLES entry "
                             "to read them from).", hint="e.g. --expect tensor-cores --expect no-spills")
    else:
        checks.refuse_kernel_option(target, kernel)
        from dataclasses import replace

        from tritonscope.pipeline.config import resolve

        base = cfg.request(target, arch=archs[0])
        # one Config per --arch, each resolved before any compile (e.g. --maxnreg for an AMD arch: exit 2)
        configs = [resolve(replace(base, arch=a)) for a in archs]
        if not parsed:
            from tritonscope.pipeline.compile_path import Pipeline

            loaded = Pipeline().bind(configs[0])
            declared = (loaded.example or {}).get("expect") or []
            if not declared:
                raise UsageError("No expectations: give --expect EXPR, or an \"expect\": [...] list in the "
                                 "kernel's EXAMPLES entry.",
                                 hint="e.g. --expect tensor-cores --expect no-spills --expect width>=128")
            parsed = [parse_expectation(str(e)) for e in declared]
    results = []
    checked = target  # the kernel's name, once one is explained
    for i, a in enumerate(archs):
        if found:
            wanted = {**changes, **build.recompile_changes(a, None, None, None, None, None, None)}
            analysis, expl = running.run_explain_found(target, kernel, env, changes=wanted, shapes=[], gpu=None,
                                                 check_fixes=False, progress=not as_json, triton_banks=False)
        else:
            analysis, expl = running.run_explain(configs[i], env, shapes=[], gpu=None, check_fixes=False,
                                           progress=not as_json, triton_banks=False)
        checked = expl.kernel
        results.extend(evaluate(expl, analysis, parsed))
    if as_json:
        typer.echo(json.dumps({"kernel": checked, "results": [r.to_dict() for r in results],
                               "passed": all(r.held for r in results)}, indent=1))
    else:
        from tritonscope.outputs.render.explain_view import check_summary, check_table

        console = env.console()
        console.print(check_table(results))
        console.print(check_summary(results))
    if junit:
        from tritonscope.core.output import write_atomic
        from tritonscope.outputs.render.explain_view import junit_xml

        write_atomic(junit, junit_xml(results, checked), force=force)
    failed = [r for r in results if not r.held]
    if failed:
        raise CheckFailedError(f"{len(failed)} of {len(results)} expectation{'s' if len(results) != 1 else ''} "
                               f"did not hold: " + ", ".join(f"{r.expr} ({r.arch})" for r in failed) + ".",
                               hint="The table above shows what was found instead, and explain's fix.")
