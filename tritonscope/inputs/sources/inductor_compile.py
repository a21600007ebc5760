"""Compiling an Inductor kernel file GPU-less, with Inductor's own heuristics deciding its config.

The parent never imports torch: `compile_inductor` sends the kernels to a child
process (core.child), which imports each generated module (it imports
torch._inductor), exactly as Inductor's async_compile would, while the
stand-in driver and torch.cuda answer as the target GPU.  Inductor's decorator
then runs its own code: the heuristics build the configs
(`triton_heuristics.pointwise/reduction/...`), `cached_autotune` looks in its
autotune cache.  What the child takes from Inductor's `CachingAutotuner`:

- the configs, and the one Inductor would launch: its autotune cache's hit,
  else the `.best_config` beside the file whose `configs_hash` equals
  Inductor's `hash_configs(configs)`, turned into a Config by Inductor's
  `_load_cached_autotuning`; else the only config; else (Inductor would time
  them on the GPU) the first, said as a guess with why;
- what Inductor passes `triton.compile` for that config
  (`_create_compile_meta`, `_create_compile_options`: signature, constants,
  divisibility, `debug`, `sanitize_overflow=False`, `launch_pdl`, ...),
  compiled through tritonscope's compile (triton_api.compile_ast) for the
  file's device or `--arch`;
- the grid from Inductor's own grid code (`GridExpr.from_meta(...).eval_slow`)
  with the sizes the kernel's body or the output code's launch gives; a
  FixedGrid kernel's grid only from the output code's launch.

One thing of Inductor's is skipped: the file's `triton_helpers.set_driver_to_gpu()`
would load the CUDA driver (libcuda); the stand-in driver already answers as
the target.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tritonscope.core.errors import InputFileError, UsageError
from tritonscope.core.model import ARCHES, Artifact, KernelSpec, arch_for_capability
from tritonscope.inputs.sources.inductor import InductorKernel, best_configs_near
from tritonscope.language.dialects import SOURCE
from tritonscope.language.dialects import stages as dialect_stages


@dataclass
class InductorCompile:
    """One kernel compiled the way Inductor would, and how its config and grid were found."""

    artifact: Artifact
    plan: dict[str, Any] = field(default_factory=dict)


def target_arch(entry: InductorKernel, arch: str | None) -> str:
    """--arch, else the arch of the device in the kernel's triton_meta (cc 90 -> sm_90a)."""
    from tritonscope.inputs.kernels import canonical_arch

    if arch:
        return canonical_arch(arch)
    cc = entry.device.get("cc")
    found = arch_for_capability(cc) if isinstance(cc, int) else None
    if found is None and isinstance(cc, str) and cc:   # a HIP device: DeviceProperties(cc='gfx942', ...)
        name = cc.split(":")[0]
        found = ARCHES.get(canonical_arch(name)) if name in ARCHES or name.startswith("gfx") else None
    if found is None:
        raise UsageError(f"{entry.name} was generated for {entry.device_words}, an arch tritonscope does not know.",
                         hint="Name one with --arch (e.g. --arch sm_90a).")
    return found.name


def payload_of(entry: InductorKernel, arch_name: str, num_warps: int | None = None,
               num_stages: int | None = None) -> dict[str, Any]:
    """What the child needs to compile one kernel (JSON-safe)."""
    return {"name": entry.name, "module_text": entry.module_text,
            "module_file": str(entry.module_file) if entry.module_file else "",
            "in_place": bool(entry.module_file and entry.module_file.name != "output_code.py"
                             and entry.module_file.is_file()
                             and entry.module_file.read_text(encoding="utf-8", errors="replace") == entry.module_text),
            "arch": arch_name, "best_configs": [{k: v for k, v in b.items()} for b in best_configs_near(entry)],
            "numels": {**entry.numels, **((entry.launch or {}).get("numels") or {})},
            "launch_grid": (entry.launch or {}).get("grid"), "num_warps": num_warps, "num_stages": num_stages}


