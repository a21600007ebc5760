"""Coarse classes of ops a pass adds or removes: the MLIR dialect's (language/dialects/mlir_passes.py OP_CLASSES).

Kept as a module so passes' readers import one name; the words and patterns
live in the dialect, with the rest of tritonscope's class vocabulary.
"""

from __future__ import annotations

from tritonscope.language.dialects.mlir_passes import OP_CLASS_ORDER as CLASS_ORDER  # noqa: F401
from tritonscope.language.dialects.mlir_passes import line_classes, module_stage  # noqa: F401
