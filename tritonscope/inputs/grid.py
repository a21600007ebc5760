"""--grid: a kernel's launch grid, as numbers or an expression in its arguments and constexprs.

    --grid 128                             one dimension
    --grid 32,8          --grid 32x8       two (up to three), as a launch's (x, y, z)
    --grid 'cdiv(n_rows, 1)'
    --grid 'cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)'
    --grid 'cdiv(x_ptr.numel(), BLOCK), 4'
    --grid "(triton.cdiv(n, META['BLOCK']),)"   a grid lambda's body, pasted as written

`parse_grid` reads the text once, before anything is compiled, and refuses
(UsageError, exit 2) what is not such an expression; `evaluate` gives the
grid for one launch's bound values (KernelSpecError, exit 4, for a name the
kernel does not have or a value that is no count of programs).

The text is never handed to Python's eval: it is parsed with `ast` and only
these forms are kept, as plain tuples that `evaluate` walks:

- whole numbers; names of arguments and constexprs; `META['NAME']` (any
  `word['NAME']`) for a constexpr, as a grid lambda reads it
- `+ - * // % **  << >>`, parentheses and unary minus.  `/` is refused, not
  taken as floor division: a launch grid of `n / BLOCK` is a float, which
  Triton refuses, so the user says `//` (round down) or `cdiv` (round up)
- `cdiv(a, b)` (Triton's ceiling division), `next_power_of_2(n)`, also
  spelled `triton.cdiv`, `tl.cdiv`, ...; `min(a, b, ...)`, `max(a, b, ...)`
- a tensor argument's size: `x_ptr.shape[i]`, `x_ptr.size(i)`,
  `x_ptr.numel()` (a `.T` view's shape is the view's, as the stand-in's)

Limits keep a hostile expression a clean error: at most MAX_TEXT
characters, MAX_DEPTH levels of nesting and MAX_NODES terms; every value on
the way stays under 2**63, and each dimension is 1 .. 2**31-1 programs.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from tritonscope.core.errors import KernelSpecError, UsageError, close_matches

MAX_TEXT = 500            # characters (real grids are a few dozen)
MAX_DEPTH = 32            # nesting of operators, calls and parentheses
MAX_NODES = 200           # terms and operators in all
MAX_DIMS = 3
MAX_DIM = 2**31 - 1       # a launch's largest grid dimension (CUDA's x; Triton passes each as a 32-bit int)
_MAX_VALUE = 2**63        # any value on the way

FUNCTIONS = {"cdiv": 2, "next_power_of_2": 1, "min": None, "max": None}   # name -> number of arguments
_MODULES = ("triton", "tl", "triton.language")   # triton.cdiv, tl.cdiv, triton.language.cdiv
_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
              ast.LShift: "<<", ast.RShift: ">>"}
_HINT = ("A grid is up to 3 comma-separated numbers or expressions in the kernel's arguments and constexprs: "
         "+ - * // % **, parentheses, cdiv(a, b), min, max, next_power_of_2, x_ptr.shape[i], x_ptr.numel(); "
         "e.g. --grid 128, --grid 32,8, --grid 'cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)'.")
# 32x8   64x64x2   (the --shape spelling of plain numbers)
_TIMES_RE = re.compile(r"^\s*\d+(?:\s*x\s*\d+){1,2}\s*$")

# A parsed dimension is a tree of tuples:
#   ("num", 128)  ("name", "BLOCK")  ("dim", "x_ptr", 0)  ("numel", "x_ptr")
#   ("neg", node)  ("op", "+", left, right)  ("call", "cdiv", (node, node))


@dataclass(frozen=True)
class GridSpec:
    """A parsed --grid: its text as given and one expression tree per dimension (1 to 3)."""

    text: str
    dims: tuple[tuple, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """The argument and constexpr names it reads, in order of first use."""
        out: list[str] = []
        for d in self.dims:
            _names(d, out)
        return tuple(out)

    @property
    def constant(self) -> tuple[int, ...] | None:
        """The grid when it reads no name (`--grid 32,8`), else None."""
        return None if self.names else tuple(_dimension(self, i, {}, UsageError) for i in range(len(self.dims)))

    def __str__(self) -> str:
        return self.text


def _shown(text: str) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _named(text: str | None = None) -> str:
    """The grid as the current terms write it: "--grid '0'" on the command line, "grid='0'" in the Python API
    (whose messages said '--grid', an option the API has not)."""
    from tritonscope.core.words import terms

    if terms() == "api":
        return "grid" if text is None else f"grid={_shown(text)}"
    return "--grid" if text is None else f"--grid {_shown(text)}"


def parse_grid(text: str) -> GridSpec:
    """--grid's text -> GridSpec, checked before any compile: a bad expression is a UsageError (exit 2) naming
    what is wrong.  A grid of numbers alone is evaluated here too (`--grid 0` is refused now, not later)."""
    if not isinstance(text, str) or not text.strip():
        raise UsageError(f"{_named()} is empty.", hint=_HINT)
    if len(text) > MAX_TEXT:
        raise UsageError(f"{_named()} is {len(text)} characters long; a launch grid takes at most {MAX_TEXT}.",
                         hint=_HINT)
    source = text.strip()
    if _TIMES_RE.match(source):  # 32x8: --shape's spelling of numbers
        source = source.replace("x", ",")
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        where = f" (at column {e.offset})" if isinstance(e, SyntaxError) and e.offset else ""
        reason = e.msg if isinstance(e, SyntaxError) and e.msg else "not an expression"
        raise UsageError(f"{_named(text)} is not an expression{where}: {reason}.", hint=_HINT) from None
    body = tree.body
    parts = list(body.elts) if isinstance(body, (ast.Tuple, ast.List)) else [body]
    if not parts:
        raise UsageError(f"{_named(text)} has no dimension.", hint=_HINT)
    if len(parts) > MAX_DIMS:
        raise UsageError(f"{_named(text)} has {len(parts)} dimensions; a launch grid has at most 3 "
                         "(x, y, z).", hint=_HINT)
    count = [0]
    spec = GridSpec(text.strip(), tuple(_node(p, text, 0, count) for p in parts))
    if not spec.names:  # numbers alone: each dimension checked now (--grid 0 fails before any compile)
        for i in range(len(spec.dims)):
            _dimension(spec, i, {}, UsageError)
    return spec


def _node(n: ast.AST, text: str, depth: int, count: list[int]) -> tuple:
    """One Python AST node -> the tree evaluate walks; anything else is refused, naming it."""
    def refuse(what: str, hint: str = _HINT):
        raise UsageError(f"{_named(text)}: {what}.", hint=hint)

    count[0] += 1
    if depth > MAX_DEPTH:
        refuse(f"nested more than {MAX_DEPTH} levels deep")
    if count[0] > MAX_NODES:
        refuse(f"more than {MAX_NODES} terms")
    if isinstance(n, ast.Constant):
        v = n.value
        if isinstance(v, int) and not isinstance(v, bool):
            if v >= _MAX_VALUE:
                refuse(f"{v} is too large")
            return ("num", v)
        if isinstance(v, float):
            refuse(f"{v!r} is not a whole number",
                   "A launch grid counts programs: use // (rounds down) or cdiv(a, b) (rounds up).")
        refuse(f"{v!r} is not a number")
    if isinstance(n, ast.Name):
        return ("name", n.id)
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
        inner = _node(n.operand, text, depth + 1, count)
        return ("neg", inner) if isinstance(n.op, ast.USub) else inner
    if isinstance(n, ast.BinOp):
        if isinstance(n.op, ast.Div):
            refuse("'/' makes a float, and a launch grid is whole numbers",
                   "Write a // b (rounds down) or cdiv(a, b) (rounds up, as triton.cdiv).")
        op = _OPERATORS.get(type(n.op))
        if op is None:
            refuse(f"the operator {type(n.op).__name__} is not taken")
        return ("op", op, _node(n.left, text, depth + 1, count), _node(n.right, text, depth + 1, count))
    if isinstance(n, ast.Subscript):
        key = n.slice
        # META['BLOCK_SIZE']: a grid lambda's read of a constexpr
        if isinstance(n.value, ast.Name) and isinstance(key, ast.Constant) and isinstance(key.value, str):
            if not key.value.isidentifier():
                refuse(f"{key.value!r} is not a name")
            return ("name", key.value)
        # x_ptr.shape[0]
        if (isinstance(n.value, ast.Attribute) and n.value.attr == "shape" and isinstance(n.value.value, ast.Name)):
            return ("dim", n.value.value.id, _index(key, text))
        refuse("only x.shape[i] (a tensor argument's size) and META['NAME'] (a constexpr) may be indexed")
    if isinstance(n, ast.Call):
        if n.keywords:
            refuse("keyword arguments are not taken")
        func = n.func
        # x_ptr.numel(), x_ptr.size(0)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.attr in ("numel", "size") \
                and func.value.id not in _MODULES:
            if func.attr == "numel" and not n.args:
                return ("numel", func.value.id)
            if func.attr == "size" and len(n.args) == 1:
                return ("dim", func.value.id, _index(n.args[0], text))
            refuse(f"{func.value.id}.{func.attr}() takes " + ("no argument" if func.attr == "numel" else "one index"))
        name = _function_name(func)
        if name not in FUNCTIONS:
            shown = ast.unparse(func) if len(ast.unparse(func)) < 40 else "this function"
            refuse(f"{shown}() is not one of the functions a grid may call: "
                   + ", ".join(FUNCTIONS) + close_matches(shown.rpartition(".")[2], FUNCTIONS))
        wants = FUNCTIONS[name]
        if (wants is not None and len(n.args) != wants) or (wants is None and len(n.args) < 2):
            refuse(f"{name}() takes {wants if wants is not None else 'two or more'} "
                   f"argument{'s' if wants != 1 else ''}, not {len(n.args)}")
        if any(isinstance(a, ast.Starred) for a in n.args):
            refuse(f"{name}(*...) is not taken")
        return ("call", name, tuple(_node(a, text, depth + 1, count) for a in n.args))
    if isinstance(n, (ast.Tuple, ast.List)):
        refuse("a grid's dimensions are separated by commas at the top level only")
    what = {ast.Attribute: "attribute access (only x.shape[i], x.numel(), triton.cdiv(...))",
            ast.Compare: "a comparison", ast.BoolOp: "and/or", ast.IfExp: "if/else", ast.Lambda: "a lambda",
            ast.JoinedStr: "an f-string"}.get(type(n), type(n).__name__)
    refuse(f"{what} is not taken in a grid")
    raise AssertionError("unreachable")


def _index(n: ast.AST, text: str) -> int:
    """The index of x.shape[i] / x.size(i): a whole number, maybe negative."""
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub) and isinstance(n.operand, ast.Constant) \
            and type(n.operand.value) is int:
        return -n.operand.value
    if isinstance(n, ast.Constant) and type(n.value) is int:
        return n.value
    raise UsageError(f"{_named(text)}: a tensor's dimension is a number (x.shape[0], x.shape[-1]).",
                     hint=_HINT)


def _function_name(func: ast.AST) -> str | None:
    """cdiv, triton.cdiv, tl.cdiv, triton.language.cdiv -> 'cdiv'; min/max only bare."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and func.attr in ("cdiv", "next_power_of_2"):
        try:
            module = ast.unparse(func.value)
        except Exception:  # pragma: no cover - ast.unparse of a parsed node
            return None
        return func.attr if module in _MODULES else None
    return None


