"""Round 13, hostile user: inputs to last round's surface (and last round's open items) that were taken
silently, ended in a FAILED row with exit 0, or printed more than one clean message.

Each test here failed before its fix.  Values that are checked as text are refused before anything
compiles (a recorder on the compile entry points says so).
"""

from __future__ import annotations

import importlib

import pytest
from typer.testing import CliRunner

from tritonscope.cli import app

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def _one_clean_error(result, code: int, words: str) -> None:
    assert result.exit_code == code, result.output
    assert words in " ".join(result.output.split()), result.output
    assert "Traceback" not in result.output and "error: unexpected" not in result.output, result.output
    assert len(result.output) < 2000, result.output


@pytest.fixture
def no_compile(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("a compile started before the values were checked")

    for module, name in (("pipeline.triton_compile", "compile_artifact"), ("pipeline.triton_compile", "_compile"),
                         ("pipeline.child_compile", "compile_elsewhere"), ("measure.sweep", "run_sweep")):
        monkeypatch.setattr(importlib.import_module(f"tritonscope.{module}"), name, boom)


# --------------------------------------------------------------------------
# Numbers as written that are not the value read: 1e999 is inf, 1e-999 is 0.0
# --------------------------------------------------------------------------

NOT_READ = [("1e999", "beyond a 64-bit float's range (it would be read as inf)"),
            ("-1e999", "read as -inf"),
            ("1e-999", "below a 64-bit float's smallest (it would be read as 0.0)"),
            ("9" * 5000, "the integer has 5000 digits")]


@pytest.mark.parametrize("value,words", NOT_READ)
def test_sweep_axis_number_not_read_is_refused(no_compile, value, words):
    """Last round: `sweep matmul -c BLOCK=1e999` was a FAILED row with exit 0; a later value of an axis too."""
    for axis in (f"BLOCK={value}", f"BLOCK=16,{value}"):
        _one_clean_error(invoke("sweep", "matmul", "-c", axis), 2, words)


@pytest.mark.parametrize("value,words", NOT_READ)
def test_compile_constexpr_number_not_read_is_refused(no_compile, value, words):
    """`compile matmul -c BLOCK=1e999` reached Triton (exit 5); a 5000-digit one printed all 5000 digits."""
    _one_clean_error(invoke("compile", "matmul", "-c", f"BLOCK={value}"), 2, f"-c BLOCK={value[:20]}")
    _one_clean_error(invoke("compile", "matmul", "-c", f"BLOCK={value}"), 2, words)


@pytest.mark.parametrize("value,words", NOT_READ[:3])
def test_arg_number_not_read_is_refused(no_compile, value, words):
    """`--arg n_elements=1e999` compiled with n_elements=inf as an fp32 argument (and --json wrote `Infinity`)."""
    _one_clean_error(invoke("compile", "vector_add", "--arg", f"n_elements={value}"), 2, words)


def test_quoted_text_and_plain_numbers_are_kept():
    from tritonscope.inputs.values import check_number_text, parse_constexpr

    for text in ("16", "0.5", "0e5", "0.0", "1e30", "'1e999'", '"1e-999"', "1e-300", "bf16", "mean"):
        assert check_number_text("constexprs", "X", text, parse_constexpr(text)) == parse_constexpr(text)
    assert check_number_text("constexprs", "X", float("inf"), float("inf")) == float("inf")  # a Python value


def test_sweep_axis_given_twice_is_refused(no_compile):
    """`sweep -c BLOCK=16 -c BLOCK=32` swept only BLOCK=32 (the first axis silently dropped)."""
    _one_clean_error(invoke("sweep", "matmul", "-c", "BLOCK=16", "-c", "BLOCK=32"), 2,
                     "-c BLOCK is given twice: BLOCK=16 and BLOCK=32")


def test_sweep_later_axis_value_of_wrong_kind_is_refused(no_compile):
    """`sweep matmul -c BLOCK=16,nan` was a FAILED row labelled 'wNone sNone None' with exit 0; its first
    value alone was refused (exit 4), so every value is now checked the same way before a worker starts."""
    _one_clean_error(invoke("sweep", "matmul", "-c", "BLOCK=16,nan"), 4,
                     "-c BLOCK=nan: not a number, bool or dtype, and matmul_kernel's BLOCK is a number")


# --------------------------------------------------------------------------
# show of a saved failure report that was tampered with
# --------------------------------------------------------------------------

FAILING = "tests/data/failing"


@pytest.fixture(scope="module")
def failed_compile(tmp_path_factory):
    """A real failed compile (libdevice on gfx942 fails on 3.6 and 3.9), of a copy of the kernel whose failing
    line ends in a comment holding a BEL and escape codes: (its terminal output, its report as --save wrote it)."""
    import json
    from pathlib import Path

    folder = tmp_path_factory.mktemp("failure")
    lines = Path(f"{FAILING}/libdevice_on_amd.py").read_text().splitlines()
    lines = [ln + "  # \x1b]0;pwn\x07 \x1b[2J" if "libdevice.rsqrt" in ln else ln for ln in lines]
    (folder / "k.py").write_text("\n".join(lines) + "\n")
    path = folder / "fail.json"
    result = invoke("compile", f"{folder / 'k.py'}:rsqrt_kernel", "--arch", "gfx942", "--arg", "x_ptr=*fp32", "--arg",
                    "out_ptr=*fp32", "--arg", "n=1024", "-c", "BLOCK=256", "--save", path, "--width", "200")
    assert result.exit_code == 5, result.output
    return result.output, json.loads(path.read_text())


@pytest.fixture(scope="module")
def failure_report(failed_compile):
    return failed_compile[1]


def test_a_failed_compile_shows_a_bel_in_the_kernel_line_escaped(failed_compile):
    """The kernel's line in the failure report: ESC was escaped, but a BEL was dropped by rich, unsaid."""
    output = failed_compile[0]
    assert "\x1b" not in output and "\x07" not in output
    assert "rsqrt(x)  # \\x1b]0;pwn\\x07 \\x1b[2J" in output, output


def _tampered(tmp_path, data=None, text=None):
    import json

    path = tmp_path / "tampered.json"
    path.write_text(text if text is not None else json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("opener", ["[", '{"a": '])
def test_show_of_a_failure_report_nested_too_deeply(tmp_path, opener):
    """A failure report's JSON nested 100,000 deep ended in 'unexpected RecursionError' (exit 1)."""
    closer = "]" if opener == "[" else "}"
    text = '{"schema": "tritonscope.failure", "failure": ' + opener * 100000 + "1" + closer * 100000 + "}"
    _one_clean_error(invoke("show", _tampered(tmp_path, text=text)), 7, "nested too deeply")


def test_show_of_a_failure_report_with_a_lone_surrogate(tmp_path, failure_report):
    """A kernel name holding JSON's "\\ud800" (no encoding can write it) ended in UnicodeEncodeError, exit 1, on
    the terminal and in --save x.html; it is now shown as the escape, as control characters are."""
    import json

    text = json.dumps(failure_report).replace("rsqrt_kernel", "rsqrt\\ud800kernel")
    path = _tampered(tmp_path, text=text)
    shown = invoke("show", path)
    assert shown.exit_code == 0, shown.output
    assert "rsqrt\\ud800kernel" in shown.output and "\ud800" not in shown.output
    for ext in ("html", "txt", "md", "json"):
        saved = invoke("show", path, "--save", tmp_path / f"again.{ext}")
        assert saved.exit_code == 0, saved.output
        assert "\ud800" not in (tmp_path / f"again.{ext}").read_text(encoding="utf-8", errors="surrogatepass")


def test_show_of_a_failure_report_escapes_control_characters_in_every_field(tmp_path, failure_report):
    import copy

    data = copy.deepcopy(failure_report)
    data["failure"]["kernel"] = "k\x1b]52;c;SGVsbG8=\x07x"
    data["failure"]["explanation"] = ["a\x1b[2Jb"]
    shown = invoke("show", _tampered(tmp_path, data))
    assert shown.exit_code == 0, shown.output
    assert "\x1b" not in shown.output and "k\\x1b]52;c;SGVsbG8=\\x07x" in shown.output and "a\\x1b[2Jb" in shown.output


@pytest.mark.parametrize("version,said", [(999, "version 999"), ("1", "version '1'"), (True, "version True"),
                                          (None, "version null")])
def test_show_of_a_failure_report_of_another_schema_version(tmp_path, failure_report, version, said):
    """schema_version 999 was read as version 1 (a later version's fields would be misread), as no other
    saved report is."""
    import copy

    data = copy.deepcopy(failure_report)
    data["schema_version"] = version
    _one_clean_error(invoke("show", _tampered(tmp_path, data)), 7, f"uses failure report schema {said}")
    data["schema_version"] = 1
    assert invoke("show", _tampered(tmp_path, data)).exit_code == 0


# --------------------------------------------------------------------------
# Hostile IR and layouts: many aliases, alias chains, warps beyond any GPU
# --------------------------------------------------------------------------

ROW_SUM = "tests/data/found_loop/3.9/cache/QFEFYDGJYC3HTFQBZTQEGQBHMMK3MPYOWAQLESGPOG2ZOBLXO5NQ/row_sum_kernel.ttgir"
BLOCKED = "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>"


def _ttgir_with_header(tmp_path, header: str, name: str = "k.ttgir", warps8: bool = False):
    """The real row_sum TTGIR (Triton 3.9, sm_90a) with its one alias replaced by `header`."""
    from pathlib import Path

    text = Path(ROW_SUM).read_text()
    assert f"#blocked = {BLOCKED}\n" in text
    text = text.replace(f"#blocked = {BLOCKED}\n", header)
    if warps8:
        text = text.replace('"ttg.num-warps" = 4', '"ttg.num-warps" = 8').replace("warpsPerCTA = [4]", "warpsPerCTA = [8]")
    path = tmp_path / name
    path.write_text(text)
    return path


def test_ttgir_whose_aliases_push_the_module_line_past_16kb(tmp_path):
    """600 layout aliases (24 KB before `module attributes {...}`): the target and num-warps = 8 were not read
    (only the first 16 KB were), so the summary said target '?' and num_warps=4 as a guess the file refuted;
    5000 aliases (200 KB) were refused as 'does not look like TTGIR' (exit 7)."""
    for count in (600, 5000):
        header = f"#blocked = {BLOCKED.replace('[4]', '[8]')}\n" + "".join(
            f"#bl{i} = #ttg.blocked<{{sizePerThread = [{1 + i % 4}], threadsPerWarp = [32], warpsPerCTA = [8], "
            f"order = [0]}}>\n" for i in range(count))
        path = _ttgir_with_header(tmp_path, header, f"k{count}.ttgir", warps8=True)
        result = invoke("open", path, "--stage", "ttgir", "--width", "100")
        assert result.exit_code == 0, result.output
        text = " ".join(result.output.split())
        assert "sm_90a" in text and "num_warps=8" in text, result.output[:1500]
        assert "does not record num_warps" not in text and "does not record its target" not in text


def test_ttgir_alias_chain_too_deep_is_not_drawn_not_a_crash(tmp_path):
    """A chain of 600 aliases, each the parent of the one before: `open --layouts` ended in 'unexpected
    RecursionError' (exit 1).  The layout is now 'Not drawn' with the reason; the rest is shown."""
    header = "#blocked = #ttg.slice<{dim = 0, parent = #c0}>\n" + "".join(
        f"#c{i} = #ttg.slice<{{dim = 0, parent = #c{i + 1}}}>\n" for i in range(600)) + f"#c600 = {BLOCKED}\n"
    result = invoke("open", _ttgir_with_header(tmp_path, header), "--layouts", "--width", "120")
    assert result.exit_code == 0, result.output
    assert "Not drawn: Malformed layout in the TTGIR (#blocked): nested too deeply" in " ".join(result.output.split())


def test_layout_string_nested_too_deeply_is_one_short_error():
    """`layout '#ttg.slice<{... parent = #ttg.slice<...' x2000`: exit 1 (RecursionError); the error now quotes
    80 characters either side of where reading stopped, not the whole 70 KB string."""
    text = "#ttg.slice<{dim = 0, parent = " * 2000 + BLOCKED + "}>" * 2000
    result = invoke("layout", text, "--shape", "16")
    _one_clean_error(result, 7, "nested too deeply")


def test_layout_errors_quote_a_window_of_a_long_string():
    """A 60 KB layout string was echoed whole by both of the layout's errors (malformed, and invalid fields)."""
    sizes = "1, " * 20000
    text = "#ttg.blocked<{sizePerThread = [" + sizes + "1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}> ?"
    _one_clean_error(invoke("layout", text, "--shape", "16"), 7, "Malformed layout string: unexpected text after")
    text = "#ttg.blocked<{sizePerThread = [" + sizes + "x], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>"
    _one_clean_error(invoke("layout", text, "--shape", "16"), 7, "(20001 entries) needs whole numbers of at least 1")


def test_layout_of_2_to_the_40_warps_lists_a_few(monkeypatch):
    """warpsPerCTA = [2**40] (a power of two, so drawn): the legend looped over every warp and --hardware's
    `break` left the warps' loop running (300 s and 11 GB before it was stopped).  Each now stops at what it
    shows; a counter on the colour lookup fails the test long before 2**40."""
    import tritonscope.outputs.render.layout_view as view

    calls = {"n": 0}
    real = view._color

    def counted(i):
        calls["n"] += 1
        if calls["n"] > 100_000:
            raise AssertionError("the layout view walks every warp")
        return real(i)

    monkeypatch.setattr(view, "_color", counted)
    text = BLOCKED.replace("[4]", f"[{2**40}]")
    result = invoke("layout", text, "--shape", "128", "--hardware")
    assert result.exit_code == 0, result.output
    assert f"Showing threads 0-63 of {2**40 * 32}." in " ".join(result.output.split())


# --------------------------------------------------------------------------
# The autotune hook: configs that are no Config, grids no launch runs
# --------------------------------------------------------------------------

def _prune_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("prune_kernel_r13", "tests/data/cost/prune_kernel.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


N = 1 << 20
PRUNE_ARGS = {"x_ptr": f"fp32[{N}]", "y_ptr": f"fp32[{N}]", "out_ptr": f"fp32[{N}]", "n": N}


@pytest.mark.parametrize("bad", [{"BLOCK": 256}, None, "BLOCK=256"])
def test_prune_hook_refuses_a_config_that_is_no_config(bad):
    """A dict among the configs ended in "AttributeError: 'dict' object has no attribute 'kwargs'"."""
    from triton import Config

    import tritonscope

    hook = tritonscope.prune_by_prediction(1, grid=(8,), kernel=_prune_module().add_kernel, arch="sm_90a", jobs=1)
    with pytest.raises(TypeError, match=r"configs\[1\] is .* not a triton.Config"):
        hook([Config({"BLOCK": 128}, num_warps=4), bad], PRUNE_ARGS)
    with pytest.raises(TypeError, match="the configs are a list of triton.Config, not 5"):
        hook(5, PRUNE_ARGS)


@pytest.mark.parametrize("grid", [(0,), 2**31, (4, 0, 1)])
def test_prune_hook_refuses_a_fixed_grid_no_launch_runs(grid):
    """grid=(0,) was taken, and every config then failed in the model with a ZeroDivisionError."""
    import tritonscope

    with pytest.raises(ValueError, match="a launch runs 1 to 2147483647 programs along each dimension"):
        tritonscope.prune_by_prediction(2, grid=grid)


def test_prune_hook_grid_function_giving_no_launch_keeps_the_config_unjudged():
    """A grid function that gives (0,) for a config: 'not predicted: ZeroDivisionError: integer division or
    modulo by zero'; 2**70 programs was predicted (607536237982877 ms) as if a launch could run it."""
    from triton import Config

    import tritonscope

    configs = [Config({"BLOCK": 128}, num_warps=4), Config({"BLOCK": 4096}, num_warps=4)]
    for dims in ((0,), (2**70,)):
        hook = tritonscope.prune_by_prediction(1, grid=lambda m, d=dims: d, kernel=_prune_module().add_kernel,
                                               arch="sm_90a", gpu="H100", jobs=1)
        assert hook(configs, PRUNE_ARGS) == configs   # nothing judged: nothing pruned
        assert [r.get("why") for r in hook.last] == [
            f"not predicted: grid= gave {dims} for this config; a launch runs 1 to 2147483647 programs along each "
            "dimension"] * 2


# --------------------------------------------------------------------------
# compile CAPTURE -k K: a found kernel's recompile with hostile constexprs
# --------------------------------------------------------------------------

CAPTURE = "tests/data/capture"


def test_found_kernel_constexpr_number_not_read_is_refused(no_compile):
    """`compile CAPTURE -k 665e -c BLOCK=1e999` recompiled, and Triton's error then ended in 'unexpected
    AttributeError: SimpleNamespace object has no attribute constexprs' (exit 1)."""
    _one_clean_error(invoke("compile", CAPTURE, "-k", "665e", "-c", "BLOCK=1e999"), 2,
                     "-c BLOCK=1e999: the number is beyond a 64-bit float's range")


def test_found_kernel_constexpr_of_the_wrong_kind_is_a_compile_error_with_its_line():
    """`-c BLOCK=abc` (and 2.5) for a found kernel: exit 1 (the recompile's error handler read constexprs the
    stand-in spec lacked); now Triton's error, naming the file line (capture_programs.py:30, the `offs = ...`
    line; it was numbered from the def: ':2')."""
    result = invoke("compile", CAPTURE, "-k", "665e", "-c", "BLOCK=abc")
    _one_clean_error(result, 4, "BLOCK=abc ('abc', a string) does not fit its use in scale_kernel at "
                                "capture_programs.py:30")
    result = invoke("compile", CAPTURE, "-k", "665e", "-c", "BLOCK=2.5")
    _one_clean_error(result, 5, "Triton could not compile scale_kernel at capture_programs.py:30")


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_api_found_kernel_non_finite_constexpr_is_refused(no_compile, value):
    """tritonscope.compile(CAPTURE, kernel=..., constexprs={'BLOCK': inf}) recompiled with the string 'inf'."""
    import tritonscope
    from tritonscope.core.errors import UsageError

    with pytest.raises(UsageError, match=rf"constexprs\['BLOCK'\]={value}: a found kernel is recompiled"):
        tritonscope.compile(CAPTURE, kernel="665e", constexprs={"BLOCK": value})


@pytest.mark.parametrize("grid,said", [("0", "grid='0': the grid's dimension is 0"),
                                       ("1e999", "grid='1e999': inf is not a whole number"),
                                       ("", "grid is empty")])
def test_api_grid_errors_speak_the_api_keyword(no_compile, grid, said):
    """tritonscope.compile(..., grid='0') said "--grid '0': ...", an option the Python API has not; the command
    line keeps its own words."""
    import tritonscope
    from tritonscope.core.errors import UsageError

    for target, kw in (("matmul", {"block": 16}), (CAPTURE, {"kernel": "665e"})):
        with pytest.raises(UsageError) as e:
            tritonscope.compile(target, grid=grid, **kw)
        assert said in e.value.message and "--grid" not in e.value.message
    _one_clean_error(invoke("compile", "matmul", "--grid", "0"), 2, "--grid '0': the grid's dimension is 0")


# --------------------------------------------------------------------------
# --where: a number field compared with text
# --------------------------------------------------------------------------

@pytest.mark.parametrize("cond,said", [("regs<abc", "--where 'regs<abc': regs is a number, and 'abc' is none"),
                                       ("regs<nan", "regs is a number, and 'nan' is none"),
                                       ("mix.wgmma>x", "mix.wgmma is a number, and 'x' is none")])
def test_sweep_where_text_for_a_number_is_refused_before_compiling(no_compile, cond, said):
    """`sweep matmul -c BLOCK=16 --where 'regs<1e3'` (or 'regs<abc'): "unexpected TypeError: '<' not supported
    between instances of 'int' and 'str'", exit 1, after compiling."""
    _one_clean_error(invoke("sweep", "matmul", "-c", "BLOCK=16", "--where", cond), 2, said)


def test_sweep_where_reads_a_number_written_with_an_exponent():
    from tritonscope.measure.sweep.rows import SweepRow
    from tritonscope.measure.sweep.table import filter_rows

    row = SweepRow(index=0, config="BLOCK=16", constexprs={"BLOCK": 16}, num_warps=4, num_stages=3, arch="sm_90a",
                   dtype="fp16", ok=True, registers=28)
    assert filter_rows([row], ["regs<1e3"]) == [row] and filter_rows([row], ["regs>1e3"]) == []
    assert filter_rows([row], ["BLOCK<=16.0"]) == [row]
    with pytest.raises(Exception, match="BLOCK is a number, and 'abc' is none"):
        filter_rows([row], ["BLOCK<abc"])


@pytest.mark.parametrize("cond,said", [("name<5", "--where 'name<5': name is text; < compares numbers"),
                                       ("arch>1", "arch is text; > compares numbers"),
                                       ("registers>nan", "--where 'registers>nan': > needs a number")])
def test_open_where_order_on_text_is_refused(cond, said):
    """`open CAPTURE --where 'name<5'`: "unexpected TypeError: '<' not supported between instances of 'str' and
    'float'" (exit 1); 'registers>nan' silently matched no kernel."""
    _one_clean_error(invoke("open", CAPTURE, "--where", cond), 2, said)


def _rows_of_mixed_kinds():
    from tritonscope.measure.sweep.rows import SweepRow

    return [SweepRow(index=i, config=f"ACT={v!r}", constexprs={"ACT": v}, num_warps=4, num_stages=3, arch="sm_90a",
                     dtype="fp32", ok=True, registers=10) for i, v in enumerate(["relu", 1, None])]


def test_sweep_sort_and_where_on_a_constexpr_of_mixed_kinds():
    """`sweep k.py:k -c ACT=relu,1,none --sort ACT` (a string constexpr given a number too): "unexpected
    TypeError: '<' not supported between instances of 'int' and 'str'" (exit 1); `--where ACT=relu` the same
    (every comparison was evaluated, not only the one asked)."""
    from tritonscope.measure.sweep.table import filter_rows, sort_rows

    rows = _rows_of_mixed_kinds()
    assert [r.constexprs["ACT"] for r in sort_rows(rows, "ACT")] == [1, "relu", None]
    assert [r.constexprs["ACT"] for r in sort_rows(rows, "-ACT")] == ["relu", 1, None]
    assert [r.constexprs["ACT"] for r in filter_rows(rows, ["ACT=relu"])] == ["relu"]
    assert [r.constexprs["ACT"] for r in filter_rows(rows, ["ACT!=relu"])] == [1]


@pytest.mark.parametrize("flags,said", [(["--layouts"], "--layouts has nothing to show"),
                                        (["--stage", "nosuch"], "--stage has nothing to show"),
                                        (["--view", "walkthrough", "--line", "21"], "--view and --line have nothing")])
def test_show_of_a_failure_report_refuses_view_options(tmp_path, failure_report, flags, said):
    """`show FAILED.json --stage nosuch` (or --layouts, --view, --line) showed the failure report, exit 0: the
    options were dropped unsaid, even a stage that does not exist."""
    path = _tampered(tmp_path, failure_report)
    _one_clean_error(invoke("show", path, *flags), 2, f"is the report of a compile that failed: it has no stages, "
                                                      f"so {said}")
    assert invoke("show", path, "--width", "120").exit_code == 0


def test_run_constexpr_number_not_read_is_refused_before_the_gpu_is_looked_for(no_compile):
    """`run matmul -c BLOCK=1e999` said 'needs a CUDA GPU' (exit 9) where `run matmul -w 3` and `--arg M=banana`
    are exit 2 first: the -c value is now checked with the others, as the command line is read."""
    _one_clean_error(invoke("run", "matmul", "-c", "BLOCK=1e999"), 2, "-c BLOCK=1e999: the number is beyond")


def test_a_5000_digit_shape_is_quoted_cut(no_compile):
    """`compile matmul --shape <5000 digits>x2x2` and `layout ... --shape <5000 digits>` echoed all 5000 digits."""
    digits = "9" * 5000
    _one_clean_error(invoke("compile", "matmul", "--shape", f"{digits}x2x2"), 2, "(5004 characters)")
    _one_clean_error(invoke("layout", BLOCKED, "--shape", digits), 2, "Bad shape")


@pytest.mark.parametrize("flags,said", [(["-w", "3"], "--num-warps 3 is not a power of two from 1 to 32"),
                                        (["-w", "64"], "--num-warps 64 is not a power of two from 1 to 32"),
                                        (["-s", "0"], "--num-stages 0 must be at least 1")])
def test_found_kernel_launch_shape_is_checked_as_a_compiles(no_compile, flags, said):
    """`compile CAPTURE -k 665e -w 3` reached Triton ('num_warps must be a power of 2', exit 5); -w 64 and -s 0
    recompiled unsaid, where `compile matmul -w 64` is refused."""
    _one_clean_error(invoke("compile", CAPTURE, "-k", "665e", *flags), 2, said)
    _one_clean_error(invoke("open", CAPTURE, "--kernel", "665e", "--recompile", *flags), 2, said)


@pytest.mark.parametrize("kw,said", [({"num_warps": 3}, "num_warps=3 is not a power of two"),
                                     ({"constexprs": "BLOCK=16"}, "constexprs must be a dict of names and values"),
                                     ({"options": [1]}, "options must be a dict of names and values")])
def test_api_found_kernel_changes_are_checked(no_compile, kw, said):
    """tritonscope.compile(CAPTURE, kernel=..., constexprs="BLOCK=16") was "AttributeError: 'str' object has no
    attribute 'items'"; num_warps=3 a CompileError from Triton."""
    import tritonscope
    from tritonscope.core.errors import UsageError

    with pytest.raises(UsageError, match=said):
        tritonscope.compile(CAPTURE, kernel="665e", **kw)


def test_open_num_stages_0_without_recompile_is_refused(no_compile):
    """`open CAPTURE --kernel 665e -s 0` showed the kernel with -s 0 dropped unsaid (0 is falsy), where -s 1 says
    that the option applies to --recompile."""
    for value in ("0", "1"):
        _one_clean_error(invoke("open", CAPTURE, "--kernel", "665e", "-s", value), 2,
                         "--arch, --num-warps, --num-stages and -c apply to --recompile")


def test_sort_empty_is_refused(no_compile):
    """`sweep --sort ''` was taken as no sort and `open --sort ''` as by name, unsaid (as `--grid ''` was)."""
    _one_clean_error(invoke("sweep", "matmul", "-c", "BLOCK=16", "--sort", ""), 2, "Cannot sort by ''")
    _one_clean_error(invoke("open", CAPTURE, "--sort", ""), 2, "Unknown sort field ''")
    assert invoke("open", CAPTURE, "--sort", "-registers").exit_code == 0


@pytest.mark.parametrize("keep", ["", ","])
def test_keep_empty_is_refused(no_compile, keep):
    """`compile matmul --keep ''` was taken as no --keep, unsaid (as `--stage ''` is refused)."""
    _one_clean_error(invoke("compile", "matmul", "--block", "16", "--keep", keep), 2,
                     f"--keep {keep!r} names no kind of noise")


@pytest.mark.parametrize("flag,said", [("--arch", "Empty list for --arch"), ("--dtype", "Empty list for --dtype"),
                                       ("-w", "Empty list for --num-warps"), ("-s", "Empty list for --num-stages")])
def test_sweep_empty_axis_is_refused(no_compile, flag, said):
    """`sweep matmul -c BLOCK=16 --arch ''` (or --dtype, -w, -s) swept as if the axis were left out, unsaid, where
    `-w ','` and `-c BLOCK=` are refused."""
    _one_clean_error(invoke("sweep", "matmul", "-c", "BLOCK=16", flag, ""), 2, said)


@pytest.mark.parametrize("args,words", [(["-w", "3"], "--num-warps 3 is not a power of two"),
                                        (["-c", "BLOCK=1e999"], "-c BLOCK=1e999"),
                                        (["-s", "0"], "--num-stages")])
def test_bench_checks_its_values_before_it_looks_for_a_gpu(args, words):
    """bench, like run, refuses a bad value (exit 2) before the GPU check: without a GPU it said exit 9, 'needs a
    CUDA GPU', for `-w 3`, and the user fixed the machine before the typo."""
    result = invoke("bench", "matmul", *args)
    _one_clean_error(result, 2, words)
    assert "CUDA GPU" not in result.output
