"""Everything tritonscope knows about Triton's internals and version quirks.

Other modules use Triton only through here (and through its public API where
kernels run: `kernel[grid](...)` in runner.py, `triton.testing.do_bench` in
bench.py): the JIT entry point, the binder's specialization, kernel objects
(JITFunction, InterpretedFunction, Autotuner, their parameters), metadata,
the bundled NVIDIA tools, gluon layouts, the version.

Supported: Triton 3.6 to the newest 3.x.  Everything here imports triton
lazily so that `tritonscope --help` and `show report.json` never pay for it.

Fidelity: a compile goes through Triton's own JIT entry point
(`JITFunction.warmup`), with a stand-in driver whose target is the chosen
arch.  Triton's own binder specializes the stand-in arguments exactly as it
does real tensors (pointer alignment -> tt.divisibility=16, ints % 16, ints
equal to 1 -> constexpr, ints >= 2**31 -> i64), so the compiled IR is the
IR a real `kernel[grid](...)` launch produces on that GPU.

The package, one module a job; each imports only those above it:

    env.py        the version, the build stamp, the code-generation environment and cache knobs
    standins.py   stand-in tensors, descriptors and driver; device answers for import-time questions
    key.py        Triton's cache key, started early
    jit.py        compile through the JIT entry point; specialization; kernel objects; errors
    tools.py      the bundled NVIDIA tools, the local GPU, ld.lld
    gluon.py      layouts and bank conflicts from Triton's own gluon (in a child)
    recompile.py  recompiling from TTIR or a captured function
    cubin.py      a cubin -> its SASS (nvdisasm) and resource usage (cuobjdump), cached by cubin hash
    knobs.py      the recorded environment a recompile replays; ptxas versions
    remarks.py    Triton's remarks and warnings as data, captured around a compile

Imports core only (layers: tests/test_imports.py); every layer above may import it.
"""


from __future__ import annotations

from tritonscope.triton_api.env import (  # noqa: F401
    CODEGEN_ENV, KNOB_PREFIXES, _BUILD_FOLDERS, _BUILD_SKIPPED, _lock, cache_invalidating_env_names,
    codegen_env, jit_dependency_files, quiet_known_warnings, triton_build, triton_series, triton_version,
    wrap_stages,
)
from tritonscope.triton_api.standins import (  # noqa: F401
    Compiled, DeviceAnswers, StandInTensor, _BlockTorch, _HIP_NEEDS_TORCH, _PRINT_ONLY_ENV, _PatchTorchOnImport,
    _TORCH_CUDA_NAMES, _TorchCudaAnswers, _TorchCudaProperties, _diagnosed, _env,
    _hip_specializer_imports_torch, _hip_torch_probe_kept, _launch_env_vars, _stand_in_driver, _torch_dtype,
    _torch_hidden, device_answers, gpu_target, has_backend, installed_backends, stand_in_descriptor,
)
from tritonscope.triton_api.key import (  # noqa: F401
    _KEY_CHUNK, _KEY_RECIPES, _digest, _digest_state, _file_stamp, _install_key, _libtriton_in, _libtriton_path,
    _recipe_fingerprint, key_from_recipe, key_to_install, start_key_digest, stop_key_digest,
)
from tritonscope.triton_api.jit import (  # noqa: F401
    InterpretedKernel, _INTERNAL_OPTIONS, _InterpretedParam, _attrs, _is_a, _json_safe, autotune_configs,
    backend_option_names, check_interpreter_numpy, compilation_error_info, compile_kernel, is_out_of_resources,
    jit_function, kernel_params, launch_keywords, python_function, set_allocator,
    specialization_of,
)
from tritonscope.triton_api.tools import (  # noqa: F401
    SYSTEM_LLD_CANDIDATES, _tool_output, finish_tool, local_gpu_capability, run_tool,
    start_tool, tool_path,
)
from tritonscope.triton_api.gluon import (  # noqa: F401
    _bank_conflicts_child, _layout_from_text, _linear_layouts_batches, _linear_layouts_child,
    bank_conflicts_from_triton, linear_layouts_from_triton,
)
from tritonscope.triton_api.recompile import (  # noqa: F401
    _dtype_of, _is_dtype_name, _name_at, cache_folder, cached_stage_file, compile_ast, compile_from_ttir,
)
from tritonscope.triton_api.knobs import (  # noqa: F401
    CODEGEN_KNOBS, TOOL_KNOBS, _PTXAS_RELEASE_RE, _codegen_knobs, _ptxas_versions, _same_setting,
    cache_invalidating_env, codegen_environment, codegen_knob_keys, compile_tools, find_ptxas, ptxas_candidates,
    ptxas_knobs, ptxas_version, replay_environment, tool_knob_keys, use_original_ptxas,
)
