"""The one module that touches Triton's internals, with every version shim.

Supported: Triton 3.6 to the newest 3.x.  Everything here imports triton
lazily so that `tritonscope --help` and `show report.json` never pay for it.

Fidelity: a compile goes through Triton's own JIT entry point
(`JITFunction.warmup`), with a stand-in driver whose target is the chosen
arch.  Triton's own binder specializes the stand-in arguments exactly as it
does real tensors (pointer alignment -> tt.divisibility=16, ints % 16, ints
equal to 1 -> constexpr, ints >= 2**31 -> i64), so the compiled IR is the
IR a real `kernel[grid](...)` launch produces on that GPU.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import Any

# Environment variables that change code generation: recorded in artifacts.
CODEGEN_ENV = (
    "TRITON_DEFAULT_FP_FUSION",
    "TRITON_F32_DEFAULT",
    "TRITON_DISABLE_LINE_INFO",
    "DISABLE_PTXAS_OPT",
    "PTXAS_OPTIONS",
    "USE_IR_LOC",
)

_lock = threading.Lock()


def version() -> str:
    import triton

    return triton.__version__


def version_tuple() -> tuple[int, int]:
    major, minor = version().split(".")[:2]
    return int(major), int("".join(c for c in minor if c.isdigit()) or 0)


def codegen_env() -> dict[str, str]:
    return {k: os.environ[k] for k in CODEGEN_ENV if k in os.environ}


def quiet_known_warnings() -> None:
    """3.9 warns once per process that TRITON_DEFAULT_FP_FUSION is unset.

    We keep Triton's default (fusion on, as every 3.x release has) and record
    the value in the artifact, so the warning only adds noise to the CLI.
    """
    import warnings

    warnings.filterwarnings("ignore", message="TRITON_DEFAULT_FP_FUSION is unset")


# --------------------------------------------------------------------------
# Stand-ins for a real launch
# --------------------------------------------------------------------------


class StandInTensor:
    """What Triton's specializer reads from a tensor: a dtype and data_ptr().

    A 16-byte-aligned address gives tt.divisibility = 16, as any tensor from
    PyTorch's caching allocator does.
    """

    def __init__(self, dtype_name: str, address: int = 0x10000):
        import triton.language as tl

        self.dtype = getattr(tl, dtype_name)
        self._address = address

    def data_ptr(self) -> int:
        return self._address


def _stand_in_driver(target):
    from triton.backends.driver import DriverBase

    class StandInDriver(DriverBase):
        """A driver that only answers 'what GPU is this?': the chosen arch."""

        def __init__(self):
            self.target = target

        @classmethod
        def is_active(cls):
            return False

        def get_current_target(self):
            return self.target

        def get_current_device(self):
            return ("tritonscope", target.arch)

        def get_current_stream(self, device=None):
            return 0

        def get_active_torch_device(self):
            return None

        def get_device_interface(self):
            return None

        def map_python_to_cpp_type(self, ty):
            return ty

        def get_benchmarker(self):
            return None

        def get_empty_cache_for_benchmark(self):
            return None

        def clear_cache(self, cache):
            pass

    return StandInDriver()


class _BlockTorch:
    """A meta-path finder that makes `import torch` fail fast."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("tritonscope compiles without torch")
        return None


@contextlib.contextmanager
def _torch_hidden():
    """Triton 3.6's specializer tries `import torch` to check isinstance(Tensor).

    Compiling never needs torch (stand-ins are not tensors), and importing it
    costs over a second, so block the import unless torch is already loaded.
    (3.9 only looks in sys.modules, so blocking the import is harmless there.)
    """
    if "torch" in sys.modules:
        yield
        return
    blocker = _BlockTorch()
    sys.meta_path.insert(0, blocker)
    try:
        yield
    finally:
        sys.meta_path.remove(blocker)


@contextlib.contextmanager
def _env(name: str, value: str | None):
    """Set an environment variable for the block (None: leave it as it is)."""
    if value is None:
        yield
        return
    previous = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = previous


