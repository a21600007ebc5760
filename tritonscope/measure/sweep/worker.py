"""One config compiled and reduced to a SweepRow (this runs in a worker process); a failure is the row's error.

Under a Pruning (tune), the SASS is disassembled only for a config the cost
model could still rank (set_pruning in this process, or a worker's
initializer).
"""

from __future__ import annotations

import signal

from tritonscope.core.errors import TritonscopeError, error_line
from tritonscope.measure.pruning import Pruning, bound_ms
from tritonscope.measure.sweep.rows import SweepRow


def row_shell(index: int, req) -> SweepRow:
    return SweepRow(index=index, config=_req_label(req), constexprs=dict(req.constexprs or {}),
                    num_warps=req.num_warps, num_stages=req.num_stages, arch=req.arch, dtype=req.dtype,
                    options=dict(req.options or {}))


def _req_label(req) -> str:
    from tritonscope.core.model import option_words

    parts = [f"{k}={v}" for k, v in (req.constexprs or {}).items()]
    if req.num_warps:
        parts.append(f"w{req.num_warps}")
    if req.num_stages is not None:
        parts.append(f"s{req.num_stages}")
    if req.arch:
        parts.append(req.arch)
    if req.dtype:
        parts.append(req.dtype)
    if words := option_words(req.options):
        parts.append(words)
    return " ".join(parts)


_PRUNING: Pruning | None = None   # this worker's (set by _worker_init; run_sweep's own for one job)


def compile_row(index: int, req, default_arch: str) -> SweepRow:
    """Compile one config and reduce it to a row; errors become the row's error.

    Under a Pruning (tune), the SASS is disassembled only for a config that fits and that the model could
    still rank; any other keeps `bound_ms` (its lower bound) and no prediction."""
    from tritonscope.language.dialects import class_counts, machine_stage
    from tritonscope.analyses.summary import summarize
    from tritonscope.pipeline.compile_path import Pipeline
    from tritonscope.pipeline.config import resolve

    pruning = _PRUNING
    row = row_shell(index, req)
    from tritonscope.analyses.failure import reporter, row_error

    # its own rows (not the result cache); a config failing inside Triton gets its report (one more compile)
    pipe = Pipeline(sass=pruning is None, on_failure=reporter(checks=False))
    try:
        config = resolve(req, default_arch)
        loaded = pipe.bind(config)
        spec = loaded.spec
        row.config, row.constexprs, row.options = spec.label(options=True), dict(spec.constexprs), spec.launch_options()
        row.num_warps, row.num_stages, row.arch, row.dtype = spec.num_warps, spec.num_stages, spec.arch, spec.dtype
        artifact = pipe.compile(config, loaded=loaded).artifact
    except KeyboardInterrupt:
        raise
    except TritonscopeError as e:
        row.error, row.error_kind = row_error(e) or e.message, type(e).__name__
        if e.data.get("failure") is not None:
            row.failure = e.data["failure"].to_dict()
        return row
    except Exception as e:  # a bug or an unclassified Triton failure: still a row
        row.error, row.error_kind = error_line(e), type(e).__name__
        return row
    summary = summarize(artifact)
    problems = list(summary.fit.problems) if summary.fit else []
    if pruning is not None and not problems and "sass" not in artifact.stages:
        _cost_facts(row, artifact, summary, bound=True)
        bound = bound_ms(row.cost_features, pruning.gpu)
        if pruning.admits(bound):
            from tritonscope.triton_api.cubin import add_sass

            row.cost_features, row.cost_why = None, None
            if add_sass(artifact):
                summary = summarize(artifact)   # the spills the SASS counts
        else:
            row.bound_ms, row.cost_features = bound, None
    row.ok = True
    row.shared, row.shared_limit = summary.shared.dynamic, summary.shared.limit_per_block
    row.registers, row.spills = summary.registers, summary.spills.bytes
    row.spill_stores, row.spill_loads = summary.spills.stores, summary.spills.loads
    row.fits, row.problems = not problems, problems
    if summary.occupancy:
        occ = summary.occupancy
        row.blocks_per_sm, row.occupancy, row.limited_by = occ.blocks_per_sm, occ.fraction, occ.limited_by
        row.waves_per_simd = occ.waves_per_simd
    mix_stage = machine_stage(artifact.stages) or "ptx"   # PTX on CUDA, AMDGCN on AMD
    row.mix = class_counts(mix_stage, artifact.stages.get(mix_stage, ""))
    row.kernel_hash = artifact.kernel_hash
    row.compile_seconds = round(artifact.compile_seconds, 4)
    if row.bound_ms is not None:
        row.cost_why = "not predicted: its lower bound is above the short list's threshold"
    elif pruning is not None and problems:
        row.cost_why = "not predicted: it does not fit"   # never ranked, so never disassembled under a Pruning
    else:
        _cost_facts(row, artifact, summary)
    return row


def _cost_facts(row: SweepRow, artifact, summary, bound: bool = False) -> None:
    """The cost model's compiled facts for this row (a failure of the model is its reason, never the row's);
    `bound`: the facts of its lower bound, read without the SASS (features_of_artifact)."""
    from tritonscope.cost.features import NoFeatures, features_of_artifact

    try:
        row.cost_features = features_of_artifact(artifact, summary, bound=bound)
    except NoFeatures as e:
        row.cost_why = str(e)
    except Exception as e:  # a kernel shape the model's reader does not know: no prediction, said plainly
        row.cost_why = f"the cost model could not read this kernel ({type(e).__name__}: {e})"


def _worker_init(pruning: Pruning | None = None) -> None:
    """A worker process's start (run._run_pool's initializer): its Pruning, Ctrl-C left to the parent."""
    set_pruning(pruning)
    # Ctrl-C goes to the whole process group; the parent decides what to stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from tritonscope import triton_api

    triton_api.quiet_known_warnings()


def set_pruning(pruning: Pruning | None) -> None:
    """The Pruning compile_row applies in this process (run_sweep's own, for one job; None: none)."""
    global _PRUNING
    _PRUNING = pruning
