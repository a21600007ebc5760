"""Kernels that already compiled: Triton caches, dumps, captures and stage files -> Artifacts.

Where a kernel comes from decides what exists of it, so this module reads
each place the way Triton (or `tritonscope capture`) wrote it and says
plainly what is missing.  Layouts, as Triton 3.6-3.9 write them
(triton/runtime/cache.py FileCacheManager, triton/compiler/compiler.py
`compile`):

- **Triton cache** (`TRITON_CACHE_DIR`, default ~/.triton/cache): one folder
  per cache key (base32), holding `<name>.json` (the metadata: target,
  options, `shared`, `hash`, `name`...), `__grp__<name>.json` (the group:
  file name -> absolute path), `<name>.source` (the TTIR `make_ir` gave,
  before any pass; newer Tritons), `.ttir .ttgir .llir .ptx .cubin` (AMD:
  `.ttir .ttgir .llir .amdgcn .hsaco`).  With TRITON_STORE_BINARY_ONLY=1
  only the binary (`.cubin`, `.hsaco`) and `.json` are kept.
- **Inductor cache** (`$TMPDIR/torchinductor_<user>`): Triton caches under
  `triton/<device>/`, plus the generated kernel modules (`xx/cxxx.py`) that
  the IR's locations name.
- **Kernel dump** (`TRITON_KERNEL_DUMP=1`, `TRITON_DUMP_DIR`): one folder per
  *source* hash, with every stage and `<name>.sass`, but no metadata.
- **Capture** (`tritonscope capture`, see capture.py): `capture.json`, then
  `kernels/<hash>/` (stage files as in the cache + `record.json`: Python
  source, file/line, signature, constexprs, options) and per-process
  `launches-<pid>.json` / `autotune-<pid>.json`.
- **A single stage file**: .ttir .ttgir .llir .ptx .cubin .sass .amdgcn
  .hsaco .json.

Which stages a kernel has, and in what order, is the dialect registry's
(`dialects.stages(backend)`): an entry's backend (CUDA or HIP) comes from its
metadata's target, else from its files.  Listing reads metadata only (JSON,
the capture records, the cubin's ELF `.nv.info` for registers and stack, the
hsaco's AMDGPU metadata note for VGPRs, SGPRs, LDS and scratch): 1,000
kernels list in well under 2 s.  Stages are read when one kernel is opened
(`load_artifact`).  Nothing here imports Triton; SASS and resources of a
cubin come from compile.py's helpers (the bundled nvdisasm/cuobjdump), those
of an hsaco from codeobject.py (no ROCm tools).
"""

from __future__ import annotations

import json
import os
import re
import struct
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tritonscope import codeobject
from tritonscope.dialects import SOURCE, every_stage_key
from tritonscope.dialects import stages as dialect_stages
from tritonscope.errors import InputFileError, NotFoundError, UsageError, close_matches
from tritonscope.model import ARCHES, ArgSpecialization, Artifact, KernelSpec, arch_for_capability

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
            path = next((self.files[k] for k in ("source", "ttir", "ttgir") if k in self.files), None)
            if path is not None:
                self._location = ir_location(path)
            elif "llir" in self.files:  # no MLIR: the LLVM IR's debug info (DISubprogram, DIFile)
                self._location = llir_location(self.files["llir"])
            if not (self._location or ("", 0))[0]:  # the machine assembly's debug lines (a lone .amdgcn or .ptx)
                path = next((self.files[k] for k in ("amdgcn", "ptx") if k in self.files), None)
                self._location = asm_location(path) if path else ("", 0)
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
# Finding out what PATH is
# --------------------------------------------------------------------------


def open_source(path: str | Path) -> Source:
    """Read what PATH is (cache, dump, capture, Inductor cache or a stage file) and list its kernels."""
    p = Path(path).expanduser()
    if not p.exists():
        raise NotFoundError(f"No such file or folder: {path}",
                            hint="Give a Triton cache (~/.triton/cache), a TRITON_KERNEL_DUMP folder, "
                                 "a capture folder or a stage file (.ttir, .ttgir, .llir, .ptx, .cubin, .amdgcn, "
                                 ".hsaco, .json).")
    if p.is_file():
        return Source(p, "file", [file_entry(p)], single=True)
    try:
        return _open_dir(p)
    except PermissionError as e:
        raise InputFileError(f"Cannot read {path}: no permission ({e.filename}).") from e


def _open_dir(p: Path) -> Source:
    if (p / "capture.json").is_file():
        return _capture(p)
    names = _names(p)
    if any(n.startswith("__grp__") for n in names) or _stage_names(names):
        entry = _folder_entry(p, kind="triton-cache" if any(n.startswith("__grp__") for n in names) else "dump")
        return Source(p, entry.kind, [entry], single=True)
    if (p / "triton").is_dir():  # an Inductor cache: Triton caches under triton/<device>/
        entries, warnings = [], []
        for device in sorted(_subdirs(p / "triton")):
            found, skipped = _entries_in(device)
            entries += found
            warnings += skipped
        return Source(p, "inductor-cache", entries, warnings=warnings)
    entries, warnings = _entries_in(p)
    if not entries and _is_inductor_cache(p):
        raise InputFileError(
            f"{p} is an Inductor cache without a triton/ folder: the kernels it compiled are not kept in it.",
            context=_inductor_context(p),
            hint="Inductor writes the compiled kernels to Triton's cache: open $TRITON_CACHE_DIR if the program set "
                 "it, else ~/.triton/cache; or run the program under `tritonscope capture` to keep every kernel "
                 "it compiles.")
    if not entries:
        if warnings:
            raise InputFileError(f"{p} looks like a Triton cache, but no kernel in it can be read.",
                                 context="\n".join(warnings[:5]),
                                 hint="The cache may be damaged or half-written; delete it and run the program again.")
        raise InputFileError(
            f"{p} is not a Triton cache, kernel dump or capture: no kernel folders in it.",
            hint="Give ~/.triton/cache (or $TRITON_CACHE_DIR), a TRITON_KERNEL_DUMP folder ($TRITON_DUMP_DIR), "
                 "an Inductor cache that holds a triton/ folder ($TMPDIR/torchinductor_$USER), a folder made by "
                 "`tritonscope capture`, "
                 "or a single stage file.")
    kinds = {e.kind for e in entries}
    return Source(p, kinds.pop() if len(kinds) == 1 else "triton-cache", entries, warnings=warnings)


# What an Inductor cache folder holds besides triton/: its FX graph and AOTAutograd caches, and the
# generated modules in two-character folders (ab/cabcdef....py).
_INDUCTOR_DIRS = ("fxgraph", "aotautograd", "aot_autograd", "autotune_local", "cudagraphs")


def _is_inductor_cache(p: Path) -> bool:
    """Whether p is a torch Inductor cache folder (torchinductor_<user>), by its name or what it holds."""
    if p.name.startswith("torchinductor_"):
        return True
    subs = {d.name for d in _subdirs(p)}
    if subs & set(_INDUCTOR_DIRS):
        return True
    return any(len(d) == 2 and any(n.startswith("c") and n.endswith(".py") for n in _names_or_none(p / d))
               for d in subs)


def _names_or_none(p: Path) -> list[str]:
    try:
        return _names(p)
    except InputFileError:
        return []


def _inductor_context(p: Path) -> str | None:
    generated = sum(1 for d in _subdirs(p) if len(d.name) == 2 for n in _names_or_none(d) if n.endswith(".py"))
    return (f"It holds {generated} generated module(s) (the kernels' Python source, not their compiles)."
            if generated else None)


def _names(p: Path) -> list[str]:
    try:
        return [e.name for e in os.scandir(p) if e.is_file()]
    except OSError as e:
        raise InputFileError(f"Cannot read the folder {p}: {e.strerror or e}.") from e


def _subdirs(p: Path) -> list[Path]:
    try:
        return [Path(e.path) for e in os.scandir(p) if e.is_dir()]
    except OSError:
        return []


def _stage_names(names: list[str]) -> list[str]:
    return [n for n in names if n.rsplit(".", 1)[-1] in STAGE_EXTS]


def _entries_in(p: Path) -> tuple[list[KernelEntry], list[str]]:
    """The kernel folders directly under p (a cache or a dump); warnings for unreadable ones."""
    entries, warnings = [], []
    for sub in sorted(_subdirs(p)):
        names = _names(sub)
        if not names:
            continue
        is_cache = any(n.startswith("__grp__") for n in names)
        if not is_cache and not _stage_names(names):
            continue  # not a kernel folder (Triton also keeps module .so files in cache folders)
        try:
            entries.append(_folder_entry(sub, kind="triton-cache" if is_cache else "dump", names=names))
        except InputFileError as e:
            warnings.append(e.message if e.message.startswith(f"{sub.name}:") else f"{sub.name}: {e.message}")
    return entries, warnings


def _folder_entry(folder: Path, *, kind: str, names: list[str] | None = None) -> KernelEntry:
    names = names if names is not None else _names(folder)
    files: dict[str, Path] = {}
    stems: dict[str, int] = {}
    for n in names:
        if n.startswith("__grp__") or n.startswith(".") or ".tmp." in n or n == "record.json":
            continue
        stem, _, ext = n.rpartition(".")
        if ext in STAGE_EXTS or ext in ("json", "source"):
            files[ext] = folder / n
            stems[stem] = stems.get(stem, 0) + 1
    if not files:
        raise InputFileError(f"{folder} holds no Triton stage files or metadata.")
    metadata: dict[str, Any] = {}
    if "json" in files:
        metadata = _read_json(files["json"], what="Triton metadata")
        if not isinstance(metadata, dict) or "name" not in metadata and "target" not in metadata:
            raise InputFileError(f"{files['json']} is not Triton's kernel metadata (no name or target).")
        check_metadata(metadata, files["json"])
        check_emitted(folder, metadata)
    elif kind == "triton-cache":
        raise InputFileError(f"{folder} has no <name>.json metadata: the cache entry is incomplete.")
    if not metadata:  # a dump keeps no metadata: what its stage files record (all from one compile)
        try:
            metadata = _facts_without_metadata(files)
        except MixedCompileError as e:
            raise MixedCompileError(f"{folder.name}: {e.message}", hint=e.hint) from None
    # the kernel's name: the metadata's, else the stage files' common stem
    name = metadata.get("name") or max(stems, key=stems.get)
    entry = KernelEntry(key=folder.name, name=str(name), kind=kind, folder=folder, files=files, metadata=metadata)
    extra = metadata.get("tritonscope")  # what `--emit` adds to the metadata
    if isinstance(extra, dict) and isinstance(extra.get("constexprs"), dict):
        entry.record = {"constexprs": extra["constexprs"]}
    _read_binary_facts(entry)
    return entry


# The metadata fields tritonscope computes with: each a whole number when present (Triton writes ints).
_INT_FIELDS = ("num_warps", "num_stages", "num_ctas", "shared", "maxnreg")