@dataclass
class Compiled:
    asm: dict[str, Any]          # source, ttir, ttgir, llir, ptx, cubin
    metadata: dict[str, Any]
    kernel_hash: str


def compile_kernel(jit_fn, args: list[Any], constexprs: dict[str, Any], *, capability: int,
                   num_warps: int, num_stages: int, options: dict[str, Any] | None = None,
                   fresh: bool = False) -> Compiled:
    """Compile through Triton's JIT path for `capability`, with no GPU.

    `fresh` bypasses Triton's on-disk cache (TRITON_ALWAYS_COMPILE) for this
    one compile.
    """
    from triton.backends.compiler import GPUTarget
    from triton.runtime import driver

    quiet_known_warnings()
    target = GPUTarget("cuda", capability, 32)
    with _lock, _torch_hidden(), _env("TRITON_ALWAYS_COMPILE", "1" if fresh else None):
        previous = getattr(driver, "_active", None)
        driver.set_active(_stand_in_driver(target))
        try:
            jit_fn.device_caches.clear()  # never reuse another arch's binder
            kernel = jit_fn.warmup(*args, grid=(1,), num_warps=num_warps, num_stages=num_stages,
                                   **(options or {}), **constexprs)
        finally:
            jit_fn.device_caches.clear()
            # reset_active() would build the default driver, which raises
            # on a machine with no GPU: put back exactly what was there.
            driver._active = previous
    if hasattr(kernel, "result"):  # async compile mode
        kernel = kernel.result()
    meta = kernel.metadata
    meta_dict = meta._asdict() if hasattr(meta, "_asdict") else dict(vars(meta))
    return Compiled(asm=dict(kernel.asm), metadata=_json_safe(meta_dict), kernel_hash=str(meta_dict.get("hash", "")))


def _json_safe(value):
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def specialization_of(jit_fn, args: list[Any], constexprs: dict[str, Any], capability: int):
    """[(name, type, attrs, value)] as Triton's binder sees this launch."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import make_backend
    from triton.runtime.jit import create_function_from_signature

    backend = make_backend(GPUTarget("cuda", capability, 32))
    binder = create_function_from_signature(jit_fn.signature, jit_fn.params, backend)
    with _torch_hidden():
        _, specialization, _ = binder(*args, **constexprs)
    out = []
    for param, (ty, attr) in zip(jit_fn.params, specialization):
        out.append((param.name, str(ty), "" if attr is None else str(attr)))
    return out


def is_out_of_resources(exc: BaseException) -> bool:
    return type(exc).__name__ == "OutOfResources"


def compilation_error_info(exc: BaseException) -> tuple[str, int | None, str | None] | None:
    """(message, line number, source line) for Triton's CompilationError."""
    if type(exc).__name__ not in ("CompilationError", "CompileTimeAssertionFailure", "UnsupportedLanguageConstruct"):
        return None
    lineno = None
    node = getattr(exc, "node", None)
    src = getattr(exc, "src", None)
    if node is not None and hasattr(node, "lineno"):
        lineno = node.lineno
    line_text = None
    if src and lineno:
        lines = src.splitlines() if isinstance(src, str) else []
        if 0 < lineno <= len(lines):
            line_text = lines[lineno - 1].strip()
    message = getattr(exc, "error_message", None) or ""
    if not message:
        cause = exc.__cause__
        message = f"{type(cause).__name__}: {cause}" if cause else str(exc).strip().splitlines()[-1]
    return message, lineno, line_text


# --------------------------------------------------------------------------
# NVIDIA tools bundled with the wheel
# --------------------------------------------------------------------------


def tool_path(name: str, capability: int | None = None) -> str | None:
    """Path of a bundled tool: 'ptxas' (matching the arch), 'nvdisasm', 'cuobjdump'."""
    try:
        from triton import knobs

        if name == "ptxas":
            from triton.backends.nvidia import compiler as nv

            if hasattr(nv, "get_ptxas"):
                return nv.get_ptxas(capability or 80).path
            return knobs.nvidia.ptxas.path
        return getattr(knobs.nvidia, name).path
    except Exception:  # a missing tool is reported by the caller as a warning
        return None


