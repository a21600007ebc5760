"""The `tritonscope` command's entry point: a repeat's kept output (replay.py), else the typer app (cli.py)."""

from __future__ import annotations

import sys

# Commands that compile in this process (where Triton's cache key is worth starting early).
COMPILING = frozenset({"compile", "explain", "check", "diff", "bench"})


def compiles_here(argv: list[str]) -> bool:
    """Whether this command line may compile in this process (not help, not a --timeout child compile)."""
    return bool(argv) and argv[0] in COMPILING and not any(
        word in ("--help", "-h") or word.split("=", 1)[0] == "--timeout" for word in argv[1:])


def main() -> None:
    from tritonscope.pipeline import replay

    parts = replay.plan(sys.argv[1:])
    if parts is not None and replay.try_replay(parts):
        return
    if compiles_here(sys.argv[1:]):
        from tritonscope import triton_api

        triton_api.start_key_digest()  # Triton's cache key, hashed while typer and Triton load
    from tritonscope.cli import main as cli_main

    if parts is None:
        cli_main()
    else:
        replay.run_recorded(parts, cli_main)


if __name__ == "__main__":
    main()
