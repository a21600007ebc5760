"""The NVIDIA tools bundled with the wheel, the local GPU, and ld.lld for older AMD backends."""

from __future__ import annotations

import os
import subprocess

def tool_path(name: str, capability: int | None = None) -> str | None:
    """Path of a bundled tool: 'ptxas' (matching the arch), 'nvdisasm', 'cuobjdump'.

    Triton 3.4 and newer name them through knobs (and get_ptxas(arch) gives an object with .path); 3.3's
    get_ptxas(arch) gives (path, version), and 3.2 and 3.3 find every tool with _path_to_binary(name),
    (path, version), which looks where the knobs look (TRITON_<NAME>_PATH, the wheel's bin folder, PATH)."""
    try:
        from triton.backends.nvidia import compiler as nv

        from tritonscope.triton_api.env import knobs_module

        if name == "ptxas" and hasattr(nv, "get_ptxas"):
            found = nv.get_ptxas(capability or 80)
            return found.path if hasattr(found, "path") else found[0]
        knobs = knobs_module()
        if knobs is not None:
            return getattr(knobs.nvidia, name).path
        return nv._path_to_binary(name)[0]
    except Exception:  # a missing tool is reported by the caller as a warning
        return None


def run_tool(args: list[str], *, input_bytes: bytes | None = None, timeout: float = 120) -> str:
    result = subprocess.run(args, input=input_bytes, capture_output=True, timeout=timeout)
    return _tool_output(result.returncode, result.stdout, result.stderr)


def start_tool(args: list[str]) -> subprocess.Popen:
    """A bundled tool started in the background (its output read by finish_tool)."""
    return subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finish_tool(proc: subprocess.Popen, *, timeout: float = 120) -> str:
    """What a start_tool process printed; RuntimeError when it failed, or did not end within `timeout`."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:  # the timeout, or Ctrl-C: the tool goes too
        proc.kill()
        proc.communicate()
        raise
    return _tool_output(proc.returncode, out, err)


def _tool_output(returncode: int, out: bytes, err: bytes) -> str:
    if returncode != 0:
        raise RuntimeError((err or out).decode(errors="replace").strip() or f"exit {returncode}")
    return out.decode(errors="replace")


# --------------------------------------------------------------------------
# Local GPU
# --------------------------------------------------------------------------


def local_gpu_capability() -> int | None:
    """Compute capability of GPU 0 via nvidia-smi (no CUDA init, no torch)."""
    import shutil

    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    try:
        out = subprocess.run([smi, "--query-gpu=compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10).stdout.strip().splitlines()
        major, minor = out[0].strip().split(".")
        return int(major) * 10 + int(minor)
    except Exception:
        return None


# ==========================================================================


# System ld.lld candidates for Triton 3.4's AMD backend (versions/lld.py chooses among them and the
# ziglang wheel's).
SYSTEM_LLD_CANDIDATES = ("ld.lld", "ld.lld-21", "ld.lld-20", "ld.lld-19", "/usr/lib/llvm-21/bin/ld.lld",
                         "/usr/lib/llvm-20/bin/ld.lld", "/usr/lib/llvm-19/bin/ld.lld", "/opt/rocm/llvm/bin/ld.lld")
