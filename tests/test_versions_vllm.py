"""`tritonscope versions` on vLLM's own `fused_moe_kernel_gptq_awq`, as the `vllm` package installs it, for gfx950:
Triton 3.4.0 against 3.6.0 (the MI355X MoE regression, vllm-project/vllm#43153), replayed from the recorded run.

The records hold the stage files of one real run each; no kernel source is copied into the repo and no old
Triton is installed here.  They were made from two environments, each with the vllm 0.33.0 wheel (--no-deps),
torch 2.13.0 (CPU), its pure-Python requirements and Triton 3.4.0 or 3.6.0, by the command in README "Across
Triton versions" (`--record DIR`; the second with `--b-env AMDGCN_USE_BUFFER_OPS=0`).  The kernel's arguments
are those of vLLM's own launch in that module (invoke_fused_moe_wna16_triton_kernel) for 256 tokens, top_k 8,
128 experts, K 2048, N 1536, int4 weights with group size 128 and no zero point, with the tile vLLM picks for
that case without a tuned table (get_default_config, get_moe_wna16_block_config: 64x64x32, Triton's AMD default
of 4 warps and 2 stages).  The environments' site-packages prefix was cut to `site-packages/` in the records
(no absolute path in the repo).
- vllm_gptq_awq_gfx950: 3.4.0 vs 3.6.0;
- vllm_gptq_awq_gfx950_nobuffer: 3.4.0 vs 3.6.0 with AMDGCN_USE_BUFFER_OPS=0.
"""

from __future__ import annotations

import gzip
import json
import sys
import textwrap
from pathlib import Path

import pytest

from tritonscope import versions as V

DATA = Path(__file__).parent / "data" / "versions"
VLLM = DATA / "vllm_gptq_awq_gfx950"
VLLM_NOBUF = DATA / "vllm_gptq_awq_gfx950_nobuffer"
TARGET = "vllm.model_executor.layers.fused_moe.fused_moe:fused_moe_kernel_gptq_awq"


@pytest.fixture(scope="module")
def vllm():
    return V.from_record(VLLM)


@pytest.fixture(scope="module")
def vllm_nobuffer():
    return V.from_record(VLLM_NOBUF)


def _change(row, what):
    return next((c for c in row.changes if c.what == what), None)


def _artifact(folder: Path, side: str) -> dict:
    return json.loads(gzip.decompress((folder / f"000-{side}.json.gz").read_bytes()))


@pytest.mark.parametrize("folder", [VLLM, VLLM_NOBUF])
def test_the_records_are_vllms_installed_kernel_with_its_launch(folder):
    """What was compiled is the installed package's module, unedited and imported by its dotted path, with the
    arguments of vLLM's launch; and nothing in the records names this machine's folders."""
    for side, version in (("a", "3.4.0"), ("b", "3.6.0")):
        art = _artifact(folder, side)
        spec = art["spec"]
        assert art["triton_version"] == version and spec["arch"] == "gfx950"
        assert spec["target"] == TARGET
        assert spec["file"] == "site-packages/vllm/model_executor/layers/fused_moe/fused_moe.py"
        assert spec["args"]["b_ptr"] == "u8[128,1536,1024]" and spec["args"]["b_zp_ptr"] is None
        assert spec["constexprs"]["use_int4_w4a16"] is True and spec["constexprs"]["BLOCK_SIZE_K"] == 32
        assert (spec["num_warps"], spec["num_stages"]) == (4, 2)
        # the kernel's source stays in the vllm package: the record keeps its sha256, and the TTIR's locations
        # name the installed file's lines
        assert "python" not in art["stages"]
        assert "site-packages/vllm/model_executor/layers/fused_moe/fused_moe.py" in art["stages"]["ttir"]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert len(manifest["jobs"][0]["python_source_sha256"]) == 64
    for f in folder.iterdir():
        raw = gzip.decompress(f.read_bytes()).decode() if f.suffix == ".gz" else f.read_text()
        assert "/tmp/" not in raw and "/root/" not in raw and "/work/" not in raw, f.name


