"""A thin shell: each command parses its options, calls the package function that owns the work, and prints;
the Python API calls the same functions; no command imports another command.

The API half is checked by replacing the package function with a recorder and running both surfaces: each
must reach it, with the same request.
"""

from __future__ import annotations

import ast
import json

import pytest
from typer.testing import CliRunner

from conftest import DATA, ROOT
from test_imports import module_graph

import tritonscope
from tritonscope.cli import app

COMMANDS = ROOT / "tritonscope" / "commands"


def command_modules() -> set[str]:
    """The modules of commands/ that hold a command (a top-level `*_cmd` function); the others (options,
    checks, requests, running, printing, open_inductor) are shared helpers of the shell."""
    out = set()
    for path in COMMANDS.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(n, ast.FunctionDef) and n.name.endswith("_cmd") for n in tree.body):
            out.add(f"tritonscope.commands.{path.stem}")
    return out


def test_no_command_imports_another_command():
    commands = command_modules()
    assert {"tritonscope.commands.compile", "tritonscope.commands.explain", "tritonscope.commands.diff",
            "tritonscope.commands.tune", "tritonscope.commands.passes"} <= commands
    assert "tritonscope.commands.options" not in commands and "tritonscope.commands.running" not in commands
    graph = module_graph()
    crossed = sorted(f"{m} -> {i}" for m in commands for i in graph[m] & commands)
    assert not crossed, "a command imports another command:\n" + "\n".join(crossed)


def test_the_command_check_sees_a_command_importing_another(tmp_path, monkeypatch):
    """The walker behind the test above: a lazy `from tritonscope.commands.passes import x` inside a command
    is an edge to a command."""
    from test_imports import imported_by

    modules = command_modules() | {"tritonscope.commands.options"}
    source = "def compile_cmd():\n    from tritonscope.commands.passes import trace\n"
    assert imported_by(source, "tritonscope.commands", modules) & command_modules() == \
        {"tritonscope.commands.passes"}


class Reached(Exception):
    """Raised by a recorder in place of the work: the surface got as far as the package function."""


def recorder(calls: list):
    def record(*args, **kwargs):
        calls.append((args, kwargs))
        raise Reached()
    return record


# --------------------------------------------------------------------------
# explain: analyses/explain/run.explain_config and explain_found
# --------------------------------------------------------------------------


def test_api_and_command_explain_reach_explain_config(monkeypatch):
    calls: list = []
    monkeypatch.setattr("tritonscope.analyses.explain.run.explain_config", recorder(calls))
    res = CliRunner().invoke(app, ["explain", "matmul", "--block", "16", "--arch", "sm_80", "--shape",
                                   "1024x1024x1024", "--no-check-fixes"])
    assert len(calls) == 1, res.output  # (the CLI then reports the recorder's exception as unexpected)
    with pytest.raises(Reached):
        tritonscope.explain("matmul", block=16, arch="sm_80", shapes=["1024x1024x1024"], check_fixes=False)
    (cli_args, cli_kw), (api_args, api_kw) = calls
    for request in (cli_args[0], api_args[0]):
        assert request.target == "matmul" and request.block == 16 and request.arch == "sm_80"
        assert request.shape == "1024x1024x1024"
    for kw in (cli_kw, api_kw):
        assert kw["shapes"] == ["1024x1024x1024"] and kw["check_fixes"] is False and kw["gpu"] is None
        assert callable(kw["compile"]) and kw["fixes"] is not None


def test_api_and_command_explain_reach_explain_found(monkeypatch):
    calls: list = []
    monkeypatch.setattr("tritonscope.analyses.explain.run.explain_found", recorder(calls))
    capture = str(DATA / "capture")
    res = CliRunner().invoke(app, ["explain", capture, "--kernel", "add_kernel", "-w", "8"])
    assert len(calls) == 1, res.output  # (the CLI then reports the recorder's exception as unexpected)
    with pytest.raises(Reached):
        tritonscope.explain(capture, kernel="add_kernel", num_warps=8)
    (cli_args, cli_kw), (api_args, api_kw) = calls
    assert cli_args == api_args == (capture, "add_kernel")
    assert cli_kw["changes"] == api_kw["changes"] == {"num_warps": 8}


