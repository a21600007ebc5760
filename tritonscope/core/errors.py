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
    NO_GPU = 9            # the command needs a CUDA GPU and none is present
    CHECK_FAILED = 10     # `tritonscope check`: an expectation did not hold
    REGRESSION = 10       # `tritonscope versions --fail-on`: a kernel got worse (the same code: a check failed)
    TIMEOUT = 11          # --timeout: the compile did not finish in time and was stopped
    INTERRUPTED = 130     # Ctrl-C


class TritonscopeError(Exception):
    """An error with a message, optional context and a hint on how to fix it."""

    exit_code: ExitCode = ExitCode.UNEXPECTED

    def __init__(self, message: str, *, hint: str | None = None, context: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.context = context


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


def close_matches(word: str, choices, n: int = 3) -> str:
    """' Did you mean: a, b?' or '' -- for 'unknown X' messages."""
    import difflib

    found = difflib.get_close_matches(word, list(choices), n=n, cutoff=0.5)
    return f" Did you mean: {', '.join(found)}?" if found else ""
