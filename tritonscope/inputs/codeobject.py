"""An AMD code object (the hsaco ELF Triton's HIP backend writes) -> what the kernel uses.

Everything comes from the file itself, read with the standard library (no
ROCm tools, which the Triton wheel does not ship):

- the AMDGPU metadata note (ELF note "AMDGPU", type NT_AMDGPU_METADATA = 32,
  a MessagePack map: `amdhsa.kernels[i]` with `.vgpr_count`, `.agpr_count`,
  `.sgpr_count`, `.vgpr_spill_count`, `.sgpr_spill_count`,
  `.group_segment_fixed_size`, `.private_segment_fixed_size`,
  `.wavefront_size`, `.max_flat_workgroup_size` ...), as LLVM's AMDGPU
  "Code Object V5 Metadata" documents it;
- the kernel descriptor (the 64-byte `<kernel>.kd` symbol in .rodata), for
  what the metadata does not say: the AGPR offset of CDNA's unified register
  file (COMPUTE_PGM_RSRC3.ACCUM_OFFSET), and the segment sizes again as a
  cross-check.

The AMDGCN assembly Triton writes next to the hsaco carries the same
metadata as YAML (the `.amdgpu_metadata` block LLVM assembles into that
note), so `from_assembly` reads a lone `.amdgcn` file's resources too.

Reference: https://llvm.org/docs/AMDGPUUsage.html (sections "Note Records",
"Code Object V5 Metadata", "Kernel Descriptor").
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from typing import Any

from tritonscope.core.model import Resources
from tritonscope.language.dialects.amdgcn import KERNEL_DESCRIPTOR, METADATA_BLOCK, METADATA_KEY  # the assembly's metadata

NT_AMDGPU_METADATA = 32
# ELF e_machine values: what an AMD code object is, and what a file misnamed .hsaco often is.
EM_AMDGPU = 224
EM_CUDA = 190


class CodeObjectError(ValueError):
    """The bytes are not an AMDGPU code object this reader understands."""


@dataclass(frozen=True)
class KernelResources:
    """One kernel's resource use, as its code object records it."""

    name: str
    vgprs: int | None                 # VGPRs a wave occupies per lane (.vgpr_count: on CDNA2+ this counts the
                                      # AGPRs too, which share one file with the VGPRs)
    agprs: int | None                 # accumulation VGPRs (CDNA); None where the target has none
    sgprs: int | None                 # SGPRs per wave (incl. VCC and the like)
    vgpr_spills: int | None
    sgpr_spills: int | None
    lds_static: int | None            # group segment fixed size, bytes (Triton's LDS is dynamic: see metadata.shared)
    scratch: int | None               # private segment fixed size: bytes per work-item (spills live here)
    wavefront_size: int | None
    max_workgroup_size: int | None
    accum_offset: int | None = None   # first AGPR's index in the unified file (CDNA2+), from the descriptor
    target: str | None = None         # "amdgcn-amd-amdhsa--gfx942"

    @property
    def arch_vgprs(self) -> int | None:
        """The architected VGPRs alone: the total less the AGPRs, which start at accum_offset (a multiple of 4).

        Triton 3.6's gfx942 matmul: .vgpr_count 60, .agpr_count 16, ACCUM_OFFSET 44 -> 44 VGPRs + 16 AGPRs.
        """
        if self.vgprs is None or not self.agprs:
            return self.vgprs
        return self.vgprs - self.agprs


def read(data: bytes) -> list[KernelResources]:
    """Every kernel described in a code object; CodeObjectError (never another error) when it is not one."""
    try:
        return _read(data)
    except CodeObjectError:
        raise
    except (struct.error, IndexError, KeyError, TypeError, AttributeError, ValueError, OverflowError,
            RecursionError) as e:
        # a truncated or damaged file: offsets that point past the end, a note that is not MessagePack
        raise CodeObjectError("the code object is damaged: it ends early, or its offsets or metadata note "
                              "do not read") from e


def _read(data: bytes) -> list[KernelResources]:
    elf = _Elf(data)
    meta = None
    for name, ntype, desc in elf.notes():
        if name == b"AMDGPU" and ntype == NT_AMDGPU_METADATA:
            meta = unpackb(desc)
            break
    if not isinstance(meta, dict):
        raise CodeObjectError("no AMDGPU metadata note in the code object")
    descriptors = elf.kernel_descriptors()
    out = []
    for k in meta.get("amdhsa.kernels") or []:
        if not isinstance(k, dict):
            raise CodeObjectError("the metadata note's amdhsa.kernels holds something that is not a kernel")
        kd = descriptors.get(k.get(".symbol") or f"{k.get('.name')}.kd", {})
        out.append(_resources(k, kd, meta.get("amdhsa.target")))
    return out


