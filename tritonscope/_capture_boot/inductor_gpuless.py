"""`capture --arch` with no GPU: torch.compile programs (Inductor generates, Triton compiles, nothing runs).

The program's `cuda` tensors are CPU tensors behind a torch function mode (cuda_standin.py), so Dynamo, left
alone, would see CPU tensors and Inductor would write C++ for the CPU.  Here `torch.compile` keeps Dynamo
(its graph capture, its guards) with a backend of our own, called with the mode off:

1. Dynamo's FX graph is traced again (make_fx, Inductor's decompositions) on fake tensors of the same
   shapes, strides and dtypes on `cuda` (FakeTensorMode makes them with no GPU);
2. Inductor's compile_fx_inner compiles that graph for cuda: it writes its kernel files and Triton compiles
   each one for the target (Triton's driver answers as it, gpuless.py), so the capture's compilation
   listener records every kernel as on a GPU;
3. the one step that needs a device, loading each compiled binary (CachingAutotuner._make_launchers), is
   left out; no kernel is launched and no config is timed;
4. the compiled graph returns new `cuda` tensors (CPU memory) of its outputs' shapes: their values are not
   computed.

Only the inductor backend is handled (another backend, e.g. "eager", is torch's own); `options=` go to
Inductor as config patches; a `mode=` that times choices on a GPU (max-autotune) is compiled as the default
mode, and the capture says so; shapes are static (`dynamic=False` unless the program says otherwise).  The
graph is traced for inference (no autograd graph): a program that calls backward() on its output fails.
"""

from __future__ import annotations

import functools
import sys

_installed = False


def install(torch) -> None:
    """Replace torch.compile (inductor backend) in this process; once."""
    global _installed
    if _installed:
        return
    _installed = True
    original = torch.compile

    @functools.wraps(original)
    def compile(model=None, *, backend="inductor", **kwargs):  # noqa: A001 -- torch.compile's own name
        if model is None:  # used as @torch.compile(...)
            return lambda m: compile(m, backend=backend, **kwargs)
        if backend != "inductor":
            return original(model, backend=backend, **kwargs)
        _no_launchers()  # here, not at install: torch._inductor is a long import a program may never need
        mode, options = kwargs.pop("mode", None), kwargs.pop("options", None)
        if mode not in (None, "default", "reduce-overhead"):  # reduce-overhead: CUDA graphs, never run here
            print(f"tritonscope capture: torch.compile(mode={mode!r}) times its choices on a GPU; with none, "
                  "its graphs are compiled as the default mode would (a guess at what that mode picks).",
                  file=sys.stderr)
        kwargs.setdefault("dynamic", False)  # the example inputs' own shapes (a symbolic size has no fake twin)
        compiled = original(model, backend=functools.partial(_backend, options=options), **kwargs)
        return _without_the_mode(compiled)

    torch.compile = compile


def _no_launchers() -> None:
    """Inductor's kernels compile (Triton, for the target) but are never loaded onto a device."""
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    if getattr(CachingAutotuner, "_tritonscope_gpuless", False):
        return
    CachingAutotuner._tritonscope_gpuless = True

    def _make_launchers(self):  # loading a cubin needs a GPU: compiled and recorded is as far as it goes
        self.launchers = []

    CachingAutotuner._make_launchers = _make_launchers
    CachingAutotuner._dynamic_scale_rblock = lambda self: None
    from torch._inductor.runtime import triton_helpers

    # each kernel file sets Triton's active driver to the GPU one (which loads libcuda): Triton's driver here
    # already answers as the target (gpuless.py), and that is the one the compile must see
    triton_helpers.set_driver_to_gpu = lambda: None


def _mode_off():
    from torch.overrides import _pop_mode_temporarily

    from tritonscope._capture_boot import cuda_standin

    return _pop_mode_temporarily() if cuda_standin._mode is not None else _nothing()


class _nothing:  # noqa: N801
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return None


def _without_the_mode(compiled):
    """Call the compiled callable (or module) with the CPU-memory `cuda` mode off: Dynamo traces plain tensors."""
    import torch

    if isinstance(compiled, torch.nn.Module):
        base = type(compiled)

        def __call__(self, *args, **kwargs):
            with _mode_off():
                return base.__call__(self, *args, **kwargs)

        compiled.__class__ = type(base.__name__, (base,), {"__call__": __call__})
        return compiled

    @functools.wraps(compiled)
    def call(*args, **kwargs):
        with _mode_off():
            return compiled(*args, **kwargs)

    return call


def _backend(gm, example_inputs, *, options=None):
    """Dynamo's backend: compile `gm` for cuda with Inductor (kernels compiled, recorded, not loaded)."""
    import torch
    from torch._guards import TracingContext, tracing
    from torch._inductor import config as inductor_config
    from torch._inductor.compile_fx import compile_fx_inner
    from torch._inductor.decomposition import select_decomp_table
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx

    from tritonscope._capture_boot import cuda_standin

    fake = FakeTensorMode(allow_non_fake_inputs=True)

    def on_cuda(t):
        if not isinstance(t, torch.Tensor):
            return t
        with fake:
            return torch.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=t.dtype, device="cuda")

    inputs = [on_cuda(t) for t in example_inputs]
    patches = dict(options or {})
    patches.setdefault("compile_threads", 1)
    # a tracing context of its own: Dynamo's holds its fake mode (CPU tensors), and Inductor takes the context's
    with tracing(TracingContext(fake)), torch.no_grad(), fake, inductor_config.patch(patches):
        graph = make_fx(gm, decomposition_table=select_decomp_table(), tracing_mode="fake")(*inputs)
        outputs = graph(*inputs)
        compile_fx_inner(graph, inputs)
    shapes = [(tuple(o.shape), tuple(o.stride()), o.dtype) if isinstance(o, torch.Tensor) else o
              for o in (outputs if isinstance(outputs, (list, tuple)) else [outputs])]

    def run(*args):
        made = [cuda_standin._mark(torch.empty_strided(s[0], s[1], dtype=s[2], device="cpu"))
                if isinstance(s, tuple) else s for s in shapes]
        return tuple(made) if isinstance(outputs, (list, tuple)) else made[0]

    print(f"tritonscope capture: torch.compile graph compiled by Inductor for cuda ({len(gm.graph.nodes)} "
          "nodes); its kernels are compiled and recorded, not run: its outputs are not computed.",
          file=sys.stderr)
    return run
