"""Find a kernel and describe one launch of it: target string -> KernelSpec.

A target is a built-in sample name ("matmul") or "path/to/file.py:kernel".
A kernel file needs nothing from tritonscope.  It may declare example
launches in a plain module-level dict, which is how the samples work:

    EXAMPLES = {
        "matmul_kernel": {
            "shape": (32, 32, 32),          # default problem shape
            "dtype": "fp16",                # default input dtype
            "constexprs": {"BLOCK": 16},
            "constexprs_for": fn,           # optional: (shape, dtype) -> constexprs that follow the
                                            # shape; after "constexprs", before --block and -c
            "block": ["BLOCK"],             # what --block N sets
            "params": {},                   # launch-only knobs, settable with -c
            "num_warps": 4, "num_stages": 3,
            "launch": launch_fn,            # (shape, dtype, values) -> dict
        },
    }

`launch_fn` returns {"args": {name: value}, "grid": (x, y, z), "check":
{out_arg: fn(**inputs)}, "flops": n}.  Argument values use the same spelling
as the CLI's --arg: "fp16[32,32]" is a tensor, "fp16[32,32].T" a transposed
view, "*fp16" a bare 16-byte-aligned pointer, or a Python int/float/bool/None.

Loading a file executes it (it must import triton to define a kernel); this
module itself never imports triton or torch.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import inspect
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from tritonscope import triton_api
from tritonscope.core.errors import KernelSpecError, NotFoundError, UsageError, close_matches
from tritonscope.core.model import ARCHES, KernelSpec
from tritonscope.core.words import field_data, said
# The request record and the value parsers live in request.py and values.py; the names callers
# take from here are kept here too.
from tritonscope.inputs.request import (LAUNCH_FIELDS, LAUNCH_OPTIONS, LAUNCH_SHAPE, WARPS,  # noqa: F401
                                        Request, check_launch_options, check_request, checked_arch,
                                        names_set_by_block)
from tritonscope.inputs.values import (DTYPES, DescArg, TensorArg, canonical_arch, canonical_dtype,  # noqa: F401
                                       check_arg_text, constexpr_value, dtype_constexpr, parse_arg_value,
                                       parse_assignments, parse_constexpr, parse_scalar, parse_shape, shown_text)

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "samples"
if not SAMPLES_DIR.is_dir():  # installed (non-editable): samples ship as a subpackage
    SAMPLES_DIR = Path(__file__).resolve().parents[1] / "samples"


# --------------------------------------------------------------------------
# Finding the kernel
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    name: str
    file: Path
    kernel: str
    description: str


def list_samples() -> list[Sample]:
    """Samples are the files in samples/; each declares one kernel in EXAMPLES."""
    out = []
    for path in sorted(SAMPLES_DIR.glob("*.py")):
        if path.name.startswith("_"):
            continue
        tree = ast.parse(path.read_text())
        doc = ast.get_docstring(tree) or ""
        kernel = _declared_kernel(tree)
        if kernel:
            out.append(Sample(path.stem, path, kernel, doc.strip().splitlines()[0] if doc else ""))
    return out


def _declared_kernel(tree: ast.Module) -> str | None:
    """The first key of a module-level EXAMPLES dict, read without executing."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "EXAMPLES" for t in node.targets):
            if isinstance(node.value, ast.Dict) and node.value.keys:
                key = node.value.keys[0]
                if isinstance(key, ast.Constant):
                    return key.value
    return None


# liger_kernel.ops.rms_norm   (a module path, as `import` names it)
_MODULE_PATH_RE = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")


