"""The grid a sweep compiles: the command line's axes (-c NAME=V1,V2, -w, -s, --arch, --dtype) -> Requests."""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

from tritonscope.core.errors import UsageError


def parse_axis(text: str, what: str) -> list[str]:
    """'16,32,64' -> ['16', '32', '64']."""
    values = [v.strip() for v in str(text).split(",") if v.strip()]
    if not values:
        raise UsageError(f"Empty list for {what}.", hint=f"Give values like {what} 16,32,64.")
    return values


def parse_constexpr_axes(items: list[str] | None) -> dict[str, list[str]]:
    """['BLOCK=16,32', 'X=1'] -> {'BLOCK': ['16', '32'], 'X': ['1']}.

    A name given twice is refused (the first axis would be dropped), and so is a number that is not the
    value read ('1e999' is inf): exit 2 before the kernel's file is loaded."""
    from tritonscope.inputs.values import check_number_text, parse_constexpr

    out: dict[str, list[str]] = {}
    for item in items or []:
        name, sep, values = item.partition("=")
        if not sep or not name.strip().isidentifier() or not values.strip():
            raise UsageError(f"Bad -c {item!r}: expected NAME=V1,V2,...", hint="For example: -c BLOCK=16,32,64")
        name = name.strip()
        if name in out:
            raise UsageError(f"-c {name} is given twice: {name}={','.join(out[name])} and {name}={values.strip()}.",
                             hint=f"Give each axis once, with all its values: -c {name}="
                                  f"{','.join(out[name])},{values.strip()}.")
        out[name] = parse_axis(values, f"-c {name}=")
        for text in out[name]:
            check_number_text("constexprs", name, text, parse_constexpr(text))
    return out


def parse_ints(values: list[str] | None, what: str) -> list[int] | None:
    if not values:
        return None
    try:
        return [int(v) for v in values]
    except ValueError:
        raise UsageError(f"{what} takes integers, got {','.join(values)}.", hint=f"For example: {what} 2,4,8") from None


def build_grid(base, *, constexprs: dict[str, list[str]], num_warps: list[int] | None,
               num_stages: list[int] | None, arches: list[str] | None, dtypes: list[str] | None,
               autotune: list[dict[str, Any]] | None = None) -> list:
    """Every combination, as Requests (the user's axes and launch options override autotune fields)."""
    seeds: list[dict[str, Any]] = autotune or [{"constexprs": {}, "num_warps": None, "num_stages": None}]
    names = list(constexprs)
    out, seen = [], set()
    for seed in seeds:
        for combo in itertools.product(*(constexprs[n] for n in names)):
            for w, s, arch, dt in itertools.product(num_warps or [seed["num_warps"]],
                                                    num_stages or [seed["num_stages"]],
                                                    arches or [base.arch], dtypes or [base.dtype]):
                cx = dict(base.constexprs or {})
                cx.update({k: str(v) for k, v in seed["constexprs"].items()})
                cx.update(zip(names, combo))
                options = {**(seed.get("options") or {}), **(base.options or {})}  # a Config's maxnreg= ...
                req = replace(base, constexprs=cx, num_warps=w if w is not None else base.num_warps,
                              num_stages=s if s is not None else base.num_stages, arch=arch, dtype=dt,
                              options=options)
                key = (tuple(sorted(cx.items())), req.num_warps, req.num_stages, arch, dt,
                       tuple(sorted(options.items())))
                if key not in seen:
                    seen.add(key)
                    out.append(req)
    return out
