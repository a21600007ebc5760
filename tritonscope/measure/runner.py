"""Run a kernel for real: torch tensors from a KernelSpec, a launch, a check.

Two ways to run:
- on the local CUDA GPU (`run_on_gpu`): the launch is an ordinary
  `kernel[grid](...)`, so Triton's JIT compiles exactly what it would for any
  user, and the CompiledKernel it returns is kept for inspection;
- through Triton's interpreter on the CPU (`run_interpreted`).  The
  interpreter is chosen when `@triton.jit` decorates the function
  (TRITON_INTERPRET is read then, and the already-imported triton.language
  cannot be switched back and forth), so an interpreted run happens in a
  child Python process started with TRITON_INTERPRET=1 (child.run_in_child).

Outputs are the arguments named in the launch's "check" dict; they are
poisoned (NaN, or -1 for integers) before the launch so an element the kernel
never writes fails the check.  Inputs are fresh random numbers (never zeros).
This module imports torch; `compile` paths never import it.
"""

from __future__ import annotations

import inspect
import math
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from tritonscope import triton_api
from tritonscope.core.dtypes import BY_NAME
from tritonscope.core.errors import KernelSpecError, NoGPUError, TritonscopeError
from tritonscope.inputs.kernels import (DescArg, Loaded, Request, TensorArg, kernel_value, parse_arg_value)
from tritonscope.pipeline.compile_path import Pipeline
from tritonscope.pipeline.config import resolve

NO_GPU_HINT = ("Run it on the CPU through Triton's interpreter instead: "
               "`tritonscope run TARGET --interpret` (slow; use a small --shape).")

# Normalized error ||out - ref|| / ||ref|| allowed per (output or input) dtype.
# fp32 arithmetic lands far under 1e-5; TF32 (the tensor cores' fp32 mode,
# Triton's default for a float32 tl.dot) near 3e-4; an fp16 result is rounded
# to 11 bits (about 3e-4 normalized); bf16 to 8 bits; fp8 to 3-4 bits.
TOLERANCE = {"fp64": 1e-10, "fp32": 1e-5, "tf32": 2e-3, "fp16": 2e-3, "bf16": 1.5e-2,
             "fp8e4nv": 1e-1, "fp8e5": 2e-1}


@dataclass
class CheckResult:
    output: str            # the argument checked, e.g. "c_ptr"
    dtype: str
    max_abs_error: float
    rel_error: float       # ||out - ref|| / ||ref|| in float64
    tolerance: float
    unwritten: int         # elements that still hold the poison (or NaN/inf)
    passed: bool


@dataclass
class RunResult:
    target: str
    kernel: str
    label: str             # the config, e.g. "BLOCK=16 w4 s3 sm_90a fp16"
    mode: str              # "gpu" or "interpreter"
    device: str            # "NVIDIA H100 80GB HBM3" or "CPU (Triton interpreter)"
    checks: list[CheckResult]
    tf32: bool | None      # fp32 tl.dot computed in TF32 (None: not known)
    tf32_note: str | None
    seconds: float
    versions: dict[str, str] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)  # launch options: maxnreg, num_ctas, enable_fp_fusion
    notes: list[str] = field(default_factory=list)         # what the result cannot say (e.g. the interpreter)

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def max_abs_error(self) -> float:
        return max((c.max_abs_error for c in self.checks), default=float("nan"))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["passed"] = self.passed
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "RunResult":
        d = dict(d)
        d.pop("passed", None)
        d["checks"] = [CheckResult(**c) for c in d["checks"]]
        return cls(**d)


# --------------------------------------------------------------------------
# GPU and versions
# --------------------------------------------------------------------------


def gpu_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def require_gpu(what: str = "This command") -> None:
    try:
        import torch  # noqa: F401
    except ImportError as e:
        raise NoGPUError(f"{what} needs PyTorch and a CUDA GPU; PyTorch is not installed.",
                         hint="Install the extra: pip install 'tritonscope[run]'. " + NO_GPU_HINT) from e
    if not gpu_available():
        raise NoGPUError(f"{what} needs a CUDA GPU, and none is visible (torch.cuda.is_available() is False).",
                         hint=NO_GPU_HINT)


def versions() -> dict[str, str]:
    import torch

    from tritonscope import triton_api

    out = {"triton": triton_api.triton_version(), "torch": torch.__version__, "python": sys.version.split()[0]}
    if torch.version.cuda:
        out["cuda"] = torch.version.cuda
    return out


def device_name() -> str:
    import torch

    return torch.cuda.get_device_name(0)