def test_api_explain_is_what_explain_json_prints():
    """One real compile each way: the API's Explained.to_dict() is the command's --json, byte for byte."""
    args = ["explain", "vector_add", "-c", "BLOCK=1024", "--arch", "sm_90a", "--no-check-fixes", "--json",
            "--predict", "--gpu", "H100"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    expl = tritonscope.explain("vector_add", constexprs={"BLOCK": 1024}, arch="sm_90a", check_fixes=False,
                               predict=True, gpu="H100")
    printed = json.loads(res.output)
    assert printed == expl.to_dict()
    assert printed["kernel"] == "add_kernel" and printed["verdicts"] and printed["prediction"]["gpu"]
    assert [v["kind"] for v in printed["verdicts"]] == [v.kind for v in expl.verdicts]


# --------------------------------------------------------------------------
# tune: measure/axes.grid_requests, then measure/tune.tune_grid
# --------------------------------------------------------------------------


def test_api_and_command_tune_reach_tune_grid(monkeypatch):
    calls: list = []
    monkeypatch.setattr("tritonscope.measure.tune.tune_grid", recorder(calls))
    res = CliRunner().invoke(app, ["tune", "vector_add", "-c", "BLOCK=256,1024", "-w", "2,4", "--top", "2"])
    assert len(calls) == 1, res.output  # (the CLI then reports the recorder's exception as unexpected)
    with pytest.raises(Reached):
        tritonscope.tune("vector_add", constexprs={"BLOCK": [256, 1024]}, num_warps=[2, 4], top=2)
    (cli_args, cli_kw), (api_args, api_kw) = calls

    def grid(requests):
        return [(r.constexprs["BLOCK"], r.num_warps, r.num_stages) for r in requests]

    assert grid(cli_args[0]) == grid(api_args[0]) == [("256", 2, None), ("256", 4, None), ("1024", 2, None),
                                                      ("1024", 4, None)]
    assert cli_args[1].spec.kernel == api_args[1].spec.kernel == "add_kernel"
    assert {k: cli_kw[k] for k in ("top", "full", "gpu", "arch")} == {k: api_kw[k] for k in ("top", "full", "gpu", "arch")}
    assert cli_kw["top"] == 2


# --------------------------------------------------------------------------
# compile of a kernel that already compiled: cost/found.analyze_found
# --------------------------------------------------------------------------


def test_api_and_command_compile_reach_analyze_found(monkeypatch):
    calls: list = []
    monkeypatch.setattr("tritonscope.cost.found.analyze_found", recorder(calls))
    capture = str(DATA / "capture")
    res = CliRunner().invoke(app, ["compile", capture, "-k", "01c9a1bcb1eb", "-w", "8", "--predict", "--gpu", "H100",
                                   "--grid", "4", "--stage", "none"])
    assert len(calls) == 1, res.output  # (the CLI then reports the recorder's exception as unexpected)
    with pytest.raises(Reached):
        tritonscope.compile(capture, kernel="01c9a1bcb1eb", num_warps=8, predict=True, gpu="H100", grid="4")
    (cli_args, cli_kw), (api_args, api_kw) = calls
    assert cli_args == api_args == (capture, "01c9a1bcb1eb")
    for kw in (cli_kw, api_kw):
        assert {k: kw[k] for k in ("changes", "predict", "gpu", "grid")} == \
            {"changes": {"num_warps": 8}, "predict": True, "gpu": "H100", "grid": "4"}


def test_api_compile_of_a_found_kernel_is_what_compile_json_prints():
    """One real recompile each way: the API's analysis (and its prediction) is the command's --json."""
    capture = str(DATA / "capture")
    res = CliRunner().invoke(app, ["compile", capture, "-k", "01c9a1bcb1eb", "-w", "8", "--predict", "--gpu", "H100",
                                   "--json"])
    assert res.exit_code == 0, res.output
    printed = json.loads(res.output)
    result = tritonscope.compile(capture, kernel="01c9a1bcb1eb", num_warps=8, predict=True, gpu="H100")
    assert result.spec.num_warps == 8 and printed["artifact"]["spec"]["num_warps"] == 8
    assert printed["prediction"] == result.analysis.prediction
    assert printed["prediction"]["gpu"] == "H100 SXM" and printed["prediction"]["predicted_ms"] > 0
    assert printed["summary"]["registers"] == result.registers


@pytest.mark.parametrize("bad, words", [
    ({"kernel": 3}, "kernel must be a str, not int 3."),
    ({"kernel": "01c9a1bcb1eb", "args": {"x": 1}}, "args: not for a kernel that already compiled"),
    ({"kernel": "01c9a1bcb1eb", "predict": "yes"}, "predict must be True or False"),
    ({"kernel": "01c9a1bcb1eb", "gpu": "Z80"}, "Unknown GPU 'Z80'"),
    ({"kernel": "01c9a1bcb1eb", "grid": "", "predict": True}, "grid is empty"),
    ({"kernel": "01c9a1bcb1eb", "grid": "1" * 5000}, "5000 characters long"),
])
def test_api_compile_of_a_found_kernel_refuses_bad_keywords(bad, words):
    from tritonscope.core.errors import UsageError

    with pytest.raises(UsageError, match=words.replace("(", r"\(").replace(".", r"\.")):
        tritonscope.compile(str(DATA / "capture"), **bad)


def test_api_compile_refuses_kernel_for_a_kernel_to_compile():
    from tritonscope.core.errors import UsageError

    with pytest.raises(UsageError, match="kernel= picks one kernel of a folder"):
        tritonscope.compile("matmul", kernel="add_kernel")


def test_an_empty_grid_for_a_found_kernel_is_refused_as_for_a_kernel_to_compile():
    """`--grid ''` is exit 2 for both kinds of target (it was taken as no grid for a capture's kernel)."""
    from tritonscope.core.errors import ExitCode

    for target in (["matmul", "--block", "16"], [str(DATA / "capture"), "-k", "01c9a1bcb1eb"]):
        res = CliRunner().invoke(app, ["compile", *target, "--grid", "", "--predict", "--stage", "none"])
        assert res.exit_code == ExitCode.USAGE, res.output
        assert "A grid is up to 3" in " ".join(res.output.split())
