"""The base every layer may use: records, errors, the writer, and a few leaves.

    model.py        the data that flows through tritonscope (records, no behaviour)
    errors.py       typed errors and the documented exit codes
    gpus.py         the GPUs known by name, and the peak table bench and explain read
    env.py          cache folders and the Env a command runs in
    output.py       the one writer (atomic files; the cache's size cap via cache_prune.py)
    sanitize.py     the one sanitizer for text that reaches a terminal or a text report
    console.py      rich consoles (width, NO_COLOR, pager)
    child.py        run one function in a child Python process, with typed errors back

Imports nothing of tritonscope outside core (layers: tests/test_imports.py).
"""
