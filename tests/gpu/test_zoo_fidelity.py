"""GPU: zoo kernels (tests/zoo/manifest.py) compiled by tritonscope equal a real launch's, stage by stage.

Run on an H100/H200: `pytest -m gpu tests/gpu/test_zoo_fidelity.py -s`.  Each case is the zoo's
command line, turned into a Request as the CLI does; tritonscope compiles it GPU-less (the
kernel file imported with the stand-in driver answering its import-time questions), and a
fresh Python process imports the same file with the real driver and launches the decorated
kernel for real, as the library does: `kernel[(1,)](**keywords)` with zero-filled tensors of
the described shapes and only the keywords the command line passed (constexprs, options,
-w/-s), so its own @triton.heuristics, prune_configs_by and backend defaults decide the rest.
An autotuned kernel's Autotuner keeps just the config tritonscope chose (from its own, freshly
built config list), so the launch times nothing and compiles that config.  The stages and the
num_warps/num_stages the launch compiled must equal tritonscope's.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

from fidelity import first_difference as _first_difference, normalize  # noqa: E402

from tritonscope.pipeline.binding import build_spec  # noqa: E402
from tritonscope.inputs.kernels import Request, parse_assignments, parse_scalar  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "zoo"))
import manifest  # noqa: E402

ARCH = "sm_90a"
# (zoo name, extra words): import-time driver queries, autotune, dtype and string constexprs, interleaved
# constexprs, a host-side tensor descriptor (TMA), and NVIDIA backend options passed through -c.
CASES = [
    ("pattern_import_time_driver", ""),
    ("fla_l2norm_fwd", ""),
    ("liger_rms_norm_fwd", "-c maxnreg=64 -c enable_fp_fusion=false"),
    ("liger_cross_entropy", ""),
    ("pattern_interleaved", ""),
    ("pattern_dtype_constexpr", ""),
    ("pattern_host_descriptor", ""),
    ("liger_dyt_fwd", ""),
    # launch-exact patterns: Triton's own launch path decides
    ("pattern_heuristic_num_warps", ""),
    ("pattern_heuristic_own_key", ""),
    ("pattern_keyword_pruner", ""),
    ("pattern_positional_pruner", ""),
    ("pattern_default_stages", ""),
    ("pattern_heuristics", ""),
    ("pattern_unsigned_fnuz", ""),
    ("pattern_torch_version_gate", ""),
    ("pattern_raw_stream_import", ""),
    ("pattern_amd_options_config", ""),
    # the wider zoo: kernels of projects beyond liger and fla, with their own launch arguments
    ("conch_rms_norm", ""),
    ("conch_silu_and_mul", ""),
    ("conch_static_fp8_quant", ""),
    ("sage_quant_per_block_int8", ""),
    ("sage_attn_qk_int8", ""),
    ("megatron_indices_to_multihot", ""),
    ("megatron_append_kv_cache", ""),
]


def request_of(entry, extra: str) -> Request:
    """The zoo's words as the CLI reads them (the few options the zoo uses)."""
    words = shlex.split(manifest.args_for(entry, ARCH) + " " + extra)
    cs, args, kw = [], [], {}
    i = 0
    while i < len(words):
        w, v = words[i], words[i + 1] if i + 1 < len(words) else None
        if w in ("-c", "--constexpr"):
            cs.append(v)
        elif w == "--arg":
            args.append(v)
        elif w in ("-w", "--num-warps"):
            kw["num_warps"] = int(v)
        elif w in ("-s", "--num-stages"):
            kw["num_stages"] = int(v)
        elif w == "--config":
            kw["config"] = int(v)
        else:
            raise AssertionError(f"the zoo fidelity test does not read {w!r}")
        i += 2
    return Request(entry["target"], constexprs=parse_assignments(cs, "constexpr"),
                   args=parse_assignments(args, "argument"), arch=ARCH, **kw)


