"""How fast `tritonscope open` lists a big Triton cache (issue 11: 1,000 kernels in < 2 s, < 300 MB).

Builds a synthetic cache of N kernel folders by copying one real cache entry
(compiled here, sm_90a, no GPU needed) under new keys and names, then times
`tritonscope open CACHE --json` in a fresh process (imports included) and
reports its peak RSS.  Usage: python benchmarks/open_speed.py [N]
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def real_entry(base: Path) -> Path:
    """One real cache entry: the matmul sample compiled into a private Triton cache."""
    env = {**os.environ, "TRITON_CACHE_DIR": str(base / "seed")}
    subprocess.run([sys.executable, "-m", "tritonscope", "compile", "matmul", "--block", "16", "--arch", "sm_90a",
                    "--stage", "none"], env=env, check=True, capture_output=True)
    return next((base / "seed").glob("*/matmul_kernel.json")).parent


def synthetic_cache(seed: Path, folder: Path, n: int) -> None:
    files = {p.name: p.read_bytes() for p in seed.iterdir() if not p.name.startswith("__grp__")}
    meta = json.loads(files.pop("matmul_kernel.json"))
    for i in range(n):
        digest = hashlib.sha256(f"kernel-{i}".encode()).hexdigest()
        entry = folder / base64.b32encode(bytes.fromhex(digest)).decode().rstrip("=")
        entry.mkdir(parents=True)
        name = f"kernel_{i:04d}"
        group = {}
        for fname, data in files.items():
            target = entry / fname.replace("matmul_kernel", name)
            target.write_bytes(data)
            group[target.name] = str(target)
        m = {**meta, "name": name, "hash": digest, "num_warps": [1, 2, 4, 8][i % 4]}
        (entry / f"{name}.json").write_text(json.dumps(m))
        group[f"{name}.json"] = str(entry / f"{name}.json")
        (entry / f"__grp__{name}.json").write_text(json.dumps({"child_paths": group}))


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    with tempfile.TemporaryDirectory(prefix="tritonscope-open-speed-") as tmp:
        base = Path(tmp)
        seed = real_entry(base)
        cache = base / "cache"
        synthetic_cache(seed, cache, n)
        size = sum(p.stat().st_size for p in cache.rglob("*") if p.is_file())
        # a fresh process (imports included) that reports its own peak RSS on stderr
        probe = ("import resource, sys\nfrom tritonscope.cli import app\n"
                 "try:\n    app(args=sys.argv[1:], standalone_mode=False)\nfinally:\n"
                 "    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n")
        started = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", probe, "open", str(cache), "--json"],
                             capture_output=True, text=True)
        seconds = time.perf_counter() - started
        if out.returncode != 0:
            raise SystemExit(out.stderr)
        listed = len(json.loads(out.stdout)["kernels"])
        peak_mb = int(out.stderr.strip().splitlines()[-1]) / 1024  # Linux: KiB
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "tritonscope", "open", str(cache), "--sort", "-registers",
                        "--where", "name=kernel_0*", "--width", "150"], capture_output=True, check=True)
        table_seconds = time.perf_counter() - started
    print(f"open: {listed} kernels ({size / 1e6:.0f} MB on disk) listed in {seconds:.2f} s (--json), "
          f"{table_seconds:.2f} s (table, sorted and filtered); peak RSS {peak_mb:.0f} MB")
    if listed != n or seconds > 2 or peak_mb > 300:
        raise SystemExit(f"over budget: want {n} kernels in < 2 s and < 300 MB")


if __name__ == "__main__":
    main()
