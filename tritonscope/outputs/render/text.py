"""A page of sections (sections.build) as plain text: the terminal's look, without colour, for a saved .txt."""

from __future__ import annotations

from tritonscope.analyses.analysis import Analysis

TEXT_WIDTH = 120  # columns of a saved .txt report


def render_text(analysis: Analysis, width: int = TEXT_WIDTH, *, hide: frozenset[str] | None = None,
                page=None) -> str:
    """The terminal's summary, verdicts, pass table and stage views, as plain text.

    `page`: the sections to draw (default: sections.build's report page, without layouts).
    Stage lines are not cut to `width` before highlighting (the console cuts them at its edge).
    """
    import io

    from tritonscope.core.sanitize import SafeConsole
    from tritonscope.outputs import sections
    from tritonscope.outputs.render.page_view import page_renderables

    page = page or sections.build(analysis, layouts=False)
    console = SafeConsole(file=io.StringIO(), width=width, no_color=True, color_system=None,
                          highlight=False, record=True, soft_wrap=False)
    for renderable in page_renderables(analysis, page, width=width, hide=hide):
        console.print(renderable)
    return console.export_text(styles=False)