def check_metadata(metadata: dict[str, Any], path: Path) -> None:
    """Refuse metadata whose numbers are not numbers (`"num_warps": "x"`): InputFileError, exit 7.

    Triton writes these as JSON integers; anything else is a damaged or
    hand-edited file, said once here rather than failing later in a figure.
    """
    for name in _INT_FIELDS:
        value = metadata.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value > 1 << 40:
            raise InputFileError(f"{path.name}: the metadata's {name} is {json.dumps(value)[:40]}, not a whole "
                                 "number, so this kernel's figures cannot be read from it.",
                                 hint="The metadata .json is damaged or edited; delete the entry and compile "
                                      "again.")
    if metadata.get("name") is not None and not isinstance(metadata["name"], str):
        raise InputFileError(f"{path.name}: the metadata's name is not text.")


def _facts_without_metadata(files: dict[str, Path]) -> dict[str, Any]:
    """Target, warps and name from the stages themselves, for a source with no metadata JSON.

    Every file that records a fact is read, and they must agree: a dump
    folder is keyed by the kernel's source, so two compiles of one kernel
    (another num_warps, another arch) overwrite some of each other's files,
    and a folder that mixes them is refused with what each file says
    (MixedCompileError), never shown as one kernel.
    """
    per_file = {key: stage_facts(files[key], key) for key in FACT_ORDER if key in files}
    check_one_compile(per_file)
    facts: dict[str, Any] = {}
    for found in per_file.values():  # the most telling first (TTGIR's module attributes)
        for k, v in found.items():
            facts.setdefault(k, v)
    return facts


# The files a kernel's facts are read from, most telling first.
FACT_ORDER = ("ttgir", "amdgcn", "ptx", "llir", "cubin", "hsaco")


def stage_facts(path: Path, key: str) -> dict[str, Any]:
    """Triton-metadata-shaped facts ({'target', 'num_warps', ...}) one stage file records; {} when none."""
    if key == "ttgir":
        return ttgir_facts(path)
    if key == "amdgcn":
        return amdgcn_facts(path)
    if key == "ptx":
        return ptx_facts(path)
    if key == "llir":
        return llir_facts(path)
    if key == "cubin":
        try:
            return cubin_metadata(cubin_facts(path.read_bytes()))
        except OSError:
            return {}
    if key == "hsaco":
        try:
            return hsaco_facts(codeobject.read(path.read_bytes()))
        except (OSError, codeobject.CodeObjectError, ValueError, IndexError):
            return {}
    return {}


def cubin_metadata(facts: dict[str, Any]) -> dict[str, Any]:
    """cubin_facts -> the metadata it records: the target (ELF arch) and num_warps (EIATTR_REQNTID)."""
    out: dict[str, Any] = {}
    if facts.get("arch"):
        out["target"] = {"backend": "cuda", "arch": facts["arch"], "warp_size": 32}
    warps = _threads_to_warps(facts.get("threads") or 0, 32)
    if warps:
        out["num_warps"] = warps
    return out


class MixedCompileError(InputFileError):
    """A kernel folder whose files come from more than one compile (they record different warps or targets)."""


def check_one_compile(per_file: dict[str, dict[str, Any]], metadata: dict[str, Any] | None = None) -> None:
    """Raise MixedCompileError when the files (and the metadata) disagree on num_warps or the target."""
    said: dict[str, dict[str, Any]] = {}
    sources = dict(per_file)
    if metadata:
        sources = {"json": metadata, **sources}
    for key, facts in sources.items():
        if facts.get("num_warps") is not None:
            said.setdefault("num_warps", {})[key] = facts["num_warps"]
        backend, arch = target_of(facts)
        if arch is not None:
            said.setdefault("target", {})[key] = f"{backend}:{arch}"
    mixed = {fact: by for fact, by in said.items() if len(set(map(str, by.values()))) > 1}
    if not mixed:
        return
    words = []
    for fact, by in mixed.items():
        groups: dict[str, list[str]] = {}
        for key, value in by.items():
            groups.setdefault(str(value), []).append(f".{key}")
        words.append(f"{fact}: " + "; ".join(f"{' '.join(keys)} say {value}" for value, keys in groups.items()))
    raise MixedCompileError(
        "its files come from more than one compile (" + ", ".join(words) + "), so no one kernel's figures "
        "can be shown from them.",
        hint="A TRITON_KERNEL_DUMP folder is named by the kernel's source, so compiles with other options "
             "overwrite some of each other's files: dump again into an empty TRITON_DUMP_DIR, or open one stage "
             "file of it.")