def resolve_target(target: str) -> tuple[Path, str | None]:
    """'matmul' -> (samples/matmul.py, 'matmul_kernel'); 'f.py:k' -> (f.py, 'k');
    'liger_kernel.ops.rms_norm:k' -> (that module's file, 'k')."""
    if ":" in target and not re.match(r"^[A-Za-z]:[\\/]", target):
        path_text, _, kernel = target.rpartition(":")
    elif target.endswith(".py"):
        path_text, kernel = target, ""
    else:
        samples = {s.name: s for s in list_samples()}
        if target in samples:
            return samples[target].file, samples[target].kernel
        raise NotFoundError(
            f"Unknown sample {target!r}.{close_matches(target, samples)}",
            hint="List the samples with `tritonscope samples`, or name a kernel as path/to/file.py:kernel_name "
                 "or package.module:kernel_name.",
        )
    path = Path(path_text).expanduser()
    if not path.is_file() and not path_text.endswith(".py") and _MODULE_PATH_RE.match(path_text):
        found = module_file(path_text)
        if found is None:
            raise NotFoundError(
                f"No module or file named {path_text!r}.",
                hint="Name an installed module (package.module:kernel_name, as `import` spells it) "
                     "or a file (path/to/file.py:kernel_name).")
        return found, kernel or None
    if not path.is_file():
        raise NotFoundError(
            f"No such file: {path_text}",
            hint="Check the path; a user kernel is written as path/to/file.py:kernel_name "
                 "(or package.module:kernel_name for an installed one).",
        )
    return path.resolve(), kernel or None


def module_file(dotted: str) -> Path | None:
    """The file of module `dotted` (a/b/c.py or a/b/c/__init__.py on sys.path), found without importing
    anything: no package's __init__ runs before the stand-in driver is active (load_module)."""
    parts = dotted.split(".")
    for root in ["", *sys.path]:
        base = Path(root or ".").joinpath(*parts)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            try:
                if candidate.is_file():
                    return candidate.resolve()
            except OSError:
                continue
    return None


def module_name_of(path: Path) -> tuple[str | None, Path]:
    """(dotted name, import root) of a file inside packages (folders with __init__.py), as Python imports
    it from the folder above its top package; (None, its folder) for a lone file."""
    parts = [path.stem] if path.name != "__init__.py" else []
    folder = path.parent
    while (folder / "__init__.py").is_file() and _MODULE_PATH_RE.match(folder.name):
        parts.insert(0, folder.name)
        folder = folder.parent
    if path.name != "__init__.py" and len(parts) == 1:
        return None, path.parent
    return ".".join(parts), folder


# module name -> (arch, the questions its import asked): a module whose import asked for the GPU is
# imported again when another arch is compiled, so its module-level answers are that arch's.
_ASKED: dict[str, tuple[str, tuple[str, ...]]] = {}


