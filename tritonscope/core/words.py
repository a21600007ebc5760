"""How a field of a launch request is spelled in a message: the command line's words or the Python API's.

A check that refuses a value names the field it came from.  The command line
says `--num-warps 3`, `--arg x_ptr=banana`, `-c BLOCK=0`; the Python API says
`num_warps=3`, `args['x_ptr']='banana'`, `constexprs['BLOCK']=0`.  The check
words its message once, with `said(...)`, in the terms of whoever asked: the
API runs its checks inside `api_terms()`, everything else speaks the command
line's.  The error also carries the field as data (`field_data`), so a caller
can word it yet another way without parsing the text.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterator

_TERMS: ContextVar[str] = ContextVar("tritonscope_terms", default="cli")

# field -> its command-line option; a dict field's entries are "-c KEY=VALUE" / "--arg KEY=VALUE"
FLAGS = {
    "num_warps": "--num-warps", "num_stages": "--num-stages", "block": "--block", "arch": "--arch",
    "shape": "--shape", "dtype": "--dtype", "grid": "--grid", "config": "--config", "gpu": "--gpu",
    "timeout": "--timeout", "args": "--arg", "constexprs": "-c", "options": "-c",
}
# launch options with a flag of their own on the command line (the API passes them in options=)
OPTION_FLAGS = {"maxnreg": "--maxnreg", "num_ctas": "--num-ctas"}

_NOTHING = object()


def terms() -> str:
    """'cli' or 'api': whose words the messages made now use."""
    return _TERMS.get()


@contextmanager
def api_terms() -> Iterator[None]:
    """Messages made inside this block speak the Python API's keywords (num_warps=3), not the command line's."""
    token = _TERMS.set("api")
    try:
        yield
    finally:
        _TERMS.reset(token)


def said(field: str, value: Any = _NOTHING, *, key: str | None = None) -> str:
    """One field (and its value) as the current terms write it.

    said("num_warps", 3) -> '--num-warps 3' | 'num_warps=3'
    said("args", "banana", key="x_ptr") -> '--arg x_ptr=banana' | "args['x_ptr']='banana'"
    said("options", 64, key="maxnreg") -> '--maxnreg 64' | "options['maxnreg']=64"
    said("arch") -> '--arch' | 'arch'
    """
    if _TERMS.get() == "api":
        name = f"{field}[{key!r}]" if key is not None else field
        if value is _NOTHING:
            return name
        return f"{name}={value!r}" if key is not None or isinstance(value, str) else f"{name}={value}"
    if field == "options" and key in OPTION_FLAGS:
        return OPTION_FLAGS[key] if value is _NOTHING else f"{OPTION_FLAGS[key]} {value}"
    flag = FLAGS.get(field, f"--{field.replace('_', '-')}")
    if key is not None:
        return f"{flag} {key}" if value is _NOTHING else f"{flag} {key}={value}"
    return flag if value is _NOTHING else f"{flag} {value}"


def field_data(field: str, value: Any = _NOTHING, *, key: str | None = None) -> dict[str, Any]:
    """What an error about one field carries as data: {"field": ..., "key": ..., "value": ...}."""
    data: dict[str, Any] = {"field": field}
    if key is not None:
        data["key"] = key
    if value is not _NOTHING:
        data["value"] = value if isinstance(value, (int, float, str, bool, type(None))) else str(value)
    return data
