"""--grid: parsing (checked before any compile), evaluating on a launch's values, and the five commands' plumbing."""

from __future__ import annotations

import ast
import json
import pickle
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tritonscope.cli import app
from tritonscope.core.errors import ExitCode, KernelSpecError, UsageError
from tritonscope.inputs.grid import evaluate, parse_grid
from tritonscope.inputs.kernels import DescArg, TensorArg

runner = CliRunner()


# --------------------------------------------------------------------------
# parse_grid: numbers and expressions
# --------------------------------------------------------------------------


@pytest.mark.parametrize("text, grid", [
    ("128", (128,)), ("32,8", (32, 8)), ("32, 8, 2", (32, 8, 2)), ("32x8", (32, 8)), ("(4, 2)", (4, 2)),
    ("[4, 2]", (4, 2)), ("64,", (64,)), ("2*3+1", (7,)), ("(2+3)*4", (20,)), ("-(-5)", (5,)), ("+5", (5,)),
    ("cdiv(1000, 128)", (8,)), ("triton.cdiv(1000, 128)", (8,)), ("tl.cdiv(1024, 128)", (8,)),
    ("next_power_of_2(100)", (128,)), ("triton.next_power_of_2(1)", (1,)), ("max(1, 3), min(4, 2)", (3, 2)),
    ("1 << 4", (16,)), ("1024 >> 2", (256,)), ("2 ** 5", (32,)), ("17 // 4, 17 % 4", (4, 1)),
    ("2**31 - 1", (2**31 - 1,)),
])
def test_numbers_are_evaluated_when_parsed(text, grid):
    spec = parse_grid(text)
    assert spec.names == () and spec.constant == grid and evaluate(spec, {}) == grid


@pytest.mark.parametrize("text, names", [
    ("cdiv(n_rows, 1)", ("n_rows",)),
    ("cdiv(M,BLOCK_M)*cdiv(N,BLOCK_N)", ("M", "BLOCK_M", "N", "BLOCK_N")),
    ("(triton.cdiv(n_elements, META['BLOCK_SIZE']),)", ("n_elements", "BLOCK_SIZE")),  # a grid lambda's body
    ("cdiv(x_ptr.numel(), BLOCK), x_ptr.shape[0], x_ptr.size(-1)", ("x_ptr", "BLOCK")),
    ("cdiv(M, BM), B * H, 1", ("M", "BM", "B", "H")),
])
def test_expressions_name_what_they_read(text, names):
    spec = parse_grid(text)
    assert spec.names == names and spec.constant is None and str(spec) == text


def test_a_grid_spec_is_a_plain_value():
    spec = parse_grid("cdiv(M, BLOCK_M), 4")
    assert pickle.loads(pickle.dumps(spec)) == spec and hash(spec) == hash(parse_grid("cdiv(M, BLOCK_M), 4"))
    with pytest.raises(AttributeError):
        spec.text = "1"  # frozen


@pytest.mark.parametrize("text, said", [
    ("", "--grid is empty"),
    ("   ", "--grid is empty"),
    ("n / 2", "'/' makes a float"),
    ("1.5", "1.5 is not a whole number"),
    ("'abc'", "'abc' is not a number"),
    ("True", "True is not a number"),
    ("n +", "is not an expression"),
    ("1,2,3,4", "has 4 dimensions; a launch grid has at most 3"),
    ("()", "has no dimension"),
    ("0", "dimension is 0; a launch runs 1 to 2147483647 programs along it (a grid of 0 launches nothing)"),
    ("32, 0", "the grid's y dimension is 0"),
    ("-4", "dimension is -4"),
    ("2**31", "dimension is 2147483648"),
    ("2**100", "the exponent must be 0 to 64"),
    ("1 << 70", "a shift must be 0 to 63 bits"),
    ("99999999999999999999", "is too large"),
    ("cdiv(8, 0)", "cdiv(a, b) with b = 0 divides by zero"),
    ("8 // 0", "a // 0 divides by zero"),
    ("8 % (2 - 2)", "a % 0 divides by zero"),
    ("cdiv(1)", "cdiv() takes 2 arguments, not 1"),
    ("next_power_of_2(1, 2)", "next_power_of_2() takes 1 argument, not 2"),
    ("min(4)", "min() takes two or more arguments, not 1"),
    ("cdiv(n, b=2)", "keyword arguments are not taken"),
    ("max(*xs, 1)", "max(*...) is not taken"),
    ("ceil(n)", "ceil() is not one of the functions a grid may call: cdiv, next_power_of_2, min, max"),
    ("math.cdiv(n, 2)", "math.cdiv() is not one of the functions"),
    ("eval('1')", "eval() is not one of the functions"),
    ("__import__('os').system('true')", "is not one of the functions"),
    ("open('f').read()", "is not one of the functions"),
    ("x.foo", "attribute access (only x.shape[i], x.numel(), triton.cdiv(...)) is not taken"),
    ("x.__class__", "attribute access"),
    ("x[0]", "only x.shape[i] (a tensor argument's size) and META['NAME'] (a constexpr) may be indexed"),
    ("x.shape[i]", "a tensor's dimension is a number"),
    ("META['not a name']", "'not a name' is not a name"),
    ("x.numel(1)", "x.numel() takes no argument"),
    ("n if n else 1", "if/else is not taken"),
    ("n > 1", "a comparison is not taken"),
    ("n and 1", "and/or is not taken"),
    ("lambda META: 1", "a lambda is not taken"),
    ("f'{n}'", "an f-string is not taken"),
    ("(1, 2), 3", "dimensions are separated by commas at the top level only"),
    ("n @ m", "the operator MatMult is not taken"),
    ("n\x00", "is not an expression"),
])
def test_a_bad_grid_is_a_usage_error_that_says_what_is_wrong(text, said):
    with pytest.raises(UsageError) as e:
        parse_grid(text)
    assert e.value.exit_code == ExitCode.USAGE
    assert said in e.value.message, e.value.message
    assert e.value.hint


