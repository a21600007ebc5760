"""Coarse classes of ops a pass adds or removes (async copies, waits, barriers, dots...), over TTIR, TTGIR and LLVM IR."""

from __future__ import annotations

import re


# The stages whose pass managers are dumped, in pipeline order.

# Coarse classes of ops, over the three dialects (MLIR ops and LLVM inline asm).
_CLASSES: tuple[tuple[str, re.Pattern], ...] = (
    # ttg.async_copy_global_to_local / ttng.async_tma_copy_global_to_local / cp.async.ca.shared.global
    ("async copy", re.compile(r"async_copy_global_to_local|async_tma_copy|buffer_load_to_local"
                              r"|cp\.async\.(?:ca|cg|bulk)\b|nvvm\.cp\.async\.shared")),
    # ttg.async_commit_group / cp.async.commit_group
    ("async commit", re.compile(r"async_commit_group|cp\.async\.commit[._]group")),
    # ttg.async_wait / ttng.wait_barrier / cp.async.wait_group / ttng.warp_group_dot_wait
    ("wait", re.compile(r"ttg\.async_wait|ttng\.wait_barrier|cp\.async\.wait[._]group|warp_group_dot_wait"
                        r"|wgmma\.wait_group|wgmma_wait_group|async_tma_store_wait|nvvm\.cp\.async\.wait")),
    # gpu.barrier / nvvm.barrier0 / bar.sync / barrier.sync / ttng.barrier_expect
    ("barrier", re.compile(r"\bgpu\.barrier\b|\bttg\.barrier\b|nvvm\.barrier|\bbar\.sync\b|\bbarrier\.sync\b"
                           r"|ttng\.(?:init_barrier|barrier_expect|arrive_barrier)|mbarrier")),
    ("convert_layout", re.compile(r"\bttg\.convert_layout\b")),
    ("shared alloc", re.compile(r"\bttg\.local_alloc\b")),
    ("shared load", re.compile(r"\bttg\.local_load\b|ldmatrix")),
    ("shared store", re.compile(r"\bttg\.local_store\b|stmatrix")),
    ("dot", re.compile(r"\btt\.dot\b|ttng\.warp_group_dot\b|ttng\.tc_gen5_mma|mma\.sync|wgmma\.mma_async"
                       r"|\bnvg\.wgmma\b")),
)
CLASS_ORDER = tuple(name for name, _ in _CLASSES)
_KIND_CLASSES: dict[str, tuple[str, ...]] = {}


def _classes_of(text: str) -> tuple[str, ...]:
    return tuple(cls for cls, rx in _CLASSES if rx.search(text))


def _kind_classes(kind: str) -> tuple[str, ...]:
    """The classes of an op kind (memoized: an op's kind decides its class)."""
    found = _KIND_CLASSES.get(kind)
    if found is None:
        found = _KIND_CLASSES[kind] = _classes_of(kind)
    return found
