"""Everything tritonscope knows about Triton's internals and version quirks.

Other modules use Triton only through here (and through its public API where
kernels run: `kernel[grid](...)` in runner.py, `triton.testing.do_bench` in
bench.py): the JIT entry point, the binder's specialization, kernel objects
(JITFunction, InterpretedFunction, Autotuner, their parameters), metadata,
the bundled NVIDIA tools, gluon layouts, the version.

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
from dataclasses import dataclass, field
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


def triton_version() -> str:
    """The installed Triton's version, '3.9.0' (read from package metadata: no import)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("triton")
    except PackageNotFoundError:  # a source checkout on sys.path
        import triton

        return triton.__version__


def wrap_stages(wrap, keys, *, cache_part: str) -> None:
    """Have Triton run each compile stage in `keys` ('ttir', 'ttgir', 'llir') as `wrap(key, stage_fn)`.

    Through Triton's public `knobs.runtime.add_stages_inspection_hook`: 3.6
    and 3.9 call it with the backend's stage table to edit, and 3.9 first
    calls it with no arguments for a part of the cache key (`cache_part`),
    so that wrapped compiles do not share cache entries with plain ones.
    """
    import hashlib

    from triton import knobs

    def hook(*args):
        if not args:
            return cache_part, hashlib.sha256(cache_part.encode()).hexdigest()
        table = args[1]
        for key in keys:
            if key in table:
                table[key] = wrap(key, table[key])
        return None

    knobs.runtime.add_stages_inspection_hook = hook


def triton_series() -> tuple[int, int] | None:
    """(major, minor) of the installed Triton, e.g. (3, 9); None when Triton is not installed."""
    try:
        major, minor = triton_version().split(".")[:2]
    except Exception:
        return None
    return int(major), int("".join(c for c in minor if c.isdigit()) or 0)


def codegen_env() -> dict[str, str]:
    return {k: os.environ[k] for k in CODEGEN_ENV if k in os.environ}


# --------------------------------------------------------------------------
# What a compile result depends on (result_cache.py): the build, read without
# importing Triton, and what Triton itself says changes its cache key
# --------------------------------------------------------------------------

# The folders of the triton package whose files make a build: the ones
# triton_key() hashes (compiler, backends, language, libtriton), plus runtime
# (the JIT and its binder) and the tools bundled in backends/*/bin and lib.
_BUILD_FOLDERS = ("compiler", "backends", "language", "runtime", "_C")
_BUILD_SKIPPED = ("__pycache__", "include")  # CUDA headers only build the launcher


