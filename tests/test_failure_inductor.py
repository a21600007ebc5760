"""Issue 34: an Inductor layer-norm kernel recompiled for gfx942 fails on a CUDA libdevice call.

tests/data/inductor/cache holds the kernels Inductor generated for sm_90a on an H200.  Compiled here for sm_90a
into a Triton cache, `triton_per_fused_gelu_native_layer_norm_1` keeps CUDA's libdevice calls in its IR
(__nv_erff, __nv_rsqrtf); `open CACHE --recompile --arch gfx942` then fails in make_llir after its passes.  The
report must name that, the op (the llvm.call of __nv_erff) and its Python line in the Inductor file, and a checked
"what to try" that compiles: the kernel compiled from its Inductor source for gfx942 (Inductor's `libdevice`
resolves to the target's library there).  Runs on Triton 3.6 and 3.9, with torch (the Inductor file needs it).
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import DATA
from tritonscope import triton_api
from tritonscope.cli import app
from tritonscope.core.errors import ExitCode

runner = CliRunner()
INDUCTOR = DATA / "inductor" / "cache"
KERNEL = "triton_per_fused_gelu_native_layer_norm_1"


@pytest.fixture(scope="module")
def recompiled(tmp_path_factory):
    if not triton_api.has_backend("amd"):
        pytest.skip("this Triton has no AMD backend")
    pytest.importorskip("torch", reason="the Inductor file imports torch")
    cache = tmp_path_factory.mktemp("triton-cache")
    mp = pytest.MonkeyPatch()
    mp.setenv("TRITON_CACHE_DIR", str(cache))
    try:
        made = runner.invoke(app, ["compile", str(INDUCTOR), "-k", KERNEL, "--arch", "sm_90a", "--stage", "none"],
                             catch_exceptions=False)
        assert made.exit_code == 0, made.output
        mp.setenv("TRITON_CACHE_DIR", str(tmp_path_factory.mktemp("recompile-cache")))
        yield runner.invoke(app, ["open", str(cache), "-k", KERNEL, "--recompile", "--arch", "gfx942", "--json"],
                            catch_exceptions=False)
    finally:
        mp.undo()


def test_inductor_layer_norm_on_amd_names_the_call_and_line_and_a_fix_that_compiles(recompiled):
    result = recompiled
    assert result.exit_code == ExitCode.COMPILE_ERROR, result.output
    d = json.loads(result.stdout)["failure"]
    assert d["stage_function"] == "make_llir" and not d["in_pass"]
    op = d["op"]
    assert op["name"] == "llvm.call" and op["line"] == 42 and op["source"] == "tmp6 = libdevice.erf(tmp5)"
    assert "__nv_erff" in op["how"]
    assert any("no libdevice" in w for w in d["explanation"])
    fix = next(x for x in d["fixes"] if x["flags"].startswith("tritonscope compile "))
    assert fix["flags"] == f"tritonscope compile {INDUCTOR} -k {KERNEL} --arch gfx942"
    assert fix["tried"] and fix["compiles"] is True and fix["said"] == "compiles"
    said = " ".join(result.stderr.split())
    assert f"on llvm.call at {op['file'].rsplit('/', 1)[-1]}:42" in said
    assert f"This compiles: tritonscope compile {INDUCTOR} -k {KERNEL} --arch gfx942" in said
