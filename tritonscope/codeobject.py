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

Reference: https://llvm.org/docs/AMDGPUUsage.html (sections "Note Records",
"Code Object V5 Metadata", "Kernel Descriptor").
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

NT_AMDGPU_METADATA = 32


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
    """Every kernel described in a code object."""
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
        kd = descriptors.get(k.get(".symbol") or f"{k.get('.name')}.kd", {})
        out.append(KernelResources(
            name=str(k.get(".name", "")),
            vgprs=k.get(".vgpr_count"), agprs=k.get(".agpr_count"), sgprs=k.get(".sgpr_count"),
            vgpr_spills=k.get(".vgpr_spill_count"), sgpr_spills=k.get(".sgpr_spill_count"),
            lds_static=k.get(".group_segment_fixed_size", kd.get("group_segment_fixed_size")),
            scratch=k.get(".private_segment_fixed_size", kd.get("private_segment_fixed_size")),
            wavefront_size=k.get(".wavefront_size"), max_workgroup_size=k.get(".max_flat_workgroup_size"),
            accum_offset=kd.get("accum_offset") if k.get(".agpr_count") is not None else None,
            target=meta.get("amdhsa.target")))
    return out


def kernel(data: bytes, name: str | None = None) -> KernelResources:
    """The one kernel of a Triton code object (or the one called `name`)."""
    kernels = read(data)
    if name is not None:
        kernels = [k for k in kernels if k.name == name] or kernels
    if not kernels:
        raise CodeObjectError("the code object describes no kernel")
    return kernels[0]


# --------------------------------------------------------------------------
# ELF64 (little-endian: every AMDGPU code object)
# --------------------------------------------------------------------------


class _Elf:
    def __init__(self, data: bytes):
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            raise CodeObjectError("not a little-endian 64-bit ELF file")
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
