"""The compile pipeline: a request bound as a launch, compiled once, cached.

    config.py         Request -> Config: every value checked, the arch resolved and canonicalised once
    compile_path.py   Config -> Compiled: the one compile path every caller takes (status line, result cache,
                      timeout)
    binding.py        Config -> Loaded: bind one launch as Triton's launcher does
    triton_compile.py Loaded -> Artifact: the real Triton compile (asked again when its cache answered for
                      another file or without remarks), its stages, SASS and resources
    remarks_cache.py  Triton's remarks kept by kernel hash, for a compile its cache answered
    child_compile.py  the same compile in a child process (a time limit, another Triton)
    result_cache.py   whole compile results, read before Triton is entered
    artifact_io.py    an Artifact from its JSON form
    paths.py          path hygiene for stage texts and metadata
    interrupt.py      Ctrl-C that stops at once, even mid-compile
    replay.py         a repeated `compile` prints its kept output before anything heavy loads

Imports core, triton_api, language and inputs.
"""