def load_module(path: Path, arch: str | None = None, gpu: str | None = None):
    """Import a kernel file as Python would run it (Triton needs it importable for getsource).

    Its folder, and the folder above its top package when it lives in one, go on sys.path, so
    `from helper import f` and `from mypkg.utils import g` work; a file inside a package is imported
    under its dotted name (relative imports work, and an installed library's kernel is the very
    module its users import).  While it imports, a stand-in driver answers for `arch`
    (triton_api.device_answers): module code that asks for the target, the backend, the SM count or
    the device properties gets the answers of the arch's reference GPU; the questions asked are
    kept (imported_asked) for the summary.
    """
    try:
        source = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise KernelSpecError(
            f"{path.name} is not UTF-8 text (byte {e.start}), so Python cannot import it.",
            hint="Save the kernel file as UTF-8.") from e
    except OSError as e:
        raise NotFoundError(f"Cannot read {path.name}: {e.strerror or e}.", hint="Check the path and its permissions.") from e
    try:
        compile(source, str(path), "exec")
    except (SyntaxError, ValueError) as e:
        lineno = getattr(e, "lineno", None)
        raise KernelSpecError(
            f"Syntax error in {path.name}" + (f", line {lineno}" if lineno else "") + f": {getattr(e, 'msg', e)}",
            context=(getattr(e, "text", None) or "").rstrip() or None,
            hint="Fix the Python file and run again.",
        ) from e
    dotted, root = module_name_of(path)
    folders = list(dict.fromkeys([str(path.parent.resolve()), str(root.resolve())]))
    for folder in folders:
        if folder not in sys.path:
            # after what is installed: a kernel folder's `json.py` or `rich.py` must not shadow the
            # modules tritonscope itself imports later in this process
            sys.path.append(folder)
        _KERNEL_FOLDERS.add(folder)
    name = dotted or f"_tritonscope_user_{abs(hash(str(path)))}"
    kept = sys.modules.get(name)
    asked = _ASKED.get(name)
    answered_for = f"{arch or ''}:{gpu or ''}"
    if kept is not None and (asked is None or not asked[1] or arch is None or asked[0] == answered_for):
        return kept
    if kept is not None:  # imported for another arch, and its import asked for the GPU: again, for this one
        del sys.modules[name]
    asking, answers = answering(arch, gpu)
    try:
        from tritonscope.core.console import prints_to_stderr
        from tritonscope.inputs import import_watch

        # a print() at import must not reach stdout, which may be --json's; what the import reads is recorded
        # (the result cache's key), an os._exit raises, a thread it starts is a daemon (import_watch)
        with _own_folder_first(folders), asking, prints_to_stderr(), import_watch.watching(path, folders):
            if dotted:
                module = importlib.import_module(dotted)
                if Path(getattr(module, "__file__", "") or "").resolve() != path.resolve():
                    raise ImportError(f"`import {dotted}` finds {getattr(module, '__file__', None)}, not {path}")
            else:
                spec = importlib.util.spec_from_file_location(name, path)
                module = importlib.util.module_from_spec(spec)
                sys.modules[name] = module
                spec.loader.exec_module(module)
    except KeyboardInterrupt:
        sys.modules.pop(name, None)
        raise
    except BaseException as e:  # the user's module raised (or exited) while importing
        sys.modules.pop(name, None)
        if type(e).__name__ == "ModuleExited":  # import_watch: os._exit(N), which would end tritonscope silently
            raise KernelSpecError(f"Importing {path.name} failed: {e}.",
                                  hint="A kernel module must not end the process when imported: guard the "
                                       "call with `if __name__ == '__main__':`.",
                                  data={"module": dotted or str(path)}) from None
        if isinstance(e, SystemExit):
            e = RuntimeError(f"it called exit({e.code})")
        vendor = _vendor_tool_missing(e, path, arch)
        if vendor is not None:
            raise vendor from e
        plain = (f"cd {root} && python -c 'import {dotted}'" if dotted else f"python {path}")
        raise KernelSpecError(
            f"Importing {path.name} failed: {type(e).__name__}: {_one_line(e)}",
            hint=f"The module must import cleanly: `{plain}` shows the error in plain Python. If it imports "
                 f"there, the stand-in GPU{f' ({arch})' if arch else ''} tritonscope answers its questions with "
                 "broke it: rerun with --debug and report the traceback.",
            data={"module": dotted or str(path)},
        ) from e
    _ASKED[name] = (answered_for, tuple(answers.asked) if answers is not None else ())
    return module


# The programs a library may run at import to learn the GPU vendor; tritonscope answers torch's and Triton's
# questions for the target, not these.
_VENDOR_TOOLS = ("nvidia-smi", "rocm-smi", "amd-smi", "rocminfo")
# os.environ.get("VLLM_TARGET_DEVICE")   os.environ["DS_ACCELERATOR"]   os.getenv('GPU_VENDOR', 'cuda')
_ENV_READ_RE = re.compile(r"""(?:environ(?:\.get)?|getenv)\s*[\[(]\s*["']([A-Z][A-Z0-9_]*)["']""")
_VENDOR_WORDS = re.compile(r"DEVICE|VENDOR|PLATFORM|GPU|TARGET|BACKEND|ACCELERATOR")


