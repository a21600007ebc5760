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
import zlib
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
    from tritonscope.versions.lld import is_missing_lld as missing_lld
    from tritonscope.versions.metrics import speed_facts

    rows: list[KernelRow] = []
    notes: list[str] = []
    for i, job in enumerate(jobs):
        facts, errors, said = [], [], []
        for si in (0, 1):
            res = results.get((si, i)) or {"error": {"type": "TritonscopeError", "message": "no result"}}
            if "artifact" in res:
                facts.append(speed_facts(analyze(decode_artifact(res["artifact"])), predict=predict))
                errors.append(None)
                if res.get("note"):   # how it was compiled (a capture's kernel from its recorded TTIR: worker.py)
                    said.append(f"{'AB'[si]} ({labels[si]}) {res['note']}")
            else:
                err = dict(res["error"])
                if not err.get("line") or missing_lld(f"{err.get('message')} {err.get('context')}"):
                    err["line"] = error_line(err, sides[si] if sides else None)   # the linker hint over Triton's
                facts.append(None)
                errors.append(err)
        rows.append(make_row(job.key, job.arch, facts[0], facts[1], errors[0], errors[1]))
        rows[-1].notes = said
        notes += [f"{job.key} ({job.arch}): {n}" for n in said]
    rows = sort_rows(rows)
    if rules:
        apply_rules(rows, rules)
    return VersionsReport(labels[0], labels[1], rows, rules=[r.text for r in rules or []], notes=notes)


def write_record(folder: str | Path, jobs: list[Job], sides: list[Side], results: dict) -> Path:
    """The run's compiles as files: manifest.json, and per job and side its Artifact (every stage), gzipped JSON.

    Paths under the current folder are written relative to it (a record is meant to be moved: checked in,
    attached to a CI run)."""
    from tritonscope.core.errors import OutputError
    from tritonscope.core.output import check_folder, write_atomic

    folder = check_folder(folder, force=True, what="record")  # the command checked it (and --force) up front
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"Cannot write into {folder}: {e.strerror or e}.",
                          hint="Check the path, the free disk space and your permissions.") from None
    entries = []
    for i, job in enumerate(jobs):
        entry = {"key": job.key, "arch": job.arch, "sides": []}
        for si in (0, 1):
            res = results.get((si, i), {})
            if "artifact" in res:
                name = f"{i:03d}-{'ab'[si]}.json.gz"
                data = json.dumps(res["artifact"]).replace(json.dumps(os.getcwd() + os.sep)[1:-1], "")
                write_atomic(folder / name, gzip.compress(data.encode(), mtime=0), force=True)
                entry["sides"].append({"artifact": name, **({"note": res["note"]} if res.get("note") else {})})
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
    """The report of a recorded run, rebuilt from its files (no Triton, no compile).

    A record is input like any file a user hands over: every field is checked as it is read, each file is
    read up to the size limit of a report (TRITONSCOPE_MAX_REPORT_MB; a gzip is decompressed as a stream and
    stopped there, so a 1.5 MB bomb never grows to GBs), and anything else is a damaged record (exit 7)."""
    from tritonscope.core.errors import InputFileError, NotFoundError
    from tritonscope.inputs.limits import max_report_bytes

    folder = Path(folder)
    path = folder / "manifest.json"
    if not path.is_file():
        raise NotFoundError(f"{folder}: no manifest.json (not a `versions --record` folder).")
    limit = max_report_bytes()
    hint = "Record it again with `tritonscope versions ... --record DIR`."
    where = path
    try:
        if path.stat().st_size > limit:
            raise _TooLarge(f"{path.stat().st_size / (1 << 20):,.0f} MB")
        manifest = json.loads(path.read_text(encoding="utf-8"))
        jobs, sides = _check_manifest(manifest)
        results = {}
        for i, entry in enumerate(jobs):
            for si, side in enumerate(entry["sides"]):
                if "artifact" in side:
                    where = folder / side["artifact"]
                    results[(si, i)] = {"artifact": _read_artifact(where, limit),
                                        **({"note": side["note"]} if side.get("note") else {})}
                else:
                    results[(si, i)] = {"error": side["error"]}
        labels = [s["label"] for s in sides]
    except _TooLarge as e:
        raise InputFileError(f"{where}: {e} when read; files of a record larger than {limit / (1 << 20):,.0f} MB "
                             "are not read (a kernel's compile is a few MB).",
                             hint="Check that this is the record you meant; to read it anyway, set "
                                  "TRITONSCOPE_MAX_REPORT_MB to a larger size.") from None
    except RecursionError:
        raise InputFileError(f"{where}: not a readable versions record (nested too deeply to read).",
                             hint=hint) from None
    except (ValueError, KeyError, TypeError, AttributeError, OSError, EOFError, zlib.error) as e:
        raise InputFileError(f"{where}: not a readable versions record ({type(e).__name__}: {e}).",
                             hint=hint) from None
    return build_report([Job(e["key"], e["arch"], {}) for e in jobs], labels, results, rules=rules,
                        predict=predict)