def _names(node: tuple, out: list[str]) -> None:
    kind = node[0]
    if kind in ("name", "dim", "numel"):
        if node[1] not in out:
            out.append(node[1])
    elif kind == "neg":
        _names(node[1], out)
    elif kind == "op":
        _names(node[2], out)
        _names(node[3], out)
    elif kind == "call":
        for a in node[2]:
            _names(a, out)


# --------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------


def evaluate(grid: GridSpec | str, values: dict[str, Any], *, kernel: str | None = None) -> tuple[int, ...]:
    """The launch grid for one launch's bound values: a tuple of 1 to 3 ints, each 1 .. 2**31-1.

    `values`: the kernel's arguments and constexprs by name, as binding holds
    them: ints (bools count as 0/1), tensors as TensorArg / DescArg (or their
    --arg text, "fp16[4096,128]"; or any object with a .shape), and other
    values that a grid cannot read (a float, a string constexpr), named in
    the error if the grid uses them.  A name the kernel lacks, a value that
    is no number, a division by zero or a dimension outside 1 .. 2**31-1 is
    a KernelSpecError (exit 4) that says which and lists the names there are.
    """
    spec = parse_grid(grid) if isinstance(grid, str) else grid
    for name in spec.names:
        if name not in values:
            raise KernelSpecError(
                f"{_named(spec.text)}: {kernel or 'the kernel'} has no argument or constexpr "
                f"named {name!r}.{close_matches(name, values)}",
                hint=f"Names a grid may use: {available(values)}.")
    return tuple(_dimension(spec, i, values, KernelSpecError) for i in range(len(spec.dims)))


