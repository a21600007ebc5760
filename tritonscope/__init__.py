"""tritonscope: see what Triton really does with a kernel.

The command line is `tritonscope ...`; the Python API (tritonscope.api) is

    import tritonscope
    result = tritonscope.compile("matmul", block=16)   # or a @triton.jit function
    result.registers, result.line("tl.dot")["ptx"], result.save("r.html")

Importing the package loads neither triton nor torch: they load on first use.
"""

from tritonscope._version import __version__  # its own module: report.py and cli.py read it without a cycle

from tritonscope.api import (Explained, Result, compile, explain, predicted_time, prune_by_prediction, show,  # noqa: E402
                             tune)  # (light: imports nothing heavy)

__all__ = ["Result", "Explained", "compile", "explain", "tune", "show", "prune_by_prediction", "predicted_time",
           "__version__"]

