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


SYSTEM_LLD_CANDIDATES = ("ld.lld", "ld.lld-21", "ld.lld-20", "ld.lld-19", "/usr/lib/llvm-21/bin/ld.lld",
                         "/usr/lib/llvm-20/bin/ld.lld", "/usr/lib/llvm-19/bin/ld.lld", "/opt/rocm/llvm/bin/ld.lld")
LLD_HINT = ("Triton {version}'s AMD backend needs ld.lld, which its wheel lacks: install LLVM's lld "
            "(Debian/Ubuntu: apt-get install lld-19) or set TRITON_HIP_LLD_PATH to an ld.lld of LLVM 19 or newer.")


def lld_for_env(backends_dir: str | None) -> str | None:
    """An ld.lld for an environment's AMD backend: its wheel's own, TRITON_HIP_LLD_PATH, else a system one.

    `backends_dir` is that environment's triton/backends folder (None: unknown).
    Returns None when none is found (then LLD_HINT says what to install).
    """
    import shutil

    if backends_dir and os.path.exists(os.path.join(backends_dir, "amd", "llvm", "bin", "ld.lld")):
        return os.path.join(backends_dir, "amd", "llvm", "bin", "ld.lld")
    given = os.environ.get("TRITON_HIP_LLD_PATH")
    if given and os.path.exists(given):
        return given
    for name in SYSTEM_LLD_CANDIDATES:
        found = shutil.which(name) if "/" not in name else (name if os.path.exists(name) else None)
        if found:
            return found
    return None
