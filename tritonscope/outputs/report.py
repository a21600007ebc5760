"""Saved reports: the versioned JSON schema (to_dict, from_dict, load; writing them: save.py).

JSON holds everything the tool knows (an Analysis); `tritonscope show`
rebuilds the Analysis from it without importing Triton.

Schema versions:
  1  artifact, parsed stages, notes, mix, layouts.
  2  adds "summary" (summary.Summary: fit, occupancy, spills from STACK,
     LOCAL and STL/LDL, computed once at compile time) and each note's
     "facts".  A version-1 report is migrated on reading: its summary is
     recomputed from the stored artifact (so its spills now count the stack
     frame), and its notes get the facts that annotating its stored stages
     gives today.  Neither needs Triton.
     Later additions to version 2 (optional; reports without them still open):
     "remarks", Triton's own remarks and warnings (remarks.Remark dicts: file,
     line, col, severity, message, stage), which the notes of kind "remark"
     pin to stage lines; "passes", the pass table (passes.PassTrace.to_dict())
     when the report was saved with it (`compile --passes`, `passes --save`);
     "explain", explain's verdicts (explain.Explanation.to_dict(): kernel,
     label, arch, verdicts with kind, severity, title, evidence, fix and
     facts, the verdicts not judged and why) when saved with them
     (`compile --explain`, `explain --save`).  A report without them opens
     as before; an older tritonscope ignores the key.
"""

from __future__ import annotations

import json
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from tritonscope.analyses.analysis import Analysis
from tritonscope.pipeline.artifact_io import artifact_from_dict
from tritonscope.core.errors import InputFileError
from tritonscope.core.model import Artifact, Line, Note, ParsedStage, Resources, SourceLoc
from tritonscope.inputs.limits import max_report_bytes

SCHEMA = "tritonscope.report"
SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)


def analysis_to_dict(analysis: Analysis) -> dict[str, Any]:
    artifact = asdict(analysis.artifact)
    remarks = artifact.pop("remarks", [])
    out = {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "artifact": artifact,
        "parsed": {k: [line_dict(line) for line in st.lines] for k, st in analysis.parsed.items()},
        "notes": [asdict(n) for n in analysis.notes],
        "mix": analysis.mix,
        "summary": analysis.summary.to_dict(),
        "layouts": [asdict(x) if hasattr(x, "__dataclass_fields__") else x for x in analysis.layouts],
        "remarks": remarks,
        # Extra keys (readers ignore them): who wrote the report, and how paths are written.
        "versions": _versions(analysis),
        "paths": "as compiled",
    }
    if analysis.passes is not None:
        out["passes"] = analysis.passes
    from tritonscope.analyses.explain import explanation_of

    explained = explanation_of(analysis)
    if explained is not None:
        out["explain"] = explained
    if analysis.prediction is not None:
        out["prediction"] = analysis.prediction
    return out


_LINE_FIELDS = tuple(f.name for f in fields(Line))
_LOC_FIELDS = tuple(f.name for f in fields(SourceLoc))


def line_dict(line: Line) -> dict[str, Any]:
    """asdict(line), without its generic walk and deep copies: a report holds every line of every stage
    (tens of thousands), and Line's fields are plain values but for its SourceLoc."""
    out = {name: getattr(line, name) for name in _LINE_FIELDS}
    if line.loc is not None:
        out["loc"] = {name: getattr(line.loc, name) for name in _LOC_FIELDS}
    return out


def _versions(analysis: Analysis) -> dict[str, str]:
    import platform

    from tritonscope._version import __version__

    return {"tritonscope": __version__, "triton": analysis.artifact.triton_version,
            "python": platform.python_version()}


def analysis_from_dict(data: dict[str, Any], source: str = "report") -> Analysis:
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise InputFileError(f"{source} is not a tritonscope report (no '{SCHEMA}' schema tag).",
                             hint="Save one with `tritonscope compile ... --save report.json`.")
    version = data.get("schema_version")
    if version not in READABLE_VERSIONS:
        raise InputFileError(
            f"{source} uses report schema version {version}; this tritonscope reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))}.",
            hint="Re-save the report with this version of tritonscope.")
    try:
        artifact = artifact_from_dict(data["artifact"], data.get("remarks"))
        parsed = {k: ParsedStage(k, tuple(
            Line(ln["number"], ln["text"], ln["raw"], SourceLoc(**ln["loc"]) if ln.get("loc") else None)
            for ln in lines)) for k, lines in data["parsed"].items()}
        notes = [_note(n) for n in data["notes"]]
        _check_types(artifact, parsed, notes, data["mix"])
        from tritonscope.language.layouts import check_layout_record

        if not isinstance(data.get("layouts", []), list):
            raise TypeError("the layouts are not a list")
        for record in data.get("layouts", []):
            check_layout_record(record)
        if version == 1:
            return _migrate_v1(artifact, parsed, notes, data["mix"], list(data.get("layouts", [])))
        from tritonscope.analyses.summary import Summary

        passes = data.get("passes")
        if passes is not None and not isinstance(passes, dict):
            raise TypeError("the pass table is not an object")
        explained = data.get("explain")
        if explained is not None:
            from tritonscope.analyses.explain import attach_explanation

            _check_explain(explained)
        prediction = data.get("prediction")
        if prediction is not None:
            _check_prediction(prediction)
        analysis = Analysis(artifact, parsed, notes, data["mix"], list(data.get("layouts", [])),
                            summary=Summary.from_dict(data["summary"]), passes=passes, prediction=prediction)
        return attach_explanation(analysis, explained) if explained is not None else analysis
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise InputFileError(f"{source} is a damaged report (schema version {version}): {type(e).__name__}: {e}",
                             hint="Re-save the report with `--save FILE.json`.") from e


