"""GPU tests for `tritonscope capture` (issue 11): run with `pytest -m gpu tests/gpu/test_capture.py -s`.

1. A torch.compile'd model (matmul, layernorm, softmax, pointwise chain;
   mode="max-autotune-no-cudagraphs") and an autotuned user kernel are
   captured; every Triton kernel the run compiled is recorded (counted
   against Inductor's own cache folder), each opens, and its recompile for
   sm_90a with the captured specialization equals the captured stages once
   locations are stripped.
2. Launches: counts, grids and argument descriptions; an unaligned view is
   recorded as such and its kernel lost tt.divisibility.
The table of what was captured is printed (-s) for the closing note.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover - collected only with -m gpu
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

from typer.testing import CliRunner  # noqa: E402

from tritonscope.inputs import sources  # noqa: E402
from tritonscope.cli import app  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "capture_programs.py"
runner = CliRunner()


def capture(tmp: Path, program: str) -> tuple[Path, Path, subprocess.CompletedProcess]:
    """Capture `capture_programs.py PROGRAM` with private Inductor and Triton caches."""
    out, inductor = tmp / f"cap-{program}", tmp / f"inductor-{program}"
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(inductor), "TRITON_CACHE_DIR": str(tmp / f"triton-{program}"),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    if program == "model":  # Inductor keeps its Triton cache in its own folder only when TRITON_CACHE_DIR is unset
        env.pop("TRITON_CACHE_DIR")
    result = subprocess.run([sys.executable, "-m", "tritonscope", "capture", "-o", str(out), "--",
                             sys.executable, str(PROGRAMS), program], env=env, capture_output=True, text=True,
                            timeout=1200)
    print(result.stderr[-3000:])
    assert result.returncode == 0, result.stderr[-3000:]
    return out, inductor, result


def cache_hashes(folder: Path) -> set[str]:
    """The `hash` of every kernel in the Triton caches under `folder` (Inductor's: triton/<device>/)."""
    out = set()
    for meta in folder.rglob("*.json"):
        if meta.name.startswith("__grp__") or not (meta.parent / f"__grp__{meta.name}").exists():
            continue
        out.add(json.loads(meta.read_text())["hash"])
    return out


def _norm(key: str, text: str) -> list[str]:
    from tritonscope.analyses.diff import normalize_stage

    lines = [t for _, t in normalize_stage(key, text)]
    if key == "ttir":  # re-parsing TTIR renames loop block arguments (%k -> %arg6): compare structure
        names: dict[str, str] = {}
        lines = [re.sub(r"%[A-Za-z_][\w$.]*", lambda m: names.setdefault(m.group(0), f"%v{len(names)}"), line)
                 for line in lines]
    return lines


def check_every_kernel(cap: Path) -> list[dict]:
    """Each captured kernel opens, and recompiles for sm_90a to the same stages.

    The recompile replays the compile's recorded environment: Inductor sets
    TRITON_PTXAS_PATH to torch's own ptxas inside the program (CUDA 13: PTX
    `.version 9.0`), which exists on this machine, so the PTX must be identical.
    """
    from tritonscope.triton_api import TOOL_KNOBS

    source = sources.open_source(cap)
    rows = []
    environments: dict[str, int] = {}
    for entry in source.entries:
        original = sources.load_artifact(entry)
        assert {"ttir", "ttgir", "llir", "ptx", "sass"} <= set(original.stages), entry.key
        assert "python" in original.stages, entry.key
        recorded = sources.recorded_environment(entry)
        assert recorded["complete"], entry.key  # a capture records the whole code-generation environment
        shown = json.dumps(recorded["vars"], sort_keys=True)
        environments[shown] = environments.get(shown, 0) + 1
        again = sources.recompile(entry, original, arch="sm_90a")
        assert not [w for w in again.warnings if "not on this machine" in w], again.warnings
        for knob in TOOL_KNOBS.values():  # the recorded tool (e.g. torch's ptxas) was the one used again
            if knob in recorded["vars"]:
                assert again.env.get(knob) == recorded["vars"][knob], (entry.name, knob, again.warnings)
        for key in ("ttir", "ttgir", "llir", "ptx"):
            assert _norm(key, again.stages[key]) == _norm(key, original.stages[key]), (entry.name, key)
        rows.append(entry.row())
        result = runner.invoke(app, ["open", str(cap), "--kernel", entry.key, "--stage", "none", "--width", "120"])
        assert result.exit_code == 0, result.output
    for shown, count in sorted(environments.items()):
        print(f"recorded code-generation environment of {count} kernel(s): {shown}")
    return rows


def print_table(cap: Path) -> None:
    result = runner.invoke(app, ["open", str(cap), "--width", "200"])
    print(result.output)


def test_capture_torch_compile_model(tmp_path):
    cap, inductor, _ = capture(tmp_path, "model")
    recorded = {e.metadata.get("hash") for e in sources.open_source(cap).entries}
    compiled_by_inductor = cache_hashes(inductor)
    assert compiled_by_inductor, "Inductor compiled no Triton kernel?"
    missing = compiled_by_inductor - recorded
    assert not missing, f"{len(missing)} of {len(compiled_by_inductor)} Inductor kernels not captured"
    print(f"\nInductor's cache: {len(compiled_by_inductor)} kernels; captured: {len(recorded)}")
    rows = check_every_kernel(cap)
    # Inductor may launch through its own static launcher, which Triton's launch hook does not see
    print(f"launches counted for {sum(1 for r in rows if r['launches'])} of {len(rows)} kernels")
    names = " ".join(r["name"] for r in rows)
    assert "triton_" in names  # Inductor's kernels (triton_poi_/triton_per_/triton_red_/triton_tem_)
    print_table(cap)


def test_capture_autotuned_user_kernel(tmp_path):
    cap, _, _ = capture(tmp_path, "autotuned")
    source = sources.open_source(cap)
    configs = sorted(e.config() for e in source.entries)
    assert len(source.entries) == 3, configs  # every config tried compiles once
    tunings = source.info.get("autotune") or []
    assert tunings and "BLOCK" in tunings[0]["best"] and len(tunings[0]["configs"]) == 3
    launched = [e for e in source.entries if e.launches]
    assert launched and sum(e.launches for e in launched) >= 3
    args = launched[0].launch_info["args"][0]
    assert args[0]["dtype"] == "float16" and args[0]["shape"] == [1 << 20] and args[0]["align16"] is True
    assert launched[0].launch_info["grids"]
    check_every_kernel(cap)
    print_table(cap)


def test_capture_small_and_unaligned(tmp_path):
    cap, _, _ = capture(tmp_path, "small")
    source = sources.open_source(cap)
    adds = [e for e in source.entries if e.name == "add_kernel"]
    assert len(adds) == 2  # aligned and unaligned x: two specializations
    divisibility = {}
    for e in adds:
        art = sources.load_artifact(e)
        divisibility[e.launch_info["args"][0][0]["align16"]] = art.specialization[0].attrs
    assert divisibility[True] == ("tt.divisibility=16",) and divisibility[False] == ()
    check_every_kernel(cap)
    print_table(cap)
