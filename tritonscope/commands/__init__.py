"""One module per CLI command, each a plain function; cli.py registers them all.

Adding a command: write `commands/NAME.py` with `def NAME_cmd(ctx: typer.Context, ...)`
(typer options as defaults, a docstring as its --help; the shared options as the
named groups of options.py, composed with @composed), make its one Config with
`kernel.config(target)` and compile through `running.compile_config` / `pipeline`
(pipeline/compile_path.py), read the Env with `env.env_of(ctx)`, raise typed errors
(errors.py), write files through output.py, and add it to `cli.COMMANDS`.  Never
import tritonscope.cli here.

Imports every layer (it is the shell); nothing but cli.py imports it.
"""
