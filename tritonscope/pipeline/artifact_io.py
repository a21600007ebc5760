"""An Artifact from its JSON form (dataclasses.asdict), for saved reports and the passes child.

Its own module, importing only model.py, so that readers of an Artifact
(report.py, passes.py) need not import each other.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from tritonscope.core.model import ArgSpecialization, Artifact, KernelSpec, Resources


def _build(cls, data: dict[str, Any]):
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


def artifact_from_dict(a: dict[str, Any], remarks: list | None = None) -> Artifact:
    """An Artifact from its dict (`asdict`); `remarks` (the report's top-level list) win over a["remarks"]."""
    spec = _build(KernelSpec, a["spec"])
    if spec.shape is not None:
        spec = replace(spec, shape=tuple(spec.shape))
    if spec.grid is not None:
        spec = replace(spec, grid=tuple(spec.grid))
    # JSON keeps tuples as lists (an older report has neither field: the defaults)
    spec = replace(spec, asked=tuple(str(q) for q in spec.asked or ()),
                   heuristics=tuple(str(h) for h in spec.heuristics or ()),
                   autotune=dict(spec.autotune) if isinstance(spec.autotune, dict) else None)
    remarks = a.get("remarks", []) if remarks is None else remarks
    if not isinstance(remarks, list) or not all(isinstance(r, dict) for r in remarks):
        raise TypeError("the remarks are not a list of objects")
    return Artifact(
        spec=spec,
        triton_version=a["triton_version"],
        kernel_hash=a["kernel_hash"],
        stages=dict(a["stages"]),
        python_first_line=a["python_first_line"],
        metadata=a["metadata"],
        resources=_build(Resources, a["resources"]),
        specialization=[ArgSpecialization(s["name"], s["type"], tuple(s["attrs"]), s.get("value"))
                        for s in a["specialization"]],
        warnings=list(a.get("warnings", [])),
        env=dict(a.get("env", {})),
        compile_seconds=a.get("compile_seconds", 0.0),
        remarks=[dict(r) for r in remarks],
    )