def _read_json(path: Path, *, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as e:
        raise InputFileError(f"{path} is not {what}: it is not text.") from e
    except ValueError as e:
        raise InputFileError(f"{path} is not {what}: not valid JSON ({e}).") from e
    except RecursionError as e:  # [[[[...]]]] nested deeper than Python's JSON reader goes
        raise InputFileError(f"{path} is not {what}: its JSON is nested too deep to read.") from e
    except OSError as e:
        raise InputFileError(f"Cannot read {path}: {e.strerror or e}.") from e


def check_size(path: Path) -> None:
    """Refuse a file larger than `show` reads (report.max_report_bytes: 256 MB unless
    TRITONSCOPE_MAX_REPORT_MB says otherwise) before reading it: a stage file is a few MB, and
    reading and parsing a huge one takes minutes and gigabytes."""
    from tritonscope.report import max_report_bytes

    try:
        size = path.stat().st_size
    except OSError:
        return
    limit = max_report_bytes()
    if size > limit:
        raise InputFileError(
            f"{path} is {_megabytes(size)}; stage files larger than {_megabytes(limit)} are not read (a kernel's "
            "stage is a few MB).",
            hint="Check that this is the file you meant; to read it anyway, set TRITONSCOPE_MAX_REPORT_MB "
                 "(the limit `show` uses too) to a larger size.")


def _megabytes(n: int) -> str:
    return f"{n / (1 << 20):,.0f} MB" if n >= 10 << 20 else f"{n / (1 << 20):.2g} MB"


# module attributes {"ttg.num-warps" = 4 : i32, ...}    #blocked = #ttg.blocked<{...}>    (TTGIR, not TTIR)
_MLIR_TTGIR_RE = re.compile(r"\bttg\.|#ttg\.|\btriton_gpu\.|#triton_gpu\.")


def _mlir_stage(p: Path) -> str:
    """'ttgir' or 'ttir': which Triton module an .mlir file holds (a TTGIR's attributes name ttg.)."""
    head = _read_head(p, 1 << 16)
    if not _STAGE_SIGNS["ttir"].search(head):
        raise InputFileError(f"{p} is not a Triton TTIR or TTGIR module (no `module` or `tt.func`).",
                             hint="tritonscope opens .mlir files that hold a Triton module, as "
                                  "MLIR_ENABLE_DUMP or --emit writes them.")
    return "ttgir" if _MLIR_TTGIR_RE.search(head) else "ttir"


def file_entry(p: Path) -> KernelEntry:
    """A single stage file (or metadata JSON) as a kernel entry; its siblings of the same stem join it."""
    ext = p.suffix.lower()
    if ext not in SINGLE_FILE_EXTS:
        raise InputFileError(f"{p.name}: not a stage file tritonscope can open (extension {ext or 'none'!r}).",
                             hint="Open .ttir, .ttgir, .mlir, .llir, .ptx, .cubin, .sass, .amdgcn, .hsaco or a "
                                  "Triton metadata .json, or the folder that holds them.")
    check_size(p)
    key = _mlir_stage(p) if ext == ".mlir" else ext[1:]
    files = {key: p}
    metadata: dict[str, Any] = {}
    if key == "json":
        metadata = _read_json(p, what="Triton metadata")
        if not isinstance(metadata, dict) or not ("name" in metadata or "target" in metadata):
            raise InputFileError(f"{p} is not Triton's kernel metadata (no name or target).",
                                 hint="A saved tritonscope report opens with `tritonscope show FILE.json`.")
        check_metadata(metadata, p)
    if key == "cubin":
        head = p.open("rb").read(4)
        if head != b"\x7fELF":
            raise InputFileError(f"{p} is not a cubin (no ELF header).")
        metadata = stage_facts(p, key)
    elif key == "hsaco":
        metadata = hsaco_facts(_code_object(p))
    elif key != "json":
        _check_text(p, key)
    if key in ("ttgir", "amdgcn", "llir", "ptx"):
        metadata = stage_facts(p, key)
    name = str(metadata.get("name") or _name_in_stage(p, key) or p.stem)
    entry = KernelEntry(key=p.name, name=name, kind="file", folder=None, files=files, metadata=metadata)
    _read_binary_facts(entry)
    return entry


def _code_object(p: Path) -> list[codeobject.KernelResources]:
    """The kernels an .hsaco describes; a damaged or foreign file is an InputFileError (exit 7)."""
    try:
        data = p.read_bytes()
    except OSError as e:
        raise InputFileError(f"Cannot read {p}: {e.strerror or e}.") from e
    try:
        kernels = codeobject.read(data)
    except codeobject.CodeObjectError as e:
        hint = ("Open it as a .cubin." if codeobject.machine_of(data) == codeobject.EM_CUDA else
                "An .hsaco is the AMD code object Triton's HIP backend writes; open the cache or dump folder "
                "that holds it, or its .amdgcn.")
        raise InputFileError(f"{p} is not an AMD code object (hsaco): {e}.", hint=hint) from e
    if not kernels:
        raise InputFileError(f"{p} is an AMD code object that describes no kernel.")
    return kernels


def hsaco_facts(kernels: list[codeobject.KernelResources], name: str | None = None) -> dict[str, Any]:
    """{'target', 'num_warps', 'name'} from a code object's metadata (for a lone .hsaco)."""
    k = codeobject.pick(kernels, name)
    return _amd_facts(k, codeobject.gfx_of(k.target))


def _amd_facts(k: codeobject.KernelResources, gfx: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": k.name} if k.name else {}
    wave = k.wavefront_size or (ARCHES[gfx].warp_size if gfx in ARCHES else None)
    if gfx:
        out["target"] = {"backend": "hip", "arch": gfx, "warp_size": wave or 64}
    # Triton asks for num_warps x wave size work-items per workgroup (amdgpu-flat-work-group-size)
    if wave and k.max_workgroup_size and k.max_workgroup_size % wave == 0:
        out["num_warps"] = k.max_workgroup_size // wave
    return out


def amdgcn_facts(path: Path) -> dict[str, Any]:
    """{'target', 'num_warps', 'name'} from AMDGCN assembly (`.amdgcn_target` and its metadata block)."""
    from tritonscope.dialects import amdgcn

    text = _read_text(path)
    gfx = amdgcn.target_of(text)
    try:
        k = codeobject.pick(codeobject.from_assembly(text))
    except codeobject.CodeObjectError:
        return {"target": {"backend": "hip", "arch": gfx, "warp_size": amdgcn.wave_size(text)}} if gfx else {}
    return _amd_facts(k, gfx or codeobject.gfx_of(k.target))


# --------------------------------------------------------------------------
# What a lone stage file records of its compile
# --------------------------------------------------------------------------
#
# A stage file without its metadata JSON still says some of what the compile
# was: the PTX its target and thread count, the LLVM IR its threads (and an
# AMD target), the cubin its SM and required threads.  Each reader returns
# Triton-metadata-shaped facts ({'target', 'num_warps', 'maxnreg'}); what no
# file records is left out, and load_artifact says the value shown is a guess.

# .target sm_90a         .target sm_80, debug
_PTX_TARGET_RE = re.compile(r"^\s*\.target\s+sm_(\d+)([a-z]?)", re.M)
# .reqntid 128          .reqntid 128, 1, 1      (Triton asks for exactly num_warps x 32 threads)
_PTX_REQNTID_RE = re.compile(r"^\s*\.reqntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", re.M)
# .maxnreg 128
_PTX_MAXNREG_RE = re.compile(r"^\s*\.maxnreg\s+(\d+)", re.M)


def _threads_to_warps(threads: int, warp_size: int) -> int | None:
    return threads // warp_size if threads > 0 and threads % warp_size == 0 else None


def _head_and_tail(path: Path, size: int) -> str:
    """The first and last `size` bytes of a text file (as text): its header and its trailing attributes."""
    try:
        with path.open("rb") as f:
            head = f.read(size)
            f.seek(0, 2)
            end = f.tell()
            tail = b""
            if end > size:
                f.seek(max(size, end - size))
                tail = f.read(size)
    except OSError:
        return ""
    return (head + b"\n" + tail).decode("utf-8", errors="replace")


def _read_head(path: Path, size: int) -> str:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as f:
            return f.read(size)
    except OSError:
        return ""


def ptx_facts(path: Path) -> dict[str, Any]:
    """{'target', 'num_warps', 'maxnreg'} a PTX file records (`.target sm_90a`, `.reqntid 512`, `.maxnreg`)."""
    text = _read_head(path, 1 << 20)
    out: dict[str, Any] = {}
    m = _PTX_TARGET_RE.search(text)
    if m:
        out["target"] = {"backend": "cuda", "arch": int(m.group(1)), "warp_size": 32}
    m = _PTX_REQNTID_RE.search(text)
    if m:
        threads = 1
        for g in m.groups():
            threads *= int(g) if g else 1
        warps = _threads_to_warps(threads, 32)
        if warps:
            out["num_warps"] = warps
    m = _PTX_MAXNREG_RE.search(text)
    if m:
        out["maxnreg"] = int(m.group(1))
    return out


# attributes #0 = { nounwind "nvvm.reqntid"="128" }           (Triton 3.5+)
_LLIR_REQNTID_RE = re.compile(r'"nvvm\.reqntid"="(\d+)(?:,(\d+))?(?:,(\d+))?"')
# !{ptr @k, !"reqntidx", i32 128}                              (older Tritons: nvvm.annotations)
_LLIR_REQNTIDX_RE = re.compile(r'!"reqntidx",\s*i32\s+(\d+)')
# "nvvm.maxnreg"="128"     !"maxnreg", i32 128
_LLIR_MAXNREG_RE = re.compile(r'"nvvm\.maxnreg"="(\d+)"|!"maxnreg",\s*i32\s+(\d+)')
# define ptx_kernel void @k(        target triple = "nvptx64-nvidia-cuda"       @llvm.nvvm.read.ptx.sreg.tid.x
_LLIR_NVIDIA_RE = re.compile(r'^define\s+ptx_kernel\b|^target triple = "nvptx|@llvm\.nvvm\.|"nvvm\.', re.M)
# "target-cpu"="sm_90a"
_LLIR_SM_RE = re.compile(r'"target-cpu"="sm_(\d+)[a-z]?"')
# "amdgpu-flat-work-group-size"="1,256"
_LLIR_AMD_WG_RE = re.compile(r'"amdgpu-flat-work-group-size"="\d+,(\d+)"')


def nvidia_llir_facts(text: str) -> dict[str, Any]:
    """{'target'?, 'num_warps'?, 'maxnreg'?} of NVIDIA LLVM IR: `nvvm.reqntid`; the SM only if a target-cpu names it.

    Triton's NVIDIA LLVM IR names no SM (the target machine is chosen when
    it becomes PTX), so the arch of a lone .llir stays unknown.
    """
    out: dict[str, Any] = {}
    if not _LLIR_NVIDIA_RE.search(text):
        return out
    m = _LLIR_SM_RE.search(text)
    if m:
        out["target"] = {"backend": "cuda", "arch": int(m.group(1)), "warp_size": 32}
    m = _LLIR_REQNTID_RE.search(text)
    threads = None
    if m:
        threads = 1
        for g in m.groups():
            threads *= int(g) if g else 1
    else:
        m = _LLIR_REQNTIDX_RE.search(text)
        threads = int(m.group(1)) if m else None
    warps = _threads_to_warps(threads, 32) if threads else None
    if warps:
        out["num_warps"] = warps
    m = _LLIR_MAXNREG_RE.search(text)
    if m:
        out["maxnreg"] = int(m.group(1) or m.group(2))
    return out


EIATTR_REQNTID = 0x10


def _cubin_arch(data: bytes) -> int | None:
    """The SM a cubin was built for, from its ELF header's e_flags (both CUDA ELF ABI versions).

    ABI 7 (e_ident[EI_ABIVERSION] = 7, CUDA <= 12.x): the SM is e_flags & 0xff
    (0x5a0d5a -> 90); the newer ABI (8, ptxas 12.8+ for some targets) keeps
    it in bits 8-15 (0x9005a04 -> 90).
    """
    if len(data) < 0x34 or data[:4] != b"\x7fELF":
        return None
    flags, = struct.unpack_from("<I", data, 0x30)
    sm = (flags >> 8) & 0xFF if data[8] >= 8 else flags & 0xFF
    return sm if 20 <= sm <= 255 else None


# target triple = "amdgpu9.42-amd-amdhsa"     (3.6: "amdgcn-amd-amdhsa"; the arch then is in "target-cpu")
_LLIR_AMD_RE = re.compile(r'^target triple = "(amdgcn|amdgpu)[^"]*"', re.M)
# "target-cpu"="gfx942"
_LLIR_CPU_RE = re.compile(r'"target-cpu"="(gfx[0-9a-f]+)')
# amdgpu9.42 -> gfx942; amdgpu11.0.0 -> gfx1100 (the triple's subarch is the gfx number with dots)
_LLIR_SUBARCH_RE = re.compile(r'^target triple = "amdgpu([0-9a-f.]+)-', re.M)


def llir_facts(path: Path) -> dict[str, Any]:
    """{'target', 'num_warps'} an LLVM IR file records: AMD's triple and work-group size, NVIDIA's `nvvm.reqntid`."""
    text = _head_and_tail(path, 1 << 16)  # the triple is at the top, the function attributes at the bottom
    if not _LLIR_AMD_RE.search(text):
        return nvidia_llir_facts(text)
    m = _LLIR_CPU_RE.search(text) or _LLIR_SUBARCH_RE.search(text)
    gfx = None
    if m:
        gfx = m.group(1) if m.group(1).startswith("gfx") else "gfx" + m.group(1).replace(".", "")
    wave = ARCHES[gfx].warp_size if gfx in ARCHES else 64
    out: dict[str, Any] = {"target": {"backend": "hip", "arch": gfx, "warp_size": wave}}
    m = _LLIR_AMD_WG_RE.search(text)
    if m and gfx in ARCHES:  # Triton asks for exactly num_warps x wave work-items (the wave is the arch's)
        warps = _threads_to_warps(int(m.group(1)), wave)
        if warps:
            out["num_warps"] = warps
    return out


# Looks for each stage's first distinctive line:
# tt.func public @matmul_kernel(     define ptx_kernel void @k(     .entry k(     Function : k
_STAGE_SIGNS = {
    "ttir": re.compile(r"\btt\.func\b|^module\b", re.M),
    "source": re.compile(r"\btt\.func\b|^module\b", re.M),
    "ttgir": re.compile(r"\btt\.func\b|^module\b", re.M),
    "llir": re.compile(r"^define\b|^target triple|^; ModuleID", re.M),
    "ptx": re.compile(r"^\s*\.(version|target|entry|visible)\b", re.M),
    "sass": re.compile(r"Function\s*:|\.text\.|/\*[0-9a-f]{4}\*/", re.M),
    # 	.amdgcn_target "amdgpu9.42-amd-amdhsa-unknown-gfx942"      .amdhsa_code_object_version 5
    "amdgcn": re.compile(r"^\s*\.(amdgcn_target|amdhsa_code_object_version|amdhsa_kernel)\b", re.M),
}
# tt.func public @matmul_kernel(      define ... @matmul_kernel(      .entry matmul_kernel(     Function : matmul_kernel
# 	.amdhsa_kernel matmul_kernel
_NAME_RES = (
    re.compile(r"tt\.func\s+(?:public\s+)?@([\w$.]+)"),
    re.compile(r"^define\b[^@]*@([\w$.]+)\(", re.M),
    re.compile(r"\.entry\s+([\w$]+)"),
    re.compile(r"Function\s*:\s*([\w$]+)"),
    re.compile(r"^\s*\.amdhsa_kernel\s+([\w$.]+)", re.M),
)


# module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", ...
# module attributes {..., ttg.target = "hip:gfx942", "ttg.threads-per-warp" = 64 : i32}
_TTGIR_ATTR_RE = re.compile(r'"?ttg\.(num-warps|num-ctas|target|threads-per-warp)"?\s*=\s*'
                            r'(?:"(cuda|hip):(\w+)"|(\d+))')


def ttgir_facts(path: Path) -> dict[str, Any]:
    """{'target': {...}, 'num_warps', 'num_ctas'} from a TTGIR's module attributes (for sources without metadata)."""
    try:
        with path.open("r", encoding="utf-8", errors="replace") as f:
            head = f.read(16384)
    except OSError:
        return {}
    out: dict[str, Any] = {}
    wave = None
    for attr, backend, arch, number in _TTGIR_ATTR_RE.findall(head):
        if attr == "target" and backend == "cuda" and arch.isdigit():
            out["target"] = {"backend": "cuda", "arch": int(arch), "warp_size": 32}
        elif attr == "target" and backend == "hip":
            out["target"] = {"backend": "hip", "arch": arch, "warp_size": 64}
        elif attr == "num-warps" and number:
            out.setdefault("num_warps", int(number))
        elif attr == "num-ctas" and number:
            out.setdefault("num_ctas", int(number))
        elif attr == "threads-per-warp" and number:
            wave = int(number)
    if wave and "target" in out:
        out["target"]["warp_size"] = wave
    return out


def _check_text(p: Path, key: str) -> None:
    try:
        head = p.open("r", encoding="utf-8").read(65536)
    except UnicodeDecodeError as e:
        raise InputFileError(f"{p} is not a .{key} file: it is not text.") from e
    except OSError as e:
        raise InputFileError(f"Cannot read {p}: {e.strerror or e}.") from e
    if not _STAGE_SIGNS[key].search(head):
        raise InputFileError(f"{p} does not look like {key.upper()}: none of the lines such a file begins with.",
                             hint="Check the file, or rename it to the extension of the stage it holds.")


def _name_in_stage(p: Path, key: str) -> str | None:
    if key == "cubin":
        return None
    try:
        head = p.read_text(encoding="utf-8", errors="replace")[:200000]
    except OSError:
        return None
    for regex in _NAME_RES:
        m = regex.search(head)
        if m:
            return m.group(1)
    return None


# #loc = loc("/home/u/kernels/matmul.py":8:1)
_FIRST_LOC_RE = re.compile(r'^#loc\d* = loc\("([^"]+)":(\d+):\d+\)', re.M)


def ir_location(path: Path) -> tuple[str, int]:
    """(file, line) the TTIR's first `#loc` names: the kernel's def; ('', 0) when there is none."""
    try:
        with path.open("r", encoding="utf-8", errors="replace") as f:
            head = f.read(4096)
    except OSError:
        return "", 0
    m = _FIRST_LOC_RE.search(head)
    return (m.group(1), int(m.group(2))) if m else ("", 0)


# !4 = distinct !DISubprogram(name: "matmul_kernel", linkageName: "matmul_kernel", scope: !3, file: !3, line: 8, ...
_LLIR_SUBPROGRAM_RE = re.compile(r'^!\d+\s*=\s*(?:distinct\s+)?!DISubprogram\((.*)\)\s*$', re.M)
# !3 = !DIFile(filename: "matmul.py", directory: "/work/main/samples")
_LLIR_DIFILE_RE = re.compile(r'^(!\d+)\s*=\s*(?:distinct\s+)?!DIFile\(filename:\s*"([^"]*)",\s*directory:\s*"([^"]*)"',
                             re.M)


def llir_location(path: Path) -> tuple[str, int]:
    """(file, line) of the kernel's def from LLVM IR debug info (its DISubprogram and DIFile); ('', 0) if none.

    Triton's LLVM IR keeps its line tables (`!dbg` on each instruction, one
    DISubprogram per function) at the end of the file.
    """
    text = _head_and_tail(path, 1 << 18)
    files = {m.group(1): (m.group(2), m.group(3)) for m in _LLIR_DIFILE_RE.finditer(text)}
    for m in _LLIR_SUBPROGRAM_RE.finditer(text):
        body = m.group(1)
        file_ref = re.search(r"\bfile:\s*(!\d+)", body)
        line = re.search(r"\bline:\s*(\d+)", body)
        if file_ref and line and file_ref.group(1) in files:
            name, directory = files[file_ref.group(1)]
            full = name if name.startswith("/") or not directory else f"{directory}/{name}"
            return full, int(line.group(1))
    return "", 0


# 	.file	1 "/work/main/samples" "matmul.py"        (AMDGCN, DWARF 5: directory, then file)
# 	.file	1 "/work/main/samples/matmul.py"          (PTX)
_ASM_FILE_RE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s+"([^"]*)")?', re.M)
# 	.loc	1 8 0 prologue_end                        (file 1, line 8: the first line with a number is the def)
_ASM_LOC_RE = re.compile(r"^\s*\.loc\s+(\d+)\s+([1-9]\d*)\s", re.M)


