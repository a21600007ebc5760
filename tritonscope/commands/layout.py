"""tritonscope layout: draw one layout encoding at a shape (no compile, no Triton)."""

from __future__ import annotations

from typing import Optional

import typer

from tritonscope.commands.options import ColorOpt, WidthOpt


def layout_cmd(
    ctx: typer.Context,
    encoding: str = typer.Argument(..., metavar="LAYOUT",
                                   help="A layout attribute as Triton prints it, e.g. '#ttg.blocked<{...}>'."),
    shape: str = typer.Option(..., "--shape", metavar="SHAPE",
                              help="Tensor shape, e.g. 16x16 (one size per layout dimension; a large one "
                                   "is drawn as a window, which the drawing says)."),
    hardware: bool = typer.Option(False, "--hardware", help="Also list, for each thread, the elements it holds."),
    cell: Optional[int] = typer.Option(None, "--cell", min=1, max=16,
                                       help="Cell width in characters (1-2: warp only, 3-5: thread, "
                                            "6-8: thread:register, 9+: warp/lane/register)."),
    elem_bits: int = typer.Option(16, "--elem-bits", help="Element width for shared-memory banks "
                                                           "(#swizzled_shared; #nvmma_shared carries its own)."),
    svg: Optional[str] = typer.Option(None, "--svg", help="Also write the drawing as SVG to this file."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing --svg file."),
    as_json: bool = typer.Option(False, "--json", help="Print the layout record (bases, facts) as JSON."),
    width: Optional[int] = WidthOpt,
    color: Optional[bool] = ColorOpt,
):
    """Draw who owns each element of a layout (or where it lands in shared memory).

    Examples:

      tritonscope layout '#ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>' --shape 16x16

      tritonscope layout '#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], instrShape = [16, 8]}>' --shape 16x16 --hardware

      tritonscope layout '#ttg.swizzled_shared<{vec = 8, perPhase = 4, maxPhase = 2, order = [1, 0]}>' --shape 16x16

      tritonscope layout '#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>' --shape 64x64 --cell 4 --svg nvmma.svg
    """
    import json

    from tritonscope.core.env import env_of
    from tritonscope.language.layouts import describe, parse_encoding, parse_shape
    from tritonscope.core.output import check_path, write_atomic
    from tritonscope.outputs.render.layout_view import layout_panel, layout_svg

    env = env_of(ctx).with_display(width=width, color=color)
    if svg:  # fail before drawing when the file cannot be written
        check_path(svg, force=force, formats={".svg": "svg"}, what="drawing")
    enc = parse_encoding(encoding, source="string")
    use = describe(enc, parse_shape(shape), elem_bits=elem_bits)
    if as_json:
        typer.echo(json.dumps(use.to_dict(), indent=1))
    else:
        console = env.console()
        console.print(layout_panel(use, width=console.width, cell=cell, hardware=hardware))
    if svg:
        write_atomic(svg, layout_svg(use), force=force)
