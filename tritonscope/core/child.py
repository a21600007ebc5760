"""Run one function in a child Python process and get its JSON answer, or a typed error.

Two jobs need a process of their own: Triton's interpreter (TRITON_INTERPRET
is read when @triton.jit runs, so it cannot be switched on in this process)
and Triton's gluon layout conversion (which can abort the process).  Both go
through `run_in_child`:

    parent                                  child (python -m tritonscope.core.child module:function)
    JSON payload on stdin            ->     result = function(payload)
    last MARKER line of stdout       <-     MARKER {"result": ...} | {"error": {type, message, hint, context}}

A TritonscopeError raised in the child comes back as the same class; any
other exception comes back as a TritonscopeError with the traceback as
context; a child that dies before answering (a crash, an abort) raises
ChildDiedError.  The child leaves with os._exit, skipping interpreter
teardown (nanobind's leak reports, slow atexit hooks).

(`sweep` is different: a pool of workers streams many rows back, one per
config, so it uses concurrent.futures; see measure/sweep/run._run_pool.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from tritonscope.core.errors import TritonscopeError

MARKER = "@@TRITONSCOPE@@"


class ChildDiedError(TritonscopeError):
    """The child process ended without an answer (crashed, aborted, timed out)."""


class ChildTimeoutError(ChildDiedError):
    """The child did not answer within its timeout; it was killed with its whole process group."""


def run_in_child(function: str, payload: Any, *, what: str, env: dict[str, str] | None = None,
                 timeout: float = 600, python: str | None = None) -> Any:
    """function ('package.module:name') applied to payload in a fresh interpreter; its result.

    `what` names the job in errors ("The interpreter process").  `env`
    replaces the child's environment (default: this one, without
    TRITONSCOPE_DEBUG so the answer is never mixed with tracebacks).
    `python` runs the child with another interpreter (another environment's,
    with another Triton: see tritonscope/versions); it imports tritonscope
    from this process's copy (`child_command`), so both sides speak one protocol.
    """
    child_env = dict(os.environ if env is None else env)
    child_env.pop("TRITONSCOPE_DEBUG", None)
    # its own process group (session), so that a timeout also stops what it started (ptxas)
    proc = subprocess.Popen(child_command(function, python), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(json.dumps(payload), timeout=timeout)
    except BaseException as e:  # the timeout, or Ctrl-C: the child and its children go too
        _kill_group(proc)
        if isinstance(e, subprocess.TimeoutExpired):
            raise ChildTimeoutError(f"{what} did not answer within {timeout:g} s.",
                                    hint="Try a smaller problem (--shape), or rerun with --debug.") from e
        raise
    proc = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    marker = proc.stdout.rfind(MARKER)
    if marker < 0:
        tail = (proc.stderr or proc.stdout).strip()
        raise ChildDiedError(f"{what} failed without an answer (exit {proc.returncode}).",
                             context=tail[-2000:] or None,
                             hint="Rerun with --debug; if it is a tritonscope bug, report the output.")
    answer = json.loads(proc.stdout[marker + len(MARKER):].strip().splitlines()[0])
    if "error" in answer:
        raise _error_from(answer["error"])
    return answer["result"]


# --- added for tritonscope/versions: a child under another environment's Python ---
# The child loads tritonscope from the folder this process loaded it from (whatever the
# other environment has installed, if anything, is not used), then runs main().
_BOOT = ("import importlib.util, sys\n"
         "pkg = sys.argv.pop(1)\n"
         "spec = importlib.util.spec_from_file_location('tritonscope', pkg + '/__init__.py', "
         "submodule_search_locations=[pkg])\n"
         "mod = importlib.util.module_from_spec(spec); sys.modules['tritonscope'] = mod; spec.loader.exec_module(mod)\n"
         "from tritonscope.core.child import main\n"
         "main()\n")


def child_command(function: str, python: str | None = None) -> list[str]:
    """The child's command line: `python -m tritonscope.core.child F`, or for another interpreter a boot
    that imports this copy of tritonscope by its folder (no PYTHONPATH: that would also put this
    environment's Triton in front of the other's)."""
    if python is None:
        return [sys.executable, "-m", "tritonscope.core.child", function]
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the tritonscope package
    return [python, "-c", _BOOT, package, function]


def _kill_group(proc: subprocess.Popen) -> None:
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):  # gone already, or no process groups
        proc.kill()
    proc.communicate()


def _error_from(err: dict[str, Any]) -> TritonscopeError:
    from tritonscope.core import errors

    cls = getattr(errors, err.get("type", ""), TritonscopeError)
    if not (isinstance(cls, type) and issubclass(cls, TritonscopeError)):
        cls = TritonscopeError
    return cls(err["message"], hint=err.get("hint"), context=err.get("context"))


def _answer(function: str, payload: Any) -> dict[str, Any]:
    import importlib

    try:
        module, _, name = function.partition(":")
        return {"result": getattr(importlib.import_module(module), name)(payload)}
    except TritonscopeError as e:
        return {"error": {"type": type(e).__name__, "message": e.message, "hint": e.hint, "context": e.context}}
    except Exception as e:  # report, don't die without an answer
        import traceback

        return {"error": {"type": "TritonscopeError", "message": f"unexpected {type(e).__name__}: {e}",
                          "context": traceback.format_exc()[-2000:],
                          "hint": "This is a tritonscope bug. Report the context above."}}


def main() -> None:
    answer = _answer(sys.argv[1], json.loads(sys.stdin.read()))
    sys.stdout.write("\n" + MARKER + json.dumps(answer) + "\n")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