def asm_location(path: Path) -> tuple[str, int]:
    """(file, line) of the first `.loc` in AMDGCN or PTX (the kernel's def); ('', 0) when there is none."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "", 0
    loc = _ASM_LOC_RE.search(text)
    if not loc:
        return "", 0
    for m in _ASM_FILE_RE.finditer(text):
        if m.group(1) == loc.group(1):
            return (f"{m.group(2)}/{m.group(3)}" if m.group(3) else m.group(2)), int(loc.group(2))
    return "", 0


# --------------------------------------------------------------------------
# The cubin's own facts, without running a tool
# --------------------------------------------------------------------------

EIATTR_REGCOUNT = 0x2F
EIATTR_FRAME_SIZE = 0x11


def cubin_facts(data: bytes) -> dict[str, Any]:
    """{'registers', 'stack', 'static_shared', 'name'} from a cubin's ELF sections (empty when unreadable).

    The CUDA ELF keeps per-kernel attributes in `.nv.info`: EIATTR_REGCOUNT
    (0x2f) and EIATTR_FRAME_SIZE (0x11), each `(format=0x04, attr, u16 size,
    u32 symbol, u32 value)`; static shared memory is the size of
    `.nv.shared.<kernel>`.  cuobjdump -res-usage prints the same numbers.
    """
    out: dict[str, int] = {}
    try:
        if data[:4] != b"\x7fELF" or data[4] != 2:
            return out
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
        str_off = sections[shstrndx][4]

        def name_of(offset: int) -> bytes:
            end = data.index(b"\0", str_off + offset)
            return data[str_off + offset:end]

        for name, typ, _flags, _addr, off, size, *_ in sections:
            sname = name_of(name)
            if sname == b".nv.info":
                for attr, value in _nv_info(data[off:off + size]):
                    if attr == EIATTR_REGCOUNT:
                        out["registers"] = max(out.get("registers", 0), value)
                    elif attr == EIATTR_FRAME_SIZE:
                        out["stack"] = max(out.get("stack", 0), value)
            elif sname.startswith(b".nv.info.") and size >= 4:  # per-kernel attributes: the required threads
                for attr, payload in _nv_info_payloads(data[off:off + size]):
                    if attr == EIATTR_REQNTID and len(payload) >= 4 and len(payload) % 4 == 0:
                        threads = 1
                        for (n,) in struct.iter_unpack("<I", payload[:12]):
                            threads *= n
                        out["threads"] = threads
            elif sname.startswith(b".text.") and "name" not in out:
                out["name"] = sname[len(b".text."):].decode(errors="replace")
            elif sname.startswith(b".nv.shared.") and not sname.startswith(b".nv.shared.reserved"):
                out["static_shared"] = out.get("static_shared", 0) + size
    except (struct.error, IndexError, ValueError):
        return {}
    arch = _cubin_arch(data)
    if arch:
        out["arch"] = arch
    return out


def _nv_info_payloads(blob: bytes):
    """(attr, payload) of each EIFMT_SVAL record (`format=0x04, attr, u16 size, payload`) in an .nv.info section."""
    i = 0
    while i + 2 <= len(blob):
        fmt, attr = blob[i], blob[i + 1]
        if fmt == 0x04:
            size, = struct.unpack_from("<H", blob, i + 2)
            yield attr, blob[i + 4:i + 4 + size]
            i += 4 + size
        elif fmt in (0x02, 0x03):  # EIFMT_BVAL, EIFMT_HVAL: the value in a 4-byte record
            i += 4
        else:
            i += 2


def _nv_info(blob: bytes):
    """(attr, u32 value) of the 8-byte EIFMT_SVAL records (`u32 symbol, u32 value`) of the .nv.info section."""
    for attr, payload in _nv_info_payloads(blob):
        if len(payload) == 8:
            yield attr, struct.unpack_from("<I", payload, 4)[0]


def _read_binary_facts(entry: KernelEntry) -> None:
    """Registers, spills and static shared memory from the binary's own metadata (no tools run).

    A cubin's `.nv.info`; an hsaco's AMDGPU metadata note (else, for a
    source with AMDGCN but no hsaco, the same metadata in the assembly).  A
    binary that does not read leaves them unknown here: opening the kernel
    says why.
    """
    if "cubin" in entry.files:
        try:
            facts = cubin_facts(entry.files["cubin"].read_bytes())
        except OSError:
            return
        entry.registers = facts.get("registers")
        entry.stack = facts.get("stack")
        entry.static_shared = facts.get("static_shared")
        if entry.kind == "file" and not entry.metadata.get("name") and facts.get("name"):
            entry.name = facts["name"]
        return
    kernels = None
    try:
        if "hsaco" in entry.files:
            kernels = codeobject.read(entry.files["hsaco"].read_bytes())
        elif "amdgcn" in entry.files:
            kernels = codeobject.from_assembly(entry.files["amdgcn"].read_text(encoding="utf-8", errors="replace"))
    except (OSError, codeobject.CodeObjectError):
        return
    if not kernels:
        return
    k = codeobject.pick(kernels, entry.name)
    entry.registers, entry.sgprs, entry.agprs = k.vgprs, k.sgprs, k.agprs
    entry.stack, entry.static_shared = k.scratch, k.lds_static


# --------------------------------------------------------------------------
# Captures
# --------------------------------------------------------------------------


def _capture(p: Path) -> Source:
    info = _read_json(p / "capture.json", what="a capture")
    if not isinstance(info, dict) or info.get("format") != CAPTURE_FORMAT:
        raise InputFileError(f"{p / 'capture.json'} is not a tritonscope capture (format is not {CAPTURE_FORMAT!r}).")
    entries: list[KernelEntry] = []
    warnings: list[str] = []
    kernels = p / "kernels"
    for sub in sorted(_subdirs(kernels)) if kernels.is_dir() else []:
        record_path = sub / "record.json"
        if not record_path.is_file():
            warnings.append(f"{sub.name}: no record.json (the program stopped while writing it)")
            continue
        try:
            record = _read_json(record_path, what="a capture record")
            _check_record(record, record_path)
            entry = _folder_entry(sub, kind="capture")
        except InputFileError as e:
            warnings.append(f"{sub.name}: {e.message}")
            continue
        entry.record = record
        entry.name = record.get("name") or entry.name
        entries.append(entry)
    by_hash = {e.key: e for e in entries}
    for part in sorted(p.glob("launches-*.json")):
        try:
            launches = _read_json(part, what="capture launches")
        except InputFileError as e:
            warnings.append(f"{part.name}: {e.message}")
            continue
        kernels_seen = launches.get("kernels") if isinstance(launches, dict) else None
        if not isinstance(kernels_seen, dict):
            warnings.append(f"{part.name}: not a capture's launch counts (no 'kernels' object)")
            continue
        for key, item in kernels_seen.items():
            count = item.get("count") if isinstance(item, dict) else None
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                warnings.append(f"{part.name}: the launch count of {str(key)[:20]} is not a whole number")
                continue
            entry = by_hash.get(key)
            if entry is None and key.startswith("name:"):  # launched before its load was seen: by name if unique
                same = [e for e in entries if e.name == key[5:]]
                entry = same[0] if len(same) == 1 else None
            if entry is None:
                continue
            entry.launches = (entry.launches or 0) + count
            for field_name in ("grids", "args"):
                if isinstance(item.get(field_name), list) and field_name not in entry.launch_info:
                    entry.launch_info[field_name] = item[field_name]
    autotune = []
    for part in sorted(p.glob("autotune-*.json")):
        try:
            tunings = _read_json(part, what="capture autotuning")
        except InputFileError:
            tunings = None
        tunings = tunings.get("tunings") if isinstance(tunings, dict) else None
        if not isinstance(tunings, list) or not all(isinstance(t, dict) for t in tunings):
            warnings.append(f"{part.name}: unreadable (not a capture's autotuning runs)")
            continue
        autotune += tunings
    if autotune:
        info = {**info, "autotune": autotune}
    for entry in entries:
        if entry.launches is None:
            entry.launches = 0
    return Source(p, "capture", entries, info=info, warnings=warnings)


# What each field of a capture record must be when present (capture.py writes them so).
_RECORD_TYPES = {"name": str, "qualname": str, "source": str, "file": str, "line": int, "module_text": str,
                 "signature": dict, "constexprs": dict, "attrs": dict, "options": dict, "env": dict,
                 "codegen": dict, "constants": list, "attrs_raw": list, "triton_version": str}


def _check_record(record: Any, path: Path) -> None:
    """Refuse a capture record that is not what capture.py writes (a damaged or edited file): exit 7."""
    if not isinstance(record, dict):
        raise InputFileError(f"{path.name} is not a capture record (not a JSON object).")
    for name, kind in _RECORD_TYPES.items():
        value = record.get(name)
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
            raise InputFileError(f"{path.name}: its {name} is not {kind.__name__}, as a capture writes it.")
    options = record.get("options") or {}
    for name in ("num_warps", "num_stages"):
        value = options.get(name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise InputFileError(f"{path.name}: its options' {name} is not a whole number.")


# --------------------------------------------------------------------------
# Choosing, filtering, sorting
# --------------------------------------------------------------------------

SORT_FIELDS = ("name", "arch", "config", "registers", "sgprs", "shared", "spills", "launches", "source", "key",
               "backend")


def find_entry(source: Source, wanted: str | None) -> KernelEntry:
    """The entry named by a kernel name or a (prefix of a) hash; the only one when `wanted` is None."""
    entries = source.entries
    if wanted is None:
        if len(entries) == 1:
            return entries[0]
        raise UsageError(f"{source.path} holds {len(entries)} kernels; name one with --kernel NAME or HASH.",
                         hint="Run `tritonscope open " + str(source.path) + "` to list them.")
    by_key = [e for e in entries if e.key.lower().startswith(wanted.lower()) or
              str(e.metadata.get("hash", "")).startswith(wanted.lower())]
    by_name = [e for e in entries if e.name == wanted]
    found = by_key or by_name
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        keys = ", ".join(e.short_key for e in found[:8])
        raise UsageError(f"{len(found)} kernels match {wanted!r} ({keys}).",
                         hint="Name one by its hash (the first column of the listing).")
    raise NotFoundError(f"No kernel {wanted!r} in {source.path}."
                        f"{close_matches(wanted, sorted({e.name for e in entries}))}",
                        hint="Run `tritonscope open " + str(source.path) + "` to list its kernels.")


# name=matmul*   registers>100   arch=sm_90a   spills>0   source~layernorm
_WHERE_RE = re.compile(r"^\s*(\w+)\s*(>=|<=|!=|=|>|<|~)\s*(.*?)\s*$")


def filter_rows(rows: list[dict[str, Any]], where: list[str] | None) -> list[dict[str, Any]]:
    """Keep the rows matching every FIELD OP VALUE (=, !=, <, >, <=, >=; ~ for 'contains'; * globs)."""
    import fnmatch

    for cond in where or []:
        m = _WHERE_RE.match(cond)
        if not m or m.group(1) not in SORT_FIELDS:
            raise UsageError(f"Bad --where {cond!r}.",
                             hint=f"Write FIELD OP VALUE with FIELD one of {', '.join(SORT_FIELDS)} and OP one of "
                                  "= != < > <= >= ~ (contains), e.g. --where 'registers>128' --where name=triton_*")
        name, op, value = m.groups()

        def keep(row, name=name, op=op, value=value) -> bool:
            have = row.get(name)
            if op == "~":
                return value.lower() in str(have or "").lower()
            if op in ("=", "!="):
                same = fnmatch.fnmatchcase(str(have), value) if have is not None else value.lower() in ("none", "?")
                return same if op == "=" else not same
            try:
                number = float(value)
            except ValueError:
                raise UsageError(f"--where {cond!r}: {op} needs a number.") from None
            if have is None:
                return False
            return {"<": have < number, ">": have > number, "<=": have <= number, ">=": have >= number}[op]

        rows = [r for r in rows if keep(r)]
    return rows


def sort_rows(rows: list[dict[str, Any]], by: str | None) -> list[dict[str, Any]]:
    if not by:
        return rows
    descending = by.startswith("-")
    key = by.lstrip("-+")
    if key not in SORT_FIELDS:
        raise UsageError(f"Unknown sort field {key!r}.{close_matches(key, SORT_FIELDS)}",
                         hint=f"Sort by one of: {', '.join(SORT_FIELDS)} (prefix - for descending).")
    present = [r for r in rows if r.get(key) is not None]
    absent = [r for r in rows if r.get(key) is None]
    return sorted(present, key=lambda r: r[key], reverse=descending) + absent


# --------------------------------------------------------------------------
# Opening one kernel: the stages, read now
# --------------------------------------------------------------------------


def load_artifact(entry: KernelEntry, *, target: str = "") -> Artifact:
    """Read every stage the entry has into an Artifact; what it lacks goes into `warnings`.

    The stages are those of the entry's backend, in the dialect registry's
    order.  CUDA: SASS comes from a `.sass` file when there is one, else from
    the cubin through nvdisasm (compile.py's helper), as do the resources.
    HIP: the resources come from the hsaco's code-object metadata (else from
    the same metadata in the AMDGCN); an hsaco alone shows its summary only
    (tritonscope does not disassemble it).
    """
    import importlib

    compile_mod = importlib.import_module("tritonscope.compile")  # the package exports a compile() function

    warnings: list[str] = []
    stages: dict[str, str] = {}
    python, first = _python_stage(entry, warnings)
    if python is not None:
        stages["python"] = python
    backend = entry.backend
    for path in entry.files.values():  # every file bounded before any is read
        check_size(path)
    for d in dialect_stages(backend):  # pipeline order: ttir ttgir llir ptx sass / ttir ttgir llir amdgcn
        if d.key != SOURCE and d.key in entry.files:
            stages[d.key] = _read_text(entry.files[d.key])
    binary = binary_ext(backend)
    blob = _read_binary(entry, binary)
    metadata = {k: entry.metadata[k] for k in sorted(entry.metadata) if k != "hash"}
    if entry.record and entry.record.get("options"):
        metadata = {**entry.record["options"], **metadata}
    if backend == "hip":
        resources = _amd_resources(entry, blob, metadata, warnings, compile_mod)
    else:
        resources_text = None
        if blob is not None:
            sass, resources_text = compile_mod.sass_and_resources(blob, warnings)
            if sass is not None and "sass" not in stages:
                stages["sass"] = sass
        resources = compile_mod.cuda_resources(resources_text, metadata)
        if resources.registers is None and entry.registers is not None:  # no cuobjdump: the ELF's own numbers
            resources = replace(resources, registers=entry.registers, stack=entry.stack,
                                static_shared=entry.static_shared)
    expected = expected_files(backend)
    lacking = [k for k in expected if k not in stages and not (k == binary and blob is not None)]
    if lacking:
        binary_only = entry.kind != "file" and entry.files.keys() <= {binary, "json", "source"}
        warnings.append(f"This {_kind_words(entry)} has no {', '.join(lacking)}: "
                        + ("only the binary was kept (TRITON_STORE_BINARY_ONLY)." if binary_only
                           else "those stages are not shown.")
                        + ("" if blob is not None else " " + _WITHOUT_BINARY[binary](stages)))
    if not stages and (blob is None or backend != "hip"):
        raise InputFileError(f"{entry.key} has no stage tritonscope can show (no IR, no PTX or AMDGCN, and no SASS "
                             "from a cubin).", context="\n".join(warnings) or None)
    if not stages:  # an hsaco alone: its summary is what there is
        warnings.append("An hsaco alone: tritonscope reads its metadata (registers and scratch: the summary) "
                        "but does not disassemble it, so there is no stage to show; open the folder that holds "
                        "its .amdgcn and IR for those.")
    warnings += _environment_notes(entry)
    spec, specialization = _spec_of(entry, target or str(entry.folder or entry.files[next(iter(entry.files))]))
    if "shared" not in entry.metadata:
        memory = "LDS" if backend == "hip" else "shared memory"
        warnings.append(f"The {memory} Triton allocates at launch is recorded only in its metadata .json, which "
                        f"this {_kind_words(entry)} lacks: the {memory} shown (0 bytes) is not the kernel's.")
    if recorded_option(entry, "num_stages") is None:
        warnings.append(f"This {_kind_words(entry)} does not record num_stages: the config shows Triton's "
                        f"default for {spec.arch} ({spec.num_stages}), a guess the kernel may not have used.")
    if recorded_option(entry, "num_warps") is None:
        warnings.append(f"This {_kind_words(entry)} does not record num_warps (no metadata, and no thread count "
                        f"in its files): the config shows Triton's default ({spec.num_warps}), a guess.")
    if spec.arch == "?":
        warnings.append(f"This {_kind_words(entry)} does not record its target (Triton's NVIDIA LLVM IR names no "
                        "SM): the target is unknown, so nothing here is judged against an arch.")
    return Artifact(
        spec=spec,
        triton_version=str(entry.metadata.get("triton_version") or (entry.record or {}).get("triton_version") or "?"),
        kernel_hash=str(entry.metadata.get("hash") or entry.key),
        stages=stages,
        python_first_line=first,
        metadata=metadata,
        resources=resources,
        specialization=specialization,
        warnings=warnings,
        env=recorded_environment(entry)["vars"],
    )


# What a kernel without its binary cannot show, per binary (the stages it does have decide the AMD wording).
_WITHOUT_BINARY = {
    "cubin": lambda stages: "Without a cubin there is no SASS and no register count.",
    "hsaco": lambda stages: ("Without the hsaco, registers and scratch come from the AMDGCN's metadata block."
                             if "amdgcn" in stages else
                             "Without the hsaco or the AMDGCN there is no register count."),
}


def _read_binary(entry: KernelEntry, ext: str | None) -> bytes | None:
    path = entry.files.get(ext) if ext else None
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError as e:
        raise InputFileError(f"Cannot read {path}: {e.strerror or e}.") from e


def _amd_resources(entry: KernelEntry, blob: bytes | None, metadata: dict[str, Any], warnings: list[str],
                   compile_mod) -> Any:
    """Registers, LDS and scratch of an AMD kernel: the hsaco's metadata note, else the AMDGCN's metadata block."""
    from types import SimpleNamespace

    from tritonscope.model import Resources

    if blob is not None:  # compile.py's reader, as a compile uses it (warns when the code object does not read)
        return compile_mod.hip_resources(SimpleNamespace(asm={"hsaco": blob}, metadata=metadata), warnings)
    dynamic = int(metadata.get("shared") or 0)
    if "amdgcn" not in entry.files:
        return Resources(dynamic_shared=dynamic)
    try:
        k = codeobject.pick(codeobject.from_assembly(_read_text(entry.files["amdgcn"])), metadata.get("name"))
    except codeobject.CodeObjectError as e:
        warnings.append(f"Registers are unknown: {e}.")
        return Resources(dynamic_shared=dynamic)
    return Resources(registers=k.vgprs, agprs=k.agprs, sgprs=k.sgprs, stack=k.scratch, static_shared=k.lds_static,
                     dynamic_shared=dynamic, vgpr_spills=k.vgpr_spills, sgpr_spills=k.sgpr_spills)


def _kind_words(entry: KernelEntry) -> str:
    return {"triton-cache": "cache entry", "dump": "kernel dump", "capture": "captured kernel",
            "file": "stage file"}.get(entry.kind, "kernel")


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise InputFileError(f"Cannot read {path}: {e.strerror or e}.") from e


def _python_stage(entry: KernelEntry, warnings: list[str]) -> tuple[str | None, int]:
    """The kernel's Python source and the file line it starts on: captured, else read from the IR's #loc."""
    record = entry.record or {}
    if record.get("source"):
        return record["source"], int(record.get("line") or 1)
    file, line = entry._ir_location()
    if not file:
        if not set(entry.files) & set(TEXT_STAGES + ("source",)):
            warnings.append(f"No Python source: this {_kind_words(entry)} holds only a binary, which does not "
                            "name it.")
        else:
            warnings.append("No Python source: the IR names no source file (compiled without line info).")
        return None, 1
    if not os.path.isfile(file):
        warnings.append(f"No Python source: {file} (named by the IR's locations) is not on this machine.")
        return None, 1
    try:
        lines = Path(file).read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    except OSError:
        warnings.append(f"No Python source: {file} cannot be read.")
        return None, 1
    return "".join(function_block(lines, line)), line


