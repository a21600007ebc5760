"""tritonscope capture: run a program and record every Triton kernel it compiles and launches."""

from __future__ import annotations

from typing import List, Optional

import typer

from tritonscope.commands.options import GpuOpt


def capture_cmd(
    ctx: typer.Context,
    command: Optional[List[str]] = typer.Argument(None, metavar="-- PROGRAM [ARGS]...",
                                                  help="The program to run, after --, e.g. -- python train.py."),
    out: str = typer.Option("tritonscope-capture", "-o", "--out", metavar="DIR",
                            help="Folder to record into (created; must be new or empty)."),
    force: bool = typer.Option(False, "--force", help="Record into a folder that already holds a capture."),
    arch: Optional[str] = typer.Option(None, "--arch", metavar="ARCH",
                                       help="Capture with no GPU, for this target (sm_90a, gfx942, ...): the program "
                                            "runs on the CPU, its cuda tensors in CPU memory, torch.cuda and Triton "
                                            "answer as the target's reference GPU, and each launch is compiled for "
                                            "ARCH instead of run. The kernels' outputs are NOT computed."),
    gpu: Optional[str] = GpuOpt,  # with --arch: the GPU torch.cuda answers as and autotune configs are predicted on
):
    """Run a program and record every Triton kernel it compiles and launches.

    Records each kernel's source (file and line), specialization, constexprs,
    options, every stage and the binary, and for launches the grid and each
    argument's dtype/shape/strides/alignment (never the data) with a count;
    @triton.autotune runs (every config tried, the one chosen) too.  Each
    process or rank writes its own files; every write is atomic, so a crash
    leaves a valid capture.  A program that exits non-zero or is killed makes
    capture exit 14, with the program's status in the message (a signal N as
    a shell reports it, 128+N).

    Examples:

      tritonscope capture -o cap -- python train.py --steps 10

      tritonscope open cap

      tritonscope open cap --kernel triton_poi_fused_add_0 --recompile --arch sm_100a --diff

    With --arch, no GPU is needed: every launch is compiled for ARCH (through
    Triton's own launch path: the real arguments' specialization, the
    kernel's heuristics and autotune pruning) and recorded as on a GPU, but
    not run, so the kernels' outputs are not computed.  An autotuned kernel
    compiles every config its pruning keeps; none is timed: the cost model's
    fastest prediction is chosen where it can predict, else the first.

      tritonscope capture --arch sm_90a -o cap -- python train.py --steps 1
    """
    from tritonscope.inputs import capture
    from tritonscope.core.env import env_of

    env = env_of(ctx)
    err = env.console(stderr=True)
    gpuless = _gpuless(arch, gpu, bool(command))
    if gpuless:
        err.print(f"tritonscope capture: no GPU: the program runs on the CPU; each Triton launch is compiled for "
                  f"{gpuless['arch']} (torch.cuda answers as the {gpuless['as']}) and NOT run: "
                  f"the kernels' outputs are not computed.")
    result = capture.run(out, list(command or []), force=force, arch=arch and gpuless["arch"], gpu=gpu,
                         gpuless=gpuless)
    try:
        from tritonscope.inputs.sources import open_source

        found = open_source(result.folder)
        launched = sum(1 for e in found.entries if e.launches)
        err.print(f"tritonscope capture: {len(found.entries)} kernels recorded ({launched} launched) "
                  f"in {result.seconds:.1f} s -> {result.folder}")
        err.print(f"  list them: tritonscope open {result.folder}")
        if gpuless:
            err.print(f"  compiled for {gpuless['arch']}, not run: the kernels' outputs were not computed "
                      "(the program went on with whatever their buffers held).")
    except Exception as e:  # how the program ended matters more than our summary
        err.print(f"tritonscope capture: recorded into {result.folder} ({type(e).__name__}: {e})")
    ended = result.program_status()
    if ended is not None:
        from tritonscope.core.errors import ProgramFailedError

        why = (" With no GPU the kernels' outputs are not computed (their buffers hold what they held before): "
               "a program that checks or reads them (.item(), a shape taken from them) can fail because of that."
               if gpuless else "")
        raise ProgramFailedError(f"The program ({command[0]}) {ended}.{why}",
                                 hint="Its own output is above; what it compiled before it stopped is recorded "
                                      "all the same.")


def _gpuless(arch: Optional[str], gpu: Optional[str], has_command: bool) -> dict | None:
    """capture --arch: the target checked before the program starts (exit 2/3), and what capture.json says of
    the GPU-less run; None without --arch."""
    from tritonscope.core.errors import UsageError

    if arch is None:
        if gpu is not None:
            raise UsageError("--gpu names the GPU a capture with no GPU answers as: it needs --arch.",
                             hint="e.g. tritonscope capture --arch sm_90a --gpu H100 -o cap -- python prog.py")
        return None
    from tritonscope import triton_api
    from tritonscope.commands import checks
    from tritonscope.core.model import ARCHES, reference_device
    from tritonscope.inputs.kernels import canonical_arch

    name = canonical_arch(arch)
    a = ARCHES[name]
    backend = "amd" if a.backend == "hip" else "nvidia"
    if not triton_api.has_backend(backend):
        raise UsageError(f"--arch {name}: this Triton has no {backend} backend to compile for it.",
                         hint="`tritonscope samples` lists the archs this Triton has.")
    if gpu is not None:
        checks.check_gpu(gpu, (name,))
    device = reference_device(name)["name"]
    return {"arch": name, "gpu": gpu, "as": gpu or device, "outputs_computed": False,
            "note": f"captured with no GPU: each launch was compiled for {name} and not run, so the kernels' "
                    f"outputs were not computed; no autotune config was timed"}