def _vendor_tool_missing(e: BaseException, path: Path, arch: str | None) -> KernelSpecError | None:
    """The error for an import that ran `nvidia-smi` (rocm-smi, ...) to find the vendor, on a machine without
    it (FileNotFoundError naming the program); None for any other failure.  The hint names the environment
    variables the module that ran it reads about the device: a library's own way to be told the vendor."""
    import subprocess
    import traceback

    seen, err = set(), e
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        if isinstance(err, FileNotFoundError) and Path(str(err.filename or "")).name in _VENDOR_TOOLS:
            break
        err = err.__cause__ or err.__context__
    else:
        return None
    tool = Path(str(err.filename)).name
    runner = Path(subprocess.__file__).resolve()
    caller = None
    for frame in traceback.extract_tb(err.__traceback__):  # the last frame before subprocess's own: the library's
        f = frame.filename
        if f.startswith("<") or Path(f).resolve() == runner:
            continue
        caller = frame
    where = f"{Path(caller.filename).name}:{caller.lineno}" if caller else path.name
    names: list[str] = []
    if caller is not None:
        try:
            names = [n for n in dict.fromkeys(_ENV_READ_RE.findall(Path(caller.filename).read_text(errors="replace")))
                     if _VENDOR_WORDS.search(n)]
        except OSError:
            pass
    vendor = "rocm" if arch and ARCHES.get(arch) is not None and ARCHES[arch].backend == "hip" else "cuda"
    if names:
        hint = (f"The module that runs it reads {', '.join(names)}: set the vendor there as the library documents "
                f"for a {vendor} machine (e.g. {names[0]}={vendor}) and run again.")
    else:
        hint = (f"Set the library's own vendor setting, if it has one (an environment variable read near {where}), "
                f"or put a `{tool}` that describes the target's GPU on PATH.")
    return KernelSpecError(
        f"Importing {path.name} failed: {where} runs `{tool}` to find the GPU vendor, and this machine has no "
        f"`{tool}` (tritonscope answers torch's and Triton's GPU questions for the target, not other programs').",
        hint=hint)


# The folders kernel files were imported from: their sibling modules (`helper.py`) are the user's.
_KERNEL_FOLDERS: set[str] = set()


@contextlib.contextmanager
def _own_folder_first(folders: list[str]):
    """While a kernel file imports, its own folder comes first and a sibling module of the same name that
    another kernel folder loaded earlier (`from helper import f`, two folders with a helper.py) is set
    aside, so each file gets its own siblings, as `python file.py` would; both are put back afterwards."""
    saved_path = list(sys.path)
    sys.path[:0] = folders
    here = set(folders)
    aside = {}
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None)
        if "." in name or not origin:
            continue
        folder = str(Path(origin).resolve().parent)
        if folder in _KERNEL_FOLDERS and folder not in here and any((Path(f) / f"{name}.py").is_file()
                                                                      for f in folders):
            aside[name] = sys.modules.pop(name)
    try:
        yield
    finally:
        sys.path[:] = saved_path
        for name, module in aside.items():
            sys.modules[name] = module


def imported_asked(module) -> tuple[str, ...]:
    """The GPU questions `module`'s import asked (answered for the arch it was loaded for)."""
    return _ASKED.get(getattr(module, "__name__", ""), ("", ()))[1]


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def answering(arch: str | None, gpu: str | None = None):
    """The context in which a kernel file's code (its import, heuristics, autotune pruning) asks for the GPU:
    the stand-in answers for `arch` (and --gpu), or nothing when no arch's answers can be given."""
    answers = _answers(arch, gpu)
    return (triton_api.device_answers(answers) if answers is not None else contextlib.nullcontext()), answers


def _answers(arch: str | None, gpu: str | None = None):
    """The stand-in answers for `arch`, as its reference GPU or the `gpu` named (--gpu) gives them (None when
    no arch is known, or the installed Triton lacks its backend)."""
    if arch is None or arch not in ARCHES:
        return None
    from tritonscope.core.gpus import gpu_or_refuse
    from tritonscope.core.model import reference_device

    part = gpu_or_refuse(gpu) if gpu else None
    if part is not None and arch not in part.arches:
        raise UsageError(f"{said('gpu', gpu)}: the {part.name} is no {arch} GPU (it is {', '.join(part.arches)}).",
                         hint=f"Name a GPU of the target arch, or leave {said('gpu')} out for the arch's reference "
                              "GPU.", data=field_data("gpu", gpu))
    device = reference_device(arch, part)
    a = ARCHES[arch]
    if a.backend == "hip" and not triton_api.has_backend("amd"):
        return None
    target = triton_api.gpu_target(a.capability, None if a.backend == "cuda" else (a.backend, a.target_arch,
                                                                                 a.warp_size))
    return triton_api.DeviceAnswers(target, device)