def _resources(k: dict[str, Any], kd: dict[str, int], target: Any) -> KernelResources:
    """One `amdhsa.kernels` entry (from the note or the assembly's YAML), with its descriptor's fields.

    Every count must be a non-negative integer (or absent): a damaged or hostile file that says
    `.wavefront_size: sixtyfour` is refused here (CodeObjectError), not carried into arithmetic.
    """
    def count(value: Any, field: str) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise CodeObjectError(f"the kernel's {field} is {value!r}, not a count")
        return value

    agprs = count(k.get(".agpr_count"), ".agpr_count")
    return KernelResources(
        name=str(k.get(".name", "")),
        vgprs=count(k.get(".vgpr_count"), ".vgpr_count"), agprs=agprs,
        sgprs=count(k.get(".sgpr_count"), ".sgpr_count"),
        vgpr_spills=count(k.get(".vgpr_spill_count"), ".vgpr_spill_count"),
        sgpr_spills=count(k.get(".sgpr_spill_count"), ".sgpr_spill_count"),
        lds_static=count(k.get(".group_segment_fixed_size", kd.get("group_segment_fixed_size")),
                         ".group_segment_fixed_size"),
        scratch=count(k.get(".private_segment_fixed_size", kd.get("private_segment_fixed_size")),
                      ".private_segment_fixed_size"),
        wavefront_size=count(k.get(".wavefront_size"), ".wavefront_size"),
        max_workgroup_size=count(k.get(".max_flat_workgroup_size"), ".max_flat_workgroup_size"),
        accum_offset=count(kd.get("accum_offset"), "accum_offset") if agprs is not None else None,
        target=str(target) if target is not None else None)


# amdgcn-amd-amdhsa--gfx942   amdgpu9.42-amd-amdhsa-unknown-gfx942   amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-
_GFX_RE = re.compile(r"(gfx[0-9a-f]+)")


def gfx_of(target: str | None) -> str | None:
    """'amdgcn-amd-amdhsa--gfx942' -> 'gfx942' (the processor, without target features)."""
    m = _GFX_RE.search(target or "")
    return m.group(1) if m else None


def machine_of(data: bytes) -> int | None:
    """The ELF e_machine of `data` (EM_AMDGPU for a code object, EM_CUDA for a cubin); None if not ELF."""
    if len(data) < 20 or data[:4] != b"\x7fELF":
        return None
    return struct.unpack_from("<H", data, 0x12)[0]


# --------------------------------------------------------------------------
# The same metadata in AMDGCN assembly (a lone .amdgcn file)
# --------------------------------------------------------------------------



def from_assembly(text: str) -> list[KernelResources]:
    """Every kernel the assembly's `.amdgpu_metadata` block describes (what the hsaco's note will hold).

    LLVM prints the note as YAML between `.amdgpu_metadata` and
    `.end_amdgpu_metadata`; only the scalar keys of each `amdhsa.kernels`
    item are read.  The AGPR offset comes from the `.amdhsa_kernel` block's
    `.amdhsa_accum_offset` directive.  CodeObjectError when there is no block.
    """
    m = METADATA_BLOCK.search(text)
    if not m:
        raise CodeObjectError("the assembly has no .amdgpu_metadata block")
    top: dict[str, Any] = {}
    kernels: list[dict[str, Any]] = []
    in_kernels = False
    key_indent = None
    for raw in m.group(1).splitlines():
        km = METADATA_KEY.match(raw)
        if not km:
            continue
        indent, item, key, value = len(km.group(1)), km.group(2), km.group(3), km.group(4)
        if indent == 0 and not item:
            top[key] = _scalar(value)
            in_kernels = key == "amdhsa.kernels"
            continue
        if not in_kernels:
            continue
        if item and (key_indent is None or indent + 2 == key_indent):
            key_indent = indent + 2
            kernels.append({})
        elif indent != key_indent or not kernels:
            continue  # a kernel's nested lists (.args)
        if value:
            kernels[-1][key] = _scalar(value)
    descriptors: dict[str, dict[str, int]] = {}
    current: dict[str, int] | None = None
    for d in KERNEL_DESCRIPTOR.finditer(text):
        name, value = d.group(1), d.group(2)
        if name == "kernel":
            current = descriptors.setdefault(f"{value}.kd", {})
        elif current is not None and value.isdigit():
            current[name] = int(value)
    target = top.get("amdhsa.target")
    return [_resources(k, descriptors.get(k.get(".symbol") or f"{k.get('.name')}.kd", {}), target)
            for k in kernels]


