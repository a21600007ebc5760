"""A sweep's rows as a table: sorted (--sort), filtered (--where), checked before any compile, saved (.csv, .json)."""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterable

from tritonscope.core.errors import UsageError
from tritonscope.measure.sweep.rows import SweepResult, SweepRow


SORT_KEYS = ("config", "shared", "registers", "spills", "occupancy", "blocks_per_sm", "time", "predicted")
_FIELD_ALIASES = {"time": "compile_seconds", "predicted": "predicted_ms", "pred": "predicted_ms", "smem": "shared", "regs": "registers", "occ": "occupancy",
                  "warps": "num_warps", "stages": "num_stages"}


def sort_rows(rows: list[SweepRow], key: str | None) -> list[SweepRow]:
    """Sort by a column ('-shared' for descending); rows without a value go last."""
    if not key:
        return rows
    desc = key.startswith("-")
    name = key.lstrip("-+")
    name = _FIELD_ALIASES.get(name, name)
    if name != "config" and name not in SweepRow.__dataclass_fields__ and not _is_constexpr(rows, name):
        raise UsageError(f"Cannot sort by {key!r}.",
                         hint="Sort by config, shared, registers, spills, occupancy, blocks_per_sm, time, "
                              "num_warps, num_stages or a constexpr (prefix - for descending).")

    def value(r: SweepRow):
        v = r.index if name == "config" else _field(r, name)
        return v

    def order(r: SweepRow):  # a constexpr of mixed kinds (ACT=relu,1): numbers, then text (was a TypeError)
        v = value(r)
        return (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v))

    present = [r for r in rows if value(r) is not None]
    missing = [r for r in rows if value(r) is None]
    return sorted(present, key=order, reverse=desc) + missing


def _is_constexpr(rows, name) -> bool:
    return any(name in r.constexprs for r in rows)


def _field(row: SweepRow, name: str):
    if name in row.constexprs:
        return row.constexprs[name]
    if name in row.options:  # maxnreg, num_ctas, enable_fp_fusion
        return row.options[name]
    if name.startswith("mix."):
        return row.mix.get(name[4:].replace("_", " "), 0)
    return getattr(row, name, None)


# shared<100000   registers>=128   BLOCK=64   num_warps!=8
_COND_RE = re.compile(r"^\s*([\w.]+)\s*(<=|>=|!=|==|=|<|>)\s*(\S+)\s*$")


def check_where_and_sort(where: list[str] | None, sort: str | None, constexprs: Iterable[str]) -> None:
    """Refuse (UsageError) a --where or --sort the rows could never answer, before any config compiles.

    `constexprs`: the constexpr names the configs set.  The same names are
    accepted here as by filter_rows and sort_rows once rows exist.
    """
    names = set(constexprs)

    def known(name: str) -> bool:
        name = _FIELD_ALIASES.get(name, name)
        return name in SweepRow.__dataclass_fields__ or name in names or name.startswith("mix.")

    for cond in where or []:
        c = cond.strip().lower()
        if c in _WORD_CONDITIONS:
            continue
        m = _COND_RE.match(cond)
        if not m:
            raise UsageError(f"Cannot read --where {cond!r}.", hint=_WHERE_HINT)
        if not known(m[1]):
            raise UsageError(f"Unknown field {m[1]!r} in --where {cond!r}.", hint=_FIELDS_HINT)
        name = _FIELD_ALIASES.get(m[1], m[1])
        if name in _NUMERIC_FIELDS or name.startswith("mix."):
            _number(cond, m[1], m[3])   # registers<abc: refused here, before any config compiles
    if sort is not None:   # --sort '' was taken as no sort
        name = sort.lstrip("-+")
        if name != "config" and not (known(name) and not name.startswith("mix.")):
            raise UsageError(f"Cannot sort by {sort!r}.", hint=_SORT_HINT)


_WORD_CONDITIONS = frozenset({"fits", "fit", "nofit", "!fits", "not-fits", "nofits", "ok", "compiled", "failed",
                              "fails", "error", "errors"})
_WHERE_HINT = "Use fits, nofit, ok, failed, or FIELD<op>VALUE such as shared<100000 or BLOCK=64."
_FIELDS_HINT = ("Fields: shared, registers, spills, occupancy, blocks_per_sm, time, num_warps, num_stages, "
                "mix.wgmma ..., or a constexpr name.")
_SORT_HINT = ("Sort by config, shared, registers, spills, occupancy, blocks_per_sm, time, num_warps, num_stages "
              "or a constexpr (prefix - for descending).")


# The row fields that hold numbers (a --where on one compares numbers)
_NUMERIC_FIELDS = frozenset(name for name, f in SweepRow.__dataclass_fields__.items()
                            if re.fullmatch(r"(int|float)( \| None)?", str(f.type)))


