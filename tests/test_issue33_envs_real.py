"""Issue 33 with a real Triton 3.4.0 environment made by `tritonscope versions --add 3.4.0` (uv or pip, and the
ziglang wheel's lld that it installs for the AMD backend): 150-250 MB to download, so CI does not make one, and
these tests run only where one is there already: in the tritonscope cache folder named by TRITONSCOPE_TEST_ENVS
(default ~/.cache/tritonscope; the test session's own cache is a fresh one).  pip is never run, and that cache is
never pruned here (its cap is off for these tests).

- Triton 3.4.0 compiles matmul for gfx942 through that environment, linked by the ld.lld tritonscope gave it;
- `versions` on a capture (whose module imports torch, which the environment lacks) compiles from its TTIR.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tritonscope.versions import envs as E
from tritonscope.versions import lld as L

CAPTURE = Path(__file__).parent / "data" / "capture"


@pytest.fixture(scope="module")
def t34():
    folder = os.environ.get("TRITONSCOPE_TEST_ENVS") or os.path.expanduser("~/.cache/tritonscope")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRITONSCOPE_CACHE_DIR", folder)
        mp.setenv("TRITONSCOPE_CACHE_MAX_MB", "0")
        if E.cached_env("3.4.0") is None:
            pytest.skip(f"no Triton 3.4.0 environment in {E.env_root()} (make one with `tritonscope versions --add "
                        "3.4.0`: about 250 MB with the ziglang wheel; TRITONSCOPE_TEST_ENVS names another cache)")
        yield E.resolve("3.4.0", install=False)


def test_triton_34_compiles_gfx942_through_the_ld_lld_it_was_given(t34):
    from tritonscope.inputs.kernels import Request
    from tritonscope.pipeline.config import resolve
    from tritonscope.versions.sides import compile_with_triton

    assert L.needs_external_lld(t34.backends_dir)   # 3.4's wheel has no ld.lld of its own
    linker, where = L.choose(t34)
    config = resolve(Request(target="matmul", arch="gfx942"), "gfx942")
    if linker is None:   # no ziglang in it, none on the system: the hint, not Triton's raw line
        from tritonscope.core.errors import CompileError

        with pytest.raises(CompileError) as e:
            compile_with_triton(config, t34)
        assert e.value.message == L.missing("3.4.0") and "ROCm linker" in (e.value.context or "")
        return
    art = compile_with_triton(config, t34)
    assert art.triton_version == "3.4.0" and "amdgcn" in art.stages and "v_mfma" in art.stages["amdgcn"]
    assert art.stages.get("hsaco") or art.resources, where


def test_versions_compiles_a_captured_kernel_from_its_ttir_in_the_managed_environment(t34):
    from tritonscope import versions as V
    from tritonscope.inputs.kernels import Request
    from tritonscope.versions.targets import jobs_for

    jobs, _ = jobs_for([str(CAPTURE)], ["sm_90a"], Request(target=""), "sm_90a")
    job = next(j for j in jobs if j.key.startswith("add_kernel [01c9a1bcb1eb]"))
    rep = V.compare_versions([job], V.Side("A", t34), V.Side("B", None), workers=2)
    (row,) = rep.rows
    assert row.a is not None and row.a.triton == "3.4.0" and row.b is not None, (row.a_error, row.b_error)
    (note,) = row.notes
    assert note.startswith("A (triton 3.4.0) compiled from the capture's recorded pre-pass TTIR (.source)")
    assert "No module named 'torch'" in note
