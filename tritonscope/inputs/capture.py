"""Record the Triton kernels a real program compiles and launches (`tritonscope capture`).

The program runs in a child process whose `sitecustomize` (in
tritonscope/_capture_boot/) calls `install()` as soon as the program imports
triton.  `install()` uses Triton's public hooks only (checked in 3.6 and 3.9,
triton/knobs.py):

- `knobs.compilation.listener(src, metadata, metadata_group, times,
  cache_hit)`: every compile, fresh or from the cache, in every process
  (Inductor's compile workers too, since they inherit the environment).  The
  stage files Triton wrote (`metadata_group`: name -> path) are copied, and
  a record of what `src` says (the Python function, its file/line, the
  signature, constexprs, attributes) is written *last*: a kernel folder
  without record.json is a compile the program did not finish.  The record
  also keeps the compile's code-generation environment (`codegen`: every
  variable Triton's cache key names that is set, the tool and codegen
  knobs that are set -- TRITON_PTXAS_PATH, which Inductor points at torch's
  own ptxas inside the program -- and the ptxas that arch used, with its
  version), so that a recompile can replay it (sources.recompile).
- `knobs.runtime.kernel_load_end_hook(module, function, name, group, hash)`
  maps each loaded kernel's function handle to its hash;
  `knobs.runtime.launch_enter_hook(metadata)` then counts launches per hash.
- `knobs.autotuning.listener(fn, key, best_config, configs_timings, ...)`
  (3.9; in 3.6 Autotuner.run is wrapped instead): every config tried and
  the one chosen.
- Triton's launch hooks do not see the arguments, so `JITFunction.run` is
  wrapped to describe them: dtype, shape, strides, and whether the address
  is 16-byte aligned -- never the data.  Kernels launched without
  JITFunction.run (Inductor's launchers) are still counted by the hook.

Layout of a capture (what sources.py reads):

    capture.json                     format, argv, start time, tritonscope version
    process-<pid>.json               per process: rank, triton/torch versions, exit
    kernels/<hash>/<name>.ttir ...   Triton's stage files, as in its cache
    kernels/<hash>/record.json       the capture record (written last)
    launches-<pid>.json              {hash: {count, grids, args}} per process
    autotune-<pid>.json              autotuning runs of that process

Every file is written atomically (temp file + rename), launches are flushed
every second and at exit, so a crash leaves a valid capture of what ran.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tritonscope.core.errors import OutputError, UsageError

ENV_DIR = "TRITONSCOPE_CAPTURE_DIR"
ENV_ARCH = "TRITONSCOPE_CAPTURE_ARCH"   # GPU-less: the target every launch compiles for (_capture_boot/gpuless.py)
ENV_GPU = "TRITONSCOPE_CAPTURE_GPU"     # GPU-less: the GPU torch.cuda and the driver answer as (--gpu)
BOOT_DIR = Path(__file__).resolve().parents[1] / "_capture_boot"
FORMAT = "tritonscope-capture"
VERSION = 1
MAX_ARG_SAMPLES = 4      # distinct argument descriptions kept per kernel
FLUSH_SECONDS = 1.0


# --------------------------------------------------------------------------
# The parent side: run the program
# --------------------------------------------------------------------------


@dataclass
class CaptureRun:
    folder: Path
    returncode: int   # subprocess's: -N when signal N killed the program
    seconds: float

    def program_status(self) -> str | None:
        """How the program ended, in words (None when it exited 0): a signal as a shell reports it, 128+N."""
        if self.returncode == 0:
            return None
        if self.returncode > 0:
            return f"exited with status {self.returncode}"
        import signal

        try:
            name = f"{signal.Signals(-self.returncode).name}, "
        except ValueError:
            name = ""
        return f"was killed by signal {-self.returncode} ({name}a shell reports {128 - self.returncode})"


def prepare(folder: str | Path, argv: list[str], *, force: bool = False, gpuless: dict | None = None) -> Path:
    """Create the capture folder and its capture.json (checked before the program starts)."""
    from tritonscope._version import __version__
    from tritonscope.core.output import write_atomic

    if not argv:
        raise UsageError("Nothing to run.", hint="Write the program after --, e.g. "
                                                 "tritonscope capture -o cap -- python train.py")
    out = Path(folder)
    if out.exists() and not out.is_dir():
        raise OutputError(f"Cannot capture into {out}: it is a file.", hint="Give a folder name.")
    if out.is_dir() and any(out.iterdir()):
        if not force and not (out / "capture.json").is_file():
            raise OutputError(f"{out} is not empty and holds no capture.", hint="Choose a new folder.")
        if not force:
            raise OutputError(f"{out} already holds a capture.", hint="Pass --force to add to it, or choose a new folder.")
    try:
        (out / "kernels").mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"Cannot create {out}: {e.strerror or e}.") from e
    info = {"format": FORMAT, "version": VERSION, "argv": list(argv), "started": time.time(),
            "cwd": os.getcwd(), "tritonscope": __version__}
    if gpuless:
        info["gpuless"] = dict(gpuless)
    write_atomic(out / "capture.json", json.dumps(info, indent=1) + "\n", force=True)
    return out


def child_env(folder: Path, base: dict[str, str] | None = None, *, arch: str | None = None,
              gpu: str | None = None) -> dict[str, str]:
    """The environment that makes every Python process of the program record into `folder` (with `arch`: run
    GPU-less, compiling every launch for that target; _capture_boot/gpuless.py)."""
    env = dict(os.environ if base is None else base)
    package_root = str(Path(__file__).resolve().parents[2])
    paths = [str(BOOT_DIR), package_root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env[ENV_DIR] = str(folder.resolve())
    for name in (ENV_ARCH, ENV_GPU):
        env.pop(name, None)
    if arch:
        env[ENV_ARCH] = arch
        if gpu:
            env[ENV_GPU] = gpu
    return env


def run(folder: str | Path, argv: list[str], *, force: bool = False, arch: str | None = None,
        gpu: str | None = None, gpuless: dict | None = None) -> CaptureRun:
    """Run `argv` with capture on; the program's own stdout/stderr/exit code pass through.  With `arch`, GPU-less:
    the program runs on the CPU and each launch is compiled for `arch`, not run (`gpuless`: what capture.json
    says of it)."""
    out = prepare(folder, argv, force=force, gpuless=gpuless if arch else None)
    started = time.perf_counter()
    try:
        proc = subprocess.run(argv, env=child_env(out, arch=arch, gpu=gpu))
    except FileNotFoundError as e:
        from tritonscope.core.errors import NotFoundError

        raise NotFoundError(f"Cannot run {argv[0]!r}: no such program.", hint="Check the command after --.") from e
    return CaptureRun(out, proc.returncode, time.perf_counter() - started)


# --------------------------------------------------------------------------
# The child side: install the hooks
# --------------------------------------------------------------------------


def install_when_imported() -> None:
    """Install the hooks once the program imports triton (now, if it already has)."""
    folder = os.environ.get(ENV_DIR)
    if not folder:
        return
    after_import("triton", lambda: install(folder))


def after_import(name: str, then) -> None:
    """Run `then()` once module `name` has been imported (now, if it already is)."""
    if name in sys.modules:
        then()
        return
    sys.meta_path.insert(0, _AfterImport(name, then))


class _AfterImport:
    """A meta-path finder that runs `then()` right after module `name` has executed."""

    def __init__(self, name: str, then):
        self.name = name
        self.then = then

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = None
        for finder in list(sys.meta_path):  # whoever would have found it (site-packages, editable installs)
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find else None
            if spec is not None:
                break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader, then = spec.loader, self.then
        original = loader.exec_module

        def exec_module(module):
            original(module)
            try:
                then()
            except Exception as e:  # never break the user's program
                print(f"tritonscope capture: could not install hooks: {type(e).__name__}: {e}", file=sys.stderr)

        loader.exec_module = exec_module
        return spec


_recorder: "_Recorder | None" = None


def install(folder: str | Path, gpuless: dict | None = None) -> "_Recorder":
    """Install the recording hooks in this process (idempotent).  `gpuless` ({arch, gpu}): nothing is launched,
    so each launch JITFunction.run compiles is counted by `count_launch`, not by Triton's launch hook."""
    global _recorder
    if _recorder is None:
        _recorder = _Recorder(Path(folder), gpuless)
        _recorder.install()
    return _recorder


