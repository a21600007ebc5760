"""Triton's remarks of a compile, kept by kernel hash, so that a compile its cache answered still has them.

Triton prints its remarks (and warnings) only when it compiles; a cache hit
prints nothing.  A compile that ran stores what it printed here, under
<cache>/remarks/<kernel hash>.json, with the kernel's file: the hash covers
every input of the compile but the file name, so remarks kept for another
file count as none.
"""

from __future__ import annotations

import json
import os

from tritonscope.core.env import cache_dir
from tritonscope.core.output import write_cache


def kept_remarks(compiled, file: str) -> list[dict] | None:
    """Triton's remarks for this compile; None when its cache answered and none were kept.

    A compile that ran (cache_hit False, or unknown with remarks printed)
    stores them and gives them back; a cache hit gives what was kept for this
    file, or None.
    """
    path = cache_dir() / "remarks" / f"{compiled.kernel_hash}.json"
    if compiled.cache_hit is False or (compiled.cache_hit is None and compiled.remarks):
        if compiled.kernel_hash:
            write_cache(path, json.dumps({"file": os.path.realpath(file), "remarks": compiled.remarks}))
        return list(compiled.remarks)
    from tritonscope.core.cache_prune import load_entry, touch

    kept = load_entry(path)
    if not isinstance(kept, dict) or kept.get("file") != os.path.realpath(file) \
            or not isinstance(kept.get("remarks"), list):
        return None
    touch(path)  # it answered: used now
    return kept["remarks"]