# --------------------------------------------------------------------------
# Tensors
# --------------------------------------------------------------------------


def torch_dtype(name: str):
    """torch's dtype for tritonscope's name ('fp8e4nv' -> torch.float8_e4m3fn, 'u32' -> torch.uint32)."""
    import torch

    row = BY_NAME[name]
    found = getattr(torch, row.torch, None) if row.torch else None
    if found is None:
        raise KernelSpecError(f"This torch ({torch.__version__}) has no dtype for {name} "
                              f"(triton.language.{row.tl}), so no tensor of it can be made to run the kernel.",
                              hint="Run with another dtype; compile still works for this one.")
    return found


def output_names(loaded: Loaded) -> list[str]:
    return list(((loaded.launch or {}).get("check") or {}).keys())


def make_tensor(arg: TensorArg, device: str, generator=None):
    """Random data of the argument's dtype and logical shape.

    A transposed argument ("fp16[M,K].T") is stored K x M and seen as its
    .T view, so its strides are (1, M) as the kernel expects.
    """
    import torch

    if arg.shape is None:
        raise KernelSpecError(f"Cannot run with a bare pointer argument ({arg}): its size is unknown.",
                              hint="Describe it with a shape, e.g. --arg x_ptr=fp32[4096].")
    shape = tuple(reversed(arg.shape)) if arg.transposed else arg.shape
    dtype = torch_dtype(arg.dtype)
    if dtype.is_floating_point:
        if arg.dtype.startswith("fp8"):
            t = torch.randn(shape, device=device, generator=generator).to(dtype)
        else:
            t = torch.randn(shape, device=device, dtype=dtype, generator=generator)
    elif dtype == torch.bool:
        t = torch.randint(0, 2, shape, device=device, generator=generator).bool()
    else:  # small integers; unsigned ones (a u32 lock, u8 codes) from 0
        low = 0 if arg.dtype.startswith("u") else -8
        t = torch.randint(low, low + 16, shape, device=device, dtype=dtype, generator=generator)
    if arg.offset:  # "fp16[N]+k": a view k elements into its storage, as x[k:] is (unaligned)
        storage = torch.empty(t.numel() + arg.offset, device=device, dtype=dtype)
        view = storage[arg.offset:].view(shape)
        view.copy_(t)
        t = view
    return t.T if arg.transposed else t


def poison(t) -> None:
    import torch

    if t.dtype.is_floating_point:
        t.fill_(float("nan"))
    elif t.dtype != torch.bool:
        t.fill_(-1)


def make_inputs(loaded: Loaded, device: str, seed: int | None = None) -> dict[str, Any]:
    """{arg name: tensor or scalar} for the spec's runtime arguments."""
    import torch

    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(time.time_ns() % (2**31)))
    outputs = set(output_names(loaded))
    values: dict[str, Any] = {}
    for name, text in loaded.spec.args.items():
        value = parse_arg_value(text)
        if isinstance(value, TensorArg):
            t = make_tensor(value, device, gen)
            if name in outputs:
                poison(t)
            values[name] = t
        elif isinstance(value, DescArg):  # a host-side TensorDescriptor over a tensor of that shape
            from triton.tools.tensor_descriptor import TensorDescriptor

            tensor = make_tensor(TensorArg(value.dtype, value.shape or value.block), device, gen)
            values[name] = TensorDescriptor.from_tensor(tensor, list(value.block))
        else:
            values[name] = value
    return values


def tensor_bytes(loaded: Loaded, values: dict[str, Any]) -> tuple[int, int]:
    """(bytes read, bytes written): each input read once, each output written once.

    The fewest bytes the kernel must move through device memory; the
    effective bandwidth is (read + written) / time.
    """
    outputs = set(output_names(loaded))
    read = written = 0
    for name, v in values.items():
        if hasattr(v, "element_size"):
            size = v.numel() * v.element_size()
            if name in outputs:
                written += size
            else:
                read += size
    return read, written


# --------------------------------------------------------------------------
# Launch and check
# --------------------------------------------------------------------------


def launch(loaded: Loaded, values: dict[str, Any], fn=None):
    """kernel[grid](*args, **constexprs, num_warps=..., num_stages=..., maxnreg=..., num_ctas=..., enable_fp_fusion=...).

    The launch options are passed only when set, as a user's launch would
    (Triton's JIT then compiles with them; the interpreter ignores them).
    """
    spec = loaded.spec
    if not spec.grid:
        raise KernelSpecError(f"No launch grid for {spec.kernel}.",
                              hint="Declare EXAMPLES with a launch function that returns a 'grid'.")
    kernel = fn if fn is not None else loaded.jit_fn
    # every parameter by name, as tritonscope compiled it (kernels interleave constexprs and runtime args)
    bound = {n: values[n] for n in spec.args}
    bound.update({n: kernel_value(v) for n, v in spec.constexprs.items()})
    return kernel[tuple(spec.grid)](**triton_api.launch_keywords(bound, num_warps=spec.num_warps,
                                                                 num_stages=spec.num_stages,
                                                                 options=loaded.spec.launch_options()))