def function_block(lines: list[str], line: int) -> list[str]:
    """The `def` starting at 1-based `line` and its indented body (a kernel's source)."""
    start = max(line - 1, 0)
    if start >= len(lines):
        return []
    indent = len(lines[start]) - len(lines[start].lstrip())
    out = [lines[start]]
    in_signature = True
    for text in lines[start + 1:]:
        stripped = text.strip()
        body_indent = len(text) - len(text.lstrip())
        if in_signature:
            out.append(text)
            if stripped.endswith(":") and not stripped.startswith("#"):
                in_signature = False
            continue
        if stripped and body_indent <= indent and not stripped.startswith("#"):
            break
        out.append(text)
    while out and not out[-1].strip():
        out.pop()
    return out


# tt.func public @k(%x_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32} loc(...), %n: i32 loc(...))
_FUNC_RE = re.compile(r"tt\.func\s+(?:public\s+)?@[\w$.]+\((.*?)\)\s*(?:attributes|\{|->)", re.S)
# %x_ptr: !tt.ptr<f16> {tt.divisibility = 16 : i32}
_ARG_RE = re.compile(r"%([\w$.]+)\s*:\s*(!tt\.ptr<\s*([\w]+)[^>]*>|[\w]+)\s*(\{[^}]*\})?")
_MLIR_TO_TRITON = {"f16": "fp16", "bf16": "bf16", "f32": "fp32", "f64": "fp64", "i1": "i1", "i8": "i8",
                   "i16": "i16", "i32": "i32", "i64": "i64", "f8E4M3FN": "fp8e4nv", "f8E5M2": "fp8e5"}


