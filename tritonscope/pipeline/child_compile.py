"""A compile in a child process: one stopped when its time is up, or one of another Triton.

`compile --timeout` compiles in a child of its own process group (Triton's
compile cannot be interrupted from inside the process), and `diff triton=`
and `versions` compile in a child of another Python (a Triton of
tritonscope/versions).  The child builds the Config's launch and compiles it
(triton_compile.compile_artifact); the Artifact comes back encoded.
"""

from __future__ import annotations

from tritonscope.core.model import Artifact


def compile_in_child(payload: dict) -> dict:
    """child.run_in_child's side of `compile_elsewhere`: the Config compiled here, the Artifact encoded."""
    from tritonscope.pipeline.binding import build_spec
    from tritonscope.pipeline.config import Config
    from tritonscope.pipeline.result_cache import encode_artifact
    from tritonscope.pipeline.triton_compile import compile_artifact

    loaded = build_spec(Config(**payload["config"]))
    return encode_artifact(compile_artifact(loaded, guard=False))


def compile_elsewhere(config, *, timeout: float | None = None, what: str = "The compile", env=None,
                      python: str | None = None, died: str | None = None) -> Artifact:
    """Compile `config` in a child process: one stopped after `timeout` seconds (`compile --timeout`), or
    one of another Python (`python`, `env`: a Triton of tritonscope/versions, diff's `triton=`).

    Triton's compile cannot be interrupted from inside the process (it runs in
    C++ and in ptxas), so it runs in a child of its own process group, which
    is killed whole, ptxas included, when time is up.  Nothing is written: the
    caller saves reports only after this returns, and Triton writes its cache
    atomically.  Raises CompileTimeoutError (exit 11).  With `died` (what to say when the child ends without
    an answer: Triton's compiler ended the process), that is a CompileError (exit 5).
    """
    from tritonscope.core.child import ChildDiedError, ChildTimeoutError, run_in_child
    from tritonscope.core.errors import CompileError, CompileTimeoutError
    from tritonscope.pipeline.result_cache import decode_artifact

    extra = {k: v for k, v in (("timeout", timeout), ("env", env), ("python", python)) if v is not None}
    try:
        data = run_in_child("tritonscope.pipeline.child_compile:compile_in_child", {"config": config.payload()},
                            what=what, **extra)
    except ChildTimeoutError:
        raise CompileTimeoutError(
            f"The compile of {config.target} did not finish within {timeout:g} s; it was stopped. "
            "Nothing was written.",
            hint="Give it more time (--timeout), or use a smaller block, fewer stages or fewer warps.") from None
    except ChildDiedError as e:
        if died is None:
            raise
        raise CompileError(died, context=e.context, data={"process_ended": True},
                           hint="Compile it for an NVIDIA target, or give the AMD target its own assembly (a "
                                "kernel that branches on the target), or try another Triton (--triton).") from None
    return decode_artifact(data)
