"""tritonscope open: kernels that already compiled (a Triton cache, a dump, a capture, a stage file).

A folder gives a table of its kernels, filtered and sorted; naming one (or
a folder/file holding only one) opens it in every view `compile` has.
`--recompile` compiles the found kernel again, with its exact
specialization, for another --arch / --num-warps / --num-stages (and -c for
captured kernels); `--diff` diffs that against the original.  Listing reads
metadata only, so a cache of thousands of kernels lists in a second or two.
"""

from __future__ import annotations

import contextlib
import json
from typing import List, Optional

import typer

from tritonscope.commands import checks, printing, running
from tritonscope.commands.options import (OUTPUT, STAGE_VIEWS, ArchOpt, ConstexprOpt, EmitOpt, ForceOpt, KeepPathsOpt,
                                          ReportSaveOpt, StagesOpt, Values, WarpsOpt, composed)


@composed
def open_cmd(
    ctx: typer.Context,
    path: str = typer.Argument(..., help="A Triton cache (~/.triton/cache), an Inductor cache, a TRITON_KERNEL_DUMP "
                                         "folder, a `tritonscope capture` folder, or a stage file "
                                         "(.ttir .ttgir .mlir .llir .ptx .cubin .sass .amdgcn .hsaco, or Triton's "
                                         "metadata .json; up to 256 MB each, as `show` reads). NVIDIA and AMD "
                                         "compiles alike."),
    kernel: Optional[str] = typer.Option(None, "--kernel", "-k", help="Open this kernel: its name or (a prefix of) "
                                                                      "its hash, as the listing shows."),
    sort: Optional[str] = typer.Option(None, "--sort", help="Sort the listing by name, arch, config, registers, "
                                                            "sgprs, shared, spills, launches, source, key or "
                                                            "backend (-FIELD: descending)."),
    where: Optional[List[str]] = typer.Option(None, "--where", metavar="FIELD OP VALUE",
                                              help="Keep the kernels matching (repeatable): e.g. 'registers>128', "
                                                   "name=triton_poi_*, 'source~layernorm'."),
    recompile: bool = typer.Option(False, "--recompile", help="Recompile the kernel with its exact specialization "
                                                               "for --arch / --num-warps / --num-stages / -c."),
    diff: bool = typer.Option(False, "--diff", help="With --recompile: diff the recompiled kernel against the original."),
    arch: Optional[str] = ArchOpt,
    num_warps: Optional[int] = WarpsOpt,
    num_stages: Optional[int] = StagesOpt,
    constexpr: Optional[List[str]] = ConstexprOpt,
    views: Values = STAGE_VIEWS,
    out: Values = OUTPUT,
    save: Optional[str] = ReportSaveOpt,
    emit: Optional[str] = EmitOpt,
    force: bool = ForceOpt,
    keep_paths: bool = KeepPathsOpt,
):
    """Open kernels that already compiled: list a cache, dump or capture, or show one kernel.

    Examples:

      tritonscope open ~/.triton/cache

      tritonscope open ~/.triton/cache --sort -registers --where 'spills>0'

      tritonscope open ~/.triton/cache --kernel matmul_kernel --view walkthrough

      tritonscope open kernel.ttgir --stage ttgir

      tritonscope open kernel.amdgcn --line 19

      tritonscope open capture/ --kernel triton_poi_fused_0 --recompile --arch sm_100a --diff

      tritonscope open ~/.triton/cache --kernel 3FQ2 --emit out/
    """
    from rich.markup import escape

    from tritonscope.core.errors import UsageError
    from tritonscope.inputs import sources
    from tritonscope.language.dialects import every_stage_key

    env = out.env(ctx)
    stage, view, line, layouts = views.stage, checks.check_view(views.view), views.line, views.layouts
    as_json, max_lines, raw, keep = out.as_json, out.max_lines, out.raw, out.keep
    hide = checks.noise_filter(raw, keep)
    checks.parse_stage_list(stage, every_stage_key())  # a bad --stage: exit 2 before any work
    if diff and not recompile:
        raise UsageError("--diff compares a recompile with the original: add --recompile and a target.",
                         hint="e.g. --recompile --arch sm_80 --diff")
    _check_save(save, diff, force)
    if emit:
        sources.check_emit_dir(emit)
    changes = [arch, num_warps, num_stages, constexpr]
    if recompile and any(x not in (None, [], ()) for x in changes):  # -w 3, -s 0 (falsy), -c BLOCK=1e999: exit 2
        _check_changes(arch, num_warps, num_stages, constexpr)
    source = sources.open_source(path)
    inductor = source.kind == "inductor"   # generated kernel files: opening one compiles it (for --arch too)
    if any(x not in (None, [], ()) for x in changes) and not recompile and not inductor:  # -s 0 was taken unsaid
        raise UsageError("--arch, --num-warps, --num-stages and -c apply to --recompile.",
                         hint="Add --recompile to compile the found kernel again with them.")
    acts_on_one = recompile or emit or save or line is not None or layouts
    if kernel is None and not source.single and not (acts_on_one and len(source.entries) == 1):
        if acts_on_one:
            raise UsageError(f"{path} holds {len(source.entries)} kernels; name one with --kernel.",
                             hint=f"Run `tritonscope open {path}` to list them.")
        listing = _print_listing
        if inductor:
            from tritonscope.commands.open_inductor import print_inductor_listing as listing
        listing(source, env, sort=sort, where=where, as_json=as_json)
        return

    entry = sources.find_entry(source, kernel)
    original = None
    if inductor:   # compiled here, for its device or --arch (with --diff: both)
        from tritonscope.commands.open_inductor import compile_for_open

        original, artifact = compile_for_open(entry, env, arch=arch, num_warps=num_warps, num_stages=num_stages,
                                              constexpr=constexpr, diff=diff, progress=not as_json)
    else:
        artifact = sources.load_artifact(entry, target=path)
    _check_views_apply(artifact, line=line, view=view, stage=stage, as_json=as_json)
    if recompile and not inductor:
        from tritonscope.inputs.kernels import parse_assignments

        original = artifact
        want = parse_assignments(constexpr, "constexpr")
        with _reported(env, as_json, save, force, emit, keep_paths), running.spinner(env, not as_json)(f"recompiling {entry.name} ..."):
            artifact = sources.recompile(entry, original, arch=arch, num_warps=num_warps, num_stages=num_stages,
                                         constexprs=want)
    if diff and original is not None:
        _diff_and_save(original, artifact, env, as_json=as_json, max_lines=max_lines, stage=stage, save=save,
                       emit=emit, force=force)
        return
    recompile = recompile or inductor
    if emit:
        binaries = sources.binaries_of_artifact(artifact) if recompile else sources.binaries_of(entry)
        written = sources.emit_files(artifact, emit, binaries=binaries, force=force)
        env.console(stderr=True).print(f"wrote {len(written)} files to {escape(emit)}")

    from tritonscope.analyses.analysis import analyze

    analysis = analyze(artifact)
    if layouts:
        from tritonscope.language.layouts import layouts_of

        analysis.layouts = layouts_of(analysis)
    printing.output_analysis(analysis, env, as_json=as_json, save=save, force=force, keep_paths=keep_paths, hide=hide,
                      stage=stage, view=view, line=line, layouts=layouts, max_lines=max_lines)


