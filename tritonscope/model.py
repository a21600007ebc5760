"""The data that flows through tritonscope: frozen records, no behaviour.

CLI -> compile (KernelSpec -> Artifact) -> parse (Artifact -> ParsedStage)
-> annotate (ParsedStage -> Note) -> render.  Nothing here imports Triton.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# --------------------------------------------------------------------------
# Targets
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Arch:
    """A GPU target and the per-SM limits that decide whether a config fits.

    Figures are from the CUDA C Programming Guide's compute-capability table
    (max shared memory per block is the opt-in maximum).
    """

    name: str               # canonical spelling, e.g. "sm_90a"
    capability: int         # 80, 86, 89, 90, 100, 120
    gpus: str               # example parts, for the summary
    max_shared_per_block: int
    shared_per_sm: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    regs_per_sm: int = 65536
    max_regs_per_thread: int = 255


ARCHES: dict[str, Arch] = {
    a.name: a
    for a in (
        Arch("sm_80", 80, "A100, A30", 166912, 167936, 2048, 32),
        Arch("sm_86", 86, "RTX 30xx, A10, A40", 101376, 102400, 1536, 16),
        Arch("sm_89", 89, "L4, L40, RTX 40xx", 101376, 102400, 1536, 24),
        Arch("sm_90a", 90, "H100, H200", 232448, 233472, 2048, 32),
        Arch("sm_100a", 100, "B200, GB200", 232448, 233472, 2048, 32),
        Arch("sm_120", 120, "RTX 50xx, RTX PRO 6000", 101376, 102400, 1536, 32),
    )
}
# Triton compiles capability 90 and 100 for the "a" (architecture-specific)
# variants automatically, so "sm_90" and "sm_90a" name the same target.
ARCH_ALIASES = {"sm_90": "sm_90a", "sm_100": "sm_100a", "sm_120a": "sm_120"}
DEFAULT_ARCH = "sm_90a"


def arch_for_capability(capability: int) -> Arch | None:
    return next((a for a in ARCHES.values() if a.capability == capability), None)


# --------------------------------------------------------------------------
# Stages
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class StageInfo:
    key: str       # "ttgir"
    title: str     # "Triton GPU IR"
    lexer: str     # pygments lexer alias (ours for mlir and sass)
    ext: str       # file extension for saved stages


STAGES: tuple[StageInfo, ...] = (
    StageInfo("python", "Python source", "python", "py"),
    StageInfo("ttir", "Triton IR (TTIR)", "mlir", "ttir"),
    StageInfo("ttgir", "Triton GPU IR (TTGIR)", "mlir", "ttgir"),
    StageInfo("llir", "LLVM IR", "llvm", "ll"),
    StageInfo("ptx", "PTX", "ptx", "ptx"),
    StageInfo("sass", "SASS", "sass", "sass"),
)
STAGE_KEYS = tuple(s.key for s in STAGES)
STAGE_BY_KEY = {s.key: s for s in STAGES}


# --------------------------------------------------------------------------
# What was compiled
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class KernelSpec:
    """Everything needed to reproduce one compile.

    `args` maps each non-constexpr parameter to its description: a tensor
    ("fp16[32,32]"), a bare pointer ("*fp16"), or a Python scalar / None.
    """

    target: str                    # what the user typed: "matmul" or "k.py:kernel"
    kernel: str                    # the @triton.jit function's name
    file: str                      # absolute path of the file that defines it
    args: dict[str, Any]
    constexprs: dict[str, Any]
    num_warps: int
    num_stages: int
    arch: str                      # canonical arch name, a key of ARCHES
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    grid: tuple[int, ...] | None = None
    options: dict[str, Any] = field(default_factory=dict)  # extra Triton options

    def label(self) -> str:
        """A short human description of the config: 'BLOCK=16 w4 s3 sm_90a'."""
        parts = [f"{k}={v}" for k, v in self.constexprs.items()]
        parts += [f"w{self.num_warps}", f"s{self.num_stages}", self.arch]
        if self.dtype:
            parts.append(self.dtype)
        return " ".join(parts)


@dataclass(frozen=True)
class Resources:
    registers: int | None = None          # per thread
    stack: int | None = None              # bytes per thread
    local: int | None = None              # bytes per thread of local memory (spills)
    static_shared: int | None = None      # bytes declared in the cubin
    dynamic_shared: int = 0               # bytes Triton asks for at launch


@dataclass(frozen=True)
class ArgSpecialization:
    """How Triton's JIT specialized one argument (what a real launch does)."""

    name: str
    type: str                 # "*fp16", "i32", "constexpr"
    attrs: tuple[str, ...]    # ("tt.divisibility=16",) and the like
    value: Any = None         # for constexprs and ints specialized to 1


@dataclass
class Artifact:
    """One real compile: every stage's text plus what Triton said about it."""

    spec: KernelSpec
    triton_version: str
    kernel_hash: str
    stages: dict[str, str]                 # stage key -> raw text, in pipeline order
    python_first_line: int                 # file line number of the first source line
    metadata: dict[str, Any]               # JSON-safe subset of Triton's metadata
    resources: Resources
    specialization: list[ArgSpecialization]
    warnings: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # code-generation env vars in effect
    compile_seconds: float = 0.0


# --------------------------------------------------------------------------
# Parsed stages and notes
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class SourceLoc:
    file: str
    line: int
    col: int = 0


@dataclass(frozen=True)
class Line:
    """One displayed line of a stage: text without location noise, raw kept."""

    number: int               # 1-based line number in the raw stage text
    text: str                 # what is shown: loc(...) / !dbg / .loc noise removed
    raw: str                  # the line exactly as the compiler wrote it
    loc: SourceLoc | None = None


@dataclass(frozen=True)
class ParsedStage:
    key: str
    lines: tuple[Line, ...]


@dataclass(frozen=True)
class Note:
    """An annotation on one line of one stage.

    `kind` says what the note is about (an op, an encoding, an instruction);
    each renderer decides how a kind looks.
    """

    stage: str
    line: int                 # Line.number it belongs to
    kind: str                 # "op", "encoding", "instruction", "cost", "info"
    label: str                # short: "cp.async 16B"
    explanation: str          # plain English with the real numbers
    reference: str | None = None  # URL or doc section
