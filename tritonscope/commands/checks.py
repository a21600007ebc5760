"""The commands' checks of option values, each made before any file is loaded or Triton is entered
(a bad value: one UsageError, exit 2)."""

from __future__ import annotations

from typing import Any, Optional

from tritonscope.core.errors import UsageError

VIEWS = ("stages", "side-by-side", "walkthrough", "mix")


def block_axis(block: Optional[int], blocks: Optional[str]) -> Optional[list[int]]:
    """--block N or --blocks N1,N2,... -> the values (None when neither); both, or a bad value: UsageError."""
    if block is not None and blocks is not None:
        raise UsageError("Give --block N or --blocks N1,N2,..., not both.",
                         hint="--block is one value; --blocks makes an axis of several.")
    if block is not None:
        return [block]
    if blocks is None:
        return None
    values = [v.strip() for v in blocks.split(",") if v.strip()]
    if not values or not all(v.isdigit() and int(v) > 0 for v in values):
        raise UsageError(f"--blocks {blocks!r}: give positive whole numbers, comma-separated.",
                         hint="For example: --blocks 32,64,128")
    return [int(v) for v in values]


def default_arch() -> str:
    """The local GPU's arch when there is one we know, else the default (pipeline/config.local_arch)."""
    from tritonscope.pipeline.config import local_arch

    return local_arch()


def check_line(line: Optional[int]) -> None:
    """--line N: a Python line number counts from 1 (refused before any compile; the kernel's own range
    is checked once its source is read)."""
    if line is not None and line < 1:
        raise UsageError(f"--line {line}: line numbers start at 1.",
                         hint="Give the Python line number; `--stage python` shows them numbered.")


def check_timeout(timeout: Optional[float]) -> None:
    """--timeout SECONDS: a finite number (typer's min=1 lets nan and inf through)."""
    import math

    if timeout is not None and not math.isfinite(timeout):
        raise UsageError(f"--timeout {timeout}: give a number of seconds.",
                         hint="e.g. --timeout 60; leave it out for no limit.")


def check_gpu(gpu: Optional[str], arches=()) -> None:
    """--gpu, before anything compiles: not empty, a GPU the cost model knows (exit 2), and a GPU of every arch
    compiled for (`arches`, canonical; None stands for none named) -- as `compile` refuses a B200 for sm_90a
    when it binds the launch -- rather than compiling everything and then saying "no prediction"."""
    if gpu is None:
        return
    from tritonscope.cost import gpu_names, resolve_gpu

    if not gpu.strip():
        raise UsageError("--gpu is empty.", hint=f"Name a GPU ({', '.join(gpu_names())}), or leave --gpu out for "
                                                  "the local GPU, else the arch's reference GPU.")
    g = resolve_gpu(gpu, None)
    for arch in dict.fromkeys(a for a in arches if a):
        if arch not in g.arches:
            raise UsageError(f"--gpu {gpu}: the {g.name} is no {arch} GPU (it is {', '.join(g.arches)}).",
                             hint="Name a GPU of the target arch (--arch), or leave --gpu out for the arch's "
                                  "reference GPU.")


def check_report_path(path: str, force: bool) -> str:
    """A report's format ('html', 'markdown', 'json', 'text') from --save, checked before any work."""
    from tritonscope.outputs.save import check

    return check(path, force=force)


def noise_filter(raw: bool, keep: Optional[str]) -> frozenset:
    """The noise kinds the views fold, from --raw / --keep (checked before any work)."""
    from tritonscope.outputs.render.noise import hide_set

    return hide_set(raw, keep)


def check_view(view: str) -> str:
    from tritonscope.core.errors import close_matches

    view = view.strip().lower().replace("_", "-")
    if view not in VIEWS:
        raise UsageError(f"Unknown view {view!r}.{close_matches(view, VIEWS)}", hint=f"Views: {', '.join(VIEWS)}.")
    return view


def parse_stage_list(text: Optional[str], default: tuple[str, ...]) -> tuple[str, ...]:
    from tritonscope.language.dialects import every_stage_key
    from tritonscope.core.errors import close_matches

    if text is None or text.strip().lower() == "all":
        return default
    if text.strip().lower() == "none":
        return ()
    known = every_stage_key()
    keys = [k.strip().lower() for k in text.split(",") if k.strip()]
    if not keys:  # --stage '' is a mistake, not "all"
        raise UsageError(f"--stage {text!r} names no stage.",
                         hint=f"Stages: {', '.join(known)} (comma-separated), all, or none.")
    out = []
    for key in keys:
        key = {"llvm": "llir", "source": "python", "py": "python", "ll": "llir"}.get(key, key)
        if key not in known:
            raise UsageError(f"Unknown stage {key!r}.{close_matches(key, known)}",
                             hint=f"Stages: {', '.join(known)} (comma-separated), all, or none.")
        out.append(key)
    return tuple(out)


def launch_options(maxnreg: Optional[int], num_ctas: Optional[int], fp_fusion: Optional[bool]) -> dict:
    """--maxnreg / --num-ctas / --fp-fusion as Triton's option names, checked (exit 2) before any work."""
    from tritonscope.inputs.kernels import check_launch_options

    return check_launch_options({"maxnreg": maxnreg, "num_ctas": num_ctas, "enable_fp_fusion": fp_fusion})


def check_options_for_arches(options: Optional[dict], arches) -> None:
    """Refuse (exit 2, before any compile) a launch option one of the (canonical) `arches` cannot take: what
    resolving a Config checks for its one arch (pipeline/config.check_options_for_arch), for a command of several."""
    from tritonscope.pipeline.config import check_options_for_arch

    for name in arches or ():
        if name:
            check_options_for_arch(options, name)


def refuse_for_found(target: str, **given: Any) -> None:
    """Options that describe a launch to compile mean nothing for a kernel that already compiled: say so."""
    from tritonscope.core.errors import UsageError

    named = [name for name, value in given.items() if value not in (None, [], ())]
    if named:
        raise UsageError(f"{', '.join(named)} describe{'s' if len(named) == 1 else ''} a kernel to compile; "
                         f"{target} holds kernels that already compiled, with their launch in their IR.",
                         hint="-c, --arch, --num-warps, --num-stages, --maxnreg, --num-ctas and --fp-fusion "
                              "recompile a found kernel (as `tritonscope open --recompile` does).")


def refuse_kernel_option(target: str, kernel: Optional[str]) -> None:
    from tritonscope.core.errors import UsageError

    if kernel is not None:
        raise UsageError(f"--kernel picks one kernel of a folder that `tritonscope open` reads; {target} is a "
                         "kernel to compile.",
                         hint="Name a kernel in a Python file as path/to/file.py:kernel_name.")
