"""What goes out: terminal views, saved reports and their formats.

    report.py       the versioned JSON schema of saved reports, and writing them
    render/         terminal, text, Markdown, HTML, SVG and plots of the data the analyses return

Imports every layer below it; nothing below imports it.
"""