@contextlib.contextmanager
def _reported(env, as_json: bool, save: Optional[str], force: bool, emit: Optional[str], keep_paths: bool = False):
    """A recompile that fails inside Triton: its failure report (analyses/failure.diagnose_found), shown and
    saved as compile's is; the error goes on (exit 5)."""
    from tritonscope.core.errors import CompileError

    try:
        yield
    except CompileError as e:
        from tritonscope.analyses.failure import diagnose_found

        if diagnose_found(e, status=running.spinner(env, not as_json)) is not None:
            printing.output_failure(e, env, as_json=as_json, save=save, force=force, emit=emit,
                                    keep_paths=keep_paths)
        raise


def _check_changes(arch, num_warps, num_stages, constexpr) -> None:
    """--recompile's changes checked as `compile CAPTURE -k K`'s are (exit 2 before anything loads)."""
    from tritonscope.commands.requests import recompile_changes

    recompile_changes(arch, num_warps, num_stages, constexpr, None, None, None)


def _check_save(save, diff, force) -> None:
    """A bad --save path: exit 2 before any work (with --recompile --diff the diff is saved: .json .txt .html)."""
    if save and diff:
        from tritonscope.outputs import save as saving

        saving.check(save, force=force, names=saving.DIFF, what="diff")
    elif save:
        checks.check_report_path(save, force)


