"""When Triton fails: what Triton's text means, in plain words (analyses/failure.py's KNOWN patterns).

Each Known is a pattern of Triton's error, a diagnostic or an assertion, its plain words, and, where one is
known, a change to the kernel's source that avoids it: in words, and as a rewrite of the kernel's file (or of
the failing op's line) that analyses/failure.check_fixes compiles on a copy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Known:
    """A pattern in Triton's error, diagnostics or failing pass, what it means, and what fixes it."""

    pattern: re.Pattern
    plain: str                                  # may use {0}, {1} ... for the pattern's groups
    source_fix: str = ""                        # a change to the kernel's source that avoids it, in words
    # that change as (regex, replacement) on the kernel's file: checked by compiling a copy of the file
    rewrite: tuple[tuple[str, str], ...] = ()
    # or on the failing op's Python line only: the first (regex, replacement) that changes it, once
    line_rewrite: tuple[tuple[str, str], ...] = ()


# A cast from one fp8 format to another, done through fp32 on the op's line (fp8 to fp32 is exact)
_VIA_FP32 = ("cast through fp32: x.to(tl.float32).to(<fp8 type>) instead of x.to(<fp8 type>) (fp8 to fp32 is exact, "
             "so the one rounding is the cast's own)")
_VIA_FP32_REWRITE = ((r"\.to\(", ".to(tl.float32).to("),
                     (r"\btl\.cast\(([^,()]+),", r"tl.cast(tl.cast(\1, tl.float32),"))
# A cast asking to round toward zero, done with the default rounding instead (other results: said so)
_ROUND_NEAREST = ("drop fp_downcast_rounding=\"rtz\" from the cast: it then rounds to nearest even, which gives "
                  "other results for values between two numbers of the narrower type")
_ROUND_NEAREST_REWRITE = ((r",\s*fp_downcast_rounding\s*=\s*[\"']rtz[\"']", ""),)

