"""Pygments lexers for the stages Pygments lacks: MLIR (TTIR/TTGIR) and NVIDIA SASS.

`get_lexer(name)` returns a lexer instance for a stage's lexer name
(`Dialect.lexer`: "mlir", "sass", "llvm", "ptx", "python", or any other
Pygments alias), falling back to plain text.
"""

from __future__ import annotations

import re

from pygments.lexer import RegexLexer, bygroups
from pygments.token import Error, _TokenType
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text, Whitespace


class OneExpression:
    """Mixed into a RegexLexer: each state's rules are tried as one expression, not one by one in Python.

    Pygments tries a state's rules in order at each position; the rules joined
    into one alternation (`(?P<r0>...)|(?P<r1>...)|...`) are tried in the same
    order by the regular-expression engine, so the same rule wins and the
    tokens, callbacks and state changes are RegexLexer's (tests/test_lexers.py
    compares them on every checked-in stage and on hostile text).  A state whose
    rules cannot be joined (a numbered back-reference, an inline flag, rules of
    other flags) is lexed by RegexLexer's own loop.  The joined expressions are
    made once per process, at the first text of JOIN_FROM characters or more:
    their compile costs more than it saves on the short views one command
    prints, and 1.5-2x less CPU per stage once made (whole stages, saved
    reports, many configs).
    """

    def get_tokens_unprocessed(self, text, stack=("root",)):
        if type(self) not in _JOINED and len(text) < JOIN_FROM:
            # joining costs a compile of the whole expression (25 ms for LLVM IR's, more in a fresh process):
            # a short text is lexed as Pygments does until a long one has paid for it
            yield from RegexLexer.get_tokens_unprocessed(self, text, stack)
            return
        states = _joined(type(self), self._tokens)
        if states is None:
            yield from RegexLexer.get_tokens_unprocessed(self, text, stack)
            return
        pos, end = 0, len(text)
        statestack = list(stack)
        joined, rules = states[statestack[-1]]
        while pos < end:
            m = joined.match(text, pos)
            if m is None:  # RegexLexer's rule: a newline resets to root, anything else is one error character
                if text[pos] == "\n":
                    statestack = ["root"]
                    joined, rules = states["root"]
                    yield pos, Whitespace, "\n"
                else:
                    yield pos, Error, text[pos]
                pos += 1
                continue
            offset, action, new_state = rules[m.lastgroup]
            if action is not None:
                if type(action) is _TokenType:
                    yield pos, action, m.group()
                else:  # a callback (bygroups, using): it reads the rule's groups as numbered in the rule alone
                    yield from action(self, _RuleMatch(m, offset))
            pos = m.end()
            if new_state is not None:
                _change_state(statestack, new_state)
                joined, rules = states[statestack[-1]]


def _change_state(statestack: list[str], new_state) -> None:
    """RegexLexer's state change, as it makes it."""
    if isinstance(new_state, tuple):
        for state in new_state:
            if state == "#pop":
                if len(statestack) > 1:
                    statestack.pop()
            elif state == "#push":
                statestack.append(statestack[-1])
            else:
                statestack.append(state)
    elif isinstance(new_state, int):
        if abs(new_state) >= len(statestack):
            del statestack[1:]
        else:
            del statestack[new_state:]
    elif new_state == "#push":
        statestack.append(statestack[-1])


class _RuleMatch:
    """One rule's match inside the joined expression, its groups numbered as if the rule matched alone."""

    def __init__(self, match: re.Match, offset: int):
        self._m, self._o = match, offset

    def start(self, i: int = 0) -> int:
        return self._m.start(self._o + i)

    def end(self, i: int = 0) -> int:
        return self._m.end(self._o + i)

    def group(self, i: int = 0):
        return self._m.group(self._o + i)


_JOINED: dict[type, dict | None] = {}
# The text length (characters) from which a lexer's states are joined; once joined, every text uses them.
JOIN_FROM = 64 * 1024
_BACKREF = re.compile(r"\\[1-9]|\(\?[aiLmsux-]")


def _joined(cls, tokendefs) -> dict | None:
    """state -> (the joined expression, {rule's group name: (its group number, action, new state)}); None when
    a state's rules cannot be joined (RegexLexer's loop is used then)."""
    if cls in _JOINED:
        return _JOINED[cls]
    states: dict | None = {}
    try:
        for state, ruleset in tokendefs.items():
            parts, rules, number, flags = [], {}, 0, None
            for i, (rexmatch, action, new_state) in enumerate(ruleset):
                pattern = rexmatch.__self__
                if flags is None:
                    flags = pattern.flags
                if pattern.flags != flags or _BACKREF.search(pattern.pattern) or pattern.groupindex:
                    raise ValueError(pattern.pattern)
                number += 1  # the rule's own named group
                rules[f"r{i}"] = (number, action, new_state)
                parts.append(f"(?P<r{i}>{pattern.pattern})")
                number += pattern.groups
            states[state] = (re.compile("|".join(parts) or "(?!)", flags or 0), rules)
    except (ValueError, AttributeError, re.error):
        states = None
    _JOINED[cls] = states
    return states


class OneStateLexer(OneExpression, RegexLexer):
    """A RegexLexer lexed with one expression per state (OneExpression)."""


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
        lexer = get_lexer_by_name(name)
    except ClassNotFound:
        return get_lexer_by_name("text")
    if name in _JOIN_PYGMENTS and isinstance(lexer, RegexLexer):
        cls = _FAST.get(type(lexer))
        if cls is None:
            cls = _FAST[type(lexer)] = type(type(lexer).__name__, (OneExpression, type(lexer)), {})
        return cls(**lexer.options)
    return lexer


# Pygments' own lexers of the stages that can be long (LLVM IR, PTX): lexed with one expression per state too.
_JOIN_PYGMENTS = ("llvm", "ptx")
_FAST: dict[type, type] = {}
