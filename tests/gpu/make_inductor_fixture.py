"""Make the Inductor folder checked in under tests/data/inductor/ (run on a GPU machine).

    python tests/gpu/make_inductor_fixture.py OUT_DIR

Runs a small model (matmul, layer norm, softmax and pointwise ops) under
``torch.compile(mode="max-autotune-no-cudagraphs")`` with its own Inductor
cache folder and a ``TORCH_COMPILE_DEBUG`` folder, then packs three tarballs
into OUT_DIR (the device machine hands back only a few files):

- ``inductor-cache.tar.gz``: the Inductor cache *without* its ``triton/``
  folder (what a user has when the Triton cache was elsewhere or removed);
- ``inductor-triton.tar.gz``: that ``triton/`` folder, the kernels the GPU
  run really compiled, kept as the reference the CPU tests compare with;
- ``inductor-debug.tar.gz``: the ``TORCH_COMPILE_DEBUG`` folder
  (``output_code.py``).

``versions.json`` records torch, Triton, the GPU and the model's shapes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

MODEL = r'''
import torch

class Block(torch.nn.Module):
    def __init__(self, d=256, h=512):
        super().__init__()
        self.up = torch.nn.Linear(d, h)
        self.norm = torch.nn.LayerNorm(h)
        self.down = torch.nn.Linear(h, d)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.up(x))
        h = self.norm(h)
        attn = torch.softmax(h @ h.transpose(0, 1) * 0.0625, dim=-1)
        return self.down(attn @ h) * 0.5 + x

torch.manual_seed(0)
model = Block().cuda().half()
x = torch.randn(512, 256, device="cuda", dtype=torch.half)
compiled = torch.compile(model, mode="max-autotune-no-cudagraphs")
with torch.no_grad():
    y = compiled(x)
torch.cuda.synchronize()
print("model ran:", tuple(y.shape), float(y.float().abs().mean()))
'''


def _pack(folder: Path, tarball: Path, skip_top: str | None = None) -> int:
    count = 0
    with tarfile.open(tarball, "w:gz") as tar:
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(folder)
            if skip_top and rel.parts and rel.parts[0] == skip_top:
                continue
            if path.is_file():
                tar.add(path, arcname=str(rel), recursive=False)
                count += 1
    return count


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "inductor-fixture").resolve()
    out.mkdir(parents=True, exist_ok=True)
    work = Path("/tmp/tritonscope-inductor-fixture")
    cache, debug = work / "cache", work / "debug"
    for p in (cache, debug):
        p.mkdir(parents=True, exist_ok=True)
    script = work / "model.py"
    script.write_text(MODEL)
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(cache), "TORCH_COMPILE_DEBUG": "1",
           "TORCH_COMPILE_DEBUG_DIR": str(debug), "TORCHINDUCTOR_FX_GRAPH_CACHE": "0"}
    env.pop("TRITON_CACHE_DIR", None)
    subprocess.run([sys.executable, str(script)], env=env, check=True, cwd=work)
    import torch
    import triton
    info = {"torch": torch.__version__, "triton": triton.__version__,
            "gpu": torch.cuda.get_device_name(0), "capability": list(torch.cuda.get_device_capability(0)),
            "model": MODEL}
    (out / "versions.json").write_text(json.dumps(info, indent=1))
    n1 = _pack(cache, out / "inductor-cache.tar.gz", skip_top="triton")
    n2 = _pack(cache / "triton", out / "inductor-triton.tar.gz") if (cache / "triton").is_dir() else 0
    n3 = _pack(debug, out / "inductor-debug.tar.gz")
    print(f"inductor cache: {n1} files; triton cache: {n2} files; debug: {n3} files")
    for p in sorted(out.iterdir()):
        print(f"  {p.name}: {p.stat().st_size / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
