"""A pointer chosen by a runtime `if` between two kernel arguments, compiled for gfx942.

The pattern of vLLM's Mamba2 `_chunk_scan_fwd_kernel` (vllm/model_executor/layers/mamba/ops/ssd_chunk_scan.py,
ROCm/triton#924): `prev_states_ptr` is `initstates_ptr + ...` in one branch and `states_ptr + (pid_c - 1) * ...`
(a 64-bit offset) in the other.  Triton 3.6 fails in TritonAMDGPUCanonicalizePointers, one of the two passes
its AMD backend runs only with buffer ops on: ConvertSCFIfOp asserts (`expected then fat ptr canNarrow and else
fat ptr canNarrow to be equal`).  AMDGCN_USE_BUFFER_OPS=0 compiles it; Triton 3.9 compiles it.
tests/test_failure_buffer_ops.py compiles it:

    tritonscope compile tests/data/failing/pointer_select_amd.py:select_kernel --arch gfx942 \\
        --arg init_ptr='*fp32' --arg states_ptr='*fp32' --arg seq_ptr='*i32' --arg out_ptr='*fp32' \\
        --arg stride=8192 -c BLOCK=64
"""

import triton
import triton.language as tl


@triton.jit
def select_kernel(init_ptr, states_ptr, seq_ptr, out_ptr, stride: tl.int64, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    seq = tl.load(seq_ptr + pid)
    prev = tl.load(seq_ptr + pid - 1, mask=pid >= 1, other=-1)
    if seq != prev:
        base = init_ptr + seq * stride
    else:
        base = states_ptr + (pid - 1) * stride
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + pid * BLOCK + offs, tl.load(base + offs))
