"""What a sweep gives: one SweepRow per config (plain values, cached and saved as they are), and the SweepResult."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

ROW_FORMAT = 4   # bump when SweepRow changes: old cached rows are then ignored (2: stack spills, STL/LDL;
                 # 3: launch options; 4: the cost model's compiled facts)


@dataclass
class SweepRow:
    index: int
    config: str                       # "BLOCK_SIZE=128 w4 s3 sm_90a"
    constexprs: dict[str, Any]
    num_warps: int | None
    num_stages: int | None
    arch: str | None
    dtype: str | None
    options: dict[str, Any] = field(default_factory=dict)  # launch options: maxnreg, num_ctas, enable_fp_fusion
    ok: bool = False
    error: str | None = None          # why it did not compile
    error_kind: str | None = None     # CompileError, KernelSpecError, ...
    shared: int | None = None         # dynamic shared memory, bytes
    shared_limit: int | None = None   # the arch's max per block
    registers: int | None = None
    spills: int | None = None         # spill bytes per thread: stack frame + local (summary.Spills.bytes)
    spill_stores: int | None = None   # STL instructions in the SASS
    spill_loads: int | None = None    # LDL instructions in the SASS
    fits: bool | None = None
    problems: list[str] = field(default_factory=list)
    blocks_per_sm: int | None = None
    occupancy: float | None = None
    limited_by: str | None = None
    mix: dict[str, int] = field(default_factory=dict)   # instruction classes of the machine stage (PTX; AMDGCN)
    waves_per_simd: int | None = None                  # AMD targets: occupancy in waves per SIMD
    kernel_hash: str | None = None
    compile_seconds: float = 0.0
    cached: bool = False
    # The cost model's compiled facts at the config's launch (cost/features.py); None with cost_why when
    # the model cannot read this kernel.  The prediction itself is made per --gpu (attach_predictions).
    cost_features: dict[str, Any] | None = None
    cost_why: str | None = None
    predicted_ms: float | None = None          # filled by attach_predictions, never cached
    bound_ms: float | None = None              # tune's pruned configs: the model's lower bound, not a prediction
    prediction: dict[str, Any] | None = None   # its breakdown (cost.Prediction.to_dict)
    failure: dict[str, Any] | None = None      # failed inside Triton: its report (analyses/failure), in one line in `error`


@dataclass
class SweepResult:
    kernel: str
    target: str
    rows: list[SweepRow]
    requested: int
    interrupted: bool = False
    seconds: float = 0.0
    workers: int = 0
    from_autotune: bool = False
    options: dict[str, Any] = field(default_factory=dict)  # the launch options every config was given
    start_seconds: float = 0.0   # starting the worker processes (forks) and handing them the configs

    @property
    def finished(self) -> int:
        return len(self.rows)

    def to_dict(self) -> dict[str, Any]:
        return {"schema": "tritonscope.sweep", "schema_version": 1, "kernel": self.kernel, "target": self.target,
                "requested": self.requested, "finished": self.finished, "interrupted": self.interrupted,
                "seconds": round(self.seconds, 3), "workers": self.workers, "from_autotune": self.from_autotune,
                "options": dict(self.options), "rows": [asdict(r) for r in self.rows]}