def available(values: dict[str, Any]) -> str:
    """'n (4096), BLOCK (1024), x_ptr (fp16[4096,128]: x_ptr.shape[i], x_ptr.numel())': what a grid may read."""
    words = []
    for name, value in values.items():
        if _shape_of(value) is not None:
            words.append(f"{name} ({_text(value)}: {name}.shape[i], {name}.numel())")
        else:
            words.append(f"{name} ({_text(value)})")
    return ", ".join(words) if words else "none (the kernel takes no arguments)"


def _text(value: Any) -> str:
    """A value as the user spelled it (an --arg's text, a TensorArg's), cut to 40 characters."""
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _dimension(spec: GridSpec, i: int, values: dict[str, Any], error: type) -> int:
    """Dimension i of the grid: its value, checked to be a count of programs."""
    try:
        value = _eval(spec.dims[i], values)
    except _Problem as e:
        raise error(f"{_named(spec.text)}: {e}.", hint=_used(spec.dims[i], values) or _HINT) from None
    if not 1 <= value <= MAX_DIM:
        which = "xyz"[i] if len(spec.dims) > 1 else ""
        raise error(f"{_named(spec.text)}: the grid's {which + ' ' if which else ''}dimension is {value}; "
                    f"a launch runs 1 to {MAX_DIM} programs along it"
                    + (" (a grid of 0 launches nothing)" if value == 0 else "") + ".",
                    hint=_used(spec.dims[i], values) or _HINT)
    return value