def _scalar(text: str) -> Any:
    """A YAML scalar as LLVM prints them: 58, true, false, a bare or quoted string."""
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if text in ("true", "false"):
        return text == "true"
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def kernel(data: bytes, name: str | None = None) -> KernelResources:
    """The one kernel of a Triton code object (or the one called `name`)."""
    kernels = read(data)
    return pick(kernels, name)


def pick(kernels: list[KernelResources], name: str | None = None) -> KernelResources:
    """The one kernel of a list (or the one called `name`)."""
    if not kernels:
        raise CodeObjectError("the code object describes no kernel")
    if name is not None:
        named = [k for k in kernels if k.name == name]
        if not named:
            raise CodeObjectError(f"the code object has no kernel named {name!r} (it has "
                                  f"{', '.join(repr(k.name) for k in kernels)})")
        kernels = named
    if len(kernels) > 1:  # never picked at random: Triton writes one kernel per code object
        raise CodeObjectError(f"the code object describes {len(kernels)} kernels "
                              f"({', '.join(repr(k.name) for k in kernels)}); name the one to read")
    return kernels[0]


# --------------------------------------------------------------------------
# ELF64 (little-endian: every AMDGPU code object)
# --------------------------------------------------------------------------


class _Elf:
    def __init__(self, data: bytes):
        if data[:4] != b"\x7fELF" or len(data) < 64 or data[4] != 2 or data[5] != 1:
            raise CodeObjectError("not a little-endian 64-bit ELF file")
        machine = machine_of(data)
        if machine == EM_CUDA:
            raise CodeObjectError("it is an NVIDIA cubin (ELF machine EM_CUDA)")
        if machine != EM_AMDGPU:
            raise CodeObjectError(f"it is an ELF file for another machine (e_machine {machine})")
        self.data = data
        (self.shoff,) = struct.unpack_from("<Q", data, 0x28)
        self.shentsize, self.shnum, self.shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        self.sections = [self._section(i) for i in range(self.shnum)]

    def _section(self, i: int) -> dict[str, int]:
        off = self.shoff + i * self.shentsize
        name, stype, flags, addr, offset, size, link, info, align, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", self.data, off)
        return {"name": name, "type": stype, "addr": addr, "offset": offset, "size": size, "link": link,
                "entsize": entsize}

    def _bytes(self, sec: dict[str, int]) -> bytes:
        return self.data[sec["offset"]:sec["offset"] + sec["size"]]

    def notes(self):
        """(name, type, descriptor) of every note in SHT_NOTE sections."""
        for sec in self.sections:
            if sec["type"] != 7:  # SHT_NOTE
                continue
            blob, pos = self._bytes(sec), 0
            while pos + 12 <= len(blob):
                namesz, descsz, ntype = struct.unpack_from("<III", blob, pos)
                pos += 12
                name = blob[pos:pos + namesz].rstrip(b"\0")
                pos += -(-namesz // 4) * 4
                desc = blob[pos:pos + descsz]
                pos += -(-descsz // 4) * 4
                yield name, ntype, desc

    def symbols(self):
        """(name, value, size, section index) of the symbol table."""
        for sec in self.sections:
            if sec["type"] != 2:  # SHT_SYMTAB
                continue
            strtab = self._bytes(self.sections[sec["link"]])
            blob = self._bytes(sec)
            for pos in range(0, len(blob) - 23, 24):
                name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", blob, pos)
                end = strtab.find(b"\0", name)
                yield strtab[name:end].decode(errors="replace"), value, size, shndx

    def kernel_descriptors(self) -> dict[str, dict[str, int]]:
        """`<kernel>.kd` symbol -> the fields of its 64-byte kernel descriptor tritonscope reads."""
        out = {}
        for name, value, size, shndx in self.symbols():
            if not name.endswith(".kd") or size != 64 or not 0 < shndx < len(self.sections):
                continue
            sec = self.sections[shndx]
            start = sec["offset"] + value - sec["addr"]
            kd = self.data[start:start + 64]
            if len(kd) != 64:
                continue
            group, private = struct.unpack_from("<II", kd, 0)
            (rsrc3,) = struct.unpack_from("<I", kd, 44)
            # COMPUTE_PGM_RSRC3 on gfx90a+: ACCUM_OFFSET (bits 5:0) = first AGPR / 4 - 1.
            out[name] = {"group_segment_fixed_size": group, "private_segment_fixed_size": private,
                         "accum_offset": ((rsrc3 & 0x3F) + 1) * 4}
        return out


# --------------------------------------------------------------------------
# MessagePack (the subset code-object metadata uses)
# --------------------------------------------------------------------------


def unpackb(data: bytes) -> Any:
    """Decode one MessagePack value (maps, arrays, strings, ints, floats, booleans, nil, binary)."""
    value, _ = _unpack(data, 0)
    return value


def _unpack(b: bytes, i: int) -> tuple[Any, int]:
    t = b[i]
    i += 1
    if t <= 0x7F:
        return t, i
    if t >= 0xE0:
        return t - 0x100, i
    if 0x80 <= t <= 0x8F:
        return _map(b, i, t & 0x0F)
    if 0x90 <= t <= 0x9F:
        return _array(b, i, t & 0x0F)
    if 0xA0 <= t <= 0xBF:
        n = t & 0x1F
        return b[i:i + n].decode(errors="replace"), i + n
    fixed = {0xCC: "<B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q", 0xD0: ">b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q",
             0xCA: ">f", 0xCB: ">d"}
    if t in fixed:
        fmt = fixed[t]
        (v,) = struct.unpack_from(fmt, b, i)
        return v, i + struct.calcsize(fmt)
    if t == 0xC0:
        return None, i
    if t in (0xC2, 0xC3):
        return t == 0xC3, i
    sized = {0xD9: (">B", "str"), 0xDA: (">H", "str"), 0xDB: (">I", "str"), 0xC4: (">B", "bin"),
             0xC5: (">H", "bin"), 0xC6: (">I", "bin"), 0xDC: (">H", "array"), 0xDD: (">I", "array"),
             0xDE: (">H", "map"), 0xDF: (">I", "map")}
    if t in sized:
        fmt, kind = sized[t]
        (n,) = struct.unpack_from(fmt, b, i)
        i += struct.calcsize(fmt)
        if kind == "str":
            return b[i:i + n].decode(errors="replace"), i + n
        if kind == "bin":
            return bytes(b[i:i + n]), i + n
        return (_array if kind == "array" else _map)(b, i, n)
    raise CodeObjectError(f"unsupported MessagePack type 0x{t:02x}")


def _array(b: bytes, i: int, n: int) -> tuple[list, int]:
    out = []
    for _ in range(n):
        v, i = _unpack(b, i)
        out.append(v)
    return out, i


def _map(b: bytes, i: int, n: int) -> tuple[dict, int]:
    out = {}
    for _ in range(n):
        k, i = _unpack(b, i)
        v, i = _unpack(b, i)
        out[k if isinstance(k, (str, int)) else str(k)] = v
    return out, i


def hip_resources(compiled, warnings: list[str]) -> Resources:
    """Registers, LDS and scratch of an AMD kernel, read from its code object (`compiled.asm["hsaco"]`; Triton's
    metadata gives the name and the dynamic shared memory); what is missing is a warning and stays unknown."""
    dynamic = int(compiled.metadata.get("shared") or 0)
    hsaco = compiled.asm.get("hsaco")
    if not isinstance(hsaco, (bytes, bytearray)):
        warnings.append("No hsaco in Triton's output: registers and scratch are unknown.")
        return Resources(dynamic_shared=dynamic)
    try:
        k = kernel(bytes(hsaco), compiled.metadata.get("name"))
    except (CodeObjectError, IndexError, ValueError) as e:
        warnings.append(f"Could not read the code object, so registers are unknown: {e}")
        return Resources(dynamic_shared=dynamic)
    return Resources(registers=k.vgprs, agprs=k.agprs, sgprs=k.sgprs, stack=k.scratch, static_shared=k.lds_static,
                     dynamic_shared=dynamic, vgpr_spills=k.vgpr_spills, sgpr_spills=k.sgpr_spills)