def compile_inductor(entries: list[InductorKernel], *, arch: str | None = None, num_warps: int | None = None,
                     num_stages: int | None = None, python: str | None = None,
                     env: dict[str, str] | None = None) -> list[InductorCompile]:
    """Each kernel compiled in one child process (torch imported there only); `python` another environment's,
    `env` its environment (default: this one)."""
    from tritonscope.core.child import run_in_child

    started = time.perf_counter()
    arches = [target_arch(e, arch) for e in entries]
    payloads = [payload_of(e, a, num_warps, num_stages) for e, a in zip(entries, arches)]
    answer = run_in_child("tritonscope.inputs.sources.inductor_compile:_child", {"kernels": payloads},
                          what="The Inductor kernel compile (it imports torch._inductor)", python=python,
                          env=env)
    out = []
    seconds = (time.perf_counter() - started) / max(1, len(entries))
    for entry, arch_name, result in zip(entries, arches, answer["kernels"]):
        out.append(InductorCompile(_artifact(entry, arch_name, result, seconds), result["plan"]))
    return out


# --------------------------------------------------------------------------
# The child: Inductor's own code, then tritonscope's compile
# --------------------------------------------------------------------------


def _child(payload: dict[str, Any]) -> dict[str, Any]:
    import base64

    out = []
    for one in payload["kernels"]:
        compiled, plan = _compile_one(one)
        asm = {k: ({"base64": base64.b64encode(v).decode()} if isinstance(v, bytes) else str(v))
               for k, v in compiled.asm.items()}
        out.append({"compiled": {"asm": asm, "metadata": compiled.metadata, "kernel_hash": compiled.kernel_hash,
                                 "remarks": compiled.remarks}, "plan": plan})
    return {"kernels": out}


def _compile_one(one: dict[str, Any]):
    from tritonscope import triton_api
    from tritonscope.inputs.kernels import answering

    arch = ARCHES[one["arch"]]
    context, answers = answering(one["arch"])
    with context:
        tuner, module_name = _import_kernel(one)
        plan = _plan(tuner, one)
        cfg = plan.pop("_config")
        meta = tuner._create_compile_meta(cfg)
        options = tuner._create_compile_options(cfg, meta)
    warps, stages = options.pop("num_warps"), options.pop("num_stages")
    if one.get("num_warps"):
        warps = one["num_warps"]
    if one.get("num_stages") is not None:
        stages = one["num_stages"]
    target = None if arch.backend == "cuda" else tuple(arch.target_words()["target"])
    compiled = triton_api.compile_ast(tuner.fn, dict(meta["signature"]), dict(meta["constants"]),
                                      dict(meta["configs"][0]) if meta.get("configs") else {},
                                      capability=arch.capability, num_warps=warps, num_stages=stages,
                                      options=options, target=target)
    attrs = dict(meta["configs"][0]) if meta.get("configs") else {}
    names = list(meta["signature"])
    plan["attrs"] = {names[k[0]]: [f"{a}={v}" for a, v in value] for k, value in attrs.items()
                     if isinstance(k, tuple) and len(k) == 1 and k[0] < len(names)}
    plan.update(num_warps=warps, num_stages=stages, options=_json_safe(options),
                signature=dict(meta["signature"]), constants=_json_safe(meta["constants"]),
                asked=list(answers.asked) if answers is not None else [])
    return compiled, plan