def run_tool(args: list[str], *, input_bytes: bytes | None = None, timeout: float = 120) -> str:
    result = subprocess.run(args, input=input_bytes, capture_output=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError((result.stderr or result.stdout).decode(errors="replace").strip() or f"exit {result.returncode}")
    return result.stdout.decode(errors="replace")


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
# Layouts from Triton itself (the cross-check for layouts.py)
#
# Triton's gluon builder converts a layout to its linear layout.  It runs in a
# child process: in 3.6 converting a shared layout aborts the process, and a
# bad layout can kill it, so a crash must not take tritonscope down with it.
# ==========================================================================

_LAYOUT_CHILD = r'''
import json, sys
specs = json.load(sys.stdin)
import triton
from triton._C.libtriton import ir, gluon_ir
import triton.experimental.gluon.language._layouts as L

major, minor = (int(x) for x in triton.__version__.split(".")[:2])
shared_ok = (major, minor) >= (3, 9)
ctx = ir.context()
ir.load_dialects(ctx)
builder = gluon_ir.GluonOpBuilder(ctx)

def build(s, rank):
    k = s["kind"]
    if k == "blocked":
        return L.BlockedLayout(s["spt"], s["tpw"], s["wpc"], s["order"])
    if k == "slice":
        return L.SliceLayout(s["dim"], build(s["parent"], rank + 1))
    if k == "mma":
        return L.NVMMADistributedLayout(s["version"], s["wpc"], s["instr"])
    if k == "dot_op":
        return L.DotOperandLayout(s["op"], build(s["parent"], rank), s["k_width"])
    if k == "swizzled":
        return L.SwizzledSharedLayout(s["vec"], s["per_phase"], s["max_phase"], s["order"])
    if k == "nvmma_shared":
        return L.NVMMASharedLayout(s["swizzle"], s["bits"], rank, s["transposed"])
    raise ValueError("unknown layout kind " + k)

out = []
for item in specs:
    spec, shape = item["spec"], item["shape"]
    if spec["kind"] in ("swizzled", "nvmma_shared") and not shared_ok:
        out.append({"skipped": "Triton %s cannot convert shared layouts (it aborts the process); 3.9 can" % triton.__version__})
        continue
    try:
        ll = builder.to_linear_layout(build(spec, len(shape))._to_ir(builder), list(shape))
    except Exception as e:
        out.append({"error": "%s: %s" % (type(e).__name__, e)})
        continue
    if hasattr(ll, "offset_bases"):
        out.append({"bases": {"offset": ll.offset_bases}, "block": ll.block_bases})
    else:
        out.append({"bases": {"register": ll.reg_bases, "lane": ll.lane_bases, "warp": ll.warp_bases},
                    "block": ll.block_bases})
sys.stdout.write("\n@@TRITONSCOPE@@" + json.dumps(out) + "\n")
sys.stdout.flush()
import os
os._exit(0)  # skip interpreter teardown (nanobind leak reports)
'''


def linear_layouts_from_triton(items: list[dict[str, Any]], *, timeout: float = 120) -> list[dict[str, Any]]:
    """Triton's own linear layouts for [{"spec": layouts.triton_spec(enc), "shape": [..]}].

    Each result is {"bases": {...}} or {"skipped": why} or {"error": what}.
    All items run in one child process; if it dies, each item is retried
    alone so that one crashing layout only loses its own answer.
    """
    import json

    def run(batch):
        proc = subprocess.run([sys.executable, "-c", _LAYOUT_CHILD], input=json.dumps(batch),
                              capture_output=True, text=True, timeout=timeout)
        marker = proc.stdout.rfind("@@TRITONSCOPE@@")
        if marker < 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            raise RuntimeError(f"Triton's layout conversion died (exit {proc.returncode}): " + " | ".join(tail))
        return json.loads(proc.stdout[marker + len("@@TRITONSCOPE@@"):])

    try:
        return run(items)
    except RuntimeError:
        if len(items) == 1:
            raise
    results = []
    for item in items:
        try:
            results.append(run([item])[0])
        except RuntimeError as e:
            results.append({"error": str(e)})
    return results
