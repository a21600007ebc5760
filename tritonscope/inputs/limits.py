"""How large a file tritonscope reads: a light module (reports and stage files are both bounded by it, and
importing it loads nothing else of the inputs)."""

from __future__ import annotations

import os

# The largest report `show` reads (bytes): a big kernel's report is a few MB; reading a JSON file
# costs about twice its size in memory, so a stray huge file is refused before it is read.
# TRITONSCOPE_MAX_REPORT_MB raises (or lowers) it.
MAX_REPORT_BYTES = 256 << 20


def max_report_bytes() -> int:
    """The size limit, from TRITONSCOPE_MAX_REPORT_MB when set; a value that is no size is refused (exit 2).

    A typo must not silently stand for the default: the user who set it
    meant a limit of their own.
    """
    import math

    from tritonscope.core.errors import UsageError

    value = os.environ.get("TRITONSCOPE_MAX_REPORT_MB", "").strip()
    if not value:
        return MAX_REPORT_BYTES
    try:
        mb = float(value)
    except ValueError:
        mb = math.nan
    if not math.isfinite(mb) or mb <= 0:
        raise UsageError(f"TRITONSCOPE_MAX_REPORT_MB={value!r} is not a size in MB.",
                         hint="Set it to a positive number of megabytes, e.g. TRITONSCOPE_MAX_REPORT_MB=512, "
                              "or unset it for the default (256).")
    return int(mb * (1 << 20))
