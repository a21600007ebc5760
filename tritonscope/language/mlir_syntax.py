"""The one reader of MLIR attribute and type syntax (TTIR / TTGIR).

Everything in tritonscope that looks inside an MLIR attribute or type goes
through this module: the MLIR dialect (locations, `split_top`), the encoding
notes (`encodings.py`), the layout engine (`layouts.py`) and the diff's
"encodings by tensor role" (`diff.roles_of`).  What each encoding *means*
lives in those modules; this one only knows the syntax:

    #blocked = #ttg.blocked<{sizePerThread = [1, 2], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
    #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>               nested attribute, alias reference
    #ttng.tensor_memory_encoding<blockM = 128, blockN = 128, colStride = 1>     parameters without braces
    #ttg.padded_shared<[64:+4] {order = [1, 0], shape = [16, 64]}>        positional list of intervals
    #ttg.shared_linear<{offset = [[0, 1], [1, 0]]}, alignment = 16>       a dictionary, then more parameters
    #ttg.amd_wmma<{version = 1, ctaLayout = {register = [], warp = []}}>  dictionary values
    tensor<16x16x!tt.ptr<f16>, #blocked>     !ttg.memdesc<2x16x16xf16, #shared, #smem, mutable>

A syntactically valid attribute always parses, into an `Attribute(dialect,
name, params, args)` record, whether or not anything in tritonscope knows the
encoding: deciding what is supported is the consumer's job.  Only text that
is not MLIR syntax raises `MlirSyntaxError` (an `InputFileError`, exit code
7) saying where reading stopped.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, Iterator

from tritonscope.core.errors import InputFileError

_OPEN_SET = frozenset("([{<")
_CLOSE_SET = frozenset(")]}>")

# ==========================================================================
# Splitting and locations (plain text, no parsing)
# ==========================================================================


# "a string, with \"escapes\""   ->   (   ]   <   (what bracket matching looks at; '->' closes nothing)
_BRACKET_TOKENS = r'"(?:[^"\\]|\\.)*"?|->|[()\[\]{}<>]'
_BRACKETS = re.compile(_BRACKET_TOKENS)


@functools.lru_cache(maxsize=32)
def _scanner(seps: tuple[str, ...]) -> re.Pattern:
    alternatives = [re.escape(s) for s in sorted(seps, key=len, reverse=True)]
    return re.compile("|".join(alternatives + [_BRACKET_TOKENS]))


def split_top(text: str, seps: tuple[str, ...] = (",",)) -> list[str]:
    """Split `text` on any of `seps` outside (), [], {}, <> and strings; parts are stripped.

        split_top("16x16xf16, #ttg.slice<{dim = 1, parent = #b}>")
            -> ["16x16xf16", "#ttg.slice<{dim = 1, parent = #b}>"]
        split_top("tensor<..> * tensor<..> -> tensor<..>", (" * ", " -> "))
            -> three types

    The `>` of an arrow `->` closes nothing. Like `str.split`, a trailing
    separator leaves an empty last part; empty text gives [].
    """
    if isinstance(seps, str):
        seps = (seps,)
    if not text.strip():
        return []
    parts: list[str] = []
    depth = start = 0
    for m in _scanner(tuple(seps)).finditer(text):
        tok = m.group()
        if tok in _OPEN_SET:
            depth += 1
        elif tok in _CLOSE_SET:
            depth -= 1
        elif depth == 0 and tok in seps:
            parts.append(text[start:m.start()].strip())
            start = m.end()
    parts.append(text[start:].strip())
    return parts


def _close_of(text: str, i: int) -> int:
    """Index of the bracket that closes text[i] (one of ([{<), or -1; skips strings and '->'."""
    depth = 0
    for m in _BRACKETS.finditer(text, i):
        tok = m.group()
        if tok in _OPEN_SET:
            depth += 1
        elif tok in _CLOSE_SET:
            depth -= 1
            if depth == 0:
                return m.start()
    return -1


def strip_locs(line: str) -> tuple[str, list[str]]:
    """Remove every ` loc(...)` (balanced) from a line; return the text and the loc bodies.

        '%x = tt.get_program_id x : i32 loc(#loc2)'  ->  ('%x = tt.get_program_id x : i32', ['#loc2'])
    """
    if "loc(" not in line:
        return line, []
    out, bodies, i = [], [], 0
    while True:
        j = line.find("loc(", i)
        if j < 0 or (j > 0 and (line[j - 1].isalnum() or line[j - 1] in "_#.")):
            if j < 0:
                out.append(line[i:])
                break
            out.append(line[i:j + 4])
            i = j + 4
            continue
        # walk to the matching parenthesis, skipping strings
        depth, k, in_str = 0, j + 3, False
        while k < len(line):
            ch = line[k]
            if in_str:
                if ch == "\\":
                    k += 1
                elif ch == '"':
                    in_str = False
            elif ch == '"':
                in_str = True
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        start = j
        while start > i and line[start - 1] == " ":
            start -= 1
        out.append(line[i:start])
        bodies.append(line[j + 4:k])
        i = k + 1
    return "".join(out).rstrip(), bodies


# ==========================================================================
# Op names and locations: the one definition of each pattern (dialects/mlir,
# explain, passes and the stage-file readers all use these)
# ==========================================================================

# %a_23 = ttg.async_copy_global_to_local %a_20, %a_21 ...     %22:3 = scf.for %arg9 = %c0 to %K step %c16
# %5 = "tt.reduce"(%4) <{axis = 0 : i32}> ({      tt.return      %-1_i32 = arith.constant -1 : i32
# (group 1 is the op name; op names may hold digits: ttng.tc_gen5_mma, math.exp2; a name must end the
# op word, so the quoted attribute key "ttg.num-warps" is no op)
OP = re.compile(r'^\s*(?:%[\w$.#:-]+(?:\s*,\s*%[\w$.#:-]+)*\s*=\s*)?"?([a-z_][\w$]*\.[a-z_][\w.$]*)"?(?=[\s(<{]|$)')
# tt.dot   ttng.warp_group_dot   (a whole string that is an op name, as a query gives it)
OP_NAME = re.compile(r"^[a-z_][\w$]*\.[a-z_][\w.$]*$")


def op_name(line: str) -> str | None:
    """The op a line of MLIR holds ("tt.dot"), or None for attributes, braces and blank lines."""
    m = OP.match(line)
    return m.group(1) if m else None


# loc(#loc35)   loc("a_ptr"(#loc))   loc(callsite(#loc20 at #loc21))   loc("/k.py":8:1)
# (with the space before it, nested up to four levels: the fast remover of passes' dumps)
LOC = re.compile(r"\s?loc\((?:[^()]|\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\))*\)")
# #loc12 = loc("a"(#loc3))      (group 1 the alias, group 2 the expression inside loc(...))
LOC_DEF = re.compile(r"^\s*(#loc\d*)\s*=\s*loc\((.*)\)\s*$")
# "./matmul.py":17:21   (3.9 may also write a range: "f.py":17:21 to 17:30)
FILE_POS = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')
# #loc35   (a reference to a location alias, inside a loc expression)
LOC_REF = re.compile(r"#loc\d*\b")
# #loc = loc("/home/u/kernels/matmul.py":8:1)   (the first file location of a module: the kernel's def)
FIRST_FILE_LOC = re.compile(r'^#loc\d* = loc\("([^"]+)":(\d+):\d+\)', re.M)
# #loc = loc("/home/u/kernels/matmul.py":8:1)   (a .py file a module's locations name: its kernel file)
KERNEL_FILE_LOC = re.compile(r'^#loc\d* = loc\("([^"]+\.py)":\d+:\d+\)', re.MULTILINE)
# #ttg.nvidia_mma<{versionMajor = 2, ...}>  ->  nvidia_mma   (an encoding attribute's name)
ENCODING_NAME = re.compile(r"^#\w+\.(\w+)")
# %a_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc("a_ptr"(#loc))   (a function argument, and its name)
FUNC_ARG = re.compile(r"%([\w$.-]+):\s")
ARG_NAME_LOC = re.compile(r'loc\("([\w$.]+)"')

# module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", ...
# module attributes {..., ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32}
TTGIR_MODULE_ATTR = re.compile(r'"?ttg\.(num-warps|num-ctas|target|threads-per-warp)"?\s*=\s*'
                               r'(?:"(cuda|hip):(\w+)"|(\d+))')

# tt.func public @k(%x_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32} loc(...), %n: i32 loc(...))   (group 1)
FUNC_ARGS = re.compile(r"tt\.func\s+(?:public\s+)?@[\w$.]+\((.*?)\)\s*(?:attributes|\{|->)", re.S)
# %x_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}    (name, type, pointee, attributes)
TYPED_ARG = re.compile(r"%([\w$.]+)\s*:\s*(!tt\.ptr<\s*([\w]+)[^>]*>|[\w]+)\s*(\{[^}]*\})?")
# A loop whose values Triton's parser renames when it reads IR text back:
#   %acc = scf.for %k = %c0_i32 to %K step %c32_i32 iter_args(%acc_1 = %cst) -> (tensor<32x32xf32>)  : i32 {
LOOP_OP = re.compile(r"\bscf\.(?:for|while)\b")

# What versions' speed figures count in a TTGIR.  Triton 3.2 spells the GPU dialects triton_gpu /
# triton_nvidia_gpu (3.3 renamed them ttg / ttng): both are read.
# %34 = ttg.convert_layout %33 : tensor<...>          (3.2: triton_gpu.convert_layout)
CONVERT_LAYOUT_OP = re.compile(r"\b(?:ttg|triton_gpu)\.convert_layout\b")
# #blocked1 = #ttg.blocked<{...}>     #mma = #ttg.amd_mfma<{...}>    #shared = #triton_gpu.shared<...> (3.2)
ENCODING_KIND = re.compile(r"^#\w+\s*=\s*#(?:ttg|ttng|ttg\.amd|amdgpu|triton_gpu|triton_nvidia_gpu)\.(\w+)<", re.M)
# ttg.async_copy_global_to_local, amdgpu.buffer_load_to_local, ttng.async_tma_copy_global_to_local
ASYNC_COPY_OPS = re.compile(r"\b(?:(?:ttg|triton_gpu)\.async_copy_global_to_local|amdgpu\.buffer_load_to_local|"
                            r"(?:ttng|triton_nvidia_gpu)\.async_tma_copy_global_to_local|ttng\.async_tma_gather)\b")
# amdgpu.buffer_load / tt.load (loads into registers at the TTGIR level)
BUFFER_LOAD_OP = re.compile(r"\bamdgpu\.buffer_load\b(?!_to_local)")
LOAD_OP = re.compile(r"=\s*tt\.load\b")

# What diff reads to name tensors by role
# %acc_70 = tt.dot %a_67, %b_69, %arg7, inputPrecision = tf32 : tensor<..> * tensor<..> -> tensor<..>
# %acc_75 = ttng.warp_group_dot %a_73, %b_74, %arg7 {...} : !ttg.memdesc<..> * !ttg.memdesc<..> -> tensor<..>
DOT_OP = re.compile(r"=\s*(tt\.dot|ttng\.warp_group_dot)\s")
# %a_22 = ttg.local_alloc : () -> !ttg.memdesc<3x64x64xf16, #shared, #smem, mutable>
# %a = ttg.local_alloc %x : (tensor<..>) -> !ttg.memdesc<...>     (group 1: the name without its _N suffix)
LOCAL_ALLOC_NAME = re.compile(r"^\s*%([\w.$-]+?)(?:_\d+)?\s*=\s*ttg\.local_alloc\b")

# Attribute fields read by name (explain, the MLIR notes, the TTIR signature)
# #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>  (the fastest dim)
ORDER_FIRST = re.compile(r"order\s*=\s*\[(\d+)")
# #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
VERSION_MAJOR = re.compile(r"versionMajor\s*=\s*(\d+)")
INSTR_SHAPE = re.compile(r"instrShape\s*=\s*\[([\d, ]+)\]")
# scf.for %k = ... {tt.num_stages = 2 : i32}
NUM_STAGES_ATTR = re.compile(r"tt\.num_stages\s*=\s*(\d+)")
# tt.dot %a, %b, %c, inputPrecision = ieee    (3.6 writes the enum's number: inputPrecision = 2)
EXACT_PRECISION = re.compile(r"inputPrecision\s*=\s*(ieee|2\b)")
# {tt.divisibility = 16 : i32, tt.pointer_range = 32 : i32}    (a function argument's tt. attributes)
TT_INT_ATTR = re.compile(r"(tt\.\w+)\s*=\s*(\d+)")
# %a_22 = ttg.local_alloc %x : (tensor<..>) -> ...     (an allocation that copies a tensor in)
ALLOC_FROM_VALUE = re.compile(r"local_alloc\s+%")
# %a_22 = ...    (group 1: the result's name without its _N suffix)
RESULT_NAME = re.compile(r"\s*%([A-Za-z_][\w$.]*?)(?:_\d+)?\s*=")
# %arg3   %c64_i32   %0
SSA_VALUE = re.compile(r"%[\w$.-]+")
# tt.get_program_id x    (the axis word of a program-id op)
AXIS_WORD = re.compile(r"\b(x|y|z)\b")

# What explain reads from TTGIR op lines
# %c64_i32 = arith.constant 64 : i32
CONST_INT = re.compile(r"^\s*(%[\w$.-]+)\s*=\s*arith\.constant\s+(-?\d+)\s*:\s*i(?:32|64)\b")
# %0 = arith.addi %a, %b : i32
# (a cast names both types: `arith.extsi %M : i32 to i64`, as a 64-bit loop's bounds are made)
SCALAR_OP = re.compile(r"^\s*(%[\w$.-]+)\s*=\s*(arith\.\w+|tt\.get_program_id|tt\.get_num_programs)\s+(.*?)\s*:\s*"
                       r"(?:i(?:32|64)|index)(?:\s+to\s+(?:i(?:32|64)|index))?\s*$")
# scf.for %k = %c0_i32 to %K step %c64_i32 iter_args(...)
FOR_BOUNDS = re.compile(r"scf\.for\s+%[\w$.-]+\s*=\s*(%[\w$.-]+)\s+to\s+(%[\w$.-]+)\s+step\s+(%[\w$.-]+)")
# {contiguity = 4 : i32}
CONTIGUITY = re.compile(r"\bcontiguity\s*=\s*(\d+)")
# -> <64x64xf32, #shared, #smem, mutable>   (async copies print their destination without the type name)
BARE_MEMDESC = re.compile(r"->\s*(<\d[^>]*>)\s*$")
# !tt.ptr<f16>
PTR_ELEM = re.compile(r"!tt\.ptr<([\w]+)")

# tt.func public @k(%a_ptr: !tt.ptr<f32> loc("a_ptr"(#loc)), ...) attributes {...} {   (group 1: the arguments)
FUNC_SIGNATURE = re.compile(r"tt\.func\s+(?:public\s+)?@[\w$.]+\((.*)\)\s*(?:attributes\s*\{.*\}\s*)?\{")


def type_part(line: str) -> str:
    """The type part of an op line: what follows the last top-level ' : '.

        '%c = tt.dot %a, %b, %acc : tensor<..> * tensor<..> -> tensor<..>'  ->  'tensor<..> * tensor<..> -> tensor<..>'
    """
    depth, last = 0, -1
    for m in _scanner((" : ",)).finditer(line):
        tok = m.group()
        if tok in _OPEN_SET:
            depth += 1
        elif tok in _CLOSE_SET:
            depth -= 1
        elif depth == 0 and tok == " : ":
            last = m.start() + 1
    return line[last + 1:].strip() if last >= 0 else ""


# ==========================================================================
# Element types
# ==========================================================================

# The one element-width table.  i1 is stored as a byte; f4/f6 are packed types.
ELEMENT_BITS = {
    "i1": 8, "i8": 8, "i16": 16, "i32": 32, "i64": 64,
    "f16": 16, "bf16": 16, "f32": 32, "tf32": 32, "f64": 64,
    "f8E4M3FN": 8, "f8E5M2": 8, "f8E4M3FNUZ": 8, "f8E5M2FNUZ": 8, "f8E4M3B11FNUZ": 8, "f8E4M3": 8,
    "f8E8M0FNU": 8, "f6E2M3FN": 6, "f6E3M2FN": 6, "f4E2M1FN": 4,
}
POINTER_BITS = 64


def element_bits(elem: str | None) -> int | None:
    """Width in bits of an element type as written ('f16' -> 16, '!tt.ptr<f16>' -> 64), None if unknown."""
    if not elem:
        return None
    if elem.startswith("!tt.ptr"):
        return POINTER_BITS
    return ELEMENT_BITS.get(elem)


# ==========================================================================
# Records
# ==========================================================================


@dataclass(frozen=True)
class AliasRef:
    """A reference to a module-level alias that was not resolved ('#mma')."""

    name: str  # without the '#'

    def __str__(self) -> str:
        return f"#{self.name}"


class MlirString(str):
    """A quoted string value ("cuda:90"); equal to its contents, printed with quotes."""


@dataclass(frozen=True)
class Attribute:
    """A dialect attribute: `#ttg.blocked<{...}>` -> dialect 'ttg', name 'blocked', params {...}.

    params holds the named parameters (from the `{...}` dictionary and from
    `key = value` items); args the positional ones (`[64:+4]` of
    #ttg.padded_shared).  Values are int, float, bool, str, list, dict,
    (interval, padding) tuples, Attribute, or AliasRef when aliases were not
    resolved.  `text` is the attribute as written, or re-printed with its
    aliases resolved.
    """

    dialect: str
    name: str
    params: dict[str, Any]
    text: str
    args: tuple = ()

    @property
    def parent(self) -> "Attribute | None":
        p = self.params.get("parent")
        return p if isinstance(p, Attribute) else None

    @property
    def qualified(self) -> str:
        return f"#{self.dialect}.{self.name}"


@dataclass(frozen=True)
class MlirType:
    """A shaped or scalar type: tensor<16x16xf16, #blocked>, !ttg.memdesc<...>, !tt.ptr<f16>, f32.

    kind: 'tensor', 'memdesc', 'ptr', 'scalar' or 'other'; `head` is the type
    name as written ('tensor', '!ttg.memdesc', '!tt.ptr').  `encoding` is the
    attribute text after the element type ('#blocked' or an inline
    '#ttg.slice<{...}>'); `params` the rest (memory space, 'mutable',
    allocation shape).  shape has None for a dynamic ('?') dimension.
    """

    kind: str
    head: str
    shape: tuple
    elem: str
    encoding: str | None
    params: tuple[str, ...]
    text: str
    start: int = 0
    end: int = 0

    @property
    def bits(self) -> int | None:
        return POINTER_BITS if self.kind == "ptr" else element_bits(self.elem)

    @property
    def static(self) -> bool:
        """A ranked type with every dimension known (what layouts and notes need)."""
        return bool(self.shape) and all(isinstance(d, int) for d in self.shape)

    @property
    def memory_space(self) -> str | None:
        return next((p for p in self.params if p.startswith("#")), None)

    @property
    def mutable(self) -> bool:
        return "mutable" in self.params


class MlirSyntaxError(InputFileError):
    """Text that is not MLIR attribute/type syntax; says where reading stopped."""

    def __init__(self, what: str, text: str, pos: int, source: str, *, kind: str = "syntax"):
        caret = " " * min(pos, len(text)) + "^"
        near = text[pos:pos + 20] or "end of input"
        super().__init__(
            f"Malformed MLIR attribute {source}: {what} at character {pos + 1} (near {near!r}).",
            context=f"{text}\n{caret}",
            hint="Write it as Triton prints it, e.g. '#ttg.blocked<{sizePerThread = [1, 2], "
                 "threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>'.")
        self.what, self.text, self.pos, self.source, self.kind = what, text, pos, source, kind


# ==========================================================================
# The attribute reader
# ==========================================================================

# sizePerThread   ttg.num-ctas   versionMajor   f8E4M3FN
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.$-]*")
# -12   3.5   1.000000e+00   0x1F
_NUMBER = re.compile(r"-?(?:0x[0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)")


@dataclass
class _Reader:
    """Recursive descent over MLIR attribute syntax.

    aliases: alias name (no '#') -> definition text; None keeps references
    as AliasRef.  `stack` holds the aliases being expanded (cycle check).
    """

    text: str
    aliases: dict[str, str] | None
    source: str
    pos: int = 0
    stack: tuple[str, ...] = field(default=())

    # -- low level --------------------------------------------------------
    def fail(self, what: str, pos: int | None = None, kind: str = "syntax") -> MlirSyntaxError:
        return MlirSyntaxError(what, self.text, self.pos if pos is None else pos, self.source, kind=kind)

    def ws(self) -> None:
        n = len(self.text)
        while self.pos < n and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.ws()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, s: str) -> None:
        self.ws()
        if not self.text.startswith(s, self.pos):
            raise self.fail(f"expected {s!r}")
        self.pos += len(s)

    def ident(self) -> str:
        self.ws()
        m = _IDENT.match(self.text, self.pos)
        if not m:
            raise self.fail("expected a name")
        self.pos = m.end()
        return m.group(0)

    def balanced(self) -> str:
        """The bracketed text starting here, as written (for values we do not look into)."""
        end = _close_of(self.text, self.pos)
        if end < 0:
            raise self.fail(f"unclosed {self.text[self.pos]!r}")
        start, self.pos = self.pos, end + 1
        return self.text[start:self.pos]

    # -- attributes -------------------------------------------------------
    def attribute(self) -> Attribute | AliasRef:
        self.ws()
        start = self.pos
        self.expect("#")
        name = self.ident()
        if "." not in name or (self.aliases is not None and name in self.aliases):
            return self.alias(name, start)
        dialect, _, short = name.partition(".")
        params: dict[str, Any] = {}
        args: list[Any] = []
        forms: list[str] = []
        if self.peek() == "<":
            self.pos += 1
            while self.peek() != ">":
                if not self.peek():
                    raise self.fail("expected '>'")
                if forms and self.peek() == ",":
                    self.pos += 1
                forms.append(self.body_item(params, args))
            self.expect(">")
        text = self.text[start:self.pos]
        if forms == ["dict"] and params:
            text = _canonical(dialect, short, params)
        return Attribute(dialect, short, params, text, tuple(args))

    def body_item(self, params: dict[str, Any], args: list[Any]) -> str:
        """One item of an attribute's <...>: a {dictionary}, key = value, or a positional value."""
        c = self.peek()
        if c == "{":
            params.update(self.dictionary())
            return "dict"
        m = _IDENT.match(self.text, self.pos)
        if m and m.group(0) not in ("true", "false"):
            after = self.pos
            self.pos = m.end()
            if self.peek() == "=":
                self.pos += 1
                params[m.group(0)] = self.value()
                return "param"
            self.pos = after
        args.append(self.value())
        return "arg"

    def alias(self, name: str, start: int) -> Attribute | AliasRef:
        if self.aliases is None:
            return AliasRef(name)
        if name not in self.aliases:
            raise self.fail(f"unknown alias '#{name}'", start, kind="alias")
        if name in self.stack:
            raise self.fail(f"alias cycle through '#{name}'", start, kind="alias")
        inner = _Reader(self.aliases[name].strip(), self.aliases, f"alias #{name}", 0, self.stack + (name,))
        got = inner.value()
        inner.ws()
        if inner.pos != len(inner.text):
            raise inner.fail("unexpected text after the attribute")
        return got

    # -- values -----------------------------------------------------------
    def dictionary(self) -> dict[str, Any]:
        self.expect("{")
        out: dict[str, Any] = {}
        if self.peek() != "}":
            while True:
                key = self.string() if self.peek() == '"' else self.ident()
                if self.peek() == "=":
                    self.pos += 1
                    out[key] = self.value()
                else:
                    out[key] = True  # a unit attribute
                if self.peek() == ",":
                    self.pos += 1
                    continue
                break
        self.expect("}")
        return out

    def string(self) -> MlirString:
        self.ws()
        i, n = self.pos + 1, len(self.text)
        while i < n and self.text[i] != '"':
            i += 2 if self.text[i] == "\\" else 1
        if i >= n:
            raise self.fail("unterminated string")
        s = self.text[self.pos + 1:i]
        self.pos = i + 1
        return MlirString(s)

    def value(self) -> Any:
        c = self.peek()
        if c == "[":
            self.pos += 1
            items: list[Any] = []
            if self.peek() != "]":
                while True:
                    items.append(self.value())
                    if self.peek() == ",":
                        self.pos += 1
                        continue
                    break
            self.expect("]")
            return items
        if c == "{":
            return self.dictionary()
        if c == "#":
            return self.attribute()
        if c == '"':
            return self.string()
        if c in "!(":
            start = self.pos
            if c == "!":
                self.pos += 1
                self.ident()
                if self.text.startswith("<", self.pos):
                    self.balanced()
            else:
                self.balanced()
            return self.text[start:self.pos]
        m = _NUMBER.match(self.text, self.pos)
        if m:
            self.pos = m.end()
            tok = m.group(0)
            v: Any = int(tok, 16) if "0x" in tok else float(tok) if any(x in tok for x in ".eE") else int(tok)
            save = self.pos
            if self.peek() == ":":
                self.pos += 1
                if self.peek() == "+" or self.peek().isdigit():  # 64:+4, a padding interval
                    self.pos += self.peek() == "+"
                    pad = _NUMBER.match(self.text, self.pos)
                    if not pad:
                        raise self.fail("expected the padding after ':+'")
                    self.pos = pad.end()
                    return (v, int(pad.group(0)))
                self.pos = save
            self.type_suffix()  # "1 : i32": the type is dropped
            return v
        start = self.pos
        word = self.ident()
        if word in ("true", "false"):
            return word == "true"
        if self.text.startswith("<", self.pos):  # array<i32: 1, 0>, dense<0.0> : tensor<4xf32>
            self.balanced()
            text = self.text[start:self.pos]
            self.type_suffix()
            return text
        return word

    def type_suffix(self) -> None:
        """Skip a ' : type' after a value (1 : i32, dense<0.0> : tensor<4xf32>)."""
        save = self.pos
        if self.peek() != ":":
            return
        self.pos += 1
        self.ws()
        if self.text.startswith("!", self.pos):
            self.pos += 1
        if not _IDENT.match(self.text, self.pos):
            self.pos = save
            return
        self.ident()
        if self.text.startswith("<", self.pos):
            self.balanced()


def _fmt(v: Any) -> str:
    if isinstance(v, Attribute):
        return v.text
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    if isinstance(v, tuple):
        return f"{v[0]}:+{v[1]}"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {_fmt(x)}" for k, x in v.items()) + "}"
    if isinstance(v, MlirString):
        return '"' + v + '"'
    return str(v)


def _canonical(dialect: str, name: str, params: dict[str, Any]) -> str:
    """Re-print a dictionary-form attribute, nested aliases replaced by their definitions."""
    return f"#{dialect}.{name}<{{" + ", ".join(f"{k} = {_fmt(v)}" for k, v in params.items()) + "}>"


def parse_attribute(text: str, aliases: dict[str, str] | None = None, *,
                    source: str = "string") -> Attribute | AliasRef:
    """'#ttg.blocked<{...}>' -> Attribute.

    With `aliases` (name without '#' -> definition), references are resolved
    and an unknown one is an error; without, they stay AliasRef.  Raises
    MlirSyntaxError where the text stops being MLIR.
    """
    r = _Reader(text.strip(), aliases, source)
    if not r.text.startswith("#"):
        raise r.fail("expected '#'" if r.text else "empty attribute")
    try:
        got = r.attribute()
    except RecursionError:  # a chain of 600 aliases, each the parent of the one before: no compiler writes one
        raise r.fail("nested too deeply (attributes or aliases within each other)") from None
    r.ws()
    if r.pos != len(r.text):
        raise r.fail("unexpected text after the attribute")
    return got


# #ttg.slice<   #ttng.tensor_memory_encoding<   #ttg.shared_memory   (a dialect attribute starts; not #blocked)
_DIALECT_ATTR = re.compile(r"#[A-Za-z_][\w$-]*\.[A-Za-z_]")


def find_attributes(text: str) -> Iterator[tuple[int, int, Attribute]]:
    """Every outermost dialect attribute written inline in a line: (start, end, Attribute), aliases unresolved.

        'tensor<16xi32, #ttg.slice<{dim = 0, parent = #blocked}>>'  ->  one #ttg.slice, parent AliasRef('blocked')
    """
    pos = 0
    while True:
        m = _DIALECT_ATTR.search(text, pos)
        if not m:
            return
        r = _Reader(text, None, "in the line", m.start())
        try:
            got = r.attribute()
        except MlirSyntaxError:
            pos = m.end()
            continue
        yield m.start(), r.pos, got
        pos = r.pos


def parse_value(text: str, aliases: dict[str, str] | None = None, *, source: str = "string") -> Any:
    """Any attribute value: '[1, 2]' -> [1, 2], '{a = 1}' -> {'a': 1}, '#ttg.blocked<..>' -> Attribute."""
    r = _Reader(text.strip(), aliases, source)
    if not r.text:
        raise r.fail("empty attribute")
    got = r.value()
    r.ws()
    if r.pos != len(r.text):
        raise r.fail("unexpected text after the attribute")
    return got


def parse_dictionary(body: str, aliases: dict[str, str] | None = None, *, source: str = "string") -> dict[str, Any]:
    """'sizePerThread = [1, 2], order = [1, 0]' (the inside of {...}) -> {'sizePerThread': [1, 2], ...}."""
    return parse_value("{" + body + "}", aliases, source=source)


# ==========================================================================
# Aliases
# ==========================================================================

# #blocked = #ttg.blocked<{sizePerThread = [1, 2], ...}>      (not #loc12 = loc(...))
_ALIAS_DEF = re.compile(r"^#([A-Za-z_][A-Za-z0-9_$-]*)\s*=\s*(.*)$")


def alias_definition(line: str) -> tuple[str, str] | None:
    """'#mma = #ttg.nvidia_mma<{...}>' -> ('mma', '#ttg.nvidia_mma<{...}>'); None for other lines and #loc."""
    m = _ALIAS_DEF.match(line.strip())
    if not m or m.group(2).startswith("loc("):
        return None
    return m.group(1), strip_locs(m.group(2))[0].strip()


def _unbalanced(text: str) -> bool:
    depth = 0
    for m in _BRACKETS.finditer(text):
        tok = m.group()
        depth += (tok in _OPEN_SET) - (tok in _CLOSE_SET)
    return depth > 0


def alias_table(text: str) -> dict[str, str]:
    """Module-level attribute aliases of an MLIR text: name (no '#') -> definition text.

    A definition whose brackets are still open at the end of its line goes
    on over the following lines (hand-written lit tests wrap long ones).
    """
    out: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.startswith("#"):
            continue
        got = alias_definition(line)
        if not got:
            continue
        name, body = got
        while _unbalanced(body) and i < len(lines):
            body += " " + lines[i].strip()
            i += 1
        out[name] = body
    return out


# #mma  #blocked1  #shared   (not #ttg.slice, nor #loc3)
_ALIAS_REF = re.compile(r"#([A-Za-z_][\w$-]*)(?![\w$.-])")


def expand_aliases(text: str, aliases: dict[str, str]) -> str:
    """Replace #alias references by their definitions, recursively (a visited set stops cycles)."""

    def expand(t: str, seen: frozenset[str]) -> str:
        def sub(m: re.Match) -> str:
            name = m.group(1)
            if name in aliases and name not in seen:
                return expand(aliases[name], seen | {name})
            return m.group(0)

        return _ALIAS_REF.sub(sub, t)

    return expand(text, frozenset())


# ==========================================================================
# Types
# ==========================================================================

# 16x16xf16 -> ('16x16x', 'f16')     ?x4x!tt.ptr<f32> -> ('?x4x', '!tt.ptr<f32>')
_SHAPE = re.compile(r"((?:(?:\d+|\?)x)*)(.*)", re.S)
# tensor<   !ttg.memdesc<   !tt.ptr<   (where a type with parameters starts)
_TYPE_START = re.compile(r"(?<![\w.$!-])(tensor|![A-Za-z_]\w*\.[A-Za-z_]\w*)<")


# f32   i1   bf16   index
_SCALAR = re.compile(r"[A-Za-z_][\w.]*")


def _kind_of(head: str) -> str:
    if head == "tensor":
        return "tensor"
    if head.endswith(".memdesc"):
        return "memdesc"
    if head.endswith(".ptr"):
        return "ptr"
    return "other"


def parse_type(text: str, *, source: str = "string") -> MlirType:
    """'tensor<16x16xf16, #blocked>' / '!ttg.memdesc<...>' / '!tt.ptr<f16>' / 'f32' -> MlirType."""
    text = text.strip()
    m = _TYPE_START.match(text)
    if not m:
        if _SCALAR.fullmatch(text):
            return MlirType("scalar", text, (), text, None, (), text, 0, len(text))
        raise MlirSyntaxError("expected a type", text, 0, source)
    got = _type_at(text, 0, m.group(1))
    if got is None or got.end != len(text):
        raise MlirSyntaxError("expected one type", text, got.end if got else 0, source)
    return got


def _type_at(text: str, start: int, head: str) -> MlirType | None:
    lt = start + len(head)
    gt = _close_of(text, lt)
    if gt < 0:
        return None
    body = text[lt + 1:gt]
    # most types nest nothing (tensor<16x16xf16, #blocked>): a plain split is enough and much cheaper
    params = split_top(body) if any(c in body for c in '<{[("') else [p.strip() for p in body.split(",")]
    kind = _kind_of(head)
    if not params:
        return MlirType(kind, head, (), "", None, (), text[start:gt + 1], start, gt + 1)
    if kind == "ptr":
        return MlirType(kind, head, (), params[0], None, tuple(params[1:]), text[start:gt + 1], start, gt + 1)
    dims_text, elem = _SHAPE.match(params[0]).groups()
    dims = [None if d == "?" else int(d) for d in dims_text.split("x")[:-1]]
    rest = params[1:]
    enc = rest[0] if rest and rest[0].startswith("#") else None
    if enc is not None:
        rest = rest[1:]
    return MlirType(kind, head, tuple(dims), elem, enc, tuple(rest), text[start:gt + 1], start, gt + 1)


def find_types(text: str, kinds: tuple[str, ...] = ("tensor", "memdesc")) -> Iterator[MlirType]:
    """Every type of these kinds in a line, left to right (a pointer's pointee tensor included)."""
    pos = 0
    while True:
        m = _TYPE_START.search(text, pos)
        if not m:
            return
        if _kind_of(m.group(1)) not in kinds:
            pos = m.end()
            continue
        got = _type_at(text, m.start(), m.group(1))
        if got is None:
            pos = m.end()
            continue
        yield got
        pos = got.end
