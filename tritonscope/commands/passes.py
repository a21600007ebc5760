"""tritonscope passes: what each of Triton's compiler passes did to a kernel."""

from __future__ import annotations

import json
from typing import List, Optional

import typer

from tritonscope.commands import checks
from tritonscope.commands.options import CONFIG, DISPLAY, TARGET_HELP, ForceOpt, KeepPathsOpt, Values, composed
from tritonscope.commands.running import trace_request


DiffStyleOpt = typer.Option("auto", "--diff-style", metavar="STYLE",
                            help="How --pass shows the diff: side-by-side (before left, after right), "
                                 "unified, or auto (side by side on a terminal at least 160 columns "
                                 "wide).")
DumpOpt = typer.Option(None, "--dump", metavar="FILE",
                       help="Read a dump you made (MLIR_ENABLE_DUMP=1 MLIR_DUMP_PATH=FILE) "
                            "instead of compiling.")


@composed
def passes_cmd(
    ctx: typer.Context,
    target: Optional[str] = typer.Argument(None, help=TARGET_HELP + " (or give --dump FILE)."),
    kernel: Values = CONFIG,
    show_all: bool = typer.Option(False, "--all", help="Show every pass step, not only those that changed the IR."),
    pass_: Optional[str] = typer.Option(None, "--pass", metavar="N|NAME",
                                        help="Show one step's before/after as a coloured diff "
                                             "(a step number, or a pass name: its first run that changed the IR)."),
    find: Optional[List[str]] = typer.Option(None, "--find", metavar="TEXT|OP",
                                             help="Say which passes bring in and remove an op (ttg.local_alloc), "
                                                  "some text (#mma) or a /regex/ (repeatable)."),
    line: Optional[int] = typer.Option(None, "--line", help="Follow Python line N's ops through the passes."),
    context: int = typer.Option(3, "--context", min=0, help="Lines of context in the --pass diff."),
    diff_style: str = DiffStyleOpt,
    dump: Optional[str] = DumpOpt,
    as_json: bool = typer.Option(False, "--json", help="Print the pass table (and any --find/--line/--pass answer) as JSON."),
    save: Optional[str] = typer.Option(None, "--save",
                                       help="Save a report with the pass table and Triton's remarks: "
                                            ".html, .md, .json or .txt (by extension); `show` replays it."),
    force: bool = ForceOpt,
    keep_paths: bool = KeepPathsOpt,
    display: Values = DISPLAY,
):
    """Compile once with Triton's per-pass IR dumps on and show what each pass changed.

    Unchanged passes are folded (--all shows them); Triton's own remarks and
    warnings are listed with the line they point at and the pass that wrote
    them (a second, partial compile finds it, only when there are remarks).
    --pass shows the pass's diff, side by side on a wide terminal
    (--diff-style).  The compile runs in a private directory: your Triton
    cache is not touched.  --save writes the usual report (every stage,
    annotated) with the pass table and the remarks in it.

    Examples:

      tritonscope passes matmul --block 16 --arch sm_80

      tritonscope passes matmul --block 16 --find ttg.async_copy_global_to_local --find '#mma'

      tritonscope passes matmul --block 16 --pass TritonGPUPipeline

      tritonscope passes matmul --block 16 --pass TritonGPUPipeline --diff-style unified

      tritonscope passes matmul --block 16 --line 17

      tritonscope passes matmul --block 16 --save passes.html

      tritonscope passes --dump my_dump.mlir --find ttg.convert_layout
    """
    from tritonscope.analyses import passes
    from tritonscope.core.errors import UsageError

    env = display.env(ctx)
    diff_style = check_diff_style(diff_style)
    checks.check_line(line)
    find = [passes.check_query(q) for q in find or []]  # an empty or bad query fails before the compile
    if save:  # fail before compiling when the report cannot be written
        checks.check_report_path(save, force)
    if dump:
        if target:
            raise UsageError("Give a TARGET to compile or --dump FILE, not both.")
        if save:
            raise UsageError("--save needs a compile: a dump file holds no stages to report.",
                             hint="tritonscope passes TARGET ... --save FILE, or --json for the pass table alone.")
        trace = passes.trace_from_dump(dump)
    elif not target:
        raise UsageError("Missing TARGET.", hint="e.g. tritonscope passes matmul --block 16, or --dump FILE.")
    else:
        _check_target(target)
        # e.g. --maxnreg for AMD: exit 2, no compile
        request = kernel.config(target)
        trace = trace_request(request, env, progress=not as_json)
    with trace:
        step = trace.step(pass_) if pass_ else None
        found = [(q, passes.find(trace, q)) for q in (find or [])]
        history = passes.line_history(trace, line) if line is not None else None
        if as_json:
            out = trace.to_dict()
            if step is not None:
                out["pass"] = {"step": step.index, "name": step.name, "stage": step.stage,
                               "diff": passes.step_diff(trace, step, context=context),
                               "remarks": [r.to_dict() for r in trace.remarks if r.step == step.index]}
            if found:
                out["find"] = {q: [e.to_dict() for e in events] for q, events in found}
            if history is not None:
                out["line"] = {"line": line, "events": [e.to_dict() for e in history]}
            typer.echo(json.dumps(out, indent=1))
        else:
            from tritonscope.outputs.render import passes_view as v

            console = env.console()
            with env.paged(console):
                if step is not None:
                    console.print(v.pass_view(trace, step, passes.pass_diff(trace, step, context=context),
                                              width=console.width, style=diff_style))
                for q, events in found:
                    console.print(v.find_view(q, events))
                if history is not None:
                    console.print(v.line_view(trace, line, history))
                if step is None and not found and history is None:
                    console.print(v.pipeline_table(trace, show_all=show_all))
        if save:
            save_with_passes(trace, save, force=force, keep_paths=keep_paths)


