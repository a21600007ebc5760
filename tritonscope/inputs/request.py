"""The one record of what a launch passes (Request), and its checks: every value refused before any work.

pipeline/config.resolve runs `checked_arch` and `check_launch_options` once and returns the
Request with `checked` set; the binding (pipeline/binding.py) then asks Triton what it binds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from tritonscope.core.errors import UsageError
from tritonscope.core.model import ARCHES
from tritonscope.core.words import field_data, said, terms
from tritonscope.inputs.values import (canonical_arch, canonical_dtype, check_arg_text, check_number_text, parse_constexpr,
                                       parse_shape, shown_text)


# A launch's own words for its options (what `-w`, `-s`, --maxnreg, --num-ctas and --fp-fusion set,
# and what explain's fixes and diff's sides change): the field of a Request each one lives in.
LAUNCH_FIELDS = ("num_warps", "num_stages")
LAUNCH_OPTIONS = ("maxnreg", "num_ctas", "enable_fp_fusion")


@dataclass(frozen=True)
class Request:
    """The one record of what a launch passes: what the command line or the Python API asked for.

    Made with the user's words (`arch="H100"`, options unchecked); pipeline/config.resolve
    checks every value once and returns the same record with `checked` set, the arch
    canonical (a key of model.ARCHES) and never empty.  `asdict(request)` (payload()) is what a
    child process rebuilds it from.  What Triton then bound for it is the KernelSpec the
    binding makes (the kernel, every argument and constexpr, num_warps/num_stages, the config).
    """

    target: str
    constexprs: dict[str, str] = None  # type: ignore[assignment]
    args: dict[str, str] = None        # type: ignore[assignment]
    block: int | None = None
    num_warps: int | None = None
    num_stages: int | None = None
    arch: str | None = None
    shape: str | None = None
    dtype: str | None = None
    # Triton launch options a real launch can pass: maxnreg, num_ctas, enable_fp_fusion.
    options: dict[str, Any] = None     # type: ignore[assignment]
    # For an @triton.autotune kernel: which of its configs (1-based, after its prune_configs_by) to compile.
    config: int | None = None
    # The GPU a kernel file's import-time questions are answered for (--gpu; None: the arch's reference GPU).
    gpu: str | None = None
    # --grid as given: numbers or an expression in the kernel's arguments and constexprs (inputs/grid.py),
    # evaluated when the launch is bound; None: the grid of the kernel file's EXAMPLES launch, if any.
    grid: str | None = None
    # Set by pipeline/config.resolve once every value is checked and the arch canonical; never by hand.
    checked: bool = field(default=False, compare=False, repr=False)

    def with_launch(self, **words: Any) -> "Request":
        """This request with launch options changed, each by a launch's own keyword
        (num_warps=8, maxnreg=64, enable_fp_fusion=False): the one place that knows which field holds which."""
        unknown = set(words) - set(LAUNCH_FIELDS) - set(LAUNCH_OPTIONS)
        if unknown:
            raise ValueError(f"not a launch option: {', '.join(sorted(unknown))}")
        shape = {k: (None if v is None else int(v)) for k, v in words.items() if k in LAUNCH_FIELDS}
        options = {**(self.options or {}), **{k: v for k, v in words.items() if k in LAUNCH_OPTIONS}}
        return replace(self, **shape, options={k: v for k, v in options.items() if v is not None})

    def with_values(self, *, constexprs: dict | None = None, args: dict | None = None) -> "Request":
        """This request with constexprs and runtime arguments added (later ones win), as a launch's keywords."""
        return replace(self, constexprs={**(self.constexprs or {}), **{k: str(v) for k, v in (constexprs or {}).items()}},
                       args={**(self.args or {}), **{k: str(v) for k, v in (args or {}).items()}})

    def payload(self) -> dict[str, Any]:
        """The JSON-able form a child process rebuilds the request from (`Request(**payload)`)."""
        return asdict(self)


LAUNCH_SHAPE = LAUNCH_FIELDS  # launch options with flags of their own (-w, -s)


# The backends' launch options that are on/off (CUDAOptions / HIPOptions bool fields) and those that are a
# number: a launch passes each on to Triton's C++ option parser, which takes nothing else (a 19-line pybind
# signature for `enable_fp_fusion=banana`), so they are checked here, before any compile.
BOOL_OPTIONS = ("enable_fp_fusion", "sched4reg", "enable_reflect_ftz", "launch_cooperative_grid", "launch_pdl", "clc",
                "debug", "sanitize_overflow", "allow_flush_denorm", "fpsan_homomorphic_casts")
INT_OPTIONS = ("ptx_version", "min_shared_mem", "waves_per_eu", "matrix_instr_nonkdim", "kpack")


