"""Choosing one kernel of a listing, and filtering and sorting the rows."""

from __future__ import annotations

import math
import re
from typing import Any

from tritonscope.core.errors import NotFoundError, UsageError, close_matches
from tritonscope.inputs.sources.model import KernelEntry, Source

# Choosing, filtering, sorting
# --------------------------------------------------------------------------

SORT_FIELDS = ("name", "arch", "config", "registers", "sgprs", "shared", "spills", "launches", "source", "key",
               "backend")


def find_entry(source: Source, wanted: str | None) -> KernelEntry:
    """The entry named by a kernel name or a (prefix of a) hash; the only one when `wanted` is None."""
    entries = source.entries
    if wanted is None:
        if len(entries) == 1:
            return entries[0]
        raise UsageError(f"{source.path} holds {len(entries)} kernels; name one with --kernel NAME or HASH.",
                         hint="Run `tritonscope open " + str(source.path) + "` to list them.")
    by_key = [e for e in entries if e.key.lower().startswith(wanted.lower()) or
              str(e.metadata.get("hash", "")).startswith(wanted.lower())]
    by_name = [e for e in entries if e.name == wanted]
    found = by_key or by_name
    if len(found) > 1:   # an Inductor name shared by autotuning's candidates: the one the output code runs
        ran = [e for e in found if getattr(e, "runs_in", "")]
        found = ran if len(ran) == 1 else found
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        keys = ", ".join(e.short_key for e in found[:8])
        raise UsageError(f"{len(found)} kernels match {wanted!r} ({keys}).",
                         hint="Name one by its hash (the first column of the listing).")
    raise NotFoundError(f"No kernel {wanted!r} in {source.path}."
                        f"{close_matches(wanted, sorted({e.name for e in entries}))}",
                        hint="Run `tritonscope open " + str(source.path) + "` to list its kernels.")


# name=matmul*   registers>100   arch=sm_90a   spills>0   source~layernorm
_WHERE_RE = re.compile(r"^\s*(\w+)\s*(>=|<=|!=|=|>|<|~)\s*(.*?)\s*$")


def _cut(text: str, width: int = 60) -> str:
    from tritonscope.inputs.values import shown_text

    return shown_text(text, width)


def filter_rows(rows: list[dict[str, Any]], where: list[str] | None) -> list[dict[str, Any]]:
    """Keep the rows matching every FIELD OP VALUE (=, !=, <, >, <=, >=; ~ for 'contains'; * globs)."""
    import fnmatch

    for cond in where or []:
        m = _WHERE_RE.match(cond)
        if not m or m.group(1) not in SORT_FIELDS:
            raise UsageError(f"Bad --where {_cut(cond)!r}.",
                             hint=f"Write FIELD OP VALUE with FIELD one of {', '.join(SORT_FIELDS)} and OP one of "
                                  "= != < > <= >= ~ (contains), e.g. --where 'registers>128' --where name=triton_*")
        name, op, value = m.groups()

        def keep(row, name=name, op=op, value=value) -> bool:
            have = row.get(name)
            if op == "~":
                return value.lower() in str(have or "").lower()
            if op in ("=", "!="):
                same = fnmatch.fnmatchcase(str(have), value) if have is not None else value.lower() in ("none", "?")
                return same if op == "=" else not same
            try:
                number = float(value)
            except ValueError:
                number = math.nan
            if math.isnan(number):  # 'nan' no number orders against: every row would silently go
                raise UsageError(f"--where {_cut(cond)!r}: {op} needs a number.") from None
            if have is None:
                return False
            if isinstance(have, str):  # name<5: was "TypeError: '<' not supported between 'str' and 'float'"
                raise UsageError(f"--where {_cut(cond)!r}: {name} is text; {op} compares numbers.",
                                 hint=f"Compare text with = or != (* globs) or ~ (contains), e.g. --where "
                                      f"'{name}~{_cut(value, 20)}'.")
            return {"<": have < number, ">": have > number, "<=": have <= number, ">=": have >= number}[op]

        rows = [r for r in rows if keep(r)]
    return rows


def sort_rows(rows: list[dict[str, Any]], by: str | None) -> list[dict[str, Any]]:
    if by is None:   # --sort '' is refused below (it was taken as no sort)
        return rows
    descending = by.startswith("-")
    key = by.lstrip("-+")
    if key not in SORT_FIELDS:
        raise UsageError(f"Unknown sort field {key!r}.{close_matches(key, SORT_FIELDS)}",
                         hint=f"Sort by one of: {', '.join(SORT_FIELDS)} (prefix - for descending).")
    present = [r for r in rows if r.get(key) is not None]
    absent = [r for r in rows if r.get(key) is None]
    return sorted(present, key=lambda r: r[key], reverse=descending) + absent


# --------------------------------------------------------------------------
