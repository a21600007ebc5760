"""An Inductor cache's own kernel files, and a TORCH_COMPILE_DEBUG folder's output_code.py, as kernels to compile.

An Inductor cache (`$TMPDIR/torchinductor_<user>`, `TORCHINDUCTOR_CACHE_DIR`)
keeps what Inductor generated even when the Triton cache (`triton/`) is
elsewhere or gone:

- `<2 chars>/c<hash>.py`: one generated kernel each, a `@triton.jit` function
  under Inductor's `@triton_heuristics.pointwise/reduction/
  persistent_reduction/template/...(...)` decorator, whose `triton_meta`
  holds the signature, constants, divisibility and the device it was made
  for (`DeviceProperties(type='cuda', cc=90, ...)`) and whose
  `inductor_meta` holds the kernel's name and grid type;
- `<2 chars>/<sha256>.best_config`: the config autotuning (or coordinate
  descent) chose for the kernel file in the same folder (JSON: `XBLOCK`,
  `num_warps`, `num_stages`, `configs_hash`, ...);
- the compiled module of a graph (`c<hash>.py` too), which embeds the kernels
  it runs as source strings (`async_compile.triton('name', '''...''')`) and
  launches them from `call()` (`name.run(args..., stream=...)`); a
  TORCH_COMPILE_DEBUG folder keeps the same module as `output_code.py`.

This module reads all of that as text (Python's `ast`, no torch, no Triton):
listing the kernels is fast and imports nothing.  Compiling one imports its
file, which imports torch._inductor; that runs in a child process
(inductor_compile.py).

Which `.best_config` belongs to which kernel is Inductor's rule
(autotune_cache.py): the file sits in the kernel file's folder, named by a
hash of the kernel file's name and torch's own source hash (`torch_key()`),
and holds `configs_hash`, the hash of the configs Inductor's heuristics gave
(`hash_configs`).  The name cannot be recomputed under another torch, so the
listing pairs a best_config with the kernel file of its folder, and the
compile confirms the pair by `configs_hash` with Inductor's own functions.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tritonscope.inputs.sources.model import KernelEntry, Source
from tritonscope.inputs.sources.readers import _read_text

KIND = "inductor-kernel"
# Inductor's heuristics decorators (torch/_inductor/runtime/triton_heuristics.py), by what they make
HEURISTICS = ("pointwise", "reduction", "persistent_reduction", "template", "split_scan", "foreach",
              "fixed_config", "user_autotune", "cooperative_reduction")
# A generated module's folder: two characters (Inductor's codecache: ab/cab....py)
_CACHE_FILE = re.compile(r"^[a-z0-9]{2}$")
# "# kernel path: /tmp/torchinductor_me/po/cpouye4pb....py"  (output code, above each embedded kernel)
_KERNEL_PATH = re.compile(r"^# kernel path: (\S+\.py)\s*$", re.M)
_MAX_FILES = 20000


@dataclass
class InductorKernel(KernelEntry):
    """A kernel Inductor generated and has not compiled here: its file's text and what its decorator says."""

    heuristic: str = ""                     # "pointwise", "template", ...
    device: dict[str, Any] = field(default_factory=dict)   # DeviceProperties(...)'s keywords
    triton_meta: dict[str, Any] = field(default_factory=dict)
    inductor_meta: dict[str, Any] = field(default_factory=dict)
    size_hints: dict[str, int] | None = None
    numels: dict[str, int] = field(default_factory=dict)   # xnumel = 131072 in the kernel's body (static shapes)
    module_text: str = ""                   # the whole generated module (what Inductor imports)
    module_file: Path | None = None         # where it is: the cache file, or output_code.py for an embedded one
    best_config: dict[str, Any] | None = None   # the .best_config of its folder, with "path"
    best_config_note: str = ""              # why none, or why more than one could not be told apart
    launch: dict[str, Any] | None = None    # output code's call: {"args": [...], "grid": [..] or None}
    runs_in: str = ""                       # the output module that launches it ("" : none here)
    cache_file: Path | None = None          # output code's "# kernel path:" when that file is on this machine
    embedded: bool = False                  # its source is a string in a graph's module (output code)

    @property
    def device_words(self) -> str:
        d = self.device
        if not d:
            return "?"
        kind = d.get("type", "?")
        return f"{kind}:{d.get('index', 0)} cc {d.get('cc')}" if d.get("cc") is not None else kind

    def chosen_words(self) -> str:
        """'XBLOCK=1024 w4 s1' from the best_config, or the template's own config; '' when not recorded."""
        cfg = self.best_config
        if cfg:
            parts = [f"{k}={v}" for k, v in cfg.items() if k not in _BEST_CONFIG_INFO]
            return " ".join(parts) + (f" w{cfg['num_warps']}" if "num_warps" in cfg else "") + \
                (f" s{cfg['num_stages']}" if "num_stages" in cfg else "")
        fixed = {k: self.metadata[k] for k in ("num_warps", "num_stages") if k in self.metadata}
        if self.heuristic == "template" and fixed:
            return f"w{fixed.get('num_warps')} s{fixed.get('num_stages')}"
        return ""

    def config(self) -> str:
        return self.chosen_words()

    def grid_words(self) -> str:
        grid = (self.launch or {}).get("grid")
        return "x".join(str(g) for g in grid) if grid else ""

    def row(self) -> dict[str, Any]:
        row = super().row()
        row.update(kind=KIND, heuristic=self.heuristic, device=self.device_words, chosen=self.chosen_words(),
                   chosen_from=("best_config" if self.best_config else
                                "the decorator" if self.chosen_words() else None),
                   best_config=str(self.best_config["path"]) if self.best_config else None,
                   grid=(self.launch or {}).get("grid"), runs_in=self.runs_in or None,
                   missing=["compile: not compiled here (open --kernel NAME compiles it)"])
        return row


