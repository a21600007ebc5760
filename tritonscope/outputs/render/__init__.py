"""Renderers: Analysis -> terminal (rich), HTML, Markdown.  They never compile."""
