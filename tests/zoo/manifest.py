"""The zoo: real Triton kernels, unedited, each with the command a user would type.

Each entry is plain data (no tritonscope import) that the tests and the README read:
  name      short id
  package   where the kernel comes from ("liger-kernel 0.8.5", "fla-core 0.6.0",
            or "tritonscope tests" for the pattern kernels under tests/zoo/patterns/)
  target    what follows `tritonscope compile`: an installed module path or a file path
  args      the words after the target, as one shell string: the arguments the library's
            own launch passes for a realistic problem (batch 4 x 1024 tokens, hidden 4096,
            bf16 unless noted), strides as the library computes them for contiguous tensors,
            BLOCK sizes as its host code computes them, H100 values where host code asks the
            device (132 SMs)
  arch_args optional {arch: args}: the whole args string for an arch whose launch differs
            (the library's host code picks other num_warps there)
  patterns  which launch/binding patterns the kernel exercises
  launch    file:line of the library's kernel[grid](...) call the arguments were copied from
  expect    {arch: "ok" | {"exit": N, "why": "..."}}; an arch not listed is "ok"

Run one as:  tritonscope compile TARGET ARGS --arch sm_90a --stage none
"""

ARCHES = ("sm_90a", "sm_100a", "gfx942")

LIGER = "liger-kernel 0.8.5"
FLA = "fla-core 0.6.0"
OURS = "tritonscope tests"

_CE_ARGS = ("--arg X_ptr=bf16[4096,128256] --arg X_stride=128256 --arg Y_ptr=i64[4096] --arg Y_stride=1 "
                "--arg weight_ptr=none --arg loss_ptr=bf16[4096] --arg z_loss_ptr=none --arg loss_stride=1 "
                "--arg token_accuracy_ptr=none --arg token_accuracy_stride=0 --arg predicted_tokens_ptr=none "
                "--arg predicted_tokens_stride=0 --arg n_cols=128256 --arg n_non_ignore=4096 "
                "--arg sum_non_ignore_weight=4096 --arg weight_sum=0.0 --arg ignore_index=-100 "
                "-c lse_square_scale=0.0 -c label_smoothing=0.0 -c reduction=mean --arg softcap=none "
                "-c RETURN_Z_LOSS=false -c RETURN_TOKEN_ACCURACY=false -c RETURN_PREDICTED_TOKENS=false "
                "-c BLOCK_SIZE=32768 -c HAS_WEIGHT=false -c HAS_SOFTCAPPING=false -c HAS_GRADIENTS=true -w 32")

# tests/zoo/patterns/unsigned_fnuz.py's launch: bf16 activations, an fp8 weight ({fp8}), a u32 lock per 128x128 tile
_FP8_GEMM_ARGS = ("--arg x_ptr=bf16[4096,4096] --arg w_ptr={fp8}[4096,4096] --arg w_scale_ptr=fp32[4096] "
                  "--arg out_ptr=bf16[4096,4096] --arg locks_ptr=u32[1024] --arg M=4096 --arg N=4096 --arg K=4096 "
                  "--arg stride_xm=4096 --arg stride_xk=1 --arg stride_wk=4096 --arg stride_wn=1 "
                  "--arg stride_om=4096 --arg stride_on=1 -c BLOCK_M=128 -c BLOCK_N=128 -c BLOCK_K=64 -c SPLIT_K=4 "
                  "-w 8 -s 2")


