"""Captures made by `tritonscope capture`: records, launches and autotuning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tritonscope.core.errors import InputFileError
from tritonscope.inputs.sources.files import _folder_entry, _subdirs
from tritonscope.inputs.sources.model import CAPTURE_FORMAT, KernelEntry, Source
from tritonscope.inputs.sources.readers import _read_json

# Captures
# --------------------------------------------------------------------------


def _capture(p: Path) -> Source:
    info = _read_json(p / "capture.json", what="a capture")
    if not isinstance(info, dict) or info.get("format") != CAPTURE_FORMAT:
        raise InputFileError(f"{p / 'capture.json'} is not a tritonscope capture (format is not {CAPTURE_FORMAT!r}).")
    entries: list[KernelEntry] = []
    warnings: list[str] = []
    kernels = p / "kernels"
    for sub in sorted(_subdirs(kernels)) if kernels.is_dir() else []:
        record_path = sub / "record.json"
        if not record_path.is_file():
            warnings.append(f"{sub.name}: no record.json (the program stopped while writing it)")
            continue
        try:
            record = _read_json(record_path, what="a capture record")
            _check_record(record, record_path)
            entry = _folder_entry(sub, kind="capture")
        except InputFileError as e:
            warnings.append(f"{sub.name}: {e.message}")
            continue
        entry.record = record
        entry.name = record.get("name") or entry.name
        entries.append(entry)
    by_hash = {e.key: e for e in entries}
    for part in sorted(p.glob("launches-*.json")):
        try:
            launches = _read_json(part, what="capture launches")
        except InputFileError as e:
            warnings.append(f"{part.name}: {e.message}")
            continue
        kernels_seen = launches.get("kernels") if isinstance(launches, dict) else None
        if not isinstance(kernels_seen, dict):
            warnings.append(f"{part.name}: not a capture's launch counts (no 'kernels' object)")
            continue
        for key, item in kernels_seen.items():
            count = item.get("count") if isinstance(item, dict) else None
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                warnings.append(f"{part.name}: the launch count of {str(key)[:20]} is not a whole number")
                continue
            entry = by_hash.get(key)
            if entry is None and key.startswith("name:"):  # launched before its load was seen: by name if unique
                same = [e for e in entries if e.name == key[5:]]
                entry = same[0] if len(same) == 1 else None
            if entry is None:
                continue
            entry.launches = (entry.launches or 0) + count
            for field_name in ("grids", "args"):
                if isinstance(item.get(field_name), list) and field_name not in entry.launch_info:
                    entry.launch_info[field_name] = item[field_name]
    autotune = []
    for part in sorted(p.glob("autotune-*.json")):
        try:
            tunings = _read_json(part, what="capture autotuning")
        except InputFileError:
            tunings = None
        tunings = tunings.get("tunings") if isinstance(tunings, dict) else None
        if not isinstance(tunings, list) or not all(isinstance(t, dict) for t in tunings):
            warnings.append(f"{part.name}: unreadable (not a capture's autotuning runs)")
            continue
        autotune += tunings
    if autotune:
        info = {**info, "autotune": autotune}
    gpuless = info.get("gpuless")
    for entry in entries:
        if entry.launches is None:
            entry.launches = 0
        if isinstance(gpuless, dict):  # capture --arch: each kernel's view says it was not run
            entry.launch_info["gpuless"] = gpuless
    return Source(p, "capture", entries, info=info, warnings=warnings)


# What each field of a capture record must be when present (capture.py writes them so).
_RECORD_TYPES = {"name": str, "qualname": str, "source": str, "file": str, "line": int, "module_text": str,
                 "signature": dict, "constexprs": dict, "attrs": dict, "options": dict, "env": dict,
                 "codegen": dict, "constants": list, "attrs_raw": list, "triton_version": str}


def _check_record(record: Any, path: Path) -> None:
    """Refuse a capture record that is not what capture.py writes (a damaged or edited file): exit 7."""
    if not isinstance(record, dict):
        raise InputFileError(f"{path.name} is not a capture record (not a JSON object).")
    for name, kind in _RECORD_TYPES.items():
        value = record.get(name)
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
            raise InputFileError(f"{path.name}: its {name} is not {kind.__name__}, as a capture writes it.")
    options = record.get("options") or {}
    for name in ("num_warps", "num_stages"):
        value = options.get(name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise InputFileError(f"{path.name}: its options' {name} is not a whole number.")


# --------------------------------------------------------------------------