def current() -> "_Recorder | None":
    """This process's recorder, once installed."""
    return _recorder


def _capability(target: Any) -> int | None:
    """90 from a CUDA GPUTarget (or its JSON form); None for other backends (no ptxas to record)."""
    backend = target.get("backend") if isinstance(target, dict) else getattr(target, "backend", None)
    arch = target.get("arch") if isinstance(target, dict) else getattr(target, "arch", None)
    if isinstance(target, (list, tuple)) and len(target) >= 2:
        backend, arch = target[0], target[1]
    return arch if backend == "cuda" and isinstance(arch, int) else None


def _rank() -> str | None:
    for name in ("RANK", "LOCAL_RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"):
        if os.environ.get(name):
            return os.environ[name]
    return None


def _write(path: Path, data: str | bytes) -> None:
    """Atomic replace; a failure to record never breaks the program (it is reported once)."""
    from tritonscope.core.output import write_cache

    if not write_cache(path, data):
        print(f"tritonscope capture: cannot write {path}", file=sys.stderr)


def _jsonable(value: Any) -> Any:
    """A constexpr value as JSON: dtypes as {'dtype': 'fp16'}, constexpr wrappers unwrapped."""
    kind = type(value).__name__
    if kind == "constexpr" and hasattr(value, "value"):
        return _jsonable(value.value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "primitive_bitwidth") or kind in ("dtype", "pointer_type"):
        return {"dtype": str(value)}
    if kind == "JITFunction":
        return {"jit_function": f"{getattr(value, 'module', '?')}:{getattr(value.fn, '__qualname__', '?')}"}
    return {"repr": repr(value)}


