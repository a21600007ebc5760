"""The wider zoo (issue 32): real kernels of seven more projects, in manifest.py's format.

Plain data, no tritonscope import; manifest.py appends WIDER to ZOO (PENDING, at the end, holds three more
that would harm the in-process zoo test until tritonscope issues named in their expect are fixed).  Each entry's args are the
library's own launch arguments (copied from the `launch` line's host code) for a realistic problem:
batch 4 x 1024 tokens, Llama-3-8B shapes (hidden 4096, 32 query / 8 KV heads, head 128) or
DeepSeek-V3's MLA (128 heads, 128 + 64 rope dims) unless noted, bf16 unless the library asks
otherwise, strides as the host code computes them for its (contiguous or transposed) tensors, H100
values where host code asks the device (132 SMs; B200 148, MI300X 304 in arch_args).

  grid   the launch's grid as the library computes it, an expression in the kernel's arguments and
         constexprs (`tritonscope compile ... --grid G --predict`); a config's constexprs where the
         library's grid is a lambda over an autotune config.
  expect_triton  optional {"3.6": {arch: {"exit": N, "why": ...}}}: what differs on that Triton minor
         version (it overrides expect there); manifest.expect_for must read it (see the line that
         appends WIDER in manifest.py).

Run one as:  tritonscope compile TARGET ARGS --arch sm_90a --stage none [--grid G --predict]
"""

SAGE = "sageattention 1.0.6"
CONCH = "conch-triton-kernels 1.3"
BNB = "bitsandbytes 0.50.2"
MEGATRON = "megatron-core 0.16.1"
TORCHAO = "torchao 0.18.0"
GEMLITE = "gemlite 0.6.0.post2"
GEMS = "flag-gems 5.0.0"

# --------------------------------------------------------------------------- shared argument strings
# sageattention: sageattn(q, k, v) on HND bf16 q/k/v [4, 32, 1024, 128]; q/k quantized to int8 per block
# (BLKQ 128, BLKK 64), v cast to fp16, out bf16 (core.py).
_SAGE_STRIDES = ("--arg stride_qz=4194304 --arg stride_qh=131072 --arg stride_qn=128 "
                 "--arg stride_kz=4194304 --arg stride_kh=131072 --arg stride_kn=128 "
                 "--arg stride_vz=4194304 --arg stride_vh=131072 --arg stride_vn=128 "
                 "--arg stride_oz=4194304 --arg stride_oh=131072 --arg stride_on=128 ")
_SAGE_ATTN = ("--arg Q=i8[4,32,1024,128] --arg K=i8[4,32,1024,128] --arg V=fp16[4,32,1024,128] "
              "--arg Q_scale=fp32[4,32,8,1] --arg K_scale=fp32[4,32,16,1] --arg Out=bf16[4,32,1024,128] "
              + _SAGE_STRIDES +
              "--arg qo_len=1024 --arg kv_len=1024 -c H=32 -c num_kv_groups=1 "
              "-c BLOCK_M=128 -c BLOCK_N=64 -c HEAD_DIM=128 -c STAGE={stage} -w 8 -s 4")

# conch: mixed_precision_gemm(x bf16[4096,4096], w_q_packed u32[512,4096] (int4, 8 per word), w_s bf16[32,4096]
# (group 128), w_zp=None) -> SYMMETRIC_NO_SHIFT, tuning of _get_tuning_parameters(); eviction policies from
# current_platform (torch.version.cuda / torch.version.hip): "evict_last"/"evict_first" on NVIDIA, "" on AMD.
_CONCH_GEMM = ("--arg a_ptr=bf16[4096,4096] --arg b_ptr=u32[512,4096] --arg c_ptr=bf16[4096,4096] "
               "--arg scales_ptr=bf16[32,4096] --arg zeros_ptr=i32[1,0] --arg scales_a_ptr=none "
               "--arg m_dim=4096 --arg k_dim=4096 --arg n_dim=4096 -c cxpr_w_nbits=4 -c cxpr_weight_bias=8 "
               "-c cxpr_group_size=128 -c cxpr_unpack_mask=15 -c cxpr_elements_per_sample=8 "
               "--arg matrix_a_stride_m=4096 --arg matrix_a_stride_k=1 --arg matrix_b_stride_k=4096 "
               "--arg matrix_b_stride_n=1 --arg matrix_c_stride_m=4096 --arg matrix_c_stride_n=1 "
               "--arg meta_stride_g=4096 --arg meta_stride_n=1 -c cxpr_input_dtype=tl.bfloat16 "
               "-c cxpr_output_dtype=tl.bfloat16 -c cxpr_acc_dtype=tl.float32 -c cxpr_meta_dtype=tl.bfloat16 "
               "-c cxpr_channel_scale_mode=0 -c cxpr_w_group_mode=2 -c cxpr_zero_is_scalar=false "
               "-c cxpr_data_contiguous=true -c cxpr_matrix_a_load_order=2 "
               "-c cxpr_matrix_a_eviction_policy={a_evict} -c cxpr_matrix_b_eviction_policy={b_evict} "
               "-c 'cxpr_meta_eviction_policy=\"\"' -c cxpr_swizzle_pid=true -c cxpr_block_size_scale_a=128 "
               "-c cxpr_block_size_scale_b=64 -c cxpr_block_size_m=128 -c cxpr_block_size_n=64 "
               "-c cxpr_block_size_k=64 -c cxpr_group_size_m=16 -w 8 -s 2")

_CONCH_FP8 = ("--arg output_ptr={fp8}[4096,4096] --arg input_ptr=bf16[4096,4096] --arg scale_ptr=fp32[1] "
              "--arg hidden_size=4096 -c cxpr_hidden_size_padded=4096 -c cxpr_block_size=1024 -c cxpr_is_rocm={rocm}")