def _number(cond: str, field: str, text: str) -> float:
    """--where's VALUE for a number field: '1e3' is 1000; 'abc' and 'nan' (which no number equals or orders
    against) are a UsageError.  They were compared as text: "TypeError: '<' not supported between instances of
    'int' and 'str'", exit 1."""
    import math

    from tritonscope.inputs.values import shown_text

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if math.isnan(value):
        raise UsageError(f"--where {shown_text(cond)!r}: {field} is a number, and {shown_text(text, 30)!r} is none.",
                         hint=f"For example: --where '{field}<=128'.")
    return value


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def filter_rows(rows: list[SweepRow], where: list[str] | None) -> list[SweepRow]:
    """Keep rows matching every condition: fits, nofit, ok, failed, or FIELD<op>VALUE."""
    for cond in where or []:
        rows = [r for r in rows if _matches(r, cond)]
    return rows


def _matches(row: SweepRow, cond: str) -> bool:
    c = cond.strip().lower()
    if c in ("fits", "fit"):
        return bool(row.ok and row.fits)
    if c in ("nofit", "!fits", "not-fits", "nofits"):
        return bool(row.ok and not row.fits)
    if c in ("ok", "compiled"):
        return row.ok
    if c in ("failed", "fails", "error", "errors"):
        return not row.ok
    m = _COND_RE.match(cond)
    if not m:
        raise UsageError(f"Cannot read --where {cond!r}.",
                         hint="Use fits, nofit, ok, failed, or FIELD<op>VALUE such as shared<100000 or BLOCK=64.")
    name, op, text = m[1], m[2], m[3]
    name = _FIELD_ALIASES.get(name, name)
    if name not in SweepRow.__dataclass_fields__ and name not in row.constexprs and not name.startswith("mix."):
        raise UsageError(f"Unknown field {m[1]!r} in --where {cond!r}.",
                         hint="Fields: shared, registers, spills, occupancy, blocks_per_sm, time, num_warps, "
                              "num_stages, mix.wgmma ..., or a constexpr name.")
    value = _field(row, name)
    if value is None:
        return False
    if isinstance(value, bool):
        target: Any = text.lower() in ("1", "true", "yes")
    elif isinstance(value, (int, float)) and op in ("=", "==", "!=") and not _is_number(text):
        target = text   # ACT=relu on a row whose ACT is 1 (a constexpr of mixed kinds): not equal
    elif isinstance(value, (int, float)):  # a constexpr's number too: 'BLOCK<abc' is refused, not compared as text
        target = _number(cond, m[1], text)
    else:
        target = text
    import operator

    compare = {"<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge, "=": operator.eq,
               "==": operator.eq, "!=": operator.ne}[op]   # only the one asked: 1 < 'relu' is never evaluated for '='
    return compare(value, target)


def csv_text(result: SweepResult, rows: list[SweepRow] | None = None) -> str:
    rows = result.rows if rows is None else rows
    cx_names = list(dict.fromkeys(n for r in rows for n in r.constexprs))
    mix_names = list(dict.fromkeys(n for r in rows for n in r.mix))
    opt_names = list(dict.fromkeys(n for r in rows for n in r.options))  # only when a launch option was set
    head = ["config", *cx_names, "num_warps", "num_stages", "arch", "dtype", *opt_names, "ok", "fits", "shared_bytes",
            "shared_limit", "registers", "spill_bytes", "spill_stores", "spill_loads", "blocks_per_sm", "occupancy", "limited_by",
            *[f"mix:{m}" for m in mix_names], "problems", "error", "compile_seconds", "cached", "kernel_hash"]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(head)
    for r in rows:
        w.writerow([r.config, *[r.constexprs.get(n, "") for n in cx_names], r.num_warps, r.num_stages, r.arch,
                    r.dtype or "", *[_blank(r.options.get(n)) for n in opt_names], r.ok, "" if r.fits is None else r.fits, _blank(r.shared), _blank(r.shared_limit),
                    _blank(r.registers), _blank(r.spills), _blank(r.spill_stores), _blank(r.spill_loads),
                    _blank(r.blocks_per_sm),
                    "" if r.occupancy is None else f"{r.occupancy:.4f}", r.limited_by or "",
                    *[r.mix.get(m, 0) if r.ok else "" for m in mix_names], "; ".join(r.problems), r.error or "",
                    r.compile_seconds, r.cached, r.kernel_hash or ""])
    return buf.getvalue()


def _blank(v) -> Any:
    return "" if v is None else v


SAVE_FORMATS = {".csv": "csv", ".json": "json"}


def check_save_path(path: str, *, force: bool = False) -> str:
    """'csv' or 'json' for a --save path that can be written (checked before the sweep starts)."""
    from tritonscope.core.output import check_path

    return check_path(path, force=force, formats=SAVE_FORMATS, what="sweep")


def save_sweep(result: SweepResult, path: str, *, rows: list[SweepRow] | None = None, force: bool = False) -> Path:
    """Write the rows as .csv or .json through the one writer (atomic; never clobbers without force)."""
    from tritonscope.core.output import write_atomic

    if check_save_path(path, force=force) == "csv":
        text = csv_text(result, rows)
    else:
        data = result.to_dict()
        if rows is not None:
            data["rows"] = [asdict(r) for r in rows]
        text = json.dumps(data, indent=1) + "\n"
    return write_atomic(path, text, force=force)


def iter_mix_columns(rows: Iterable[SweepRow]) -> list[str]:
    """The mix classes worth a column (present in any row), in a stable order."""
    from tritonscope.language.dialects import order_classes

    return order_classes(m for r in rows for m in r.mix)
