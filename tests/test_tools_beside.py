"""Issue 15: nvdisasm and cuobjdump run at once, and the views load meanwhile (triton_api/cubin.sass_and_resources)."""

from __future__ import annotations

from pathlib import Path

from conftest import ROOT
from tritonscope import launch
from tritonscope.triton_api.cubin import sass_and_resources

CUBIN = next((ROOT / "tests" / "data" / "capture" / "kernels").rglob("add_kernel.cubin"))


def test_meanwhile_runs_while_the_tools_do(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path))  # no derived SASS kept from before
    import tritonscope.triton_api.cubin as cubin

    started = []
    real_start = cubin.start_tool
    monkeypatch.setattr(cubin, "start_tool", lambda args: started.append(Path(args[0]).name) or real_start(args))
    seen = []

    def meanwhile():
        seen.append(sorted(started))
        raise RuntimeError("ignored: an optimisation only")

    warnings: list[str] = []
    sass, res = sass_and_resources(CUBIN.read_bytes(), warnings,
                                   meanwhile=meanwhile)
    assert seen == [["cuobjdump", "nvdisasm"]]  # both started before it ran, and it ran once
    assert warnings == []
    assert "add_kernel" in sass and "EXIT" in sass
    assert "REG:" in res and "STACK:" in res
    # the same texts without it (and now from the derived cache: meanwhile is not needed)
    assert sass_and_resources(CUBIN.read_bytes(), [],
                              meanwhile=lambda: seen.append("again")) == (sass, res)
    assert seen[1:] == []


def test_a_failing_tool_is_one_warning(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path))
    sass, res = sass_and_resources(b"\x7fELF not really", warnings := [])
    assert sass is None and res is None
    assert [w.split(":")[0] for w in warnings] == ["nvdisasm failed, so there is no SASS stage",
                                                  "cuobjdump failed, so registers are unknown"]


def test_which_command_lines_start_the_key_early():
    assert launch.compiles_here(["compile", "matmul", "--block", "16"])
    assert launch.compiles_here(["explain", "matmul"])
    assert not launch.compiles_here(["compile", "matmul", "--timeout", "5"])
    assert not launch.compiles_here(["compile", "matmul", "--timeout=5"])
    assert not launch.compiles_here(["compile", "--help"])
    assert not launch.compiles_here(["show", "r.json"])
    assert not launch.compiles_here([])