def test_vllm_34_to_36_names_new_waits_buffer_loads_and_registers(vllm):
    """3.6 makes every load of the loop a buffer load, waits for memory 26 times per iteration, not 17, and
    needs 40 fewer VGPRs (one more wave per SIMD)."""
    assert (vllm.a, vllm.b) == ("triton 3.4.0", "triton 3.6.0")
    (row,) = vllm.rows
    assert row.kernel == TARGET and row.arch == "gfx950"
    la, lb = row.a.loop, row.b.loop
    assert la.stage == lb.stage == "amdgcn" and la.mma == lb.mma == 2
    assert (la.buffer_loads, la.global_loads) == (0, 17) and (lb.buffer_loads, lb.global_loads) == (17, 0)
    assert (la.memory_waits, lb.memory_waits) == (17, 26) and la.drains == lb.drains == 1
    assert all(w.startswith("s_waitcnt vmcnt(") for w in la.waits_text + lb.waits_text)
    assert (row.a.registers, row.b.registers) == (140, 100)
    assert (row.a.agprs, row.b.agprs) == (32, 16) and (row.a.sgprs, row.b.sgprs) == (31, 34)
    waits = _change(row, "loop: memory waits")
    assert (waits.a, waits.b, waits.worse) == (17, 26, True)
    assert _change(row, "VGPRs").worse is False
    lines = "\n".join(V.report.change_lines(row))
    for text in ("VGPRs: 140 → 100", "loop: memory waits: 17 → 26", "loop: buffer loads: 0 → 17",
                 "loop: global loads: 17 → 0", "buffer loads: 0 → 38", "loop waits B: s_waitcnt vmcnt(13)"):
        assert text in lines, text


def test_buffer_ops_off_on_36_restores_34s_loop(vllm, vllm_nobuffer):
    """AMDGCN_USE_BUFFER_OPS=0 on 3.6: global loads again, and the loop's waits, registers and loads are 3.4's."""
    (a34,) = [r.a for r in vllm.rows]
    (row,) = vllm_nobuffer.rows
    assert vllm_nobuffer.b == "triton 3.6.0 AMDGCN_USE_BUFFER_OPS=0"
    assert row.a.loop == a34.loop
    la, lb = a34.loop, row.b.loop
    assert (lb.buffer_loads, lb.global_loads) == (0, la.global_loads)
    assert (lb.memory_waits, lb.drains, lb.waits_text) == (la.memory_waits, la.drains, la.waits_text)
    assert (row.b.registers, row.b.agprs, row.b.sgprs) == (a34.registers, a34.agprs, a34.sgprs)
    # what is left of the change: the loop is a few instructions longer, nothing about memory
    assert [c.what for c in row.changes if c.what.startswith("loop")] == ["loop: instructions"]
    assert _change(row, "loop: memory waits") is None and _change(row, "VGPRs") is None


def test_torch_version_hip_parses_while_a_file_imports_for_amd(tmp_path):
    """torch parses torch.version.hip at import (torch/utils/cpp_extension.py: `int(v) for v in
    torch.version.hip.split('.')[:2]`, reached by vLLM's module): the stand-in answer is version-shaped."""
    pytest.importorskip("torch")
    from tritonscope.inputs.kernels import load_module

    f = tmp_path / "hip_probe.py"
    f.write_text(textwrap.dedent("""
        import torch
        ROCM = tuple(int(v) for v in torch.version.hip.split(".")[:2])
        HIP = torch.version.hip
    """))
    module = load_module(f, "gfx950")
    assert module.ROCM >= (6, 0) and module.HIP.endswith("+tritonscope")
    import torch

    assert torch.version.hip is None  # put back afterwards (this is a CPU torch)


def test_versions_takes_arg(tmp_path):
    """`versions --arg` describes a user kernel's runtime arguments, as in compile (recorded: the spec has them)."""
    (tmp_path / "k.py").write_text(textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def scale(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
    """))
    from typer.testing import CliRunner

    from tritonscope.cli import app

    rec = tmp_path / "rec"
    r = CliRunner().invoke(app, ["versions", f"{tmp_path / 'k.py'}:scale", "--a", sys.executable, "--arch", "gfx942",
                                 "--arg", "x_ptr=*fp16", "--arg", "n=4096", "-c", "BLOCK=128", "--record", str(rec),
                                 "--jobs", "1"])
    assert r.exit_code == 0, r.output
    spec = _artifact(rec, "a")["spec"]
    assert spec["args"] == {"x_ptr": "*fp16", "n": 4096}
    bad = CliRunner().invoke(app, ["versions", f"{tmp_path / 'k.py'}:scale", "--a", sys.executable, "--arg", "x_ptr"])
    assert bad.exit_code == 2