def _import_kernel(one: dict[str, Any]):
    """The CachingAutotuner the generated module defines; imported from its own file when it is unchanged
    there (so Inductor's own autotune-cache lookup sees its folder), else from a private copy."""
    import hashlib
    import importlib.util
    import shutil
    import sys
    import tempfile

    text = one["module_text"]
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    name = f"_tritonscope_inductor_{digest}"
    folder = None
    if one["in_place"]:
        path = Path(one["module_file"])
    else:
        folder = Path(tempfile.mkdtemp(prefix="tritonscope-inductor-"))
        path = folder / f"{one['name']}.py"
        path.write_text(text, encoding="utf-8")
    module = sys.modules.get(name)
    sys.dont_write_bytecode = True   # nothing is written into the user's cache folder (__pycache__)
    try:
        if module is None:
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                with _no_gpu_driver_switch():
                    spec.loader.exec_module(module)
            except Exception as e:
                del sys.modules[name]
                raise InputFileError(f"The Inductor kernel file of {one['name']} does not import here: "
                                     f"{type(e).__name__}: {e}",
                                     hint="It imports torch._inductor: run with a torch whose Inductor runtime "
                                          "matches the one that generated it.") from e
    finally:
        if folder is not None:
            import linecache

            linecache.cache[str(path)] = (len(text), None, text.splitlines(True), str(path))
            shutil.rmtree(folder, ignore_errors=True)
    tuner = getattr(module, one["name"], None)
    if tuner is None or not hasattr(tuner, "_create_compile_meta"):
        raise InputFileError(f"{one['name']} in its file is no Inductor CachingAutotuner "
                             f"({type(tuner).__name__}).")
    return tuner, name


class _no_gpu_driver_switch:
    """While the file imports: its `triton_helpers.set_driver_to_gpu()` is a no-op (it would make Triton's CUDA
    driver active, which loads libcuda; the stand-in driver already answers as the target)."""

    def __enter__(self):
        from torch._inductor.runtime import triton_helpers

        self._helpers = triton_helpers
        self._saved = triton_helpers.set_driver_to_gpu
        triton_helpers.set_driver_to_gpu = lambda: None
        return self

    def __exit__(self, *exc):
        self._helpers.set_driver_to_gpu = self._saved
        return False


def _plan(tuner, one: dict[str, Any]) -> dict[str, Any]:
    """Which config Inductor would launch, why, and the grid; '_config' holds the Config itself."""
    from torch._inductor.runtime.triton_heuristics import hash_configs

    configs = list(tuner.configs)
    info = dict(tuner.autotune_cache_info or {})
    meta = tuner.inductor_meta
    # Inductor's own rule for whether it would run coordinate descent at launch (not for templates)
    coordesc = bool(meta.get("coordinate_descent_tuning"))
    import functools

    should = getattr(type(tuner), "_should_coordesc_tune", None)
    if isinstance(should, (property, functools.cached_property)):
        coordesc = bool(tuner._should_coordesc_tune)
    state = info.get("autotune_cache_state")
    plan: dict[str, Any] = {"heuristic": str(getattr(tuner.heuristic_type, "name", tuner.heuristic_type)).lower(),
                            "configs": [_config_dict(c) for c in configs], "guessed": False,
                            "autotune_cache_state": state}
    if state == "hit":
        cfg, plan["chosen_by"] = configs[0], "Inductor's autotune cache"
        plan["why"] = "Inductor's own autotune-cache lookup found the config it chose on the GPU"
    else:
        cfg = _from_best_config(tuner, configs, one, plan, hash_configs(configs))
        if cfg is None and len(configs) == 1 and not coordesc:
            cfg, plan["chosen_by"] = configs[0], "the only config"
            plan["why"] = ("Inductor's heuristics give this one config and Inductor does not tune it further at "
                           "launch (no coordinate descent for this kind), so it is the one Inductor launches")
        elif cfg is None and len(configs) == 1:
            cfg, plan["chosen_by"], plan["guessed"] = configs[0], "the starting config (a guess)", True
            plan["why"] = ("Inductor would start coordinate descent tuning from this config on the GPU and no "
                           ".best_config records where it ended: compiled the starting config")
        elif cfg is None:
            cfg, plan["chosen_by"], plan["guessed"] = configs[0], "the first config (a guess)", True
            plan["why"] = (f"Inductor would time its {len(configs)} configs on the GPU and no .best_config "
                           "records its choice: compiled the first")
    plan["chosen"] = _config_dict(cfg)
    plan["_config"] = cfg
    plan.update(_grid(tuner, cfg, one))
    return plan


