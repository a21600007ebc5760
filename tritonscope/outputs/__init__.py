"""What goes out: terminal views, saved reports and their formats.

    report.py       the versioned JSON schema of saved reports (to_dict, from_dict, load); renders nothing
    sections.py     the report's sections, assembled once from an Analysis and the view options
    render/         how each section looks: terminal (page_view), text, Markdown, HTML, SVG and plots
    save.py         every --save: the one table of formats, the dispatch to a renderer, the atomic write
    portable.py     a report without the user's folders (paths written relative, unless --keep-paths)
    cached.py       a compile's Analysis, kept in (and read back from) its result-cache entry

Imports every layer below it; nothing below imports it.
"""
