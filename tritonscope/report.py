"""Saved reports: the versioned JSON schema, and writing report files.

JSON holds everything the tool knows (an Analysis); `tritonscope show`
rebuilds the Analysis from it without importing Triton.
"""

from __future__ import annotations

import json
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from tritonscope.analysis import Analysis
from tritonscope.errors import InputFileError
from tritonscope.model import ArgSpecialization, Artifact, KernelSpec, Line, Note, ParsedStage, Resources, SourceLoc

SCHEMA = "tritonscope.report"
SCHEMA_VERSION = 1


def analysis_to_dict(analysis: Analysis) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "artifact": asdict(analysis.artifact),
        "parsed": {k: [asdict(line) for line in st.lines] for k, st in analysis.parsed.items()},
        "notes": [asdict(n) for n in analysis.notes],
        "mix": analysis.mix,
        "layouts": [asdict(x) if hasattr(x, "__dataclass_fields__") else x for x in analysis.layouts],
    }


def analysis_from_dict(data: dict[str, Any], source: str = "report") -> Analysis:
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise InputFileError(f"{source} is not a tritonscope report (no '{SCHEMA}' schema tag).",
                             hint="Save one with `tritonscope compile ... --save report.json`.")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise InputFileError(
            f"{source} uses report schema version {version}; this tritonscope reads version {SCHEMA_VERSION}.",
            hint="Re-save the report with this version of tritonscope.")
    try:
        a = data["artifact"]
        spec = _build(KernelSpec, a["spec"])
        if spec.shape is not None:
            spec = _replace(spec, shape=tuple(spec.shape))
        if spec.grid is not None:
            spec = _replace(spec, grid=tuple(spec.grid))
        artifact = Artifact(
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
        )
        parsed = {k: ParsedStage(k, tuple(
            Line(ln["number"], ln["text"], ln["raw"], SourceLoc(**ln["loc"]) if ln.get("loc") else None)
            for ln in lines)) for k, lines in data["parsed"].items()}
        notes = [Note(**n) for n in data["notes"]]
        return Analysis(artifact, parsed, notes, data["mix"], list(data.get("layouts", [])))
    except (KeyError, TypeError, ValueError) as e:
        raise InputFileError(f"{source} is a damaged report (schema version {version}): {type(e).__name__}: {e}",
                             hint="Re-save the report with `--save FILE.json`.") from e


def load_analysis(path: str | Path) -> Analysis:
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError as e:
        from tritonscope.errors import NotFoundError

        raise NotFoundError(f"No such report: {path}", hint="Check the path.") from e
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise InputFileError(f"{path} is not valid JSON: {e}", hint="Give a report saved with --save FILE.json.") from e
    return analysis_from_dict(data, str(path))


def _build(cls, data: dict[str, Any]):
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


def _replace(obj, **changes):
    from dataclasses import replace

    return replace(obj, **changes)


def save_report(analysis: Analysis, path: str, *, force: bool = False, keep_paths: bool = False) -> Path:
    """Write a report; the format follows the extension (filled in by the reports issue)."""
    from tritonscope.errors import OutputError

    raise OutputError(f"Saving reports is not available yet: {path}")
