"""The stage lexers: one expression per lexer gives Pygments' own tokens, on real stages and on hostile text."""

from __future__ import annotations

import pytest
from pygments.lexer import RegexLexer

from conftest import DATA
from tritonscope.outputs.render.lexers import OneExpression, get_lexer

LEXER = {"ttir": "mlir", "ttgir": "mlir", "sass": "sass", "llir": "llvm", "ptx": "ptx"}
STAGES = sorted(p for p in (DATA / "stages").glob("*/*/*") if p.name in LEXER)
HOSTILE = ["", "\n", "\x1b[31m%x = tt.load \x00\x7f", "\"unterminated", "/* open comment", "é\u202e𝔘", "\t\t\n\n",
           "@!P0 BRA `(.L_x_1) ;", "/* a c comment \n across */ define void @f() {", "\"open string\n%1 = add", "LDGSTS.E.BYPASS.128 [R1+0x10], desc[UR4][R2.64] ;  /* 0x0000 */"]


@pytest.fixture(autouse=True)
def _joined_from_the_first_text(monkeypatch):
    """Every text through the joined expressions (a command joins them from the first long one)."""
    from tritonscope.outputs.render import lexers

    monkeypatch.setattr(lexers, "JOIN_FROM", 0)


def test_a_short_text_does_not_pay_for_the_join(monkeypatch):
    """Joining compiles one big expression per state (25 ms for LLVM IR's): a short text in a process that has
    not joined yet is lexed as Pygments does, and a long one joins; after that every text uses the join."""
    from tritonscope.outputs.render import lexers

    monkeypatch.setattr(lexers, "JOIN_FROM", 1000)
    cls = type("FreshMLIR", (lexers.MLIRLexer,), {})
    monkeypatch.delitem(lexers._JOINED, cls, raising=False)
    lexer = cls()
    short = "%0 = tt.load %ptr : tensor<16x!tt.ptr<f16>>\n"
    assert list(lexer.get_tokens_unprocessed(short)) == _pygments(lexer, short) and cls not in lexers._JOINED
    long = short * 100
    assert list(lexer.get_tokens_unprocessed(long)) == _pygments(lexer, long) and lexers._JOINED.get(cls)
    assert list(lexer.get_tokens_unprocessed(short)) == _pygments(lexer, short)


def _pygments(lexer, text):
    return list(RegexLexer.get_tokens_unprocessed(lexer, text))


@pytest.mark.parametrize("path", STAGES, ids=lambda p: f"{p.parent.parent.name}-{p.parent.name}-{p.name}")
def test_one_expression_gives_pygments_tokens_on_real_stages(path):
    assert len(STAGES) == 30  # 3 compiles x 5 stages x 2 Triton series
    lexer = get_lexer(LEXER[path.name])
    assert isinstance(lexer, OneExpression) and isinstance(lexer, RegexLexer)
    text = path.read_text()
    ours = list(lexer.get_tokens_unprocessed(text))
    assert len(ours) > 100
    assert ours == _pygments(lexer, text)


@pytest.mark.parametrize("text", HOSTILE)
@pytest.mark.parametrize("lexer", [get_lexer(n) for n in ("mlir", "sass", "llvm", "ptx")],
                         ids=["mlir", "sass", "llvm", "ptx"])
def test_one_expression_gives_pygments_tokens_on_odd_text(lexer, text):
    assert list(lexer.get_tokens_unprocessed(text)) == _pygments(lexer, text)
    assert "".join(v for _, v in lexer.get_tokens(text)) == "".join(v for _, v in RegexLexer.get_tokens(lexer, text))
