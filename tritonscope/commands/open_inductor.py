"""`open` on Inductor's own kernel files: the listing of a cache without triton/ (or a debug folder), one kernel compiled."""

from __future__ import annotations

import json

import typer


def compile_entry(entry, *, arch=None, num_warps=None, num_stages=None):
    """The Inductor kernel compiled for its device (or --arch), its config chosen by Inductor's own code."""
    from tritonscope.inputs.sources.inductor_compile import compile_inductor

    return compile_inductor([entry], arch=arch, num_warps=num_warps, num_stages=num_stages)[0].artifact


def compile_for_open(entry, env, *, arch, num_warps, num_stages, constexpr, diff, progress):
    """(the compile for its own device when --diff, else None; the compile for --arch or its device)."""
    from tritonscope.commands import running
    from tritonscope.core.errors import UsageError

    if constexpr:
        raise UsageError("-c does not apply to an Inductor kernel: Inductor's heuristics (or its .best_config) "
                         "choose its constexprs.", hint="Leave -c out; --arch, --num-warps and --num-stages apply.")
    with running.spinner(env, progress)(f"compiling {entry.name} (Inductor's own heuristics, in a child process) ..."):
        original = compile_entry(entry) if diff else None
        return original, compile_entry(entry, arch=arch, num_warps=num_warps, num_stages=num_stages)


def print_inductor_listing(source, env, *, sort, where, as_json) -> None:
    from rich import box
    from rich.markup import escape
    from rich.text import Text

    from tritonscope.inputs import sources
    from tritonscope.outputs.render.fit import Col, FittedTable

    rows = sources.filter_rows([e.row() for e in source.entries], where)
    rows = sources.sort_rows(rows, sort if sort is not None else "name")   # --sort '' was taken as by name
    if sort is None:   # the kernels the output code runs first, in file order, then the rest by name
        rows.sort(key=lambda r: 0 if r.get("runs_in") else 1)
    info = (source.info or {}).get("inductor") or {}
    if as_json:
        typer.echo(json.dumps({"path": str(source.path), "kind": source.kind, "kernels": rows,
                               "warnings": source.warnings, "inductor": info}, indent=1, default=str))
        return
    console = env.console()
    ran = sum(1 for r in rows if r.get("runs_in"))
    title = (f"Inductor kernels: {source.path} ({len(rows)} of {len(source.entries)} generated kernels, "
             f"{ran} launched by the compiled graph; not compiled yet)")
    cols = [Col("hash"), Col("name", fold=True, min_width=24), Col("kind", fold=True, min_width=9, drop=3),
            Col("device", drop=2), Col("chosen config", wrap=True), Col("grid", drop=1), Col("launched", drop=4)]
    for r in rows:
        chosen = r.get("chosen") or "?"
        if r.get("chosen_from") == "best_config":
            chosen += " (.best_config)"
        elif r.get("chosen_from") == "the decorator":
            chosen += " (template)"
        grid = "x".join(str(g) for g in r["grid"]) if r.get("grid") else ""
        for col, cell in zip(cols, (r["key"], r["name"], r.get("heuristic") or "", r.get("device") or "", chosen,
                                    grid, "yes" if r.get("runs_in") else "")):
            col.cells.append(Text(str(cell)))   # Text: a kernel's name is never read as markup
    table = FittedTable(cols, title=escape(title), box=box.SIMPLE_HEAD, title_justify="left")
    with env.paged(console):
        console.print(table)
        for warning in source.warnings:
            console.print(f"[yellow]skipped[/] {escape(warning)}")
        console.print("chosen config: '?' where Inductor would time its configs on the GPU and no .best_config "
                      "records its pick (compiling says which config it took and why). grid: from the compiled "
                      "graph's launch; the others' grid is found when compiled (Inductor's grid code and the "
                      "kernel's sizes), or is unknown.")
        if rows:
            console.print(f"[dim]compile one (GPU-less; imports torch._inductor in a child process): tritonscope "
                          f"open {escape(str(source.path))} --kernel NAME [--arch ARCH][/]")