def describe_arg(value: Any) -> dict[str, Any]:
    """One launch argument, without its data: dtype/shape/strides/alignment, or a scalar's type and value."""
    if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        out: dict[str, Any] = {"dtype": str(value.dtype).replace("torch.", "")}
        try:
            out["shape"] = list(value.shape)
            out["strides"] = list(value.stride())
            out["storage_offset"] = int(value.storage_offset())
        except Exception:
            pass
        try:
            out["align16"] = value.data_ptr() % 16 == 0
        except Exception:
            pass
        return out
    if isinstance(value, bool) or value is None:
        return {"type": type(value).__name__, "value": value}
    if isinstance(value, int):
        return {"type": "int", "value": value, "div16": value % 16 == 0}
    if isinstance(value, float):
        return {"type": "float", "value": value}
    return {"type": type(value).__name__}


class _Recorder:
    def __init__(self, folder: Path, gpuless: dict | None = None):
        self.folder = folder
        self.gpuless = gpuless
        self.predictions: dict[int, dict[str, Any]] = {}   # GPU-less: id(config) -> its prediction, for on_autotune
        self.last_grid: dict[str, list[int]] = {}           # kernel hash -> the grid of its last recorded launch
        self.last_scalars: dict[str, dict[str, int]] = {}   # kernel hash -> its last launch's integer arguments
        self.pid = os.getpid()
        self.rank = _rank()
        suffix = f"{self.pid}" + (f"-r{self.rank}" if self.rank is not None else "")
        self.launch_file = folder / f"launches-{suffix}.json"
        self.autotune_file = folder / f"autotune-{suffix}.json"
        self.process_file = folder / f"process-{suffix}.json"
        self.lock = threading.Lock()
        self.seen: set[str] = set()
        self.handles: dict[Any, str] = {}
        self.launches: dict[str, dict[str, Any]] = {}
        self.tunings: list[dict[str, Any]] = []
        self.dirty = False
        self.last_flush = time.monotonic()

    # -- installing ---------------------------------------------------------

    def install(self) -> None:
        import atexit

        from triton import knobs

        previous = knobs.compilation.listener
        self._previous_listener = previous
        knobs.compilation.listener = self.on_compile
        runtime = knobs.runtime
        if hasattr(runtime, "kernel_load_end_hook") and hasattr(runtime.kernel_load_end_hook, "add"):
            runtime.kernel_load_end_hook.add(self.on_load)
        if hasattr(runtime.launch_enter_hook, "add"):
            runtime.launch_enter_hook.add(self.on_launch)
        else:  # a release where the hook is a single callable
            runtime.launch_enter_hook = self.on_launch
        self._wrap_jit_run()
        self._install_autotune(knobs)
        self._write_process({"exit": None, **({"gpuless": self.gpuless} if self.gpuless else {})})
        atexit.register(self.flush_at_exit)

    def _wrap_jit_run(self) -> None:
        from triton.runtime.jit import JITFunction

        original = JITFunction.run
        recorder = self

        def run(self, *args, grid, warmup, **kwargs):
            kernel = original(self, *args, grid=grid, warmup=warmup, **kwargs)
            if not warmup and kernel is not None:
                try:
                    recorder.on_jit_launch(self, kernel, args, kwargs, grid)
                except Exception:
                    pass
            return kernel

        JITFunction.run = run

    def _install_autotune(self, knobs) -> None:
        tuning = getattr(knobs, "autotuning", None)
        if tuning is not None and hasattr(tuning, "listener"):
            previous = tuning.listener

            def listener(**kw):
                self.on_autotune(**kw)
                if previous is not None:
                    previous(**kw)

            tuning.listener = listener
            return
        from triton.runtime.autotuner import Autotuner  # older releases: read the result after each run

        original = Autotuner.run
        recorder = self

        def run(self, *args, **kwargs):
            # A tuning run is a key new to the autotuner's cache (another shape, another dtype); two tunings
            # may choose the same Config object, so the chosen config alone does not tell them apart.
            cache = getattr(self, "cache", None)
            before = set(cache) if isinstance(cache, dict) else None
            timings_before = getattr(self, "configs_timings", None)
            out = original(self, *args, **kwargs)
            best = getattr(self, "best_config", None)
            if before is not None:
                new_keys = [k for k in self.cache if k not in before]
            else:  # no cache to read: a tuning replaces configs_timings
                timings = getattr(self, "configs_timings", None)
                new_keys = [None] if timings is not None and timings is not timings_before else []
            for key in new_keys:
                recorder.on_autotune(fn=self.fn, key=key, best_config=self.cache.get(key, best) if key is not None
                                     else best,
                                     configs_timings=getattr(self, "configs_timings", None) or {},
                                     duration=getattr(self, "bench_time", None), cache_hit=False)
            return out

        Autotuner.run = run

    # -- hooks ----------------------------------------------------------------

    def on_compile(self, *, src=None, metadata=None, metadata_group=None, times=None, cache_hit=False, **_):
        try:
            self._record_compile(src, metadata or {}, metadata_group or {}, cache_hit)
        except Exception as e:  # never break the program
            print(f"tritonscope capture: cannot record a compile: {type(e).__name__}: {e}", file=sys.stderr)
        if self._previous_listener is not None:
            self._previous_listener(src=src, metadata=metadata, metadata_group=metadata_group, times=times,
                                    cache_hit=cache_hit)

    def _record_compile(self, src, metadata: dict, group: dict, cache_hit: bool) -> None:
        key = str(metadata.get("hash") or "")
        if not key or key in self.seen:
            return
        self.seen.add(key)
        folder = self.folder / "kernels" / key
        if (folder / "record.json").is_file():  # another process recorded it already
            return
        for name, path in group.items():
            try:
                _write(folder / Path(name).name, Path(path).read_bytes())
            except OSError:
                pass
        if not any(n.endswith(".json") for n in group):
            _write(folder / f"{metadata.get('name', 'kernel')}.json", json.dumps(metadata, default=vars))
        record: dict[str, Any] = {"name": metadata.get("name"), "hash": key, "pid": self.pid, "rank": self.rank,
                                  "cache_hit": bool(cache_hit), "captured": time.time()}
        record.update(self._describe_source(src))
        record["options"] = {k: metadata.get(k) for k in ("num_warps", "num_stages", "num_ctas", "maxnreg",
                                                          "enable_fp_fusion") if k in metadata}
        try:
            from triton import __version__ as version

            record["triton_version"] = version
        except Exception:
            pass
        # The code-generation environment of this compile: every cache-invalidating variable and tool/codegen
        # knob that is set (Inductor sets TRITON_PTXAS_PATH inside the program), and the ptxas this arch used.
        from tritonscope import triton_api

        codegen = triton_api.codegen_environment(_capability(metadata.get("target")))
        record["codegen"] = codegen
        record["env"] = dict(codegen["vars"])
        _write(folder / "record.json", json.dumps(record, indent=1, default=str) + "\n")

    def _describe_source(self, src) -> dict[str, Any]:
        fn = getattr(src, "fn", None)
        if fn is None:  # an IR source: no Python
            return {"source": None}
        import inspect

        py = getattr(fn, "fn", None)
        out: dict[str, Any] = {"qualname": getattr(py, "__qualname__", None) or getattr(fn, "__name__", None)}
        try:
            lines, first = inspect.getsourcelines(py)
            out["source"], out["line"] = "".join(lines), first
        except Exception:
            out["source"], out["line"] = getattr(fn, "src", None), getattr(fn, "starting_line_number", 1)
        file = getattr(getattr(py, "__code__", None), "co_filename", "") or ""
        out["file"] = file
        try:
            if file and os.path.getsize(file) < 4_000_000:
                out["module_text"] = Path(file).read_text(encoding="utf-8", errors="replace")
        except OSError:
            pass
        names = list(getattr(fn, "arg_names", None) or [p.name for p in getattr(fn, "params", [])])
        signature = {str(k): str(v) for k, v in (getattr(src, "signature", None) or {}).items()}
        out["signature"] = signature
        constants = getattr(src, "constants", None) or {}
        out["constants"] = [[list(k) if isinstance(k, tuple) else [names.index(k)], _jsonable(v)]
                            for k, v in constants.items()]
        out["constexprs"] = {names[k[0]]: _jsonable(v) for k, v in constants.items()
                             if isinstance(k, tuple) and len(k) == 1 and k[0] < len(names)
                             and signature.get(names[k[0]]) == "constexpr"}
        attrs = getattr(src, "attrs", None) or {}
        out["attrs_raw"] = [[list(k), _jsonable(v)] for k, v in attrs.items()]
        by_name: dict[str, list[str]] = {}
        for k, v in attrs.items():
            if isinstance(k, tuple) and len(k) == 1 and k[0] < len(names):
                by_name[names[k[0]]] = [f"{a}={b}" for a, b in (v or [])]
        out["attrs"] = by_name
        return out

    def on_load(self, module, function, name, metadata_group, hash, *_, **__):
        if function is not None:
            self.handles[function] = str(hash)

    def on_launch(self, metadata) -> None:
        data = getattr(metadata, "data", None) or {}
        key = self.handles.get(data.get("function")) or f"name:{data.get('name')}"
        with self.lock:
            item = self.launches.setdefault(key, {"count": 0})
            item["count"] += 1
            self.dirty = True
        if time.monotonic() - self.last_flush > FLUSH_SECONDS:
            self.flush()

    def on_jit_launch(self, jit_fn, kernel, args, kwargs, grid) -> None:
        key = str(getattr(getattr(kernel, "metadata", None), "hash", "") or getattr(kernel, "hash", ""))
        if not key:
            return
        with self.lock:
            item = self.launches.setdefault(key, {"count": 0})
            # GPU-less, the kernel is never loaded (reading .function would load it)
            handle = None if self.gpuless else getattr(kernel, "function", None)
            if handle is not None and handle not in self.handles:
                # No kernel-load hook in this Triton (or loaded before install): this launch was
                # counted under the kernel's name; from now on the handle maps to the hash.
                self.handles[handle] = key
                by_name = self.launches.get(f"name:{getattr(kernel, 'name', None)}")
                if by_name and by_name["count"] > 0:
                    by_name["count"] -= 1
                    item["count"] += 1
            described = [describe_arg(a) for a in args]
            if len(item.setdefault("args", [])) < MAX_ARG_SAMPLES and described not in item["args"]:
                item["args"].append(described)
            grid_value = None
            if isinstance(grid, (tuple, list)):
                grid_value = [int(g) for g in grid]
            elif callable(grid):
                try:
                    bound = dict(zip(jit_fn.arg_names, args))
                    bound.update(kwargs)
                    grid_value = [int(g) for g in grid(bound)]
                except Exception:
                    grid_value = None
            if grid_value is not None:
                self.last_grid[key] = grid_value
            if self.gpuless:  # the integers the cost model evaluates loop bounds with (_capture_boot/gpuless.py)
                named = {**dict(zip(jit_fn.arg_names, args)), **kwargs}
                self.last_scalars[key] = {k: v for k, v in named.items()
                                          if isinstance(v, int) and not isinstance(v, bool)}
            if grid_value is not None and len(item.setdefault("grids", [])) < MAX_ARG_SAMPLES \
                    and grid_value not in item["grids"]:
                item["grids"].append(grid_value)
            self.dirty = True
        if time.monotonic() - self.last_flush > FLUSH_SECONDS:
            self.flush()

    def count_launch(self, kernel) -> None:
        """GPU-less: one launch of `kernel` that was compiled and not run (no launch hook fires)."""
        key = str(getattr(getattr(kernel, "metadata", None), "hash", "") or "")
        if key:
            with self.lock:
                self.launches.setdefault(key, {"count": 0})["count"] += 1
                self.dirty = True

    def on_autotune(self, *, fn=None, key=None, best_config=None, configs_timings=None, duration=None,
                    cache_hit=False, **_):
        def config(c) -> dict[str, Any]:
            return {"kwargs": {k: _jsonable(v) for k, v in (getattr(c, "kwargs", None) or {}).items()},
                    "num_warps": getattr(c, "num_warps", None), "num_stages": getattr(c, "num_stages", None),
                    "text": str(c)}

        timings = []
        for c, t in (configs_timings or {}).items():
            if self.gpuless:  # nothing was timed: each config's prediction (or why there is none) instead
                timings.append({**config(c), "ms": None, **self.predictions.get(id(c), {"predicted_ms": None})})
                continue
            try:
                ms = [float(x) for x in (t if isinstance(t, (list, tuple)) else [t])]
            except (TypeError, ValueError):
                ms = []
            timings.append({**config(c), "ms": ms})
        name = getattr(getattr(fn, "fn", None), "__name__", None) or getattr(fn, "__name__", "?")
        tuning = {"kernel": name, "key": str(key), "best": str(best_config),
                  "best_config": config(best_config) if best_config is not None else None,
                  "configs": timings, "seconds": duration, "cache_hit": bool(cache_hit)}
        if self.gpuless:
            predicted = any(t.get("predicted_ms") is not None for t in timings)
            # an AMD target's predictions come from datasheet figures only (cost/model.py): said where they are
            amd = predicted and str(self.gpuless.get("arch") or "").startswith("gfx")
            tuning.update(timed=False, seconds=None,
                          chosen_by="predicted" if predicted else "first",
                          note="no config was timed (no GPU): " +
                               ("the cost model's fastest prediction was chosen" if predicted else
                                "no config could be predicted, so the first config the pruning kept was chosen") +
                               (" (datasheet only, not measured on any AMD GPU; expected error doubled)" if amd
                                else ""))
            if amd:
                tuning["datasheet_only"] = True
        with self.lock:
            self.tunings.append(tuning)
            data = json.dumps({"pid": self.pid, "rank": self.rank, "tunings": self.tunings}, indent=1, default=str)
        _write(self.autotune_file, data + "\n")

    # -- writing ------------------------------------------------------------

    def flush(self) -> None:
        with self.lock:
            if not self.dirty:
                return
            self.dirty = False
            self.last_flush = time.monotonic()
            data = json.dumps({"pid": self.pid, "rank": self.rank, "kernels": self.launches}, indent=1, default=str)
        _write(self.launch_file, data + "\n")

    def flush_at_exit(self) -> None:
        self.flush()
        self._write_process({"exit": time.time()})

    def _write_process(self, extra: dict[str, Any]) -> None:
        info: dict[str, Any] = {"pid": self.pid, "rank": self.rank, "argv": list(sys.argv), **extra}
        try:
            from triton import __version__ as version

            info["triton_version"] = version
        except Exception:
            pass
        torch = sys.modules.get("torch")
        if torch is not None:
            info["torch_version"] = getattr(torch, "__version__", None)
        _write(self.process_file, json.dumps(info, indent=1, default=str) + "\n")


