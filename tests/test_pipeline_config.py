"""Issue 21: one resolved Config (the arch canonicalised once), options declared once in groups."""

from __future__ import annotations

from dataclasses import asdict

import pytest
import typer
from typer.testing import CliRunner

from tritonscope.commands.options import CONFIG, DISPLAY, Values, composed
from tritonscope.core.errors import NotFoundError, UsageError
from tritonscope.inputs.kernels import Request
from tritonscope.pipeline.config import Config, resolve


def test_resolve_checks_and_canonicalises_the_arch_once(monkeypatch):
    import tritonscope.inputs.request as request_mod

    calls = []
    real = request_mod.canonical_arch
    monkeypatch.setattr(request_mod, "canonical_arch", lambda name: calls.append(name) or real(name))
    config = resolve(Request("matmul", block=16, arch="SM-90a", options={"maxnreg": 64}))
    assert config.arch == "sm_90a" and calls == ["SM-90a"]
    assert resolve(config) is config and calls == ["SM-90a"]  # a Config is resolved already
    assert Config(**asdict(config)) == config  # what a child process rebuilds
    assert resolve(Request("matmul"), "gfx942").arch == "gfx942"  # no --arch: the caller's default
    with pytest.raises(UsageError, match="--maxnreg is a CUDA launch option"):
        resolve(Request("matmul", arch="gfx942", options={"maxnreg": 64}))
    with pytest.raises(UsageError, match="--num-warps 3"):  # the checks keep their order: -w before --arch
        resolve(Request("matmul", num_warps=3, arch="sm_1"))
    with pytest.raises(NotFoundError):
        resolve(Request("matmul", arch="sm_1"))


def test_the_compile_command_canonicalises_the_arch_once(monkeypatch):
    import tritonscope.inputs.request as request_mod
    from tritonscope.cli import app

    calls = []
    real = request_mod.canonical_arch
    monkeypatch.setattr(request_mod, "canonical_arch", lambda name: calls.append(name) or real(name))
    res = CliRunner().invoke(app, ["compile", "matmul", "--block", "16", "--arch", "SM-80", "--stage", "none",
                                   "--json"])
    assert res.exit_code == 0, res.output
    assert '"arch": "sm_80"' in res.output and calls == ["SM-80"]


def test_launch_words_go_to_their_fields():
    config = resolve(Request("matmul", arch="sm_90a", num_warps=4, options={"num_ctas": 2}))
    changed = config.with_launch(num_warps=8, maxnreg=64, enable_fp_fusion=False)
    assert (changed.num_warps, changed.num_stages) == (8, None)
    assert changed.options == {"num_ctas": 2, "maxnreg": 64, "enable_fp_fusion": False}
    assert config.with_values(constexprs={"BLOCK": 32}).constexprs == {"BLOCK": "32"}
    with pytest.raises(ValueError):
        config.with_launch(BLOCK=2)


def test_a_group_lands_in_place_and_arrives_as_one_object():
    seen = {}
    app = typer.Typer()

    @app.command()
    @composed
    def cmd(target: str = typer.Argument(...), kernel: Values = CONFIG.without("arch"),
            seed: int = typer.Option(0, "--seed"), display: Values = DISPLAY.without("pager")):
        seen.update(config=kernel.config(target), seed=seed, width=display.width)

    res = CliRunner().invoke(app, ["--help"])
    order = [w for w in ("--constexpr", "--block", "--num-warps", "--maxnreg", "--seed", "--width", "--color")
             if w in res.output]
    assert order == sorted(order, key=res.output.index) and "--arch" not in res.output and "--pager" not in res.output
    res = CliRunner().invoke(app, ["matmul", "--block", "16", "-w", "8", "--maxnreg", "64", "--seed", "3",
                                   "--width", "80"])
    assert res.exit_code == 0, res.output
    config = seen["config"]
    assert (config.block, config.num_warps, config.options, seen["seed"], seen["width"]) == \
        (16, 8, {"maxnreg": 64}, 3, 80)
    assert config.arch  # resolved: this machine's GPU's, else the default


def test_no_hidden_state_for_a_held_kernel():
    import tritonscope.inputs.kernels as kernels

    assert not hasattr(kernels, "_HELD")