_BEST_CONFIG_INFO = ("num_warps", "num_stages", "configs_hash", "found_by_coordesc", "time_taken_ms",
                     "triton_cache_hash", "extra_options", "path")


# --------------------------------------------------------------------------
# What a folder is
# --------------------------------------------------------------------------


def kernel_files(folder: Path) -> list[Path]:
    """The generated modules of an Inductor cache: `<2 chars>/*.py` (kernels and graphs' compiled modules)."""
    out: list[Path] = []
    for sub in sorted(folder.iterdir()):
        if sub.is_dir() and _CACHE_FILE.match(sub.name):
            out += sorted(p for p in sub.glob("*.py") if p.is_file())
            if len(out) > _MAX_FILES:
                break
    return out


def output_code_files(folder: Path) -> list[Path]:
    """A TORCH_COMPILE_DEBUG folder's output_code.py files (torchinductor/<graph>/output_code.py)."""
    if (folder / "output_code.py").is_file():
        return [folder / "output_code.py"]
    found = sorted(folder.glob("**/output_code.py"))
    return [p for p in found if ".debug" not in p.parent.name][:1000]


def has_generated_kernels(folder: Path) -> bool:
    """Whether `folder` holds Inductor's generated Triton kernels (a cache's files or an output_code.py)."""
    for path in kernel_files(folder)[:200]:
        head = _read_text(path)[:4000]
        if "triton_heuristics" in head or "async_compile.triton(" in _read_text(path):
            return True
    return bool(output_code_files(folder))


def inductor_source(folder: Path) -> Source:
    """Every Triton kernel Inductor generated in `folder` (a cache without triton/, or a debug folder)."""
    entries: list[InductorKernel] = []
    warnings: list[str] = []
    runs: dict[str, tuple[str, dict[str, Any]]] = {}   # kernel file name -> (output module, launch)
    modules = [p for p in kernel_files(folder)]
    debug = output_code_files(folder) if not modules else []
    for path in modules + debug:
        text = _read_text(path)
        if "async_compile.triton(" in text:   # a graph's compiled module: the kernels it runs
            for kernel in _embedded_kernels(path, text, warnings):
                if debug:   # no kernel files: the embedded sources are the kernels
                    entries.append(kernel)
                else:
                    runs[kernel.key] = (str(path.relative_to(folder)), kernel.launch or {})
            continue
        if "triton_heuristics" not in text or "@triton.jit" not in text:
            continue
        kernel = _kernel_of(path, text, path.stem, warnings)
        if kernel is not None:
            entries.append(kernel)
    _pair_best_configs(folder, entries, warnings)
    if not debug:
        for e in entries:
            ran = runs.get(e.key)
            if ran:
                e.runs_in, e.launch = ran[0], ran[1]
    return Source(folder, "inductor", list(entries), warnings=warnings,
                  info={"inductor": {"kernel_files": len(modules), "output_code": [str(p) for p in debug],
                                     "run_by_output_code": sum(1 for e in entries if e.runs_in or debug),
                                     "best_configs": sum(1 for e in entries if e.best_config)}})


def inductor_file_source(path: Path) -> Source | None:
    """One generated module opened by itself: a kernel file (its kernel), or a graph's compiled module /
    output_code.py (the kernels it embeds and launches); None when `path` is neither."""
    text = _read_text(path)
    warnings: list[str] = []
    if "async_compile.triton(" in text:
        entries = _embedded_kernels(path, text, warnings)
    elif "triton_heuristics" in text and "@triton.jit" in text:
        kernel = _kernel_of(path, text, path.stem, warnings)
        entries = [kernel] if kernel is not None else []
    else:
        return None
    if not entries:
        return None
    _pair_best_configs(path.parent, entries, warnings)
    return Source(path, "inductor", list(entries), warnings=warnings, single=len(entries) == 1,
                  info={"inductor": {"kernel_files": 1, "output_code": [str(path)] if entries[0].runs_in else [],
                                     "run_by_output_code": sum(1 for e in entries if e.runs_in),
                                     "best_configs": sum(1 for e in entries if e.best_config)}})


