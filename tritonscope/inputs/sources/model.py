"""What tritonscope opens: a Source (a cache, a dump, a capture, an Inductor cache, an --emit folder, one file) and its KernelEntry rows."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tritonscope.language.dialects import SOURCE, every_stage_key, for_suffix
from tritonscope.language.dialects import stages as dialect_stages
from tritonscope.core.model import arch_for_capability
from tritonscope.inputs.sources.readers import def_location

# The binary Triton writes per backend (file extension -> backend), and the stage
# tritonscope derives from it (SASS, by nvdisasm; AMD's assembly is Triton's own .amdgcn).
BINARIES = {"cubin": "cuda", "hsaco": "hip"}
DERIVED = {"cubin": "sass"}
# The text stages, by extension, in pipeline order (every stage some backend's dialect
# claims, the source aside): ttir ttgir llir ptx amdgcn sass.  "source" is the TTIR
# before any pass: kept for recompiles, not shown as a stage.
TEXT_STAGES = tuple(k for k in every_stage_key() if k != SOURCE)
STAGE_EXTS = TEXT_STAGES + tuple(BINARIES)
# .mlir: a TTIR or TTGIR module under MLIR's own extension (which one, its text says)
SINGLE_FILE_EXTS = tuple(f".{e}" for e in STAGE_EXTS) + (".json", ".source", ".mlir")
CAPTURE_FORMAT = "tritonscope-capture"


def _file_order(key: str) -> tuple[int, int]:
    """Pipeline order of a file key ("source", "ttir", "ptx", "json"): by the dialect that claims its
    suffix; a stage's own files before those it shares a dialect with (".source" before ".ttir": the
    pre-pass TTIR first)."""
    found = for_suffix(f".{key}")
    if not found:
        return (1 << 30, 0)
    return (found[0].order, 0 if key != found[0].key else 1)


def binary_ext(backend: str) -> str | None:
    """'cubin' for CUDA, 'hsaco' for HIP: the file that holds a backend's machine code."""
    return next((ext for ext, b in BINARIES.items() if b == backend), None)


def expected_files(backend: str) -> tuple[str, ...]:
    """What Triton writes for one kernel of a backend, in pipeline order: its text stages, then its binary.

    CUDA: ttir ttgir llir ptx cubin; HIP: ttir ttgir llir amdgcn hsaco (from the
    dialect registry; a derived stage such as SASS is not Triton's output).
    """
    derived = set(DERIVED.values())
    texts = tuple(d.key for d in dialect_stages(backend) if d.key != SOURCE and d.key not in derived)
    binary = binary_ext(backend)
    return texts + ((binary,) if binary else ())


def target_of(metadata: dict[str, Any]) -> tuple[str | None, int | str | None]:
    """(backend, arch) of Triton's metadata `target`: ('cuda', 90) or ('hip', 'gfx942'); (None, None) if none.

    Triton writes it as a dict ({"backend": "hip", "arch": "gfx942", ...}),
    older JSON as a list, and `--emit` as GPUTarget's repr.
    """
    target = metadata.get("target")
    backend = arch = None
    if isinstance(target, dict):
        backend, arch = target.get("backend"), target.get("arch")
    elif isinstance(target, (list, tuple)) and len(target) >= 2:
        backend, arch = target[0], target[1]
    elif target:
        # GPUTarget(backend='cuda', arch=90, warp_size=32)   GPUTarget(backend='hip', arch='gfx942', warp_size=64)
        m = re.search(r"backend='?(\w+)'?.*?arch=(\d+|'[^']*')", str(target))
        if m:
            backend, arch = m.group(1), m.group(2)
            arch = int(arch) if arch.isdigit() else arch.strip("'")
    if isinstance(arch, str):
        arch = int(arch) if arch.isdigit() else (arch.split(":")[0] or None)  # gfx90a:sramecc+ -> gfx90a
    elif not isinstance(arch, int) or isinstance(arch, bool):
        arch = None
    return (str(backend) if backend else None), arch


# --------------------------------------------------------------------------
# What a listing holds: metadata only
# --------------------------------------------------------------------------