# torchao blockwise fp8 training (1x128 activation, 128x128 weight scales): x fp8 [4096, 4096] row-major,
# b = weight.t() (weight fp8 [14336, 4096]) column-major, reciprocal scales column-major, out bf16;
# torchao.float8.config picks float8_e4m3fnuz on MI300 (torch.version.hip), float8_e4m3fn elsewhere.
_AO_BLOCKWISE = ("--arg a_ptr={fp8}[4096,4096] --arg a_stride_dim_0=4096 --arg a_stride_dim_1=1 "
                 "--arg b_ptr={fp8}[14336,4096].T --arg b_stride_dim_0=1 --arg b_stride_dim_1=4096 "
                 "--arg c_ptr=bf16[4096,14336] --arg c_stride_dim_0=14336 --arg c_stride_dim_1=1 "
                 "--arg a_s_ptr=fp32[32,4096].T --arg a_s_stride_dim_0=1 --arg a_s_stride_dim_1=4096 "
                 "--arg b_s_ptr=fp32[112,32].T --arg b_s_stride_dim_0=1 --arg b_s_stride_dim_1=32 --arg M=4096 "
                 "-c N=14336 -c K=4096 -c out_dtype=torch.bfloat16 -c BLOCK_SIZE_K=128")

# gemlite: GemLiteLinearTriton A16W4 (HQQ, group 64, asymmetric in fma mode: W_group_mode 4), int32 packing
# over K (W_q (K/8, N) as a transposed view), scales/zeros (K/64, N) transposed views; gemm_forward's launch.
_GEMLITE_GEMM = ("--arg a_ptr=bf16[4096,4096] --arg b_ptr=i32[4096,512].T --arg c_ptr=bf16[4096,4096] "
                 "--arg scales_ptr=bf16[4096,64].T --arg zeros_ptr=bf16[4096,64].T --arg scales_a_ptr=none "
                 "--arg M=4096 -c N=4096 -c K=4096 --arg M_CLOSEST=4096 -c W_nbits=4 -c group_size=64 "
                 "-c unpack_mask=15 -c elements_per_sample=8 -c type_id=204 -c a_sizeof=2 -c b_sizeof=4 "
                 "--arg stride_am=4096 --arg stride_ak=1 --arg stride_bk=1 --arg stride_bn=512 --arg stride_cm=4096 "
                 "--arg stride_cn=1 --arg stride_meta_a_m=none --arg stride_meta_a_g=none --arg stride_meta_g=1 "
                 "--arg stride_meta_n=64 --arg load_scales_as_block=false -c input_dtype=tl.bfloat16 "
                 "-c output_dtype=tl.bfloat16 -c acc_dtype=tl.float32 -c meta_dtype=tl.bfloat16 "
                 "-c channel_scale_mode=0 -c W_group_mode=4 -c zero_is_scalar=false -c data_contiguous=true "
                 "-c use_tma=false -c use_5d_scales=false --arg meta_scale_norm_ptr=none -c warp_specialize=false")

_SAGE_36 = {"3.6": {"gfx942": {"exit": 5, "why": "Triton 3.6's AMD pipeliner (TritonAMDGPUPipeline) fails on "
                                                "the num_stages=4 attention loop (PassManager::run failed); "
                                                "Triton 3.7+ compiles it"}}}
_GEMLITE_WHY = ("tritonscope: gemlite's import makes a CUDA tensor per device (gemv_kernels.py:18, "
                "torch.tensor(..., device='cuda:0')) once the stand-in says device_count() is 1; CPU torch "
                "cannot, so the import fails (a GPU machine imports it)")
_GEMS_WHY = ("tritonscope: flag_gems runs nvidia-smi at import to learn the vendor (runtime/backend/device.py, "
             "in a thread that swallows the error) and raises 'No device were detected'; it compiles with "
             "GEMS_VENDOR=nvidia (amd for gfx942), which the message does not name")


