"""tritonscope: see what Triton really does with a kernel."""

__version__ = "0.1.0"
