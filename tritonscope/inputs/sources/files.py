"""Finding out what a path is, and what each found file records of its compile (metadata, lone stage files, the cubin)."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any

from tritonscope.inputs import codeobject
from tritonscope.core.errors import InputFileError
from tritonscope.core.model import ARCHES
from tritonscope.inputs.sources.emit import check_emitted
from tritonscope.inputs.sources.model import BINARIES, KernelEntry, SINGLE_FILE_EXTS, STAGE_EXTS, target_of
from tritonscope.language.dialects import for_suffix, kernel_name, llvm, ptx, recognize
from tritonscope.language.mlir_syntax import TTGIR_MODULE_ATTR
from tritonscope.inputs.sources.readers import _head_and_tail, _read_head, _read_json, _read_text, check_size, mlir_head

# Finding out what PATH is
# --------------------------------------------------------------------------


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




def stage_facts(path: Path, key: str) -> dict[str, Any]:
    """Triton-metadata-shaped facts ({'target', 'num_warps', ...}) one stage file records; {} when none."""
    read = _TEXT_FACTS.get(key) or _BINARY_FACTS.get(key)
    return read(path) if read else {}


def _cubin_file_facts(path: Path) -> dict[str, Any]:
    try:
        return cubin_metadata(cubin_facts(path.read_bytes()))
    except OSError:
        return {}


def _hsaco_file_facts(path: Path) -> dict[str, Any]:
    try:
        return hsaco_facts(codeobject.read(path.read_bytes()))
    except (OSError, codeobject.CodeObjectError, ValueError, IndexError):
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


def _shared_suffix_stage(p: Path, ext: str) -> str:
    """The stage of a file whose suffix several dialects claim (.mlir: TTIR or TTGIR), by its text."""
    d = recognize(ext, _read_head(p, 1 << 16))
    if d is None:
        raise InputFileError(f"{p} is not a Triton TTIR or TTGIR module (no `module` or `tt.func`).",
                             hint="tritonscope opens .mlir files that hold a Triton module, as "
                                  "MLIR_ENABLE_DUMP or --emit writes them.")
    return d.key


def file_entry(p: Path) -> KernelEntry:
    """A single stage file (or metadata JSON) as a kernel entry; its siblings of the same stem join it."""
    ext = p.suffix.lower()
    if ext not in SINGLE_FILE_EXTS:
        raise InputFileError(f"{p.name}: not a stage file tritonscope can open (extension {ext or 'none'!r}).",
                             hint="Open .ttir, .ttgir, .mlir, .llir, .ptx, .cubin, .sass, .amdgcn, .hsaco or a "
                                  "Triton metadata .json, or the folder that holds them.")
    check_size(p)
    key = _shared_suffix_stage(p, ext) if len(for_suffix(ext)) > 1 else ext[1:]
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
    if key in _TEXT_FACTS:
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
    from tritonscope.language.dialects import amdgcn

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

# (The patterns are the dialects': ptx.TARGET, llvm.NVVM_REQNTID, mlir_syntax.TTGIR_MODULE_ATTR...)


def _threads_to_warps(threads: int, warp_size: int) -> int | None:
    return threads // warp_size if threads > 0 and threads % warp_size == 0 else None


def ptx_facts(path: Path) -> dict[str, Any]:
    """{'target', 'num_warps', 'maxnreg'} a PTX file records (`.target sm_90a`, `.reqntid 512`, `.maxnreg`)."""
    text = _read_head(path, 1 << 20)
    out: dict[str, Any] = {}
    m = ptx.TARGET.search(text)
    if m:
        out["target"] = {"backend": "cuda", "arch": int(m.group(1)), "warp_size": 32}
    m = ptx.REQNTID.search(text)
    if m:
        threads = 1
        for g in m.groups():
            threads *= int(g) if g else 1
        warps = _threads_to_warps(threads, 32)
        if warps:
            out["num_warps"] = warps
    m = ptx.MAXNREG.search(text)
    if m:
        out["maxnreg"] = int(m.group(1))
    return out


def nvidia_llir_facts(text: str) -> dict[str, Any]:
    """{'target'?, 'num_warps'?, 'maxnreg'?} of NVIDIA LLVM IR: `nvvm.reqntid`; the SM only if a target-cpu names it.

    Triton's NVIDIA LLVM IR names no SM (the target machine is chosen when
    it becomes PTX), so the arch of a lone .llir stays unknown.
    """
    out: dict[str, Any] = {}
    if not llvm.NVIDIA.search(text):
        return out
    m = llvm.TARGET_SM.search(text)
    if m:
        out["target"] = {"backend": "cuda", "arch": int(m.group(1)), "warp_size": 32}
    m = llvm.NVVM_REQNTID.search(text)
    threads = None
    if m:
        threads = 1
        for g in m.groups():
            threads *= int(g) if g else 1
    else:
        m = llvm.NVVM_REQNTIDX.search(text)
        threads = int(m.group(1)) if m else None
    warps = _threads_to_warps(threads, 32) if threads else None
    if warps:
        out["num_warps"] = warps
    m = llvm.NVVM_MAXNREG.search(text)
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


def llir_facts(path: Path) -> dict[str, Any]:
    """{'target', 'num_warps'} an LLVM IR file records: AMD's triple and work-group size, NVIDIA's `nvvm.reqntid`."""
    text = _head_and_tail(path, 1 << 16)  # the triple is at the top, the function attributes at the bottom
    if not llvm.AMD_TRIPLE.search(text):
        return nvidia_llir_facts(text)
    m = llvm.TARGET_GFX.search(text) or llvm.AMD_SUBARCH.search(text)
    gfx = None
    if m:
        gfx = m.group(1) if m.group(1).startswith("gfx") else "gfx" + m.group(1).replace(".", "")
    wave = ARCHES[gfx].warp_size if gfx in ARCHES else 64
    out: dict[str, Any] = {"target": {"backend": "hip", "arch": gfx, "warp_size": wave}}
    m = llvm.AMD_WORK_GROUP.search(text)
    if m and gfx in ARCHES:  # Triton asks for exactly num_warps x wave work-items (the wave is the arch's)
        warps = _threads_to_warps(int(m.group(1)), wave)
        if warps:
            out["num_warps"] = warps
    return out


def ttgir_facts(path: Path) -> dict[str, Any]:
    """{'target': {...}, 'num_warps', 'num_ctas'} from a TTGIR's module attributes (for sources without metadata)."""
    try:
        with path.open("r", encoding="utf-8", errors="replace") as f:
            head = mlir_head(f, 16384)
    except OSError:
        return {}
    out: dict[str, Any] = {}
    wave = None
    for attr, backend, arch, number in TTGIR_MODULE_ATTR.findall(head):
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