ZOO = [
    # ---------------------------------------------------------------- liger-kernel
    {
        "name": "liger_rms_norm_fwd",
        "package": LIGER,
        "target": "liger_kernel.ops.rms_norm:_rms_norm_forward_kernel",
        "args": "--arg Y_ptr=bf16[4096,4096] --arg Y_row_stride=4096 --arg X_ptr=bf16[4096,4096] "
                "--arg X_row_stride=4096 --arg W_ptr=bf16[4096] --arg W_row_stride=1 "
                "--arg RSTD_ptr=fp32[4096] --arg RSTD_row_stride=1 --arg n_cols=4096 --arg eps=1e-6 "
                "--arg offset=0.0 -c casting_mode=0 -c elementwise_affine=true -c BLOCK_SIZE=4096 -w 8",
        "patterns": ["constexpr-positional", "float-scalars", "module-path"],
        "launch": "liger_kernel/ops/rms_norm.py:483",
        "expect": {},
    },
    {
        "name": "liger_rms_norm_bwd",
        "package": LIGER,
        "target": "liger_kernel.ops.rms_norm:_rms_norm_backward_kernel",
        "args": "--arg dY_ptr=bf16[4096,4096] --arg dY_row_stride=4096 --arg dX_ptr=bf16[4096,4096] "
                "--arg dX_row_stride=4096 --arg X_ptr=bf16[4096,4096] --arg X_row_stride=4096 "
                "-c X_dtype=tl.bfloat16 --arg W_ptr=bf16[4096] --arg W_row_stride=1 "
                "--arg RSTD_ptr=fp32[4096] --arg RSTD_row_stride=1 --arg dW_ptr=fp32[132,4096] "
                "--arg dW_row_stride=4096 --arg n_rows=4096 --arg n_cols=4096 --arg offset=0.0 "
                "--arg rows_per_program=32 -c casting_mode=0 -c elementwise_affine=true "
                "-c BLOCK_SIZE=4096 -c COMPUTE_DW=true -w 8",
        "patterns": ["dtype-constexpr", "interleaved-constexpr", "constexpr-default"],
        "launch": "liger_kernel/ops/rms_norm.py:567",
        "expect": {},
    },
    {
        "name": "liger_block_rms_norm_fwd",
        "package": LIGER,
        "target": "liger_kernel.ops.rms_norm:_block_rms_norm_forward_kernel",
        "args": "--arg Y_ptr=bf16[131072,128] --arg Y_row_stride=128 --arg X_ptr=bf16[131072,128] "
                "--arg X_row_stride=128 --arg W_ptr=bf16[128] --arg W_row_stride=1 "
                "--arg RSTD_ptr=fp32[131072] --arg RSTD_row_stride=1 --arg n_rows=131072 --arg n_cols=128 "
                "--arg eps=1e-6 --arg offset=0.0 -c casting_mode=0 -c elementwise_affine=true "
                "-c BLOCK_SIZE=128 -c BLOCK_ROW=16 -w 4",
        "patterns": ["constexpr-positional", "2d-block"],
        "launch": "liger_kernel/ops/rms_norm.py:504",
        "expect": {},
    },
    {
        "name": "liger_layer_norm_fwd",
        "package": LIGER,
        "target": "liger_kernel.ops.layer_norm:_layer_norm_forward_kernel",
        "args": "--arg Y_ptr=bf16[4096,4096] --arg Y_row_stride=4096 --arg X_ptr=bf16[4096,4096] "
                "--arg X_row_stride=4096 --arg W_ptr=bf16[4096] --arg W_row_stride=1 --arg B_ptr=bf16[4096] "
                "--arg B_row_stride=1 --arg Mean_ptr=fp32[4096] --arg Mean_row_stride=1 "
                "--arg RSTD_ptr=fp32[4096] --arg RSTD_row_stride=1 --arg n_cols=4096 --arg eps=1e-5 "
                "-c BLOCK_SIZE=4096 -w 8",
        "patterns": ["plain"],
        "launch": "liger_kernel/ops/layer_norm.py:215",
        "expect": {},
    },
    {
        "name": "liger_layer_norm_bwd",
        "package": LIGER,
        "target": "liger_kernel.ops.layer_norm:_layer_norm_backward_kernel",
        "args": "--arg X_ptr=bf16[4096,4096] --arg stride_x=4096 --arg W_ptr=bf16[4096] "
                "--arg Mean_ptr=fp32[4096] --arg stride_mean=1 --arg RSTD_ptr=fp32[4096] --arg stride_rstd=1 "
                "--arg DX_ptr=bf16[4096,4096] --arg stride_dx=4096 --arg DW_ptr=fp32[132,4096] "
                "--arg stride_dw=4096 --arg DB_ptr=fp32[132,4096] --arg stride_db=4096 "
                "--arg DY_ptr=bf16[4096,4096] --arg stride_dy=4096 --arg n_rows=4096 --arg n_cols=4096 "
                "-c rows_per_program=32 -c BLOCK_SIZE=4096 -c COMPUTE_DW=true -c COMPUTE_DB=true -w 8",
        "patterns": ["constexpr-default", "device-query-in-host"],
        "launch": "liger_kernel/ops/layer_norm.py:290",
        "expect": {},
    },
    {
        "name": "liger_swiglu_fwd",
        "package": LIGER,
        "target": "liger_kernel.ops.swiglu:_swiglu_forward_kernel",
        "args": "--arg a_ptr=bf16[4096,14336] --arg b_ptr=bf16[4096,14336] --arg c_ptr=bf16[4096,14336] "
                "--arg stride=14336 --arg gate_multiplier=1.0 -c n_cols=14336 -c BLOCK_SIZE=16384 -w 16",
        "patterns": ["jit-helper", "large-block"],
        "launch": "liger_kernel/ops/swiglu.py:188",
        "expect": {},
    },
    {
        "name": "liger_swiglu_fused_gate_up_fwd",
        "package": LIGER,
        "target": "liger_kernel.ops.swiglu:_swiglu_fused_gate_up_forward_kernel",
        "args": "--arg y_ptr=bf16[4096,28672] --arg c_ptr=bf16[4096,14336] --arg in_stride=28672 "
                "--arg out_stride=14336 -c ffn_size=14336 -c BLOCK_SIZE=16384 -w 16",
        "patterns": ["large-block"],
        "launch": "liger_kernel/ops/swiglu.py:377",
        "expect": {},
    },
    {
        "name": "liger_geglu_fwd",
        "package": LIGER,
        "target": "liger_kernel.ops.geglu:_geglu_tanh_forward_kernel",
        "args": "--arg a=bf16[4096,16384] --arg b=bf16[4096,16384] --arg c=bf16[4096,16384] "
                "--arg stride=16384 -c n_cols=16384 -c BLOCK_SIZE=16384 -w 16",
        "patterns": ["libdevice", "large-block"],
        "launch": "liger_kernel/ops/geglu.py:99",
        "expect": {},
    },
    {
        "name": "liger_cross_entropy",
        "package": LIGER,
        "target": "liger_kernel.ops.cross_entropy:liger_cross_entropy_kernel",
        "args": _CE_ARGS,
        # liger's host code picks ce_num_warps: 16 when is_hip(), 8 for bf16 on Blackwell,
        # 32 on Hopper (cross_entropy.py:420-424); the rest of the launch is the same.
        "arch_args": {"gfx942": _CE_ARGS.replace("-w 32", "-w 16"),
                      "sm_100a": _CE_ARGS.replace("-w 32", "-w 8")},
        "patterns": ["string-constexpr", "none-args", "interleaved-constexpr", "float-constexpr",
                     "arch-dependent-launch"],
        "launch": "liger_kernel/ops/cross_entropy.py:427",
        "expect": {},
    },
    {
        "name": "liger_rope",
        "package": LIGER,
        "target": "liger_kernel.ops.rope:_triton_rope",
        "args": "--arg q_ptr=bf16[4,1024,32,128] --arg q_row_stride=4096 --arg k_ptr=bf16[4,1024,8,128] "
                "--arg k_row_stride=1024 --arg cos=bf16[1,1024,128] --arg cos_row_stride=128 "
                "--arg sin=bf16[1,1024,128] --arg sin_row_stride=128 --arg sl=1024 -c bs=4 -c cos_bs=1 "
                "-c n_qh=32 -c n_kh=8 -c hd=128 -c pad_n_qh=32 -c pad_n_kh=8 -c pad_hd=128 -c pad_rd=128 "
                "-c rd=128 -c BLOCK_SIZE=32 -c BACKWARD_PASS=false",
        "patterns": ["constexpr-positional", "constexpr-default"],
        "launch": "liger_kernel/ops/rope.py:175",
        "expect": {},
    },
    {
        "name": "liger_qwen2vl_mrope",
        "package": LIGER,
        "target": "liger_kernel.ops.qwen2vl_mrope:_triton_qwen2vl_mrope",
        "args": "--arg q_ptr=bf16[4,1024,28,128] --arg k_ptr=bf16[4,1024,4,128] --arg cos=bf16[3,4,1024,128] "
                "--arg sin=bf16[3,4,1024,128] --arg sl=1024 -c bs=4 -c n_qh=28 -c n_kh=4 -c hd=128 "
                "-c pad_n_qh=32 -c pad_n_kh=4 -c pad_hd=128 -c mrope_section_t=16 -c mrope_section_h=24 "
                "-c BLOCK_SIZE=32 -c BACKWARD_PASS=false",
        "patterns": ["constexpr-positional", "constexpr-default"],
        "launch": "liger_kernel/ops/qwen2vl_mrope.py:131",
        "expect": {},
    },
    {
        "name": "liger_kldiv_fwd",
        "package": LIGER,
        "target": "liger_kernel.ops.kl_div:_kldiv_kernel_forward",
        "args": "--arg y_ptr=fp32[1024,128256] --arg y_stride=128256 --arg gt_ptr=fp32[1024,128256] "
                "--arg gt_stride=128256 --arg loss_ptr=fp32[1024] --arg loss_stride=1 --arg n_cols=128256 "
                "--arg eps=1e-10 -c BLOCK_SIZE=16384 -c log_target=false -c reduction=3 -w 16",
        "patterns": ["constexpr-default", "keyword-launch"],
        "launch": "liger_kernel/ops/kl_div.py:141",
        "expect": {},
    },
    {
        "name": "liger_jsd",
        "package": LIGER,
        "target": "liger_kernel.ops.jsd:_jsd_kernel",
        "args": "--arg X_ptr=fp32[1024,128256] --arg X_stride=128256 --arg Y_ptr=fp32[1024,128256] "
                "--arg Y_stride=128256 --arg loss_ptr=fp32[1024,128256] --arg loss_stride=128256 "
                "--arg dX_ptr=fp32[1024,128256] --arg dX_stride=128256 --arg label_ptr=i64[1024] "
                "-c beta=0.5 --arg n_non_ignore=1024 -c ignore_index=-100 --arg n_cols=128256 "
                "-c BLOCK_SIZE=4096 -c HAS_LABEL=true",
        "patterns": ["interleaved-constexpr", "float-constexpr", "annotated-int"],
        "launch": "liger_kernel/ops/backends/_triton/jsd.py:135",
        "expect": {},
    },
    {
        "name": "liger_group_norm_fwd",
        "package": LIGER,
        "target": "liger_kernel.ops.group_norm:_group_norm_forward_kernel",
        "args": "--arg Y_ptr=fp32[4,32,16384] --arg Y_row_stride=524288 --arg Y_col_stride=16384 "
                "--arg X_ptr=fp32[4,32,16384] --arg X_row_stride=524288 --arg X_col_stride=16384 "
                "--arg Mean_ptr=fp32[4,32] --arg Mean_row_stride=32 --arg Mean_col_stride=1 "
                "--arg RSTD_ptr=fp32[4,32] --arg RSTD_row_stride=32 --arg RSTD_col_stride=1 "
                "--arg W_ptr=fp32[512] --arg B_ptr=fp32[512] --arg hidden_size=16384 "
                "--arg channels_per_group=16 --arg eps=1e-6 -c BLOCK_SIZE=16384",
        "patterns": ["2d-grid", "large-block"],
        "launch": "liger_kernel/ops/group_norm.py:218",
        "expect": {},
    },
    {
        "name": "liger_group_norm_bwd",
        "package": LIGER,
        "target": "liger_kernel.ops.group_norm:_group_norm_backward_kernel",
        "args": "--arg X_ptr=bf16[4,32,16384] --arg X_row_stride=524288 --arg X_col_stride=16384 "
                "--arg W_ptr=bf16[512] --arg Mean_ptr=bf16[4,32] --arg Mean_ptr_row_stride=32 "
                "--arg Mean_ptr_col_stride=1 --arg RSTD_ptr=bf16[4,32] --arg DX_ptr=bf16[4,32,16384] "
                "--arg DW_ptr=bf16[512] --arg DB_ptr=bf16[512] --arg UPSTREAM_ptr=bf16[4,32,16384] "
                "-c hidden_size=1024 -c channels_per_group=16 -c BLOCK_SIZE=1024 -c dtype=tl.bfloat16",
        "patterns": ["dtype-constexpr"],
        "launch": "liger_kernel/ops/group_norm.py:260",
        "expect": {},
    },
    {
        "name": "liger_dyt_fwd",
        "package": LIGER,
        "target": "liger_kernel.ops.dyt:_dyt_fwd_kernel",
        "args": "--arg X=bf16[4096,4096] --arg Y=bf16[4096,4096] --arg Alpha=bf16[1] --arg Gamma=bf16[4096] "
                "--arg Beta=bf16[4096] -c HAVE_BETA=true -c N=4096",
        "patterns": ["autotune", "libdevice"],
        "launch": "liger_kernel/ops/dyt.py:111",
        "expect": {},
    },
    {
        "name": "liger_dyt_bwd",
        "package": LIGER,
        "target": "liger_kernel.ops.dyt:_dyt_bwd_kernel",
        "args": "--arg DY=bf16[4096,4096] --arg DX=bf16[4096,4096] --arg DA=fp32[132,8] "
                "--arg DG=fp32[132,4096] --arg DB=fp32[132,4096] --arg X=bf16[4096,4096] --arg Alpha=bf16[1] "
                "--arg Gamma=bf16[4096] -c HAVE_BETA=true --arg M=4096 -c N=4096",
        "patterns": ["autotune", "interleaved-constexpr", "autotune-reset-to-zero"],
        "launch": "liger_kernel/ops/dyt.py:143",
        "expect": {},
    },
    {
        "name": "liger_softmax_fwd",
        "package": LIGER,
        "target": "liger_kernel.ops.softmax:_softmax_single_block_forward_kernel",
        "args": "--arg Y_ptr=bf16[4096,4096] --arg Y_row_stride=4096 --arg X_ptr=bf16[4096,4096] "
                "--arg X_row_stride=4096 --arg n_cols=4096 -c BLOCK_SIZE=4096 -w 8",
        "patterns": ["plain"],
        "launch": "liger_kernel/ops/softmax.py:125",
        "expect": {},
    },
    {
        "name": "liger_sparsemax_fwd",
        "package": LIGER,
        "target": "liger_kernel.ops.sparsemax:_sparsemax_forward_kernel",
        "args": "--arg x_ptr=bf16[4096,4096] --arg x_stride_row=4096 --arg sorted_x_ptr=fp32[4096,4096] "
                "--arg sorted_x_stride_row=4096 --arg o_ptr=bf16[4096,4096] --arg o_stride_row=4096 "
                "--arg n_cols=4096 -c BLOCK_SIZE=4096 -w 8",
        "patterns": ["launch-option-constexpr"],
        "launch": "liger_kernel/ops/sparsemax.py:120",
        "expect": {},
    },
    {
        "name": "liger_tvd",
        "package": LIGER,
        "target": "liger_kernel.ops.tvd:_tv_distance_kernel",
        "args": "--arg p_ptr=fp32[1024,128256] --arg p_stride=128256 --arg q_ptr=fp32[1024,128256] "
                "--arg q_stride=128256 --arg loss_ptr=fp32[1024] --arg loss_stride=1 "
                "--arg grads_ptr=fp32[1024,128256] --arg grads_stride=128256 --arg label_ptr=i64[1024] "
                "-c ignore_index=-100 --arg n_cols=128256 --arg scale=0.0009765625 -c BLOCK_SIZE=16384 "
                "-c HAS_LABEL=true -c reduction=3 -w 16",
        "patterns": ["interleaved-constexpr"],
        "launch": "liger_kernel/ops/tvd.py:136",
        "expect": {},
    },
    {
        "name": "liger_fused_add_rms_norm_fwd",
        "package": LIGER,
        "target": "liger_kernel.ops.fused_add_rms_norm:_fused_add_rms_norm_forward_kernel",
        "args": "--arg Y_ptr=bf16[4096,4096] --arg Y_row_stride=4096 --arg S_ptr=bf16[4096,4096] "
                "--arg S_row_stride=4096 --arg X_ptr=bf16[4096,4096] --arg X_row_stride=4096 "
                "--arg R_ptr=bf16[4096,4096] --arg R_row_stride=4096 --arg W_ptr=bf16[4096] --arg W_row_stride=1 "
                "--arg RSTD_ptr=fp32[4096] --arg RSTD_row_stride=1 --arg n_cols=4096 --arg eps=1e-6 "
                "--arg offset=0.0 -c casting_mode=0 -c BLOCK_SIZE=4096 -w 8 -s 2",
        "patterns": ["constexpr-positional", "num-stages"],
        "launch": "liger_kernel/ops/fused_add_rms_norm.py:263",
        "expect": {},
    },
    {
        "name": "liger_poly_norm_fwd",
        "package": LIGER,
        "target": "liger_kernel.ops.poly_norm:_poly_norm_forward_kernel",
        "args": "--arg Y_ptr=bf16[4096,4096] --arg Y_row_stride=4096 --arg X_ptr=bf16[4096,4096] "
                "--arg X_row_stride=4096 --arg W_ptr=fp32[3] --arg B_ptr=fp32[1] --arg RSTD_ptr=fp32[4096,3] "
                "--arg RSTD_row_stride=3 --arg n_cols=4096 --arg eps=1e-6 -c BLOCK_SIZE=4096 -w 8",
        "patterns": ["plain"],
        "launch": "liger_kernel/ops/poly_norm.py:242",
        "expect": {},
    },
    # ---------------------------------------------------------------- fla-core
    {
        "name": "fla_chunk_local_cumsum_scalar",
        "package": FLA,
        "target": "fla.ops.utils.cumsum:chunk_local_cumsum_scalar_kernel",
        "args": "--arg s=fp32[4,2048,16] --arg o=fp32[4,2048,16] --arg scale=none --arg cu_seqlens=none "
                "--arg chunk_indices=none --arg T=2048 -c B=4 -c H=16 -c BT=64 -c REVERSE=false "
                "-c USE_GRAPH=false",
        "patterns": ["autotune-subclass", "heuristics", "do-not-specialize", "none-args",
                     "constexpr-default", "import-time-device-query"],
        "launch": "fla/ops/utils/cumsum.py:280",
        "expect": {},
    },
    {
        "name": "fla_chunk_local_cumsum_vector",
        "package": FLA,
        "target": "fla.ops.utils.cumsum:chunk_local_cumsum_vector_kernel",
        "args": "--arg s=fp32[4,2048,16,128] --arg o=fp32[4,2048,16,128] --arg scale=none "
                "--arg cu_seqlens=none --arg chunk_indices=none --arg T=2048 -c B=4 -c H=16 -c S=128 "
                "-c BT=64 -c REVERSE=false -c USE_GRAPH=false",
        "patterns": ["autotune-subclass", "heuristics", "do-not-specialize", "import-time-device-query"],
        "launch": "fla/ops/utils/cumsum.py:330",
        "expect": {},
    },
    {
        "name": "fla_solve_tril_64",
        "package": FLA,
        "target": "fla.ops.utils.solve_tril:merge_16x16_to_64x64_inverse_kernel",
        "args": "--arg A=fp32[4,2048,16,64] --arg Ai=fp32[4,2048,16,64] --arg cu_seqlens=none "
                "--arg chunk_indices=none --arg T=2048 -c H=16 -c BT=64 -c USE_TMA=false",
        "patterns": ["autotune", "heuristics", "string-constexpr-from-config", "do-not-specialize",
                     "import-time-device-query"],
        "launch": "fla/ops/utils/solve_tril.py:399",
        "expect": {},
    },
    {
        "name": "fla_l2norm_fwd",
        "package": FLA,
        "target": "fla.modules.norm.l2norm:l2norm_fwd_kernel",
        "args": "--arg x=bf16[131072,128] --arg y=bf16[131072,128] --arg rstd=fp32[131072] --arg eps=1e-6 "
                "--arg T=131072 -c D=128 -c BD=128 -c NB=2",
        "patterns": ["autotune-subclass", "do-not-specialize", "import-time-device-query"],
        "launch": "fla/modules/norm/l2norm.py:136",
        "expect": {},
    },
    {
        "name": "fla_chunk_scaled_dot_kkt",
        "package": FLA,
        "target": "fla.ops.common.chunk_scaled_dot_kkt:chunk_scaled_dot_kkt_fwd_kernel",
        "args": "--arg k=bf16[4,2048,16,128] --arg g=fp32[4,2048,16] --arg beta=bf16[4,2048,16] "
                "--arg A=fp32[4,2048,16,64] --arg cu_seqlens=none --arg chunk_indices=none --arg T=2048 "
                "-c H=16 -c HV=16 -c K=128 -c BT=64",
        "patterns": ["autotune", "heuristics", "do-not-specialize", "dot"],
        "launch": "fla/ops/common/chunk_scaled_dot_kkt.py:122",
        "expect": {},
    },
    {
        "name": "fla_fused_recurrent_gla_fwd",
        "package": FLA,
        "target": "fla.ops.common.fused_recurrent:fused_recurrent_fwd_kernel",
        "args": "--arg q=bf16[4,2048,16,128] --arg k=bf16[4,2048,16,128] --arg v=bf16[4,2048,16,128] "
                "--arg g=none --arg g_gamma=none --arg gk=fp32[4,2048,16,128] --arg gv=none "
                "--arg o=fp32[2,4,2048,16,128] --arg h0=none --arg ht=fp32[4,16,128,128] --arg cu_seqlens=none "
                "--arg scale=0.08838834764831845 --arg T=2048 --arg B=4 -c H=16 -c K=128 -c V=128 -c BK=64 "
                "-c BV=64 -c USE_G=false -c USE_G_GAMMA=false -c USE_GK=true -c USE_GV=false -c REVERSE=false "
                "-c STATE_V_FIRST=false",
        "patterns": ["autotune", "heuristics", "do-not-specialize", "none-args", "keyword-launch"],
        "launch": "fla/ops/common/fused_recurrent.py:447",
        "expect": {},
    },
    {
        "name": "fla_fused_recurrent_simple_gla_fwd",
        "package": FLA,
        "target": "fla.ops.common.fused_recurrent:fused_recurrent_fwd_kernel",
        "args": "--arg q=bf16[4,2048,16,128] --arg k=bf16[4,2048,16,128] --arg v=bf16[4,2048,16,128] "
                "--arg g=fp32[4,2048,16] --arg g_gamma=none --arg gk=none --arg gv=none "
                "--arg o=fp32[2,4,2048,16,128] --arg h0=fp32[4,16,128,128] --arg ht=fp32[4,16,128,128] "
                "--arg cu_seqlens=none --arg scale=0.08838834764831845 --arg T=2048 --arg B=4 -c H=16 -c K=128 "
                "-c V=128 -c BK=64 -c BV=64 -c USE_G=true -c USE_G_GAMMA=false -c USE_GK=false -c USE_GV=false "
                "-c REVERSE=false -c STATE_V_FIRST=false",
        "patterns": ["autotune", "heuristics", "do-not-specialize", "none-args"],
        "launch": "fla/ops/common/fused_recurrent.py:447",
        "expect": {},
    },
    # ---------------------------------------------------------------- written for this repo
    {
        "name": "pattern_interleaved",
        "package": OURS,
        "target": "tests/zoo/patterns/interleaved.py:moe_like_gemm",
        "args": "--arg a_ptr=bf16[4096,4096] --arg b_ptr=bf16[4096,14336] --arg c_ptr=bf16[8192,14336] "
                "--arg sorted_ids_ptr=i32[8192] -c N=14336 -c K=4096 --arg EM=8192 --arg num_valid_tokens=8192 "
                "--arg stride_am=4096 --arg stride_be=58720256 --arg stride_bk=14336 --arg stride_cm=14336 "
                "-c BLOCK_M=64 -c BLOCK_N=128 -c BLOCK_K=64 -w 4 -s 3",
        "patterns": ["interleaved-constexpr", "runtime-default-after-constexpr"],
        "launch": "tests/zoo/patterns/interleaved.py (vLLM fused_moe_kernel_gptq_awq, SGLang _fwd_kernel)",
        "expect": {},
    },
    {
        "name": "pattern_dtype_constexpr",
        "package": OURS,
        "target": "tests/zoo/patterns/dtype_constexpr.py:matmul_compute_type",
        "args": "--arg a_ptr=bf16[4096,4096] --arg b_ptr=bf16[4096,4096] --arg c_ptr=bf16[4096,4096] "
                "--arg M=4096 --arg N=4096 --arg K=4096 --arg stride_am=4096 --arg stride_ak=1 "
                "--arg stride_bk=4096 --arg stride_bn=1 --arg stride_cm=4096 --arg stride_cn=1 "
                "-c BLOCK_M=128 -c BLOCK_N=128 -c BLOCK_K=64 -c compute_type=tl.bfloat16 -w 8 -s 3",
        "patterns": ["dtype-constexpr"],
        "launch": "tests/zoo/patterns/dtype_constexpr.py (vLLM fused_moe_kernel compute_type)",
        "expect": {},
    },
    {
        "name": "pattern_string_constexpr",
        "package": OURS,
        "target": "tests/zoo/patterns/string_constexpr.py:act_reduce",
        "args": "--arg x_ptr=bf16[4096,4096] --arg out_ptr=bf16[4096,4096] --arg loss_ptr=fp32[4096] "
                "--arg n_cols=4096 --arg stride=4096 -c ACTIVATION=gelu -c reduction=mean -c BLOCK=4096 -w 8",
        "patterns": ["string-constexpr"],
        "launch": "tests/zoo/patterns/string_constexpr.py (Triton tutorial 03 ACTIVATION, Liger reduction)",
        "expect": {},
    },
    {
        "name": "pattern_string_constexpr_empty",
        "package": OURS,
        "target": "tests/zoo/patterns/string_constexpr.py:act_reduce",
        "args": "--arg x_ptr=bf16[4096,4096] --arg out_ptr=bf16[4096,4096] --arg loss_ptr=fp32[4096] "
                "--arg n_cols=4096 --arg stride=4096 -c 'ACTIVATION=\"\"' -c reduction=sum -c BLOCK=4096 -w 8",
        "patterns": ["string-constexpr", "empty-string-constexpr"],
        "launch": "tests/zoo/patterns/string_constexpr.py (Triton tutorial 03 ACTIVATION=\"\")",
        "expect": {},
    },
    {
        "name": "pattern_import_time_driver",
        "package": OURS,
        "target": "tests/zoo/patterns/import_time_driver.py:persistent_matmul",
        "args": "--arg a_ptr=fp16[4096,4096] --arg b_ptr=fp16[4096,4096] --arg c_ptr=fp16[4096,4096] "
                "--arg M=4096 --arg N=4096 --arg K=4096 --arg stride_am=4096 --arg stride_ak=1 "
                "--arg stride_bk=4096 --arg stride_bn=1 --arg stride_cm=4096 --arg stride_cn=1",
        "patterns": ["import-time-device-query", "autotune"],
        "launch": "tests/zoo/patterns/import_time_driver.py (Triton tutorials 03 and 09)",
        "expect": {},
    },
    {
        "name": "pattern_host_descriptor",
        "package": OURS,
        "target": "tests/zoo/patterns/host_descriptor.py:descriptor_persistent_matmul",
        "args": "--arg 'a_desc=desc(fp16[4096,4096],[128,64])' --arg 'b_desc=desc(fp16[4096,4096],[256,64])' "
                "--arg 'c_desc=desc(fp16[4096,4096],[128,256])' --arg M=4096 --arg N=4096 --arg K=4096 "
                "-c BLOCK_M=128 -c BLOCK_N=256 -c BLOCK_K=64 -c NUM_PROGRAMS=132 -w 8 -s 3",
        "patterns": ["host-tensor-descriptor"],
        "launch": "tests/zoo/patterns/host_descriptor.py (Triton tutorial 09 descriptor persistent)",
        "expect": {},
    },
    {
        "name": "pattern_host_descriptor_tensordesc",
        "package": OURS,
        "target": "tests/zoo/patterns/host_descriptor.py:descriptor_persistent_matmul",
        "args": "--arg 'a_desc=tensordesc<fp16[128,64]>' --arg 'b_desc=tensordesc<fp16[256,64]>' "
                "--arg 'c_desc=tensordesc<fp16[128,256]>' --arg M=4096 --arg N=4096 --arg K=4096 "
                "-c BLOCK_M=128 -c BLOCK_N=256 -c BLOCK_K=64 -c NUM_PROGRAMS=132 -w 8 -s 3",
        "patterns": ["host-tensor-descriptor", "triton-signature-spelling"],
        "launch": "tests/zoo/patterns/host_descriptor.py (Triton tutorial 09 descriptor persistent)",
        "expect": {},
    },
    {
        "name": "pattern_launch_option_constexpr",
        "package": OURS,
        "target": "tests/zoo/patterns/launch_option_constexpr.py:softmax_rows",
        "args": "--arg out_ptr=fp16[4096,4096] --arg in_ptr=fp16[4096,4096] --arg in_stride=4096 "
                "--arg out_stride=4096 --arg n_rows=4096 --arg n_cols=4096 -c BLOCK=4096 -w 8 -s 4",
        "patterns": ["launch-option-constexpr"],
        "launch": "tests/zoo/patterns/launch_option_constexpr.py (Triton tutorial 02 fused softmax)",
        "expect": {},
    },
    {
        "name": "pattern_sibling_import",
        "package": OURS,
        "target": "tests/zoo/patterns/sibling_import.py:swiglu_rows",
        "args": "--arg gate_ptr=bf16[4096,14336] --arg up_ptr=bf16[4096,14336] --arg out_ptr=bf16[4096,14336] "
                "--arg stride=14336 --arg n_cols=14336 -c BLOCK=16384 -w 16",
        "patterns": ["sibling-import"],
        "launch": "tests/zoo/patterns/sibling_import.py",
        "expect": {},
    },
    {
        "name": "pattern_amd_options_config",
        "package": OURS,
        "target": "tests/zoo/patterns/amd_options.py:grouped_matmul",
        "args": "--arg a_ptr=fp16[4096,4096] --arg b_ptr=fp16[4096,4096] --arg c_ptr=fp16[4096,4096] "
                "--arg M=4096 --arg N=4096 --arg K=4096 --arg stride_am=4096 --arg stride_ak=1 "
                "--arg stride_bk=4096 --arg stride_bn=1 --arg stride_cm=4096 --arg stride_cn=1",
        "patterns": ["autotune", "amd-backend-options", "import-time-device-query"],
        "launch": "tests/zoo/patterns/amd_options.py (the matmul tutorial's per-backend configs)",
        "expect": {},
    },
    {
        "name": "pattern_amd_options_config2",
        "package": OURS,
        "target": "tests/zoo/patterns/amd_options.py:grouped_matmul",
        "args": "--arg a_ptr=fp16[4096,4096] --arg b_ptr=fp16[4096,4096] --arg c_ptr=fp16[4096,4096] "
                "--arg M=4096 --arg N=4096 --arg K=4096 --arg stride_am=4096 --arg stride_ak=1 "
                "--arg stride_bk=4096 --arg stride_bn=1 --arg stride_cm=4096 --arg stride_cn=1 --config 2",
        "patterns": ["autotune", "amd-backend-options", "config-pick"],
        "launch": "tests/zoo/patterns/amd_options.py (the matmul tutorial's per-backend configs, the second)",
        "expect": {},
    },
    {
        "name": "pattern_amd_options_cli",
        "package": OURS,
        "target": "tests/zoo/patterns/dtype_constexpr.py:matmul_compute_type",
        "args": "--arg a_ptr=bf16[4096,4096] --arg b_ptr=bf16[4096,4096] --arg c_ptr=bf16[4096,4096] "
                "--arg M=4096 --arg N=4096 --arg K=4096 --arg stride_am=4096 --arg stride_ak=1 "
                "--arg stride_bk=4096 --arg stride_bn=1 --arg stride_cm=4096 --arg stride_cn=1 "
                "-c BLOCK_M=256 -c BLOCK_N=256 -c BLOCK_K=64 -c compute_type=tl.bfloat16 -w 8 -s 2",
        # the AMD tutorials' launch keywords, on the AMD target (on NVIDIA a launch refuses them: exit 2)
        "arch_args": {"gfx942": "--arg a_ptr=bf16[4096,4096] --arg b_ptr=bf16[4096,4096] --arg c_ptr=bf16[4096,4096] "
                                "--arg M=4096 --arg N=4096 --arg K=4096 --arg stride_am=4096 --arg stride_ak=1 "
                                "--arg stride_bk=4096 --arg stride_bn=1 --arg stride_cm=4096 --arg stride_cn=1 "
                                "-c BLOCK_M=256 -c BLOCK_N=256 -c BLOCK_K=64 -c compute_type=tl.bfloat16 -w 8 -s 2 "
                                "-c waves_per_eu=2 -c matrix_instr_nonkdim=16 -c kpack=2"},
        "patterns": ["amd-backend-options", "dtype-constexpr"],
        "launch": "tests/zoo/patterns/dtype_constexpr.py (AMD tutorial launch keywords)",
        "expect": {},
    },
    {
        "name": "pattern_heuristics",
        "package": OURS,
        "target": "tests/zoo/patterns/heuristics.py:split_k_matmul",
        "args": "--arg a_ptr=fp16[4096,4096] --arg b_ptr=fp16[4096,4096] --arg c_ptr=fp32[4096,4096] "
                "--arg M=4096 --arg N=4096 --arg K=4096 --arg stride_am=4096 --arg stride_ak=1 "
                "--arg stride_bk=4096 --arg stride_bn=1 --arg stride_cm=4096 --arg stride_cn=1 "
                "-c BLOCK_M=128 -c BLOCK_N=128 -c BLOCK_K=32 -c SPLIT_K=4 -w 8 -s 3",
        "patterns": ["heuristics"],
        "launch": "tests/zoo/patterns/heuristics.py (Triton ops/matmul.py EVEN_K)",
        "expect": {},
    },
    {
        "name": "pattern_unsigned_fnuz",
        "package": OURS,
        "target": "tests/zoo/patterns/unsigned_fnuz.py:fp8_weight_split_k_gemm",
        # the fp8 type each platform's launch passes (vLLM's current_platform.fp8_dtype()): e4m3fn on CUDA ...
        "args": _FP8_GEMM_ARGS.format(fp8="fp8e4nv"),
        # ... and the fnuz e4m3 (torch.float8_e4m3fnuz) on MI300X
        "arch_args": {"gfx942": _FP8_GEMM_ARGS.format(fp8="fp8e4b8")},
        "patterns": ["unsigned-tensor", "fnuz-fp8"],
        "launch": "tests/zoo/patterns/unsigned_fnuz.py (split-K locks as torch.uint32, fp8 weights per platform)",
        "expect": {},
    },
    {
        "name": "pattern_fnuz_e5m2",
        "package": OURS,
        "target": "tests/zoo/patterns/unsigned_fnuz.py:fp8_weight_split_k_gemm",
        "args": _FP8_GEMM_ARGS.format(fp8="float8_e5m2fnuz"),
        "patterns": ["unsigned-tensor", "fnuz-fp8", "torch-dtype-spelling"],
        "launch": "tests/zoo/patterns/unsigned_fnuz.py (a ROCm launch's torch.float8_e5m2fnuz weights)",
        "expect": {arch: {"exit": 5, "why": "Triton has the fnuz fp8 types on AMD only (a launch raises the same "
                                             "ValueError)"} for arch in ("sm_90a", "sm_100a")},
    },
    {
        "name": "pattern_torch_version_gate",
        "package": OURS,
        "target": "tests/zoo/patterns/torch_version_gate.py:mx_quantize_fp8",
        "args": "--arg x_ptr=bf16[4096,7168] --arg out_ptr=fp8e4nv[4096,7168] --arg scale_ptr=u8[4096,224] "
                "--arg n_rows=4096 --arg n_cols=7168 --arg stride_x=7168 --arg stride_out=7168 "
                "--arg stride_scale=224 -c BLOCK_COLS=8192 -w 8",
        "patterns": ["torch-version-gate", "import-time-device-query"],
        "launch": "tests/zoo/patterns/torch_version_gate.py (MX quantization defined only on CUDA >= 12.8)",
        "expect": {"gfx942": {"exit": 3, "why": "the kernel is defined only when torch.version.cuda >= 12.8; a "
                                                "ROCm torch has none"}},
    },
    {
        "name": "pattern_raw_stream_import",
        "package": OURS,
        "target": "tests/zoo/patterns/raw_stream_import.py:add_rms_norm",
        "args": "--arg x_ptr=bf16[4096,4096] --arg residual_ptr=bf16[4096,4096] --arg w_ptr=bf16[4096] "
                "--arg stride=4096 --arg n_cols=4096 --arg eps=1e-6 -c BLOCK=4096 -w 8",
        "patterns": ["import-time-raw-stream", "import-time-device-query"],
        "launch": "tests/zoo/patterns/raw_stream_import.py (a stream per device cached at import)",
        "expect": {},
    },
    # ---------------------------------------------------------------- launch-exact patterns
    {
        "name": "pattern_heuristic_num_warps",
        "package": OURS,
        "target": "tests/zoo/patterns/launch_exact.py:rows_heuristic_warps",
        "args": "--arg x_ptr=fp32[4096,4096] --arg y_ptr=fp32[4096,4096] --arg stride=4096 --arg n_cols=4096",
        "patterns": ["heuristics", "heuristic-launch-option"],
        "launch": "tests/zoo/patterns/launch_exact.py (num_warps set by @triton.heuristics, as cross-entropy kernels do)",
        "grid": "4096",
        "expect": {},
    },
    {
        "name": "pattern_heuristic_own_key",
        "package": OURS,
        "target": "tests/zoo/patterns/launch_exact.py:rope_own_key",
        "args": "--arg q_ptr=bf16[4096,128] --arg cos_ptr=bf16[4096,64] --arg sin_ptr=bf16[4096,64] "
                "--arg seq_len=4096 -c HEAD_DIM=128 -c BACKWARD_PASS=false",
        "patterns": ["heuristics", "heuristic-reads-own-key"],
        "launch": "tests/zoo/patterns/launch_exact.py (a RoPE launch passing BACKWARD_PASS=False)",
        "grid": "4096",
        "expect": {},
    },
    {
        "name": "pattern_keyword_pruner",
        "package": OURS,
        "target": "tests/zoo/patterns/launch_exact.py:copy_keyword_pruned",
        "args": "--arg x_ptr=fp32[2000] --arg y_ptr=fp32[2000] --arg n_elements=2000",
        "patterns": ["autotune", "keyword-pruner"],
        "launch": "tests/zoo/patterns/launch_exact.py (a keyword launch; early_config_prune reads kwargs)",
        "grid": "cdiv(n_elements, BLOCK)",
        "expect": {},
    },
    {
        "name": "pattern_positional_pruner",
        "package": OURS,
        "target": "tests/zoo/patterns/launch_exact.py:copy_positional_pruned",
        "args": "--arg x_ptr=fp32[2000] --arg y_ptr=fp32[2000] --arg n_elements=2000",
        "patterns": ["autotune", "positional-pruner"],
        "launch": "tests/zoo/patterns/launch_exact.py (a positional launch; early_config_prune reads nargs)",
        "grid": "cdiv(n_elements, BLOCK)",
        "expect": {},
    },
    {
        "name": "pattern_default_stages",
        "package": OURS,
        "target": "tests/zoo/patterns/launch_exact.py:gemm_default_stages",
        "args": "--arg a_ptr=fp16[4096,4096] --arg b_ptr=fp16[4096,4096] --arg c_ptr=fp16[4096,4096] --arg M=4096 "
                "--arg N=4096 --arg K=4096 -c BLOCK_M=128 -c BLOCK_N=128 -c BLOCK_K=64",
        "patterns": ["backend-default-stages"],
        "launch": "tests/zoo/patterns/launch_exact.py (a launch passing no num_stages: the backend's default)",
        "grid": "cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)",
        "expect": {},
    },
]

from manifest_wider import WIDER  # noqa: E402  (the wider zoo: seven more projects, same format)

ZOO += WIDER


def args_for(entry, arch):
    """The argument words a user types for ENTRY on ARCH (arch_args where the launch differs)."""
    return entry.get("arch_args", {}).get(arch) or entry["args"]


def expect_for(entry, arch, series=None):
    """"ok", or {"exit": N, "why": ...} where the kernel truly does not fit ARCH; `series` ("3.6") applies
    an entry's expect_triton for that Triton minor version."""
    if series is not None and arch in entry.get("expect_triton", {}).get(series, {}):
        return entry["expect_triton"][series][arch]
    return entry.get("expect", {}).get(arch, "ok")
