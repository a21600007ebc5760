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
