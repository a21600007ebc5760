"""The Python API (tritonscope.compile / show / Result), and the README's notebook example run as a script."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT, triton_series

import tritonscope
from tritonscope.core.errors import KernelSpecError, NotFoundError, OutOfResourcesError, OutputError, UsageError


def readme_python_api() -> tuple[str, str]:
    """(the ```python block of README's "Python API" section, the ```text block it says it prints)."""
    section = (ROOT / "docs" / "api.md").read_text()
    code = re.search(r"```python\n(.*?)\n```", section, re.S)
    printed = re.search(r"```text\n(.*?)\n```", section, re.S)
    assert code and printed, "README's Python API section lost its example or its output"
    return code.group(1), printed.group(1)


def test_readme_example_runs_as_a_script(tmp_path):
    """The README's notebook example, written to a file and run: compiles the seed-001 kernel from the
    function object, reads its registers and the tl.dot line's PTX, renders HTML and saves it."""
    code, printed = readme_python_api()
    script = tmp_path / "notebook.py"
    script.write_text(code + "\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert re.search(r"^registers: \d+$", out, re.M), out
    assert re.search(r"^PTX: mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32 ", out, re.M), out
    assert "HTML: True True" in out
    page = (tmp_path / "matmul.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "Content-Security-Policy" in page
    if triton_series() == "3.9":  # the output the README quotes is Triton 3.9.0's
        assert out.strip() == printed.strip(), f"README's quoted output is stale:\n{out}"


def test_import_is_light():
    """`import tritonscope` (and its API) loads neither triton, torch nor rich."""
    code = "import sys, tritonscope; print(sorted(m for m in ('triton', 'torch', 'rich', 'typer') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert callable(tritonscope.compile) and callable(tritonscope.show) and tritonscope.Result


@pytest.fixture(scope="module")
def result():
    return tritonscope.compile("matmul", block=16, arch="sm_90a")


def test_result_is_data(result):
    assert list(result.stages) == ["python", "ttir", "ttgir", "llir", "ptx", "sass"]
    assert result.stages["ptx"] == result.artifact.stages["ptx"]  # the compiler's text, unfiltered
    lines = result.lines("ptx")  # every line, numbered as written
    assert [ln.number for ln in lines] == list(range(1, len(result.stages["ptx"].splitlines()) + 1))
    assert [ln.raw for ln in lines] == result.stages["ptx"].splitlines()
    assert result.registers == result.resources.registers and isinstance(result.registers, int)
    assert result.notes and all(n.stage in result.stages for n in result.notes)
    assert result.summary
    assert result.spec.constexprs == {"BLOCK": 16} and result.spec.arch == "sm_90a"
    with pytest.raises(UsageError, match="No stage 'ptxx'"):
        result.lines("ptxx")


def test_line_by_number_and_by_text(result):
    by_text = result.line("tl.dot")
    number = next(n for n, t in _python_lines(result) if "tl.dot" in t)
    assert result.line(number) == by_text
    assert "tl.dot" in by_text["python"][0]
    assert any("tt.dot" in t for t in by_text["ttgir"])
    assert any("mma.sync.aligned.m16n8k16" in t for t in by_text["ptx"])
    assert any("HMMA" in t for t in by_text["sass"])
    with pytest.raises(UsageError):
        result.line(5000)
    with pytest.raises(UsageError):
        result.line("no such text anywhere")


def _python_lines(result):
    first = result.artifact.python_first_line
    return [(first + i, t) for i, t in enumerate(result.stages["python"].splitlines())]


def test_layouts_diff_save_show(result, tmp_path):
    assert result.layouts() and result.layouts() == result.analysis.layouts
    other = tritonscope.compile("matmul", block=32, arch="sm_90a")
    d = result.diff(other)
    assert d["kernel"] == "matmul_kernel" and not d["identical"]
    assert any(s["stage"] == "ptx" and s["diff"] for s in d["stages"])
    assert any("16" in c and "32" in c for c in d["config_changes"]), d["config_changes"]
    path = result.save(tmp_path / "r.json")
    assert path.exists()
    with pytest.raises(OutputError):  # never overwrites without force
        result.save(tmp_path / "r.json")
    result.save(tmp_path / "r.json", force=True, keep_paths=True)  # (by default paths become relative)
    loaded = tritonscope.show(tmp_path / "r.json")
    assert loaded.stages["ptx"] == result.stages["ptx"] and loaded.registers == result.registers
    assert loaded.line("tl.dot")["ptx"] == result.line("tl.dot")["ptx"]
    with pytest.raises(NotFoundError):
        tritonscope.show(tmp_path / "missing.json")


def test_displays(result):
    from rich.console import Console

    page = result._repr_html_()
    assert page.startswith("<iframe") and "sandbox=\"allow-scripts\"" in page
    assert "<script" not in page.split("srcdoc=", 1)[1][:200]  # the page is escaped into the attribute
    assert result.html().startswith("<!DOCTYPE html>")
    con = Console(width=120, file=io.StringIO(), color_system=None, no_color=True, force_terminal=False)
    con.print(result)
    text = con.file.getvalue()
    assert "registers" in text and "mma.sync.aligned.m16n8k16" in text
    assert "matmul_kernel" in repr(result) and "registers" in repr(result)


def test_same_typed_errors():
    with pytest.raises(NotFoundError, match="Unknown sample"):
        tritonscope.compile("matmull")
    with pytest.raises(NotFoundError, match="Unsupported arch"):
        tritonscope.compile("matmul", arch="sm_99")
    with pytest.raises(KernelSpecError, match="no constexpr named"):
        tritonscope.compile("matmul", constexprs={"BLOKC": 16}, arch="sm_90a")
    with pytest.raises(KernelSpecError, match="not a @triton.jit function"):
        tritonscope.compile(len)
    with pytest.raises(OutOfResourcesError) as info:
        tritonscope.compile("matmul_masked", constexprs={"BLOCK_SIZE": 128}, arch="sm_90a")
    assert info.value.result.artifact.resources.dynamic_shared > 232448  # the compiled result comes along


def test_function_object_runs_no_file(tmp_path):
    """A kernel object is compiled as it is: its file (here a script that would print) is not run again."""
    script = tmp_path / "k.py"
    script.write_text(
        "import triton\nimport triton.language as tl\n\nprint('RAN THE FILE')\n\n\n@triton.jit\n"
        "def add_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)\n")
    code = (f"import runpy, tritonscope\nns = runpy.run_path({str(script)!r})\n"
            "r = tritonscope.compile(ns['add_kernel'], args={'x_ptr': '*fp32', 'out_ptr': '*fp32', 'n': 1024},"
            " constexprs={'BLOCK': 128}, arch='sm_80')\n"
            "print(r.spec.file, r.spec.kernel, r.spec.target)\nprint(len(r.line('tl.store')['ptx']) > 0)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("RAN THE FILE") == 1, proc.stdout  # once, by runpy; never by tritonscope
    assert f"{script} add_kernel {script}:add_kernel" in proc.stdout and "True" in proc.stdout


def test_tensor_arguments_are_described():
    from tritonscope.api import _describe_arg

    class FakeTensor:  # what torch.Tensor offers: dtype, shape, stride()
        def __init__(self, dtype, shape, stride):
            self.dtype, self.shape, self._stride = dtype, shape, stride

        def stride(self):
            return self._stride

    assert _describe_arg(FakeTensor("torch.float16", (32, 16), (16, 1))) == "fp16[32,16]"
    assert _describe_arg(FakeTensor("torch.bfloat16", (32, 16), (1, 32))) == "bf16[32,16].T"
    assert _describe_arg(FakeTensor("torch.float32", (8,), (1,))) == "fp32[8]"
    assert _describe_arg("*fp16") == "*fp16" and _describe_arg(7) == 7


def test_cli_options_as_python_values():
    """shape as a tuple, block, num_warps: the CLI's options, spelled as Python values."""
    r = tritonscope.compile("matmul", shape=(64, 64, 64), block=32, num_warps=8, num_stages=2, arch="sm_80")
    spec = r.spec
    assert spec.shape == (64, 64, 64) and spec.constexprs == {"BLOCK": 32}
    assert (spec.num_warps, spec.num_stages, spec.arch) == (8, 2, "sm_80")
    assert spec.args["a_ptr"] == "fp16[64,64]" and spec.args["M"] == 64


def test_html_folds_noise_unless_raw(result):
    folded, raw = result.html(), result.html(raw=True)
    assert '<body class="squeeze">' in folded and 'data-noise="debug">' in folded  # unticked: folded
    assert '<body class="squeeze show-debug' in raw and 'data-noise="debug" checked>' in raw
    assert "hidden: " in folded and 'class="l z z-debug"' in folded and 'class="l z z-debug"' in raw


def test_bad_values_are_said_in_the_api_terms():
    """Issue 23: num_warps="4" raised `UsageError: '--num-warps 4 ...'`: the command line's words in an API
    error.  A value of the wrong type is refused by its keyword, and the request checks speak keywords too."""
    cases = [
        (dict(num_warps="4"), "num_warps must be an int, not str '4'"),
        (dict(num_stages=2.0), "num_stages must be an int, not float 2.0"),
        (dict(block=True), "block must be an int, not bool True"),
        (dict(arch=90), "arch must be a str, not int 90"),
        (dict(num_warps=3), "num_warps=3 is not a power of two"),
        (dict(block=0), "block=0: a tile size"),
        (dict(arch=""), "arch is empty"),
        (dict(args={"a_ptr": "banana"}), "args['a_ptr']='banana': not a tensor"),
        (dict(num_stages=100), "num_stages=100 is far above"),
    ]
    for kw, words in cases:
        with pytest.raises(UsageError) as info:
            tritonscope.compile("matmul", **kw)
        err = info.value
        assert words in err.message, (kw, err.message)
        for text in (err.message, err.hint or ""):
            assert not re.search(r"(?<![`\w])--(num-warps|num-stages|block|arch|arg)\b", text), (kw, text)


def test_diff_with_something_that_is_no_result_is_a_typed_error(result):
    with pytest.raises(UsageError, match="Result.diff needs another Result, not str 'x'") as info:
        result.diff("x")
    assert "tritonscope.show('x')" in info.value.hint
    with pytest.raises(UsageError, match="not int 3"):
        result.diff(3)
    assert result.diff(result)["identical"] is True