def _diff_and_save(original, artifact, env, *, as_json, max_lines, stage, save, emit, force) -> None:
    """--recompile --diff: the diff shown, saved with --save, the recompile written with --emit."""
    from rich.markup import escape

    from tritonscope.inputs import sources

    d = _print_diff(original, artifact, env, as_json=as_json, max_lines=max_lines, stage=stage)
    if save:
        from tritonscope.language.dialects import stage_keys
        from tritonscope.outputs.save import save_diff

        saved = save_diff(d, save, force=force, stages=checks.parse_stage_list(stage, stage_keys()), max_lines=max_lines)
        env.console(stderr=True).print(f"saved the diff to {escape(str(saved))}")
    if emit:
        sources.emit_files(artifact, emit, binaries=sources.binaries_of_artifact(artifact), force=force)


def _check_views_apply(artifact, *, line, view, stage, as_json) -> None:
    """A view that needs what this kernel lacks is refused with the reason (exit 2), not drawn half."""
    from tritonscope.core.errors import UsageError

    if as_json:
        return
    lacking = next((w for w in artifact.warnings if w.startswith("No Python source")), "")
    if line is not None and "python" not in artifact.stages:
        raise UsageError(f"--line follows a Python line into the stages, and {artifact.spec.kernel} has no Python "
                         "source here." + (f" {lacking}" if lacking else ""),
                         hint="Open it without --line (the stages show what exists), or open the folder that holds "
                              "its IR with the kernel's file on this machine.")
    from tritonscope.language.dialects import is_source

    compiled = [k for k in artifact.stages if not is_source(k)]
    if not compiled and (view == "side-by-side" or stage not in (None, "none", "all")):
        raise UsageError(f"{artifact.spec.kernel} has no stage to show here (only its binary's summary).",
                         hint="Open the cache or dump folder that holds its IR and assembly for the stages.")


