"""Encodings -> who owns which element, and where it lands in shared or tensor memory.

Triton describes every layout as a *linear layout*: a list of basis vectors
per hardware index (register, lane, warp, block for tensors in registers;
offset, block for shared memory; row, col for Blackwell tensor memory).  The
element owned by (block b, warp w, lane l, register r) is the XOR of the
bases whose bits are set in b, w, l and r.  This module is a pure-Python port
of Triton's own conversions (lib/Dialect/TritonGPU/IR/LinearLayoutConversions.cpp,
written anew from the C++, not copied) for:

    #ttg.blocked, #ttg.slice, #ttg.nvidia_mma (v2, v3), #ttg.dot_op (NVIDIA MMA, AMD MFMA/WMMA and
    FMA parents), #ttg.amd_mfma, #ttg.amd_wmma (versions 1-3, 3.6 warpsPerCTA and 3.9 ctaLayout),
    #ttg.linear, #ttg.swizzled_shared, #ttg.nvmma_shared, #ttg.amd_rotating_shared,
    #ttg.shared_linear, #ttg.padded_shared (its linear part; the padding is applied on top),
    #ttng.tensor_memory_encoding, #ttng.tensor_memory_scales_encoding,

each also spread over several CTAs (CGALayout / CTAsPerCGA: the block bases).
It never imports Triton: tests/test_layouts.py and tests/test_layout_corpus.py
compare it basis by basis with Triton's own conversion (run in a child
process, triton_api.linear_layouts_from_triton), on the samples' TTGIR and on
the encodings of Triton's lit tests.  Anything this module cannot reproduce
exactly is reported as text plus a note ("not drawn"), never guessed.

The package, one module a job; each imports only those above it (the family modules add their
builders to linear's dispatch table, so importing the package registers every family):

    parse.py    encoding strings -> Encoding, the field checks
    linear.py   LinearLayout, the dispatch, blocked / slice / nvidia_mma and their dot operands
    amd.py      MFMA and WMMA and their operands     bases.py   #linear, #shared_linear, #padded_shared
    shared.py   swizzled, rotating, partitioned, NVMMA shared      tmem.py   tensor memory and scales
    drawing.py  owner maps and placement for the drawings; checks on saved layout records
    kernel.py   every layout a compiled kernel's TTGIR uses
"""


from __future__ import annotations

from tritonscope.language.layouts.parse import (  # noqa: F401
    Encoding, KNOWN_ENCODINGS, MEMORY_LAYOUTS, MEMORY_SPACES, NVMMA_SWIZZLE_PHASES, SUPPORTED,
    _NON_NEGATIVE_INTS, _PERMUTATIONS, _POSITIVE_INTS, _POSITIVE_LISTS, _malformed, aliases_of, field_problem,
    parse_encoding, parse_shape,
)
from tritonscope.language.layouts.linear import (  # noqa: F401
    LayoutError, LinearLayout, ShapeRankError, _BUILDERS, _DOT_BUILDERS, _bases, _blocked, _broadcast_k,
    _cga_layout, _check_rank, _dot_cga, _dot_op, _fma_dot, _id, _int, _ints, _log2, _matrix_order, _mma_tile,
    _nvidia_dot, _nvidia_mma, _pow2_below, _rank_hint, _reshape, _shape_per_cta, _slice, _std, _transpose,
    blocked_drops_copies, combine_with_shape, ctas_of, identity_standard_nd, linear_layout,
)
from tritonscope.language.layouts.amd import (  # noqa: F401
    AMD_WAVE, RDNA_WAVE, _amd_mfma, _amd_wmma, _mfma_dot, _wmma_cta, _wmma_dot, _wmma_instr, _wmma_tile,
)
from tritonscope.language.layouts.bases import (  # noqa: F401
    _check_within, _fit, _linear, _padded_shared, _shared_linear, padded_offset, padding_of,
)
from tritonscope.language.layouts.shared import (  # noqa: F401
    _nvmma_shared, _partitioned_shared, _rotating_shared, _swizzled_shared,
)
from tritonscope.language.layouts.tmem import (  # noqa: F401
    _tensor_memory, _tensor_memory_scales, _tmem_one_cta,
)
from tritonscope.language.layouts.drawing import (  # noqa: F401
    IN_DIMS, LAYOUT_KINDS, LayoutUse, MAX_BASES_PER_DIM, WHOLE_GRID_LIMIT, _FACT_INT_LISTS, _bits_span,
    _int_list, _is_int, _ll_of, _per_cta_shape, _prod, _warp_map, _windowed, bank_of, box_preimage,
    check_layout_record, cta_grid, describe, distributed_facts, elements_of_thread, first_inputs, first_owners,
    instruction_tile, lanes_per_warp, offset_grid, owner_grid, partition_grid, row_read_conflicts, shared_facts,
    tmem_facts, tmem_grid,
)
from tritonscope.language.layouts.kernel import (  # noqa: F401
    _short_name, layouts_of, layouts_of_ttgir, text_spec, triton_spec,
)
