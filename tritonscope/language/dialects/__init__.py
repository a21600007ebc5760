"""One module per dialect: everything tritonscope knows about one stage's language.

A dialect module (python.py, mlir.py, llvm.py, ptx.py, sass.py, ...) holds its
parser (text -> lines with source locations), its noise filter, its diff
normalizer, its classifier (the one vocabulary of instruction classes) and its
annotator, and publishes them as `Dialect` records in a module-level
`DIALECTS` tuple.  This package finds the modules by itself (pkgutil), so a
new dialect is one new module plus its tests; no consumer changes.

Consumers never compare stage keys: they ask `dialect(key)` and call what
it holds, or a question of the registry (is_source, is_mlir, is_machine_code,
compiled, mlir_stages, pass_stages,
naming(cls), machine_stage, recognize(suffix, head)).  An unknown key gets a
plain-text dialect (lines as written, no notes, no classes), never an error.

Adding a dialect (AMDGCN, a per-pass dump...):
  1. write dialects/<name>.py with parse, normalize, classify, annotate and
     noise, and `DIALECTS = (Dialect(key=..., order=..., backends=...),)`;
     name instructions with the words of CLASSES where they mean the same;
     say what kind of text it is (kind, machine_code) and how `open` knows its
     files (suffixes, signs, marks, kernel_name, def_location); an assembly
     or IR says how its loops read (loop_label, loop_branch, loop_targets,
     not_work: tritonscope/language/loops.py reads them) and which
     instructions wait for memory (memory_wait, wait_detail);
  2. add its tests (tests/test_dialects.py shows one written to a temp folder
     and picked up by analysis, diff, views, Markdown and HTML unchanged).
Nothing else changes for analysis, diff, views and reports: the registry
finds the module.  (Which texts a compile collects from Triton is
compile.py's business.)
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Mapping, NamedTuple

from tritonscope.core.model import Line, ParsedStage

# The stage that *is* the source: every other stage maps its lines back to it.
SOURCE = "python"

# The coarse instruction classes, in the order tables list them.  A dialect's
# classifier names each instruction it knows with one of these (or its own
# class, listed after these), so the summary mix, diff, sweep, bench and the
# walkthrough all use the same words.
CLASSES = ("async copy", "async commit", "async wait", "tma copy", "ldmatrix", "stmatrix", "mma", "wgmma",
           "wgmma sync", "barrier", "mbarrier", "global load", "global store", "shared load", "shared store",
           # Blackwell's tcgen05 family (PTX tcgen05.*, SASS UTC*MMA/LDTM/STTM) and register spills to
           # scratch (AMDGCN scratch_store/scratch_load)
           "tcgen05 mma", "tmem load", "tmem store", "tmem alloc", "tcgen05 sync", "scratch store", "scratch load")


_NO_FACTS: Mapping = MappingProxyType({})


class Instr(NamedTuple):
    """One classified line: the op as written, its coarse class and its fine mix name, and its numbers.

    op    "cp.async.ca.shared.global", "LDGSTS.E.BYPASS.128", "tt.dot"
    cls   a class of CLASSES ("async copy"), or None when the op is not one tables count
    name  the fine name Analysis.mix counts ("async copy .ca 4B", "ldmatrix LDSM.16.M88.4"); set exactly
          when cls is set, so fine and coarse counts cover the same instructions
    facts what the op says, as JSON-safe values ({"bytes": 4, "cache": "ca"}, {"shape": "m16n8k16"});
          read-only (copy it to change it)

    A named tuple, not a dataclass: a stage classifies every line, and this is the cheapest record.
    """

    op: str
    cls: str | None = None
    name: str | None = None
    facts: Mapping = _NO_FACTS


def _no_noise(raw: str) -> str | None:
    return None


@dataclass(frozen=True)
class Dialect:
    key: str                 # "ptx"
    title: str               # "PTX"
    ext: str                 # file extension for saved/emitted stages: "ptx"
    lexer: str               # pygments alias, or ours: "mlir", "sass"
    fence: str               # Markdown code-fence language
    order: int               # position in the pipeline (python 0, ttir 10, ttgir 20, llir 30, ptx 40, sass 50)
    backends: tuple[str, ...]  # ("cuda",) ; ("cuda", "hip") for shared stages
    parse: Callable          # parse(text, *, file="", first_line=1) -> ParsedStage
    normalize: Callable      # normalize(text) -> list[tuple[int, str]]  (noise-free lines for diffs)
    classify: Callable       # classify(text_of_one_line) -> Instr | None   (the dialect's vocabulary)
    annotate: Callable       # annotate(ParsedStage) -> list[Note]
    source_mapped: bool = True
    noise: Callable = _no_noise  # noise(raw_line) -> None | "debug" | "directive" | "comment" | "header"
    classes: tuple[str, ...] = ()  # the classes `classify` can name (its vocabulary); () = it counts nothing
    # What kind of text it is, for consumers that must treat kinds apart (they ask, never compare keys):
    # "source" (the kernel's Python), "mlir" (TTIR, TTGIR), "ir" (LLVM IR), "assembly" (PTX, AMDGCN, SASS)
    kind: str = "text"
    machine_code: bool = False  # the GPU's own instructions (SASS, AMDGCN), not a virtual ISA such as PTX
    columns: bool = False       # laid out in blank-padded columns (nvdisasm pads SASS to column 35; PTX): a view
                                # may squeeze runs of blanks
    # Made by an MLIR pass manager whose per-pass dumps `passes` reads: its title in pass tables
    # ("TTIR", "TTGIR", "LLVM"); "" for stages no pass manager makes
    pass_title: str = ""
    # Loops (what `loops` finds: a label, and a later branch back to it): `loop_label` group 1 the label;
    # `loop_branch` a branch, group 1 its target, or, where one branch names several (LLVM's
    # `br i1 %c, label %a, label %b`), `loop_targets` finds each of them (group 1).  Whether an instruction
    # waits for global memory (memory_wait(Instr, line) -> None: no; else whether it waits for zero
    # outstanding, a drain) and what such a wait says beside its mark (wait_detail(Instr, line) -> "vmcnt(0)",
    # "wgmma pending<=1", or None).  A line as the loop view shows it (instruction_text: without address,
    # comment, `!dbg` or trailing `;`) and as tables quote it (quoted: without a trailing comment)
    loop_label: re.Pattern | None = None
    loop_branch: re.Pattern | None = None
    loop_targets: re.Pattern | None = None
    # Opcodes (the op's first word) that do no work: padding, the program's end (SASS NOP, EXIT, BRA); a loop
    # of only these is no loop, and the main loop's pick counts the others (tritonscope/language/loops.py)
    not_work: frozenset = frozenset()
    memory_wait: Callable | None = None
    wait_detail: Callable | None = None
    instruction_text: Callable = str.strip
    quoted: Callable = str.strip
    # Stage-file recognition (what `open` asks): the suffixes of its stage files besides `.<key>`
    # (".mlir" for TTIR and TTGIR, ".source" for the pre-pass TTIR), a line only its files have near the top
    # (`signs`), what sets it apart from another dialect sharing a suffix (`marks`: TTGIR's ttg. attributes),
    # where a stage file names its kernel (`kernel_name`, group 1) and where the kernel's def is
    # (`def_location(text) -> (file, line)`, ('', 0) when the text does not say)
    suffixes: tuple[str, ...] = ()
    signs: re.Pattern | None = None
    marks: re.Pattern | None = None
    kernel_name: re.Pattern | None = None
    def_location: Callable | None = None

    @property
    def is_source(self) -> bool:
        return self.kind == "source"

    @property
    def is_mlir(self) -> bool:
        return self.kind == "mlir"

    @property
    def is_assembly(self) -> bool:
        return self.kind == "assembly"


# --------------------------------------------------------------------------
# Helpers the dialect modules share
# --------------------------------------------------------------------------


class Renamer:
    """Renumbers names by first appearance, per family (for diffs).

    '%a_22' -> family '%a'; the first distinct member seen is '%a', the next
    '%a_1' ...  so two compiles of the same code agree, and an extra value in
    one family does not shift the names of every other family.
    """

    def __init__(self, family: Callable[[str], str], spell: Callable[[str, int], str]):
        self.family = family      # token -> family name
        self.spell = spell        # (family, n) -> new token
        self.seen: dict[str, str] = {}
        self.counts: dict[str, int] = {}

    def __call__(self, m: re.Match) -> str:
        token = m.group(0)
        if token not in self.seen:
            fam = self.family(token)
            n = self.counts.get(fam, 0)
            self.counts[fam] = n + 1
            self.seen[token] = self.spell(fam, n)
        return self.seen[token]


def ssa_spelling(fam: str, n: int) -> str:
    """Renamer spelling for SSA values: numbered ones stay numbers (%0, %1); named ones get _N after the first."""
    if fam == "%":
        return f"%{n}"
    return fam if n == 0 else f"{fam}_{n}"


# Ops that only move values or compute addresses, masks and branches, in every dialect: the walkthrough leaves
# them out when it names what a Python line became.
# arith.addi   mov.u32   IMAD.MOV.U32   getelementptr   s_mov_b32   v_add_u32
PLUMBING_OPS = re.compile(r"^(arith\.|mov|cvt|bfe|SGXT|ULEA|add|mul|mad|shl|shr|and|or|xor|setp|selp|sub|IMAD|IADD|LOP|SHF|MOV|ISETP|SEL|"
                          r"LEA|CS2R|S2R|S2UR|ULDC|UMOV|UIADD|USHF|ULOP|IABS|I2F|F2I|MUFU|NOP|VIADD|UISETP|USEL|"
                          r"PLOP|R2UR|BRA|EXIT|bra|ret|tt\.splat|tt\.broadcast|tt\.expand_dims|tt\.addptr|"
                          r"tt\.make_range|ttg\.memdesc|scf\.yield|getelementptr|icmp|select|zext|sext|trunc|"
                          r"extractvalue|insertvalue|extractelement|insertelement|bitcast|br|phi|shufflevector|fadd|fmul|"
                          # AMDGCN scalar and vector ALU bookkeeping (addresses, masks, moves, permutes)
                          r"s_(?:mov|movk|nop|add|sub|mul|cmp|cselect|and|or|xor|lshl|lshr|ashr|bfe|cbranch|branch|"
                          r"load|setprio|delay_alu|clause|wait_alu|endpgm)|"
                          r"v_(?:mov|perm|add|sub|mul|mad|lshl|lshr|ashr|and|or|xor|cndmask|cmp|readfirstlane|bfrev|xad|"
                          r"bfe|bitop|dual|nop|cvt|pk_|max|min|fma|accvgpr))")


# 	.file	1 "/work/main/samples" "matmul.py"        (AMDGCN, DWARF 5: directory, then file)
# 	.file	1 "/work/main/samples/matmul.py"          (PTX; ptxas also accepts .file 1 "x.py", 1712345678, 1234)
ASM_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s+"([^"]*)")?', re.M)
# 	.loc	1 8 0 prologue_end                        (file 1, line 8: the first line with a number is the def)
ASM_DEF_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+([1-9]\d*)\s", re.M)


def asm_files(text: str) -> dict[str, str]:
    """The `.file` table of PTX or AMDGCN: {file number: path} (AMDGCN's directory and name joined)."""
    return {m.group(1): f"{m.group(2)}/{m.group(3)}" if m.group(3) else m.group(2) for m in ASM_FILE.finditer(text)}


def asm_def_location(text: str) -> tuple[str, int]:
    """(file, line) of the first `.loc` in PTX or AMDGCN (the kernel's def); ('', 0) when there is none."""
    loc = ASM_DEF_LOC.search(text)
    if not loc:
        return "", 0
    path = asm_files(text).get(loc.group(1))
    return (path, int(loc.group(2))) if path is not None else ("", 0)


def plain_lines(text: str) -> tuple[Line, ...]:
    return tuple(Line(i + 1, t, t) for i, t in enumerate(text.splitlines()))


def plain_normalize(text: str) -> list[tuple[int, str]]:
    """Every non-blank line, right-stripped: the diff of a stage nothing is known about."""
    return [(i, raw.rstrip()) for i, raw in enumerate(text.splitlines(), 1) if raw.strip()]


def plain_text(key: str) -> Dialect:
    """The dialect of a stage tritonscope knows nothing about: shown as written."""
    return Dialect(
        key=key, title=key, ext="txt", lexer="text", fence="", order=1000, backends=(),
        parse=lambda text, *, file="", first_line=1: ParsedStage(key, plain_lines(text)),
        normalize=plain_normalize, classify=lambda text: None, annotate=lambda stage: [],
        source_mapped=False)


# --------------------------------------------------------------------------
# The registry
# --------------------------------------------------------------------------

_REGISTRY: dict[str, Dialect] = {}


def discover() -> dict[str, Dialect]:
    """(Re)load the registry from every public module on this package's path, in pipeline order."""
    found: list[Dialect] = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.extend(getattr(module, "DIALECTS", ()))
    _REGISTRY.clear()
    _REGISTRY.update({d.key: d for d in sorted(found, key=lambda d: (d.order, d.key))})
    return dict(_REGISTRY)


def dialect(key: str) -> Dialect:
    """The dialect of a stage key; a plain-text one for keys no module claims."""
    return _REGISTRY.get(key) or plain_text(key)


def known(key: str) -> bool:
    return key in _REGISTRY


def stages(backend: str = "cuda") -> tuple[Dialect, ...]:
    """The stages one backend's compile produces, in pipeline order (the source first)."""
    return tuple(d for d in _REGISTRY.values() if backend in d.backends)


def stage_keys(backend: str = "cuda") -> tuple[str, ...]:
    return tuple(d.key for d in stages(backend))


def every_stage_key() -> tuple[str, ...]:
    """Every stage key some backend produces, in pipeline order (what --stage accepts)."""
    return tuple(k for k, d in _REGISTRY.items() if d.backends)


def is_source(key: str) -> bool:
    """Whether a stage key is the kernel's Python source (the stage every other one maps back to)."""
    return dialect(key).is_source


def is_mlir(key: str) -> bool:
    return dialect(key).is_mlir


def is_machine_code(key: str) -> bool:
    """Whether a stage is the GPU's own instructions (SASS, AMDGCN): what a binary disassembles to."""
    return dialect(key).machine_code


def compiled(keys) -> list[str]:
    """These stage keys without the source, in the order given."""
    return [k for k in keys if not dialect(k).is_source]


def mlir_stages() -> tuple[str, ...]:
    """The MLIR stages (TTIR, TTGIR), in pipeline order."""
    return tuple(k for k, d in _REGISTRY.items() if d.is_mlir)


def pass_stages() -> tuple[str, ...]:
    """The stages an MLIR pass manager makes (TTIR, TTGIR, and LLVM IR, lowered in MLIR's llvm dialect
    before translation), in pipeline order: the stages whose passes `passes` traces."""
    return tuple(k for k, d in _REGISTRY.items() if d.pass_title)


def naming(cls: str) -> tuple[str, ...]:
    """The stage keys whose dialect names instructions with a class ("mma": PTX, AMDGCN, SASS), in
    pipeline order."""
    return tuple(k for k, d in _REGISTRY.items() if cls in d.classes)


def for_suffix(suffix: str) -> tuple[Dialect, ...]:
    """The dialects whose stage files may carry a suffix (".ttgir" -> TTGIR; ".mlir" -> TTIR, TTGIR),
    in pipeline order; () for a suffix no dialect claims."""
    suffix = suffix.lower()
    return tuple(d for d in _REGISTRY.values()
                 if d.backends and (suffix == f".{d.key}" or suffix in d.suffixes))


def recognize(suffix: str, head: str) -> Dialect | None:
    """The dialect of a stage file, by its suffix and the text at its top.

    A suffix one dialect claims is that dialect's; of several (".mlir"), the
    last in pipeline order whose `marks` the text has, else the first that
    has none (TTGIR when a ttg. attribute is there, TTIR otherwise).  None
    when no dialect claims the suffix, or its text has none of their `signs`.
    """
    found = for_suffix(suffix)
    if len(found) > 1:
        marked = [d for d in found if d.marks is not None and d.marks.search(head)]
        found = tuple(marked[-1:]) or tuple(d for d in found if d.marks is None)[:1]
    if not found:
        return None
    d = found[0]
    return d if d.signs is None or d.signs.search(head) else None


def kernel_name(head: str, key: str | None = None) -> str | None:
    """The kernel's name a stage file gives (`tt.func public @k(`, `.entry k(`, `Function : k`...): its own
    dialect's pattern first, then every other dialect's in pipeline order."""
    own = [d for d in for_suffix(f".{key}")] if key else []
    seen: set[str] = set()
    for d in own + list(_REGISTRY.values()):
        rx = d.kernel_name
        if rx is None or rx.pattern in seen:
            continue
        seen.add(rx.pattern)
        m = rx.search(head)
        if m:
            return m.group(1)
    return None


def machine_stage(keys) -> str | None:
    """Of these stage keys, the first in pipeline order whose dialect counts instructions
    (PTX on CUDA, AMDGCN on HIP): the stage tables compare instruction classes on."""
    present = set(keys)
    return next((k for k, d in _REGISTRY.items() if k in present and d.classes), None)


# --------------------------------------------------------------------------
# Conveniences over one stage
# --------------------------------------------------------------------------


def parse_stage(key: str, text: str, *, first_line: int = 1, file: str = "") -> ParsedStage:
    return dialect(key).parse(text, file=file, first_line=first_line)


def annotate_stage(stage: ParsedStage) -> list:
    """The stage's notes; an annotator bug never breaks showing the stage (no notes instead)."""
    try:
        return dialect(stage.key).annotate(stage)
    except Exception:
        return []


def instructions(key: str, lines) -> list[tuple[object, Instr]]:
    """(line, Instr) for every line (a Line, or a raw str) the dialect counts (Instr.cls set)."""
    classify = dialect(key).classify
    out = []
    for line in lines:
        ins = classify(line if isinstance(line, str) else line.text)
        if ins is not None and ins.cls:
            out.append((line, ins))
    return out


def instruction_mix(stage: ParsedStage) -> dict[str, int]:
    """Fine mix: Instr.name -> count, in first-seen order (what Analysis.mix holds)."""
    counts: dict[str, int] = {}
    if not dialect(stage.key).classes:
        return counts
    for _, ins in instructions(stage.key, stage.lines):
        counts[ins.name] = counts.get(ins.name, 0) + 1
    return counts


def class_counts(key: str, text: str) -> dict[str, int]:
    """Coarse mix of raw stage text: class -> count, ordered as CLASSES (others after, sorted)."""
    counts: dict[str, int] = {}
    if not dialect(key).classes:
        return counts
    for _, ins in instructions(key, text.splitlines()):
        counts[ins.cls] = counts.get(ins.cls, 0) + 1
    return {k: counts[k] for k in order_classes(counts)}


def order_classes(classes) -> list[str]:
    present = set(classes)
    return [c for c in CLASSES if c in present] + sorted(present - set(CLASSES))


discover()
STAGE_KEYS: tuple[str, ...] = stage_keys()
# The compiled stages (everything but the source), in pipeline order.
PIPELINE: tuple[str, ...] = tuple(k for k in STAGE_KEYS if k != SOURCE)
