"""GPU test for `capture --arch` (issue 35): run with `pytest -m gpu tests/gpu/test_capture_cpu_vs_gpu.py -s`.

tests/data/capture_cpu/program.py is captured twice in this run, on an H100/H200 (sm_90a):

1. on the GPU, as `capture` always has (every launch run, autotune configs timed);
2. with no GPU: `CUDA_VISIBLE_DEVICES=` and `capture --arch sm_90a` (the program on the CPU, each launch
   compiled for sm_90a and not run, autotune configs predicted).

Both must record the same kernels: the same names, specialization (each argument's type and attributes,
tt.divisibility included), constexprs, num_warps and num_stages, and the same TTGIR and PTX.  Which
autotune config each run chose is printed (the GPU timed them, the GPU-less run predicted them): it may
differ and is not a failure.
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
if torch.cuda.get_device_capability(0) != (9, 0):  # pragma: no cover
    pytest.skip("needs an sm_90 GPU (H100/H200): the GPU-less run compiles for sm_90a", allow_module_level=True)

from tritonscope.inputs import sources  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "tests" / "data" / "capture_cpu" / "program.py"


def _capture(tmp: Path, name: str, *, gpuless: bool) -> Path:
    out = tmp / name
    env = {**os.environ, "TRITON_CACHE_DIR": str(tmp / f"triton-{name}"),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    extra = []
    if gpuless:
        env["CUDA_VISIBLE_DEVICES"] = ""
        extra = ["--arch", "sm_90a"]
    result = subprocess.run([sys.executable, "-m", "tritonscope", "capture", *extra, "-o", str(out), "--",
                             sys.executable, str(PROGRAM)], env=env, capture_output=True, text=True, timeout=1200)
    print(f"--- {name}: exit {result.returncode}\n{result.stdout[-1500:]}{result.stderr[-3000:]}")
    assert result.returncode == 0, result.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cpu-vs-gpu")
    return _capture(tmp, "gpu", gpuless=False), _capture(tmp, "cpu", gpuless=True)


_LOC = re.compile(r"\s*loc\(#loc\d*\)|^#loc.*$", re.M)


def _kernels(folder: Path) -> dict[tuple, dict]:
    """(name, constexprs, specialization, warps, stages) -> {hash, ttgir, ptx} for every recorded kernel."""
    found = {}
    for e in sources.open_source(folder).entries:
        r = e.record
        options = r.get("options") or {}
        key = (e.name, json.dumps(r.get("constexprs"), sort_keys=True), json.dumps(r.get("signature"), sort_keys=True),
               json.dumps(r.get("attrs"), sort_keys=True), options.get("num_warps"), options.get("num_stages"))
        stages = {}
        for stage in ("ttgir", "ptx"):
            path = e.files.get(stage)
            stages[stage] = _LOC.sub("", Path(path).read_text()) if path else None
        assert key not in found, f"two kernels with one specialization: {key}"
        found[key] = {"hash": e.key, **stages}
    return found


def test_same_kernels_with_and_without_a_gpu(both):
    gpu, cpu = both
    on_gpu, gpuless = _kernels(gpu), _kernels(cpu)
    print(f"GPU capture: {len(on_gpu)} kernels; GPU-less capture (--arch sm_90a): {len(gpuless)} kernels")
    for key in sorted(set(on_gpu) | set(gpuless)):
        mark = "both" if key in on_gpu and key in gpuless else ("GPU only" if key in on_gpu else "CPU only")
        print(f"  {mark:8} {key[0]} {key[1]} w{key[4]} s{key[5]} {key[3]}")
    assert set(on_gpu) == set(gpuless)
    assert len(on_gpu) == 7
    for key in on_gpu:
        assert on_gpu[key]["ttgir"] == gpuless[key]["ttgir"], f"TTGIR differs for {key}"
        assert on_gpu[key]["ptx"] == gpuless[key]["ptx"], f"PTX differs for {key}"
    same_hash = sum(on_gpu[k]["hash"] == gpuless[k]["hash"] for k in on_gpu)
    print(f"  {same_hash} of {len(on_gpu)} kernels have the same Triton hash")


def test_same_launches_and_tunings(both):
    gpu, cpu = both

    def launches(folder):
        out = {}
        for part in folder.glob("launches-*.json"):
            for key, item in json.loads(part.read_text())["kernels"].items():
                if "args" in item:
                    out[key] = (item.get("grids"), item["args"][0])
        return out

    def tunings(folder):
        return {t["kernel"]: t for part in folder.glob("autotune-*.json")
                for t in json.loads(part.read_text())["tunings"]}

    by_spec_gpu = {v["hash"]: k for k, v in _kernels(gpu).items()}
    by_spec_cpu = {v["hash"]: k for k, v in _kernels(cpu).items()}
    lg = {by_spec_gpu[h]: v for h, v in launches(gpu).items() if h in by_spec_gpu}
    lc = {by_spec_cpu[h]: v for h, v in launches(cpu).items() if h in by_spec_cpu}
    assert set(lg) == set(lc)
    for key in lg:
        grids_gpu, args_gpu = lg[key]
        grids_cpu, args_cpu = lc[key]
        assert grids_gpu[0] == grids_cpu[0], key
        strip = [{k: v for k, v in a.items()} for a in args_gpu]
        assert strip == args_cpu, key
    tg, tc = tunings(gpu), tunings(cpu)
    assert set(tg) == set(tc) == {"scale_kernel", "row_sum_kernel"}
    for name in tg:
        assert [c["text"] for c in tg[name]["configs"]] == [c["text"] for c in tc[name]["configs"]]
        assert tc[name]["timed"] is False and all(c["ms"] is None for c in tc[name]["configs"])
        print(f"  {name}: the GPU timed and chose {tg[name]['best_config']['kwargs']}; the GPU-less run chose "
              f"{tc[name]['best_config']['kwargs']} ({tc[name]['chosen_by']})")
