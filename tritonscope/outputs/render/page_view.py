"""A page of sections (outputs/sections.py) in the terminal: each section's rich renderable, in order.

`compile`/`show` print it; a saved .txt is the same, recorded without colour (render/text.py).
"""

from __future__ import annotations

from typing import Iterator

from tritonscope.analyses.analysis import Analysis


def page_renderables(analysis: Analysis, page, *, width: int, stage_width: int | None = None,
                     max_lines: int | None = None, hide: frozenset[str] | None = None) -> Iterator:
    """The terminal's look of each section of a page (sections.build), in the page's order.

    The instruction mix and Triton's remarks have no panel of their own here:
    the summary panel has a row for each, and the remarks are notes on their
    lines.  `width`: the console's; `stage_width`: where stage lines are cut
    before highlighting (None: not cut to the console, as a saved .txt);
    `max_lines`: per stage (None or 0: all).
    """
    from tritonscope.outputs.render import terminal, views

    for section in page.sections:
        kind, data = section.kind, section.data
        if kind == "summary":
            yield terminal.summary_panel(analysis, data)
        elif kind == "explain":
            from tritonscope.outputs.render.explain_view import explain_renderable

            yield explain_renderable(data, width, title="Explain")
        elif kind == "passes":
            from tritonscope.outputs.render.passes_view import pipeline_table

            yield pipeline_table(data, show_all=False, remarks=False)
        elif kind == "stage":
            yield terminal.stage_panel(analysis, data, width=stage_width, max_lines=max_lines, hide=hide)
        elif kind == "line":
            yield views.line_view(analysis, data.number, data.stages)
        elif kind == "side-by-side":
            yield views.side_by_side(analysis, data, width, hide=hide)
        elif kind == "walkthrough":
            yield views.walkthrough(analysis)
        elif kind == "mix-view":
            yield views.mix_view(analysis)
        elif kind == "layouts":
            from tritonscope.outputs.render.layout_view import layout_panels

            yield from layout_panels(analysis)