# --------------------------------------------------------------------------
# One generated kernel, read as text
# --------------------------------------------------------------------------


def _kernel_of(path: Path, text: str, key: str, warnings: list[str], *, module_file: Path | None = None,
               line_offset: int = 0) -> InductorKernel | None:
    """The kernel a generated module defines: its @triton.jit function and Inductor's decorator."""
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        warnings.append(f"{path}: not Python ({e.msg}, line {e.lineno})")
        return None
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        heuristic, call = _inductor_decorator(node)
        if call is None:
            continue
        words = _literal_keywords(call)
        triton_meta = words.get("triton_meta") or {}
        inductor_meta = words.get("inductor_meta") or {}
        device = triton_meta.get("device") if isinstance(triton_meta.get("device"), dict) else {}
        metadata: dict[str, Any] = {}
        if device.get("cc") is not None:
            metadata["target"] = {"backend": "hip" if device.get("type") == "hip" else "cuda",
                                  "arch": device["cc"]}
        for option in ("num_warps", "num_stages"):
            if isinstance(words.get(option), int):
                metadata[option] = words[option]
        start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
        record = {"source": text, "file": str(module_file or path), "line": node.lineno + line_offset,
                  "name": node.name, "qualname": node.name, "inductor": True}
        return InductorKernel(
            key=key, name=node.name, kind=KIND, folder=path.parent, files={}, metadata=metadata, record=record,
            heuristic=heuristic, device=device, triton_meta=triton_meta, inductor_meta=inductor_meta,
            size_hints=words.get("size_hints") if isinstance(words.get("size_hints"), dict) else None,
            numels=_static_numels(node), module_text=text, module_file=module_file or path,
            launch=None, _location=(str(module_file or path), start + line_offset))
    return None


def _inductor_decorator(node: ast.FunctionDef) -> tuple[str, ast.Call | None]:
    """('pointwise', the call) for `@triton_heuristics.pointwise(...)` above a `@triton.jit` def."""
    jit = any(isinstance(d, ast.Attribute) and d.attr == "jit" for d in node.decorator_list)
    for d in node.decorator_list:
        if isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and \
                isinstance(d.func.value, ast.Name) and d.func.value.id == "triton_heuristics" and jit:
            return d.func.attr, d
    return "", None


def _literal_keywords(call: ast.Call) -> dict[str, Any]:
    """The decorator's keywords whose values are literals (DeviceProperties(...) read as its keywords)."""
    out: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg is None:
            continue
        try:
            out[kw.arg] = _literal(kw.value)
        except ValueError:
            continue
    return out


def _literal(node: ast.AST) -> Any:
    """ast.literal_eval, with DeviceProperties(a=1, ...) as a dict, set() as an empty set, and enums
    (ReductionHint.INNER) as their names."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id == "DeviceProperties":
            return {kw.arg: _literal(kw.value) for kw in node.keywords if kw.arg}
        if node.func.id == "set" and not node.args:
            return set()
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    if isinstance(node, ast.Dict):
        return {_literal(k): _literal(v) for k, v in zip(node.keys, node.values) if k is not None}
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_literal(v) for v in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    return ast.literal_eval(node)


def _static_numels(node: ast.FunctionDef) -> dict[str, int]:
    """`xnumel = 131072` at the top of a kernel's body (Inductor writes the sizes of static shapes there)."""
    out: dict[str, int] = {}
    for stmt in node.body[:12]:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and stmt.targets[0].id.endswith("numel") and isinstance(stmt.value, ast.Constant) \
                and isinstance(stmt.value.value, int):
            out[stmt.targets[0].id] = stmt.value.value
    return out


# --------------------------------------------------------------------------
# A graph's compiled module (output_code.py): the kernels it embeds and how call() launches them
# --------------------------------------------------------------------------