def _check_prediction(data: Any) -> None:
    """A saved prediction (cost.Prediction.to_dict()) as the summary reads it: numbers or None, words."""
    _expect(data, dict, "prediction")
    for name in ("predicted_ms", "bound_ms", "expected_error"):
        if data.get(name) is not None:
            _expect(data[name], (int, float), f"prediction.{name}")
    for name in ("gpu", "regime", "regime_words", "why", "calibration"):
        if data.get(name) is not None:
            _expect(data[name], str, f"prediction.{name}")
    if data.get("terms_ms") is not None:
        _expect(data["terms_ms"], dict, "prediction.terms_ms")
        for key, value in data["terms_ms"].items():
            _expect(value, (int, float), f"prediction.terms_ms[{key}]")


def _expect(value: Any, types: type | tuple[type, ...], what: str) -> None:
    """TypeError (-> 'damaged report', exit 7) unless `value` is one of `types` (bool is not an int here)."""
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        raise TypeError(f"{what} is a bool")
    if not isinstance(value, types):
        raise TypeError(f"{what} is a {type(value).__name__}")


def _check_types(artifact: Artifact, parsed: dict[str, ParsedStage], notes: list[Note], mix: Any) -> None:
    """The fields every view reads, checked once on reading: a hand-edited report fails here, with
    exit 7, rather than as a crash in some renderer later (which would say "tritonscope bug", exit 1)."""
    spec = artifact.spec
    for name in ("target", "kernel", "file", "arch"):
        _expect(getattr(spec, name), str, f"spec.{name}")
    for name in ("num_warps", "num_stages"):
        _expect(getattr(spec, name), int, f"spec.{name}")
        if getattr(spec, name) < 1:
            raise ValueError(f"spec.{name} is {getattr(spec, name)}")
    for name in ("args", "constexprs", "options"):
        _expect(getattr(spec, name), dict, f"spec.{name}")
    for f in fields(Resources):
        value = getattr(artifact.resources, f.name)
        if value is not None:
            _expect(value, int, f"resources.{f.name}")
            if value < 0:
                raise ValueError(f"resources.{f.name} is {value}")
    for sp in artifact.specialization:
        _expect(sp.name, str, "a specialization's name")
        _expect(sp.type, str, f"the type of {sp.name}")
        for attr in sp.attrs:
            _expect(attr, str, f"an attribute of {sp.name}")
    _expect(artifact.triton_version, str, "triton_version")
    _expect(artifact.kernel_hash, str, "kernel_hash")
    _expect(artifact.python_first_line, int, "python_first_line")
    _expect(artifact.compile_seconds, (int, float), "compile_seconds")
    _expect(artifact.metadata, dict, "metadata")
    for key, text in artifact.stages.items():
        _expect(text, str, f"stage {key!r}")
    for w in artifact.warnings:
        _expect(w, str, "a warning")
    for key, stage in parsed.items():
        for ln in stage.lines:
            _expect(ln.number, int, f"a line number of {key}")
            _expect(ln.text, str, f"line {ln.number} of {key}")
            _expect(ln.raw, str, f"line {ln.number} of {key} (raw)")
            if ln.loc is not None:
                _expect(ln.loc.file, str, f"the file of line {ln.number} of {key}")
                _expect(ln.loc.line, int, f"the source line of line {ln.number} of {key}")
    for n in notes:
        _expect(n.stage, str, "a note's stage")
        _expect(n.line, int, "a note's line")
        for name in ("kind", "label", "explanation"):
            _expect(getattr(n, name), str, f"a note's {name}")
    _expect(mix, dict, "mix")
    for key, counts in mix.items():
        _expect(counts, dict, f"mix of {key}")
        for count in counts.values():
            _expect(count, int, f"a count in the mix of {key}")


