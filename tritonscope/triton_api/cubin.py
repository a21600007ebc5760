"""A cubin -> its SASS (the bundled nvdisasm) and its resource usage (the bundled cuobjdump).

Both tools come with Triton's wheel (tools.tool_path finds them).  What they
print is kept by cubin hash under the cache's derived/ folder: nvdisasm costs
about 0.3 s, whatever the cubin.  cuda_resources reads cuobjdump's line into
the registers, stack, static shared memory and local memory of a kernel.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from pathlib import Path
from typing import Any, Callable

from tritonscope.core.env import cache_dir
from tritonscope.core.model import Artifact, Resources
from tritonscope.core.output import write_cache
from tritonscope.triton_api.recompile import cached_stage_file
from tritonscope.triton_api.tools import finish_tool, start_tool, tool_path


# The tools run on a cubin: name, flags, the warning when it is missing, and when it fails.
# nvdisasm's -ndf skips its dataflow analysis (a quarter of its time): on Triton's cubins the text is the
# same with and without it (615 cubins of every arch, nvdisasm 12.8 and 13; tests/test_sass_tools.py).
NVDISASM_FLAGS = ("-c", "-g", "-ndf")
_TOOLS = (
    ("nvdisasm", NVDISASM_FLAGS, "nvdisasm was not found (set TRITON_NVDISASM_PATH): the SASS stage is missing.",
     "nvdisasm failed, so there is no SASS stage"),
    ("cuobjdump", ("-res-usage",), "cuobjdump was not found (set TRITON_CUOBJDUMP_PATH): registers are unknown.",
     "cuobjdump failed, so registers are unknown"),
)


def sass_and_resources(cubin: bytes | None, warnings: list[str], *, meanwhile: Callable[[], None] | None = None,
                       disassemble: bool = True) -> tuple[str | None, str | None]:
    """The SASS (nvdisasm) and cuobjdump's resource usage of the cubin; each None, with a warning, when missing.

    Both tools run at once, and `meanwhile` (an optimisation only: what it
    raises is ignored) runs while they do: nvdisasm spends about 0.2 s setting
    itself up, whatever the cubin.  `disassemble=False` runs cuobjdump alone
    (a few milliseconds): the SASS is None unless the cache holds it.
    """
    if not cubin:
        warnings.append("No cubin in Triton's output: SASS and resource usage are not available.")
        return None, None
    key = hashlib.sha256(cubin).hexdigest()[:32]
    path = cache_dir() / "derived" / f"{key}.json"
    from tritonscope.core.cache_prune import load_entry, touch

    cached = load_entry(path)
    if isinstance(cached, dict) and all(isinstance(cached.get(k), (str, type(None))) for k in ("sass", "resources")):
        touch(path)  # it answered: used now
        return cached.get("sass"), cached.get("resources")
    out: dict[str, str | None] = {}
    with tempfile.TemporaryDirectory(prefix="tritonscope-") as tmp:
        cubin_path = Path(tmp) / "kernel.cubin"
        cubin_path.write_bytes(cubin)
        running = {}
        try:
            for name, flags, missing, failed in _TOOLS:
                if name == "nvdisasm" and not disassemble:
                    continue
                exe = tool_path(name)
                if not (exe and Path(exe).exists()):
                    warnings.append(missing)
                    continue
                try:
                    running[name] = (start_tool([exe, *flags, str(cubin_path)]), failed)
                except OSError as e:
                    warnings.append(f"{failed}: {e}")
            if meanwhile is not None and running:
                try:
                    meanwhile()
                except Exception:
                    pass
            for name in list(running):
                proc, failed = running.pop(name)
                try:
                    out[name] = finish_tool(proc)
                except Exception as e:
                    warnings.append(f"{failed}: {(str(e).splitlines() or ['?'])[0]}")
        finally:
            for proc, _ in running.values():  # Ctrl-C while a tool ran
                proc.kill()
                proc.wait()
    sass, res = out.get("nvdisasm"), out.get("cuobjdump")
    if sass is not None and res is not None:
        write_cache(path, json.dumps({"sass": sass, "resources": res}))  # an optimisation only: failures pass
    return sass, res


def add_sass(artifact: Artifact) -> bool:
    """The SASS stage of a compile made with sass=False, disassembled now from the cubin Triton's cache holds
    (False, with a warning, when the cubin is not there or nvdisasm gives nothing)."""
    cubin = cached_stage_file(artifact.kernel_hash, artifact.spec.kernel, "cubin")
    if not cubin:
        artifact.warnings.append("The cubin is not in Triton's cache: the SASS stage is missing.")
        return False
    sass, _ = sass_and_resources(cubin, artifact.warnings)
    if sass is None:
        return False
    artifact.stages["sass"] = sass
    return True


# Function matmul_kernel:
#     REG:40 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:528 TEXTURE:0 SURFACE:0 SAMPLER:0
_RES_RE = re.compile(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")


def cuda_resources(text: str | None, metadata: dict[str, Any]) -> Resources:
    """cuobjdump -res-usage's line (None: unknown) -> Resources; the dynamic shared memory is Triton's metadata's."""
    dynamic = int(metadata.get("shared") or 0)
    m = _RES_RE.search(text or "")
    if not m:
        return Resources(dynamic_shared=dynamic)
    reg, stack, shared, local = map(int, m.groups())
    return Resources(registers=reg, stack=stack, static_shared=shared, local=local,
                     dynamic_shared=dynamic)


