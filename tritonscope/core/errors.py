"""Typed errors and the documented exit codes.

Core code raises these and never prints or exits; `cli.py` is the one place
that turns them into a message on stderr and an exit code.
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    OK = 0
    UNEXPECTED = 1        # a bug in tritonscope: rerun with --debug and report it
    USAGE = 2             # bad command-line usage (unknown option, bad value)
    NOT_FOUND = 3         # missing file, unknown sample, kernel or arch
    BAD_KERNEL = 4        # not a @triton.jit function, bad or missing args/constexprs
    COMPILE_ERROR = 5     # Triton rejected the kernel
    OUT_OF_RESOURCES = 6  # the config does not fit the target (shared memory, registers)
    BAD_INPUT_FILE = 7    # malformed IR file, layout string or report
    OUTPUT_ERROR = 8      # cannot write the output file
    NO_GPU = 9            # the command needs a CUDA GPU (or PyTorch, for run --interpret) and none is present
    CHECK_FAILED = 10     # `tritonscope check`: an expectation did not hold
    REGRESSION = 10       # `tritonscope versions --fail-on`: a kernel got worse (the same code: a check failed)
    TIMEOUT = 11          # --timeout: the compile did not finish in time and was stopped
    WRONG_RESULT = 12     # `run`, `bench`: a kernel's output did not match the reference
    NO_RESULT = 13        # `run`, `bench`, `tune`: nothing compared or timed, a config failed, or a figure cannot be true
    PROGRAM_FAILED = 14   # `capture`: the program exited non-zero or a signal killed it (its status is named)
    INTERRUPTED = 130     # Ctrl-C


class TritonscopeError(Exception):
    """An error with a message, optional context and a hint on how to fix it.

    Besides bad input, a command raises one for an outcome that is not a
    success (a wrong result, a failed program): its exit code is then the one
    documented for that outcome, and exit 1 keeps meaning only "a bug".
    """

    exit_code: ExitCode = ExitCode.UNEXPECTED

    def __init__(self, message: str, *, hint: str | None = None, context: str | None = None,
                 data: dict | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.context = context
        self.data = dict(data or {})  # what went wrong as data (the field, the step), for callers to word


class UsageError(TritonscopeError):
    exit_code = ExitCode.USAGE


class NotFoundError(TritonscopeError):
    exit_code = ExitCode.NOT_FOUND


class KernelSpecError(TritonscopeError):
    exit_code = ExitCode.BAD_KERNEL


class CompileError(TritonscopeError):
    exit_code = ExitCode.COMPILE_ERROR


class OutOfResourcesError(TritonscopeError):
    exit_code = ExitCode.OUT_OF_RESOURCES


class InputFileError(TritonscopeError):
    exit_code = ExitCode.BAD_INPUT_FILE


class OutputError(TritonscopeError):
    exit_code = ExitCode.OUTPUT_ERROR


class NoGPUError(TritonscopeError):
    exit_code = ExitCode.NO_GPU


class CompileTimeoutError(TritonscopeError):
    exit_code = ExitCode.TIMEOUT


class CheckFailedError(TritonscopeError):
    exit_code = ExitCode.CHECK_FAILED


class RegressionError(CheckFailedError):
    """`versions --fail-on`: a kernel broke a rule between two Triton versions."""
    exit_code = ExitCode.REGRESSION


class WrongResultError(TritonscopeError):
    """`run` or `bench`: an output did not match torch's (the table above shows which)."""
    exit_code = ExitCode.WRONG_RESULT


class NoResultError(TritonscopeError):
    """No result to trust, though nothing was wrong: `run` of a launch that declares no check (nothing was
    compared), `bench` of a config that failed to compile or launch or whose figure cannot be true."""
    exit_code = ExitCode.NO_RESULT


class ProgramFailedError(TritonscopeError):
    """`capture`: the program exited non-zero or was killed; the capture is kept and the status named."""
    exit_code = ExitCode.PROGRAM_FAILED


class InterruptedRunError(TritonscopeError):
    """Ctrl-C stopped a command that has already shown what finished (sweep's partial table).

    Not a failure to report as an error: the CLI says "interrupted: <message>" and exits 130,
    as it does for a Ctrl-C that stopped a command before it showed anything.
    """
    exit_code = ExitCode.INTERRUPTED


def close_matches(word: str, choices, n: int = 3) -> str:
    """' Did you mean: a, b?' or '' -- for 'unknown X' messages."""
    import difflib

    found = difflib.get_close_matches(word, list(choices), n=n, cutoff=0.5)
    return f" Did you mean: {', '.join(found)}?" if found else ""


def error_line(e: BaseException) -> str:
    """An exception in one line, for a row or a status: "TypeName: the first line of its message"."""
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"