WIDER = [
    # ---------------------------------------------------------------- sageattention (SageAttention 1, pure Triton)
    {
        "name": "sage_quant_per_block_int8",
        "package": SAGE,
        "target": "sageattention.quant_per_block:quant_per_block_int8_kernel",
        "args": "--arg Input=bf16[4,32,1024,128] --arg Output=i8[4,32,1024,128] --arg Scale=fp32[4,32,8,1] "
                "--arg L=1024 --arg stride_iz=4194304 --arg stride_ih=131072 --arg stride_in=128 "
                "--arg stride_oz=4194304 --arg stride_oh=131072 --arg stride_on=128 --arg stride_sz=256 "
                "--arg stride_sh=8 --arg sm_scale=0.1275174307460247 -c C=128 -c BLK=128",
        "patterns": ["keyword-launch", "3d-grid", "int8-tensor"],
        "launch": "sageattention/quant_per_block.py:63",
        "grid": "cdiv(L, BLK), Input.shape[1], Input.shape[0]",
        "expect": {},
    },
    {
        "name": "sage_attn_qk_int8",
        "package": SAGE,
        "target": "sageattention.attn_qk_int8_per_block:_attn_fwd",
        "args": _SAGE_ATTN.format(stage=1),
        "patterns": ["int8-dot", "constexpr-positional", "launch-options", "jit-helper"],
        "launch": "sageattention/attn_qk_int8_per_block.py:113",
        "grid": "cdiv(qo_len, BLOCK_M), H, Q.shape[0]",
        "expect": {},
        "expect_triton": _SAGE_36,
    },
    {
        "name": "sage_attn_qk_int8_causal",
        "package": SAGE,
        "target": "sageattention.attn_qk_int8_per_block_causal:_attn_fwd",
        "args": _SAGE_ATTN.format(stage=3),
        "patterns": ["int8-dot", "constexpr-positional", "launch-options"],
        "launch": "sageattention/attn_qk_int8_per_block_causal.py:136",
        "grid": "cdiv(qo_len, BLOCK_M), H, Q.shape[0]",
        "expect": {},
        "expect_triton": _SAGE_36,
    },
    {
        "name": "sage_attn_qk_int8_h96",
        "package": SAGE,
        "target": "sageattention.attn_qk_int8_per_block_h96:_attn_fwd",
        # head_dim 96: [4, 32, 1024, 96]; H and num_kv_groups are runtime ints here, kv_len by keyword
        "args": "--arg Q=i8[4,32,1024,96] --arg K=i8[4,32,1024,96] --arg V=fp16[4,32,1024,96] "
                "--arg Q_scale=fp32[4,32,8,1] --arg K_scale=fp32[4,32,16,1] --arg Out=bf16[4,32,1024,96] "
                "--arg stride_qz=3145728 --arg stride_qh=98304 --arg stride_qn=96 --arg stride_kz=3145728 "
                "--arg stride_kh=98304 --arg stride_kn=96 --arg stride_vz=3145728 --arg stride_vh=98304 "
                "--arg stride_vn=96 --arg stride_oz=3145728 --arg stride_oh=98304 --arg stride_on=96 "
                "--arg H=32 --arg num_kv_groups=1 --arg qo_len=1024 --arg kv_len=1024 "
                "-c BLOCK_M=128 -c BLOCK_N=64 -c HEAD_DIM=96 -c STAGE=1 -w 8 -s 4",
        "patterns": ["int8-dot", "keyword-launch", "specialized-one"],
        "launch": "sageattention/attn_qk_int8_per_block_h96.py:118",
        "grid": "cdiv(qo_len, BLOCK_M), Q.shape[0] * H",
        "expect": {},
        "expect_triton": _SAGE_36,
    },
    {
        "name": "sage_attn_qk_int8_varlen",
        "no_prediction": "loop bounds are not known from the launch's arguments",
        "package": SAGE,
        "target": "sageattention.attn_qk_int8_block_varlen:_attn_fwd",
        # sageattn_varlen: 4 sequences of 1024 packed as [4096, 32, 128]; cu_seqlens int32, the scales'
        # cu_seqlens int64 (torch.cumsum of int32)
        "args": "--arg Q=i8[4096,32,128] --arg K=i8[4096,32,128] --arg V=fp16[4096,32,128] "
                "--arg cu_seqlens_q=i32[5] --arg cu_seqlens_k=i32[5] --arg Q_scale=fp32[32,32,1] "
                "--arg K_scale=fp32[64,32,1] --arg cu_seqlens_q_scale=i64[5] --arg cu_seqlens_k_scale=i64[5] "
                "--arg Out=bf16[4096,32,128] --arg stride_qh=128 --arg stride_qn=4096 --arg stride_kh=128 "
                "--arg stride_kn=4096 --arg stride_vh=128 --arg stride_vn=4096 --arg stride_oh=128 "
                "--arg stride_on=4096 -c H=32 -c num_kv_groups=1 -c BLOCK_M=128 -c BLOCK_N=64 -c HEAD_DIM=128 "
                "-c STAGE=1 -w 8 -s 4",
        "patterns": ["int8-dot", "varlen", "constexpr-positional"],
        "launch": "sageattention/attn_qk_int8_block_varlen.py:119",
        "grid": "cdiv(1024, BLOCK_M), H, cu_seqlens_q.shape[0] - 1",
        "expect": {},
        "expect_triton": _SAGE_36,
    },
    # ---------------------------------------------------------------- conch-triton-kernels (Stack AV)
    {
        "name": "conch_w4a16_gemm",
        "package": CONCH,
        "target": "conch.kernels.quantization.gemm:_gemm_kernel",
        "args": _CONCH_GEMM.format(a_evict="evict_last", b_evict="evict_first"),
        "arch_args": {"gfx942": _CONCH_GEMM.format(a_evict="'\"\"'", b_evict="'\"\"'")},
        "patterns": ["unsigned-tensor", "empty-string-constexpr", "string-constexpr", "torch-version-gate",
                     "keyword-launch", "dot", "launch-option-keywords"],
        "launch": "conch/kernels/quantization/gemm.py:500",
        "grid": "cdiv(m_dim, cxpr_block_size_m) * cdiv(n_dim, cxpr_block_size_n)",
        "expect": {},
    },
    {
        "name": "conch_static_fp8_quant",
        "package": CONCH,
        "target": "conch.kernels.quantization.fp8:_static_scaled_fp8_quant_kernel",
        # cxpr_is_rocm = current_platform.is_amd() (torch.version.hip); the op asserts a float8_e4m3fnuz
        # output on AMD, float8_e4m3fn elsewhere
        "args": _CONCH_FP8.format(fp8="fp8e4nv", rocm="false"),
        "arch_args": {"gfx942": _CONCH_FP8.format(fp8="fp8e4b8", rocm="true")},
        "patterns": ["fnuz-fp8", "torch-version-gate", "keyword-launch", "static-range"],
        "launch": "conch/kernels/quantization/fp8.py:89",
        "grid": "output_ptr.shape[0]",
        "expect": {},
    },
    {
        "name": "conch_rms_norm",
        "package": CONCH,
        "target": "conch.kernels.normalization.rms_norm:_rms_norm_kernel",
        "args": "--arg output_ptr=bf16[4096,4096] --arg x_ptr=bf16[4096,4096] --arg residual_ptr=none "
                "--arg weight_ptr=bf16[4096] --arg hidden_size=4096 --arg epsilon=1e-6 -c cxpr_block_size=4096 "
                "-c cxpr_use_residual=false",
        "patterns": ["none-args", "keyword-launch"],
        "launch": "conch/kernels/normalization/rms_norm.py:95",
        "grid": "x_ptr.shape[0]",
        "expect": {},
    },
    {
        "name": "conch_silu_and_mul",
        "package": CONCH,
        "target": "conch.kernels.activation.silu_and_mul:_silu_and_mul_kernel",
        "args": "--arg output_ptr=bf16[4096,14336] --arg x_ptr=bf16[4096,28672] --arg output_stride=14336 "
                "--arg input_stride=28672 --arg d=14336 -c cxpr_block_size=1024",
        "patterns": ["keyword-launch", "annotated-int"],
        "launch": "conch/kernels/activation/silu_and_mul.py:80",
        "grid": "x_ptr.shape[0]",
        "expect": {},
    },
    {
        "name": "conch_unified_attention",
        "no_prediction": "loop bounds are not known from the launch's arguments",
        "package": CONCH,
        "target": "conch.third_party.vllm.unified_attention:kernel_unified_attention_2d",
        # vLLM's unified attention (third_party): 4 prefill sequences of 1024 tokens, paged KV cache of
        # 2048 blocks x 16 tokens x 8 heads x 128, GQA 32/8 (BLOCK_M 16 -> BLOCK_Q 4), per-tensor k/v scales
        "args": "--arg output_ptr=bf16[4096,32,128] --arg query_ptr=bf16[4096,32,128] "
                "--arg key_cache_ptr=bf16[2048,16,8,128] --arg value_cache_ptr=bf16[2048,16,8,128] "
                "--arg block_tables_ptr=i32[4,64] --arg seq_lens_ptr=i32[4] --arg alibi_slopes_ptr=none "
                "--arg scale=0.08838834764831845 --arg k_scale=fp32[1] --arg v_scale=fp32[1] --arg softcap=0.0 "
                "-c num_query_heads=32 -c num_queries_per_kv=4 --arg block_table_stride=64 "
                "--arg query_stride_0=4096 --arg query_stride_1=128 --arg output_stride_0=4096 "
                "--arg output_stride_1=128 -c BLOCK_SIZE=16 -c HEAD_SIZE=128 -c HEAD_SIZE_PADDED=128 "
                "-c USE_ALIBI_SLOPES=false -c USE_SOFTCAP=false -c SLIDING_WINDOW=0 "
                "--arg stride_k_cache_0=16384 --arg stride_k_cache_1=1024 --arg stride_k_cache_2=128 "
                "-c stride_k_cache_3=1 --arg stride_v_cache_0=16384 --arg stride_v_cache_1=1024 "
                "--arg stride_v_cache_2=128 -c stride_v_cache_3=1 --arg query_start_len_ptr=i32[5] "
                "-c BLOCK_Q=4 --arg num_seqs=4",
        "patterns": ["keyword-launch", "annotated-int64", "none-args", "constexpr-stride", "dot"],
        "launch": "conch/third_party/vllm/unified_attention.py:290",
        "grid": "query_ptr.shape[0] // BLOCK_Q + num_seqs, num_query_heads // num_queries_per_kv",
        "expect": {},
    },
    {
        "name": "conch_nms_iou_mask",
        "package": CONCH,
        "target": "conch.kernels.vision.nms:_create_iou_mask_kernel",
        # nms(boxes fp32[8192, 4], scores, 0.5): a bool IoU mask [8192, 8192]
        "args": "--arg boxes_ptr=fp32[8192,4] --arg iou_mask_ptr=i1[8192,8192] --arg num_boxes=8192 "
                "--arg iou_threshold=0.5 --arg boxes_stride=4 --arg iou_mask_stride=8192",
        "patterns": ["autotune", "bool-tensor", "keyword-launch"],
        "launch": "conch/kernels/vision/nms.py:243",
        "grid": "num_boxes",
        "expect": {},
    },
    # ---------------------------------------------------------------- bitsandbytes (its Triton backend)
    {
        "name": "bnb_quantize_nf4",
        "package": BNB,
        "target": "bitsandbytes.backends.triton.kernels_4bit:quantize_nf4_blockwise_kernel",
        # quantize_4bit(bf16 [4096, 4096], blocksize 64, "nf4"): absmax in A's dtype, out uint8 [n/2, 1]
        "args": "--arg A_ptr=bf16[4096,4096] --arg absmax_ptr=bf16[262144] --arg out_ptr=u8[8388608,1] "
                "--arg n_elements=16777216 --arg absmax_elements=262144 -c BLOCK_SIZE=64 -c SPLIT_NUM_BLOCKS=4",
        "patterns": ["unsigned-tensor", "keyword-launch"],
        "launch": "bitsandbytes/backends/triton/kernels_4bit.py:176",
        "grid": "cdiv(n_elements, BLOCK_SIZE * 2 * SPLIT_NUM_BLOCKS)",
        "expect": {},
    },
    {
        "name": "bnb_dequant_nf4",
        "package": BNB,
        "target": "bitsandbytes.backends.triton.kernels_4bit:dequant_nf4_kernel",
        "args": "--arg a_ptr=u8[8388608,1] --arg c_ptr=bf16[4096,4096] --arg absmax_ptr=fp32[262144] "
                "--arg num_paired_elements=8388608 --arg num_output_elements=16777216 -c QUANT_BLOCK=64 "
                "-c SPLIT_SIZE=256",
        "patterns": ["unsigned-tensor", "constexpr-positional"],
        "launch": "bitsandbytes/backends/triton/kernels_4bit.py:478",
        "grid": "cdiv(num_paired_elements, SPLIT_SIZE)",
        "expect": {},
    },
    {
        "name": "bnb_quantize_8bit_blockwise",
        "package": BNB,
        "target": "bitsandbytes.backends.triton.kernels_8bit_quant:quantize_8bit_blockwise_kernel",
        # quantize_blockwise(fp32 [4096, 4096], code = the 256-entry dynamic map, blocksize 4096)
        "args": "--arg A_ptr=fp32[4096,4096] --arg code_ptr=fp32[256] --arg absmax_ptr=fp32[4096] "
                "--arg out_ptr=u8[16777216] --arg n_elements=16777216 -c BLOCK_SIZE=4096 -c CODE_SIZE=256 "
                "-c SPLIT_NUM_BLOCKS=1",
        "patterns": ["unsigned-tensor", "keyword-launch", "large-block"],
        "launch": "bitsandbytes/backends/triton/kernels_8bit_quant.py:119",
        "grid": "cdiv(n_elements, BLOCK_SIZE * SPLIT_NUM_BLOCKS)",
        "expect": {},
    },
    {
        "name": "bnb_adam_8bit_blockwise",
        "package": BNB,
        "target": "bitsandbytes.backends.triton.kernels_optim:_optimizer_update_2state_8bit_blockwise_triton_kernel",
        # Adam8bit step 100 on a bf16 [4096, 4096] weight: uint8 states, blockwise absmax (256), lr 1e-3
        "args": "--arg p_ptr=bf16[4096,4096] --arg g_ptr=bf16[4096,4096] --arg state1_ptr=u8[4096,4096] "
                "--arg state2_ptr=u8[4096,4096] -c beta1=0.9 -c beta2=0.999 --arg beta3=0.0 --arg alpha=0.0 "
                "-c eps=1e-8 --arg step=100 --arg beta1_step=2.6561398887587544e-05 "
                "--arg beta2_step=0.9047921471137089 --arg lr=0.001 --arg qmap1_ptr=fp32[256] "
                "--arg qmap2_ptr=fp32[256] --arg absmax1_ptr=fp32[65536] --arg absmax2_ptr=fp32[65536] "
                "-c weight_decay=0.0 -c gnorm_scale=1.0 --arg n_elements=16777216 -c BLOCK_SIZE_N=256 "
                "-c N_PER_TH=1 -c OPTIMIZER_ID=3 -w 2",
        "patterns": ["unsigned-tensor", "float-constexpr", "interleaved-constexpr", "launch-options"],
        "launch": "bitsandbytes/backends/triton/kernels_optim.py:1145",
        "grid": "cdiv(n_elements, BLOCK_SIZE_N * N_PER_TH)",
        "expect": {},
    },
    {
        "name": "bnb_adam_32bit",
        "package": BNB,
        "target": "bitsandbytes.backends.triton.kernels_optim:_optimizer_update_2state_32bit_triton_kernel",
        # AdamW (weight decay 0.01) step 100, fp32 states, no max_unorm (unorm_vec None)
        "args": "--arg g_ptr=bf16[4096,4096] --arg p_ptr=bf16[4096,4096] --arg state1_ptr=fp32[4096,4096] "
                "--arg state2_ptr=fp32[4096,4096] --arg unorm_ptr=none -c max_unorm=0.0 --arg param_norm=0.0 "
                "-c beta1=0.9 -c beta2=0.999 --arg beta3=0.0 --arg alpha=0.0 -c eps=1e-8 -c weight_decay=0.01 "
                "--arg step=100 --arg beta1_step=2.6561398887587544e-05 --arg beta2_step=0.9047921471137089 "
                "--arg lr=0.001 -c gnorm_scale=1.0 --arg skip_zeros=false --arg n_elements=16777216 "
                "-c OPTIMIZER_ID=3 -c BLOCK_SIZE=256 -c N_PER_TH=1 -w 2",
        "patterns": ["float-constexpr", "interleaved-constexpr", "none-args", "bool-scalar", "constexpr-positional"],
        "launch": "bitsandbytes/backends/triton/kernels_optim.py:475",
        "grid": "cdiv(n_elements, BLOCK_SIZE * N_PER_TH)",
        "expect": {},
    },
    # ---------------------------------------------------------------- megatron-core
    {
        "name": "megatron_mla_rope_q_fwd",
        "package": MEGATRON,
        "target": "megatron.core.fusions.fused_mla_yarn_rope_apply:rotary_fwd_q_kernel",
        # DeepSeek-V3 MLA query, sbhd [4096, 1, 128, 192] viewed [4096, 128, 192]; fp32 cos/sin [4096,1,1,64]
        "args": "--arg Q=bf16[4096,128,192] --arg COS=fp32[4096,1,1,64] --arg SIN=fp32[4096,1,1,64] "
                "--arg qk_head_dim=128 -c emb_dim=64 -c head_num=128 --arg batch_size=1 --arg seq_num=none "
                "--arg cu_seqlens_q=none --arg stride_x_seq=24576 --arg stride_x_nheads=192 --arg cp_rank=0 "
                "--arg cp_size=1",
        "patterns": ["autotune", "autotune-restore-value", "none-args", "specialized-one"],
        "launch": "megatron/core/fusions/fused_mla_yarn_rope_apply.py:258",
        "grid": "Q.shape[0], cdiv(head_num, BLOCK_H)",
        "expect": {},
    },
    {
        "name": "megatron_mla_rope_kv_fwd",
        "package": MEGATRON,
        "target": "megatron.core.fusions.fused_mla_yarn_rope_apply:rotary_fwd_kv_kernel",
        "args": "--arg KV=bf16[4096,128,256] --arg K_POS_EMB=bf16[4096,64] --arg O_KEY=bf16[4096,128,192] "
                "--arg O_VALUE=bf16[4096,128,128] --arg COS=fp32[4096,1,1,64] --arg SIN=fp32[4096,1,1,64] "
                "-c emb_dim=64 -c k_dim=128 -c v_dim=128 -c head_num=128 --arg batch_size=1 --arg seq_num=none "
                "--arg cu_seqlens_kv=none --arg stride_kv_seq=32768 --arg stride_kv_nheads=256 "
                "--arg stride_emb_seq=64 --arg stride_k_seq=24576 --arg stride_k_nheads=192 "
                "--arg stride_v_seq=16384 --arg stride_v_nheads=128 --arg cp_rank=0 --arg cp_size=1",
        "patterns": ["autotune", "none-args", "constexpr-positional"],
        "launch": "megatron/core/fusions/fused_mla_yarn_rope_apply.py:637",
        "grid": "KV.shape[0], cdiv(head_num, BLOCK_H)",
        "expect": {},
    },
    {
        "name": "megatron_append_kv_cache",
        "package": MEGATRON,
        "target": "megatron.core.inference.contexts.fused_kv_append_kernel:_append_kv_cache_kernel",
        # dynamic inference decode step: 256 tokens, 8 KV heads x 128, cache slice of a 6-D buffer
        # [2, layers, 2048 blocks, 256 tokens, 8, 128]
        "args": "--arg key_ptr=bf16[256,8,128] --arg value_ptr=bf16[256,8,128] "
                "--arg key_cache_ptr=bf16[2048,256,8,128] --arg value_cache_ptr=bf16[2048,256,8,128] "
                "--arg block_idx_ptr=i32[256] --arg local_kv_seq_idx_ptr=i32[256] --arg stride_key_token=1024 "
                "--arg stride_key_head=128 --arg stride_key_hdim=1 --arg stride_value_token=1024 "
                "--arg stride_value_head=128 --arg stride_value_hdim=1 --arg stride_cache_block=262144 "
                "--arg stride_cache_pos=1024 --arg stride_cache_head=128 --arg stride_cache_hdim=1 "
                "--arg n_tokens=256 --arg num_heads=8 --arg H_DIM=128 -c BLOCK_SIZE_H=128",
        "patterns": ["keyword-launch", "annotated-int", "specialized-one"],
        "launch": "megatron/core/inference/contexts/fused_kv_append_kernel.py:148",
        "grid": "n_tokens, num_heads",
        "expect": {},
    },
    {
        "name": "megatron_indices_to_multihot",
        "package": MEGATRON,
        "target": "megatron.core.fusions.fused_indices_converter:_indices_to_multihot_kernel",
        # MoE router: 4096 tokens, top-8 of 256 experts, 32 local experts (EP 8)
        "args": "--arg indices_ptr=i64[4096,8] --arg probs_in_indices_ptr=fp32[4096,8] "
                "--arg multihot_indices_ptr=i1[4096,32] --arg probs_in_multihot_ptr=fp32[4096,32] "
                "--arg position_map_ptr=i32[4096,32] -c num_of_local_experts=32 "
                "-c num_of_local_experts_next_power_of_2=32 -c topk=8 -c topk_next_power_of_2=8 "
                "-c BLOCK_SIZE=32 -w 1",
        "patterns": ["bool-tensor", "constexpr-positional", "launch-options"],
        "launch": "megatron/core/fusions/fused_indices_converter.py:218",
        "grid": "indices_ptr.shape[0]",
        "expect": {},
    },
    # ---------------------------------------------------------------- torchao
    {
        "name": "torchao_mxfp8_dim0",
        "package": TORCHAO,
        "target": "torchao.prototype.mx_formats.kernels:to_mxfp8_dim0_kernel",
        # triton_to_mxfp8_dim0(x bf16 [8192, 7168]): fp8 data, uint8 e8m0 scales per 32, "rceil"
        "args": "--arg x_ptr=bf16[8192,7168] --arg output_ptr=fp8e4nv[8192,7168] --arg scale_ptr=u8[8192,224] "
                "--arg n_rows=8192 --arg n_cols=7168 -c SCALE_BLOCK_SIZE=32 -c SCALING_MODE=rceil",
        "patterns": ["torch-version-gate", "autotune", "string-constexpr", "unsigned-tensor",
                     "import-time-device-query"],
        "launch": "torchao/prototype/mx_formats/kernels.py:896",
        "grid": "cdiv(n_rows, ROW_TILE_SIZE), cdiv(n_cols, COL_TILE_SIZE)",
        "expect": {"sm_90a": {"exit": 3, "why": "torchao defines its MX kernels only on sm_100+ with CUDA >= 12.8 "
                                                "(or gfx950)"},
                   "gfx942": {"exit": 3, "why": "torchao defines its MX kernels only on sm_100+ with CUDA >= 12.8 "
                                                "(or gfx950)"}},
    },
    {
        "name": "torchao_blockwise_fp8_gemm",
        "package": TORCHAO,
        "target": "torchao.prototype.blockwise_fp8_training.kernels:triton_fp8_gemm_1x128_128x128_kernel",
        "args": _AO_BLOCKWISE.format(fp8="fp8e4nv"),
        "arch_args": {"gfx942": _AO_BLOCKWISE.format(fp8="fp8e4b8")},
        "patterns": ["autotune", "fnuz-fp8", "torch-dtype-spelling", "torch-version-gate", "dot",
                     "constexpr-positional"],
        "launch": "torchao/prototype/blockwise_fp8_training/kernels.py:291",
        "grid": "cdiv(M, BLOCK_SIZE_M), cdiv(N, BLOCK_SIZE_N)",
        "expect": {},
    },
    {
        "name": "torchao_triton_matmul",
        "package": TORCHAO,
        "target": "torchao.prototype.common.triton.matmul:_kernel",
        # triton.ops.matmul's kernel as torchao keeps it: fp16 [4096, 4096] x [4096, 4096]; its pruner reads
        # named_args["A"] (a positional launch), its perf_model asks nvidia-smi for the clock
        "args": "--arg A=fp16[4096,4096] --arg B=fp16[4096,4096] --arg C=fp16[4096,4096] --arg M=4096 --arg N=4096 "
                "--arg K=4096 --arg stride_am=4096 --arg stride_ak=1 --arg stride_bk=4096 --arg stride_bn=1 "
                "--arg stride_cm=4096 --arg stride_cn=1 -c acc_dtype=tl.float32 -c input_precision=none "
                "-c fp8_fast_accum=true -c GROUP_M=8 -c AB_DTYPE=tl.float16",
        "patterns": ["autotune", "prune-configs-by", "perf-model", "heuristics", "torch-version-gate",
                     "positional-pruner"],
        "launch": "torchao/prototype/common/triton/matmul.py:335",
        "grid": "cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N), SPLIT_K",
        "expect": {arch: {"exit": 4, "why": "tritonscope: prune_configs_by's perf_model (estimate_matmul_time) "
                                            "runs nvidia-smi / pynvml for the SM clock, which the stand-in does "
                                            "not answer; the error shown is the keyword launch's KeyError 'A'"}
                   for arch in ("sm_90a", "sm_100a", "gfx942")},
    },
    # ---------------------------------------------------------------- gemlite (Mobius Labs)
    {
        "name": "gemlite_gemm_a16w4",
        "package": GEMLITE,
        "target": "gemlite.triton_kernels.gemm_kernels:gemm_INT_kernel",
        "args": _GEMLITE_GEMM,
        "patterns": ["autotune", "keyword-pruner", "positional-pruner", "heuristics", "torch-version-gate",
                     "import-time-device-query", "mixed-positional-keyword-launch"],
        "launch": "gemlite/triton_kernels/gemm_kernels.py:777",
        "grid": "cdiv(M, BLOCK_SIZE_M) * cdiv(N, BLOCK_SIZE_N)",
        "expect": {arch: {"exit": 4, "why": _GEMLITE_WHY} for arch in ("sm_90a", "sm_100a", "gfx942")},
    },
    # ---------------------------------------------------------------- flag-gems (FlagOpen)
    {
        "name": "flag_gems_softmax_inner",
        "package": GEMS,
        "target": "flag_gems.ops.softmax:softmax_kernel_inner",
        # softmax(bf16 [4096, 32000], dim=-1); the heuristics set TILE_N, ONE_TILE_PER_CTA and num_warps
        "args": "--arg output_ptr=bf16[4096,32000] --arg input_ptr=bf16[4096,32000] --arg M=4096 --arg N=32000",
        "patterns": ["heuristics", "heuristic-num-warps", "libentry-wrapper", "import-time-vendor-query"],
        "launch": "flag_gems/ops/softmax.py:322",
        "grid": "M, 1, 1",
        "expect": {arch: {"exit": 4, "why": _GEMS_WHY} for arch in ("sm_90a", "sm_100a", "gfx942")},
    },
    {
        "name": "flag_gems_rms_norm",
        "package": GEMS,
        "target": "flag_gems.ops.rms_norm:rms_norm_kernel",
        "args": "--arg out_ptr=bf16[4096,4096] --arg INV_RMS=fp32[4096] --arg in_ptr=bf16[4096,4096] "
                "--arg w_ptr=bf16[4096] --arg y_stride_r=4096 --arg y_stride_c=1 --arg x_stride_r=4096 "
                "--arg x_stride_c=1 --arg N=4096 --arg eps=1e-5 -c BLOCK_SIZE=4096",
        "patterns": ["do-not-specialize", "libentry-wrapper", "constexpr-positional", "import-time-vendor-query"],
        "launch": "flag_gems/ops/rms_norm.py:164",
        "grid": "in_ptr.shape[0]",
        "expect": {arch: {"exit": 4, "why": _GEMS_WHY} for arch in ("sm_90a", "sm_100a", "gfx942")},
    },
    {
        "name": "megatron_multimem_all_gather",
        "package": MEGATRON,
        "target": "megatron.core.inference.communication.torch_symm_triton.collectives:_multimem_all_gather_kernel",
        # 8 GPUs, bf16 [4096, 4096] gathered; the pointers are ints (data_ptr(), the symmetric memory
        # handle's multicast_ptr and signal_pad_ptrs_dev)
        "args": "--arg local_ptr=139637976727552 --arg multicast_ptr=139912854634496 "
                "--arg signal_pad_ptrs=139912787525632 --arg numel=16777216 -c BLOCK_SIZE=1024 "
                "-c NUMEL_PER_THREAD=8 -c RANK=0 -c WORLD_SIZE=8 -w 32",
        "patterns": ["inline-asm", "int-pointers", "keyword-launch", "launch-options"],
        "launch": "megatron/core/inference/communication/torch_symm_triton/collectives.py:116",
        "grid": "min(cdiv(cdiv(numel // NUMEL_PER_THREAD, WORLD_SIZE), BLOCK_SIZE), 24)",
        "expect": {"gfx942": {"exit": 5, "why": "multimem.st / ld.global are inline PTX (NVLink multicast): "
                                                "CUDA only"}},
        # Triton 3.6's LLVM ends the process on the PTX asm constraint 'l' (exit 1, nothing said): tritonscope
        # compiles inline assembly for AMD targets in a child and says so as a compile error (exit 5)
    },
]