def signature_from_ttir(text: str) -> list[tuple[str, str, list[str]]]:
    """[(name, '*fp16' | 'i32', ['tt.divisibility=16'])] from a TTIR tt.func's arguments."""
    m = _FUNC_RE.search(text)
    if not m:
        return []
    out = []
    for arg in _ARG_RE.finditer(m.group(1)):
        name, ty, pointee, attrs = arg.groups()
        ty_name = f"*{_MLIR_TO_TRITON.get(pointee, pointee)}" if pointee else _MLIR_TO_TRITON.get(ty, ty)
        found = [f"{a}={v}" for a, v in re.findall(r"(tt\.\w+)\s*=\s*(\d+)", attrs or "")]
        out.append((name, ty_name, found))
    return out


def recorded_option(entry: KernelEntry, name: str) -> Any:
    """num_warps / num_stages as the entry's metadata, capture record or stage files record it; None if none does."""
    value = entry.metadata.get(name)
    if value is None:
        value = ((entry.record or {}).get("options") or {}).get(name)
    return value


# Triton's default num_stages per backend (CUDAOptions / HIPOptions): what the config shows when a source
# does not record it (a stage file, a dump), said in a warning.
DEFAULT_NUM_STAGES = {"cuda": 3, "hip": 2}


def _spec_of(entry: KernelEntry, target: str) -> tuple[KernelSpec, list[ArgSpecialization]]:
    record = entry.record or {}
    meta = entry.metadata
    arch = entry.arch  # "?" when the source does not say
    file = record.get("file") or entry._ir_location()[0]
    specialization: list[ArgSpecialization] = []
    args: dict[str, Any] = {}
    if record.get("signature"):
        constexprs = record.get("constexprs") or {}
        for name, ty in record["signature"].items():
            attrs = tuple(record.get("attrs", {}).get(name, []))
            if ty == "constexpr":
                specialization.append(ArgSpecialization(name, "constexpr", (), constexprs.get(name)))
            else:
                specialization.append(ArgSpecialization(name, ty, attrs))
                args[name] = ty
    else:
        ir_path = entry.files.get("source") or entry.files.get("ttir")
        for name, ty, attrs in signature_from_ttir(_read_text(ir_path)) if ir_path else []:
            specialization.append(ArgSpecialization(name, ty, tuple(attrs)))
            args[name] = ty
    options = {k: meta[k] for k in ("maxnreg", "num_ctas", "enable_fp_fusion") if meta.get(k) not in (None,)}
    spec = KernelSpec(
        target=target, kernel=entry.name, file=str(file or ""), args=args,
        constexprs=dict(record.get("constexprs") or {}),
        num_warps=int(meta.get("num_warps") or record.get("options", {}).get("num_warps") or 4),
        num_stages=int(meta.get("num_stages") or record.get("options", {}).get("num_stages")
                       or DEFAULT_NUM_STAGES.get(entry.backend, 3)),
        arch=arch, grid=tuple((entry.launch_info.get("grids") or [None])[0] or ()) or None,
        options={k: v for k, v in options.items() if not (k == "num_ctas" and v == 1)},
    )
    return spec, specialization


# --------------------------------------------------------------------------
# --emit: every stage as a plain file
# --------------------------------------------------------------------------


def check_emit_dir(folder: str | Path) -> Path:
    """Fail before any work when --emit DIR cannot be a folder we write into."""
    from tritonscope.errors import OutputError

    out_dir = Path(folder)
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputError(f"Cannot emit into {out_dir}: it is a file.", hint="Give a folder (it is created).")
    parent = out_dir if out_dir.exists() else out_dir.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"Cannot emit into {out_dir}: no permission to write in {parent}.")
    return out_dir


def emit_files(artifact: Artifact, folder: str | Path, *, binaries: dict[str, bytes] | None = None,
               cubin: bytes | None = None, force: bool = False, stem: str | None = None) -> list[Path]:
    """Write each stage as `<kernel>.<ext>` (+ the binary, + .json metadata) into `folder`, as Triton's dump does.

    `binaries`: {'cubin': bytes} or {'hsaco': bytes} (`cubin=` is the same
    as {'cubin': ...}).  Stages are written as the compiler wrote them: no
    display filter applies.  Every file goes through the one writer
    (output.write_atomic).
    """
    from tritonscope.dialects import dialect
    from tritonscope.output import write_atomic

    out_dir = check_emit_dir(folder)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        from tritonscope.errors import OutputError

        raise OutputError(f"Cannot create {out_dir}: {e.strerror or e}.") from e
    stem = stem or artifact.spec.kernel
    contents: dict[str, bytes] = {}
    for key, text in artifact.stages.items():
        # Triton's own names (kernel.llir, not .ll), so `open` reads an emitted folder back
        ext = key if key in TEXT_STAGES else dialect(key).ext
        contents[f"{stem}.{ext}"] = text.encode("utf-8")
    for ext, blob in {**({"cubin": cubin} if cubin else {}), **(binaries or {})}.items():
        if blob:
            contents[f"{stem}.{ext}"] = bytes(blob)
    # The metadata goes first and lists every file with its size: a folder that lost some of them
    # (a full disk, an interrupted copy) is then told from a whole one by `open` (check_emitted).
    meta = {**artifact.metadata, "hash": artifact.kernel_hash, "name": artifact.spec.kernel,
            "tritonscope": {"target": artifact.spec.target, "constexprs": artifact.spec.constexprs,
                            "args": {k: str(v) for k, v in artifact.spec.args.items()},
                            "specialization": [[s.name, s.type, list(s.attrs)] for s in artifact.specialization],
                            "warnings": list(artifact.warnings),
                            "files": {name: len(data) for name, data in contents.items()}}}
    written = [write_atomic(out_dir / f"{stem}.json", json.dumps(meta, indent=1, default=str) + "\n", force=force)]
    for name, data in contents.items():
        written.append(write_atomic(out_dir / name, data, force=force))
    return written


def check_emitted(folder: Path, metadata: dict[str, Any]) -> None:
    """Refuse an `--emit` folder that lacks files its metadata lists (or holds them at another size)."""
    extra = metadata.get("tritonscope")
    listed = extra.get("files") if isinstance(extra, dict) else None
    if not isinstance(listed, dict):
        return  # not written by --emit, or by a tritonscope before the list
    lacking, changed = [], []
    for name, size in listed.items():
        if not isinstance(name, str) or "/" in name or "\\" in name or name in ("", ".", ".."):
            raise InputFileError(f"{folder.name}: its metadata lists a file named {name!r}, which --emit never "
                                 "writes.")
        try:
            have = (folder / name).stat().st_size
        except OSError:
            lacking.append(name)
            continue
        if isinstance(size, int) and have != size:
            changed.append(name)
    if lacking or changed:
        parts = ([f"lacks {len(lacking)} of its {len(listed)} files ({', '.join(sorted(lacking))})"] if lacking
                 else []) + ([f"holds {', '.join(sorted(changed))} at another size than written"] if changed else [])
        raise InputFileError(f"{folder.name} was written by --emit but " + " and ".join(parts)
                             + ": it is not the whole kernel, so it is not opened as one.",
                             hint="The disk may have filled or a copy stopped: emit it again, or open one of its "
                                  "stage files on its own.")


def cubin_of(entry: KernelEntry) -> bytes | None:
    return binaries_of(entry).get("cubin")


def binaries_of(entry: KernelEntry) -> dict[str, bytes]:
    """{'cubin': bytes} / {'hsaco': bytes}: the binary files the entry has (for --emit)."""
    out = {}
    for ext in BINARIES:
        path = entry.files.get(ext)
        try:
            if path:
                out[ext] = path.read_bytes()
        except OSError:
            continue
    return out


def binaries_of_artifact(artifact: Artifact) -> dict[str, bytes]:
    """The binary of a compile (`compile --emit`): Triton's cache keeps it next to the stages; {} if gone.

    The Artifact holds no binary; a recompile keeps its own (`_binaries`).
    """
    kept = getattr(artifact, "_binaries", None)
    if kept:
        return dict(kept)
    from tritonscope import triton_api

    arch = ARCHES.get(artifact.spec.arch)
    ext = binary_ext(arch.backend if arch else "cuda")
    blob = triton_api.cached_stage_file(artifact.kernel_hash, artifact.spec.kernel, ext) if ext else None
    return {ext: blob} if blob else {}


# --------------------------------------------------------------------------
# Recompiling what was found, for another target
# --------------------------------------------------------------------------


