"""Make the small capture checked in under tests/data/capture/ (run on a GPU machine).

    python tests/gpu/make_capture_fixture.py OUT_DIR [TARBALL]

Captures `capture_programs.py small` (add_kernel launched with an aligned and
an unaligned input -- two specializations -- and an autotuned kernel with
three configs), then makes it portable: absolute paths of this machine are
replaced by paths relative to the repository, so the CPU tests can open it
anywhere.  Copy OUT_DIR to tests/data/capture/.

It also packs OUT_DIR into one tarball (TARBALL, default OUT_DIR.tar.gz),
whose members are relative to OUT_DIR, since the device machine hands back
only a few files, at most two folders deep:

    mkdir -p tests/data/capture && tar -xzf capture.tar.gz -C tests/data/capture
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "capture-fixture").resolve()
    if out.exists():
        shutil.rmtree(out)
    tmp = out.parent / (out.name + "-triton-cache")
    env = {**os.environ, "TRITON_CACHE_DIR": str(tmp),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-m", "tritonscope", "capture", "-o", str(out), "--", sys.executable,
                    "tests/gpu/capture_programs.py", "small"], cwd=ROOT, env=env, check=True)
    shutil.rmtree(tmp, ignore_errors=True)
    # portable: the repository's absolute path becomes "." in every text file (IR locations, records)
    root = str(ROOT)
    for path in out.rglob("*"):
        if path.is_file() and path.suffix != ".cubin":
            text = path.read_text(errors="surrogateescape")
            if root in text:
                path.write_text(text.replace(root + "/", "").replace(root, "."), errors="surrogateescape")
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"capture fixture: {out} ({size / 1024:.0f} KiB)")
    tarball = Path(sys.argv[2] if len(sys.argv) > 2 else str(out) + ".tar.gz").resolve()
    tarball.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tarball, "w:gz") as tar:
        for path in sorted(out.rglob("*")):
            if path.is_file():
                tar.add(path, arcname=str(path.relative_to(out)), recursive=False)
    with tarfile.open(tarball) as tar:
        names = tar.getnames()
    print(f"capture tarball: {tarball} ({tarball.stat().st_size / 1024:.0f} KiB, {len(names)} files; "
          f"unpack with: tar -xzf {tarball.name} -C tests/data/capture)")


if __name__ == "__main__":
    main()
