"""Ctrl-C that stops at once, even while Triton compiles.

Python runs its SIGINT handler (which raises KeyboardInterrupt) only when the
main thread gets back to Python code.  Triton's compiler passes and LLVM run
in C++ for seconds at a time (a 256x256 matmul tile for sm_80: about 15 s
after the key is pressed), releasing the GIL meanwhile.  So a watcher thread,
woken by the C-level signal handler through `signal.set_wakeup_fd`, gives the
main thread a moment to answer as usual; when it does not (it is inside the
compiler), the watcher says so on stderr and ends the process with exit 130.
Nothing is half written: every file tritonscope writes goes to a temporary
name and is renamed into place, and a compile writes nothing of the user's.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading

GRACE_SECONDS = 0.5  # how long the main thread has to raise KeyboardInterrupt itself
MESSAGE = "\ninterrupted: stopped inside the compiler; nothing was written.\n"


@contextlib.contextmanager
def prompt_interrupt(grace: float = GRACE_SECONDS):
    """For the CLI: a second line of defence behind KeyboardInterrupt (see the module docstring).

    Does nothing outside the main thread, or when SIGINT is not Python's own handler (ignored, or
    taken over by an embedding program).
    """
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    try:
        previous = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    except (ValueError, OSError):
        os.close(read_end)
        os.close(write_end)
        yield
        return
    done = threading.Event()
    # the terminal's stderr as it is now: while Triton compiles, fd 2 may be a pipe that collects its remarks
    terminal = os.dup(2)

    def watch() -> None:
        while not done.is_set():
            try:
                data = os.read(read_end, 64)
            except OSError:
                return
            if done.is_set() or not data:
                return
            if signal.SIGINT in data and not done.wait(grace):
                _stop(terminal)

    watcher = threading.Thread(target=watch, name="tritonscope-interrupt", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        signal.set_wakeup_fd(previous)
        try:
            os.write(write_end, b"\0")  # wake the watcher so it sees `done`
        except OSError:
            pass
        watcher.join(timeout=1)
        for fd in (write_end, read_end, terminal):
            os.close(fd)


def _stop(terminal: int) -> None:
    """The main thread is inside the compiler: say so, give the terminal its cursor back, exit 130."""
    try:
        text = ("\x1b[?25h" if os.isatty(terminal) else "") + MESSAGE  # a spinner may have hidden the cursor
        os.write(terminal, text.encode())
    finally:
        os._exit(130)
