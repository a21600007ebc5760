"""Stand-ins for a real launch: tensors, descriptors, the driver that answers for the target (and a kernel file's import-time questions), torch kept out, remarks collected."""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass, field
from typing import Any

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


def _torch_dtype(dtype_name: str):
    """torch's dtype for triton.language's `dtype_name` ('uint32' -> torch.uint32, 'float8e4b8' ->
    torch.float8_e4m3fnuz: core/dtypes.py's table), when the kernel file has loaded torch (never imported
    here); None when torch is not loaded or has no such dtype (fp8e4b15)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    from tritonscope.core.dtypes import lookup

    row = lookup(dtype_name)
    return getattr(torch, row.torch, None) if row is not None and row.torch else None


def stand_in_descriptor(name: str, dtype_name: str, block: tuple[int, ...], shape: tuple[int, ...] | None):
    """A host-side TensorDescriptor over a stand-in tensor, as TensorDescriptor.from_tensor makes one.

    Triton specializes it by dtype and block shape (`tensordesc<fp16[128, 64]>`); the tensor's shape
    and strides are runtime values, so with no shape given the tensor is one block.  Triton's own
    checks (16-byte aligned strides, a valid block shape) apply: a descriptor it would refuse at a
    launch is refused here, naming the argument.
    """
    from triton.tools.tensor_descriptor import TensorDescriptor

    from tritonscope.core.errors import KernelSpecError

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

    def torch_versions(self) -> dict[str, str | None]:
        """torch.version.cuda and .hip as a torch build for the target reports them: on NVIDIA the CUDA
        version of Triton's bundled ptxas ('12.9': the CUDA this compile's code is assembled with), on
        AMD a version-shaped HIP stand-in; the other one None, as in such a build."""
        if self.target.backend == "hip":
            return {"cuda": None, "hip": HIP_VERSION_STAND_IN}
        return {"cuda": _bundled_cuda_version(), "hip": None}


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


class _TorchCQueries:
    """The CUDA-only `torch._C` calls libraries make at import once torch.cuda says there is a device, each a
    plain query, answered for the one stand-in device (patched onto torch._C while a file imports; a CPU
    torch lacks them, and a CUDA torch with no GPU raises).

    A library that keeps a stream per device calls `torch._C._cuda_getCurrentRawStream(i)` for each
    `i < torch.cuda.device_count()` (the raw cudaStream_t, as its kernels launch on): the default stream,
    0.  Stream objects are (stream id, device index, device type: 1, CUDA, as a ROCm torch says too).
    """

    def __init__(self, answers: DeviceAnswers):
        self._answers = answers

    def _cuda_getCurrentRawStream(self, device=None) -> int:
        self._answers.note("the current stream")
        return 0

    def _cuda_getCurrentStream(self, device=None) -> tuple[int, int, int]:
        self._answers.note("the current stream")
        return (0, int(device or 0), 1)

    def _cuda_getDefaultStream(self, device=None) -> tuple[int, int, int]:
        self._answers.note("the current stream")
        return (0, int(device or 0), 1)

    def _cuda_getDevice(self) -> int:
        return 0

    def _cuda_getDeviceCount(self) -> int:
        return 1

    def _cuda_isInBadFork(self) -> bool:
        return False

    def _cuda_getArchFlags(self) -> str:
        """What torch.cuda.get_arch_list() splits: the archs the torch build has kernels for (here the target)."""
        self._answers.note("the arch list")
        target = self._answers.target
        return str(target.arch) if target.backend == "hip" else f"sm_{target.arch}"


_TORCH_C_NAMES = tuple(n for n in vars(_TorchCQueries) if n.startswith("_cuda_"))

_MISSING = object()


def _bundled_cuda_version() -> str | None:
    """'12.9': the CUDA release of the ptxas Triton uses (its bundled one, or TRITON_PTXAS_PATH's)."""
    from tritonscope.triton_api.knobs import ptxas_version
    from tritonscope.triton_api.tools import tool_path

    path = tool_path("ptxas")
    return ptxas_version(path) if path else None


def _answer_torch_versions(version, answers: DeviceAnswers, saved: list) -> None:
    """Make torch.version.cuda and .hip answer for the target while a file imports, noting each read.

    They are plain module attributes, so the reads are seen by taking them out of the module and answering
    them from a module __getattr__ (PEP 562), which `torch.version.cuda` and `from torch.version import
    cuda` both reach; the attributes go back afterwards.  The CUDA version is found on the first read only
    (it runs `ptxas --version`)."""
    names = [n for n in ("cuda", "hip") if n in vars(version)]
    if not names:
        return
    labels = {"cuda": "the CUDA version", "hip": "the HIP version"}
    values: dict[str, Any] = {}
    previous = vars(version).get("__getattr__")

    def answer(name: str):
        if name in names:
            if name not in values:
                values[name] = answers.torch_versions()[name]
                said = values[name] if values[name] is not None else "none"
                how = ", Triton's ptxas" if name == "cuda" and values[name] is not None else ""
                answers.note(f"{labels[name]} ({said}{how})")
            return values[name]
        if previous is not None:
            return previous(name)
        raise AttributeError(f"module {version.__name__!r} has no attribute {name!r}")

    for name in names:
        saved.append((version, name, getattr(version, name)))
    saved.append((version, "__getattr__", previous if previous is not None else _MISSING))
    for name in names:
        delattr(version, name)
    version.__getattr__ = answer


# torch.version.hip while a file imports for an AMD target.  Version-shaped because torch itself parses it at
# import (torch/utils/cpp_extension.py: `int(v) for v in torch.version.hip.split('.')[:2]`, reached by vLLM's
# fused_moe module); the local label says it is tritonscope's stand-in, not an installed ROCm.
HIP_VERSION_STAND_IN = "7.0.0+tritonscope"


class _PatchTorchOnImport:
    """A meta-path finder that patches torch.cuda (torch.version, torch._C's CUDA queries) once `import torch`
    finishes."""

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
    the target, and torch.cuda, if the file imports torch, answers as the target's GPU would; so do
    torch.version.cuda/.hip (a build for the target) and torch._C's CUDA-only queries (_TorchCQueries).

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
        if version is not None:
            _answer_torch_versions(version, answers, saved)
        c = getattr(torch, "_C", None)
        if c is not None:
            queries = _TorchCQueries(answers)
            for name in _TORCH_C_NAMES:
                saved.append((c, name, getattr(c, name, _MISSING)))
                setattr(c, name, getattr(queries, name))

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
            if value is not _MISSING:
                setattr(obj, name, value)
            elif name in vars(obj):
                delattr(obj, name)


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

    Triton 3.2 and 3.3 have no knobs and no compilation listener: their
    remarks are collected the same way, and whether the cache answered is
    unknown (cache_hit None).
    """
    from tritonscope.triton_api.remarks import collect_remarks
    from tritonscope.triton_api.env import knobs_module

    knobs = knobs_module()
    if knobs is None or not hasattr(knobs, "compilation"):
        remarks = []
        try:
            with _launch_env_vars(), collect_remarks() as remarks:
                yield out
        finally:
            out["remarks"] = [r.to_dict() for r in remarks]
            out["cache_hit"] = None
        return
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
