"""The `tritonscope` command's entry point: a repeat's kept output (replay.py), else the typer app (cli.py)."""

from __future__ import annotations

import sys


def main() -> None:
    from tritonscope import replay

    parts = replay.plan(sys.argv[1:])
    if parts is not None and replay.try_replay(parts):
        return
    from tritonscope.cli import main as cli_main

    if parts is None:
        cli_main()
    else:
        replay.run_recorded(parts, cli_main)


if __name__ == "__main__":
    main()