# --------------------------------------------------------------------------
# How a recorded launch reads in a listing
# --------------------------------------------------------------------------

_SHORT_DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64", "int32": "i32",
                 "int64": "i64", "int8": "i8", "uint8": "u8", "int16": "i16", "bool": "i1"}


def launch_words(launch_info: dict[str, Any]) -> dict[str, str]:
    """{'grid': '4', 'args': 'f32[4096]+2 (unaligned), f32[4096], 4096'}: a captured kernel's first recorded launch
    in words ('' for what was not recorded); `open`'s listing shows them."""
    grids = launch_info.get("grids") or []
    samples = launch_info.get("args") or []
    grid = "x".join(str(g) for g in grids[0]) if grids and isinstance(grids[0], list) else ""
    if len(grids) > 1:
        grid += f" (+{len(grids) - 1} more)"
    words = []
    for a in samples[0] if samples and isinstance(samples[0], list) else []:
        if not isinstance(a, dict):
            continue
        if "dtype" in a:
            text = f"{_SHORT_DTYPES.get(a['dtype'], a['dtype'])}[{','.join(str(d) for d in a.get('shape', []))}]"
            if a.get("storage_offset"):
                text += f"+{a['storage_offset']}"
            if a.get("align16") is False:
                text += " (unaligned)"
            words.append(text)
        else:
            words.append(str(a.get("value", a.get("type", "?"))))
    return {"grid": grid, "args": ", ".join(words)}


def recorded_scalars(record: dict[str, Any], launch_info: dict[str, Any]) -> dict[str, Any]:
    """{'n_cols': 1000}: the scalar arguments of a captured kernel's first recorded launch, by parameter name (the
    record's signature is in parameter order; the launch's positional arguments come first).  The cost model
    evaluates loop bounds with them (a found kernel's spec.args could carry them, see the issue 35 report)."""
    names = list((record or {}).get("signature") or {})
    samples = (launch_info or {}).get("args") or []
    first = samples[0] if samples and isinstance(samples[0], list) else []
    return {name: a["value"] for name, a in zip(names, first)
            if isinstance(a, dict) and "value" in a and isinstance(a["value"], (int, float))
            and not isinstance(a["value"], bool)}