def _from_best_config(tuner, configs, one, plan, configs_hash: str):
    """The .best_config beside the file whose configs_hash is Inductor's hash of these configs, as the
    Config Inductor's `_load_cached_autotuning` makes of it (None: no such file)."""
    from torch._inductor.runtime.autotune_cache import _load_cached_autotuning

    plan["configs_hash"] = configs_hash
    found = [b for b in one.get("best_configs") or [] if b.get("configs_hash") == configs_hash]
    others = len(one.get("best_configs") or []) - len(found)
    if not found:
        if others:
            plan["best_config_note"] = (f"{others} .best_config file(s) beside it record other configs "
                                        f"(configs_hash differs from Inductor's {configs_hash[:12]})")
        return None
    if len(found) > 1:
        plan["best_config_note"] = f"{len(found)} .best_config files match its configs_hash; took the first"
    best = dict(found[0])
    path = best.pop("path", "")
    cfg = _load_cached_autotuning(dict(best), configs_hash, configs, tuner.inductor_meta)
    if cfg is None:
        return None
    plan["chosen_by"] = ".best_config"
    plan["best_config"] = path
    how = "coordinate descent" if best.get("found_by_coordesc") else "autotuning"
    plan["why"] = (f"{Path(path).name} beside the file records the config {how} chose on the GPU; its "
                   f"configs_hash equals Inductor's hash of this file's configs")
    return cfg


def _grid(tuner, cfg, one: dict[str, Any]) -> dict[str, Any]:
    """The launch grid: the output code's (FixedGrid), else Inductor's grid code for this config and the
    sizes the kernel's body or launch gives; unknown, with why, otherwise."""
    from torch._inductor.runtime.triton_heuristics import GridExpr, config_to_dict

    meta = tuner.inductor_meta
    grid_type = meta.get("grid_type")
    if one.get("launch_grid"):
        return {"grid": list(one["launch_grid"]), "grid_from": "the output code's launch"}
    if grid_type is None:
        return {"grid": None, "grid_unknown": "the kernel file records no grid type"}
    if grid_type == "FixedGrid":
        return {"grid": None, "grid_unknown": "its grid is passed at launch (FixedGrid) and no output code "
                                              "that launches it is here"}
    numels = dict(one.get("numels") or {})
    try:
        grid = GridExpr.from_meta(meta, cfg)
        values = grid.eval_slow({**config_to_dict(cfg), **numels})
    except NameError as e:   # a size the kernel takes at launch (dynamic shapes)
        return {"grid": None, "grid_unknown": f"{grid_type}: {e} (a size passed at launch, not in the file)"}
    except Exception as e:
        return {"grid": None, "grid_unknown": f"Inductor's {grid_type} grid failed: {type(e).__name__}: {e}"}
    return {"grid": [int(v) for v in values], "grid_from": f"Inductor's {grid_type} for "
            + ", ".join(f"{k}={v}" for k, v in numels.items())}


def _config_dict(cfg) -> dict[str, Any]:
    return {**_json_safe(dict(cfg.kwargs)), "num_warps": cfg.num_warps, "num_stages": cfg.num_stages}


def _json_safe(d: dict[str, Any]) -> dict[str, Any]:
    return {str(k): (v if isinstance(v, (int, float, str, bool, type(None))) else str(v)) for k, v in d.items()}


# --------------------------------------------------------------------------
# The parent: an Artifact from the child's answer
# --------------------------------------------------------------------------