def _print_listing(source, env, *, sort, where, as_json) -> None:
    from rich import box
    from rich.markup import escape
    from rich.text import Text

    from tritonscope.inputs import sources
    from tritonscope.outputs.render.fit import Col, FittedTable

    rows = sources.filter_rows([e.row() for e in source.entries], where)
    rows = sources.sort_rows(rows, sort if sort is not None else "name")   # --sort '' was taken as by name
    if source.kind == "capture":  # each kernel's recorded launch: grid and arguments (inputs/capture.py)
        from tritonscope.inputs.capture import launch_words

        launched = {e.short_key: e.launch_info for e in source.entries}
        for r in rows:
            r.update(launch_words(launched.get(r["key"]) or {}), launch=launched.get(r["key"]) or {})
    if as_json:
        typer.echo(json.dumps({"path": str(source.path), "kind": source.kind, "kernels": rows,
                               "warnings": source.warnings, **({"capture": source.info} if source.info else {})},
                              indent=1))
        return
    console = env.console()
    title = f"{source.kind}: {source.path} ({len(rows)} of {len(source.entries)} kernels)"
    # launches are known only to a capture: the column is left out for caches and dumps
    launches = source.kind == "capture" or any(r["launches"] is not None for r in rows)
    capture = source.kind == "capture"
    # numbers, hashes and arch names stay whole ("58v/28s" folded in two reads as two numbers); a name, a config
    # or a path may break; what does not fit the width is left out, last first, and the caption names it
    cols = [Col("hash"), Col("name", fold=True, min_width=16), Col("arch"), Col("config", wrap=True, min_width=12),
            Col("regs", justify="right"), Col("shared", justify="right", drop=4),
            Col("spills", justify="right", drop=3)]
    if launches:
        cols.append(Col("launches", justify="right", drop=5))
    if capture:
        cols += [Col("grid", drop=6), Col("args", fold=True, min_width=16, drop=7)]
    cols.append(Col("source", fold=True, min_width=12, drop=8))

    def num(value) -> str:
        return "?" if value is None else f"{value:,}"

    def regs(r) -> str:  # AMD: VGPRs per lane / SGPRs per wave
        if r.get("backend") == "hip" and r["registers"] is not None:
            return f"{r['registers']}v/{num(r.get('sgprs'))}s"
        return num(r["registers"])

    for r in rows:
        spills = "?" if r["spills"] is None else ("-" if r["spills"] == 0 else f"{r['spills']} B")
        cells = [r["key"], r["name"], r["arch"], r["config"], regs(r), num(r["shared"]), spills,
                 *(["" if r["launches"] is None else num(r["launches"])] if launches else []),
                 *([r["grid"], r["args"]] if capture else []), _short_source(r["source"])]
        for col, cell in zip(cols, cells):
            col.cells.append(Text(str(cell)))   # Text: a kernel's name or path is never read as markup
    table = FittedTable(cols, title=escape(title), box=box.SIMPLE_HEAD, title_justify="left")
    with env.paged(console):
        console.print(table)
        if any(r.get("backend") == "hip" for r in rows):
            console.print("AMD rows: regs are VGPRs per lane (v) and SGPRs per wave (s), shared is LDS per "
                          "workgroup, spills are scratch bytes per lane.")
        for warning in source.warnings:
            console.print(f"[yellow]skipped[/] {escape(warning)}")
        gpuless = (source.info or {}).get("gpuless")
        if isinstance(gpuless, dict):  # capture --arch: compiled, not run
            console.print(f"[yellow]no GPU:[/] compiled for {escape(str(gpuless.get('arch')))} and not run: the "
                          "kernels' outputs were not computed, and no autotune config was timed.")
        autotune = (source.info or {}).get("autotune") or []
        if autotune:
            console.print(f"autotuning: {len(autotune)} tuning run(s); chosen configs:")
            for t in autotune:
                configs = t.get("configs")
                tried = len(configs) if isinstance(configs, list) else "?"
                key = t.get("key")
                shape = f" for key {escape(str(key))}" if key not in (None, "None") else ""
                pick = "the fastest prediction" if t.get("chosen_by") == "predicted" else "none could be predicted"
                how = f"of {tried} configs, none timed: {pick}" if t.get("timed") is False else f"of {tried} configs tried"
                console.print(f"  {escape(str(t.get('kernel')))}{shape}: {escape(str(t.get('best')))} ({how})")
        if rows:
            console.print(f"[dim]open one: tritonscope open {escape(str(source.path))} --kernel HASH[/]")


def _short_source(text: str) -> str:
    """'/long/path/to/kernels.py:12' -> 'to/kernels.py:12' (the table stays readable)."""
    parts = text.split("/")
    return "/".join(parts[-2:]) if len(parts) > 2 else text


def _print_diff(a_art, b_art, env, *, as_json: bool, max_lines, stage):
    """Show the recompile's diff against the original; the diff, for --save."""
    from tritonscope.analyses.analysis import analyze
    from tritonscope.analyses.diff import diff_analyses
    from tritonscope.language.dialects import stage_keys
    from rich.text import Text

    from tritonscope.outputs.render.diff_view import diff_summary, stage_diff_panel

    d = diff_analyses(analyze(a_art), analyze(b_art), stages=stage_keys(), force_different=True)
    if as_json:
        # the recompile's warnings say why its stages may differ (a pre-pass TTIR renames values): with the diff
        typer.echo(json.dumps({**d.to_dict(), "warnings": list(b_art.warnings)}, indent=1))
        return d
    shown = checks.parse_stage_list(stage, stage_keys())
    console = env.console()
    with env.paged(console):
        console.print(diff_summary(d))
        for w in b_art.warnings:  # as plain --recompile prints them: they explain the stage diffs below
            console.print(Text(f"warning: {w}", style="yellow"))
        for s in d.stages:
            if s.key in shown and not s.identical:
                console.print(stage_diff_panel(s, max_lines=max_lines))
    return d
