"""A compile that can end the whole process is made in a child, and its end is said as a compile error.

Triton 3.6's LLVM ends the process (exit 1, nothing on stderr) on NVIDIA inline PTX compiled for gfx942
(megatron-core's multimem all-gather): tritonscope exited 1 with no message.  Inline assembly for an AMD
target is now compiled in a child process; the zoo entry `megatron_multimem_all_gather` holds the exit code
(5 on Triton 3.6 and 3.9) and this file the decision and the message.
"""

from __future__ import annotations

import pytest

from tritonscope.inputs.kernels import Request
from tritonscope.pipeline.compile_path import INLINE_ASM_DIED, Pipeline, may_end_the_process
from tritonscope.pipeline.config import resolve

TARGET = "megatron.core.inference.communication.torch_symm_triton.collectives:_multimem_all_gather_kernel"
ARGS = {"local_ptr": "139637976727552", "multicast_ptr": "139912854634496", "signal_pad_ptrs": "139912787525632",
        "numel": "16777216"}
CONSTEXPRS = {"BLOCK_SIZE": "1024", "NUMEL_PER_THREAD": "8", "RANK": "0", "WORLD_SIZE": "8"}


@pytest.mark.needs("megatron", "torch")
@pytest.mark.parametrize("arch, guarded", [("gfx942", True), ("sm_90a", False)])
def test_inline_asm_in_a_called_function_is_found_for_amd_targets(arch, guarded):
    """The asm sits in @triton.jit helpers the kernel calls (multimem_st, get_flat_tid), not in the kernel."""
    req = Request(target=TARGET, args=ARGS, constexprs=CONSTEXPRS, num_warps=32, arch=arch)
    loaded = Pipeline(cache="off").bind(resolve(req))
    assert may_end_the_process(loaded) is guarded


def test_a_kernel_without_inline_asm_compiles_in_process_on_amd():
    loaded = Pipeline(cache="off").bind(resolve(Request(target="matmul", block=32, arch="gfx942")))
    assert may_end_the_process(loaded) is False


def test_the_message_names_the_kernel_and_what_was_known():
    text = INLINE_ASM_DIED.format(kernel="k", arch="gfx942")
    assert "without an error message" in text and "inline assembly" in text and "gfx942" in text