_REAL = r'''
import json, sys, importlib, importlib.util, os
from pathlib import Path
import torch
payload = json.loads(sys.argv[1])
target = payload["target"]
where, _, name = target.rpartition(":")
if where.endswith(".py"):
    path = Path(where).resolve()
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location("zoo_kernel", path)
    module = importlib.util.module_from_spec(spec); sys.modules["zoo_kernel"] = module; spec.loader.exec_module(module)
else:
    module = importlib.import_module(where)
obj = getattr(module, name)
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor
from tritonscope.inputs.kernels import parse_arg_value, parse_constexpr, TensorArg, DescArg, kernel_value
from tritonscope.measure import runner
kw = {}
for arg, text in payload["args"].items():
    v = parse_arg_value(text)
    if isinstance(v, TensorArg):
        shape = tuple(reversed(v.shape)) if v.transposed else v.shape
        t = torch.zeros(shape, device="cuda", dtype=runner.torch_dtype(v.dtype))
        kw[arg] = t.T if v.transposed else t
    elif isinstance(v, DescArg):
        t = torch.zeros(v.shape or v.block, device="cuda", dtype=runner.torch_dtype(v.dtype))
        kw[arg] = TensorDescriptor.from_tensor(t, list(v.block))
    else:
        kw[arg] = v
kw.update({k: kernel_value(parse_constexpr(v)) for k, v in payload["given"].items()})
kw.update(payload["options"])
tuner = obj
while tuner is not None and not any(c.__name__ == "Autotuner" for c in type(tuner).__mro__):
    tuner = getattr(tuner, "fn", None)
if tuner is not None and payload["skip_tuner"]:
    tuner.run = lambda *a, **k: tuner.fn.run(*a, **k)  # every tuned value given: the launch's own config
elif tuner is not None:
    tuner.configs = [tuner.configs[payload["config"] - 1]]  # the config tritonscope chose, from this import
positional = [kw.pop(n) for n in payload["positional"]]
kernel = obj[(1,)](*positional, **kw)
torch.cuda.synchronize()
out = {k: kernel.asm[k] for k in ("ttir", "ttgir", "llir", "ptx")}
out["launch"] = {"num_warps": kernel.metadata.num_warps, "num_stages": kernel.metadata.num_stages}
print(json.dumps(out))
'''


@pytest.mark.parametrize("name,extra", CASES)
def test_zoo_kernel_equals_a_real_launch(name, extra, tmp_path, monkeypatch):
    from tritonscope.pipeline.triton_compile import compile_artifact

    entry = next(e for e in manifest.ZOO if e["name"] == name)
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "tritonscope"))
    monkeypatch.setenv("TRITONSCOPE_CACHE_DIR", str(tmp_path / "ts"))
    loaded = build_spec(request_of(entry, extra), ARCH)
    artifact = compile_artifact(loaded)
    spec = loaded.spec
    request = request_of(entry, extra)
    # what the command line passed, as the launch passes it: -c constexprs (text), options, -w/-s
    given = {k: v for k, v in (request.constexprs or {}).items() if k in spec.constexprs}
    options = {k: parse_scalar(v) for k, v in (request.constexprs or {}).items() if k not in spec.constexprs}
    for option in ("num_warps", "num_stages"):
        if getattr(request, option) is not None:
            options[option] = getattr(request, option)
    how = (spec.autotune or {}).get("launch", "")
    payload = {"target": entry["target"], "args": {k: str(v) if v is not None else None for k, v in spec.args.items()},
               "given": given, "options": options,
               "config": (spec.autotune or {}).get("original"), "skip_tuner": spec.autotune is None,
               "positional": how.split(": ", 1)[1].split(", ") if how.startswith("by position: ") else []}
    env = {**os.environ, "TRITON_CACHE_DIR": str(tmp_path / "real")}
    out = subprocess.run([sys.executable, "-c", _REAL, json.dumps(payload)], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    real = json.loads(out.stdout.strip().splitlines()[-1])
    launch = real.pop("launch")
    assert (launch["num_warps"], launch["num_stages"]) == (spec.num_warps, spec.num_stages), launch
    same = {s: normalize(s, artifact.stages[s]) == normalize(s, real[s]) for s in real}
    print(f"\nZOO FIDELITY {name} [{spec.label()} {extra}] asked={list(spec.asked)} "
          + " ".join(f"{k}={'same' if v else 'DIFFERENT'}" for k, v in same.items()))
    for s, ok in same.items():
        assert ok, f"{s} differs: " + _first_difference(normalize(s, artifact.stages[s]), normalize(s, real[s]))
