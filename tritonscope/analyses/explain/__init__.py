"""Why a config is slow or does not fit, and what to change: verdicts from one compile.

`explain(analysis)` reads what one real compile produced (the TTGIR's
allocations, loops, dots and memory ops; the PTX/SASS instruction facts of
the dialect classifiers; the summary's fit, occupancy and spills; Triton's
remarks; live registers from `nvdisasm -lrm count`) and returns one Verdict
per finding.  Each verdict carries its evidence (stage, line, text), the
Python lines it is about, and a concrete fix.  Where a fix is cheap to test
(another num_stages or block size, a hint that an int argument is a
multiple of 16, more warps, a register cap), the caller's `recompile`
compiles it and the verdict says what that compile showed (`fix_checked`).

This module returns data and never prints (render/explain_view.py words it).
It never imports Triton: compiles go through the `recompile` callable the
command builds, and Triton's own bank-conflict count through triton_api in a
child process.

Verdict kinds, in the order they are reported:

    shared memory   each buffer's bytes (x copies), the total against the arch's limit,
                    and the largest num_stages / block size that fits (checked by compiling)
    occupancy       blocks per SM, the limiter, and what would lift it
    registers       registers per thread, the peak of live registers and the Python lines holding it
    spills          stack frame and STL/LDL, with the Python lines that spill
    global access   loads/stores narrower than they could be, why, and the hint that widens them
    pipelining      each loop: pipelined or not, with how many stages
    tensor cores    mma / wgmma / tcgen05 / MFMA / WMMA or FMA, and TF32
    bank conflicts  each shared load/store, from the layouts (and Triton's own count)
    waves           for a problem shape: tiles against SMs, the last wave's utilization
    roofline        for a problem shape: loop-aware FLOPs and bytes against the arch's peaks

A kernel that already compiled (what `tritonscope open` reads: a capture, a
Triton cache or dump, a single stage file) has only some of these inputs.
`inputs_of` says which; a verdict whose input is missing is not guessed but
listed in `Explanation.skipped` with the reason (a lone .ttgir has no
registers, a lone .ptx no layouts).  Tensor cores and access widths are read
from the PTX alone when there is no TTGIR.  A `recompile` that cannot
compile a change (no TTIR to recompile, constexprs folded into the IR)
raises FixNotCheckable, and the fix says "not checked" and why.

The package, one module a job (it imports tritonscope's data modules and mlir_syntax, never a
renderer or a command; the modules below import only those above them):

    model.py      Verdict, Fix, Explanation, the kinds and severities
    ttgir.py      the TTGIR's ops with their types, loops, allocations
    scalars.py    loop trip counts from one launch's arguments
    work.py       FLOPs and bytes per program, loop-aware
    inputs.py     what a compile or a found kernel's files let explain judge
    verdicts.py   what every family shares (lines, evidence, checked fixes)
    memory.py     shared memory, occupancy        registers.py  registers, spills
    access.py     global access width, banks      tensor.py     pipelining, tensor cores
    roofline.py   waves and the roofline for a problem shape
    entry.py      explain(analysis): every family in order
    check.py      the `check` language
    run.py        the orchestration: a compiled config or a found kernel -> (Analysis, Explanation), fixes
                  compiled through the caller's Pipeline (explain, check, compile --explain, the API)
"""


from __future__ import annotations

from tritonscope.analyses.explain.model import (  # noqa: F401
    Explanation, FixNotCheckable, KINDS, Recompile, SEVERITIES, Shape, Verdict, attach_explanation,
    explanation_of,
)
from tritonscope.analyses.explain.ttgir import (  # noqa: F401
    ASYNC_COPIES, DOTS, GLOBAL_LOADS, GLOBAL_STORES, Op, _BARE_MEMDESC_RE, _CONST_RE, _CONTIG_RE, _FOR_RE,
    _PTR_ELEM_RE, _SCALAR_RE, _pointee_bits, _prod, _tensor_bytes, _types, ttgir_ops,
)
from tritonscope.analyses.explain.scalars import (  # noqa: F401
    Scalars, _ARITH, _UNARY, function_args, trip_counts,
)
from tritonscope.analyses.explain.work import (  # noqa: F401
    Work, access_bytes, dot_flops, work,
)
from tritonscope.analyses.explain.inputs import (  # noqa: F401
    Inputs, _CUBIN, _METADATA_SHARED, _TTGIR, _occupancy_unknown, inputs_of,
)
from tritonscope.analyses.explain.verdicts import (  # noqa: F401
    _Ctx, _ev, _kib, _lines, _py_ev,
)
from tritonscope.analyses.explain.memory import (  # noqa: F401
    _block_names, _fits, _shared_fixes, _shared_from_buffers, shared_buffers, verdict_occupancy, verdict_shared,
)
from tritonscope.analyses.explain.registers import (  # noqa: F401
    _ADDR_RE, _LRM_RE, _SPILL_RE, _spill_fix, live_registers, parse_live_registers, verdict_registers,
    verdict_spills,
)
from tritonscope.analyses.explain.access import (  # noqa: F401
    _capability, _fastest_dim, _global_widths, _ldmatrix, _resolve, _undivisible_args, _width_fix,
    bank_conflicts, global_access, global_from_ptx, shared_accesses, triton_bank_conflicts,
    verdict_bank_conflicts, verdict_global,
)
from tritonscope.analyses.explain.tensor import (  # noqa: F401
    _DOT_CALL_RE, _dot_lines_only, _dot_unit, _pipeline_fix, tensor_cores_from_code, verdict_pipelining,
    verdict_tensor_cores,
)
from tritonscope.analyses.explain.roofline import (  # noqa: F401
    _compulsory_bytes, _peak_kind, gpu_peaks, verdict_shape,
)
from tritonscope.analyses.explain.entry import (  # noqa: F401
    CheckResult, Expectation, FLAGS, MEASURES, _ALIASES, _EXPECT_RE, _UNITS, apply_change, explain, lacks_of,
    parse_expectation, python_lines,
)
from tritonscope.analyses.explain.check import (  # noqa: F401
    VERDICT_OF, _CMP, evaluate, measure,
)
