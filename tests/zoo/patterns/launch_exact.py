"""Launch patterns that only Triton's own launch path binds right. Written for tritonscope's tests, not copied.

- ``rows_heuristic_warps``: ``@triton.heuristics`` sets a launch option (``num_warps``) as well as a
  constexpr, as cross-entropy kernels do (``"num_warps": lambda args: 8 if ... else 4``).
- ``rope_own_key``: a heuristic reads the value the launch passed under its own name
  (``"BACKWARD_PASS": lambda args: bool(args["BACKWARD_PASS"])``), as a fine-tuning library's RoPE kernel does.
- ``copy_keyword_pruned``: ``prune_configs_by``'s ``early_config_prune(configs, nargs, **kwargs)`` reads the
  arguments the launch passed by keyword (``kwargs["n_elements"]``), as libraries that launch by keyword write it.
- ``copy_positional_pruned``: the same, reading ``nargs`` only, as a positional launch fills it.
- ``gemm_default_stages``: a GEMM a launch compiles with the backend's default ``num_stages`` (none passed).
"""
import triton
import triton.language as tl


@triton.heuristics({
    "BLOCK": lambda args: triton.next_power_of_2(args["n_cols"]),
    "num_warps": lambda args: 8 if args["n_cols"] >= 2048 else 4,
})
@triton.jit
def rows_heuristic_warps(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


@triton.heuristics({"BACKWARD_PASS": lambda args: bool(args["BACKWARD_PASS"])})
@triton.jit
def rope_own_key(q_ptr, cos_ptr, sin_ptr, seq_len, HEAD_DIM: tl.constexpr, BACKWARD_PASS: tl.constexpr):
    row = tl.program_id(0)
    half = tl.arange(0, HEAD_DIM // 2)
    pos = row % seq_len
    cos = tl.load(cos_ptr + pos * HEAD_DIM // 2 + half)
    sin = tl.load(sin_ptr + pos * HEAD_DIM // 2 + half)
    if BACKWARD_PASS:
        sin = -sin
    q1 = tl.load(q_ptr + row * HEAD_DIM + half)
    q2 = tl.load(q_ptr + row * HEAD_DIM + HEAD_DIM // 2 + half)
    tl.store(q_ptr + row * HEAD_DIM + half, q1 * cos - q2 * sin)
    tl.store(q_ptr + row * HEAD_DIM + HEAD_DIM // 2 + half, q2 * cos + q1 * sin)


def _keyword_prune(configs, nargs, **kwargs):
    n = kwargs["n_elements"]  # a keyword launch passes every argument here, nothing in nargs
    return [c for c in configs if c.kwargs["BLOCK"] <= n]


def _positional_prune(configs, nargs, **kwargs):
    n = nargs["n_elements"]  # a positional launch fills nargs
    return [c for c in configs if c.kwargs["BLOCK"] * 4 <= n]


_COPY_CONFIGS = [triton.Config({"BLOCK": 4096}, num_warps=8), triton.Config({"BLOCK": 1024}, num_warps=4),
                 triton.Config({"BLOCK": 256}, num_warps=2)]


@triton.autotune(configs=_COPY_CONFIGS, key=["n_elements"], prune_configs_by={"early_config_prune": _keyword_prune})
@triton.jit
def copy_keyword_pruned(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n_elements), mask=offs < n_elements)


@triton.autotune(configs=_COPY_CONFIGS, key=["n_elements"],
                 prune_configs_by={"early_config_prune": _positional_prune})
@triton.jit
def copy_positional_pruned(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n_elements), mask=offs < n_elements)


@triton.jit
def gemm_default_stages(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                        BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))
