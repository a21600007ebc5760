"""The tritonscope version (a module of its own so that importing it never imports the package's API)."""

__version__ = "0.1.0"
