"""Every tensor dtype Triton has, in Triton's, triton.language's and torch's spellings (issue 32, item 5).

core/dtypes.py is the one table; these tests hold it to the installed Triton (so a dtype Triton adds, or a
spelling it changes, fails here instead of drifting) and to torch, and check that each way a user names a
dtype (`--arg lock=u32[64]`, `*fp8e4b8`, `uint32[64]`, `torch.uint32`, `-c`, the Python API's tensors)
reaches the compile as the launch's dtype.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tritonscope.cli import app
from tritonscope.core.dtypes import ALIASES, BY_NAME, DTYPE_TABLE, lookup
from tritonscope.inputs.kernels import canonical_dtype, constexpr_value, parse_arg_value, parse_constexpr

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "zoo"))
import manifest  # noqa: E402

runner = CliRunner()


def _tritons_specializer_names() -> dict[str, str]:
    """Triton's own map from a dtype's name (torch's, triton.language's) to its signature spelling."""
    try:
        from triton._utils import type_canonicalisation_dict
    except ImportError:  # Triton 3.2 to 3.4 keep it in the JIT module
        from triton.runtime.jit import type_canonicalisation_dict
    return dict(type_canonicalisation_dict)


def test_the_table_is_tritons_dtypes():
    """One row for each tensor dtype triton.language has, with its attribute, bit width and signature name."""
    import triton.language as tl

    tritons = [tl.dtype(n) for n in (*tl.dtype.SINT_TYPES, *tl.dtype.UINT_TYPES, *tl.dtype.FP_TYPES)]
    ours = [getattr(tl, d.tl) for d in DTYPE_TABLE]
    assert len(ours) == len(set(ours)) and set(ours) == set(tritons)
    spelled = _tritons_specializer_names()
    for d, t in zip(DTYPE_TABLE, ours):
        assert t.primitive_bitwidth == d.bits, d
        # the signature's spelling (Triton 3.9 writes a bool tensor `*u1`; older ones `*i1`)
        assert spelled[d.tl] in (d.name, "u1" if d.name == "i1" else d.name), d


def test_the_table_is_torchs_names_for_them():
    """Each torch name specializes, in Triton's own map, to the row's dtype; and torch has it."""
    torch = pytest.importorskip("torch")
    spelled = _tritons_specializer_names()
    for d in DTYPE_TABLE:
        if d.torch is None:
            assert d.name == "fp8e4b15"  # Triton's own fp8; torch has no such dtype
            continue
        assert isinstance(getattr(torch, d.torch), torch.dtype), d
        assert spelled[d.torch] == spelled[d.tl], d


def test_every_spelling_triton_accepts_is_one():
    """Every name Triton's specializer maps (torch's, tl's, its short forms) is a dtype here too."""
    for name, short in _tritons_specializer_names().items():
        if short == "void" or name in ("int", "uint1"):  # not tensor dtypes a user names
            continue
        assert lookup(name) is not None, name
    assert set(ALIASES.values()) <= set(BY_NAME)


@pytest.mark.parametrize("text,want", [
    ("u32[64]", "u32[64]"), ("*u32", "*u32"), ("uint32[64]", "u32[64]"), ("torch.uint32[64]", "u32[64]"),
    ("u8[4,4]", "u8[4,4]"), ("*u16", "*u16"), ("u64[8]", "u64[8]"), ("*i1", "*i1"), ("bool[8]", "i1[8]"),
    ("*fp8e4b8", "*fp8e4b8"), ("float8_e4m3fnuz[16,16]", "fp8e4b8[16,16]"), ("*fp8e5b16", "*fp8e5b16"),
    ("*torch.float8_e5m2fnuz", "*fp8e5b16"), ("fp8e4nv[16,16].T", "fp8e4nv[16,16].T"),
    ("float8_e4m3fn[16]", "fp8e4nv[16]"), ("*fp8e5", "*fp8e5"), ("float8_e5m2[16]", "fp8e5[16]"),
    ("*fp8e4b15", "*fp8e4b15"), ("fp64[8]", "fp64[8]"), ("*double", "*fp64"),
    ("tensordesc<u8[128,64]>", "tensordesc<u8[128,64]>"), ("desc(torch.uint8[256,256],[64,64])",
                                                            "desc(u8[256,256],[64,64])"),
])
def test_arg_spellings(text, want):
    assert str(parse_arg_value(text)) == want


