"""Pygments lexers for the stages Pygments lacks: MLIR (TTIR/TTGIR) and NVIDIA SASS.

`get_lexer(name)` returns a lexer instance for a stage's lexer name
(`Dialect.lexer`: "mlir", "sass", "llvm", "ptx", "python", or any other
Pygments alias), falling back to plain text.
"""

from __future__ import annotations

from pygments.lexer import RegexLexer, bygroups
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text, Whitespace


class MLIRLexer(RegexLexer):
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


class SASSLexer(RegexLexer):
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
