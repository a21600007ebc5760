"""Trim the device run's tarballs (tests/gpu/make_inductor_fixture.py) into this folder.

    python tests/data/inductor/make_inductor_data.py DIR_WITH_TARBALLS

- cache/: the Inductor cache without triton/: every generated module (`??/*.py`:
  the kernels, autotuning's candidates of the mm template among them, and the
  graph's compiled module that launches the kernels the model runs) and the
  `.best_config` files.  Left out: the graph's `.debug/` folder, locks,
  `.kernel_perf` files and the FX graph cache entry (`cache/`).
- debug/: the TORCH_COMPILE_DEBUG run's output_code.py only.
- triton/<kernel>/: from the GPU run's Triton cache, for each kernel the model
  ran, the compile of the config it launched (the folder named in REFERENCE):
  `.ttgir`, `.ptx` and the metadata `.json`.  The run compiled several configs
  of each tuned kernel (coordinate descent) in several processes, some with
  torch's ptxas (CUDA 13: PTX `.version 9.0`), some with Triton's (`.version
  8.7`); REFERENCE names the one whose num_warps/num_stages and block sizes are
  the launched config's (the .best_config's for the tuned kernels).
"""

from __future__ import annotations

import shutil
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
# kernel -> the Triton cache folder (prefix) holding the launched config's compile
REFERENCE = {
    "triton_tem_fused_addmm_t_0": "WDLM2QM6",
    "triton_per_fused_gelu_native_layer_norm_1": "EN2EEPC4",
    "triton_tem_fused_mm_transpose_2": "ZB4OHU5J",
    "triton_per_fused__softmax__to_copy_amax_mul_sub_3": "Q7VJWFDS",
    "triton_tem_fused__softmax__to_copy_mm_mul_sub_4": "E6GJZZGQ",
    "triton_tem_fused_addmm_t_5": "AXAWPARP",
    "triton_poi_fused_add_mul_6": "USYWAMFY",
}


def main() -> None:
    src = Path(sys.argv[1])
    work = Path(tempfile.mkdtemp())
    for name in ("cache", "debug", "triton"):
        with tarfile.open(src / f"inductor-{name}.tar.gz") as tar:
            tar.extractall(work / name, filter="data")
    for name in ("cache", "debug", "triton"):
        shutil.rmtree(HERE / name, ignore_errors=True)
    for path in sorted((work / "cache").glob("??/*")):
        if path.is_file() and path.suffix in (".py", ".best_config"):
            dest = HERE / "cache" / path.relative_to(work / "cache")
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, dest)
    for path in (work / "debug").glob("**/output_code.py"):
        dest = HERE / "debug" / "torchinductor" / path.parent.name / "output_code.py"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, dest)
    for kernel, prefix in REFERENCE.items():
        (folder,) = [p for p in (work / "triton").glob(f"*/{prefix}*") if p.is_dir()]
        dest = HERE / "triton" / kernel
        dest.mkdir(parents=True)
        for ext in ("ttgir", "ptx", "json"):
            shutil.copy(folder / f"{kernel}.{ext}", dest / f"{kernel}.{ext}")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
