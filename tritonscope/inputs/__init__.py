"""What comes in: samples and user kernels, and what Triton or a program left behind.

    limits.py       how large a file is read (reports, stage files)
    kernels.py      find a kernel (sample, file:kernel, module:kernel), import it, describe its launches
    sources/        caches, dump folders, lone stage files, reports: read, choose, load, recompile
    capture.py      record the kernels a real program compiles and launches
    codeobject.py   AMD code objects (hsaco) -> what the kernel uses
    compile_errors.py  Triton's compile exception -> a typed error naming the kernel's line and parameter

Imports core, triton_api and language.
"""
