"""The GPUs tritonscope knows by name (cost/gpus.json: datasheet figures with their sources).

A leaf module (it imports nothing of tritonscope): the cost model reads its figures, and
kernels.py answers a kernel file's import-time questions as the part `--gpu` names.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

TABLE = Path(__file__).parent / "cost" / "gpus.json"


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
