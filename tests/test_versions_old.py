"""Triton 3.2, 3.3 and 3.5 as sides, replayed from real recorded runs (no Triton install in CI):

- matmul_3.2_3.3: `tritonscope versions matmul matmul_persistent --a 3.2.0 --b 3.3.1 --arch sm_90a,gfx942
  --record ...` (environments made by `tritonscope versions --add`);
- matmul_3.5_3.6: `tritonscope versions matmul --a 3.5.1 --b /work/venv36/bin/python --arch sm_90a,gfx942 --record ...`.

What they pin: each version's compile is read whole (SASS, AMDGCN, registers, loops); Triton 3.2's GPU dialect
names (`triton_gpu.*`) and its hex wait counts (`cp.async.wait_group 0x2`) are read as what they are; a sample
that needs a newer Triton is a row with both errors saying which tl function the older Triton lacks.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tritonscope import versions as V
from tritonscope.versions.loop_pair import loop_pair

DATA = Path(__file__).parent / "data" / "versions"


@pytest.fixture(scope="module")
def r32():
    return V.from_record(DATA / "matmul_3.2_3.3")


@pytest.fixture(scope="module")
def r35():
    return V.from_record(DATA / "matmul_3.5_3.6")


def _row(rep, kernel, arch):
    return next(r for r in rep.rows if r.kernel == kernel and r.arch == arch)


def test_32_and_33_compile_matmul_for_both_vendors(r32):
    assert (r32.a, r32.b) == ("triton 3.2.0", "triton 3.3.1")
    for arch in ("sm_90a", "gfx942"):
        row = _row(r32, "matmul", arch)
        assert row.a.triton == "3.2.0" and row.b.triton == "3.3.1"
        assert row.a.registers and row.b.registers and row.a.loop and row.b.loop
        assert sum(row.a.mma.values()) >= 1 and sum(row.b.mma.values()) >= 1
        # 3.2's encodings are #triton_gpu.*: read, not lost
        assert "blocked" in row.a.encodings and "blocked" in row.b.encodings
    assert "amd_mfma" in _row(r32, "matmul", "gfx942").a.encodings


def test_32_hex_wait_count_is_not_a_drain(r32):
    """3.2 writes `cp.async.wait_group 0x2`: a wait for at most 2 groups, not a wait for zero."""
    la = _row(r32, "matmul", "sm_90a").a.loop
    assert la.waits_text == ["cp.async.wait_group 0x2;"] and la.memory_waits == 1 and la.drains == 0


def test_a_sample_that_needs_a_newer_triton_says_what_it_lacks(r32):
    for arch in ("sm_90a", "gfx942"):
        row = _row(r32, "matmul_persistent", arch)
        assert row.a is None and row.b is None
        assert row.a_error["line"].startswith("the kernel uses tl.make_tensor_descriptor, which Triton 3.2.0 does not")
        assert "Triton 3.3.1 does not have" in row.b_error["line"]


def test_35_to_36_on_gfx942_moves_loads_to_buffer_loads(r35):
    assert (r35.a, r35.b) == ("triton 3.5.1", "triton 3.6.0")
    row = _row(r35, "matmul", "gfx942")
    assert (row.a.loop.buffer_loads, row.b.loop.buffer_loads) == (0, 2)
    assert (row.a.loop.global_loads, row.b.loop.global_loads) == (2, 0)
    assert _row(r35, "matmul", "sm_90a").a.registers


def test_loop_view_on_32_vs_33():
    def stages(name):
        return json.loads(gzip.decompress((DATA / "matmul_3.2_3.3" / name).read_bytes()))["stages"]

    p = loop_pair(stages("000-a.json.gz"), stages("000-b.json.gz"))
    assert p.stage == "sass" and p.a and p.b
    assert p.a.counts()["mma"] == p.b.counts()["mma"] >= 1
    assert p.a.counts()["drain"] == 0
    p = loop_pair(stages("001-a.json.gz"), stages("001-b.json.gz"))
    assert p.stage == "amdgcn" and p.a.counts()["mma"] >= 1
