"""The GPUs tritonscope knows by name (cost/gpus.json: datasheet figures with their sources).

A leaf module (it imports nothing of tritonscope): the cost model reads its figures, and
kernels.py answers a kernel file's import-time questions as the part `--gpu` names.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

TABLE = Path(__file__).resolve().parents[1] / "cost" / "gpus.json"


@dataclass(frozen=True)
class Gpu:
    name: str
    vendor: str
    arches: tuple[str, ...]
    sms: int
    clock_ghz: float | None
    tflops: dict[str, float]
    gbs: float
    l2_bytes: int | None
    source: str
    aliases: tuple[str, ...] = ()
    l1_bytes: int | None = None     # L1 + shared memory per SM


@lru_cache(maxsize=1)
def gpu_table() -> dict[str, Gpu]:
    data = json.loads(TABLE.read_text())
    out = {}
    for name, g in data["gpus"].items():
        out[name] = Gpu(name, g["vendor"], tuple(g["arches"]), g["sms"], g.get("clock_ghz"), dict(g["tflops"]),
                        g["gbs"], g.get("l2_bytes"), g["source"], tuple(g.get("aliases", ())),
                        g.get("l1_bytes"))
    return out


def find_gpu(name: str) -> Gpu | None:
    """A GPU of gpus.json by its name or an alias, any case ('h100' is the H100 SXM)."""
    want = " ".join(name.lower().replace("-", " ").replace("_", " ").split())
    for g in gpu_table().values():
        if want in [" ".join(x.lower().split()) for x in (g.name, *g.aliases)]:
            return g
    return None


def gpu_names() -> list[str]:
    return list(gpu_table())


def reference_gpu(arch: str) -> Gpu | None:
    """The arch's reference part: the first GPU of gpus.json built for it."""
    for g in gpu_table().values():
        if arch in g.arches:
            return g
    return None


# ---------------------------------------------- the peak table `bench` and `explain`'s roofline read

# Dense (no structured sparsity) peak rates in TFLOP/s and memory bandwidth
# in GB/s, from NVIDIA's datasheets: "NVIDIA H100 Tensor Core GPU" (SXM5 and
# PCIe and NVL columns; the datasheet's tensor figures are with sparsity, so
# halved here), "NVIDIA H200 Tensor Core GPU" (SXM: the H100 SXM's compute,
# 4.8 TB/s), "NVIDIA A100 Tensor Core GPU" (SXM 80GB), "NVIDIA DGX B200" (per
# GPU: 72 PFLOPS FP8 training / 8, sparse halved, 8 TB/s).  "fp32" is the plain
# (non-tensor-core) rate; "sms" the part's SM count (CUDA deviceQuery: H100 SXM
# and H200 132, H100 PCIe 114, A100 108, B200 148).  Keys are matched against
# torch's device name.  `explain` bounds kernel times with these figures.
PEAKS: dict[str, dict[str, float]] = {
    "H200": {"fp16": 989.4, "bf16": 989.4, "tf32": 494.7, "fp8": 1978.9, "fp32": 66.9, "gbs": 4800, "sms": 132},
    "H100 NVL": {"fp16": 835.5, "bf16": 835.5, "tf32": 417.5, "fp8": 1670.5, "fp32": 60.0, "gbs": 3900, "sms": 132},
    "H100 PCIe": {"fp16": 756.5, "bf16": 756.5, "tf32": 378.0, "fp8": 1513.0, "fp32": 51.2, "gbs": 2000, "sms": 114},
    "H100": {"fp16": 989.4, "bf16": 989.4, "tf32": 494.7, "fp8": 1978.9, "fp32": 66.9, "gbs": 3350, "sms": 132},
    "A100": {"fp16": 312.0, "bf16": 312.0, "tf32": 156.0, "fp32": 19.5, "gbs": 2039, "sms": 108},
    "B200": {"fp16": 2250.0, "bf16": 2250.0, "tf32": 1100.0, "fp8": 4500.0, "fp32": 75.0, "gbs": 8000, "sms": 148},
}
PEAKS_SOURCE = "NVIDIA datasheets (dense; H100/H200 SXM, H100 PCIe/NVL, A100 SXM 80GB, DGX B200 per GPU)"


def peaks_for(device: str) -> tuple[str, dict[str, float]] | tuple[None, None]:
    for key, table in PEAKS.items():  # most specific first
        if all(word in device for word in key.split()):
            return key, table
    return None, None
