"""What a `versions` run compiles: targets on the command line -> jobs (kernel x arch).

A target is one of
- a sample (`matmul`), a user kernel (`file.py:kernel`, `package.module:kernel`): compiled as
  `compile` would, with the command's -c/-w/-s/--config;
- a capture, a Triton cache or a kernel dump folder (read by sources.open_source): each kernel
  in it recompiled as `open --arch` does (a captured one from its Python function);
- a folder of kernel files: every `@triton.jit` kernel of every .py file in it (read without
  running the files: an ast walk), compiled as `file.py:kernel`;
- `samples`: every built-in sample.
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict, replace
from pathlib import Path

from tritonscope.core.errors import NotFoundError, UsageError
from tritonscope.versions.run import Job


def jit_kernels(path: Path) -> list[str]:
    """Names of the functions decorated with triton.jit (or autotune/heuristics over it) in a file, unrun."""
    try:
        tree = ast.parse(path.read_text(errors="replace"))
    except (SyntaxError, ValueError, OSError):
        return []
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            words = [ast.unparse(d) for d in node.decorator_list]
            if any("jit" in w for w in words):
                out.append(node.name)
    return out


def jobs_for(targets: list[str], arches: list[str], base_request, default_arch: str) -> tuple[list[Job], list[str]]:
    """(jobs, notes): notes say what a folder held that is not compiled (e.g. files without kernels)."""
    from tritonscope.inputs.kernels import canonical_arch, list_samples

    jobs: list[Job] = []
    notes: list[str] = []
    arch_list = [canonical_arch(a) for a in arches] or []

    def request_jobs(target: str, label: str) -> None:
        for arch in arch_list or [base_request.arch or default_arch]:
            req = replace(base_request, target=target, arch=arch)
            jobs.append(Job(label, arch, {"kind": "request", "request": asdict(req), "default_arch": default_arch}))

    for target in targets:
        if target == "samples":
            for s in list_samples():
                request_jobs(s.name, s.name)
            continue
        p = Path(target).expanduser()
        if p.is_dir():
            found = _found_jobs(p, arch_list)
            if found:
                jobs += found
                continue
            files = sorted(f for f in p.rglob("*.py") if not any(part.startswith(".") for part in f.parts))
            any_kernel = False
            for f in files:
                names = jit_kernels(f)
                if not names:
                    continue
                any_kernel = True
                for name in names:
                    request_jobs(f"{f}:{name}", f"{f.relative_to(p)}:{name}")
            if not any_kernel:
                raise NotFoundError(f"{target}: no capture, Triton cache, dump or @triton.jit kernel file in it.",
                                    hint="Give a sample, file.py:kernel, a capture/cache/dump folder or a folder "
                                         "of kernel files.")
            continue
        if p.is_file() and p.suffix != ".py":
            raise UsageError(f"{target}: a single stage file cannot be compiled again under another Triton.",
                             hint="Give the kernel's Python (file.py:kernel) or the capture/cache it came from.")
        check_target(target)
        request_jobs(target, target)
    return jobs, notes


# vllm.model_executor.layers.fused_moe   (a module path, as `import` names it: no .py, no slash)
_MODULE_RE = re.compile(r"^[A-Za-z_]\w*(?:\.(?!py$)[A-Za-z_]\w*)*$")


def check_target(target: str) -> None:
    """NotFoundError (exit 3) for a sample, file or folder that is not there, before any environment is made:
    a typo in a CI gate is never a row that "fails in both".  A `package.module:kernel` not found here is left
    to each side's Python, which may have the package this one lacks."""
    from tritonscope.inputs.kernels import resolve_target

    module, sep, _ = target.rpartition(":")
    if not sep and not Path(target).expanduser().exists() and (
            "/" in target or "\\" in target or target.startswith((".", "~"))):
        # ./kernels/   nothere/   (a sample's name has no slash; a folder that exists was read above)
        raise NotFoundError(f"No such file or folder: {target}",
                            hint="Check the path; give a sample, file.py:kernel, package.module:kernel, a "
                                 "capture/cache/dump folder or a folder of kernel files.")
    try:
        resolve_target(target)
    except NotFoundError:
        if sep and _MODULE_RE.match(module) and not Path(module).exists():
            return
        raise


def _found_jobs(p: Path, arches: list[str]) -> list[Job]:
    from tritonscope.inputs.sources import open_source

    try:
        source = open_source(p)
    except Exception:
        return []
    if source.kind == "file" or not source.entries:
        return []
    out = []
    for e in source.entries:
        label = f"{e.name} [{e.key[:12]}]"
        for arch in arches or [e.arch]:
            out.append(Job(label, arch, {"kind": "found", "path": str(p), "key": e.key, "arch": arch}))
    return out