def _used(node: tuple, values: dict[str, Any]) -> str:
    """'n = 0, BLOCK = 1024': the values a dimension read (for its error's hint)."""
    names: list[str] = []
    _names(node, names)
    shown = [f"{n} = {_text(values[n])}" for n in names if n in values]
    return ("Its values here: " + ", ".join(shown) + ".") if shown else ""


class _Problem(Exception):
    """A value a grid cannot take (the message names it); _dimension words the error."""


def _eval(node: tuple, values: dict[str, Any]) -> int:
    kind = node[0]
    if kind == "num":
        return node[1]
    if kind == "name":
        return _number(node[1], values[node[1]])
    if kind == "dim":
        shape = _tensor_shape(node[1], values[node[1]])
        if not -len(shape) <= node[2] < len(shape):
            raise _Problem(f"{node[1]} has {len(shape)} dimension{'s' if len(shape) != 1 else ''} "
                           f"({_text(values[node[1]])}), so {node[1]}.shape[{node[2]}] is out of range")
        return _checked(shape[node[2]])
    if kind == "numel":
        total = 1
        for d in _tensor_shape(node[1], values[node[1]]):
            total *= d
        return _checked(total)
    if kind == "neg":
        return _checked(-_eval(node[1], values))
    if kind == "op":
        return _apply(node[1], _eval(node[2], values), _eval(node[3], values))
    if kind == "call":
        args = [_eval(a, values) for a in node[2]]
        name = node[1]
        if name == "cdiv":
            if args[1] == 0:
                raise _Problem("cdiv(a, b) with b = 0 divides by zero")
            return _checked((args[0] + args[1] - 1) // args[1])   # triton.cdiv
        if name == "next_power_of_2":
            n = args[0]
            return 0 if n <= 0 else _checked(1 << (n - 1).bit_length())   # triton.next_power_of_2
        return min(args) if name == "min" else max(args)
    raise AssertionError(kind)


def _apply(op: str, a: int, b: int) -> int:
    if op in ("//", "%") and b == 0:
        raise _Problem(f"a {op} 0 divides by zero")
    if op == "**" and not 0 <= b <= 64:
        raise _Problem(f"{a} ** {b}: the exponent must be 0 to 64")
    if op in ("<<", ">>") and not 0 <= b <= 63:
        raise _Problem(f"{a} {op} {b}: a shift must be 0 to 63 bits")
    if op == "**" and abs(a) > 1 and b * (abs(a).bit_length() - 1) >= 63:
        raise _Problem(f"{a} ** {b} grows past 2**63")
    result = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "//": lambda: a // b,
              "%": lambda: a % b, "**": lambda: a ** b, "<<": lambda: a << b, ">>": lambda: a >> b}[op]()
    return _checked(result)