# Held back from ZOO: real kernels whose tritonscope run harms the test process itself.  The zoo test compiles
# in-process (CliRunner), so an entry that ends the process or leaves a wrong module in sys.modules would fail
# or change the entries after it.  Each compiles as a user types it (checked by hand); move it to WIDER once
# the tritonscope issue in its expect is fixed.
_MEG_SHADOW_WHY = ("tritonscope: the module's own folder goes first on sys.path, so its sibling "
                   "custom_layers/transformer_engine.py is imported as the transformer_engine package; "
                   "megatron's `try: import transformer_engine` then succeeds and version('transformer-engine') "
                   "raises PackageNotFoundError (`import megatron.core...` in Python works), and the wrong "
                   "module stays in sys.modules, so every later megatron import in the process fails the same way")
_MEG_MATMUL = ("--arg a_ptr=bf16[4096,4096] --arg b_ptr=bf16[14336,4096].T --arg c_ptr=bf16[4096,14336] "
               "--arg bias_ptr=none --arg M=4096 --arg N=14336 --arg K=4096 --arg stride_am=4096 --arg stride_ak=1 "
               "--arg stride_bk=1 --arg stride_bn=4096 --arg stride_cm=14336 --arg stride_cn=1 -c NUM_SMS={sms} "
               "-c A_LARGE=false -c B_LARGE=false -c C_LARGE=false -c HAS_BIAS=false -c BLOCK_SIZE_M=128 "
               "-c BLOCK_SIZE_N=128 -c BLOCK_SIZE_K=64 -c GROUP_SIZE_M=8 -s 3 -w 8")