def _check_target(target: str) -> None:
    """A TARGET `passes` cannot compile -- an IR file, a report, a folder (what `open` reads) -- refused with
    what passes takes (exit 2), not looked up as a sample ("Unknown sample 'k.ttir'")."""
    import os
    from pathlib import Path

    from tritonscope.core.errors import UsageError
    from tritonscope.inputs.sources.model import SINGLE_FILE_EXTS

    path = Path(target)
    ext = path.suffix.lower()
    folder = (os.sep in target or target.startswith(".")) and path.is_dir()
    if ext not in SINGLE_FILE_EXTS + (".ll",) and not folder:
        return
    what = ("a folder" if folder else "a report or metadata file" if ext == ".json"
            else "an IR file (a compiled stage)")
    raise UsageError(
        f"passes compiles a kernel with every pass dumped; {target} is {what}, which holds no kernel to compile.",
        hint="Give a sample (matmul), file.py:kernel or package.module:kernel; or --dump FILE for a dump you made "
             "(MLIR_ENABLE_DUMP=1 MLIR_DUMP_PATH=FILE). To read a stage file, a cache or a folder, use "
             "`tritonscope open`; a saved report, `tritonscope show`.")


def check_diff_style(style: str) -> str:
    from tritonscope.core.errors import UsageError, close_matches
    from tritonscope.outputs.render.passes_view import DIFF_STYLES

    style = style.strip().lower().replace("_", "-")
    if style not in DIFF_STYLES:
        raise UsageError(f"Unknown diff style {style!r}.{close_matches(style, DIFF_STYLES)}",
                         hint=f"Diff styles: {', '.join(DIFF_STYLES)}.")
    return style


def save_with_passes(trace, path: str, *, force: bool = False, keep_paths: bool = False):
    """The compile's report (every stage, its notes, Triton's remarks) with the pass table in it."""
    from tritonscope.analyses.analysis import analyze
    from tritonscope.core.errors import UsageError
    from tritonscope.outputs.save import save_report

    if trace.artifact is None:
        raise UsageError("This pass trace has no compile to report (it was read from a dump file).")
    analysis = analyze(trace.artifact)
    analysis.passes = trace.to_dict()
    return save_report(analysis, path, force=force, keep_paths=keep_paths)


def register(app) -> None:
    """Add `passes` to a typer app (cli.py registers commands in one place)."""
    app.command("passes")(passes_cmd)