def recompile(entry: KernelEntry, original: Artifact, *, arch: str | None = None, num_warps: int | None = None,
              num_stages: int | None = None, constexprs: dict[str, Any] | None = None,
              options: dict[str, Any] | None = None) -> Artifact:
    """The entry's kernel compiled again, with its exact specialization, for another target/config.

    A captured kernel recompiles from its Python function, through Triton's
    ASTSource with the captured signature, constexprs and attributes (the
    path a launch takes), importing the kernel's module in a child process:
    only the front end run again reproduces the original TTIR, because
    Triton's parser drops the names of a loop's induction variable and
    loop-carried values when it reads IR text back.  Where there is no
    Python function (a cache or dump records no constexprs), or it does not
    import or compile here, it recompiles from the TTIR `make_ir` gave
    (`.source`; else the optimised `.ttir`), which carries the launch's
    specialization (divisibility, constexprs folded in), and a warning says
    why and what that renames.

    The compile's code-generation environment is replayed
    (recorded_environment: the capture's record, and the cache-invalidating
    variables Triton wrote into the metadata).  When it differs from this
    process's, the compile runs in a child process with that environment
    (Triton caches the ptxas version and the LLVM features per process, so
    switching a variable here would not be enough, and would leak); a
    recorded tool that is not on this machine is replaced by Triton's
    bundled one, and a warning says so.
    """
    import time

    import importlib

    compile_mod = importlib.import_module("tritonscope.compile")  # the package exports a compile() function
    from tritonscope import triton_api
    from tritonscope.child import ChildDiedError
    from tritonscope.errors import CompileError, TritonscopeError
    from tritonscope.kernels import canonical_arch

    arch_name = canonical_arch(arch) if arch else original.spec.arch
    if arch_name not in ARCHES:
        raise UsageError(f"The original target {arch_name!r} is unknown; name one with --arch.")
    target_arch = ARCHES[arch_name]
    capability = target_arch.capability          # None for an AMD target: it is named by `where`
    where = compile_mod.arch_target(target_arch)     # {"capability": 90} or {"target": ("hip", "gfx942", 64)}
    backend = target_arch.backend
    if backend == "hip" and not triton_api.has_backend("amd"):
        raise CompileError(f"Triton {triton_api.triton_version()} has no HIP backend, so it cannot recompile for "
                           f"{arch_name}.", hint="Install a Triton wheel that includes triton/backends/amd.")
    warps = num_warps or original.spec.num_warps
    stages_n = num_stages if num_stages is not None else (original.spec.num_stages or 3)
    guessed = []  # what the recompile had to take from Triton's defaults: said, never silent
    for option, given, used in (("num_warps", num_warps, warps), ("num_stages", num_stages, stages_n)):
        if given is None and recorded_option(entry, option) is None:
            guessed.append(f"{option}={used}")
    extra = {k: v for k, v in (original.spec.options or {}).items() if k in ("maxnreg", "num_ctas", "enable_fp_fusion")}
    extra.update(options or {})
    notes: list[str] = []
    if backend == "hip" and "maxnreg" in extra:  # the HIP backend has no such option (a launch with it fails)
        notes.append(f"maxnreg={extra.pop('maxnreg')} is a CUDA launch option; the recompile for {arch_name} "
                     "leaves it out.")
    was = ARCHES.get(original.spec.arch)
    if was is not None and was.backend != backend:
        notes.append(_cross_vendor_note(was.backend, arch_name))
    started = time.perf_counter()
    record = entry.record or {}
    recorded = recorded_environment(entry)
    env, missing, names = triton_api.replay_environment(recorded["vars"], complete=recorded["complete"],
                                                         cache_vars_known=recorded["cache_vars_known"])
    # The original's ptxas (the recorded file, else one of its version here) for a recompile for its own arch:
    # the PTX `.version` line follows the ptxas, and this Triton may read another knob for this arch.
    recorded_ptxas = recorded["tools"].get("ptxas") or {}
    ptxas_used = None
    was_capability = getattr(ARCHES.get(original.spec.arch), "capability", None)
    if backend == "cuda" and capability and capability == was_capability and recorded_ptxas.get("version"):
        ptxas_used = triton_api.use_original_ptxas(recorded_ptxas, capability, env)
        if ptxas_used is not None:
            missing = {k: v for k, v in missing.items() if k != recorded_ptxas.get("knob")
                       and k not in ptxas_used["knobs"].split(", ")}
            names = set(names) | set(ptxas_used["knobs"].split(", "))
            if any(env.get(k) == ptxas_used["path"] for k in ptxas_used["knobs"].split(", ")):
                notes.append(_ptxas_note(recorded_ptxas, ptxas_used, arch_name))  # not Triton's own choice
    env_differs = any(env.get(k) != os.environ.get(k) for k in names)
    ir_path = entry.files.get("source") or entry.files.get("ttir")
    ast_ok = record.get("constants") is not None and record.get("module_text") is not None
    payload: dict[str, Any] = {"capability": capability, "target": list(where.get("target") or []) or None,
                               "num_warps": warps, "num_stages": stages_n,
                               "options": extra, "kernel": entry.name, "file": original.spec.file}
    ttir_payload = None
    if not constexprs and ir_path is not None:
        ttir_payload = {**payload, "how": "ttir", "ttir": _read_text(ir_path)}
    if ast_ok:
        # The Python function first: Triton's parser renames a loop's induction variable and iter_args, so
        # only the front end run again gives the original text.  It imports the kernel's module (runs its
        # top level, which may import torch), so it runs in a child process.
        payload.update(how="ast", record=record, constexprs=dict(constexprs or {}))
        how = "from its captured Python function (imported in a child process)"
    else:
        if constexprs:
            raise UsageError("This kernel's constexprs are folded into its IR: -c cannot change them.",
                             hint="Capture the program with `tritonscope capture` to recompile with other "
                                  "constexprs, or compile the kernel's file directly.")
        if ttir_payload is None:
            raise InputFileError(f"{entry.name} cannot be recompiled: this {_kind_words(entry)} has no TTIR "
                                 "(a binary-only cache keeps just the cubin).",
                                 hint="Run the program again without TRITON_STORE_BINARY_ONLY, or capture it.")
        payload = ttir_payload
        how = "from its " + ("pre-pass TTIR (.source)" if "source" in entry.files else "TTIR")
        if _has_loop_values(ttir_payload["ttir"]):
            notes.append(_renamed_note(f"this {_kind_words(entry)} records no Python function to compile "
                                       "(only a capture keeps the constexprs and the module)"))
    in_child = env_differs or payload["how"] == "ast"
    try:
        try:
            compiled, used_tools = _compile_payload(payload, env, in_child, entry.name)
        except (InputFileError, CompileError, ChildDiedError) as e:
            if payload["how"] != "ast" or ttir_payload is None:
                raise
            # the captured module does not import or compile here: the IR still can (said, with why)
            why = e.message.rstrip(".")
            payload, how, in_child = ttir_payload, "from its " + ("pre-pass TTIR (.source)" if "source" in
                                                                 entry.files else "TTIR"), env_differs
            notes.insert(0, f"The captured Python function could not be compiled here ({why}), so the recompile "
                            "used its IR instead."
                         + (" " + _renamed_note("") if _has_loop_values(ttir_payload["ttir"]) else ""))
            compiled, used_tools = _compile_payload(payload, env, in_child, entry.name)
    except (UsageError, InputFileError):
        raise
    except KeyboardInterrupt:
        raise
    except TritonscopeError as e:  # a typed error from the child
        if isinstance(e, CompileError):
            e.message = f"Recompiling {entry.name} for {arch_name} failed: " + e.message
        raise
    except Exception as e:
        err = compile_mod.compile_error(e, original.spec)
        if isinstance(err, CompileError):
            err.message = f"Recompiling {entry.name} for {arch_name} failed: " + err.message
        raise err from e
    replayed = {k: env[k] for k in sorted(names) if k in env}
    setting = ""
    if env_differs:
        shown = ", ".join(f"{k}={v}" for k, v in replayed.items()) or "none set"
        setting = f", in a process with the compile's recorded environment ({shown})"
    warnings = [f"Recompiled {how} for {arch_name} (w{warps} s{stages_n}){setting}.", *notes]
    if guessed:
        warnings.insert(1, f"{' and '.join(guessed)} {'is a guess' if len(guessed) == 1 else 'are guesses'}: "
                           f"this {_kind_words(entry)} does not record "
                           f"{' or '.join(g.split('=')[0] for g in guessed)}, so the recompile used Triton's "
                           "default, which the original kernel may not have used (name it with "
                           + " / ".join(f"--{g.split('=')[0].replace('_', '-')}" for g in guessed) + ").")
    warnings += _replay_warnings(recorded, missing, used_tools, original.stages.get("ptx", ""),
                                 compiled.asm.get("ptx") or "", capability,
                                 searched=backend == "cuda" and capability == was_capability)
    stages: dict[str, str] = {}
    if "python" in original.stages:
        stages["python"] = original.stages["python"]
    for d in dialect_stages(backend):  # the texts Triton gives for this backend's stages, in pipeline order
        if d.key != SOURCE and isinstance(compiled.asm.get(d.key), str):
            stages[d.key] = compiled.asm[d.key]
    if backend == "hip":
        resources = compile_mod.hip_resources(compiled, warnings)
    else:
        sass, res = compile_mod.sass_and_resources(compiled.asm.get("cubin"), warnings)
        if sass is not None:
            stages["sass"] = sass
        resources = compile_mod.cuda_resources(res, compiled.metadata)
    spec = replace(original.spec, arch=arch_name, num_warps=warps, num_stages=stages_n,
                   constexprs={**original.spec.constexprs, **(constexprs or {})},
                   options={**{k: v for k, v in original.spec.options.items()
                               if k not in ("maxnreg", "num_ctas", "enable_fp_fusion")}, **extra})
    artifact = Artifact(
        spec=spec, triton_version=triton_api.triton_version(), kernel_hash=compiled.kernel_hash, stages=stages,
        python_first_line=original.python_first_line,
        metadata={k: compiled.metadata[k] for k in sorted(compiled.metadata) if k != "hash"},
        resources=resources, specialization=list(original.specialization),
        warnings=warnings, env=replayed, compile_seconds=time.perf_counter() - started,
        remarks=list(getattr(compiled, "remarks", []) or []))  # none when Triton's cache answered
    binary = binary_ext(backend)
    blob = compiled.asm.get(binary) if binary else None
    artifact._binaries = {binary: bytes(blob)} if isinstance(blob, (bytes, bytearray)) else {}  # for --emit
    return artifact


def _compile_payload(payload: dict[str, Any], env: dict[str, str], in_child: bool, name: str):
    """(Compiled, the tools it used): in a child process with `env`, or here."""
    from tritonscope import triton_api

    if in_child:
        from tritonscope.child import run_in_child

        answer = run_in_child("tritonscope.sources:_recompile_child", payload, env=env,
                              what=f"The recompile of {name} (with its recorded environment)")
        return _compiled_from_json(answer["compiled"]), answer["tools"]
    capability = payload["capability"]
    return _compile_now(payload), (triton_api.compile_tools(capability) if capability else {})


# A loop whose values Triton's parser renames when it reads IR text back:
#   %acc = scf.for %k = %c0_i32 to %K step %c32_i32 iter_args(%acc_1 = %cst) -> (tensor<32x32xf32>)  : i32 {
_LOOP_VALUES_RE = re.compile(r"\bscf\.(?:for|while)\b")


def _has_loop_values(ttir: str) -> bool:
    return bool(_LOOP_VALUES_RE.search(ttir or ""))


def _renamed_note(why: str) -> str:
    """Why a recompile from IR text may differ from the original in SSA names (and only there)."""
    lead = f"Recompiled from IR text because {why}: " if why else ""
    return (lead + "Triton's parser drops the names its front end gave a loop's induction variable and "
            "loop-carried values, so the recompile's TTIR and TTGIR may name those values differently from the "
            "original's (%arg_1 for %acc_1); the code is the same.")


