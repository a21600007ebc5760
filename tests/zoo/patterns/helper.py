"""Sibling helper module for sibling_import.py: a @triton.jit function imported by name.

Mirrors kernel packages that keep their jit helpers in a neighbouring file and import
them with a plain ``from helper import f`` (scripts run from their own folder).
Written for tritonscope's tests, not copied.
"""
import triton
import triton.language as tl


@triton.jit
def silu_mul(gate, up):
    g = gate.to(tl.float32)
    return (g * tl.sigmoid(g) * up.to(tl.float32))
