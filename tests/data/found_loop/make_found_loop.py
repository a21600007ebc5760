"""Make tests/data/found_loop/<series>/: a capture and a Triton cache of loop_kernels.py, compiled here (no GPU).

    python tests/data/found_loop/make_found_loop.py          # with the Triton of this environment

The kernels compile from /tmp/tritonscope-found-loop/loop_kernels.py (a copy), so the IR's locations name a
file that a test machine does not have: as with a capture or cache made on another machine.  The record's
`file` keeps that path; `module_text` holds the source.  Both 3.6 and 3.9 folders are checked in: a
recompile reproduces the original only with the Triton that made it.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
WHERE = Path("/tmp/tritonscope-found-loop")


def main() -> None:
    import triton

    series = ".".join(triton.__version__.split(".")[:2])
    out = HERE / series
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(WHERE, ignore_errors=True)
    WHERE.mkdir(parents=True)
    shutil.copy(HERE / "loop_kernels.py", WHERE / "loop_kernels.py")
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "TRITON_CACHE_DIR": str(Path(tmp) / "cache"), "TRITON_DEFAULT_FP_FUSION": "1"}
        for key in ("TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH", "TRITON_ALWAYS_COMPILE"):
            env.pop(key, None)
        subprocess.run([sys.executable, "-m", "tritonscope", "capture", "-o", str(out / "capture"), "--",
                        sys.executable, "loop_kernels.py"], cwd=WHERE, env=env, check=True)
        shutil.copytree(Path(tmp) / "cache", out / "cache")
    capture = json.loads((out / "capture" / "capture.json").read_text())
    capture["cwd"] = str(WHERE)
    (out / "capture" / "capture.json").write_text(json.dumps(capture, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