def _artifact(entry: InductorKernel, arch_name: str, result: dict[str, Any], seconds: float) -> Artifact:
    from tritonscope import triton_api
    from tritonscope.inputs.codeobject import hip_resources
    from tritonscope.triton_api.cubin import cuda_resources, sass_and_resources

    compiled = _compiled_of(result["compiled"])
    plan = result["plan"]
    backend = ARCHES[arch_name].backend
    warnings = _plan_words(entry, arch_name, plan)
    stages: dict[str, str] = {"python": entry.module_text}
    for d in dialect_stages(backend):
        if d.key != SOURCE and isinstance(compiled.asm.get(d.key), str):
            stages[d.key] = compiled.asm[d.key]
    if backend == "hip":
        resources = hip_resources(compiled, warnings)
    else:
        sass, res = sass_and_resources(compiled.asm.get("cubin"), warnings)
        if sass is not None:
            stages["sass"] = sass
        resources = cuda_resources(res, compiled.metadata)
    signature = plan.get("signature") or {}
    launch_args = (entry.launch or {}).get("args") or {}
    args = {n: launch_args.get(n, t) for n, t in signature.items() if t != "constexpr"}
    constexprs = {k: v for k, v in plan["chosen"].items() if k not in ("num_warps", "num_stages")}
    spec = KernelSpec(target=f"{entry.module_file}:{entry.name}", kernel=entry.name, file=str(entry.module_file),
                      args=args, constexprs=constexprs, num_warps=int(plan["num_warps"]),
                      num_stages=int(plan["num_stages"]), arch=arch_name,
                      grid=tuple(plan["grid"]) if plan.get("grid") else None,
                      options={k: v for k, v in (plan.get("options") or {}).items()},
                      asked=tuple(plan.get("asked") or ()))
    line = (entry.record or {}).get("line", 1)
    artifact = Artifact(spec=spec, triton_version=triton_api.triton_version(), kernel_hash=compiled.kernel_hash,
                        stages=stages, python_first_line=1,
                        metadata={k: compiled.metadata[k] for k in sorted(compiled.metadata) if k != "hash"},
                        resources=resources, specialization=_specialization(plan), warnings=warnings,
                        compile_seconds=seconds,
                        remarks=list(compiled.remarks or []))
    blob = compiled.asm.get("cubin" if backend == "cuda" else "hsaco")
    artifact._binaries = {("cubin" if backend == "cuda" else "hsaco"): bytes(blob)} \
        if isinstance(blob, (bytes, bytearray)) else {}
    artifact._inductor_line = line
    return artifact


def _specialization(plan: dict[str, Any]) -> list:
    """Each argument as Inductor's triton_meta specializes it: its type, divisibility, constexpr values."""
    from tritonscope.core.model import ArgSpecialization

    constants = plan.get("constants") or {}
    out = []
    for name, ty in (plan.get("signature") or {}).items():
        if ty == "constexpr":
            out.append(ArgSpecialization(name, "constexpr", (), constants.get(name, plan["chosen"].get(name))))
        else:
            out.append(ArgSpecialization(name, ty, tuple((plan.get("attrs") or {}).get(name, ()))))
    return out


def _compiled_of(data: dict[str, Any]):
    """The child's JSON answer as triton_api.Compiled (binaries came base64-encoded)."""
    import base64

    from tritonscope.triton_api import Compiled

    asm = {k: (base64.b64decode(v["base64"]) if isinstance(v, dict) else v) for k, v in data["asm"].items()}
    return Compiled(asm=asm, metadata=data["metadata"], kernel_hash=data["kernel_hash"],
                    remarks=data.get("remarks") or [], cache_hit=False)


def _plan_words(entry: InductorKernel, arch_name: str, plan: dict[str, Any]) -> list[str]:
    """What was done and how each choice was made, in words (the artifact's warnings)."""
    cfg = " ".join(f"{k}={v}" for k, v in plan["chosen"].items() if k not in ("num_warps", "num_stages"))
    out = [f"Compiled Inductor's {plan['heuristic']} kernel for {arch_name} with config "
           f"{(cfg + ' ') if cfg else ''}w{plan['num_warps']} s{plan['num_stages']}, chosen by {plan['chosen_by']}: "
           f"{plan['why']}."]
    was = arch_for_capability(entry.device.get("cc")) if isinstance(entry.device.get("cc"), int) else None
    if was is not None and was.name != arch_name:
        out.append(f"Inductor generated this kernel for {was.name} ({entry.device_words}); compiled for "
                   f"{arch_name} with the configs Inductor's heuristics give where torch answers as a {arch_name} "
                   "GPU, which may differ from the run's (a .best_config is for the run's device).")
    if plan.get("best_config_note"):
        out.append(plan["best_config_note"] + ".")
    if plan.get("grid") is None:
        out.append(f"Grid unknown: {plan.get('grid_unknown')}; give it with --grid.")
    return out
