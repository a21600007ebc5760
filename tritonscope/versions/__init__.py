"""Across Triton versions: the same kernels compiled by two Tritons, GPU-less, and what changed for speed.

    envs.py     environments with another Triton (made with pip, cached; or the user's Python)
    worker.py   the child's side: many kernels compiled in one process of that environment
    run.py      sides, jobs, and the parallel compile of both versions
    targets.py  command-line targets -> jobs (samples, kernels, captures, caches, dumps, folders)
    metrics.py  one compile -> the figures that matter for speed (registers ... predicted time)
    compare.py  two compiles -> changes, how much worse, --fail-on rules
    report.py   the report and its renderers

`compare_versions` is the one entry point; `record`/`from_record` keep a
run's compiles (every stage, as the Artifacts came back) in a folder and
rebuild the same report from it without any Triton (the tests replay these).

Imports every layer below it, outputs included; only the shell (commands) imports it.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Callable

from tritonscope.versions.compare import KernelRow, Rule, apply_rules, make_row, sort_rows
from tritonscope.versions.report import VersionsReport
from tritonscope.versions.run import Job, Side, compile_all, error_line

RECORD_FORMAT = "tritonscope-versions-record"


def compare_versions(jobs: list[Job], a: Side, b: Side, *, workers: int = 2, timeout: float = 600,
                     rules: list[Rule] | None = None, progress: Callable[[str], None] | None = None,
                     record: str | Path | None = None, predict: bool = True) -> VersionsReport:
    """Compile every job under A and B (in parallel) and compare them; `record` keeps what came back."""
    results = compile_all(jobs, [a, b], workers=workers, timeout=timeout, progress=progress)
    if record is not None:
        write_record(record, jobs, [a, b], results)
    return build_report(jobs, [a.label(), b.label()], results, rules=rules, predict=predict, sides=[a, b])


def build_report(jobs: list[Job], labels: list[str], results: dict, *, rules: list[Rule] | None = None,
                 predict: bool = True, sides: list[Side] | None = None) -> VersionsReport:
    from tritonscope.analyses.analysis import analyze
    from tritonscope.pipeline.result_cache import decode_artifact
    from tritonscope.versions.metrics import speed_facts

    rows: list[KernelRow] = []
    for i, job in enumerate(jobs):
        facts, errors = [], []
        for si in (0, 1):
            res = results.get((si, i)) or {"error": {"type": "TritonscopeError", "message": "no result"}}
            if "artifact" in res:
                facts.append(speed_facts(analyze(decode_artifact(res["artifact"])), predict=predict))
                errors.append(None)
            else:
                err = dict(res["error"])
                err.setdefault("line", error_line(err, sides[si] if sides else None))
                facts.append(None)
                errors.append(err)
        rows.append(make_row(job.key, job.arch, facts[0], facts[1], errors[0], errors[1]))
    rows = sort_rows(rows)
    if rules:
        apply_rules(rows, rules)
    return VersionsReport(labels[0], labels[1], rows, rules=[r.text for r in rules or []])


def write_record(folder: str | Path, jobs: list[Job], sides: list[Side], results: dict) -> Path:
    """The run's compiles as files: manifest.json, and per job and side its Artifact (every stage), gzipped JSON.

    Paths under the current folder are written relative to it (a record is meant to be moved: checked in,
    attached to a CI run)."""
    from tritonscope.core.output import write_atomic

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for i, job in enumerate(jobs):
        entry = {"key": job.key, "arch": job.arch, "sides": []}
        for si in (0, 1):
            res = results.get((si, i), {})
            if "artifact" in res:
                name = f"{i:03d}-{'ab'[si]}.json.gz"
                data = json.dumps(res["artifact"]).replace(json.dumps(os.getcwd() + os.sep)[1:-1], "")
                write_atomic(folder / name, gzip.compress(data.encode(), mtime=0), force=True)
                entry["sides"].append({"artifact": name})
            else:
                e = dict(res.get("error") or {"message": "no result"})
                e["line"] = error_line(e, sides[si])
                entry["sides"].append({"error": e})
        entries.append(entry)
    manifest = {"format": RECORD_FORMAT, "sides": [{"label": s.label(), "triton": s.triton, "knobs": s.knobs}
                                                   for s in sides], "jobs": entries}
    write_atomic(folder / "manifest.json", json.dumps(manifest, indent=1) + "\n", force=True)
    return folder


def from_record(folder: str | Path, *, rules: list[Rule] | None = None, predict: bool = True) -> VersionsReport:
    """The report of a recorded run, rebuilt from its files (no Triton, no compile)."""
    from tritonscope.core.errors import InputFileError, NotFoundError

    folder = Path(folder)
    path = folder / "manifest.json"
    if not path.is_file():
        raise NotFoundError(f"{folder}: no manifest.json (not a `versions --record` folder).")
    try:
        manifest = json.loads(path.read_text())
        if manifest.get("format") != RECORD_FORMAT:
            raise ValueError("format")
        jobs, results = [], {}
        for i, entry in enumerate(manifest["jobs"]):
            jobs.append(Job(entry["key"], entry["arch"], {}))
            for si, side in enumerate(entry["sides"]):
                if "artifact" in side:
                    results[(si, i)] = {"artifact": json.loads(gzip.decompress((folder / side["artifact"]).read_bytes()))}
                else:
                    results[(si, i)] = {"error": side.get("error") or {"message": "no result"}}
        labels = [s["label"] for s in manifest["sides"]]
    except (ValueError, KeyError, TypeError, OSError) as e:
        raise InputFileError(f"{folder}: not a readable versions record ({type(e).__name__}: {e}).") from None
    return build_report(jobs, labels, results, rules=rules, predict=predict)