# What each kind of file records of its compile, by its files' key: the text stages that say something
# (Triton-metadata-shaped facts), and the binaries
_TEXT_FACTS = {"ttgir": ttgir_facts, "amdgcn": amdgcn_facts, "ptx": ptx_facts, "llir": llir_facts}
_BINARY_FACTS = {"cubin": _cubin_file_facts, "hsaco": _hsaco_file_facts}
# The files a kernel's facts are read from, most telling first (TTGIR's module attributes first).
FACT_ORDER = tuple(_TEXT_FACTS) + tuple(_BINARY_FACTS)


def _check_text(p: Path, key: str) -> None:
    found = for_suffix(f".{key}")
    try:
        with p.open("r", encoding="utf-8") as f:
            head = mlir_head(f, 65536) if found and found[0].kind == "mlir" else f.read(65536)
    except UnicodeDecodeError as e:
        raise InputFileError(f"{p} is not a .{key} file: it is not text.") from e
    except OSError as e:
        raise InputFileError(f"Cannot read {p}: {e.strerror or e}.") from e
    signs = found[0].signs if found else None
    if signs is not None and not signs.search(head):
        raise InputFileError(f"{p} does not look like {key.upper()}: none of the lines such a file begins with.",
                             hint="Check the file, or rename it to the extension of the stage it holds.")


def _name_in_stage(p: Path, key: str) -> str | None:
    if key in BINARIES:
        return None
    try:
        head = p.read_text(encoding="utf-8", errors="replace")[:200000]
    except OSError:
        return None
    return kernel_name(head, key)


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
