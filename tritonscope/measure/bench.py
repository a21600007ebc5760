"""Time a kernel on the local GPU against PyTorch, correctly.

- Timing: `triton.testing.do_bench` (CUDA events; the L2 cache is flushed
  before every repetition; warm-up first) and the median over repetitions.
- TFLOP/s from the launch's "flops"; effective bandwidth as (bytes read +
  bytes written) / time, where each input is read once and each output
  written once (the fewest bytes the kernel must move).  Seed 002's "GB/s"
  (flops / 2 / time) is not a bandwidth.
- The same inputs through torch (torch.matmul for matmuls), the ratio, and
  the fraction of the GPU's datasheet peak.
- Correctness against the launch's check, with a dtype-suited tolerance,
  and TF32 reported when the compiled kernel uses it.

A sweep compiles every config first (for the local GPU's arch, the same
compile a launch does) and reports the ones that do not fit as out of
resources instead of launching them.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from tritonscope import triton_api
from tritonscope.core.errors import TritonscopeError, error_line
from tritonscope.core.gpus import gpu_for_device
from tritonscope.measure import runner
from tritonscope.inputs.kernels import Loaded



def peaks_for(device: str) -> tuple[str, dict[str, float]] | tuple[None, None]:
    """(the GPU's name in core/gpus.json, its dense peaks and "gbs") for a device name as torch reports it,
    or (None, None) for a part whose datasheet peaks the table lacks."""
    part = gpu_for_device(device)
    if part is None or not part.has_peaks:
        return None, None
    return part.name, part.peaks()


def peak_kind(dtype: str | None, tf32: bool | None) -> str | None:
    if dtype in ("fp16", "bf16"):
        return dtype
    if dtype and dtype.startswith("fp8"):
        return "fp8"
    if dtype == "fp32":
        return "tf32" if tf32 else "fp32"
    return None


@dataclass
class Timing:
    ms: float
    tflops: float | None
    gbs: float | None          # effective bandwidth: (read + written) / time


@dataclass
class BenchRow:
    label: str                 # the config
    shape: tuple[int, ...] | None
    dtype: str | None
    constexprs: dict[str, Any]
    num_warps: int
    num_stages: int
    status: str                # "ok", "wrong", "out of resources", "failed"
    problem: str | None = None
    kernel: Timing | None = None
    torch: Timing | None = None
    torch_what: str | None = None
    ratio: float | None = None        # torch time / kernel time (>1: the kernel is faster)
    peak_fraction: float | None = None
    peak_kind: str | None = None
    # Why a figure is not shown: a wrong result has no throughput; above 100% of the peak is a
    # measurement error (too short to time, a wrong flop/byte count, a wrong peak table), not a figure.
    withheld: str | None = None
    check: dict | None = None         # the first CheckResult as a dict
    tf32: bool | None = None
    bytes_read: int = 0
    bytes_written: int = 0
    registers: int | None = None
    shared: int | None = None
    spills: int | None = None         # spill bytes per thread: stack frame + local (summary.Spills.bytes)
    spill_stores: int | None = None   # STL instructions in the SASS
    spill_loads: int | None = None    # LDL instructions in the SASS
    mix: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class BenchReport:
    device: str
    arch: str
    versions: dict[str, str]
    rows: list[BenchRow]
    peaks_source: str = ""          # the datasheet the peaks come from (core/gpus.json)
    peak_table: str | None = None
    warmup_ms: int = 25
    rep_ms: int = 100
    target: str = ""
    options: dict[str, Any] = field(default_factory=dict)  # launch options every config was launched with

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def median_ms(fn, warmup: int, rep: int) -> float:
    import triton.testing

    return float(triton.testing.do_bench(fn, warmup=warmup, rep=rep, return_mode="median"))


def torch_baseline(loaded: Loaded, values: dict[str, Any]):
    """(what, callable): the launch's "torch" function, torch.matmul for matmuls, else its check."""
    import inspect

    import torch

    launch = loaded.launch or {}
    fn = launch.get("torch")
    if callable(fn):
        names = inspect.signature(fn).parameters
        return "torch (launch's)", lambda: fn(**{k: values[k] for k in names})
    if launch.get("flops") and "a_ptr" in values and "b_ptr" in values:
        a, b = values["a_ptr"], values["b_ptr"]
        what = "torch.matmul"
        if a.dtype == torch.float32:
            what += " (fp32, TF32 " + ("on" if torch.backends.cuda.matmul.allow_tf32 else "off") + ")"
        return what, lambda: torch.matmul(a, b)
    checks = launch.get("check") or {}
    if len(checks) == 1:
        (fn,) = checks.values()
        names = inspect.signature(fn).parameters
        return "torch reference", lambda: fn(**{k: values[k] for k in names})
    return None, None


def prepare_loaded(loaded: Loaded, *, artifact=None, seed: int | None = None,
                   phases: dict | None = None) -> tuple[BenchRow, dict | None]:
    """Inputs, one launch and its check: (the row, the inputs to time it on; None when it did not launch).

    `phases`, when given, receives the seconds the check took (`check_s`): what an autotuner, which checks
    nothing, would not spend."""
    import torch

    spec = loaded.spec
    row = BenchRow(spec.label(options=True), spec.shape, spec.dtype, dict(spec.constexprs), spec.num_warps, spec.num_stages, "ok")
    if artifact is not None:
        _resources_into(row, artifact)
    triton_api.set_allocator()
    try:
        # inputs a launch cannot be given (a dtype torch lacks) fail this config, as a launch that raises does
        values = runner.make_inputs(loaded, "cuda", seed)
        row.bytes_read, row.bytes_written = runner.tensor_bytes(loaded, values)
    except TritonscopeError:  # a typed error (a bad argument) keeps its own message and exit code
        raise
    except Exception as e:
        row.status, row.problem = "failed", f"inputs: {error_line(e)}"
        return row, None
    try:
        compiled = runner.launch(loaded, values)
        torch.cuda.synchronize()
    except Exception as e:
        row.status = "out of resources" if triton_api.is_out_of_resources(e) else "failed"
        row.problem = error_line(e)
        return row, None
    row.tf32 = runner.uses_tf32(getattr(compiled, "asm", {}).get("ptx"))
    started = time.perf_counter()
    checks = runner.check(loaded, values, row.tf32)
    if phases is not None:
        phases["check_s"] = time.perf_counter() - started
    if checks:
        row.check = asdict(checks[0]) if len(checks) == 1 else asdict(max(checks, key=lambda c: c.rel_error))
        if not all(c.passed for c in checks):
            row.status = "wrong"
    return row, values


def time_prepared(loaded: Loaded, values: dict, warmup: int, rep: int) -> float:
    """The median time of one launch on prepared inputs (do_bench: L2 flushed before each repetition)."""
    return median_ms(lambda: runner.launch(loaded, values), warmup, rep)


def finish_row(row: BenchRow, loaded: Loaded, ms: float, torch_ms: float | None = None) -> BenchRow:
    """The row's figures (throughput, % peak, ratio) from its time, only those that can be true (fill_figures)."""
    flops = (loaded.launch or {}).get("flops")
    moved = row.bytes_read + row.bytes_written
    table, peaks = peaks_for(runner.device_name())
    return fill_figures(row, ms=ms, torch_ms=torch_ms, flops=flops, moved=moved, peaks=peaks, peak_table=table)


def bench_loaded(loaded: Loaded, *, artifact=None, warmup: int = 25, rep: int = 100,
                 with_torch: bool = True, seed: int | None = None) -> BenchRow:
    """Check, then time one config (and torch on the same inputs)."""
    row, values = prepare_loaded(loaded, artifact=artifact, seed=seed)
    if values is None:
        return row
    ms = time_prepared(loaded, values, warmup, rep)
    torch_ms = None
    if with_torch:
        what, fn = torch_baseline(loaded, values)
        if fn is not None:
            row.torch_what = what
            torch_ms = median_ms(fn, warmup, rep)
    return finish_row(row, loaded, ms, torch_ms)


def fill_figures(row: BenchRow, *, ms: float, torch_ms: float | None, flops: int | None, moved: int,
                 peaks: dict[str, float] | None, peak_table: str | None = None) -> BenchRow:
    """The row's figures from its timings, only the ones that can be true.

    - A wrong result (status "wrong") keeps its time but gets no throughput,
      no ratio to torch and no % peak: a fast wrong kernel is not fast.
    - A figure above 100% of the datasheet peak is impossible: the row
      becomes a "measurement error", with the reason in `withheld`, and no
      throughput, % peak or ratio (the timing or the flop/byte count is wrong).
    - torch keeps its own figures in their own units.
    """
    row.kernel = _timing(ms, flops, moved)
    if torch_ms is not None:
        row.torch = _timing(torch_ms, flops, moved)
        row.ratio = torch_ms / ms if ms else None
    if row.status == "wrong":
        row.kernel = Timing(ms, None, None)
        row.ratio = None
        row.withheld = "a wrong result: no throughput, % peak or ratio"
        return row
    row.peak_kind = peak_kind(row.dtype, row.tf32)
    if peaks and row.kernel.tflops and row.peak_kind in peaks:
        row.peak_fraction = row.kernel.tflops / peaks[row.peak_kind]
    elif peaks and not flops and row.kernel.gbs:
        row.peak_kind = "bandwidth"
        row.peak_fraction = row.kernel.gbs / peaks["gbs"]
    if row.peak_fraction is not None and row.peak_fraction > 1.0:
        row.withheld = (f"{row.peak_fraction:.0%} of the {peak_table or 'GPU'}'s {row.peak_kind} peak is impossible: "
                        "a measurement error (a kernel too short to time, or a wrong flop/byte count)")
        row.status = "measurement error"
        row.kernel = Timing(ms, None, None)
        row.peak_fraction = None
        row.ratio = None
    return row


def _timing(ms: float, flops: int | None, moved: int) -> Timing:
    seconds = ms / 1e3
    return Timing(ms, flops / seconds / 1e12 if flops else None, moved / seconds / 1e9 if moved else None)


def _resources_into(row: BenchRow, artifact) -> None:
    from tritonscope.analyses.analysis import analyze

    analysis = analyze(artifact)
    summary = analysis.summary
    row.registers = summary.registers
    row.shared = summary.shared.dynamic
    row.spills = summary.spills.bytes
    row.spill_stores, row.spill_loads = summary.spills.stores, summary.spills.loads
    # Coarse classes (the words of diff and sweep) of the last stage that has any: SASS, else PTX.
    from tritonscope.language.dialects import PIPELINE, class_counts

    for key in reversed(PIPELINE):
        row.mix = class_counts(key, analysis.artifact.stages.get(key, ""))
        if row.mix:
            break


def bench_configs(loadeds: list[Loaded], *, warmup: int = 25, rep: int = 100, with_torch: bool = True,
                  progress=None, on_row=None) -> BenchReport:
    """Compile each config for the local arch, skip what does not fit, time the rest."""
    from tritonscope.core.errors import OutOfResourcesError, TritonscopeError
    from tritonscope.pipeline.compile_path import Pipeline
    from tritonscope.analyses.summary import summarize

    runner.require_gpu("Benchmarking")
    import torch

    rows = []
    pipe = Pipeline()
    for i, loaded in enumerate(loadeds):
        spec = loaded.spec
        if progress:
            progress(i, len(loadeds), spec)
        try:
            artifact = pipe.compile(None, loaded=loaded).artifact
        except OutOfResourcesError as e:
            rows.append(BenchRow(spec.label(options=True), spec.shape, spec.dtype, dict(spec.constexprs), spec.num_warps,
                                 spec.num_stages, "out of resources", problem=e.message.splitlines()[0]))
            continue
        except TritonscopeError as e:  # e.g. a Triton pass that rejects this config
            rows.append(BenchRow(spec.label(options=True), spec.shape, spec.dtype, dict(spec.constexprs), spec.num_warps,
                                 spec.num_stages, "failed", problem=e.message.splitlines()[0]))
            if on_row:
                on_row(rows[-1])
            continue
        fit = summarize(artifact).fit
        problems = list(fit.problems) if fit else []
        if problems:
            row = BenchRow(spec.label(options=True), spec.shape, spec.dtype, dict(spec.constexprs), spec.num_warps,
                           spec.num_stages, "out of resources", problem="; ".join(problems))
            _resources_into(row, artifact)
            rows.append(row)
            if on_row:
                on_row(row)
            continue
        rows.append(bench_loaded(loaded, artifact=artifact, warmup=warmup, rep=rep, with_torch=with_torch))
        if on_row:
            on_row(rows[-1])
        torch.cuda.empty_cache()
    device = runner.device_name()
    part = gpu_for_device(device)
    key = part.name if part is not None and part.has_peaks else None

    from tritonscope.core.model import TRITON_OPTIONS

    options = {k: v for k, v in (loadeds[0].spec.options if loadeds else {}).items() if k in TRITON_OPTIONS}
    return BenchReport(device, loadeds[0].spec.arch if loadeds else "", runner.versions(), rows,
                       peaks_source=part.source if key else "", peak_table=key, warmup_ms=warmup, rep_ms=rep,
                       target=loadeds[0].spec.target if loadeds else "", options=options)
