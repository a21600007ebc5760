"""What there is to judge from: which verdicts a compile (or a found kernel's files) can give, and why not."""

from __future__ import annotations

from dataclasses import dataclass


# ==========================================================================
# What there is to judge from
# ==========================================================================


@dataclass(frozen=True)
class Inputs:
    """Which inputs one analysis holds: all of them for a compile, some for a kernel found on disk.

    shared: Triton's dynamic shared memory (its metadata's "shared"); warps:
    num_warps from the metadata or the TTGIR; registers and spills: from the
    cubin (cuobjdump) or the SASS.  `where` words the source in reasons
    ("stage file", "cache entry", "compile").
    """

    ttgir: bool
    ptx: bool
    machine: bool                     # SASS or AMDGCN
    arch: bool
    warps: bool
    shared: bool
    registers: bool
    spills: bool
    backend: str = "cuda"
    where: str = "compile"

    def needs(self, *what: str) -> str:
        """'needs the cubin (...), which this stage file does not have'."""
        words = what[0] if len(what) == 1 else ", ".join(what[:-1]) + " and " + what[-1]
        return f"needs {words}, which this {self.where} does not have"


def inputs_of(analysis, where: str = "compile") -> Inputs:
    from tritonscope.core.model import ARCHES

    art = analysis.artifact
    meta = art.metadata or {}
    summary = analysis.summary
    return Inputs(ttgir="ttgir" in analysis.parsed, ptx="ptx" in analysis.parsed,
                  machine="sass" in analysis.parsed or "amdgcn" in analysis.parsed,
                  arch=art.spec.arch in ARCHES, warps="num_warps" in meta, shared="shared" in meta,
                  registers=summary.registers is not None, spills=summary.spills.known,
                  backend=summary.backend, where=where)


# Why each verdict cannot be judged without its input (the words of Explanation.skipped).
_TTGIR = "the TTGIR"
_CUBIN = "the cubin (cuobjdump's REG, STACK and LOCAL)"
_METADATA_SHARED = "Triton's metadata (.json: the dynamic shared memory)"


def _occupancy_unknown(inp: Inputs) -> str | None:
    missing = []
    if not inp.arch:
        missing.append("the target arch")
    if not inp.warps:
        missing.append("num_warps (Triton's metadata or the TTGIR)")
    if not inp.shared:
        missing.append(_METADATA_SHARED)
    if not inp.registers:
        missing.append(_CUBIN if inp.backend == "cuda" else "the code object's register counts")
    return inp.needs(*missing) if missing else None
