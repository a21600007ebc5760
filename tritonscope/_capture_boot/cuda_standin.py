"""`capture --arch` with no GPU: torch's `cuda` tensors held in CPU memory (the program's side).

A program written for a GPU makes its tensors on `cuda` (`torch.randn(n, device="cuda")`, `x.cuda()`,
`model.to("cuda")`) and checks them (`x.is_cuda`, `x.device.type == "cuda"`).  With no GPU, each such tensor
is made in CPU memory instead and marked; a torch function mode (`torch.overrides.TorchFunctionMode`,
pushed once for the whole program) answers for the marked ones:

- a factory given a `cuda` device (`device="cuda"`, `"cuda:0"`, `torch.device("cuda")`, an index) makes
  the tensor on the CPU and marks it; `.cuda()` / `.to("cuda")` copy to a marked CPU tensor, and
  `.cpu()` / `.to("cpu")` of a marked one give an unmarked copy, as a real device transfer would;
- `x.device` says `cuda:0`, `x.is_cuda` True, `x.get_device()` 0; `param.data = marked` marks the parameter;
- every other torch function runs on the CPU as it is, and marks its tensor results when one of its tensor
  inputs is marked (`x + y`, `x[2:]`, `torch.empty_like(x)`).

So the program's own torch code computes real values on the CPU; only what its Triton kernels would have
written is not computed (the kernels are compiled, not run).  Pointers are CPU addresses: torch's CPU
allocator aligns each allocation to 64 bytes, so a fresh tensor is 16-byte aligned as a fresh CUDA
allocation is, and a view's address is the storage's plus storage_offset x element size, as on the GPU.

`torch.cuda` answers as one device of the target (triton_api.device_answers gives is_available, the
capability, the properties); this module adds what a CPU torch lacks for a program that uses streams and
devices: `current_stream()`/`default_stream()`/`Stream`/`stream()`, `Event` (a CPU clock), `synchronize`,
`device(...)`, `set_device`, the memory queries (0) and `empty_cache`.

What this does not cover (said in the docs): torch functions called from threads other than the main one
(the mode is per thread), code that asks torch's C++ for the device (custom C++/CUDA extensions, NCCL),
and CUDA graphs.  `torch.compile` is inductor_gpuless.py's: Dynamo traces with this mode off.
"""

from __future__ import annotations

import sys
import time
from typing import Any

MARK = "_tritonscope_cuda"


def is_marked(t: Any) -> bool:
    return bool(getattr(t, "__dict__", {}).get(MARK)) if _is_tensor(t) else False


