"""tritonscope capture: run a program and record every Triton kernel it compiles and launches."""

from __future__ import annotations

from typing import List, Optional

import typer


def capture_cmd(
    ctx: typer.Context,
    command: Optional[List[str]] = typer.Argument(None, metavar="-- PROGRAM [ARGS]...",
                                                  help="The program to run, after --, e.g. -- python train.py."),
    out: str = typer.Option("tritonscope-capture", "-o", "--out", metavar="DIR",
                            help="Folder to record into (created; must be new or empty)."),
    force: bool = typer.Option(False, "--force", help="Record into a folder that already holds a capture."),
):
    """Run a program and record every Triton kernel it compiles and launches.

    Records each kernel's source (file and line), specialization, constexprs,
    options, every stage and the binary, and for launches the grid and each
    argument's dtype/shape/strides/alignment (never the data) with a count;
    @triton.autotune runs (every config tried, the one chosen) too.  Each
    process or rank writes its own files; every write is atomic, so a crash
    leaves a valid capture.  A program that exits non-zero or is killed makes
    capture exit 14, with the program's status in the message (a signal N as
    a shell reports it, 128+N).

    Examples:

      tritonscope capture -o cap -- python train.py --steps 10

      tritonscope open cap

      tritonscope open cap --kernel triton_poi_fused_add_0 --recompile --arch sm_100a --diff
    """
    from tritonscope.inputs import capture
    from tritonscope.core.env import env_of

    env = env_of(ctx)
    result = capture.run(out, list(command or []), force=force)
    err = env.console(stderr=True)
    try:
        from tritonscope.inputs.sources import open_source

        found = open_source(result.folder)
        launched = sum(1 for e in found.entries if e.launches)
        err.print(f"tritonscope capture: {len(found.entries)} kernels recorded ({launched} launched) "
                  f"in {result.seconds:.1f} s -> {result.folder}")
        err.print(f"  list them: tritonscope open {result.folder}")
    except Exception as e:  # how the program ended matters more than our summary
        err.print(f"tritonscope capture: recorded into {result.folder} ({type(e).__name__}: {e})")
    ended = result.program_status()
    if ended is not None:
        from tritonscope.core.errors import ProgramFailedError

        raise ProgramFailedError(f"The program ({command[0]}) {ended}.",
                                 hint="Its own output is above; what it compiled before it stopped is recorded "
                                      "all the same.")
