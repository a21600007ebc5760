"""The language of the stages: what each line of TTIR, TTGIR, LLVM IR, PTX, SASS and AMDGCN means.

    dialects/       one descriptor per stage (how to parse it, what each op is, its class words, which
                    files are its); mlir_passes.py: what MLIR's pass manager prints (dump headers,
                    timing, the op classes a pass changes)
    mlir_syntax.py  the one reader of MLIR attribute and type syntax, and the one op-name and loc pattern
    encodings.py    TTGIR layout encodings with their real numbers
    layouts/        linear layouts, checked against Triton's own (through triton_api)
    refs.py         where each annotation's facts come from

Imports core and triton_api only.
"""