def _is_tensor(t: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(t, torch.Tensor)


def _mark(t: Any) -> Any:
    if _is_tensor(t):
        try:
            t.__dict__[MARK] = True
        except (AttributeError, TypeError):
            pass
    return t


def _is_cuda_device(value: Any) -> bool:
    """A device argument that names a CUDA device: 'cuda', 'cuda:1', torch.device('cuda'), or an index."""
    torch = sys.modules["torch"]
    if isinstance(value, torch.device):
        return value.type == "cuda"
    if isinstance(value, str):
        return value.split(":")[0].strip() == "cuda"
    return isinstance(value, int) and not isinstance(value, bool)


def _to_target(args: tuple, kwargs: dict) -> tuple[bool | None, tuple, dict]:
    """For Tensor.to(...): (whether it moves to cuda / to cpu / None: no device given, args and kwargs with the
    device replaced by 'cpu')."""
    torch = sys.modules["torch"]
    moves: bool | None = None
    out = list(args)
    for i, a in enumerate(out[1:], start=1):
        if isinstance(a, (str, torch.device)) or (isinstance(a, int) and not isinstance(a, bool)):
            moves = _is_cuda_device(a)
            out[i] = "cpu"
        elif isinstance(a, torch.Tensor):  # .to(other): other's device and dtype
            moves = is_marked(a)
    if "device" in kwargs and kwargs["device"] is not None:
        moves = _is_cuda_device(kwargs["device"])
        kwargs = {**kwargs, "device": "cpu"}
    return moves, tuple(out), kwargs


def _flat(values) -> list:
    from torch.utils._pytree import tree_flatten

    return tree_flatten(values)[0]


def make_mode():
    """The TorchFunctionMode that keeps `cuda` tensors in CPU memory (see the module's docstring)."""
    import torch
    from torch.overrides import TorchFunctionMode

    cuda0 = torch.device("cuda", 0)
    Tensor = torch.Tensor

    class CudaOnCpu(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            name = getattr(func, "__name__", "")
            owner = getattr(func, "__self__", None)
            if name in ("__get__", "__set__") and type(owner).__name__ == "getset_descriptor":
                return _descriptor(func, owner.__name__, args, kwargs)
            if func in (Tensor.cuda, Tensor.to, Tensor.cpu):
                return _move(func, args, kwargs)
            if func in (Tensor.get_device,) and args and is_marked(args[0]):
                return 0
            if func is Tensor.record_stream and args and is_marked(args[0]):
                return None
            if func is Tensor.pin_memory:
                return args[0]
            made_on_cuda = False
            if "device" in kwargs and kwargs["device"] is not None and _is_cuda_device(kwargs["device"]):
                kwargs["device"] = "cpu"
                made_on_cuda = True
            if kwargs.get("pin_memory"):
                kwargs.pop("pin_memory")
            result = func(*args, **kwargs)
            if made_on_cuda or any(is_marked(a) for a in _flat((args, kwargs))):
                for t in _flat(result):
                    _mark(t)
            return result

    def _descriptor(func, attr: str, args, kwargs):
        if func.__name__ == "__get__" and args and is_marked(args[0]):
            if attr == "device":
                return cuda0
            if attr == "is_cuda":
                return True
            if attr == "is_cpu":
                return False
        result = func(*args, **kwargs)
        if func.__name__ == "__set__" and attr == "data" and len(args) >= 2 and is_marked(args[1]):
            _mark(args[0])
        elif func.__name__ == "__get__" and attr in ("data", "grad") and args and is_marked(args[0]):
            _mark(result)
        return result

    def _move(func, args, kwargs):
        x = args[0]
        if func is Tensor.cuda:
            if is_marked(x):
                return x
            return _mark(x.clone(memory_format=torch.preserve_format))
        if func is Tensor.cpu:
            return x.clone(memory_format=torch.preserve_format) if is_marked(x) else x
        moves, new_args, new_kwargs = _to_target(args, kwargs)
        result = func(*new_args, **new_kwargs)
        if moves is None:  # a dtype change only: stays where it is
            return _mark(result) if is_marked(x) and result is not x else result
        if moves:
            if result is x and not is_marked(x):
                result = x.clone(memory_format=torch.preserve_format)
            return _mark(result)
        if result is x and is_marked(x):
            return x.clone(memory_format=torch.preserve_format)
        return result

    return CudaOnCpu()


# --------------------------------------------------------------------------
# torch.cuda's streams, events, devices and memory queries
# --------------------------------------------------------------------------


class Stream:
    """The default stream of the one stand-in device: work is never queued, so waiting is immediate."""

    def __init__(self, device=None, priority: int = 0, stream_id: int = 0, device_index: int = 0,
                 device_type: int = 1, **_):
        import torch

        self.stream_id, self.device_index, self.device_type = stream_id, 0, device_type
        self.device = torch.device("cuda", 0)
        self.priority = priority

    cuda_stream = 0

    def synchronize(self) -> None:
        pass

    def wait_stream(self, stream) -> None:
        pass

    def wait_event(self, event) -> None:
        pass

    def record_event(self, event=None):
        event = event or Event()
        event.record(self)
        return event

    def query(self) -> bool:
        return True

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream)

    def __hash__(self) -> int:
        return 0

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def __repr__(self) -> str:
        return "<torch.cuda.Stream device=cuda:0 cuda_stream=0x0 (tritonscope: no GPU)>"


class Event:
    """A CPU clock in place of a CUDA event (nothing runs on a GPU, so the times say nothing of kernels)."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False, **_):
        self.t: float | None = None

    def record(self, stream=None) -> None:
        self.t = time.perf_counter()

    def synchronize(self) -> None:
        pass

    def wait(self, stream=None) -> None:
        pass

    def query(self) -> bool:
        return True

    def elapsed_time(self, end: "Event") -> float:
        return ((end.t or 0.0) - (self.t or 0.0)) * 1e3


def _noop(*_, **__) -> None:
    return None


def _zero(*_, **__) -> int:
    return 0


def _own(fn, name: str):
    """A copy of `fn` that is its own object, named as the torch.cuda function it stands in for (Dynamo's trace
    rules map each torch function object to one rule: one shared no-op for several names is refused)."""
    def own(*args, **kwargs):
        return fn(*args, **kwargs)

    own.__name__ = own.__qualname__ = name
    return own


_DEFAULT = None


def patch_torch_cuda(torch) -> list[tuple[Any, str, Any]]:
    """Give torch.cuda the stream/event/device calls of one device (torch.cuda's own device questions are
    answered by triton_api.device_answers); what was replaced, for a caller that puts it back."""
    cuda = torch.cuda
    saved: list[tuple[Any, str, Any]] = []

    def put(name: str, value) -> None:
        if value in (_noop, _zero):  # one function object per name: torch.compile's rules key on the object
            value = _own(value, name)
        saved.append((cuda, name, getattr(cuda, name, None)))
        setattr(cuda, name, value)

    default = Stream()
    current = {"stream": default}

    def current_stream(device=None):
        return current["stream"]

    class stream:  # noqa: N801 -- torch.cuda.stream(s): a context that makes s current
        def __init__(self, s=None):
            self.s, self.prev = s, None

        def __enter__(self):
            self.prev = current["stream"]
            if self.s is not None:
                current["stream"] = self.s
            return self.s

        def __exit__(self, *exc):
            current["stream"] = self.prev

    put("_lazy_init", _noop)
    put("is_initialized", lambda: True)
    put("init", _noop)
    put("current_stream", current_stream)
    put("default_stream", lambda device=None: default)
    put("set_stream", lambda s: current.__setitem__("stream", s))
    put("Stream", Stream)
    put("Event", Event)
    put("stream", stream)
    put("synchronize", _noop)
    put("set_device", _noop)
    put("_exchange_device", lambda device: 0)
    put("_maybe_exchange_device", lambda device: 0)
    put("empty_cache", _noop)
    put("ipc_collect", _noop)
    put("manual_seed", _noop)
    put("manual_seed_all", _noop)
    put("seed", _noop)
    put("seed_all", _noop)
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved"):
        put(name, _zero)
    put("reset_peak_memory_stats", _noop)
    put("reset_max_memory_allocated", _noop)
    # torch.compile saves and restores the device's random state around each frame it traces
    put("get_rng_state", lambda device="cuda": torch.empty(0, dtype=torch.uint8))
    put("set_rng_state", lambda new_state, device="cuda": None)
    put("get_rng_state_all", lambda: [torch.empty(0, dtype=torch.uint8)])
    put("set_rng_state_all", lambda new_states: None)
    return saved


_mode = None


def install(torch) -> None:
    """Turn the stand-in device on for this process (the main thread), for good."""
    global _mode
    if _mode is not None:
        return
    patch_torch_cuda(torch)
    _mode = make_mode()
    _mode.__enter__()
