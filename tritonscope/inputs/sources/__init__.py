"""Kernels that already compiled: Triton caches, dumps, captures and stage files -> Artifacts.

Where a kernel comes from decides what exists of it, so this module reads
each place the way Triton (or `tritonscope capture`) wrote it and says
plainly what is missing.  Layouts, as Triton 3.6-3.9 write them
(triton/runtime/cache.py FileCacheManager, triton/compiler/compiler.py
`compile`):

- **Triton cache** (`TRITON_CACHE_DIR`, default ~/.triton/cache): one folder
  per cache key (base32), holding `<name>.json` (the metadata: target,
  options, `shared`, `hash`, `name`...), `__grp__<name>.json` (the group:
  file name -> absolute path), `<name>.source` (the TTIR `make_ir` gave,
  before any pass; newer Tritons), `.ttir .ttgir .llir .ptx .cubin` (AMD:
  `.ttir .ttgir .llir .amdgcn .hsaco`).  With TRITON_STORE_BINARY_ONLY=1
  only the binary (`.cubin`, `.hsaco`) and `.json` are kept.
- **Inductor cache** (`$TMPDIR/torchinductor_<user>`): Triton caches under
  `triton/<device>/`, plus the generated kernel modules (`xx/cxxx.py`) that
  the IR's locations name.
- **Kernel dump** (`TRITON_KERNEL_DUMP=1`, `TRITON_DUMP_DIR`): one folder per
  *source* hash, with every stage and `<name>.sass`, but no metadata.
- **Capture** (`tritonscope capture`, see capture.py): `capture.json`, then
  `kernels/<hash>/` (stage files as in the cache + `record.json`: Python
  source, file/line, signature, constexprs, options) and per-process
  `launches-<pid>.json` / `autotune-<pid>.json`.
- **A single stage file**: .ttir .ttgir .llir .ptx .cubin .sass .amdgcn
  .hsaco .json.

Which stages a kernel has, and in what order, is the dialect registry's
(`dialects.stages(backend)`): an entry's backend (CUDA or HIP) comes from its
metadata's target, else from its files.  Listing reads metadata only (JSON,
the capture records, the cubin's ELF `.nv.info` for registers and stack, the
hsaco's AMDGPU metadata note for VGPRs, SGPRs, LDS and scratch): 1,000
kernels list in well under 2 s.  Stages are read when one kernel is opened
(`load_artifact`).  Nothing here imports Triton; SASS and resources of a
cubin come from triton_api/cubin.py (the bundled nvdisasm/cuobjdump), those
of an hsaco from codeobject.py (no ROCm tools).

The package, one module a job; each imports only those above it:

    readers.py    safe reads: sizes bounded, JSON depth, heads and tails, the lines IR files name
    model.py      Source, KernelEntry and the stage/binary tables
    emit.py       --emit folders (all or nothing) and their checks
    files.py      what a path is and what each found file records (metadata, lone stages, cubins)
    capture.py    captures: records, launches, autotuning
    entry.py      open_source(path)
    choose.py     one kernel of a listing; filters and sorting
    load.py       one kernel's stages and spec, guesses marked; the recorded environment
    recompile.py  recompiling what was found, elsewhere
"""


from __future__ import annotations

from tritonscope.inputs.sources.readers import (  # noqa: F401
    _head_and_tail, _megabytes, _read_head, _read_json, _read_text, asm_location, check_size, def_location,
    ir_location, llir_location,
)
from tritonscope.inputs.sources.model import (  # noqa: F401
    BINARIES, CAPTURE_FORMAT, DERIVED, KernelEntry, SINGLE_FILE_EXTS, STAGE_EXTS, Source, TEXT_STAGES,
    binary_ext, expected_files, target_of,
)
from tritonscope.inputs.sources.emit import (  # noqa: F401
    binaries_of, binaries_of_artifact, check_emit_dir, check_emitted, cubin_of, emit_files,
)
from tritonscope.inputs.sources.files import (  # noqa: F401
    EIATTR_FRAME_SIZE, EIATTR_REGCOUNT, EIATTR_REQNTID, FACT_ORDER, MixedCompileError, _INDUCTOR_DIRS,
    _INT_FIELDS, _amd_facts, _check_text,
    _code_object, _cubin_arch, _entries_in, _facts_without_metadata, _folder_entry, _inductor_context,
    _is_inductor_cache, _shared_suffix_stage, _name_in_stage, _names, _names_or_none, _nv_info, _nv_info_payloads,
    _read_binary_facts, _stage_names, _subdirs, _threads_to_warps, amdgcn_facts, check_metadata,
    check_one_compile, cubin_facts, cubin_metadata, file_entry, hsaco_facts, llir_facts, nvidia_llir_facts,
    ptx_facts, stage_facts, ttgir_facts,
)
from tritonscope.inputs.sources.capture import (  # noqa: F401
    _RECORD_TYPES, _capture, _check_record,
)
from tritonscope.inputs.sources.entry import (  # noqa: F401
    _open_dir, open_source,
)
from tritonscope.inputs.sources.choose import (  # noqa: F401
    SORT_FIELDS, _WHERE_RE, filter_rows, find_entry, sort_rows,
)
from tritonscope.inputs.sources.load import (  # noqa: F401
    DEFAULT_NUM_STAGES, _ENV_NAME_RE, _MLIR_TO_TRITON, _PTX_VERSION_RE, _WITHOUT_BINARY,
    _amd_resources, _environment_notes, _kind_words, _python_stage, _read_binary, _spec_of, _tool_words,
    function_block, load_artifact, recorded_environment, recorded_option, signature_from_ttir,
)
from tritonscope.inputs.sources.recompile import (  # noqa: F401
    _SEARCHED, _captured_function, _compile_now, _compile_payload, _compiled_from_json,
    _cross_vendor_note, _has_loop_values, _ptxas_note, _recompile_child, _renamed_note, _replay_warnings,
    recompile,
)