@pytest.mark.parametrize("text, said", [
    ("+".join(["n"] * 3000), "characters long; a launch grid takes at most 500"),   # 3000 terms
    ("+".join(["n"] * 200), "nested more than 32 levels deep"),                       # short enough, too deep
    ("-" * 450 + "1", "nested more than 32 levels deep"),
    ("(" * 240 + "1" + ")" * 240, "too many nested parentheses"),                     # Python's parser's own limit
    ("max(" + ",".join(["n"] * 240) + ")", "more than 200 terms"),                    # wide, not deep
    ("cdiv(" * 60 + "1" + ",2)" * 60, "nested more than 32 levels deep"),
])
def test_a_hostile_grid_is_a_clean_error(text, said):
    with pytest.raises(UsageError) as e:   # never RecursionError or MemoryError
        parse_grid(text)
    assert said in e.value.message


def test_the_text_is_never_handed_to_python():
    """parse_grid reads an AST; nothing in the module runs text as code."""
    import tritonscope.inputs.grid as grid

    tree = ast.parse(Path(grid.__file__).read_text())
    called = {ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    assert not called & {"eval", "exec", "compile", "ast.literal_eval", "__import__"}


# --------------------------------------------------------------------------
# evaluate: a launch's bound values
# --------------------------------------------------------------------------

VALUES = {
    "x_ptr": TensorArg("fp16", (4096, 128)), "y_ptr": "fp16[32,64].T", "o_ptr": "fp32[4096]",
    "p_ptr": TensorArg("fp16", None),
    "desc": DescArg("fp16", (128, 64), (4096, 4096)), "bare_desc": DescArg("fp16", (128, 64)),
    "n_rows": 4096, "n_text": "1000", "BLOCK": 128, "FLAG": True, "eps": 1e-5, "reduction": "mean", "none_arg": None,
}


@pytest.mark.parametrize("text, grid", [
    ("cdiv(n_rows, 1)", (4096,)),
    ("cdiv(n_rows, BLOCK), 4", (32, 4)),
    ("cdiv(n_text, BLOCK)", (8,)),                    # an --arg's text
    ("(triton.cdiv(n_rows, META['BLOCK']),)", (32,)),
    ("x_ptr.shape[0], x_ptr.shape[-1]", (4096, 128)),
    ("cdiv(x_ptr.numel(), BLOCK)", (4096,)),
    ("x_ptr.size(1)", (128,)),
    ("y_ptr.shape[0], y_ptr.shape[1]", (64, 32)),     # a .T view's shape is the view's, as the stand-in's
    ("o_ptr.numel() // BLOCK", (32,)),                # a tensor's --arg text
    ("cdiv(desc.shape[0], 128)", (32,)),
    ("1 + FLAG", (2,)),                               # a bool counts as 0/1, as in Python
    ("min(cdiv(n_rows, BLOCK), 132)", (32,)),
    ("next_power_of_2(n_text)", (1024,)),
])
def test_evaluate_reads_ints_constexprs_and_tensor_sizes(text, grid):
    assert evaluate(parse_grid(text), VALUES) == grid
    assert evaluate(text, VALUES) == grid  # the text itself is parsed first


def test_each_launch_gets_its_own_grid():
    spec = parse_grid("cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)")
    assert evaluate(spec, {"M": 4096, "N": 4096, "BLOCK_M": 128, "BLOCK_N": 256}) == (32 * 16,)
    assert evaluate(spec, {"M": 4096, "N": 4096, "BLOCK_M": 64, "BLOCK_N": 64}) == (64 * 64,)


def test_an_unknown_name_lists_the_names_there_are():
    with pytest.raises(KernelSpecError) as e:
        evaluate("cdiv(n_row, BLOCK)", VALUES, kernel="softmax_kernel")
    assert e.value.exit_code == ExitCode.BAD_KERNEL
    assert "softmax_kernel has no argument or constexpr named 'n_row'. Did you mean: n_rows" in e.value.message
    assert "n_rows (4096)" in e.value.hint and "BLOCK (128)" in e.value.hint
    assert "x_ptr (fp16[4096,128]: x_ptr.shape[i], x_ptr.numel())" in e.value.hint


@pytest.mark.parametrize("text, said", [
    ("eps", "eps is 1e-05, not a whole number"),
    ("reduction", "reduction is 'mean', not a number"),
    ("none_arg", "none_arg is none, not a number"),
    ("cdiv(x_ptr, BLOCK)", "x_ptr is a tensor (fp16[4096,128]), not a number: use x_ptr.shape[i] or x_ptr.numel()"),
    ("p_ptr.shape[0]", "p_ptr is a bare pointer (*fp16), which has no shape: describe it as --arg p_ptr=fp16[dims]"),
    ("bare_desc.shape[0]", "which names no tensor shape"),
    ("n_rows.shape[0]", "n_rows is 4096, not a tensor"),
    ("x_ptr.shape[2]", "x_ptr has 2 dimensions (fp16[4096,128]), so x_ptr.shape[2] is out of range"),
    ("cdiv(n_rows, BLOCK - 128)", "cdiv(a, b) with b = 0 divides by zero"),
    ("n_rows - n_rows", "the grid's dimension is 0"),
    ("n_rows * n_rows * n_rows", "dimension is 68719476736; a launch runs 1 to 2147483647"),
    ("n_rows ** 6", "grows past 2**63"),
    ("1, BLOCK - 200", "the grid's y dimension is -72"),
])
def test_a_value_the_grid_cannot_take_is_a_kernel_spec_error(text, said):
    with pytest.raises(KernelSpecError) as e:
        evaluate(text, VALUES)
    assert said in e.value.message, e.value.message
    assert e.value.hint.startswith("Its values here: ")


def test_a_bad_expression_fails_in_parse_not_in_evaluate():
    with pytest.raises(UsageError):
        evaluate("n_rows / 2", VALUES)


# --------------------------------------------------------------------------
# The Config carries the text; the result cache keys on it
# --------------------------------------------------------------------------


def test_the_config_carries_the_grid_and_resolve_checks_it():
    from tritonscope.inputs.kernels import Request
    from tritonscope.pipeline.config import Config, resolve, with_grid

    request = with_grid(Request(target="vector_add", arch="90"), "cdiv(n_elements, BLOCK)")
    assert request.grid == "cdiv(n_elements, BLOCK)" and request.arch == "90"   # not resolved yet
    config = resolve(replace(request, num_warps=8))
    assert type(config) is Config and config.arch == "sm_90a" and config.num_warps == 8
    assert config.grid == "cdiv(n_elements, BLOCK)"
    # still checked when resolved: --maxnreg on an AMD target
    with pytest.raises(UsageError, match="maxnreg"):
        resolve(with_grid(Request(target="vector_add", arch="gfx942", options={"maxnreg": 32}), "64"))
    assert Config(**config.payload()) == config                                    # a child rebuilds it
    assert with_grid(config, "64").grid == "64" and with_grid(config, None) is config
    assert resolve(Request(target="vector_add"), "sm_80").grid is None
    with pytest.raises(UsageError):
        with_grid(Request(target="vector_add"), "n/2")
    with pytest.raises(UsageError):
        resolve(Config(target="vector_add", grid="0"), "sm_80")


def test_the_result_cache_keys_on_the_grid():
    from tritonscope.pipeline.config import Config
    from tritonscope.pipeline.result_cache import request_fields

    plain = request_fields(Config(target="vector_add", arch="sm_90a"), "sm_90a")
    assert "grid" not in plain   # the keys of compiles without --grid are as before
    assert request_fields(Config(target="vector_add", arch="sm_90a", grid="64"), "sm_90a")["grid"] == "64"


# --------------------------------------------------------------------------
# The five commands: --grid is accepted, reaches the Config, and a bad one exits 2 before any work
# --------------------------------------------------------------------------

COMMANDS = {
    "compile": ["compile", "vector_add"],
    "sweep": ["sweep", "vector_add", "-c", "BLOCK=256,1024"],
    "tune": ["tune", "vector_add", "-c", "BLOCK=256,1024"],
    "diff": ["diff", "vector_add", "--a", "BLOCK=256", "--b", "BLOCK=1024"],
    "explain": ["explain", "vector_add"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_documents_grid(command):
    out = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert out.exit_code == 0 and "--grid" in out.output


def _no_work(monkeypatch):
    import importlib

    def boom(*a, **k):
        raise AssertionError("work started before --grid was checked")

    for module, name in (("pipeline.triton_compile", "compile_artifact"), ("measure.sweep", "run_sweep"),
                         ("pipeline.binding", "build_spec")):
        monkeypatch.setattr(importlib.import_module(f"tritonscope.{module}"), name, boom)


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("grid, said", [("n_elements / BLOCK", "'/' makes a float"), ("0", "dimension is 0"),
                                        ("__import__('os')", "is not one of the functions")])
def test_a_bad_grid_exits_2_before_any_work(monkeypatch, command, grid, said):
    _no_work(monkeypatch)
    out = runner.invoke(app, [*COMMANDS[command], "--grid", grid])
    assert out.exit_code == ExitCode.USAGE, out.output
    assert said in out.output


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_grid_reaches_the_config(monkeypatch, command):
    import tritonscope.pipeline.binding as binding

    seen = []

    class Seen(Exception):
        pass

    def bind(config, *a, **k):
        seen.append(config)
        raise Seen

    monkeypatch.setattr(binding, "build_spec", bind)
    arch = [] if command == "tune" else ["--arch", "sm_90a"]   # tune compiles for this machine's GPU
    out = runner.invoke(app, [*COMMANDS[command], "--grid", "cdiv(n_elements, BLOCK)", *arch])
    assert seen, out.output    # the command got as far as binding (where the CLI then reports Seen)
    assert seen[0].grid == "cdiv(n_elements, BLOCK)" and (not arch or seen[0].arch == "sm_90a")


# --------------------------------------------------------------------------
# End to end: --predict on a kernel named by file, once the binding sets the grid
# --------------------------------------------------------------------------

KERNEL = '''
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
'''


def test_predict_on_a_file_kernel_with_a_grid(tmp_path):
    path = tmp_path / "scale.py"
    path.write_text(KERNEL)
    args = ["compile", f"{path}:scale", "--arg", "x_ptr=fp32[1048576]", "--arg", "y_ptr=fp32[1048576]",
            "--arg", "n=1048576", "-c", "BLOCK=1024", "--arch", "sm_90a", "--stage", "none", "--json", "--gpu", "H100"]
    without = json.loads(runner.invoke(app, args).output)["prediction"]
    assert without["predicted_ms"] is None and "give --grid (e.g. --grid 'cdiv(n, BLOCK)')" in without["why"]
    out = runner.invoke(app, [*args, "--grid", "cdiv(n, BLOCK)"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["prediction"]["predicted_ms"] > 0 and data["prediction"]["gpu"] == "H100 SXM"
    unknown = runner.invoke(app, [*args, "--grid", "cdiv(n_elements, BLOCK)"])
    assert unknown.exit_code == ExitCode.BAD_KERNEL
    assert "scale has no argument or constexpr named 'n_elements'" in unknown.output


def test_explain_predicts_a_kernel_that_already_compiled_at_a_shape_or_a_grid(tmp_path):
    """A found kernel: --shape's launch (its file's EXAMPLES) or --grid gives the grid its prediction is for."""
    folder = tmp_path / "k"
    emitted = runner.invoke(app, ["compile", "matmul", "--block", "16", "-s", "1", "--arch", "sm_90a", "--emit",
                                  str(folder), "--stage", "none"])
    assert emitted.exit_code == 0, emitted.output
    base = ["explain", str(folder), "--gpu", "H100", "--predict", "--no-check-fixes", "--json"]
    at_shape = json.loads(runner.invoke(app, [*base, "--shape", "1024x1024x1024"]).output)["prediction"]
    assert at_shape["predicted_ms"] > 0, at_shape
    at_grid = runner.invoke(app, [*base, "--shape", "1024x1024x1024", "--grid", "cdiv(1024, BLOCK) ** 2"])
    assert at_grid.exit_code == 0, at_grid.output
    assert json.loads(at_grid.output)["prediction"]["predicted_ms"] == at_shape["predicted_ms"]  # (1024/16)**2
    none = json.loads(runner.invoke(app, base).output)["prediction"]
    assert none["predicted_ms"] is None and "give --grid" in none["why"]
    typed = runner.invoke(app, [*base, "--grid", "cdiv(M, BLOCK)"])   # it recorded M's type, not its value
    assert typed.exit_code == ExitCode.BAD_KERNEL and "records its arguments' types" in typed.output
