"""nvdisasm's flags: -ndf (no dataflow analysis, a quarter of its time) changes no text on Triton's cubins."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tritonscope import triton_api
from tritonscope.triton_api.cubin import NVDISASM_FLAGS

CUBINS = sorted(Path(__file__).parent.joinpath("data").rglob("*.cubin"))


def test_no_dataflow_analysis_changes_no_sass_text():
    exe = triton_api.tool_path("nvdisasm")
    if not exe:
        pytest.skip("nvdisasm is not installed")
    assert "-ndf" in NVDISASM_FLAGS and len(CUBINS) >= 10
    with_dataflow = [f for f in NVDISASM_FLAGS if f != "-ndf"]
    for cubin in CUBINS:
        ours = subprocess.run([exe, *NVDISASM_FLAGS, str(cubin)], capture_output=True, text=True, check=True).stdout
        full = subprocess.run([exe, *with_dataflow, str(cubin)], capture_output=True, text=True, check=True).stdout
        assert "EXIT" in ours and ours == full, cubin