KNOWN: tuple[Known, ...] = (
    # Implicit conversion of CUDA __nv_rsqrtf device function has been dropped; please, update your source ...
    Known(re.compile(r"Implicit conversion of CUDA (__nv_\w+) device function has been dropped"),
          "The kernel calls CUDA's libdevice ({0}, from tl.extra.cuda.libdevice), and this compile is for an AMD GPU, "
          "which has no libdevice.",
          source_fix="call tl.extra.libdevice.<op> (triton.language.extra.libdevice), which picks the target's "
                     "library, instead of tl.extra.cuda.libdevice.<op>",
          rewrite=((r"\b(tl|triton\.language)\.extra\.cuda\.libdevice\b", r"\1.extra.libdevice"),
                   (r"\bfrom triton\.language\.extra\.cuda import libdevice\b",
                    "from triton.language.extra import libdevice"))),
    # error: Failures have been detected while processing an MLIR pass pipeline
    Known(re.compile(r"Failures have been detected while processing an MLIR pass pipeline"),
          "A pass failed, so Triton stopped the compile (the location is the kernel's, not the op's)."),
    # note: Pipeline failed while executing `NVGPUWarpSpecialization` on 'builtin.module' operation
    Known(re.compile(r"Pipeline failed while executing `?\[?`?(\w+)"),
          "The pass that failed is {0}."),
    # Dominance.cpp: ... Assertion `aBlock && bBlock && "expected non-null blocks"' failed.
    Known(re.compile(r"Dominance\.cpp.*Assertion"),
          "The pass broke the IR it was rewriting (a value's definition was lost): a crash inside Triton, caught "
          "by MLIR. This is a Triton bug or an unsupported case, not an error in the kernel's Python."),
    # MFMA.cpp:505: ... Assertion `type.isF16() && "Unsupported data type"' failed.
    Known(re.compile(r"(DotOpToLLVM|MFMA|WMMA|MMAv\d|WGMMA)\w*\.cpp.*Unsupported data type"),
          "The lowering of tt.dot to the target's matrix instructions ({0}) has no case for this dot's element "
          "type: this Triton cannot compile this dot for this target."),
    # CanonicalizePointers.cpp:1433: ... "expected then fat ptr canNarrow and else fat ptr canNarrow to be equal"
    Known(re.compile(r"CanonicalizePointers\.cpp.*expected then fat ptr canNarrow and else fat ptr canNarrow"),
          "The two branches of an `if` give a pointer each, and the AMD pass that splits pointers into a base and "
          "an offset (for buffer ops) cannot merge them: it can narrow one branch's offset to 32 bits and not the "
          "other's (a 64-bit or possibly negative offset). A Triton bug or an unsupported case, not an error in "
          "the kernel's Python."),
    # LLVM ERROR: unsupported load type for producer commit (3.9); WSLowerToken.cpp:73: Assertion `false' failed.
    # (in mlir::processProducerCommitOp) (3.6): a warp-specialized loop's producer has a load that is not TMA's
    Known(re.compile(r"unsupported load type for producer commit|processProducerCommitOp"),
          "Warp specialization on Hopper hands the loop's loads to producer warps, whose commit can signal only "
          "TMA loads (through a tensor descriptor); this loop loads through pointers (tl.load), a load type the "
          "pass does not support. A limitation of this Triton, not an error in the kernel's Python.",
          source_fix="load the loop's tiles through a tensor descriptor (tl.make_tensor_descriptor(...).load(...)) "
                     "instead of tl.load of pointers"),
    # StorageUniquerSupport.h:180: ... Assertion `succeeded(ConcreteT::verifyInvariants(...))' failed.
    Known(re.compile(r"StorageUniquerSupport\.h.*verifyInvariants"),
          "The pass built an attribute or type that its verifier refuses (Triton's error says which check "
          "failed): a Triton bug or a case this Triton does not support on this target, not an error in the "
          "kernel's Python."),
    # <unknown>:0: error: colStride must be 1, 2, or 4 but got but got 0
    Known(re.compile(r"colStride must be 1, 2, or 4 but got(?: but got)? (\d+)"),
          "The tensor-memory layout chosen for the dot's accumulator (Blackwell's tcgen05 MMA) has a column "
          "stride of 32 divided by the element's bits (1, 2 or 4 for 32-, 16- and 8-bit elements); for this "
          "element type it comes out {0}, which the layout's verifier refuses."),
    # Unsupported conversion from 'f8E5M2FNUZ' to 'f8E4M3FNUZ' (3.6, 3.9: the AMD lowering of tt.fp_to_fp)
    Known(re.compile(r"Unsupported conversion from '(f8\w*)' to '(f8\w*)'"),
          "The kernel casts one fp8 format to another ({0} to {1}: `.to(...)` makes a tt.fp_to_fp), and this "
          "Triton's lowering of tt.fp_to_fp for this target has no direct fp8-to-fp8 conversion: the front end "
          "accepts the cast, the backend cannot lower it. A limitation of this Triton, not an error in the "
          "kernel's Python.", source_fix=_VIA_FP32, line_rewrite=_VIA_FP32_REWRITE),
    # ElementwiseOpToLLVM.cpp:508: ... Assertion `roundingMode.has_value() && "Rounding mode must be specified for
    # convertsions to fp8"' failed.  (NVIDIA, 3.6 and 3.9: a cast from one fp8 format to another)
    Known(re.compile(r"Rounding mode must be specified for conver\w* to fp8"),
          "The cast converts to an fp8 format without a rounding mode: Triton's front end gives one only to a cast "
          "to a narrower type, and a cast from one fp8 format to another is not narrower, while the NVIDIA "
          "lowering of tt.fp_to_fp needs one for every conversion to fp8. A limitation of this Triton, not an "
          "error in the kernel's Python.", source_fix=_VIA_FP32, line_rewrite=_VIA_FP32_REWRITE),
    # ConvertFpCastOpToLLVM.cpp:2509: ... Assertion `maybeOutVals.has_value()' failed. (3.9, AMD: a conversion
    # that has no case for the cast's rounding mode, e.g. fp32 to fp8e4nv with fp_downcast_rounding="rtz")
    Known(re.compile(r"ConvertFpCastOpToLLVM\.cpp.*maybeOutVals\.has_value"),
          "Triton's AMD lowering of a float cast (tt.fp_to_fp) found a conversion for the two types but not for "
          "the rounding mode the cast asks for (fp_downcast_rounding): most of its conversions to fp8 round to "
          "nearest even only. A limitation of this Triton, not an error in the kernel's Python.",
          source_fix=_ROUND_NEAREST, line_rewrite=_ROUND_NEAREST_REWRITE),
    # Unsupported conversion from 'f32' to 'f8E4M3FN' with rounding mode rtz (3.6, AMD)
    Known(re.compile(r"Unsupported conversion from '(\w+)' to '(\w+)' with rounding mode (rtz)"),
          "The kernel casts {0} to {1} rounding toward zero (fp_downcast_rounding=\"{2}\": a tt.fp_to_fp), and this "
          "Triton's lowering of tt.fp_to_fp for this target has no such conversion: the front end accepts the "
          "cast, the backend cannot lower it.", source_fix=_ROUND_NEAREST, line_rewrite=_ROUND_NEAREST_REWRITE),
    # Unsupported conversion from 'f8E4M3FN' to 'f64'
    Known(re.compile(r"Unsupported conversion from '(\w+)' to '(\w+)'( with rounding mode \w+)?"),
          "The kernel casts {0} to {1}{2} (`.to(...)` makes a tt.fp_to_fp), and this Triton's lowering of "
          "tt.fp_to_fp for this target has no such conversion: the front end accepts the cast, the backend "
          "cannot lower it."),
    # ... Assertion `...' failed.   (any other C++ assertion)
    Known(re.compile(r"/([\w.]+\.(?:cpp|h)):(\d+): .*Assertion `(.*)' failed"),
          "A C++ assertion inside Triton failed ({0}:{1}: {2}): a Triton bug or an unsupported case."),
    # failed to legalize operation 'tt.foo'
    Known(re.compile(r"failed to legalize operation '([\w.]+)'"),
          "Triton has no lowering for {0} on this target (or for this use of it)."),
    # LLVM ERROR: operation destroyed but still has uses (with `'tt.load' op operation destroyed ...` at the op)
    Known(re.compile(r"operation destroyed but still has uses"),
          "The pass erased an op that other ops still use (MLIR's check when an op is destroyed; Triton's error "
          "points at the op): a Triton bug, not an error in the kernel's Python."),
    # operand #0 does not dominate this use
    Known(re.compile(r"does not dominate this use"),
          "A pass produced invalid IR (a value used before it is defined): a Triton bug."),
    # LLVM ERROR: Cannot select: ...
    # (report_fatal_error: LLVM's backend prints it, and so do Triton's and MLIR's passes)
    Known(re.compile(r"LLVM ERROR: (.*)"),
          "A fatal error stopped the compile: {0} (LLVM ERROR: LLVM's report_fatal_error, which LLVM's backend and "
          "Triton's own passes both call; when a pass failed, it is that pass's)."),
)


def explain_text(text: str) -> str:
    """The plain words of the first pattern of KNOWN that `text` matches ('' when none does)."""
    for known in KNOWN:
        m = known.pattern.search(text)
        if m:
            return known.plain.format(*m.groups(""))   # a group that took no part: ''
    return ""
