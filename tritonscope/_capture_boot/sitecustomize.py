"""Loaded by every Python process `tritonscope capture` starts (this folder leads PYTHONPATH).

It installs tritonscope's recording hooks once the program imports triton
(see tritonscope/inputs/capture.py; with `capture --arch`, the GPU-less run
of gpuless.py) and then runs the sitecustomize this one
shadows, if the environment has one.
"""

import importlib.util
import os
import sys


def _start():
    try:
        if os.environ.get("TRITONSCOPE_CAPTURE_ARCH"):  # capture --arch: GPU-less (gpuless.py)
            from tritonscope._capture_boot import gpuless

            gpuless.start()
            return
        from tritonscope.inputs.capture import install_when_imported

        install_when_imported()
    except Exception as e:  # never break the program being captured
        print(f"tritonscope capture: not recording this process: {type(e).__name__}: {e}", file=sys.stderr)


def _chain():
    """Run the next sitecustomize on sys.path (the one this file hides)."""
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        if not entry or os.path.abspath(entry) == here:
            continue
        candidate = os.path.join(entry, "sitecustomize.py")
        if os.path.isfile(candidate):
            spec = importlib.util.spec_from_file_location("_tritonscope_next_sitecustomize", candidate)
            module = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(module)
            except Exception as e:
                print(f"tritonscope capture: {candidate} failed: {type(e).__name__}: {e}", file=sys.stderr)
            return


_start()
_chain()