def _embedded_kernels(path: Path, text: str, warnings: list[str]) -> list[InductorKernel]:
    """The kernels of `async_compile.triton('name', '''src''')` calls, with the launch call() makes of each."""
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        warnings.append(f"{path}: not Python ({e.msg}, line {e.lineno})")
        return []
    paths = {m.start(): m.group(1) for m in _KERNEL_PATH.finditer(text)}
    line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    launches = _launches(tree)
    out = []
    for node in tree.body:
        call = node.value if isinstance(node, ast.Assign) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "triton"
                and len(call.args) >= 2 and all(isinstance(a, ast.Constant) and isinstance(a.value, str)
                                                for a in call.args[:2])):
            continue
        name, source = call.args[0].value, call.args[1].value
        offset = line_starts[node.lineno - 1]
        before = [p for at, p in paths.items() if at < offset]
        cache_name = Path(before[-1]).stem if before else ""   # the last "# kernel path:" above it
        kernel = _kernel_of(path, source, cache_name or name, warnings, module_file=path,
                            line_offset=call.args[1].lineno - 1)
        if kernel is None:
            continue
        kernel.key = cache_name or name
        kernel.embedded = True
        if before:   # the Inductor cache it came from, when it is here (also moved, around this module)
            named = Path(before[-1])
            moved = path.parent.parent / named.parent.name / named.name
            kernel.cache_file = next((p for p in (named, moved) if p.is_file()), None)
        kernel.runs_in = path.name
        kernel.launch = _launch_of(kernel, launches.get(name))
        out.append(kernel)
    return out


def _launches(tree: ast.Module) -> dict[str, ast.Call]:
    """name -> the first `name.run(...)` call in the module (call()'s launch of each kernel)."""
    out: dict[str, ast.Call] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "run" \
                and isinstance(node.func.value, ast.Name):
            out.setdefault(node.func.value.id, node)
    return out


def _launch_of(kernel: InductorKernel, call: ast.Call | None) -> dict[str, Any] | None:
    """What call() passes: each signature argument (buffer names, sizes) and, for a FixedGrid kernel, the
    grid it passes after them (_grid_0.._grid_2)."""
    if call is None:
        return None
    values = [a.value if isinstance(a, ast.Constant) else ast.unparse(a) for a in call.args]
    names = list((kernel.triton_meta.get("signature") or {}))
    runtime = [n for n in names if (kernel.triton_meta["signature"][n] != "constexpr")]
    args = dict(zip(runtime, values))
    extra = values[len(runtime):]
    launch: dict[str, Any] = {"args": args, "grid": None, "grid_from": None}
    fixed = kernel.inductor_meta.get("extra_launcher_args") or []
    if kernel.inductor_meta.get("grid_type") == "FixedGrid" and len(extra) >= 3 and \
            all(isinstance(v, int) for v in extra[:3]) and fixed[:3] == ["_grid_0", "_grid_1", "_grid_2"]:
        launch.update(grid=list(extra[:3]), grid_from="the output code's launch (FixedGrid)")
    numels = {k: v for k, v in args.items() if k.endswith("numel") and isinstance(v, int)}
    if numels:
        launch["numels"] = numels
    return launch


# --------------------------------------------------------------------------
# .best_config files
# --------------------------------------------------------------------------


def _pair_best_configs(folder: Path, entries: list[InductorKernel], warnings: list[str]) -> None:
    """Give each kernel file the .best_config of its folder (Inductor writes it beside the file); a folder
    with several kernel files and best_configs is left for the compile to pair by configs_hash."""
    by_folder: dict[Path, list[InductorKernel]] = {}
    for e in entries:
        home = _home(e)
        if home is not None:
            by_folder.setdefault(home.parent, []).append(e)
    for sub, kernels in by_folder.items():
        found = []
        for path in sorted(sub.glob("*.best_config")):
            data = _best_config(path, warnings)
            if data is not None:
                found.append(data)
        tunable = [k for k in kernels if k.heuristic != "template"]
        if len(found) == 1 and len(tunable) == 1:
            tunable[0].best_config = found[0]
        elif found:
            for k in tunable:
                k.best_config_note = (f"{len(found)} .best_config files and {len(tunable)} tuned kernel files "
                                      f"share {sub.name}/: the compile pairs them by configs_hash")


def _best_config(path: Path, warnings: list[str]) -> dict[str, Any] | None:
    try:
        data = json.loads(_read_text(path))
    except ValueError as e:
        warnings.append(f"{path}: not JSON ({e})")
        return None
    if not isinstance(data, dict) or "configs_hash" not in data:
        warnings.append(f"{path}: no configs_hash, not one of Inductor's best_config files")
        return None
    return {**data, "path": path}


def _home(entry: InductorKernel) -> Path | None:
    """The kernel's file in an Inductor cache: its own, or the one output code names when it is here."""
    return entry.cache_file if entry.embedded else entry.module_file


def best_configs_near(entry: InductorKernel) -> list[dict[str, Any]]:
    """Every readable .best_config beside the kernel's file (the compile picks by configs_hash)."""
    home = _home(entry)
    if home is None:
        return []
    found = []
    for path in sorted(home.parent.glob("*.best_config")):
        data = _best_config(path, [])
        if data is not None:
            found.append({**data, "path": str(path)})
    return found