def find_kernel(module, path: Path, kernel: str | None):
    """The JITFunction object named `kernel` (unwrapping autotune/heuristics)."""
    jit_names = [n for n, v in vars(module).items() if triton_api.jit_function(v) is not None]
    if kernel is None:
        if len(jit_names) == 1:
            kernel = jit_names[0]
        else:
            raise NotFoundError(
                f"{path.name} defines {len(jit_names)} @triton.jit kernels; name one.",
                hint=f"Write {path.name}:KERNEL with KERNEL one of: {', '.join(jit_names) or '(none)'}.",
            )
    if not hasattr(module, kernel):
        asked = imported_asked(module)
        gated = (f" Its import asked {', '.join(asked)}, answered for this target: a kernel its module defines "
                 "only for other answers (a `torch.version.cuda` gate) is not there, as at a launch on such a GPU."
                 if asked else "")
        raise NotFoundError(
            f"No kernel named {kernel!r} in {path.name}.{close_matches(kernel, jit_names)}",
            hint=f"Kernels in this file: {', '.join(jit_names) or '(none)'}.{gated}",
        )
    obj = getattr(module, kernel)
    fn = triton_api.jit_function(obj)
    if fn is None:
        raise KernelSpecError(
            f"{kernel!r} in {path.name} is not a @triton.jit function (it is a {type(obj).__name__}).",
            hint="Decorate it with @triton.jit, or name a kernel that is.",
        )
    return kernel, obj, fn


# --------------------------------------------------------------------------
# Building the spec
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Loaded:
    spec: KernelSpec
    jit_fn: Any           # the JITFunction
    obj: Any              # what the file defines (may be an Autotuner)
    example: dict | None  # the EXAMPLES entry, if any
    launch: dict | None   # what the example's launch function returned


def stand_in_args(args: dict[str, Any]) -> dict[str, Any]:
    """The spec's runtime arguments as objects Triton's specializer (and a kernel's heuristics) accept."""
    import math

    out: dict[str, Any] = {}
    for name, value in args.items():
        value = parse_arg_value(value)
        if isinstance(value, TensorArg):
            out[name] = triton_api.StandInTensor(
                DTYPES[value.dtype], offset=value.offset,
                numel=math.prod(value.shape) if value.shape is not None else None,
                shape=value.shape, transposed=value.transposed)
        elif isinstance(value, DescArg):
            out[name] = triton_api.stand_in_descriptor(name, DTYPES[value.dtype], value.block, value.shape)
        else:
            out[name] = value
    return out


def kernel_value(value: Any) -> Any:
    """A constexpr as the kernel receives it: 'tl.bfloat16' -> triton.language.bfloat16; others as they are."""
    if isinstance(value, str) and value.startswith("tl.") and dtype_constexpr(value) == value:
        import triton.language as tl

        return getattr(tl, value[3:])
    return value


def held_kernel(obj) -> tuple[Path, Any, str, Any, Any]:
    """(file, module namespace, name, obj, JITFunction) for a kernel object the caller holds.

    The module namespace is the function's globals, so an EXAMPLES dict in the
    caller's file or notebook applies as it does to a file named on the CLI.
    """
    fn = triton_api.jit_function(obj)
    if fn is None:
        raise KernelSpecError(
            f"{getattr(obj, '__name__', type(obj).__name__)!r} is not a @triton.jit function "
            f"(it is a {type(obj).__name__}).",
            hint="Pass the @triton.jit function itself, a sample name, or 'path/to/file.py:kernel'.")
    py = triton_api.python_function(fn)
    code = getattr(py, "__code__", None)
    path = Path(code.co_filename if code else inspect.getsourcefile(py) or "<unknown>")
    if path.is_file():
        path = path.resolve()
    namespace = type(sys)("_tritonscope_held")
    namespace.__dict__.update(getattr(py, "__globals__", {}))
    return path, namespace, py.__name__, obj, fn


def load_for_spec(spec: KernelSpec) -> tuple[Any, Callable | None]:
    """Re-find the JITFunction for a spec (e.g. in a worker process): its file is imported (a kernel a Python
    caller handed over travels as Loaded.jit_fn instead, so its file is never run again)."""
    path = Path(spec.file)
    if not path.is_file():
        raise NotFoundError(f"No such file: {spec.file}", hint="The kernel file has moved; recompile from the new path.")
    module = load_module(path, spec.arch if spec.arch in ARCHES else None, getattr(spec, "gpu", None))
    _, _, fn = find_kernel(module, path, spec.kernel)
    return fn