def _checked(value: int) -> int:
    if abs(value) >= _MAX_VALUE:
        raise _Problem("a value grows past 2**63")
    return value


def _as_value(value: Any) -> Any:
    """An --arg/-c text ('4096', 'fp16[32,32]') as its value; a tl.constexpr unwrapped; anything else as is."""
    if isinstance(value, str):
        from tritonscope.inputs.kernels import parse_arg_value

        try:
            return parse_arg_value(value)
        except Exception:  # not an argument's spelling: a string constexpr
            return value
    if type(value).__name__ == "constexpr" and hasattr(value, "value"):
        return _as_value(value.value)
    return value


def _number(name: str, value: Any) -> int:
    value = _as_value(value)
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return _checked(value)
    if _shape_of(value) is not None or type(value).__name__ in ("TensorArg", "DescArg"):
        raise _Problem(f"{name} is a tensor ({_text(value)}), not a number: use {name}.shape[i] or {name}.numel()")
    if value is None:
        raise _Problem(f"{name} is none, not a number")
    if isinstance(value, float):
        raise _Problem(f"{name} is {value!r}, not a whole number")
    raise _Problem(f"{name} is {value!r}, not a number" if isinstance(value, str) else
                   f"{name} is {_text(value)}, not a number")


def _shape_of(value: Any) -> tuple[int, ...] | None:
    """A tensor's shape as its kernel sees it (a .T view's reversed, as the stand-in's), else None."""
    value = _as_value(value)
    kind = type(value).__name__
    if kind == "TensorArg":
        if value.shape is None:
            return None
        return tuple(reversed(value.shape)) if value.transposed else tuple(value.shape)
    if kind == "DescArg":
        return tuple(value.shape) if value.shape is not None else None
    shape = getattr(value, "shape", None)
    if shape is None or isinstance(value, (str, bytes, int, float)):
        return None
    try:
        return tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        return None


def _tensor_shape(name: str, value: Any) -> tuple[int, ...]:
    shape = _shape_of(value)
    if shape is not None:
        return shape
    value = _as_value(value)
    kind = type(value).__name__
    if kind == "TensorArg":
        raise _Problem(f"{name} is a bare pointer ({value}), which has no shape: describe it as "
                       f"--arg {name}={value.dtype}[dims]")
    if kind == "DescArg":
        raise _Problem(f"{name} is a descriptor in Triton's spelling ({value}), which names no tensor shape: "
                       f"describe it as desc({value.dtype}[dims],[block])")
    raise _Problem(f"{name} is {_text(value)}, not a tensor: only a tensor argument has a shape")
