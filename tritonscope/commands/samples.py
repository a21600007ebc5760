"""tritonscope samples: list the built-in kernels."""

from __future__ import annotations

import json
from typing import Optional

import typer

from tritonscope.commands.options import ColorOpt, WidthOpt


def samples_cmd(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print the list as JSON."),
    width: Optional[int] = WidthOpt,
    color: Optional[bool] = ColorOpt,
):
    """List the built-in sample kernels.

    Example: tritonscope samples
    """
    import ast

    from rich.table import Table

    from tritonscope.core.env import env_of
    from tritonscope.inputs.kernels import list_samples

    rows = []
    for s in list_samples():
        rows.append({"name": s.name, "kernel": s.kernel, "file": str(s.file), "description": s.description,
                     "defaults": _defaults(ast.parse(s.file.read_text()), s.kernel)})
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table(title="tritonscope samples")
    for col in ("name", "kernel", "defaults", "description"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["name"], r["kernel"], r["defaults"], r["description"])
    console = env_of(ctx).with_display(width=width, color=color).console()
    console.print(table)
    console.print(targets_table())


def targets_table():
    """Every --arch tritonscope knows, and whether the installed Triton has the backend to compile it."""
    from rich.table import Table

    from tritonscope import triton_api
    from tritonscope.core.model import ARCHES

    have = triton_api.installed_backends()
    version = triton_api.triton_version() if have else "not installed"
    table = Table(title=f"--arch targets (Triton {version}: backends {', '.join(have) or 'none'})")
    for col in ("arch", "vendor", "GPUs", "shared / LDS per block", "compiles here"):
        table.add_column(col)
    for a in ARCHES.values():
        backend = "nvidia" if a.backend == "cuda" else "amd"
        vendor = "NVIDIA" if a.backend == "cuda" else f"AMD {a.family}"
        table.add_row(a.name, vendor, a.gpus, f"{a.max_shared_per_block:,}", "yes" if backend in have else "no")
    return table


def _defaults(tree, kernel: str) -> str:
    """The literal defaults of the sample's EXAMPLES entry, read without executing it."""
    import ast

    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "EXAMPLES" for t in node.targets):
            for k, v in zip(node.value.keys, node.value.values):
                if isinstance(k, ast.Constant) and k.value == kernel and isinstance(v, ast.Dict):
                    out = []
                    for kk, vv in zip(v.keys, v.values):
                        if isinstance(kk, ast.Constant) and kk.value in ("shape", "dtype", "constexprs", "num_warps", "num_stages"):
                            try:
                                val = ast.literal_eval(vv)
                            except ValueError:
                                continue
                            if kk.value == "shape":
                                val = "x".join(map(str, val))
                            elif kk.value == "constexprs":
                                val = " ".join(f"{a}={b}" for a, b in val.items())
                            elif kk.value in ("num_warps", "num_stages"):
                                val = f"{kk.value}={val}"
                            out.append(str(val))
                    return " ".join(out)
    return ""
