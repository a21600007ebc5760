"""The default arch of a request: the one it names, else the local GPU's, else model.DEFAULT_ARCH."""

from __future__ import annotations


def arch_default(arch_given) -> str:
    """The default arch for a request: unused when the request names its own (then no local GPU is looked
    for), else the local GPU's, else model.DEFAULT_ARCH."""
    from tritonscope.core.model import DEFAULT_ARCH

    return DEFAULT_ARCH if arch_given else default_arch()


def default_arch() -> str:
    """The local GPU's arch when there is one we know, else sm_90a."""
    from tritonscope import triton_api
    from tritonscope.core.model import DEFAULT_ARCH, arch_for_capability

    cap = triton_api.local_gpu_capability()
    arch = arch_for_capability(cap) if cap else None
    return arch.name if arch else DEFAULT_ARCH