@pytest.mark.parametrize("text,want", [
    ("u32", "tl.uint32"), ("torch.uint32", "tl.uint32"), ("tl.uint16", "tl.uint16"), ("u64", "tl.uint64"),
    ("fp8e4b8", "tl.float8e4b8"), ("torch.float8_e4m3fnuz", "tl.float8e4b8"), ("tl.float8e5b16", "tl.float8e5b16"),
    ("torch.float8_e4m3fn", "tl.float8e4nv"), ("fp8e4b15", "tl.float8e4b15"), ("i1", "tl.int1"),
    ("fp64", "tl.float64"), ("mean", "mean"), ("tl.foo", "tl.foo"),
])
def test_constexpr_spellings(text, want):
    assert parse_constexpr(text) == want


def test_dtype_objects_from_python():
    """The Python API and kernel files give dtype objects: triton.language's and torch's."""
    import triton.language as tl

    assert constexpr_value(tl.float8e4b8) == "tl.float8e4b8" and constexpr_value(tl.uint32) == "tl.uint32"
    torch = pytest.importorskip("torch")
    assert constexpr_value(torch.float8_e5m2fnuz) == "tl.float8e5b16" and constexpr_value(torch.uint64) == "tl.uint64"

    from tritonscope.api import _describe_arg

    assert _describe_arg(torch.zeros(64, dtype=torch.uint32)) == "u32[64]"
    assert _describe_arg(torch.zeros(4, 8, dtype=torch.float8_e4m3fnuz)) == "fp8e4b8[4,8]"


def test_unknown_dtype_names_the_close_one():
    from tritonscope.core.errors import UsageError

    with pytest.raises(UsageError) as e:
        canonical_dtype("u33")
    assert "Did you mean: u32?" in str(e.value) and "fp8e4b8" in e.value.hint


def test_stand_in_tensors_carry_torchs_dtype():
    """With torch loaded (heuristics compare torch dtypes), a stand-in's dtype is torch's, from the table."""
    torch = pytest.importorskip("torch")
    from tritonscope import triton_api

    assert triton_api.StandInTensor("uint32").dtype is torch.uint32
    assert triton_api.StandInTensor("float8e4b8").dtype is torch.float8_e4m3fnuz
    import triton.language as tl

    assert triton_api.StandInTensor("float8e4b15").dtype == tl.float8e4b15  # no torch dtype: triton.language's


def test_run_makes_tensors_of_torchs_dtype():
    """Issue 33: `tune --dtype fp8e4nv` asked torch for `float8e4nv`; the runner reads the table."""
    torch = pytest.importorskip("torch")
    from tritonscope.measure.runner import torch_dtype

    assert torch_dtype("fp8e4nv") is torch.float8_e4m3fn and torch_dtype("fp8e5") is torch.float8_e5m2
    assert torch_dtype("u32") is torch.uint32 and torch_dtype("fp8e4b8") is torch.float8_e4m3fnuz
    assert torch_dtype("i1") is torch.bool

    from tritonscope.measure.runner import make_tensor

    lock = make_tensor(parse_arg_value("u32[64]"), "cpu")
    assert lock.dtype is torch.uint32 and lock.shape == (64,)
    weight = make_tensor(parse_arg_value("fp8e4b8[16,16].T"), "cpu")
    assert weight.dtype is torch.float8_e4m3fnuz and weight.stride() == (1, 16)


def _summary(entry_name: str, arch: str) -> str:
    entry = next(e for e in manifest.ZOO if e["name"] == entry_name)
    argv = ["compile", entry["target"], *shlex.split(manifest.args_for(entry, arch)), "--arch", arch,
            "--stage", "none", "--no-color", "--width", "400"]
    result = runner.invoke(app, argv)
    assert result.exit_code == 0, result.output[-3000:]
    return " ".join(result.output.split())


@pytest.mark.parametrize("arch,fp8", [("sm_90a", "fp8e4nv"), ("gfx942", "fp8e4b8")])
def test_unsigned_and_fnuz_tensors_reach_the_signature(arch, fp8, monkeypatch):
    """The u32 lock tensor and the platform's fp8 weight are in the compile's signature, as a launch has them."""
    if arch.startswith("gfx"):
        from tritonscope import triton_api

        if not triton_api.has_backend("amd"):
            pytest.skip("this Triton wheel has no AMD backend")
    monkeypatch.chdir(ROOT)
    out = _summary("pattern_unsigned_fnuz", arch)
    assert "locks_ptr: *u32" in out and f"w_ptr: *{fp8}" in out, out