def recompile_changes(*, arch: str | None = None, num_warps: int | None = None, num_stages: int | None = None,
                      constexprs: dict[str, str] | None = None, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """A found kernel's recompile, as sources.recompile's keywords: only what was given, the arch canonical,
    the options checked ({} for none).  The command line and the Python API both build it here."""
    out: dict[str, Any] = {}
    if arch:
        out["arch"] = canonical_arch(arch)
    # checked as a compile's are (check_request): -w 3 reached Triton (exit 5), -w 64 and -s 0 compiled unsaid
    if num_warps is not None and num_warps not in WARPS:
        raise UsageError(f"{said('num_warps', num_warps)} is not a power of two from 1 to 32.",
                         hint="Use 1, 2, 4, 8, 16 or 32.", data=field_data("num_warps", num_warps))
    if num_stages is not None and num_stages < 1:
        raise UsageError(f"{said('num_stages', num_stages)} must be at least 1.",
                         hint="Use 1 (no pipelining) or more.", data=field_data("num_stages", num_stages))
    if num_warps is not None:
        out["num_warps"] = num_warps
    if num_stages is not None:
        out["num_stages"] = num_stages
    if constexprs:
        for name, text in constexprs.items():  # '1e999' (inf): exit 2 here, not a recompile that fails
            check_number_text("constexprs", name, text, parse_constexpr(text))
        out["constexprs"] = dict(constexprs)
    options = check_launch_options(options) if options else None
    if options:
        out["options"] = options
    return out


def check_launch_options(options: dict[str, Any] | None) -> dict[str, Any]:
    """{'maxnreg': 32, ...} checked: maxnreg 16..255 registers, num_ctas a power of two up to 16, an on/off
    option (enable_fp_fusion, launch_pdl, ...) a bool, a numeric one (waves_per_eu, ...) a whole number."""
    out = {k: v for k, v in (options or {}).items() if v is not None}
    for name, value in out.items():
        if name in BOOL_OPTIONS and not isinstance(value, bool):
            raise UsageError(f"{said('options', shown_text(value), key=name)}: {name} is on or off: give true or "
                             "false.", hint=f"For example: {said('options', True, key=name)}"
                             + (" (or --fp-fusion / --no-fp-fusion)."
                                if name == "enable_fp_fusion" and terms() == "cli" else "."),
                             data=field_data("options", shown_text(value), key=name))
        if name in INT_OPTIONS and (isinstance(value, bool) or not isinstance(value, int)
                                    or not 0 <= value < 2**31):
            raise UsageError(f"{said('options', shown_text(value), key=name)}: {name} takes a whole number from "
                             "0 up.", hint=f"For example: {said('options', 2, key=name)}.",
                             data=field_data("options", shown_text(value), key=name))
    maxnreg = out.get("maxnreg")
    if maxnreg is not None and not (isinstance(maxnreg, int) and 16 <= maxnreg <= 255):
        raise UsageError(f"{said('options', maxnreg, key='maxnreg')}: a register limit per thread from 16 to 255.",
                         hint=f"e.g. {said('options', 128, key='maxnreg')} (ptxas rounds it to what the target "
                              "allows).", data=field_data("options", maxnreg, key="maxnreg"))
    ctas = out.get("num_ctas")
    if ctas is not None and ctas not in (1, 2, 4, 8, 16):
        raise UsageError(f"{said('options', ctas, key='num_ctas')} is not a power of two from 1 to 16.",
                         data=field_data("options", ctas, key="num_ctas"),
                         hint="num_ctas > 1 makes a thread-block cluster (sm_90 and newer).")
    return out


WARPS = (1, 2, 4, 8, 16, 32)


def names_set_by_block(example: dict | None, constexpr_names: list[str]) -> list[str]:
    """The constexprs --block N sets: the example's "block" list, else every constexpr named like BLOCK."""
    return list((example or {}).get("block") or [n for n in constexpr_names if "BLOCK" in n.upper()])


def check_request(req: Request) -> Request:
    """Every value of a Request checked before any work: one message, exit 2 (UsageError), or 3 for an unknown arch.

    `-w 0`, `--arch ''`, `--block 0`, `--shape 0x4` or an --arg that is no
    tensor or number are refused here rather than replaced by a default or
    left for Triton to trip over.
    """
    checked_arch(req)
    return req


def checked_arch(req: Request) -> str | None:
    """check_request's checks, in its order; the arch the request names, canonical (None when it names none).
    pipeline/config.resolve keeps the answer, so that the arch is canonicalised once."""
    if req.num_warps is not None and req.num_warps not in WARPS:
        raise UsageError(f"{said('num_warps', req.num_warps)} is not a power of two from 1 to 32.",
                         hint="Use 1, 2, 4, 8, 16 or 32.", data=field_data("num_warps", req.num_warps))
    if req.num_stages is not None and req.num_stages < 1:
        raise UsageError(f"{said('num_stages', req.num_stages)} must be at least 1.",
                         hint="Use 1 (no pipelining) or more.", data=field_data("num_stages", req.num_stages))
    if req.block is not None and req.block < 1:
        raise UsageError(f"{said('block', req.block)}: a tile size is a positive whole number.",
                         hint=f"e.g. {said('block', 16)} (a power of two: tl.arange needs one).",
                         data=field_data("block", req.block))
    arch = None
    if req.arch is not None:
        if not req.arch.strip():
            raise UsageError(f"{said('arch')} is empty.", data=field_data("arch", req.arch),
                             hint=f"Name a target: {', '.join(ARCHES)}; or leave {said('arch')} out for the local "
                                  "GPU's (else sm_90a).")
        arch = canonical_arch(req.arch)
    if req.shape is not None:
        parse_shape(req.shape)
    if req.dtype is not None:
        canonical_dtype(req.dtype)
    for name, text in (req.args or {}).items():
        check_arg_text(name, text)
    return arch