PENDING = [
    {
        "name": "torchao_scaled_int8_mm",
        "package": TORCHAO,
        "target": "torchao.prototype.quantized_training.int8_mm:_scaled_int8_mm_kernel",
        # INT8 mixed-precision training: A int8 [4096, 4096] x B = weight.T (int8 [14336, 4096] transposed),
        # bf16 row/col scales; strides by *A.stride(), *B.stride(), *C.stride()
        "args": "--arg A_ptr=i8[4096,4096] --arg B_ptr=i8[14336,4096].T --arg C_ptr=bf16[4096,14336] "
                "--arg row_scale_ptr=bf16[4096] --arg col_scale_ptr=bf16[14336] --arg M=4096 --arg N=14336 "
                "--arg K=4096 --arg stride_am=4096 --arg stride_ak=1 --arg stride_bk=1 --arg stride_bn=4096 "
                "--arg stride_cm=14336 --arg stride_cn=1 -c COL_SCALE_SCALAR=false",
        "patterns": ["autotune", "heuristics", "int8-dot", "constexpr-default"],
        "launch": "torchao/prototype/quantized_training/int8_mm.py:173",
        "grid": "cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)",
        # tritonscope: in one process, a module whose import asked for the GPU is imported again for each arch;
        # the re-import re-runs its torch.library define("scaled_int8_mm ...") and fails (exit 4) on the third
        # arch of the zoo test. Each command line imports it once and compiles on all three arches.
        "expect": {},
    },
    {
        "name": "torchao_mxfp8_dim1",
        "package": TORCHAO,
        "target": "torchao.prototype.mx_formats.kernels:to_mxfp8_dim1_kernel",
        "args": "--arg x_ptr=bf16[8192,7168] --arg output_col_major_ptr=fp8e4nv[7168,8192] "
                "--arg col_scale_ptr=u8[7168,256,1] --arg n_rows=8192 --arg n_cols=7168 -c INNER_BLOCK_SIZE=32 "
                "-c SCALING_MODE=rceil",
        "patterns": ["torch-version-gate", "autotune", "string-constexpr", "unsigned-tensor"],
        "launch": "torchao/prototype/mx_formats/kernels.py:962",
        "grid": "cdiv(n_rows, ROW_TILE_SIZE), cdiv(n_cols, COL_TILE_SIZE)",
        # tritonscope: in one process, importing kernels.py for sm_100a, then another arch, then sm_100a again
        # (torchao_mxfp8_dim0's cases, then this one's) re-runs its torch.library define("mxfp8_quantize ...")
        # and fails with exit 4: "Tried to register an operator ... multiple times"
        "expect": {"sm_90a": {"exit": 3, "why": "torchao defines its MX kernels only on sm_100+ with CUDA >= 12.8 "
                                                "(or gfx950)"},
                   "gfx942": {"exit": 3, "why": "torchao defines its MX kernels only on sm_100+ with CUDA >= 12.8 "
                                                "(or gfx950)"}},
    },
    {
        "name": "megatron_batch_invariant_matmul",
        "package": MEGATRON,
        "target": "megatron.core.transformer.custom_layers.batch_invariant_kernels:matmul_kernel_persistent",
        # matmul_persistent(a, b) for a Linear (b = weight.t()), bf16 config; NUM_SMS from
        # torch.cuda.get_device_properties(0).multi_processor_count
        "args": _MEG_MATMUL.format(sms=132),
        "arch_args": {"sm_100a": _MEG_MATMUL.format(sms=148), "gfx942": _MEG_MATMUL.format(sms=304)},
        "patterns": ["persistent", "launch-metadata", "device-query-in-host", "none-args", "dot"],
        "launch": "megatron/core/transformer/custom_layers/batch_invariant_kernels.py:213",
        "grid": "min(NUM_SMS, cdiv(M, BLOCK_SIZE_M) * cdiv(N, BLOCK_SIZE_N))",
        "expect": {arch: {"exit": 4, "why": _MEG_SHADOW_WHY} for arch in ("sm_90a", "sm_100a", "gfx942")},
    },
    {
        "name": "megatron_log_softmax",
        "package": MEGATRON,
        "target": "megatron.core.transformer.custom_layers.batch_invariant_kernels:_log_softmax_kernel",
        "args": "--arg input_ptr=bf16[4096,128256] --arg output_ptr=bf16[4096,128256] "
                "--arg input_row_stride=128256 --arg output_row_stride=128256 --arg n_cols=128256 -c BLOCK_SIZE=1024",
        "patterns": ["keyword-launch", "looped-reduction"],
        "launch": "megatron/core/transformer/custom_layers/batch_invariant_kernels.py:323",
        "grid": "input_ptr.shape[0]",
        "expect": {arch: {"exit": 4, "why": _MEG_SHADOW_WHY} for arch in ("sm_90a", "sm_100a", "gfx942")},
    },
]
