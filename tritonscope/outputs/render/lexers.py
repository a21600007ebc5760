"""Pygments lexers for the stages Pygments lacks: MLIR (TTIR/TTGIR) and NVIDIA SASS.

`get_lexer(name)` returns a lexer instance for a stage's lexer name
(`Dialect.lexer`: "mlir", "sass", "llvm", "ptx", "python", or any other
Pygments alias), falling back to plain text.
"""

from __future__ import annotations

import re

from pygments.lexer import RegexLexer, bygroups
from pygments.token import _TokenType
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text, Whitespace


class OneStateLexer(RegexLexer):
    """A RegexLexer of one state whose rules never change state, lexed with one expression.

    Pygments tries a state's rules one by one at each position, in Python; the
    rules joined into one alternation (`(?P<r0>...)|(?P<r1>...)|...`) are tried
    in the same order by the regular-expression engine, so the first rule that
    matches wins as before and the tokens are the same
    (tests/test_lexers.py checks them against RegexLexer's on real stages), at a
    fraction of the cost: a stage of 10,000 lines was 40% of a compile's view.
    """

    def get_tokens_unprocessed(self, text, stack=("root",)):
        combined, actions = _combined(type(self))
        pos, end = 0, len(text)
        while pos < end:
            m = combined.match(text, pos)
            if m is None:  # no rule matches here: as RegexLexer does, a newline is text, else one error char
                from pygments.token import Error

                yield pos, (Text if text[pos] == "\n" else Error), text[pos]
                pos += 1
                continue
            offset, action = actions[m.lastgroup]
            if type(action) is _TokenType:
                yield pos, action, m.group()
            else:  # a callback (bygroups): it reads the rule's groups as numbered in the rule alone
                yield from action(self, _GroupView(m, offset))
            pos = m.end()


class _GroupView:
    """One rule's match inside the combined expression, numbered as if matched alone (what bygroups reads)."""

    def __init__(self, match: re.Match, offset: int):
        self._m, self._o = match, offset

    def start(self, i: int = 0) -> int:
        return self._m.start(self._o + i)

    def end(self, i: int = 0) -> int:
        return self._m.end(self._o + i)

    def group(self, i: int = 0):
        return self._m.group(self._o + i)


_COMBINED: dict[type, tuple[re.Pattern, dict[str, tuple[int, object]]]] = {}


def _combined(cls) -> tuple[re.Pattern, dict[str, tuple[int, object]]]:
    """cls's root rules as one expression, and for each rule's group name (its number in the whole, action)."""
    got = _COMBINED.get(cls)
    if got is None:
        parts, actions, number = [], {}, 0
        for i, (regex, action) in enumerate(cls.tokens["root"]):
            name = f"r{i}"
            number += 1  # the rule's own named group
            actions[name] = (number, action)
            parts.append(f"(?P<{name}>{regex})")
            number += re.compile(regex, cls.flags).groups
        got = _COMBINED[cls] = (re.compile("|".join(parts), cls.flags), actions)
    return got


class MLIRLexer(OneStateLexer):
    """Triton's MLIR dialects: %values, #attributes, dialect.op names, types."""

    name = "MLIR (Triton)"
    aliases = ["mlir", "ttir", "ttgir"]
    filenames = ["*.mlir", "*.ttir", "*.ttgir"]

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"//.*?$", Comment.Single),
            (r'"(\\\\|\\"|[^"])*"', String),
            # #blocked = ... / #ttg.slice<...>
            (r"#[\w.$]+", Name.Decorator),
            # %a_23, %acc_56#0
            (r"%[\w.$#]+", Name.Variable),
            (r"\^[\w.$]+", Name.Label),
            (r"@[\w.$]+", Name.Function),
            # !tt.ptr<f16>, !ttg.memdesc<...>
            (r"![\w.$]+", Keyword.Type),
            # tt.load, ttg.async_copy_global_to_local, scf.for
            (r"\b[a-z_][\w]*\.[a-z_][\w.]*\b", Name.Builtin),
            (r"\b(tensor|vector|memref|tuple)\b", Keyword.Type),
            (r"\b(?:[0-9]+x)+(?=[a-zA-Z!])", Number.Integer),
            (r"\b(?:i\d+|f\d+|bf16|tf32|index|f8E\w+)\b", Keyword.Type),
            (r"\b(module|attributes|loc|dense|true|false|to|step|iter_args|mask|other|tokens|token|x|y|z|at|fused|callsite|unknown)\b",
             Keyword),
            (r"-?\d+\.\d*(?:[eE][+-]?\d+)?", Number.Float),
            (r"0x[0-9a-fA-F]+", Number.Hex),
            (r"-?\d+", Number.Integer),
            (r"->|=|\*|:", Operator),
            (r"[(){}\[\]<>,]", Punctuation),
            (r"\w+", Text),
            (r".", Text),
        ]
    }


class SASSLexer(OneStateLexer):
    """NVIDIA SASS as printed by nvdisasm / cuobjdump."""

    name = "NVIDIA SASS"
    aliases = ["nvsass", "sass-nvidia"]
    filenames = ["*.sass"]

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"//.*?$", Comment.Single),
            # /*0290*/
            (r"/\*[0-9a-f]+\*/", Comment.Special),
            (r"/\*.*?\*/", Comment.Multiline),
            (r"\.[A-Za-z_][\w.]*", Keyword.Pseudo),
            (r'"[^"]*"', String),
            (r"@!?U?P[0-9T]\b", Name.Attribute),
            # LDGSTS.E.BYPASS.128
            (r"\b([A-Z][A-Z0-9_]*)((?:\.[A-Z0-9_x]+)*)(?=\s|;|$)", bygroups(Keyword, Keyword)),
            (r"\b(?:U?R\d+|URZ|RZ|U?PT|U?P\d|SR_[A-Z_.]+|SB\d)\b", Name.Variable),
            (r"\bc\[0x[0-9a-f]+\]\[0x[0-9a-f]+\]", Name.Constant),
            (r"\bdesc\b", Name.Builtin),
            (r"[A-Za-z_.$][\w.$]*:", Name.Label),
            (r"-?0x[0-9a-fA-F]+", Number.Hex),
            (r"-?\d+(?:\.\d+)?", Number),
            (r"[\[\]{},;|~!+\-]", Punctuation),
            (r"[\w.]+", Text),
            (r".", Text),
        ]
    }


# Lexer names a dialect may give (Dialect.lexer) that Pygments lacks or means otherwise.
_OURS = {"mlir": MLIRLexer, "sass": SASSLexer, "nvsass": SASSLexer}


def get_lexer(name: str):
    """A lexer instance by stage lexer name ('sass' here means NVIDIA SASS, not the CSS language)."""
    cls = _OURS.get(name)
    if cls is not None:
        return cls()
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(name)
    except ClassNotFound:
        return get_lexer_by_name("text")
