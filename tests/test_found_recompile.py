"""Recompiles of found kernels reproduce the original text (issue 23).

A recompile from a cache's `.source` (the pre-pass TTIR) renames a loop's
induction variable and loop-carried values, because Triton's parser drops the
names its front end gave them; a captured kernel recompiles from its Python
function instead, and its TTIR and TTGIR equal the originals once locations
are stripped.  The fixtures (tests/data/found_loop/<series>/, made by
make_found_loop.py) are real compiles, a capture and a Triton cache of the
same two kernels, for each supported Triton.

A capture's ptxas is used again where it can be found (the recorded file, or
one of the same version here), and a warning names both versions where it
cannot.
"""

from __future__ import annotations

import json
import re
import shutil
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tritonscope.cli import app

runner = CliRunner()
DATA = Path(__file__).parent / "data" / "found_loop"
CAPTURE_FIXTURE = Path(__file__).parent / "data" / "capture"


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def _series_folder() -> Path:
    from tritonscope import triton_api

    series = "%d.%d" % (triton_api.triton_series() or (0, 0))
    folder = DATA / series
    if not folder.is_dir():
        pytest.skip(f"tests/data/found_loop has no fixture for Triton {series} (make_found_loop.py makes one)")
    return folder


def _lines(key: str, text: str) -> list[str]:
    from tritonscope.analyses.diff import normalize_stage

    return [t for _, t in normalize_stage(key, text)]


# %acc_1, %arg_1, %12: an SSA value's name
_SSA_RE = re.compile(r"%[A-Za-z_][\w$.]*|%\d+")


def _without_names(lines: list[str]) -> list[str]:
    """Every SSA name blanked: two texts that differ only in names are then equal.  (A region's names are
    reused after it closes, so a mapping by order of first use would not line them up.)"""
    return [_SSA_RE.sub("%_", line) for line in lines]


@pytest.fixture(scope="module")
def recompiled():
    """{(kind, name): (original, recompiled)} for the capture and the cache of the running Triton."""
    from tritonscope.inputs import sources

    folder = _series_folder()
    out = {}
    for kind in ("capture", "cache"):
        for entry in sources.open_source(folder / kind).entries:
            original = sources.load_artifact(entry)
            out[(kind, entry.name)] = (original, sources.recompile(entry, original))
    return out


def test_capture_recompile_reproduces_the_loop_ttir_and_ttgir(recompiled):
    captured = {name: pair for (kind, name), pair in recompiled.items() if kind == "capture"}
    assert sorted(captured) == ["online_max_sum_kernel", "row_sum_kernel"]
    for name, (original, again) in captured.items():
        assert "from its captured Python function" in again.warnings[0], again.warnings
        for key in ("ttir", "ttgir", "llir", "ptx"):
            assert _lines(key, again.stages[key]) == _lines(key, original.stages[key]), (name, key)
        assert not any("renames" in w or "%arg_1" in w for w in again.warnings), again.warnings


def test_ir_recompile_differs_only_in_ssa_names_and_says_so(recompiled):
    """What the capture's recompile fixes: from `.source` the same kernels differ, in SSA names only."""
    cached = {name: pair for (kind, name), pair in recompiled.items() if kind == "cache"}
    assert sorted(cached) == ["online_max_sum_kernel", "row_sum_kernel"]
    for name, (original, again) in cached.items():
        assert "pre-pass TTIR (.source)" in again.warnings[0]
        for key in ("ttir", "ttgir"):
            a, b = _lines(key, original.stages[key]), _lines(key, again.stages[key])
            assert a != b, (name, key)  # the parser renamed the loop's values
            assert _without_names(a) == _without_names(b), (name, key)
        assert _lines("ptx", again.stages["ptx"]) == _lines("ptx", original.stages["ptx"])
        said = [w for w in again.warnings if "loop-carried values" in w]
        assert said and "records no Python function" in said[0], again.warnings


def test_capture_whose_module_does_not_import_falls_back_to_its_ir(tmp_path):
    from tritonscope.inputs import sources

    cap = tmp_path / "cap"
    shutil.copytree(_series_folder() / "capture", cap)
    for path in cap.glob("kernels/*/record.json"):
        record = json.loads(path.read_text())
        record["module_text"] = "import tritonscope_no_such_module\n" + record["module_text"]
        record["file"] = str(tmp_path / "gone" / "loop_kernels.py")
        path.write_text(json.dumps(record))
    entry = next(e for e in sources.open_source(cap).entries if e.name == "row_sum_kernel")
    original = sources.load_artifact(entry)
    again = sources.recompile(entry, original)
    assert "pre-pass TTIR (.source)" in again.warnings[0], again.warnings
    said = [w for w in again.warnings if "could not be compiled here" in w]
    assert said and "tritonscope_no_such_module" in said[0] and "loop-carried values" in said[0], again.warnings
    assert _without_names(_lines("ttir", again.stages["ttir"])) == \
        _without_names(_lines("ttir", original.stages["ttir"]))
    # -c needs the Python function: no fallback, one clear error
    result = invoke("open", cap, "-k", entry.key, "--recompile", "-c", "BLOCK=64", "--stage", "none")
    assert result.exit_code != 0 and "tritonscope_no_such_module" in result.output


