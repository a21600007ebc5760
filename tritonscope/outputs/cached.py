"""A compile's Analysis, kept in its result-cache entry (pipeline/result_cache.py) as a report dict: read back
when the entry holds one, made and kept otherwise, so a repeat skips parsing and annotating too.  What the
commands (compile, open, diff) analyse a compile with."""

from __future__ import annotations


def analysis_of(compiled):
    """analyze(compiled.artifact), read from its result-cache entry when it has one that holds it.

    An analysis made here goes into the entry (when there is one), so the
    next repeat skips parsing and annotating too.
    """
    from tritonscope.analyses.analysis import analyze
    from tritonscope.outputs.report import analysis_from_dict, analysis_to_dict

    entry = compiled.entry
    replayed = entry is not None and compiled.loaded is None  # answered from the result cache: not compiled now
    kept = entry.analysis() if entry is not None else None
    if kept is not None:
        try:
            analysis = analysis_from_dict(kept, "tritonscope's result cache")
            analysis.replayed = replayed
            return analysis
        except Exception:  # a damaged entry: analyze afresh (and keep that)
            pass
    analysis = analyze(compiled.artifact)
    if entry is not None:
        entry.keep_analysis(analysis_to_dict(analysis))
    analysis.replayed = replayed
    return analysis
