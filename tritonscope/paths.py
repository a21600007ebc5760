"""Path hygiene: stage texts carry absolute paths (loc(...), .file, //## File)."""

from __future__ import annotations

import os
import re


def relativize(text: str, folder: str, replacement: str = ".") -> str:
    """Rewrite every absolute path under `folder` as relative to it.

    '/home/u/k/matmul.py' with folder '/home/u/k' -> './matmul.py'.
    """
    folder = os.path.normpath(folder)
    if not folder or folder == os.sep:
        return text
    # "/home/u/k/matmul.py" and directory: "/home/u/k", but not "/home/u/kk/..."
    pattern = re.compile(re.escape(folder) + r"(?![\w.-])")
    return pattern.sub(replacement, text)