def _bundled_ptxas() -> tuple[str, str]:
    """(path, version) of Triton's bundled `ptxas` (3.9 compiles sm_90a with ptxas-blackwell instead)."""
    from triton import knobs

    from tritonscope import triton_api

    path = type(knobs.nvidia).__dict__["ptxas"].default_path
    return path, triton_api.ptxas_version(path)


def _capture_with_ptxas(tmp_path: Path, path: str, version: str) -> Path:
    """tests/data/capture copied, its records saying TRITON_PTXAS_PATH=`path` made it (as Inductor sets it)."""
    cap = tmp_path / "cap"
    shutil.copytree(CAPTURE_FIXTURE, cap)
    for rec in cap.glob("kernels/*/record.json"):
        record = json.loads(rec.read_text())
        record["codegen"]["vars"] = record["env"] = {**record["env"], "TRITON_PTXAS_PATH": path}
        record["codegen"]["tools"] = {"ptxas": {"knob": "TRITON_PTXAS_PATH", "path": path, "version": version,
                                                "bundled": False}}
        rec.write_text(json.dumps(record))
    return cap


def _ptx_isa(ptx: str) -> str:
    return re.search(r"^\.version (\d+\.\d+)", ptx, re.M).group(1)


def test_capture_recompile_uses_the_recorded_ptxas_for_its_arch(tmp_path, monkeypatch):
    """A recorded TRITON_PTXAS_PATH is used even where this Triton reads another knob for sm_90a (3.9)."""
    from tritonscope.inputs import sources

    # a Triton cache of its own: the run's shared one may hold this kernel already (another test compiled
    # the capture), and a cache hit runs no ptxas (Triton's key has ptxas's version, not its path)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton-cache"))

    bundled, version = _bundled_ptxas()
    log = tmp_path / "calls.log"
    wrapper = tmp_path / "torch-bin" / "ptxas"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{bundled}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    cap = _capture_with_ptxas(tmp_path, str(wrapper), version)
    entry = next(e for e in sources.open_source(cap).entries if e.name == "add_kernel")
    again = sources.recompile(entry, sources.load_artifact(entry))
    calls = log.read_text().splitlines() if log.exists() else []
    assert any("sm_90a" in c for c in calls), (calls, again.warnings)  # the recorded file ran
    from triton.backends.nvidia import compiler as nv

    isa = int(nv.ptx_get_version(version))
    assert _ptx_isa(again.stages["ptx"]) == f"{isa // 10}.{isa % 10}"
    # (the fixture's PTX came from ptxas 12.8 on an H200, so a `.version` warning may stay: it is true)
    assert not any("The original was compiled with" in w or "not on this machine" in w
                   for w in again.warnings), again.warnings


def test_capture_recompile_finds_a_ptxas_of_the_recorded_version(tmp_path):
    """The recorded file is gone, a ptxas of its version is here (Triton's bundled one): that one is used."""
    from tritonscope.inputs import sources

    bundled, version = _bundled_ptxas()
    cap = _capture_with_ptxas(tmp_path, str(tmp_path / "gone" / "ptxas"), version)
    entry = next(e for e in sources.open_source(cap).entries if e.name == "add_kernel")
    again = sources.recompile(entry, sources.load_artifact(entry))
    from triton.backends.nvidia import compiler as nv

    isa = int(nv.ptx_get_version(version))
    assert _ptx_isa(again.stages["ptx"]) == f"{isa // 10}.{isa % 10}"
    assert not any("not on this machine:" in w for w in again.warnings), again.warnings
    from tritonscope import triton_api

    if triton_api.compile_tools(90)["ptxas"]["version"] != version:  # 3.9: another ptxas than Triton's choice
        said = [w for w in again.warnings if "a ptxas of the same version" in w]
        assert said and f"({version})" in said[0] and str(tmp_path / "gone") in said[0], again.warnings


def test_capture_recompile_names_both_versions_when_none_is_here(tmp_path):
    from tritonscope import triton_api
    from tritonscope.inputs import sources

    cap = _capture_with_ptxas(tmp_path, str(tmp_path / "gone" / "ptxas"), "11.1")
    entry = next(e for e in sources.open_source(cap).entries if e.name == "add_kernel")
    again = sources.recompile(entry, sources.load_artifact(entry))
    used = triton_api.compile_tools(90)["ptxas"]
    said = [w for w in again.warnings if "not on this machine" in w]
    assert said and "no ptxas 11.1 is here" in said[0] and f"ptxas {used['version']}" in said[0], again.warnings