def triton_build() -> dict[str, str] | None:
    """{'version', 'path', 'stamp'} of the installed Triton, without importing it; None if absent.

    `stamp` digests the path, size and mtime of every file in the folders
    Triton's own cache key hashes (libtriton.so included).  Triton hashes
    their *contents* in every process that enters its JIT (`triton_key()`,
    about 0.45 s here, most of it the 400 MB libtriton); a reinstall,
    upgrade or rebuild changes sizes or mtimes, which is what tells builds
    apart at a cost of about a hundred stat calls.
    """
    import hashlib
    import importlib.util
    import re

    try:
        found = importlib.util.find_spec("triton")
    except (ImportError, ValueError):
        return None
    if found is None or not found.origin:
        return None
    root = os.path.dirname(os.path.realpath(found.origin))
    digest = hashlib.sha256()
    try:
        init = open(found.origin, "rb").read()
    except OSError:
        return None
    digest.update(init)
    for folder in _BUILD_FOLDERS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, folder)):
            dirnames[:] = sorted(d for d in dirnames if d not in _BUILD_SKIPPED)
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                digest.update(f"{os.path.relpath(path, root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    # __version__ = '3.9.0'
    m = re.search(rb"""^__version__\s*=\s*['"]([^'"]+)['"]""", init, re.MULTILINE)
    version = m.group(1).decode() if m else triton_version()
    return {"version": version, "path": root, "stamp": digest.hexdigest()}


def cache_invalidating_env_names() -> list[str]:
    """The environment variables Triton says change its cache key (3.6 and 3.9 alike).

    `get_cache_invalidating_env_vars()` answers only with the ones that are
    set, so each candidate is set for the length of one call: the names
    knobs.py declares, the code-generation ones we know, and any set variable
    that looks like a compiler knob.  Imports Triton: call it once per build
    and keep the answer (result_cache.py does).
    """
    import re

    from triton import knobs
    from triton._C.libtriton import get_cache_invalidating_env_vars

    try:
        with open(knobs.__file__, encoding="utf-8") as f:
            declared = f.read()
    except OSError:
        declared = ""
    # env_bool("TRITON_DEFAULT_FP_FUSION", True)
    candidates = set(re.findall(r"""["']([A-Z][A-Z0-9_]{3,})["']""", declared)) | set(CODEGEN_ENV)
    candidates |= {k for k in os.environ if k.startswith(KNOB_PREFIXES)}
    with _lock:
        unset = [k for k in candidates if k not in os.environ]
        try:
            for k in unset:
                os.environ[k] = "1"
            names = set(get_cache_invalidating_env_vars())
        finally:
            for k in unset:
                os.environ.pop(k, None)
    return sorted(names)


# Prefixes of the variables Triton, MLIR, LLVM and ptxas read: result_cache.py
# keys on every set variable that starts with one (a superset of Triton's list).
KNOB_PREFIXES = ("TRITON_", "MLIR_", "LLVM_", "NVPTX", "PTXAS", "AMDGCN_", "DISABLE_", "ALLOW_", "USE_IR_",
                 "ENABLE_", "AMD_", "HIP_", "ROCM_")


def jit_dependency_files(jit_fn) -> list[str]:
    """Source files of the @triton.jit functions `jit_fn` calls, directly or not, itself included.

    Triton's JIT folds called kernels (and the globals they read) into its
    cache key; this follows the same names (`helper(x)`, `module.helper(x)`)
    through each function's globals, to name the files a result depends on.
    """
    seen: set[int] = set()
    files: set[str] = set()

    def names_of(code) -> set[str]:
        out = set(code.co_names)
        for const in code.co_consts:
            if hasattr(const, "co_names"):
                out |= names_of(const)
        return out

    def visit(fn) -> None:
        if fn is None or id(fn) in seen:
            return
        seen.add(id(fn))
        py = getattr(fn, "fn", None)
        code = getattr(py, "__code__", None)
        if code is None:
            return
        files.add(code.co_filename)
        scope = getattr(py, "__globals__", {})
        names = names_of(code)
        for name in names:
            value = scope.get(name)
            if value is None:
                continue
            if type(value).__name__ == "module":
                for attr in names:
                    member = getattr(value, attr, None)
                    if type(member).__name__ == "JITFunction":
                        visit(member)
            elif type(value).__name__ == "JITFunction":
                visit(value)

    visit(jit_fn)
    return sorted(files)


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
    PyTorch's caching allocator does.  `offset` (elements) moves the address
    the way a view with a storage offset does (x[2:]), so Triton's own
    specializer sees an unaligned pointer and drops the hint.

    A kernel's @triton.heuristics and autotune pruning read more of a tensor
    (its shape, strides, numel, dtype): a stand-in of known shape answers as a
    contiguous tensor (or its .T view) would.  Its dtype is torch's when the
    kernel file has loaded torch (heuristics compare with torch dtypes), else
    triton.language's; Triton specializes both alike.
    """

    def __init__(self, dtype_name: str, address: int = 0x10000, offset: int = 0, numel: int | None = None,
                 shape: tuple[int, ...] | None = None, transposed: bool = False):
        import triton.language as tl

        tl_dtype = getattr(tl, dtype_name)
        self.dtype = _torch_dtype(dtype_name) or tl_dtype
        elem = max(1, tl_dtype.primitive_bitwidth // 8)
        self._elem = elem
        self._address = address + offset * elem
        self._shape = tuple(shape) if shape is not None else None
        self._transposed = transposed
        if numel is not None:
            # The AMD backend asks a tensor for the bytes behind it (HIPBackend.is_within_2gb: a
            # torch tensor's untyped_storage().size(), or `ptr_range()`): under 2 GiB it may use
            # buffer loads with 32-bit offsets (tt.pointer_range = 32).  Only a tensor of known
            # shape answers; a bare pointer, like a tensor of unknown size, does not.
            storage = (offset + numel) * elem
            self.ptr_range = lambda: storage

    def data_ptr(self) -> int:
        return self._address

    # what heuristics and prune functions read of a tensor of known shape
    @property
    def shape(self) -> tuple[int, ...]:
        if self._shape is None:
            raise AttributeError("a bare pointer (*DTYPE) has no shape: describe the tensor as DTYPE[dims]")
        return tuple(reversed(self._shape)) if self._transposed else self._shape

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self.shape[dim]

    def stride(self, dim: int | None = None):
        dims = self._shape if self._shape is not None else self.shape
        strides, step = [], 1
        for d in reversed(dims):
            strides.insert(0, step)
            step *= d
        strides = tuple(reversed(strides)) if self._transposed else tuple(strides)
        return strides if dim is None else strides[dim]

    def dim(self) -> int:
        return len(self.shape)

    ndim = property(dim)

    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def element_size(self) -> int:
        return self._elem

    def is_contiguous(self) -> bool:
        return not self._transposed

    @property
    def device(self):
        torch = sys.modules.get("torch")
        return torch.device("cuda", 0) if torch is not None else "cuda:0"

    @property
    def is_cuda(self) -> bool:
        return True


# triton.language's dtype name -> torch's, where they differ
_TORCH_DTYPE_NAMES = {"float8e4nv": "float8_e4m3fn", "float8e5": "float8_e5m2", "int1": "bool"}


def _torch_dtype(dtype_name: str):
    """torch's dtype of that name, when the kernel file has loaded torch (never imported here)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    return getattr(torch, _TORCH_DTYPE_NAMES.get(dtype_name, dtype_name), None)


def stand_in_descriptor(name: str, dtype_name: str, block: tuple[int, ...], shape: tuple[int, ...] | None):
    """A host-side TensorDescriptor over a stand-in tensor, as TensorDescriptor.from_tensor makes one.

    Triton specializes it by dtype and block shape (`tensordesc<fp16[128, 64]>`); the tensor's shape
    and strides are runtime values, so with no shape given the tensor is one block.  Triton's own
    checks (16-byte aligned strides, a valid block shape) apply: a descriptor it would refuse at a
    launch is refused here, naming the argument.
    """
    from triton.tools.tensor_descriptor import TensorDescriptor

    from tritonscope.errors import KernelSpecError

    dims = tuple(shape) if shape is not None else tuple(block)
    numel = 1
    for d in dims:
        numel *= d
    base = StandInTensor(dtype_name, numel=numel, shape=dims)
    try:
        return TensorDescriptor.from_tensor(base, list(block))
    except (AssertionError, ValueError, TypeError) as e:
        raise KernelSpecError(f"--arg {name}: Triton refuses this tensor descriptor: {str(e) or type(e).__name__}.",
                              hint="The block's last dim must span at least 16 bytes, each block dim a power of "
                                   "two, and each row of the tensor 16-byte aligned.") from e


def _stand_in_driver(target, answers: "DeviceAnswers | None" = None):
    """A driver that only answers 'what GPU is this?': the chosen arch (and, while a kernel file
    imports, the device properties of the arch's reference GPU, each question noted in `answers`)."""
    from triton.backends.driver import DriverBase

    class StandInUtils:
        def get_device_properties(self, device=None):
            if answers is None:
                raise RuntimeError("no GPU: tritonscope compiles without one")
            return answers.driver_properties()

    class StandInDriver(DriverBase):
        """A driver that only answers 'what GPU is this?': the chosen arch."""

        def __init__(self):
            self.target = target
            self.utils = StandInUtils()

        @classmethod
        def is_active(cls):
            return False

        def get_current_target(self):
            if answers is not None:
                answers.note("the target")
            return self.target

        def get_current_device(self):
            return ("tritonscope", target.arch) if answers is None else 0

        def get_current_stream(self, device=None):
            return 0

        def get_active_torch_device(self):
            if answers is None:
                return None
            answers.note("the torch device")
            torch = sys.modules.get("torch")
            return torch.device("cuda", 0) if torch is not None else "cuda:0"

        def get_device_interface(self):
            return None if answers is None else answers.torch_cuda()

        def map_python_to_cpp_type(self, ty):
            return ty

        def get_benchmarker(self):
            return None

        def get_empty_cache_for_benchmark(self):
            return None

        def clear_cache(self, cache):
            pass

    return StandInDriver()


class DeviceAnswers:
    """What a kernel file is told when it asks for the GPU while it imports (or while its heuristics,
    autotune pruning or configs run): the target's own answers, from the arch's reference GPU.

    Tutorials and libraries build autotune configs at module level from
    `driver.active.get_current_target()`, `is_cuda()`/`is_hip()`, the SM count
    (`driver.active.utils.get_device_properties(...)["multiprocessor_count"]`,
    `torch.cuda.get_device_properties(0).multi_processor_count`) or the
    capability.  On a machine with no GPU they fail ("0 active drivers"); here
    they get the answers of the GPU being compiled for, and `asked` records
    each question so the summary can say that the import depended on them.
    """

    def __init__(self, target, gpu: dict[str, Any]):
        self.target = target
        self.gpu = gpu          # model.reference_device(arch): name, sms, capability, shared, regs, ...
        self.asked: list[str] = []

    def note(self, what: str) -> None:
        if what not in self.asked:
            self.asked.append(what)

    def driver_properties(self) -> dict[str, Any]:
        """As the driver's utils.get_device_properties(device) gives them (CUDA and HIP use the same keys)."""
        self.note("the device properties")
        g = self.gpu
        props = {"max_shared_mem": g["max_shared_mem"], "max_num_regs": g["max_num_regs"],
                 "multiprocessor_count": g["sms"], "warpSize": g["warp_size"]}
        for key in ("sm_clock_rate", "mem_clock_rate", "mem_bus_width"):
            if g.get(key) is not None:
                props[key] = g[key]
        if self.target.backend == "hip":
            props["arch"] = str(self.target.arch)
        return props

    def torch_cuda(self):
        """A stand-in for the parts of torch.cuda a kernel file asks at import (see _TorchCudaAnswers)."""
        return _TorchCudaAnswers(self)


class _TorchCudaProperties:
    def __init__(self, answers: DeviceAnswers):
        g = answers.gpu
        self.name = g["name"]
        self.major, self.minor = g["capability"]
        self.multi_processor_count = g["sms"]
        self.total_memory = g.get("memory_bytes", 0)
        self.warp_size = g["warp_size"]
        self.max_shared_memory_per_block_optin = g["max_shared_mem"]
        self.shared_memory_per_block_optin = g["max_shared_mem"]
        self.regs_per_multiprocessor = g["max_num_regs"]
        self.gcnArchName = str(answers.target.arch) if answers.target.backend == "hip" else ""
        self.is_integrated = False

    def __repr__(self) -> str:
        return f"_CudaDeviceProperties(name='{self.name}', multi_processor_count={self.multi_processor_count})"


class _TorchCudaAnswers:
    """torch.cuda's device questions answered for the target (patched onto torch.cuda while a file imports)."""

    def __init__(self, answers: DeviceAnswers):
        self._answers = answers

    def is_available(self) -> bool:
        self._answers.note("whether a GPU is there")
        return True

    def device_count(self) -> int:
        return 1

    def current_device(self) -> int:
        return 0

    def get_device_capability(self, device=None) -> tuple[int, int]:
        self._answers.note("the compute capability")
        return tuple(self._answers.gpu["capability"])

    def get_device_properties(self, device=None):
        self._answers.note("the device properties")
        return _TorchCudaProperties(self._answers)

    def get_device_name(self, device=None) -> str:
        self._answers.note("the device name")
        return self._answers.gpu["name"]


_TORCH_CUDA_NAMES = ("is_available", "device_count", "current_device", "get_device_capability",
                     "get_device_properties", "get_device_name")


class _PatchTorchOnImport:
    """A meta-path finder that patches torch.cuda (and torch.version.hip) once `import torch` finishes."""

    def __init__(self, patch):
        self._patch = patch

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        loader, patch = spec.loader, self._patch
        original = loader.exec_module

        def exec_module(module):
            original(module)
            patch(module)

        loader.exec_module = exec_module
        return spec


@contextlib.contextmanager
def device_answers(answers: DeviceAnswers):
    """While a kernel file imports (and its heuristics and pruning run): the stand-in driver answers for
    the target, and torch.cuda, if the file imports torch, answers as the target's GPU would.

    torch is never imported here: the patch goes on when the file's own `import torch` finishes (or at
    once, when torch is already loaded), and everything is put back afterwards.
    """
    from triton.runtime import driver

    saved: list[tuple[Any, str, Any]] = []

    def patch(torch) -> None:
        cuda = getattr(torch, "cuda", None)
        if cuda is not None:
            stand_in = answers.torch_cuda()
            for name in _TORCH_CUDA_NAMES:
                if hasattr(cuda, name):
                    saved.append((cuda, name, getattr(cuda, name)))
                    setattr(cuda, name, getattr(stand_in, name))
        version = getattr(torch, "version", None)
        if version is not None and hasattr(version, "hip"):
            saved.append((version, "hip", version.hip))
            version.hip = "tritonscope" if answers.target.backend == "hip" else None

    finder = None
    if "torch" in sys.modules:
        patch(sys.modules["torch"])
    else:
        finder = _PatchTorchOnImport(patch)
        sys.meta_path.insert(0, finder)
    previous = getattr(driver, "_active", None)
    driver.set_active(_stand_in_driver(answers.target, answers))
    try:
        with _hip_torch_probe_kept():
            yield answers
    finally:
        driver._active = previous
        if finder is not None and finder in sys.meta_path:
            sys.meta_path.remove(finder)
        for obj, name, value in reversed(saved):
            setattr(obj, name, value)


class _BlockTorch:
    """A meta-path finder that makes `import torch` fail fast."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("tritonscope compiles without torch")
        return None


@contextlib.contextmanager
def _torch_hidden(target=None):
    """Triton 3.6's specializer tries `import torch` to check isinstance(Tensor).

    Compiling never needs torch (stand-ins are not tensors), and importing it
    costs over a second, so block the import unless torch is already loaded.
    (3.9 only looks in sys.modules, so blocking the import is harmless there.)
    One exception: Triton 3.6's HIP backend imports torch unconditionally to
    specialize a pointer (HIPBackend.is_within_2gb), as a real AMD launch,
    which always has torch, does; for that target torch is let through.
    """
    if "torch" in sys.modules:
        yield
        return
    if target is not None and target.backend == "hip" and _hip_specializer_imports_torch():
        import importlib.util

        try:
            installed = importlib.util.find_spec("torch") is not None
        except (ImportError, ValueError):
            installed = False
        if installed:
            yield
            return
        # Triton 3.6's HIP specializer runs `import torch` before it asks the stand-in's ptr_range(), and
        # only asks torch whether a bare pointer is a Tensor (it is not): with no torch installed, a
        # module that answers that question does, and is gone afterwards.
        stub = type(sys)("torch")
        stub.Tensor = type("Tensor", (), {})
        sys.modules["torch"] = stub
        try:
            yield
        finally:
            if sys.modules.get("torch") is stub:
                del sys.modules["torch"]
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
    # Triton's remarks and warnings (remarks.Remark dicts), as this compile printed them.
    remarks: list[dict] = field(default_factory=list)
    # True when Triton's cache answered: it then prints no remarks at all, so
    # `remarks` is empty whatever the kernel (the caller keeps its own copy).
    cache_hit: bool | None = None


@contextlib.contextmanager
def _diagnosed(out: dict):
    """Collect a compile's remarks and whether Triton's cache answered, into `out`.

    Hold `_lock` around it: remarks.collect_remarks points file descriptor 2
    at a file, and the compilation listener is process-wide.

    MLIR_ENABLE_DIAGNOSTICS is one of the variables Triton puts in its cache
    key, yet it changes no byte of the kernel: it only makes MLIR print.  A
    real launch runs without it, so for the length of this compile the
    variable is left out of the key Triton computes (`_launch_env_vars`).  The
    kernel then has the launch's hash and metadata, and shares the launch's
    cache entry (a hit prints no remarks: the caller keeps its own copy).
    """
    from triton import knobs

    from tritonscope.remarks import collect_remarks

    previous = getattr(knobs.compilation, "listener", None)
    hits: list[bool] = []

    def listener(**kw):
        hits.append(bool(kw.get("cache_hit")))
        if previous is not None:
            previous(**kw)

    knobs.compilation.listener = listener
    try:
        with _launch_env_vars(), collect_remarks() as remarks:
            yield out
    finally:
        knobs.compilation.listener = previous
        out["remarks"] = [r.to_dict() for r in remarks]
        out["cache_hit"] = all(hits) if hits else None


# Variables that make Triton print but change nothing it generates.
_PRINT_ONLY_ENV = ("MLIR_ENABLE_DIAGNOSTICS",)


@contextlib.contextmanager
def _launch_env_vars():
    """Compute Triton's cache key from the variables a real launch would have.

    Triton 3.6 and 3.9 read `get_cache_invalidating_env_vars` through the
    names imported into `triton.compiler.compiler` and `triton.runtime.jit`;
    both are wrapped for the block to drop `_PRINT_ONLY_ENV`.
    """
    import importlib

    modules = [importlib.import_module(m) for m in ("triton.compiler.compiler", "triton.runtime.jit")]
    saved = [(m, m.get_cache_invalidating_env_vars) for m in modules if hasattr(m, "get_cache_invalidating_env_vars")]

    def wrap(original):
        def env_vars():
            found = dict(original())
            for name in _PRINT_ONLY_ENV:
                found.pop(name, None)
            return found
        return env_vars

    for m, original in saved:
        m.get_cache_invalidating_env_vars = wrap(original)
    try:
        yield
    finally:
        for m, original in saved:
            m.get_cache_invalidating_env_vars = original


# --------------------------------------------------------------------------
# Triton's cache key, its slow part started early
#
# Before its first compile in a process, Triton computes `triton_key()`:
# SHA-256 over its Python files and its 500 MB shared library (about 0.3 s,
# 40% of a cold bare compile).  `start_key_digest` hashes the library on a
# thread as soon as a command that compiles starts (hashlib lets go of the
# GIL while it hashes, so this runs beside typer and Triton's import), and
# `_install_key` then hands Triton the key made by Triton's own recipe with
# that digest, the way Triton's own compile-warmup pool hands a precomputed
# key to its workers.  Only a recipe known here (by the SHA-256 of
# triton_key's source: 3.6 and 3.9 are identical) is replayed; any other
# Triton, a library that changed meanwhile, or a key already computed is
# left to Triton.  The key names a compile in Triton's cache (and so its
# metadata hash) and changes no stage's text; tests check it is Triton's own.
# --------------------------------------------------------------------------

_KEY_RECIPES = frozenset({"7d2c8021b5b5b005dc2a4457bc365b3d"})  # sha256(source)[:32]: 3.6.0 and 3.9.0
_digest: dict[str, Any] = {}
_KEY_CHUNK = 64 << 20


def _libtriton_in(package_dir: str) -> str:
    """The shared library triton_key hashes, in Triton's package folder."""
    import sysconfig

    ext = (sysconfig.get_config_var("EXT_SUFFIX") or ".so").split(".")[-1]
    return os.path.join(package_dir, "_C", f"libtriton.{ext}")


def _libtriton_path() -> str | None:
    """The shared library triton_key hashes, found without importing Triton."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("triton")
    except (ImportError, ValueError):
        return None
    locations = list(getattr(spec, "submodule_search_locations", None) or [])
    return _libtriton_in(locations[0]) if locations else None


def _file_stamp(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def _digest_state() -> dict[str, Any] | None:
    """This process's digest, if one was started (a forked child has no thread: None)."""
    state = _digest.get("state")
    return state if state is not None and state["pid"] == os.getpid() else None


def start_key_digest() -> None:
    """Start hashing Triton's shared library on a daemon thread (once per process; imports no Triton)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if _digest_state() is not None or cores < 2:
        return  # started already, or no second core to hash on
    path = _libtriton_path()
    stamp = _file_stamp(path) if path else None
    if stamp is None:
        return
    state: dict[str, Any] = {"pid": os.getpid(), "path": path, "stamp": stamp, "stop": threading.Event()}

    def run():
        # Few, large updates over a mapping of the file: each hashlib call runs without the GIL, and
        # between calls this thread must win the GIL back from the busy main thread (up to 5 ms each;
        # 8 MB reads made the hash take 1.5 s instead of 0.3 s).
        import hashlib
        import mmap

        h = hashlib.sha256()
        try:
            with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                view = memoryview(mapped)
                try:
                    for start in range(0, len(mapped), _KEY_CHUNK):
                        if state["stop"].is_set():
                            return
                        h.update(view[start:start + _KEY_CHUNK])
                finally:
                    view.release()
        except (OSError, ValueError):
            return
        state["digest"] = h.hexdigest()

    state["thread"] = threading.Thread(target=run, name="tritonscope-key", daemon=True)
    _digest["state"] = state
    state["thread"].start()


def stop_key_digest() -> None:
    """No compile after all (the result cache answered): let the thread stop."""
    state = _digest_state()
    if state is not None:
        state["stop"].set()


def _recipe_fingerprint(fn) -> str | None:
    import hashlib
    import inspect

    try:
        return hashlib.sha256(inspect.getsource(fn).encode()).hexdigest()[:32]
    except (OSError, TypeError):
        return None


def key_from_recipe(library_digest: str) -> str:
    """triton_key() as Triton 3.6-3.9 compute it, with the library's digest given (runtime/cache.py)."""
    import hashlib
    import pkgutil

    import triton
    import triton.runtime.cache as cache

    def digest(file: str) -> str:
        with open(file, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()

    root = os.path.dirname(os.path.dirname(os.path.abspath(cache.__file__)))
    contents = [digest(cache.__file__)]
    for folder, prefix in ((os.path.join(root, "compiler"), "triton.compiler."),
                           (os.path.join(root, "backends"), "triton.backends.")):
        contents += [digest(lib.module_finder.find_spec(lib.name).origin)
                     for lib in pkgutil.walk_packages([folder], prefix=prefix)]
    contents.append(library_digest)
    contents += [digest(lib.module_finder.find_spec(lib.name).origin)
                 for lib in pkgutil.walk_packages([os.path.join(root, "language")], prefix="triton.language.")]
    return f"{getattr(cache, '__version__', triton.__version__)}" + "-".join(contents)


def _install_key() -> bool:
    """Give Triton its cache key from the early digest (see above); False when Triton computes its own."""
    state = _digest_state()
    if state is None or state.get("used"):
        return False
    state["used"] = True
    import triton.runtime.cache as cache

    key = key_to_install(state, cache.triton_key)
    if key is None:
        return False

    def triton_key() -> str:
        return key

    triton_key.original = cache.triton_key
    cache.triton_key = triton_key
    return True


def key_to_install(state: dict[str, Any], triton_key) -> str | None:
    """The key `triton_key` (Triton's function) would compute, made with `state`'s digest; None when unsure.

    Unsure: the key is computed already (or the function is not Triton's
    cached one), its recipe is not one known here, the digest is of another
    library file, or the file changed since it was hashed.
    """
    import triton.runtime.cache as cache

    if not hasattr(triton_key, "cache_info") or triton_key.cache_info().currsize:
        return None
    if _recipe_fingerprint(triton_key) not in _KEY_RECIPES:
        return None
    root = os.path.dirname(os.path.dirname(os.path.abspath(cache.__file__)))
    if os.path.realpath(_libtriton_in(root)) != os.path.realpath(state["path"]):
        return None
    state["thread"].join()
    digest = state.get("digest")
    if digest is None or _file_stamp(state["path"]) != state["stamp"]:
        return None
    try:
        return key_from_recipe(digest)
    except Exception:  # a file the recipe reads went missing: Triton computes (and reports) its own
        return None


def gpu_target(capability: int | None = None, target: tuple[str, Any, int] | None = None):
    """Triton's GPUTarget: ("hip", "gfx942", 64) as given, else CUDA's (capability, 32 threads per warp)."""
    from triton.backends.compiler import GPUTarget

    if target is not None:
        return GPUTarget(*target)
    return GPUTarget("cuda", capability, 32)


def has_backend(name: str) -> bool:
    """Whether the installed Triton holds a backend ("nvidia", "amd")."""
    return name in installed_backends()


def installed_backends() -> tuple[str, ...]:
    """The backends of the installed Triton, found as Triton finds them (a folder of triton/backends
    with a compiler.py), without importing triton: `samples` and `--help` stay fast."""
    import importlib.util
    from pathlib import Path

    try:
        spec = importlib.util.find_spec("triton")
    except (ImportError, ValueError):
        return ()
    if spec is None or not spec.submodule_search_locations:
        return ()
    found = []
    for root in spec.submodule_search_locations:
        folder = Path(root) / "backends"
        if folder.is_dir():
            found += [d.name for d in sorted(folder.iterdir()) if (d / "compiler.py").is_file()]
    return tuple(dict.fromkeys(found))


def _hip_specializer_imports_torch() -> bool:
    """Whether the HIP backend's pointer specialization imports torch even for an object with ptr_range()."""
    global _HIP_NEEDS_TORCH
    if _HIP_NEEDS_TORCH is None:
        try:
            from triton.backends.amd.compiler import HIPBackend
        except Exception:
            _HIP_NEEDS_TORCH = False
            return False

        class _Probe:
            def ptr_range(self):
                return 0

        blocker = _BlockTorch()
        sys.meta_path.insert(0, blocker)
        saved = getattr(HIPBackend, "_torch_available", None)
        try:
            HIPBackend.is_within_2gb(_Probe())
            _HIP_NEEDS_TORCH = False
        except ImportError:
            _HIP_NEEDS_TORCH = True
        except Exception:
            _HIP_NEEDS_TORCH = False
        finally:
            sys.meta_path.remove(blocker)
            HIPBackend._torch_available = saved
    return _HIP_NEEDS_TORCH


_HIP_NEEDS_TORCH: bool | None = None


@contextlib.contextmanager
def _hip_torch_probe_kept():
    """The HIP backend caches on its class whether torch imports (is_within_2gb); torch is hidden
    while we compile (the stand-ins answer through ptr_range()), so put that cache back afterwards."""
    try:
        from triton.backends.amd.compiler import HIPBackend
    except Exception:
        yield
        return
    saved = getattr(HIPBackend, "_torch_available", None)
    try:
        yield
    finally:
        HIPBackend._torch_available = saved


def launch_keywords(bound: dict[str, Any], *, num_warps: int, num_stages: int,
                    options: dict[str, Any] | None = None) -> dict[str, Any]:
    """One keyword launch: every parameter by name (as Triton binds them, in the kernel's order, whatever
    order constexprs and runtime arguments come in) plus the launch and backend options.  A constexpr
    named like an option (`num_stages`) is one keyword, which Triton gives to both."""
    keywords = {**(options or {}), "num_warps": num_warps, "num_stages": num_stages}
    keywords.update(bound)
    return keywords


def compile_kernel(jit_fn, bound: dict[str, Any], *, capability: int | None = None,
                   num_warps: int, num_stages: int, options: dict[str, Any] | None = None,
                   fresh: bool = False, remarks: bool = True, target: tuple[str, Any, int] | None = None) -> Compiled:
    """Compile through Triton's JIT path for `capability` (or `target`, e.g. ("hip", "gfx942", 64)), with no GPU.

    The stand-in driver reports the target, so that target's own backend
    specializes the arguments (the HIP backend adds tt.pointer_range = 32 for
    tensors under 2 GiB) and runs its own pipeline (AMDGCN and an hsaco on
    HIP).

    `fresh` bypasses Triton's on-disk cache (TRITON_ALWAYS_COMPILE) for this
    one compile.  `remarks` collects Triton's remarks and warnings into
    Compiled.remarks (off in the `passes` child, which reads its stderr whole).
    """
    from triton.runtime import driver

    quiet_known_warnings()
    _install_key()
    target = gpu_target(capability, target)
    seen: dict[str, Any] = {}
    with _lock, _torch_hidden(target), _hip_torch_probe_kept(), _env("TRITON_ALWAYS_COMPILE", "1" if fresh else None), \
            (_diagnosed(seen) if remarks else contextlib.nullcontext()):
        previous = getattr(driver, "_active", None)
        driver.set_active(_stand_in_driver(target))
        try:
            jit_fn.device_caches.clear()  # never reuse another arch's binder
            kernel = jit_fn.warmup(grid=(1,), **launch_keywords(bound, num_warps=num_warps, num_stages=num_stages,
                                                                options=options))
            if hasattr(kernel, "result"):  # async compile mode: the remarks come while it finishes
                kernel = kernel.result()
        finally:
            jit_fn.device_caches.clear()
            # reset_active() would build the default driver, which raises
            # on a machine with no GPU: put back exactly what was there.
            driver._active = previous
    meta = kernel.metadata
    meta_dict = meta._asdict() if hasattr(meta, "_asdict") else dict(vars(meta))
    return Compiled(asm=dict(kernel.asm), metadata=_json_safe(meta_dict), kernel_hash=str(meta_dict.get("hash", "")),
                    remarks=seen.get("remarks", []), cache_hit=seen.get("cache_hit"))


def _json_safe(value):
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def specialization_of(jit_fn, bound: dict[str, Any], capability: int | None = None,
                      target: tuple[str, Any, int] | None = None):
    """[(name, type, [attrs])] as Triton's binder sees this launch, e.g. ('x_ptr', '*fp16', ['tt.divisibility=16']).

    The target's backend decodes its own codes (parse_attr): "D" is divisible
    by 16 on every backend; the HIP backend's "S" is tt.pointer_range=32.
    """
    from triton.compiler import make_backend
    from triton.runtime.jit import create_function_from_signature

    gpu = gpu_target(capability, target)
    backend = make_backend(gpu)
    binder = create_function_from_signature(jit_fn.signature, jit_fn.params, backend)
    with _torch_hidden(gpu), _hip_torch_probe_kept():
        _, specialization, _ = binder(**bound)
    out = []
    for param, (ty, attr) in zip(jit_fn.params, specialization):
        out.append((param.name, str(ty), _attrs(backend, "" if attr is None else str(attr))))
    return out


def _attrs(backend, attr: str) -> list[str]:
    """A specialization code as attributes: "D" -> ['tt.divisibility=16'] (the backend's own parse_attr)."""
    if not attr:
        return []
    try:
        parsed = backend.parse_attr(attr)
    except Exception:
        parsed = None
    if not parsed:
        return [attr]  # a code this backend does not decode: shown as is
    return [f"{name}={value}" for name, value in parsed]


# --------------------------------------------------------------------------
# Kernel objects: what @triton.jit, @triton.autotune and the interpreter give
# --------------------------------------------------------------------------


def jit_function(obj):
    """The JITFunction behind `obj` (Autotuner and Heuristics wrap it in .fn), else None.

    Under TRITON_INTERPRET=1 @triton.jit gives an InterpretedFunction; it
    comes back wrapped as an `InterpretedKernel` with the same attributes.
    """
    seen = 0
    while obj is not None and seen < 8:
        if type(obj).__name__ == "JITFunction" and hasattr(obj, "params"):
            return obj
        if type(obj).__name__ == "InterpretedFunction":
            return InterpretedKernel(obj)
        obj = getattr(obj, "fn", None)
        seen += 1
    return None


def python_function(jit_fn):
    """The plain Python function a JITFunction compiles (for its source and line numbers)."""
    return jit_fn.fn


# Option fields a launch does not set as a keyword (Triton fills them from the target and its knobs).
_INTERNAL_OPTIONS = frozenset({"arch", "backend_name", "extern_libs", "supported_fp8_dtypes",
                               "deprecated_fp8_dot_operand_dtypes", "allowed_dot_input_precisions",
                               "instrumentation_mode", "fpsan_homomorphic_casts", "warp_size", "ir_override",
                               "llvm_fn_attrs", "ptx_options"})


def backend_option_names(backend: str) -> frozenset[str]:
    """The options a launch may pass to `backend`'s compile as keywords (its CUDAOptions / HIPOptions
    fields, less those Triton fills itself); empty when the installed Triton lacks that backend."""
    try:
        if backend == "hip":
            from triton.backends.amd.compiler import HIPOptions as options
        else:
            from triton.backends.nvidia.compiler import CUDAOptions as options
    except Exception:
        return frozenset()
    return frozenset(options.__dataclass_fields__) - _INTERNAL_OPTIONS


def _is_a(obj, class_name: str) -> bool:
    """Whether obj is a triton.runtime.autotuner class of that name, or a subclass of one."""
    return any(c.__name__ == class_name and c.__module__.startswith("triton.") for c in type(obj).__mro__)


def kernel_wrappers(obj) -> tuple[Any, list[Any]]:
    """(the Autotuner, the Heuristics wrappers outside-in) around a kernel, as a launch runs them."""
    tuner, heuristics, seen = None, [], 0
    while obj is not None and seen < 8 and not (type(obj).__name__ == "JITFunction" and hasattr(obj, "params")):
        if _is_a(obj, "Autotuner") and tuner is None:  # libraries subclass it (fla's CachedAutotuner)
            tuner = obj
        elif _is_a(obj, "Heuristics") and isinstance(getattr(obj, "values", None), dict):
            heuristics.append(obj)
        obj = getattr(obj, "fn", None)
        seen += 1
    return tuner, heuristics


def kernel_params(jit_fn) -> list[tuple[str, bool, Any]]:
    """[(name, is_constexpr, default)] in signature order."""
    import inspect

    out = []
    for p in jit_fn.params:
        default = p._default if hasattr(p, "_default") else getattr(p, "default", inspect.Parameter.empty)
        out.append((p.name, bool(p.is_constexpr), default))
    return out


class _InterpretedParam:
    """What kernel_params reads from a JITFunction's parameter."""

    def __init__(self, p):
        import inspect

        self.name = p.name
        ann = p.annotation
        self.is_constexpr = ann is not inspect.Parameter.empty and "constexpr" in str(getattr(ann, "__name__", ann))
        self._default = p.default


class InterpretedKernel:
    """An InterpretedFunction seen through the JITFunction attributes tritonscope reads."""

    def __init__(self, interpreted):
        import inspect

        self.interpreted = interpreted
        self.fn = interpreted.fn
        self.params = [_InterpretedParam(p) for p in inspect.signature(interpreted.fn).parameters.values()]


def autotune_configs(obj) -> list[dict[str, Any]] | None:
    """The configs of a @triton.autotune kernel as {constexprs, num_warps, num_stages, options}, else None.

    `options` holds the launch options a Config sets beyond Triton's defaults (maxnreg, num_ctas > 1),
    which its launch passes on to the compile.
    """
    configs = getattr(obj, "configs", None)
    if configs is None or not _is_a(obj, "Autotuner"):
        return None
    out = []
    for cfg in configs:
        options = {k: getattr(cfg, k, None) for k in ("maxnreg", "num_ctas")}
        out.append({"constexprs": {k: v for k, v in (getattr(cfg, "kwargs", None) or {}).items()},
                    "num_warps": getattr(cfg, "num_warps", None), "num_stages": getattr(cfg, "num_stages", None),
                    "options": {k: v for k, v in options.items() if v is not None and not (k == "num_ctas" and v == 1)}})
    return out


def set_allocator() -> None:
    """Device-side tensor descriptors (tl.make_tensor_descriptor) need scratch memory (3.4+)."""
    import torch
    import triton

    if hasattr(triton, "set_allocator"):
        triton.set_allocator(lambda size, alignment, stream: torch.empty(size, device="cuda", dtype=torch.int8))


def check_interpreter_numpy() -> None:
    """Triton 3.6's interpreter breaks on numpy >= 2.4 (a TypeError deep inside)."""
    import numpy

    from tritonscope.errors import TritonscopeError

    np_version = tuple(int(p) for p in numpy.__version__.split(".")[:2])
    series = triton_series()
    if series is not None and series < (3, 7) and np_version >= (2, 4):
        raise TritonscopeError(
            f"Triton {triton_version()}'s interpreter needs numpy < 2.4; numpy {numpy.__version__} is installed.",
            hint="pip install 'numpy<2.4' (or a newer Triton).")


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
# Layouts from Triton itself (the cross-check for layouts.py)
#
# Triton's gluon builder converts a layout to its linear layout.  It runs in a
# child process (child.run_in_child): in 3.6 converting a shared layout aborts
# the process, and a bad layout can kill it, so a crash must not take
# tritonscope down with it.
# ==========================================================================


def linear_layouts_from_triton(items: list[dict[str, Any]], *, timeout: float = 120) -> list[dict[str, Any]]:
    """Triton's own linear layouts for [{"spec": layouts.triton_spec(enc), "shape": [..]}].

    Each result is {"bases": {...}} or {"skipped": why} or {"error": what}.
    All items run in one child process; if it dies, each item is retried
    alone so that one crashing layout only loses its own answer.
    """
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tritonscope-layouts-") as tmp:
        # attribute-text specs are parsed from files written here: a child that aborts cannot leave them behind
        items = [{**it, "spec": {**it["spec"], "dir": tmp}} if it["spec"].get("kind") == "text" else it
                 for it in items]
        return _linear_layouts_batches(items, timeout)


def _linear_layouts_batches(items: list[dict[str, Any]], timeout: float) -> list[dict[str, Any]]:
    from tritonscope.child import ChildDiedError, run_in_child

    def run(batch):
        return run_in_child("tritonscope.triton_api:_linear_layouts_child", batch,
                            what="Triton's layout conversion", timeout=timeout)

    try:
        return run(items)
    except ChildDiedError:
        if len(items) == 1:
            raise
    results = []
    for item in items:
        try:
            results.append(run([item])[0])
        except ChildDiedError as e:
            tail = " | ".join((e.context or "").strip().splitlines()[-3:])
            results.append({"error": f"{e.message} {tail}".strip()})
    return results


def _linear_layouts_child(specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """In the child process: the linear layout of each spec, or why not."""
    import triton.experimental.gluon.language._layouts as L
    from triton._C.libtriton import gluon_ir, ir

    shared_ok = (triton_series() or (0, 0)) >= (3, 9)
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

    out: list[dict[str, Any]] = []
    for item in specs:
        spec, shape = item["spec"], item["shape"]
        if spec["kind"] == "text":
            out.append(_layout_from_text(builder, ctx, spec, shape, shared_ok))
            continue
        if spec["kind"] in ("swizzled", "nvmma_shared") and not shared_ok:
            out.append({"skipped": f"Triton {triton_version()} cannot convert shared layouts "
                                   "(it aborts the process); 3.9 can"})
            continue
        try:
            ll = builder.to_linear_layout(build(spec, len(shape))._to_ir(builder), list(shape))
        except Exception as e:
            out.append({"error": f"{type(e).__name__}: {e}"})
            continue
        if hasattr(ll, "offset_bases"):
            out.append({"bases": {"offset": ll.offset_bases}, "block": ll.block_bases})
        else:
            out.append({"bases": {"register": ll.reg_bases, "lane": ll.lane_bases, "warp": ll.warp_bases},
                        "block": ll.block_bases})
    return out


def _layout_from_text(builder, ctx, spec: dict[str, Any], shape: list[int], shared_ok: bool) -> dict[str, Any]:
    """Triton's own reading of an attribute string: parse it in a one-function module, convert.

    The attribute goes through Triton's MLIR parser and verifier (so a string
    Triton would reject says so), then through its gluon layout object, whose
    conversion is the one tritonscope's layouts must equal.  Tensor layouts
    also report getTotalElemsPerThread.  Padded shared layouts have no linear
    layout in Triton (the conversion aborts the process): their offset bases
    and padding, as Triton parsed them, are compared instead.
    """
    import os
    import tempfile

    from triton._C.libtriton import ir

    memdesc = spec.get("memdesc", False)
    if memdesc and not shared_ok:
        return {"skipped": f"Triton {triton_version()} cannot convert memory layouts (it aborts the process); 3.9 can"}
    if not shared_ok and "ctaLayout" in spec["text"]:
        return {"skipped": f"Triton {triton_version()} parses a WMMA ctaLayout but aborts converting it"}
    dims = "x".join(str(s) for s in shape)
    elem = spec.get("elem", "f16")
    space = spec.get("space", "#ttg.shared_memory")
    typ = f"!ttg.memdesc<{dims}x{elem}, #enc, {space}>" if memdesc else f"tensor<{dims}x{elem}, #enc>"
    text = (f"#enc = {spec['text']}\n"
            f'module attributes {{"ttg.num-warps" = 4 : i32, "ttg.num-ctas" = 1 : i32, '
            f'"ttg.threads-per-warp" = 32 : i32}} {{\n'
            f"  tt.func @f(%a: {typ}) {{ tt.return }}\n}}\n")
    fd, path = tempfile.mkstemp(suffix=".mlir", prefix="tritonscope-layout-", dir=spec.get("dir"))
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        try:
            module = ir.parse_mlir_module(path, ctx)
        except Exception as e:
            return {"rejected": f"Triton does not parse it: {type(e).__name__}: {e}"}
    finally:
        os.unlink(path)
    arg = module.get_function("f").args(0)
    try:
        layout = builder.get_gluon_layout_from_memdesc(arg) if memdesc else builder.get_gluon_layout_from_tensor(arg)
    except Exception as e:
        return {"error": f"no gluon layout: {type(e).__name__}: {e}"}
    kind = type(layout).__name__
    if kind == "PaddedSharedLayout":
        return {"bases": {"offset": [list(b) for b in layout.offset_bases]},
                "padding": [list(p) for p in layout.interval_padding_pairs], "kind": kind}
    try:
        ll = builder.to_linear_layout(layout._to_ir(builder), list(shape))
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"}
    res: dict[str, Any] = {"kind": kind}
    if hasattr(ll, "offset_bases"):
        res["bases"] = {"offset": ll.offset_bases, "block": ll.block_bases}
    elif hasattr(ll, "rows"):
        res["bases"] = {"row": ll.rows, "col": ll.cols}
    else:
        res["bases"] = {"register": ll.reg_bases, "lane": ll.lane_bases, "warp": ll.warp_bases,
                        "block": ll.block_bases}
        if hasattr(builder, "get_total_elems_per_thread"):
            res["elems_per_thread"] = builder.get_total_elems_per_thread(arg.get_type())
    return res


# ==========================================================================
# Recompiling a kernel that already compiled (sources.py / `open --recompile`)
#
# A cache entry keeps `<name>.source`: the TTIR that `make_ir` produced from
# the Python function with the launch's specialization (divisibility,
# constexprs folded in), before any pass.  Running the backend's stages on it
# from "ttir" on is what `triton.compile` does after `make_ir`, so the result
# is the kernel that launch would give on another target.  (`triton.compile`
# of an IR *file* would skip the TTIR passes: it treats the file as already
# optimised.)  Without `.source`, the optimised `.ttir` is used: its passes
# run again, which leaves it as it is for the kernels we have checked.
# ==========================================================================


def compile_from_ttir(ttir_text: str, *, capability: int | None, num_warps: int, num_stages: int,
                      options: dict[str, Any] | None = None, target: tuple[str, Any, int] | None = None) -> Compiled:
    """Run Triton's pipeline (ttir passes onwards) on TTIR text for `capability` (or `target`, e.g.
    ("hip", "gfx942", 64), for the HIP backend's pipeline); no GPU needed."""
    import hashlib
    import tempfile
    from pathlib import Path

    from triton import __version__ as version
    from triton._C.libtriton import ir
    from triton.compiler import make_backend

    quiet_known_warnings()
    target = gpu_target(capability, target)
    backend = make_backend(target)
    opts = backend.parse_options({"num_warps": num_warps, "num_stages": num_stages, **(options or {})})
    import inspect

    language_args: tuple = ()
    if len(inspect.signature(backend.add_stages).parameters) >= 3:  # add_stages(stages, options, language)
        from triton.backends.compiler import Language

        language_args = (Language.TRITON,)
    seen: dict[str, Any] = {}
    with _lock, tempfile.TemporaryDirectory(prefix="tritonscope-ir-") as tmp, _diagnosed(seen):
        path = Path(tmp) / "kernel.ttir"
        path.write_text(ttir_text)
        context = ir.context()
        ir.load_dialects(context)
        backend.load_dialects(context)
        module = ir.parse_mlir_module(str(path), context)
        module.context = context
        stages: dict[str, Any] = {}
        backend.add_stages(stages, opts, *language_args)
        key = hashlib.sha256(f"{ttir_text}-{target}-{sorted(opts.__dict__.items(), key=str)}".encode()).hexdigest()
        metadata: dict[str, Any] = {"hash": key, "target": target, **opts.__dict__, "triton_version": version}
        asm: dict[str, Any] = {}
        for ext, step in stages.items():
            module = step(module, metadata)
            asm[ext] = module if isinstance(module, (str, bytes)) else str(module)
    metadata["target"] = {"backend": target.backend, "arch": target.arch, "warp_size": target.warp_size}
    return Compiled(asm=asm, metadata=_json_safe(metadata), kernel_hash=key, remarks=seen.get("remarks", []),
                    cache_hit=False)


def compile_ast(jit_fn, signature: dict[str, str], constants: dict[tuple, Any], attrs: dict[tuple, Any], *,
                capability: int | None, num_warps: int, num_stages: int, options: dict[str, Any] | None = None,
                target: tuple[str, Any, int] | None = None) -> Compiled:
    """triton.compile(ASTSource(...)) for `capability` (or an AMD `target`) with a recorded specialization."""
    import triton
    from triton.compiler import ASTSource

    quiet_known_warnings()
    _install_key()
    constants = {k: (_dtype_of(v) if isinstance(v, str) and signature.get(_name_at(jit_fn, k)) == "constexpr"
                     and _is_dtype_name(v) else v) for k, v in constants.items()}
    src = ASTSource(fn=jit_fn, signature=signature, constexprs=constants, attrs=attrs)
    target = gpu_target(capability, target)
    seen: dict[str, Any] = {}
    with _lock, _diagnosed(seen):
        kernel = triton.compile(src, target=target,
                                options={"num_warps": num_warps, "num_stages": num_stages, **(options or {})})
    meta = kernel.metadata
    meta_dict = meta._asdict() if hasattr(meta, "_asdict") else dict(vars(meta))
    return Compiled(asm=dict(kernel.asm), metadata=_json_safe(meta_dict), kernel_hash=str(meta_dict.get("hash", "")),
                    remarks=seen.get("remarks", []), cache_hit=seen.get("cache_hit"))


def _name_at(jit_fn, path: tuple) -> str:
    try:
        return jit_fn.arg_names[path[0]]
    except Exception:
        return ""


def _is_dtype_name(text: str) -> bool:
    import triton.language as tl

    return isinstance(getattr(tl, text, None), tl.dtype)


def _dtype_of(text: str):
    import triton.language as tl

    return getattr(tl, text)


def cached_stage_file(kernel_hash: str, name: str, ext: str) -> bytes | None:
    """A file Triton's own cache holds for a compile (`<cache>/<base32 hash>/<name>.<ext>`), else None.

    The folder name is cache.py's `_base32(hash)`; used by `compile --emit`
    for the cubin, which the Artifact does not keep.
    """
    import base64
    from pathlib import Path

    try:
        from triton import knobs

        folder = base64.b32encode(bytes.fromhex(kernel_hash)).decode().rstrip("=")
        return (Path(knobs.cache.dir) / folder / f"{name}.{ext}").read_bytes()
    except Exception:
        return None


# ==========================================================================
# The code-generation environment of a compile (a capture records it, a
# recompile replays it).
#
# Triton puts the environment variables that change its output *and are
# set* into its cache key and into every kernel's metadata JSON
# (`get_cache_invalidating_env_vars()`, 3.6 and 3.9 alike; bools come back
# spelled 'true'/'false').  The tool paths are not among them, yet they
# change the text: torch's Inductor sets TRITON_PTXAS_PATH to torch's own
# ptxas inside the program (CUDA 13: PTX `.version 9.0`), so the same TTIR
# recompiled with Triton's bundled ptxas (12.8) says `.version 8.7`.  The
# knobs below are named by (group, attribute) and their variable names are
# read from triton.knobs; a value is recorded, never a file's contents.
# ==========================================================================

CODEGEN_KNOBS = (
    ("nvidia", "ptxas"), ("nvidia", "ptxas_blackwell"), ("nvidia", "ptxas_options"),
    ("nvidia", "disable_ptxas_opt"), ("nvidia", "mock_ptx_version"), ("nvidia", "libdevice_path"),
    ("nvidia", "cuobjdump"), ("nvidia", "nvdisasm"),
    ("language", "fp32_default"), ("language", "default_fp_fusion"), ("language", "force_disable_fp_fusion"),
    ("compilation", "disable_line_info"), ("compilation", "use_ir_loc"), ("compilation", "enable_asan"),
    ("compilation", "front_end_debugging"),
)
# The tool knobs (a path each): attribute -> variable, for a Triton whose knobs we cannot read.
TOOL_KNOBS = {"ptxas": "TRITON_PTXAS_PATH", "ptxas_blackwell": "TRITON_PTXAS_BLACKWELL_PATH",
              "cuobjdump": "TRITON_CUOBJDUMP_PATH", "nvdisasm": "TRITON_NVDISASM_PATH"}


def _codegen_knobs():
    """(group, attr, the knobs group object, the variable Triton reads) for each knob of CODEGEN_KNOBS that
    this Triton has (none when triton.knobs cannot be imported)."""
    try:
        from triton import knobs
    except Exception:
        return
    for group, attr in CODEGEN_KNOBS:
        obj = getattr(knobs, group, None)
        key = getattr(type(obj).__dict__.get(attr), "key", None) if obj is not None else None
        if isinstance(key, str):
            yield group, attr, obj, key


def codegen_knob_keys() -> dict[str, str]:
    """{'TRITON_PTXAS_PATH': 'knobs.nvidia.ptxas', ...}: every variable of CODEGEN_KNOBS, named by Triton."""
    out: dict[str, str] = {}
    for group, attr, _, key in _codegen_knobs():
        out[key] = f"knobs.{group}.{attr}"
    for attr, key in TOOL_KNOBS.items():
        out.setdefault(key, f"knobs.nvidia.{attr}")
    for key in CODEGEN_ENV:
        out.setdefault(key, "environment")
    return out


def tool_knob_keys() -> set[str]:
    """The variables that hold a tool's path (TRITON_PTXAS_PATH, TRITON_PTXAS_BLACKWELL_PATH, ...)."""
    return {k for k, where in codegen_knob_keys().items() if where.startswith("knobs.nvidia.")
            and where.rsplit(".", 1)[1] in TOOL_KNOBS}


def cache_invalidating_env() -> dict[str, str]:
    """The variables Triton puts in its cache key that are set now, as Triton spells them."""
    try:
        from triton._C.libtriton import get_cache_invalidating_env_vars

        return {str(k): str(v) for k, v in get_cache_invalidating_env_vars().items()}
    except Exception:
        return {}


def codegen_environment(capability: int | None = None) -> dict[str, Any]:
    """What a compile in this process runs with: {'vars': {NAME: value}, 'tools': {...}, 'complete': True}.

    `vars` holds every cache-invalidating variable that is set and every
    knob of CODEGEN_KNOBS that is set (in os.environ, or on triton.knobs
    from Python); `complete` says that a variable not listed was unset, so
    a replay clears it.  `tools` (with a capability) is the ptxas a compile
    for that arch uses (compile_tools).
    """
    found = cache_invalidating_env()
    for key in found:
        if key in os.environ:  # the spelling the program used ('1', not Triton's 'true')
            found[key] = os.environ[key]
    for _, attr, obj, key in _codegen_knobs():
        if key in os.environ:
            found[key] = os.environ[key]
        elif attr in getattr(obj, "__dict__", {}) and obj.__dict__[attr] is not None:  # set from Python only
            found[key] = str(obj.__dict__[attr])
    for key in CODEGEN_ENV:
        if key in os.environ:
            found.setdefault(key, os.environ[key])
    out: dict[str, Any] = {"vars": dict(sorted(found.items())), "complete": True}
    if capability:
        out["tools"] = compile_tools(capability)
    return out


def compile_tools(capability: int) -> dict[str, dict[str, Any]]:
    """The ptxas a compile for `capability` uses here (Triton's own choice, get_ptxas):

    {'ptxas': {'knob': 'TRITON_PTXAS_PATH', 'path': ..., 'version': '12.8', 'ptx_isa': '8.7', 'bundled': True}}
    ({} when Triton or the tool cannot be found).  3.6 uses `ptxas-blackwell`
    from sm_100 on, 3.9 from sm_90 on: the knob named is the one that applies.
    """
    try:
        from triton import knobs
        from triton.backends.nvidia import compiler as nv

        tool = nv.get_ptxas(capability)
    except Exception:
        return {}
    descriptors = type(knobs.nvidia).__dict__
    candidates = []
    for attr in ("ptxas", "ptxas_blackwell"):
        try:
            if getattr(knobs.nvidia, attr).path == tool.path:
                candidates.append(attr)
        except Exception:
            continue
    chosen = [a for a in candidates if os.environ.get(getattr(descriptors.get(a), "key", ""))] or candidates or ["ptxas"]
    descriptor = descriptors.get(chosen[0])
    info: dict[str, Any] = {"knob": getattr(descriptor, "key", TOOL_KNOBS[chosen[0]]), "path": tool.path,
                            "version": str(tool.version),
                            "bundled": os.path.realpath(tool.path) == os.path.realpath(
                                getattr(descriptor, "default_path", "") or "")}
    try:
        isa = int(nv.ptx_get_version(str(tool.version)))
        info["ptx_isa"] = f"{isa // 10}.{isa % 10}"
    except Exception:
        pass
    return {"ptxas": info}


def replay_environment(recorded: dict[str, str], *, complete: bool, cache_vars_known: bool,
                       base: dict[str, str] | None = None) -> tuple[dict[str, str], dict[str, str], set[str]]:
    """(environment, missing tools, names that matter) for compiling again as a recorded compile did.

    The environment is `base` (default os.environ) with the recorded values
    set; with `complete` every other code-generation variable is cleared,
    and with `cache_vars_known` (Triton's metadata lists them) every other
    cache-invalidating one.  A recorded tool path that is not an executable
    file here is left out (Triton then uses its bundled tool) and returned in
    `missing`, so the caller can say so.
    """
    env = dict(os.environ if base is None else base)
    knob_keys = codegen_knob_keys()
    current_cache = set(cache_invalidating_env())
    names = set(knob_keys) | current_cache | set(recorded)
    if complete or cache_vars_known:
        for key in current_cache - set(recorded):
            env.pop(key, None)
    if complete:
        for key in set(knob_keys) - set(recorded):
            env.pop(key, None)
    tools = tool_knob_keys()
    missing: dict[str, str] = {}
    for key, value in recorded.items():
        if key in tools and not (os.path.isfile(value) and os.access(value, os.X_OK)):
            missing[key] = value
            env.pop(key, None)
            continue
        if key in env and _same_setting(env[key], str(value)):  # '1' here, Triton's 'true' in the metadata
            continue
        env[key] = str(value)
    return env, missing, names


# `ptxas --version`'s last lines:  Cuda compilation tools, release 12.9, V12.9.86
_PTXAS_RELEASE_RE = None
_ptxas_versions: dict[tuple[str, int, int], str | None] = {}


def ptxas_version(path: str) -> str | None:
    """'12.9' from `path --version` (cached per file and mtime); None when it is not a ptxas that runs here."""
    global _PTXAS_RELEASE_RE
    import re

    if _PTXAS_RELEASE_RE is None:
        _PTXAS_RELEASE_RE = re.compile(r"release (\d+\.\d+)")
    try:
        st = os.stat(path)
        key = (os.path.realpath(path), st.st_mtime_ns, st.st_size)
    except OSError:
        return None
    if key not in _ptxas_versions:
        try:
            out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30,
                                 errors="replace").stdout
            m = _PTXAS_RELEASE_RE.search(out) if "ptx" in out.lower() else None
            _ptxas_versions[key] = m.group(1) if m else None
        except (OSError, subprocess.SubprocessError):
            _ptxas_versions[key] = None
    return _ptxas_versions[key]


def ptxas_candidates() -> list[str]:
    """Every ptxas on this machine a recompile may use, in order: Triton's bundled ones, $CUDA_HOME/bin,
    /usr/local/cuda*/bin, then PATH (each file once)."""
    import glob
    import shutil

    found: list[str] = []
    try:
        from triton import knobs

        descriptors = type(knobs.nvidia).__dict__
        found += [getattr(descriptors.get(a), "default_path", None) or "" for a in ("ptxas", "ptxas_blackwell")]
    except Exception:
        pass
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            found.append(os.path.join(os.environ[var], "bin", "ptxas"))
    found += sorted(glob.glob("/usr/local/cuda*/bin/ptxas"))
    found.append(shutil.which("ptxas") or "")
    out, seen = [], set()
    for path in found:
        if path and os.path.isfile(path) and os.access(path, os.X_OK) and os.path.realpath(path) not in seen:
            seen.add(os.path.realpath(path))
            out.append(path)
    return out


def find_ptxas(recorded: dict[str, Any]) -> dict[str, str] | None:
    """The recorded compile's ptxas, or one of its version, on this machine: {'path', 'version', 'how'}.

    `recorded` is a capture's tools['ptxas'] ({'path', 'version', ...}).  The
    recorded file is used when it runs here and says the recorded version
    ('how': 'recorded'); else the first candidate of that version ('how':
    'same version').  None when there is none (the caller warns, naming both
    versions).
    """
    version = str(recorded.get("version") or "")
    path = str(recorded.get("path") or "")
    if path and os.path.isfile(path) and os.access(path, os.X_OK):
        here = ptxas_version(path)
        if here and (not version or here == version):
            return {"path": path, "version": here, "how": "recorded"}
    if not version:
        return None
    for candidate in ptxas_candidates():
        if ptxas_version(candidate) == version:
            return {"path": candidate, "version": version, "how": "same version"}
    return None


def ptxas_knobs(capability: int) -> list[str]:
    """The variables naming the ptxas a compile for `capability` runs here (3.6: TRITON_PTXAS_PATH below
    sm_100; 3.9: TRITON_PTXAS_BLACKWELL_PATH from sm_90), read from Triton's own choice (get_ptxas)."""
    try:
        from triton import knobs
        from triton.backends.nvidia import compiler as nv

        chosen = nv.get_ptxas(capability)
    except Exception:
        return [TOOL_KNOBS["ptxas"]]
    descriptors = type(knobs.nvidia).__dict__
    keys = []
    for attr in ("ptxas", "ptxas_blackwell"):
        try:
            if getattr(knobs.nvidia, attr) is chosen or getattr(knobs.nvidia, attr).path == chosen.path:
                keys.append(getattr(descriptors.get(attr), "key", TOOL_KNOBS[attr]))
        except Exception:
            continue
    return keys or [TOOL_KNOBS["ptxas"]]


def use_original_ptxas(recorded: dict[str, Any], capability: int, env: dict[str, str]) -> dict[str, str] | None:
    """Point the ptxas knob(s) a compile for `capability` reads at the recorded compile's ptxas, in `env`.

    Returns find_ptxas's answer plus 'knobs' (the variables set), or None
    when no such ptxas is here (then `env` is unchanged).
    """
    found = find_ptxas(recorded)
    if found is None:
        return None
    keys = ptxas_knobs(capability)
    try:
        from triton import knobs

        defaults = {getattr(d, "key", None): getattr(d, "default_path", None)
                    for d in type(knobs.nvidia).__dict__.values()}
    except Exception:
        defaults = {}
    for key in keys:
        default = defaults.get(key)
        if key not in env and default and os.path.realpath(default) == os.path.realpath(found["path"]):
            continue  # Triton's own choice already: no variable, no child process needed
        env[key] = found["path"]
    return {**found, "knobs": ", ".join(keys)}


def _same_setting(a: str, b: str) -> bool:
    """Two spellings of one value, as Triton's getenv_bool reads them ('1' and 'true')."""
    truthy, falsy = {"1", "true", "on", "yes", "y"}, {"0", "false", "off", "no", "n"}
    a, b = a.strip().lower(), b.strip().lower()
    return a == b or (a in truthy and b in truthy) or (a in falsy and b in falsy)


# ==========================================================================
# Triton's own shared-memory bank-conflict count (explain's cross-check)
#
# Gluon's `bank_conflicts(register_type, shared_type)` counts the excess
# wavefronts of the ld.shared/st.shared Triton would emit for a register
# layout and a shared layout.  It only runs inside a gluon kernel being
# compiled, so the child compiles a one-line probe kernel per pair (no GPU:
# the compile stops nowhere near PTX) and reads what it printed.
# ==========================================================================


def bank_conflicts_from_triton(items: list[dict[str, Any]], *, timeout: float = 120) -> list[int | None] | None:
    """Triton's count for [{"register", "shared", "shape", "elem", "num_warps", "capability"}]; None when this
    Triton has no gluon bank_conflicts or its process died."""
    from tritonscope.child import ChildDiedError, run_in_child

    if (triton_series() or (0, 0)) < (3, 9):  # 3.6's gluon cannot read shared layouts back (it aborts)
        return None
    try:
        # the count is printed while the probe compiles: a cache hit would print nothing
        return run_in_child("tritonscope.triton_api:_bank_conflicts_child", items,
                            what="Triton's bank-conflict count", timeout=timeout,
                            env={**os.environ, "TRITON_ALWAYS_COMPILE": "1"})
    except ChildDiedError:
        return None


def _bank_conflicts_child(items: list[dict[str, Any]]) -> list[int | None]:
    """In the child: gluon's bank_conflicts for each item (None where Triton refuses the pair)."""
    import contextlib
    import io
    import re
    import tempfile

    import triton
    import triton.experimental.gluon as gluon
    import triton.experimental.gluon.language as ttgl
    from triton._C.libtriton import gluon_ir, ir
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    quiet_known_warnings()
    globals()["_ttgl"] = ttgl  # the probe's global name (this process only)

    @gluon.jit
    def _probe(reg_type: _ttgl.constexpr, shared_type: _ttgl.constexpr):  # noqa: F821
        c: _ttgl.constexpr = _ttgl.bank_conflicts(reg_type, shared_type)  # noqa: F821
        _ttgl.static_print("@@BANKS", c)  # noqa: F821

    ctx = ir.context()
    ir.load_dialects(ctx)
    builder = gluon_ir.GluonOpBuilder(ctx)
    dtypes = {"f16": ttgl.float16, "bf16": ttgl.bfloat16, "f32": ttgl.float32, "i8": ttgl.int8,
              "i32": ttgl.int32, "i16": ttgl.int16, "f64": ttgl.float64, "f8E4M3FN": ttgl.float8e4nv,
              "f8E5M2": ttgl.float8e5}
    out: list[int | None] = []
    for item in items:
        dims = "x".join(str(d) for d in item["shape"])
        elem = item["elem"]
        text = (f"#d = {item['register']}\n#s = {item['shared']}\n"
                f'module attributes {{"ttg.num-warps" = {item["num_warps"]} : i32, "ttg.num-ctas" = 1 : i32, '
                f'"ttg.threads-per-warp" = 32 : i32}} {{\n'
                f"  tt.func @f(%a: tensor<{dims}x{elem}, #d>, %b: !ttg.memdesc<{dims}x{elem}, #s, "
                f"#ttg.shared_memory>) {{ tt.return }}\n}}\n")
        try:
            with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
                f.write(text)
                f.flush()
                module = ir.parse_mlir_module(f.name, ctx)
            fn = module.get_function("f")
            reg = builder.get_gluon_layout_from_tensor(fn.args(0))
            shared = builder.get_gluon_layout_from_memdesc(fn.args(1))
            dtype = dtypes[elem]
            reg_ty = ttgl.distributed_type(dtype, list(item["shape"]), reg)
            shared_ty = ttgl.shared_memory_descriptor_type(dtype, list(item["shape"]), shared, list(item["shape"]))
            src = GluonASTSource(_probe, signature={"reg_type": "constexpr", "shared_type": "constexpr"},
                                 constexprs={(0,): reg_ty, (1,): shared_ty})
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                triton.compile(src, target=GPUTarget("cuda", int(item.get("capability", 90)), 32),
                               options={"num_warps": int(item["num_warps"])})
            m = re.search(r"@@BANKS\s+(-?\d+)", printed.getvalue())
            out.append(int(m.group(1)) if m else None)
        except Exception:
            out.append(None)
    return out


# --------------------------------------------------------------------------
# Version quirks for other Tritons run as a side (tritonscope/versions): added for `versions`
# --------------------------------------------------------------------------

# Triton's AMD backend links the hsaco with ld.lld.  Wheels from 3.5 on carry one
# (triton/backends/amd/llvm/bin/ld.lld); 3.4's does not, and looks for
# TRITON_HIP_LLD_PATH, then /opt/rocm/llvm/bin/ld.lld.  A system lld of LLVM 19 or
# newer links its output (Debian: `apt-get install lld-19`).
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
