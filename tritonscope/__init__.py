"""tritonscope: see what Triton really does with a kernel.

The command line is `tritonscope ...`; the Python API (tritonscope.api) is

    import tritonscope
    result = tritonscope.compile("matmul", block=16)   # or a @triton.jit function
    result.registers, result.line("tl.dot")["ptx"], result.save("r.html")

Importing the package loads neither triton nor torch: they load on first use.
"""

import sys
import types

from tritonscope._version import __version__  # its own module: report.py and cli.py read it without a cycle

from tritonscope.api import Result, compile, prune_by_prediction, show  # noqa: E402  (light: imports nothing heavy)

__all__ = ["Result", "compile", "show", "prune_by_prediction", "__version__"]


class _CallableModule(types.ModuleType):
    """The tritonscope.compile *module*, callable as the API's tritonscope.compile(...)."""

    def __call__(self, *args, **kwargs):
        from tritonscope.api import compile as api_compile

        return api_compile(*args, **kwargs)


class _Package(types.ModuleType):
    """Python binds a submodule to its package's attribute when it is first imported, so loading
    tritonscope/compile.py (Triton's compile step) would replace the API function
    `tritonscope.compile` with that module.  The module then becomes callable instead: both
    `tritonscope.compile(...)` and `tritonscope.compile.compile_artifact` keep working."""

    def __setattr__(self, name, value):
        if name == "compile" and isinstance(value, types.ModuleType) and type(value) is types.ModuleType:
            value.__class__ = _CallableModule
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
if isinstance(sys.modules.get(__name__ + ".compile"), types.ModuleType):  # loaded before us (rare)
    setattr(sys.modules[__name__], "compile", sys.modules[__name__ + ".compile"])