# What the interpreter cannot show: it runs the kernel's Python semantics, not Triton's generated code.
INTERPRETER_OPTIONS_NOTE = ("The interpreter runs the kernel's Python semantics on the CPU: the launch options "
                            "({}) change only the GPU code Triton generates, so they have no effect here.")


def reference(loaded: Loaded, values: dict[str, Any]) -> dict[str, Any]:
    """{output name: expected tensor} from the launch's check functions."""
    out = {}
    for name, fn in ((loaded.launch or {}).get("check") or {}).items():
        wanted = inspect.signature(fn).parameters
        out[name] = fn(**{k: values[k] for k in wanted})
    return out


# Elements compared at once: float64 copies of a chunk of both tensors stay small (2^24 elements: 128 MB each).
CHUNK = 1 << 24


def compare(name: str, got, want, tolerance: float) -> CheckResult:
    """The output against its reference, in float64 on the output's own device (a GPU's output is compared on
    the GPU: copying an 8192x8192 result to the CPU to compare there took about a second), chunk by chunk."""
    import torch

    got = got.detach()
    want = want.detach().to(got.device)
    if tuple(got.shape) != tuple(want.shape):
        want = want.reshape(got.shape)
    g_flat, w_flat = got.reshape(-1), want.reshape(-1)
    zero = torch.zeros((), dtype=torch.float64, device=got.device)
    unwritten, max_abs, sq_diff, sq_want = zero.clone(), zero.clone(), zero.clone(), zero.clone()
    for start in range(0, g_flat.numel(), CHUNK):
        g = g_flat[start:start + CHUNK].to(torch.float64)
        w = w_flat[start:start + CHUNK].to(torch.float64)
        unwritten += (~torch.isfinite(g)).sum()
        diff = g - w
        max_abs = torch.maximum(max_abs, diff.abs().max())   # NaN stays NaN
        sq_diff += (diff * diff).sum()
        sq_want += (w * w).sum()
    unwritten_n, max_abs_f = int(unwritten), float(max_abs)
    denom = math.sqrt(float(sq_want))
    rel = math.sqrt(float(sq_diff)) / denom if denom else max_abs_f
    if math.isnan(rel) or math.isnan(max_abs_f):
        rel = max_abs_f = float("nan")
    dtype = str(got.dtype).replace("torch.", "")
    passed = unwritten_n == 0 and not math.isnan(rel) and rel <= tolerance
    return CheckResult(name, dtype, max_abs_f, rel, tolerance, unwritten_n, passed)


def tolerance_for(loaded: Loaded, tf32: bool | None) -> float:
    """The loosest tolerance among the tensors' dtypes (and TF32 if in play)."""
    names = set()
    for text in loaded.spec.args.values():
        v = parse_arg_value(text)
        if isinstance(v, TensorArg):
            names.add(v.dtype)
    tols = [TOLERANCE.get(n, 1e-5) for n in names if n in TOLERANCE] or [1e-5]
    if tf32:
        tols.append(TOLERANCE["tf32"])
    return max(tols)


def check(loaded: Loaded, values: dict[str, Any], tf32: bool | None) -> list[CheckResult]:
    tol = tolerance_for(loaded, tf32)
    expected = reference(loaded, values)
    return [compare(name, values[name], want, tol) for name, want in expected.items()]


def uses_tf32(ptx: str | None) -> bool | None:
    """True when the compiled PTX multiplies in TF32 (mma/wgmma ... .tf32)."""
    if not ptx:
        return None
    import re

    return bool(re.search(r"\b(?:mma\.sync|wgmma\.mma_async)\S*\.tf32\b", ptx))


def _fp32_dot_in_source(loaded: Loaded) -> bool:
    """The kernel calls tl.dot and takes fp32 tensors: on a GPU that is TF32 by default."""
    try:
        src = inspect.getsource(triton_api.python_function(loaded.jit_fn))
    except (OSError, TypeError):
        return False
    outputs = set(output_names(loaded))
    fp32 = any(isinstance(v := parse_arg_value(t), TensorArg) and v.dtype == "fp32"
               for n, t in loaded.spec.args.items() if n not in outputs)
    return fp32 and "tl.dot(" in src and "input_precision" not in src and "allow_tf32" not in src


