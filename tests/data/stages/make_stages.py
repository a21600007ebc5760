"""Regenerate the checked-in stage files from real compiles with the installed Triton.

    python tests/data/stages/make_stages.py      (run once per Triton venv)

Writes tests/data/stages/<series>/<case>/{python,ttir,ttgir,llir,ptx,sass,meta.json}
with absolute paths made relative (tritonscope.pipeline.paths.relativize).
"""

from __future__ import annotations

import json
import os
import site
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = {
    "matmul_b16_sm80": dict(target="matmul", block=16, arch="sm_80"),
    "matmul_b16_sm90a": dict(target="matmul", block=16, arch="sm_90a"),
    "matmul_grouped_sm90a": dict(target="matmul_grouped", arch="sm_90a"),
}


def main() -> None:
    # A fresh Triton cache: a cache hit can carry another file's path in its locations.
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="ts-stages-")
    os.environ["TRITONSCOPE_CACHE_DIR"] = tempfile.mkdtemp(prefix="ts-derived-")
    from tritonscope import triton_api
    from tritonscope.pipeline.triton_compile import compile_artifact
    from tritonscope.inputs.kernels import Request
    from tritonscope.pipeline.binding import build_spec
    from tritonscope.pipeline.paths import relativize

    series = ".".join(map(str, triton_api.triton_series()))
    sites = [p for p in site.getsitepackages() if os.path.isdir(p)]
    for name, kw in CASES.items():
        a = compile_artifact(build_spec(Request(**kw), "sm_90a"))
        out = HERE / series / name
        out.mkdir(parents=True, exist_ok=True)
        folder = os.path.dirname(a.spec.file)
        for key, text in a.stages.items():
            text = relativize(text, folder)
            for sp in sites:
                text = relativize(text, sp, "<site-packages>")
            (out / key).write_text(text)
        meta = {"kernel": a.spec.kernel, "target": a.spec.target, "file": "./" + os.path.basename(a.spec.file),
                "first_line": a.python_first_line, "constexprs": a.spec.constexprs, "num_warps": a.spec.num_warps,
                "num_stages": a.spec.num_stages, "arch": a.spec.arch, "shape": a.spec.shape, "dtype": a.spec.dtype,
                "grid": a.spec.grid, "args": a.spec.args, "triton": a.triton_version}
        (out / "meta.json").write_text(json.dumps(meta, indent=1, default=list) + "\n")
        print(name, {k: len(t.splitlines()) for k, t in a.stages.items()}, file=sys.stderr)


if __name__ == "__main__":
    main()