def _cross_vendor_note(was: str, arch_name: str) -> str:
    """What a recompile across vendors keeps of the original launch's specialization, said plainly."""
    if was == "cuda":
        return ("The TTIR carries the specialization a CUDA launch made; a launch on an AMD GPU also marks tensors "
                "under 2 GiB with tt.pointer_range = 32 (which allows buffer loads), and this TTIR has no such "
                f"marks, so the code may differ from what a real {arch_name} launch compiles.")
    return ("The TTIR carries an AMD launch's specialization (tt.pointer_range = 32 on tensors under 2 GiB); the "
            f"CUDA backend has no use for it, so {arch_name} compiles as a CUDA launch with the same divisibility "
            "would.")


def _compile_now(payload: dict[str, Any]):
    """Compile what `payload` describes in this process (recompile's work; also run in its child)."""
    from tritonscope import triton_api

    common = dict(capability=payload["capability"], num_warps=payload["num_warps"],
                  num_stages=payload["num_stages"], options=payload.get("options") or {},
                  target=tuple(payload["target"]) if payload.get("target") else None)
    if payload["how"] == "ast":
        record = payload["record"]
        fn = _captured_function(record)
        names = list(record["signature"])
        constants = {tuple(k): v for k, v in record["constants"]}
        from tritonscope.kernels import parse_scalar

        for name, value in (payload.get("constexprs") or {}).items():
            if name not in names or record["signature"][name] != "constexpr":
                raise UsageError(f"{payload['kernel']} has no constexpr {name!r}.{close_matches(name, names)}",
                                 hint="Its constexprs: " + ", ".join(n for n in names
                                                                     if record['signature'][n] == 'constexpr'))
            constants[(names.index(name),)] = parse_scalar(value)
        attrs = {tuple(k): v for k, v in record.get("attrs_raw") or []}
        return triton_api.compile_ast(fn, dict(record["signature"]), constants, attrs, **common)
    return triton_api.compile_from_ttir(payload["ttir"], **common)


def _recompile_child(payload: dict[str, Any]) -> dict[str, Any]:
    """child.run_in_child entry: compile in this (fresh) process, whose environment is the recorded one."""
    import base64
    import importlib
    from types import SimpleNamespace

    from tritonscope import triton_api
    from tritonscope.errors import TritonscopeError

    try:
        compiled = _compile_now(payload)
    except TritonscopeError:
        raise
    except Exception as e:  # typed like an in-process compile's error
        compile_mod = importlib.import_module("tritonscope.compile")
        raise compile_mod.compile_error(e, SimpleNamespace(kernel=payload["kernel"], file=payload["file"])) from e
    asm = {k: ({"base64": base64.b64encode(v).decode()} if isinstance(v, bytes) else str(v))
           for k, v in compiled.asm.items()}
    return {"compiled": {"asm": asm, "metadata": compiled.metadata, "kernel_hash": compiled.kernel_hash,
                         "remarks": compiled.remarks},
            "tools": triton_api.compile_tools(payload["capability"]) if payload["capability"] else {}}


def _compiled_from_json(data: dict[str, Any]):
    import base64

    from tritonscope.triton_api import Compiled

    asm = {k: (base64.b64decode(v["base64"]) if isinstance(v, dict) else v) for k, v in data["asm"].items()}
    return Compiled(asm=asm, metadata=data["metadata"], kernel_hash=data["kernel_hash"],
                    remarks=data.get("remarks") or [], cache_hit=False)


# A metadata key that is an environment variable Triton's cache key named: TRITON_DEFAULT_FP_FUSION
_ENV_NAME_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")
# .version 8.7
_PTX_VERSION_RE = re.compile(r"^\s*\.version\s+(\d+\.\d+)", re.M)


def recorded_environment(entry: KernelEntry) -> dict[str, Any]:
    """The code-generation environment the entry was compiled with, as far as its source knows it.

    {'vars': {NAME: value}, 'tools': {'ptxas': {...}}, 'complete': bool, 'cache_vars_known': bool}:
    Triton writes every cache-invalidating variable that was set into the
    metadata (a cache entry or a capture: `cache_vars_known`); a capture's
    record adds the tool and codegen knobs and the ptxas used (`complete`:
    a knob it does not list was unset).  A dump or a stage file knows none.
    """
    meta = entry.metadata or {}
    record = entry.record or {}
    codegen = record.get("codegen") if isinstance(record.get("codegen"), dict) else {}
    found = {k: str(v) for k, v in meta.items() if _ENV_NAME_RE.match(k) and v is not None}
    found.update({str(k): str(v) for k, v in (record.get("env") or {}).items()})
    found.update({str(k): str(v) for k, v in (codegen.get("vars") or {}).items()})
    return {"vars": dict(sorted(found.items())), "tools": dict(codegen.get("tools") or {}),
            "complete": bool(codegen.get("complete")), "cache_vars_known": "triton_version" in meta}


def _tool_words(tool: dict[str, Any]) -> str:
    """'ptxas 13.0, PTX ISA 9.0' (what is known of it)."""
    parts = [f"ptxas {tool['version']}" if tool.get("version") else "ptxas"]
    if tool.get("ptx_isa"):
        parts.append(f"PTX ISA {tool['ptx_isa']}")
    return ", ".join(parts)


def _environment_notes(entry: KernelEntry) -> list[str]:
    """What `open` says about a kernel built with tools other than Triton's bundled ones."""
    from tritonscope.triton_api import TOOL_KNOBS

    recorded = recorded_environment(entry)
    ptxas = recorded["tools"].get("ptxas") or {}
    notes = []
    for key, value in recorded["vars"].items():
        if key not in TOOL_KNOBS.values():
            continue
        here = os.path.isfile(value)
        if ptxas and ptxas.get("knob") != key:  # set, but not the tool this arch's compile used
            if not here:
                notes.append(f"{key}={value} was also set when it compiled (not the ptxas this arch used); "
                             "that file is not on this machine.")
            continue
        if ptxas.get("bundled") and here:  # the variable named Triton's own tool
            continue
        text = (f"Compiled with {_tool_words(ptxas) + ' from ' if ptxas else ''}{key}={value}, not Triton's "
                "bundled tool (set by the program or its environment: torch's Inductor sets TRITON_PTXAS_PATH "
                "to torch's own ptxas).")
        if here:
            text += " A --recompile uses the same file."
        else:
            text += (" That file is not on this machine: a --recompile uses Triton's bundled tool instead, "
                     "so its PTX `.version` line (and perhaps its code) will differ.")
        notes.append(text)
    return notes


def _ptxas_note(recorded: dict[str, Any], used: dict[str, str], arch_name: str) -> str:
    """Which ptxas stands in for the original's, and through which variable."""
    if used["how"] == "recorded":
        text = f"Used the original's ptxas {used['version']} ({used['path']})"
    else:
        text = (f"The original's ptxas ({recorded.get('path') or 'its path not recorded'}) is not on this machine; "
                f"used {used['path']}, a ptxas of the same version ({used['version']})")
    return text + f", through {used['knobs']} (what this Triton reads for {arch_name})."


_SEARCHED = "the recorded path, Triton's bundled ptxas, $CUDA_HOME/bin, /usr/local/cuda*/bin and PATH"


def _replay_warnings(recorded: dict[str, Any], missing: dict[str, str], used_tools: dict[str, Any],
                     original_ptx: str, new_ptx: str, capability: int, *, searched: bool = False) -> list[str]:
    """Say plainly where the recompile could not use the compile's own environment."""
    out = []
    was = _PTX_VERSION_RE.search(original_ptx or "")
    now = _PTX_VERSION_RE.search(new_ptx or "")
    versions = f" (`.version {was.group(1)}` captured, `.version {now.group(1)}` now)" if was and now and \
        was.group(1) != now.group(1) else ""
    used = (used_tools or {}).get("ptxas") or {}
    recorded_tool = recorded["tools"].get("ptxas") or {}
    for key, path in sorted(missing.items()):
        if used and used.get("knob") != key and not (searched and recorded_tool.get("knob") == key):
            # e.g. TRITON_PTXAS_PATH when this Triton uses ptxas-blackwell here (for another arch than the original's)
            out.append(f"{key}={path} was set when this kernel was compiled and is not on this machine; "
                       f"this recompile does not use it (it uses {used.get('knob')}'s tool).")
            continue
        before = f" ({_tool_words(recorded_tool)})" if recorded_tool.get("knob") == key else ""
        instead = f"{used.get('path')} ({_tool_words(used)})" if used else "Triton's bundled tool"
        none_here = (f", and no ptxas {recorded_tool['version']} is here (looked at {_SEARCHED})"
                     if searched and before and recorded_tool.get("version") else "")
        out.append(f"{key}={path} was set when this kernel was compiled{before}, but that file is not on this "
                   f"machine{none_here}: recompiled with {instead} instead, so the PTX's ISA version{versions} and "
                   "perhaps its code and cubin differ from the original.")
    if not out and used and recorded_tool.get("version") and (searched or recorded_tool.get("knob") == used.get(
            "knob")) and str(recorded_tool["version"]) != str(used.get("version")):
        none_here = (f"; no ptxas {recorded_tool['version']} is on this machine (looked at {_SEARCHED})"
                     if searched else "")
        out.append(f"The original was compiled with {_tool_words(recorded_tool)}{none_here}: this recompile used "
                   f"{_tool_words(used)} ({used.get('path')}), so the PTX's ISA version{versions} and perhaps "
                   "its code differ.")
    if versions and not out:  # nothing recorded says why: the PTX itself shows another toolchain made it
        now_tool = f" ({_tool_words(used)}, {used.get('path')})" if used else ""
        out.append(f"The original's PTX says `.version {was.group(1)}`; this recompile's says "
                   f"`.version {now.group(1)}`: the original was compiled with another ptxas/CUDA than this "
                   f"recompile used{now_tool}, so its PTX and perhaps its code and cubin differ (run with "
                   "TRITON_PTXAS_PATH set to that ptxas to match it).")
    return out


def _captured_function(record: dict[str, Any]):
    """The JITFunction a capture recorded: its own file when unchanged, else the captured module text."""
    import hashlib
    import importlib.util
    import sys
    import tempfile

    from tritonscope import triton_api

    text = record["module_text"]
    file = record.get("file") or ""
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = Path(file)
    if not (path.is_file() and path.read_text(encoding="utf-8", errors="replace") == text):
        folder = Path(tempfile.gettempdir()) / f"tritonscope-captured-{digest}"
        folder.mkdir(exist_ok=True)
        path = folder / (Path(file).name or "kernel.py")
        if not path.is_file():
            path.write_text(text)
    name = f"_tritonscope_captured_{digest}"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as e:
            del sys.modules[name]
            raise InputFileError(f"The captured module of {record.get('name')} does not import here: "
                                 f"{type(e).__name__}: {e}",
                                 hint="Recompile on a machine with the program's packages (e.g. torch for Inductor "
                                      "kernels), or without -c (from the IR).") from e
    obj = getattr(module, record.get("qualname") or record.get("name"), None)
    fn = triton_api.jit_function(obj)
    if fn is None:
        raise InputFileError(f"{record.get('name')} is not a @triton.jit function in its captured module.")
    return fn
