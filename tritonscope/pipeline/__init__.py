"""The compile pipeline: a request bound as a launch, compiled once, cached.

    config.py       Request -> Config: every value checked, the arch resolved and canonicalised once
    compiler.py     Config -> Compiled: the one compile path (status line, result cache, timeout)
    binding.py      Config -> Loaded: bind one launch as Triton's launcher does
    compile.py      KernelSpec -> Artifact: the real Triton compile, SASS and resources
    result_cache.py whole compile results, read before Triton is entered
    artifact_io.py  an Artifact from its JSON form
    paths.py        path hygiene for stage texts and metadata
    interrupt.py    Ctrl-C that stops at once, even mid-compile
    replay.py       a repeated `compile` prints its kept output before anything heavy loads

Imports core, triton_api, language and inputs.
"""