class _TooLarge(Exception):
    """A record's file past the size limit (its size, or 'past the limit' for a gzip stopped there)."""


def _check_manifest(manifest) -> tuple[list[dict], list[dict]]:
    """(jobs, sides) of a record's manifest, every field a replay reads checked (TypeError/ValueError else)."""
    def expect(value, types, what):
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in (types if isinstance(types, tuple)
                                                                                      else (types,))):
            raise TypeError(f"{what} is a {type(value).__name__}")

    expect(manifest, dict, "the manifest")
    if manifest.get("format") != RECORD_FORMAT:
        raise ValueError(f"its format is {manifest.get('format')!r}, not {RECORD_FORMAT!r}")
    sides, jobs = manifest.get("sides"), manifest.get("jobs")
    expect(sides, list, "sides")
    if len(sides) != 2:
        raise ValueError(f"it has {len(sides)} sides, not 2")
    for s in sides:
        expect(s, dict, "a side")
        expect(s.get("label"), str, "a side's label")
    expect(jobs, list, "jobs")
    for i, entry in enumerate(jobs):
        what = f"jobs[{i}]"
        expect(entry, dict, what)
        expect(entry.get("key"), str, f"{what}.key")
        expect(entry.get("arch"), str, f"{what}.arch")
        expect(entry.get("sides"), list, f"{what}.sides")
        if len(entry["sides"]) != 2:
            raise ValueError(f"{what} has {len(entry['sides'])} sides, not 2")
        for si, side in enumerate(entry["sides"]):
            at = f"{what}.sides[{si}]"
            expect(side, dict, at)
            if "artifact" in side:
                name = side["artifact"]
                expect(name, str, f"{at}.artifact")
                if not name or Path(name).name != name or name.startswith("."):
                    raise ValueError(f"{at}.artifact {name[:80]!r} is not a file name in the record's folder")
                if side.get("note") is not None:
                    expect(side["note"], str, f"{at}.note")
            else:
                error = side.get("error")
                if error is None:
                    side["error"] = {"message": "no result"}
                    continue
                expect(error, dict, f"{at}.error")
                for key in ("type", "message", "context", "line"):
                    if error.get(key) is not None:
                        expect(error[key], str, f"{at}.error.{key}")
                if error.get("failure") is not None:  # a failure report (analyses/failure): kept as data
                    expect(error["failure"], dict, f"{at}.error.failure")
                    for key in ("one_line", "error"):
                        if error["failure"].get(key) is not None:
                            expect(error["failure"][key], str, f"{at}.error.failure.{key}")
    return jobs, sides


def _read_artifact(path: Path, limit: int):
    """One recorded compile: gzipped JSON, decompressed as a stream up to `limit` bytes, decoded to an Artifact
    and its fields checked as a saved report's are (the Artifact passes through build_report's decode)."""
    from tritonscope.core.model import Artifact
    from tritonscope.outputs.report import _check_types
    from tritonscope.pipeline.result_cache import decode_artifact

    if path.stat().st_size > limit:
        raise _TooLarge(f"{path.stat().st_size / (1 << 20):,.0f} MB")
    inflate = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # gzip
    out = bytearray()
    with open(path, "rb") as f:
        while not inflate.eof:
            chunk = f.read(1 << 16)
            if not chunk:
                raise EOFError("the gzip data ends early")
            while chunk:
                out += inflate.decompress(chunk, limit + 1 - len(out))  # never 0 (which means no limit)
                if len(out) > limit:
                    raise _TooLarge("its gzip data grows past the limit")
                chunk = inflate.unconsumed_tail
    artifact = decode_artifact(json.loads(out.decode("utf-8")))
    if not isinstance(artifact, Artifact):
        raise TypeError(f"{path.name} holds a {type(artifact).__name__}, not a compile")
    if not isinstance(artifact.stages, dict) or not artifact.stages:
        raise ValueError(f"{path.name} has no stages")
    _check_types(artifact, {}, [], {})
    return artifact