@dataclass
class KernelEntry:
    """One kernel found in a source, from its metadata; stages are read on open."""

    key: str                          # unique in the source: cache key / dump hash / capture hash / file name
    name: str                         # the kernel's name
    kind: str                         # "triton-cache", "dump", "capture", "file"
    folder: Path | None               # where its files are (None for a single file)
    files: dict[str, Path]            # "ttir" / "cubin" / "json" / "source" / "sass" ... -> path
    metadata: dict[str, Any]          # Triton's metadata JSON ({} when the source has none)
    record: dict[str, Any] | None = None   # capture record (source, signature, constexprs, options)
    launches: int | None = None       # counted by a capture; None: not known
    launch_info: dict[str, Any] = field(default_factory=dict)  # grids and argument descriptions (capture)
    registers: int | None = None      # from the cubin's .nv.info, or the hsaco's VGPRs per lane (no tools run)
    stack: int | None = None          # frame bytes per thread (.nv.info; AMD: scratch per lane): > 0 means spills
    static_shared: int | None = None
    sgprs: int | None = None          # AMD: SGPRs per wave (the code object's metadata)
    agprs: int | None = None          # AMD: accumulation VGPRs (CDNA), counted in `registers` too
    _location: tuple[str, int] | None = field(default=None, repr=False)  # (file, line) of the def, read once

    @property
    def capability(self) -> int | None:
        """The CUDA compute capability of the target (None for an AMD target, or when unknown)."""
        arch = target_of(self.metadata)[1]
        return arch if isinstance(arch, int) else None

    @property
    def backend(self) -> str:
        """'cuda' or 'hip': the metadata's target, else what the files are (an .amdgcn or .hsaco is AMD's)."""
        backend = target_of(self.metadata)[0]
        if backend in BINARIES.values():
            return backend
        amd_only = set(expected_files("hip")) - set(expected_files("cuda"))   # amdgcn, hsaco
        return "hip" if amd_only & set(self.files) else "cuda"

    @property
    def arch(self) -> str:
        arch = target_of(self.metadata)[1]
        if isinstance(arch, str):
            return arch
        if arch is None:
            return "?"
        found = arch_for_capability(arch)
        return found.name if found else f"sm_{arch}"

    @property
    def short_key(self) -> str:
        return self.key[:12]

    @property
    def shared(self) -> int | None:
        value = self.metadata.get("shared")
        return int(value) if isinstance(value, int) else None

    @property
    def source_file(self) -> str:
        """'file.py:12' of the kernel's def (capture record, else the IR's first #loc)."""
        if self.record and self.record.get("file"):
            return f"{self.record['file']}:{self.record.get('line', 0)}"
        file, line = self._ir_location()
        return f"{file}:{line}" if file else ""

    def _ir_location(self) -> tuple[str, int]:
        if self._location is None:
            # The first file of each kind of text that records it, in pipeline order: an MLIR module's first
            # #loc (the pre-pass TTIR first), else the LLVM IR's debug info (DISubprogram, DIFile), else the
            # assembly's debug lines (a lone .amdgcn or .ptx)
            self._location = ("", 0)
            tried: set[str] = set()
            for key in sorted(self.files, key=_file_order):
                found = for_suffix(f".{key}")
                if not found or found[0].def_location is None or found[0].kind in tried:
                    continue
                tried.add(found[0].kind)
                self._location = def_location(self.files[key], key)
                if self._location[0]:
                    break
        return self._location

    def config(self) -> str:
        """'BLOCK=16 w4 s3' from the record's constexprs and the metadata's options."""
        parts = [f"{k}={v}" for k, v in ((self.record or {}).get("constexprs") or {}).items()]
        if self.metadata.get("num_warps") is not None:
            parts.append(f"w{self.metadata['num_warps']}")
        if self.metadata.get("num_stages") is not None:
            parts.append(f"s{self.metadata['num_stages']}")
        for option, short in (("maxnreg", "maxnreg"), ("num_ctas", "ctas")):
            value = self.metadata.get(option)
            if value not in (None, 1) or (option == "maxnreg" and value is not None):
                parts.append(f"{short}={value}")
        return " ".join(parts)

    def missing(self) -> list[str]:
        """Stages (and the binary) this source lacks, in pipeline order ('python' first)."""
        out = [] if self.has_python() else ["python"]
        return out + [k for k in expected_files(self.backend) if k not in self.files]

    def has_python(self) -> bool:
        if self.record and self.record.get("source"):
            return True
        file, _ = self._ir_location()
        return bool(file) and os.path.isfile(file)

    def row(self) -> dict[str, Any]:
        """The listing row (JSON-safe): what `open DIR` shows and sorts/filters on."""
        return {
            "key": self.short_key, "name": self.name, "arch": self.arch, "backend": self.backend,
            "config": self.config(), "registers": self.registers, "sgprs": self.sgprs, "agprs": self.agprs,
            "shared": self.shared, "spills": None if self.stack is None else self.stack,
            "launches": self.launches, "source": self.source_file, "kind": self.kind,
            "missing": self.missing(),
        }


@dataclass
class Source:
    """What PATH turned out to be, and the kernels in it."""

    path: Path
    kind: str                         # "triton-cache", "inductor-cache", "dump", "capture", "file"
    entries: list[KernelEntry]
    info: dict[str, Any] = field(default_factory=dict)   # capture.json, for a capture
    warnings: list[str] = field(default_factory=list)    # entries skipped, and why
    single: bool = False              # PATH is one kernel (a file, or one kernel's folder): open it, no listing


# --------------------------------------------------------------------------
