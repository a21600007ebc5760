"""Pass by pass: what each of Triton's compiler passes did to a kernel.

One compile runs in a child process with Triton's per-pass IR dumps
(`MLIR_ENABLE_DUMP`), pass timing (`MLIR_ENABLE_TIMING`) and diagnostics
(`MLIR_ENABLE_DIAGNOSTICS=remarks,warnings`) turned on, in a private
directory with a fresh `TRITON_CACHE_DIR` (a cache hit dumps nothing, and the
user's cache is never touched).  A child, because Triton reads those
variables from the environment and MLIR writes to file descriptor 2: nothing
of it leaks into the caller.  A stage hook points `MLIR_DUMP_PATH` at one file
per stage (ttir, ttgir, llir) and saves each stage's final module, which is
the "after" of the stage's last pass.

The dumps are big (the 128x256x64 grouped matmul on sm_90a gives about 21 MB
and 85,000 lines), so they are streamed: one dump at a time is summarised
(op counts, encodings, shared memory, locations per Python line) and only its
predecessor's line multiset is kept to count lines added and removed.  Step
texts stay in the files and are read back by byte offset when asked for
(`PassTrace.text`), so nothing holds the dump whole, let alone twice.

Triton's remarks are tied to their stage by the child's stderr ranges, and
to the pass that printed them by a second, partial compile that runs only
when there are remarks (attribute_remarks: the dumps go to a buffered file
here, so only dumps on stderr show which pass a diagnostic came from).

Dump headers are read, never matched against a list of pass names:

    3.6: // -----// IR Dump Before Canonicalizer (canonicalize) ('builtin.module' operation) //----- //
    3.9: // -----// IR Dump Before CanonicalizerPass: canonicalize{max-iterations=10 ...} ('tt.func' operation: @k) //----- //

This module returns data and never prints (render/passes_view.py draws it).

The package, one module a job (it imports only tritonscope.core.errors, .remarks and
the child's protocol; renderers and commands import it, never the reverse):

    model.py    the records: Step, TextRef, FindEvent, LineEvent, PassTrace
    classes.py  coarse op classes a pass adds or removes (async copy, wait, dot ...)
    read.py     dump headers, the streamed per-dump summaries, steps, pass timing
    query.py    --find, --line and one pass's diff
    run.py      the child that compiles with every dump on, following its dump file
    compare.py  where two pipelines first diverge (diff --passes)
"""


from __future__ import annotations

from tritonscope.analyses.passes.model import (  # noqa: F401
    DumpSummary, FindEvent, LineEvent, MLIR_STAGES, PassTrace, STAGE_TITLES, Step, TextRef,
)
from tritonscope.analyses.passes.classes import (  # noqa: F401
    CLASS_ORDER, line_classes, module_stage,
)
from tritonscope.analyses.passes.read import (  # noqa: F401
    STAGE_MARK, _ALIAS_RE, _DumpReader, _HEADER_RE, _Header, _INTERNAL_RE,
    _REPORT_MARK, _RawDump, _SHARED_RE, _STAGE_RE, _TIMING_RE, _compare, _content_stage,
    _is_layout, _unique, assign_times, parse_dump, parse_header, parse_timing, read_dumps, steps_from_file,
)
from tritonscope.analyses.passes.query import (  # noqa: F401
    DiffBlock, Hunk, PassDiff, _count_lines, _line_notes, _unified_range, check_query, find,
    line_history, normalized_text, numbered_lines, pass_diff, step_diff,
)
from tritonscope.analyses.passes.run import (  # noqa: F401
    _Progress, _child_result, _follow, _kernel_file_of, _key, _request_dict, _start_child, _trace_of,
    attribute_remarks, refuse_binary, remarks_by_pass, trace_failure, trace_from_dump, trace_passes,
)
from tritonscope.analyses.passes.compare import (  # noqa: F401
    Divergence, _op_deltas,
    first_divergence, skeleton, trace_both,
)
