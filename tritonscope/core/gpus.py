"""The one GPU table: core/gpus.json (datasheet figures, each GPU with its source), read here only.

Every reader of GPU facts goes through this module: explain's waves and
roofline (analyses/explain/roofline.py), bench's % of peak
(measure/bench.py), the cost model (cost/model.py), the stand-in driver that
answers a kernel file's import-time questions as the target's GPU
(model.reference_device -> inputs/kernels.py -> triton_api), and `--gpu`'s
check and hint.  The table sits in core, beside its reader, because readers
from core upwards need it (analyses may not import cost: tests/test_imports.py).

Imports nothing of tritonscope but core.errors and core.words.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

TABLE = Path(__file__).resolve().parent / "gpus.json"


@dataclass(frozen=True)
class Gpu:
    name: str
    vendor: str
    arches: tuple[str, ...]
    sms: int
    clock_ghz: float | None
    tflops: dict[str, float]        # dense peaks: "fp16", "bf16", "tf32", "fp8", "fp32"; {} when not in the table
    gbs: float | None               # memory bandwidth, GB/s; None when not in the table
    l2_bytes: int | None
    source: str
    aliases: tuple[str, ...] = ()
    l1_bytes: int | None = None     # L1 + shared memory per SM
    int8_tops: float | None = None  # dense INT8 tensor-core TOPS (None: the datasheet gives none)
    # how torch / Triton's driver describe the part: name, capability, memory_gib, clocks (the stand-in's answers)
    device: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def has_peaks(self) -> bool:
        """Whether the table carries the part's datasheet peaks (else: no roofline, no predicted time)."""
        return bool(self.tflops) and bool(self.gbs)

    def rate(self, kind: str) -> float | None:
        """The datasheet's dense rate of one kind of math: TFLOP/s ("fp16", ..., "fp32"), TOPS for "int8"."""
        return self.int8_tops if kind == "int8" else self.tflops.get(kind)

    def peaks(self) -> dict[str, float]:
        """{"fp16": TFLOP/s, ..., "gbs": GB/s} ({} without datasheet peaks), as bench's % of peak reads them."""
        return {**self.tflops, "gbs": self.gbs} if self.has_peaks else {}


def _load() -> dict[str, Any]:
    return json.loads(TABLE.read_text())


@lru_cache(maxsize=1)
def gpu_table() -> dict[str, Gpu]:
    out = {}
    for name, g in _load()["gpus"].items():
        out[name] = Gpu(name, g["vendor"], tuple(g["arches"]), g["sms"], g.get("clock_ghz"), dict(g["tflops"]),
                        g["gbs"], g.get("l2_bytes"), g["source"], tuple(g.get("aliases", ())),
                        g.get("l1_bytes"), g.get("int8_tops"), dict(g.get("device") or {}))
    return out


@lru_cache(maxsize=1)
def references() -> dict[str, str]:
    """{arch: its reference GPU's name}: the part compiled, explained and predicted for when --gpu names none."""
    return dict(_load()["references"])


def _words(name: str) -> str:
    return " ".join(name.lower().replace("-", " ").replace("_", " ").split())


def find_gpu(name: str) -> Gpu | None:
    """A GPU of the table by its name, an alias or its device name, any case ('h100' is the H100 SXM)."""
    want = _words(name)
    for g in gpu_table().values():
        if want in [_words(x) for x in (g.name, *g.aliases, g.device.get("name", "")) if x]:
            return g
    return None


def gpu_names() -> list[str]:
    return list(gpu_table())


def known_gpus() -> str:
    """The one hint that lists the known GPUs: 'GPUs: H100 SXM, ... (datasheet peaks); also A10, ...'."""
    table = gpu_table().values()
    peaks = [g.name for g in table if g.has_peaks]
    others = [g.name for g in table if not g.has_peaks]
    return (f"GPUs: {', '.join(peaks)} (datasheet peaks: roofline and predicted time)"
            + (f"; also {', '.join(others)} (SM count and device only)." if others else "."))


def gpu_or_refuse(name: str) -> Gpu:
    """--gpu NAME: the GPU, or a UsageError (exit 2) that names close matches and the known GPUs."""
    from tritonscope.core.errors import UsageError, close_matches
    from tritonscope.core.words import field_data, said

    if not name.strip():
        raise UsageError(f"{said('gpu')} is empty.", data=field_data("gpu", name),
                         hint=f"Name a GPU, or leave {said('gpu')} out for the local GPU, else the arch's reference "
                              f"GPU. {known_gpus()}")
    g = find_gpu(name)
    if g is None:
        raise UsageError(f"Unknown GPU {name!r}.{close_matches(name, gpu_names())}", hint=known_gpus(),
                         data=field_data("gpu", name))
    return g


def reference_gpu(arch: str) -> Gpu | None:
    """The arch's reference part (the table's `references`; else the first GPU built for it)."""
    table = gpu_table()
    if arch in references():
        return table[references()[arch]]
    return next((g for g in table.values() if arch in g.arches), None)


def gpu_for_device(device: str | None) -> Gpu | None:
    """The table's GPU for a device name as torch reports it ('NVIDIA H100 PCIe' -> H100 PCIe): the most
    specific name or alias whose words are all words of the device name; None for a part not in the table."""
    if not device:
        return None
    have = set(re.split(r"[\s\-_]+", device.lower()))
    best, score = None, 0
    for g in gpu_table().values():
        for alias in (g.name, *g.aliases, g.device.get("name", "")):
            words = re.split(r"[\s\-_]+", alias.lower()) if alias else []
            if words and set(words) <= have and len(words) > score:
                best, score = g, len(words)
    return best