def _check_explain(data: Any) -> None:
    """The Explain section's fields, checked on reading (a damaged one is a damaged report: exit 7)."""
    from tritonscope.analyses.explain import SEVERITIES

    _expect(data, dict, "explain")
    for name in ("kernel", "label", "arch", "triton_version"):
        _expect(data[name], str, f"explain.{name}")
    _expect(data["verdicts"], list, "explain.verdicts")
    for i, v in enumerate(data["verdicts"]):
        what = f"explain.verdicts[{i}]"
        _expect(v, dict, what)
        for name in ("kind", "severity", "title"):
            _expect(v[name], str, f"{what}.{name}")
        if v["severity"] not in SEVERITIES:
            raise ValueError(f"{what}.severity is {v['severity']!r}")
        _expect(v.get("fix", ""), str, f"{what}.fix")
        _expect(v.get("facts", {}), dict, f"{what}.facts")
        for e in v.get("evidence", []):
            _expect(e, list, f"{what}.evidence")
            if len(e) != 3:
                raise ValueError(f"{what}.evidence has an item of {len(e)} fields, not 3")
            _expect(e[0], str, f"{what}.evidence stage")
            _expect(e[1], int, f"{what}.evidence line")
            _expect(e[2], str, f"{what}.evidence text")
        for line in v.get("python_lines", []):
            _expect(line, int, f"{what}.python_lines")
    for key, text in (data.get("python") or {}).items():
        int(key)
        _expect(text, str, f"explain.python[{key}]")
    for item in data.get("skipped") or []:
        _expect(item, dict, "explain.skipped")
        _expect(item["kind"], str, "explain.skipped kind")
        _expect(item["reason"], str, "explain.skipped reason")
    for text in data.get("lacks") or []:
        _expect(text, str, "explain.lacks")


def _note(data: dict[str, Any]) -> Note:
    if not isinstance(data, dict):
        raise TypeError(f"a note is a {type(data).__name__}, not an object")
    note = _build(Note, data)
    if "facts" in data and not isinstance(data["facts"], dict):
        raise TypeError("a note's facts are not an object")
    return note


def _migrate_v1(artifact: Artifact, parsed: dict[str, ParsedStage], notes: list[Note],
                mix: dict[str, dict[str, int]], layouts: list) -> Analysis:
    """A version-1 report as version 2: the summary and the notes' facts recomputed from what it stores.

    The summary comes from the stored artifact (Analysis computes it).  Facts
    come from annotating the stored stages again; each stored note takes the
    facts of the fresh note with its stage, line, kind and label, so the
    report's own notes (and their wording) are kept.
    """
    analysis = Analysis(artifact, parsed, notes, mix, layouts)
    if "facts" not in {f.name for f in fields(Note)} or any(getattr(n, "facts", None) for n in notes):
        return analysis
    from tritonscope.analyses.analysis import analyze

    try:
        fresh = analyze(artifact).notes
    except Exception:  # a stage today's parsers reject: keep the report, without facts
        return analysis
    facts = {(n.stage, n.line, n.kind, n.label): n.facts for n in fresh if getattr(n, "facts", None)}
    analysis.notes = [_replace(n, facts=dict(facts[key])) if (key := (n.stage, n.line, n.kind, n.label)) in facts
                      else n for n in notes]
    return analysis


def load_analysis(path: str | Path) -> Analysis:
    path = Path(path)
    try:
        size = path.stat().st_size
        limit = max_report_bytes()
        if size > limit:
            raise InputFileError(
                f"{path} is {size / (1 << 20):,.0f} MB; reports larger than {limit / (1 << 20):,.0f} MB are "
                "not read (a kernel's report is a few MB).",
                hint="Check that this is the report you meant; to read it anyway, set "
                     "TRITONSCOPE_MAX_REPORT_MB to a larger size.")
        data = json.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        raise _too_deep(path) from None
    except FileNotFoundError as e:
        from tritonscope.core.errors import NotFoundError

        raise NotFoundError(f"No such report: {path}", hint="Check the path.") from e
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise InputFileError(f"{path} is not valid JSON: {e}", hint="Give a report saved with --save FILE.json.") from e
    from tritonscope.core.sanitize import visible_data

    # a received report is not ours: any string in it may carry an escape sequence
    try:
        return analysis_from_dict(visible_data(data), str(path))
    except RecursionError:  # nested just shallowly enough for the JSON reader, too deep for the walk after it
        raise _too_deep(path) from None


def _too_deep(path: Path) -> InputFileError:
    return InputFileError(f"{path} is not a tritonscope report: its JSON is nested too deeply to read.",
                          hint="Give a report saved with --save FILE.json.")


def _build(cls, data: dict[str, Any]):
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


def _replace(obj, **changes):
    from dataclasses import replace

    return replace(obj, **changes)