def tf32_note(tf32: bool | None, mode: str, loaded: Loaded) -> str | None:
    if mode == "gpu" and tf32:
        return ("TF32 in play: fp32 inputs to tl.dot are multiplied in TF32 (10-bit mantissa), Triton's default; "
                "pass input_precision='ieee' to tl.dot for full fp32.")
    if mode == "interpreter" and _fp32_dot_in_source(loaded):
        return ("The interpreter computes this fp32 tl.dot in full fp32; on a GPU Triton uses TF32 by default, "
                "so GPU results differ more (about 1e-3 relative).")
    return None


def run_on_gpu(loaded: Loaded, *, seed: int | None = None) -> tuple[RunResult, Any]:
    """Launch on the local GPU and check: (result, the CompiledKernel Triton used)."""
    import torch

    require_gpu("Running a kernel")
    triton_api.set_allocator()
    values = make_inputs(loaded, "cuda", seed)
    started = time.perf_counter()
    compiled = launch(loaded, values)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    ptx = getattr(compiled, "asm", {}).get("ptx") if compiled is not None else None
    tf32 = uses_tf32(ptx)
    checks = check(loaded, values, tf32)
    result = RunResult(loaded.spec.target, loaded.spec.kernel, loaded.spec.label(options=True), "gpu", device_name(),
                       checks, tf32, tf32_note(tf32, "gpu", loaded), seconds, versions(),
                       options=loaded.spec.launch_options())
    return result, compiled


# --------------------------------------------------------------------------
# The interpreter, in a child process
# --------------------------------------------------------------------------


def run_interpreted(request: Request, *, seed: int | None = 0, timeout: float = 600,
                    save_to: str | None = None) -> RunResult:
    """Run through TRITON_INTERPRET=1 in a child process; raise typed errors.

    With `save_to`, the child also writes {arg name: tensor} (inputs and
    outputs after the run) there with torch.save, e.g. to compare with a GPU.
    """
    import importlib.util

    from tritonscope.core.child import run_in_child

    if importlib.util.find_spec("torch") is None:  # the inputs are torch tensors: say so before any work
        raise NoGPUError("`tritonscope run --interpret` needs PyTorch (it makes the inputs and the reference on "
                         "the CPU); PyTorch is not installed.",
                         hint="Install the CPU build: pip install torch (or pip install 'tritonscope[run]').")
    payload = {"request": asdict(request), "seed": seed, "save_to": save_to}
    answer = run_in_child("tritonscope.measure.runner:_interpret_worker", payload, what="The interpreter process",
                          env=dict(os.environ, TRITON_INTERPRET="1"), timeout=timeout)
    return RunResult.from_dict(answer)


def _interpret_worker(payload: dict) -> dict:
    """In the child process (TRITON_INTERPRET=1): run, check, and return the RunResult as a dict."""
    import torch

    triton_api.check_interpreter_numpy()
    from tritonscope.core.model import DEFAULT_ARCH

    req = Request(**payload["request"])
    loaded = Pipeline().bind(resolve(req, DEFAULT_ARCH))  # the interpreter runs no arch's code: the default
    values = make_inputs(loaded, "cpu", payload.get("seed"))
    started = time.perf_counter()
    try:
        launch(loaded, values, fn=loaded.jit_fn.interpreted)
    except TritonscopeError:
        raise
    except Exception as e:
        raise TritonscopeError(f"The interpreter stopped: {type(e).__name__}: {e}".strip(),
                               hint="Interpreted kernels run as NumPy on the CPU; check the kernel's indexing "
                                    "(an out-of-bounds access shows up here)." ) from e
    seconds = time.perf_counter() - started
    checks = check(loaded, values, tf32=None)
    if payload.get("save_to"):
        torch.save({k: v for k, v in values.items() if isinstance(v, torch.Tensor)}, payload["save_to"])
    options = loaded.spec.launch_options()
    notes = [INTERPRETER_OPTIONS_NOTE.format(", ".join(f"{k}={v}" for k, v in options.items()))] if options else []
    return RunResult(loaded.spec.target, loaded.spec.kernel, loaded.spec.label(options=True).replace(f" {loaded.spec.arch}", ""),
                     "interpreter", "CPU (Triton interpreter)", checks, None,
                     tf32_note(None, "interpreter", loaded), seconds, versions(), options=options,
                     notes=notes).to_dict()
