"""The naming grammar of kernel libraries: one ordered table of rules, ``RULES``.

Pure functions over strings: no torch import, so the rules are testable anywhere and
usable on names read from a trace file.

The first rule whose pattern is found in the name decides the kind and family. Layout,
dtype and fused ops are then read by the rule's own extractors (``extractors.py``). An
unknown name is ``kind="other"``, never an error: new libraries appear faster than rules do,
and a test must not crash on them (``decode.py`` then asks the other evidence).

``fused_ops`` means "the operations this kernel computes, as far as its name tells":
the origin ops of an Inductor kernel, views left out (``("gelu", "mul")`` of
``triton_poi_fused__unsafe_view_gelu_mul_0``), the op of an ATen elementwise functor
(``("gelu",)``), the epilogue of a GEMM (``("bias",)``). One field for all three lets a test
compare eager and compiled runs with the same query. Where the name tells none, the launching
op may (``decoder.py``, evidence ``op``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .extractors import (
    aten_ops,
    copy_op,
    cudnn_dtype,
    cudnn_sdpa_dtype,
    first_dtype,
    gemm_dtype,
    gemm_epilogue,
    layout_any,
    magma_dtype,
    nccl_collective,
    nccl_dtype,
    no_ops,
    none,
    nvjet_dtype,
    nvjet_layout,
    tensile_dtype,
    tensile_layout,
)
from .inductor import inductor_ops


@dataclass(frozen=True)
class Rule:
    """One line of the decoding table."""

    pattern: re.Pattern[str]
    kind: str
    family: str
    layout: Callable[[str], str | None] = none
    dtype: Callable[[str], str | None] = first_dtype
    fused_ops: Callable[[str], tuple[str, ...]] = no_ops
    collective: Callable[[str], str | None] = none
    # The kind of work this rule's kernels are helpers of (KernelName.part_of).
    part_of: str | None = None
    # False for a catch-all that knows the library but not what the kernel does: its kind
    # "other" is no evidence, so the launching op may still place the kernel.
    places_kind: bool = True
    # Whether ``dtype`` reads the whole name; the default reads the head, and the template
    # arguments are read separately (their dtype is evidence "template").
    dtype_anywhere: bool = False
    # Whether the template arguments' type comes before the head's: cuDNN's direct convolution
    # kernels are named after the algorithm (explicit_convolve_sgemm<__half, ...>), not the type.
    template_dtype_first: bool = False


def _rule(
    pattern: str,
    kind: str,
    family: str,
    *,
    layout: Callable[[str], str | None] = none,
    dtype: Callable[[str], str | None] = first_dtype,
    fused_ops: Callable[[str], tuple[str, ...]] = no_ops,
    collective: Callable[[str], str | None] = none,
    part_of: str | None = None,
    places_kind: bool = True,
    template_dtype_first: bool = False,
) -> Rule:
    return Rule(
        re.compile(pattern),
        kind,
        family,
        layout,
        dtype,
        fused_ops,
        collective,
        part_of,
        places_kind,
        dtype_anywhere=dtype is not first_dtype,
        template_dtype_first=template_dtype_first,
    )


# Order matters: the first rule whose pattern is found in the name wins.
#
# Kinds of library kernels, decided here (issue 15) and documented in the README:
# - A kernel built on ATen's elementwise machinery stays ``pointwise`` whatever it computes
#   (a loss's elementwise part, a dropout mask, a copy): ``fused_ops`` names the op.
#   The functional kinds are for dedicated kernels whose names say what they do.
# - ``indexing``: reads or writes at positions taken from an index tensor (gather, scatter,
#   index_select/add/put, embedding and embedding-bag forward and backward, take/put).
# - ``sort``: sorting and selection (radix/bitonic/merge sort, top-k, kth value, median) and
#   sorted search (searchsorted/bucketize).
# - ``scan``: prefix sums and what CUB builds on them: cumsum/cumprod/cummax, stream
#   compaction (nonzero, masked_select, unique's select), scan-by-key.
# - ``pooling``: max/avg/adaptive pooling, forward and backward. (``adaptive_avg_pool2d`` to
#   1x1 runs as a ``mean`` reduction kernel: its name says reduction.)
# - ``resampling``: output built from computed source positions of a spatial input:
#   reflection/replication padding, upsampling/interpolation, grid_sample, im2col/col2im.
# - ``loss``: dedicated loss kernels (NLL, 2-D NLL, CTC, margin losses).
# - ``optimizer``: fused optimizer kernels (``_fused_adam(w)_``, ``_fused_sgd_``); foreach
#   kernels stay ``pointwise``: ``_foreach_add_`` serves optimizers and grad clipping alike,
#   and its name does not say which (``Kernel.op`` does).
# - Normalization kernels (layer/group/batch/RMS norm, ATen's and cuDNN's) are ``reduction``.
# - CUB device primitives get family ``cub`` and the kind of what they compute; cuDNN's
#   layout helpers (NCHW<->NHWC, channel padding) are ``pointwise``/``cudnn``; cuDNN's SDPA
#   backward helpers are ``attention``/``cudnn`` like flash's own backward helpers.
# cuBLASLt's own epilogue kernel, run where the GEMM kernel has no epilogue in it (a split-K
# sgemm_largek: the output scaled, the GEMM accumulated, then the bias added by this kernel).
CUBLASLT_EPILOGUE = re.compile(r"cublasLt::epilogue::|^epilogue::impl::")

RULES: tuple[Rule, ...] = (
    _rule(r"nccl", "communication", "nccl", dtype=nccl_dtype, collective=nccl_collective),
    _rule(r"^triton_(poi|red|per|tem|for|sca|spl|mix|unk)_", "pointwise", "inductor", fused_ops=inductor_ops),
    _rule(r"flash_(fwd|bwd)|flash::|pytorch_flash|FlashAttn", "attention", "flash"),
    # Serving kernels (FlashInfer, vLLM, SGLang, TensorRT-LLM), before the generic attention and
    # ATen rules: "reduce_kernel" and "fmha" are in their names too.
    _rule(r"flashinfer::comm::", "communication", "flashinfer"),
    _rule(
        r"flashinfer::\w*(?:Prefill|Decode|Attention|MLA)"
        r"|(?:^|flashinfer::)(?:BatchPrefillWith|BatchDecodeWith|SinglePrefillWith|SingleDecodeWith)",
        "attention",
        "flashinfer",
    ),
    _rule(r"^flashinfer::", "other", "flashinfer", places_kind=False),
    _rule(r"paged_attention", "attention", "vllm"),
    # Marlin's mixed-precision GEMMs ship inside vLLM.
    _rule(r"^marlin::|Marlin<", "gemm", "vllm"),
    _rule(r"vllm::[\w:]*?(?:rms_norm|layer_norm)", "reduction", "vllm"),
    _rule(r"vllm::[\w:]*?(?:act_and_mul|silu_and_mul|gelu_and_mul|rotary_embedding|fp8_quant)", "pointwise", "vllm"),
    _rule(r"vllm::[\w:]*?(?:reshape_and_cache|copy_blocks)", "indexing", "vllm"),
    _rule(r"vllm::", "other", "vllm", places_kind=False),
    _rule(r"^fmhaSm\d+|^fmha_v2_|tensorrt_llm::[\w:]*?(?:fmha|attention|mmha)", "attention", "trtllm"),
    _rule(r"^bmm_(?:Bfloat16|Fp16|Fp32|E4m3|E2m1|MxE\dm\d)", "gemm", "trtllm"),
    _rule(r"tensorrt_llm::[\w:]*?(?:quantize|dequantize|cast)", "pointwise", "trtllm"),
    _rule(r"^moe::dev::finalize::", "reduction", "trtllm"),
    _rule(r"tensorrt_llm::|^moe::dev::", "other", "trtllm", places_kind=False),
    _rule(r"(?:sgl_hip|sgl_kernel)::.*?(?:act_and_mul|silu_and_mul|gelu_and_mul|rotary)", "pointwise", "sglang"),
    _rule(r"sgl_hip::|sgl_kernel::|sglang", "other", "sglang", places_kind=False),
    _rule(r"(?:^|::)(?:act_and_mul|silu_and_mul|gelu_and_mul|rotary_embedding)\w*kernel", "pointwise", "unknown"),
    _rule(r"(?:^|::)(?:store_kvcache|reshape_and_cache)\w*", "indexing", "unknown"),
    # TransformerEngine
    _rule(r"transformer_engine::[\w:]*?(?:normalization|rmsnorm|layernorm|ln_)", "reduction", "transformer_engine"),
    _rule(
        r"transformer_engine::[\w:]*?(?:cast|transpose|quantize|gelu|swiglu|geglu|act)",
        "pointwise",
        "transformer_engine",
    ),
    _rule(r"transformer_engine::", "other", "transformer_engine", places_kind=False),
    # Symmetric-memory collectives of ATen (multimem all-reduce), before ATen's reduce rules.
    _rule(
        r"multimem_\w*(?:all_reduce|all_gather|reduce_scatter)|one_shot_all_reduce|two_shot_all_reduce",
        "communication",
        "aten",
    ),
    # cuDNN's SDPA backward helpers (cudnn::fusion::fmha_reduce_head, compute_dot_do_o, convert_dq)
    # come before the mem-efficient rule: "fmha" is in their names too.
    _rule(r"cudnn\w*(sdpa|fmha|attention)|cudnn::fusion::", "attention", "cudnn", dtype=cudnn_sdpa_dtype),
    _rule(r"^aiter::.*?(?:fmha|attention|mha_)", "attention", "aiter"),
    _rule(r"fmha|AttentionKernel|attention_kernel|efficient_attention|mem_eff", "attention", "mem_efficient"),
    _rule(r"^nvjet_", "gemm", "nvjet", layout=nvjet_layout, dtype=nvjet_dtype, fused_ops=gemm_epilogue),
    # cuDNN's CUTLASS split-K reduce after a convolution (like cuBLAS's splitKreduce after a GEMM).
    _rule(r"cudnn::reduction::|cutlass_cudnn\w*::\w*ReduceSplitK", "reduction", "cudnn", part_of="convolution"),
    # ROCm: Tensile GEMMs (rocBLAS and hipBLASLt), Composable Kernel, MIOpen.
    _rule(r"^Cijk_", "gemm", "tensile", layout=tensile_layout, dtype=tensile_dtype, fused_ops=gemm_epilogue),
    # Composable Kernel: a convolution runs as a GEMM underneath (GridwiseGemm in its arguments,
    # kernel_batched_gemm_xdlops_bwd_weight for the weight gradient), so convolutions come first.
    _rule(r"^ck(?:_tile)?::.*?(?:conv|Conv|bwd_weight)", "convolution", "composable_kernel"),
    _rule(r"^ck(?:_tile)?::.*?(?:fmha|Fmha|attention|Attention)", "attention", "composable_kernel"),
    _rule(r"^ck(?:_tile)?::.*?(?:norm|Norm|softmax|Softmax|reduce|Reduce)", "reduction", "composable_kernel"),
    _rule(r"^ck(?:_tile)?::.*?(?:gemm|Gemm)|kernel_gemm_xdl|gemm_xdl|GemmXdl", "gemm", "composable_kernel"),
    _rule(r"^ck(?:_tile)?::", "other", "composable_kernel", places_kind=False),
    _rule(r"^aiter::.*?(?:norm|Norm)", "reduction", "aiter"),
    _rule(r"^aiter::", "other", "aiter", places_kind=False),
    # ROCm's CUB (rocPRIM) and HIP's own copy and fill kernels.
    _rule(r"rocprim::.*?(?:radix_sort|merge_sort|block_merge|sort_)", "sort", "rocprim"),
    _rule(r"rocprim::.*?(?:lookback_scan|scan_|_scan|partition)", "scan", "rocprim"),
    _rule(r"rocprim::.*?reduce", "reduction", "rocprim"),
    _rule(r"rocprim::.*?transform", "pointwise", "rocprim"),
    _rule(r"rocprim::", "other", "rocprim", places_kind=False),
    _rule(r"__amd_rocclr_copy", "pointwise", "hip", fused_ops=copy_op),
    _rule(r"__amd_rocclr_fill", "pointwise", "hip"),
    _rule(r"MIOpenBatchNorm|MIOpenLayerNorm|MIOpenSoftmax|MIOpenReduce", "reduction", "miopen"),
    _rule(r"MIOpenPooling|mloPooling", "pooling", "miopen"),
    _rule(
        r"naive_conv_|igemm_(?:fwd|bwd|wrw)|MIOpenConv|miopenSp3AsmConv|miopenGcnAsmConv|gridwise_convolution"
        r"|conv1x1u|MIOpenCvD|Conv_Winograd|sp3AsmConv",
        "convolution",
        "miopen",
    ),
    _rule(r"batched_transpose_|transpose_(?:NCHW|CNHW|NHWC)\w*2|SubTensorOp", "pointwise", "miopen"),
    _rule(r"Im2d2Col|Im3d2Col|Col2Im", "resampling", "miopen"),
    _rule(r"^MIOpen|^miopen", "other", "miopen", places_kind=False),
    # cuDNN's classic (cuDNN 7/8) convolution kernels and their helpers.
    _rule(
        r"[shd]cudnn_|h\d+cudnn|s\d+cudnn|bf16_s\d+cudnn|^cudnn_(?:infer|train)_|^cudnn_(?:volta|ampere|turing|hopper)",
        "convolution",
        "cudnn",
        dtype=cudnn_dtype,
    ),
    _rule(
        r"cask_cudnn\w*::compute\w*OffsetsKernel|cask_cudnn\w*::\w*Offsets", "indexing", "cudnn", part_of="convolution"
    ),
    # cuDNN's CUTLASS convolutions (cuDNN 8/9): some names lose "fprop"/"wgrad" when shortened.
    _rule(r"^cutlass_cudnn|^cutlass__5x_cudnn", "convolution", "cudnn", dtype=gemm_dtype, template_dtype_first=True),
    _rule(r"cudnn::cnn::im2col|cudnn::\w*::im2col", "resampling", "cudnn", part_of="convolution"),
    # cuDNN's FFT and Winograd convolutions: the transforms of input and filter, and the filter flip.
    _rule(r"^fft[123]d_(?:r2c|c2r|c2c)|^DSE::", "fft", "cudnn", part_of="convolution"),
    _rule(
        r"flip_filter|region_transform|winograd_transform|generateWinogradTilesKernel",
        "pointwise",
        "cudnn",
        part_of="convolution",
    ),
    # cuDNN RNNs (LSTM, GRU), and ATen's own fused cells.
    _rule(
        r"elemWiseRNNcell|RNN_blockPersist|persistRNN|LSTM_elementWise|GRU_elementWise|RNN_elementWise|GENERIC_elementWise|RNN_bidirectional"
        r"|cudnn::rnn|rnn_\w*persist"
        r"|lstm_cell_(?:forward|backward)|gru_cell_(?:forward|backward)",
        "rnn",
        "cudnn",
    ),
    # ImplicitGemmConvolution: cuDNN's CUTLASS conv kernels, which CUPTI may leave mangled (_ZN17cutlass__5x_cudnn...).
    _rule(
        r"fprop|dgrad|wgrad|implicit_gemm|implicit_convolve|conv2d|convolve|winograd|ImplicitGemmConvolution",
        "convolution",
        "cudnn",
        template_dtype_first=True,
    ),
    _rule(
        r"^(?:cutlass3x_|cutlass_(?:\d+|tensorop|simt|wmma)_|cutlass::)",
        "gemm",
        "cutlass",
        layout=layout_any,
        dtype=gemm_dtype,
        fused_ops=gemm_epilogue,
    ),
    _rule(
        r"^sm\d+_xmma_gemm_|xmma_gemm",
        "gemm",
        "cublas",
        layout=layout_any,
        dtype=gemm_dtype,
        fused_ops=gemm_epilogue,
    ),
    _rule(
        r"^(ampere|volta|turing|maxwell|pascal|hopper|ada|sm\d+)_\w*gemm",
        "gemm",
        "cublas",
        layout=layout_any,
        dtype=gemm_dtype,
        fused_ops=gemm_epilogue,
    ),
    _rule(r"^magma\w*gemm", "gemm", "magma", dtype=magma_dtype),
    _rule(r"^magma", "linalg", "magma", dtype=magma_dtype),
    # cuSOLVER before the GEMV rule: its tridiagonal reductions run kernels named *_gemv_*.
    _rule(
        r"cusolver|^(?:syevj|gesvdj|gesvdbj|getrf|getrs|geqr2|geqrf|larft|larfb|larfg|kernel_trsm|trsm_|potrf|potrs|orgqr"
        r"|ormqr|laswp|trtri|gesvd|syevd|sytrd|sytd2|stedc|ormtr|orgtr|lacpy|laset|lascl|steqr|svd_\w*rotate"
        r"|copy_info_kernel|batch_(?:sym|svd|eig)|jacobi)",
        "linalg",
        "cusolver",
    ),
    _rule(r"gemv|gemvx", "gemm", "cublas"),
    _rule(r"^(?:fermi|kepler|maxwell)\w*gemm", "gemm", "cublas", layout=layout_any),
    _rule(r"^transpose_readWrite", "pointwise", "cublas", fused_ops=copy_op),
    # cuBLAS's older kernels named after the BLAS routine: sgemm_largek_lds64, dgemm_*.
    _rule(r"gemmSN_|gemmk1_kernel|gemm_kernel|^[sdhcz]gemm_", "gemm", "cublas", layout=layout_any),
    # A GEMM's helpers are not GEMMs: split-K reduction, beta scaling (C = beta*C before a GEMM
    # that accumulates into it), the bias epilogue, and the last reduction of a dot product.
    _rule(r"splitKreduce|SplitKReduce|split_k_reduce", "reduction", "cublas", part_of="gemm"),
    # The bias epilogue (its kernel takes over the bias of the GEMM before it: decoder's
    # bias_in_epilogues); printers that shorten names drop its cublasLt:: namespace.
    _rule(r"^scal_kernel|" + CUBLASLT_EPILOGUE.pattern, "pointwise", "cublas", part_of="gemm"),
    _rule(r"^reduce_1Block_kernel|^dot_kernel_reduce", "reduction", "cublas", part_of="gemm"),
    _rule(r"^dot_kernel", "gemm", "cublas"),
    # cuBLAS level-1 routines other than dot (no ATen GEMM op runs them, but linalg does).
    _rule(r"^(?:axpy|nrm2|asum|swap|rot|iamax|iamin|copy)_kernel", "pointwise", "cublas"),
    _rule(r"cublasLt::", "other", "cublas", places_kind=False),
    # CUB (and Thrust, built on it) kernels are named after their algorithm; their template
    # arguments often name ATen functors, so these rules come before ATen's.
    _rule(r"Device(?:Segmented)?RadixSort|DeviceMergeSort|DeviceSegmentedSort", "sort", "cub"),
    _rule(
        r"DeviceScan|DeviceCompactInit|DeviceSelectSweep|DeviceUniqueByKey|DevicePartition|DeviceRleSweep",
        "scan",
        "cub",
    ),
    _rule(r"DeviceReduce|DeviceSegmentedReduce|DeviceHistogram", "reduction", "cub"),
    _rule(r"cub::detail::for_each|DeviceFor|DeviceTransform|cuda_cub::core::_kernel_agent", "pointwise", "cub"),
    # cuDNN helpers around convolutions and batch norm.
    _rule(r"cudnn::bn_|cudnn::batchnorm", "reduction", "cudnn"),
    _rule(r"nchwToNhwc|nhwcToNchw|nhwcAddPadding|nchwAddPadding", "pointwise", "cudnn", fused_ops=copy_op),
    _rule(r"scalePackedTensor", "pointwise", "cudnn"),
    # Any other cuDNN kernel: the family is certain, the kind is not.
    _rule(r"cudnn::\w*::convertTensor_kernel|convertTensor_kernel", "pointwise", "cudnn", fused_ops=copy_op),
    _rule(r"cudnn::\w*::cubeTranspose|cudnn::\w*::transpose|^op_tensor_kernel|cudnnOpTensorOp", "pointwise", "cudnn"),
    # cuDNN's dropout states: curand states seeded for each thread.
    _rule(r"cudnn::initstates", "random", "cudnn"),
    _rule(r"cudnn::\w*(?:CTC|ctc|compute_alphas_and_betas|computeSoftmaxProbability|compute_grads)", "loss", "cudnn"),
    _rule(r"cudnn::engines_precompiled::(?:genericTranspose|setTensor|scaleTensor)", "pointwise", "cudnn"),
    _rule(r"cudnn::", "other", "cudnn", places_kind=False),
    # torchvision's CUDA ops (torchvision/csrc/ops/cuda, namespace vision::ops), before ATen's
    # im2col rule: NMS selects boxes (sort: selection), RoI align/pool and their position-sensitive
    # forms pool regions, deform_conv2d's im2col/col2im sample at learned offsets around its GEMM.
    # gather_keep_from_mask is mmcv's name too: torchvision's only with its namespace.
    _rule(r"nms_kernel_impl|vision::ops::[\w:() ]*?gather_keep_from_mask", "sort", "torchvision"),
    _rule(r"(?:ps_)?roi_(?:align|pool)_(?:forward|backward)_kernel_impl", "pooling", "torchvision"),
    # (every deformable_* kernel of torchvision is one of these: a name a table shortened still says so)
    _rule(
        r"deformable_(?:im2col|col2im)|vision::ops::[\w:() ]*?deformable_",
        "resampling",
        "torchvision",
        part_of="convolution",
    ),
    _rule(r"vision::ops::", "other", "torchvision", places_kind=False),
    # fbgemm_gpu's jagged-tensor GEMMs and softmax, and its jagged kernels, before ATen's
    # softmax and gather rules (jagged_..._gather_kernel_); the rest of fbgemm_gpu comes below.
    _rule(
        r"jagged_jagged_bmm|jagged_dense_bmm|dense_vec_jagged_2d_bmm|outer_prod_jagged_2d_output"
        r"|batched_dense_vec_jagged_2d_mul",
        "gemm",
        "fbgemm",
    ),
    _rule(r"jagged_softmax|segment_sum_csr", "reduction", "fbgemm"),
    _rule(r"fbgemm_gpu::[\w:() ]*?jagged_\w*kernel", "indexing", "fbgemm"),
    # ATen's dedicated kernels, before its generic elementwise/reduce rules below.
    _rule(r"conv_depthwise|depthwise_conv", "convolution", "aten"),
    _rule(r"Fused(?:Adam|Sgd|SGD|Adagrad)\w*Functor|fused_adam|fused_sgd", "optimizer", "aten"),
    # Mixed precision's gradient scaler (GradScaler.unscale_ and .update): its own kernels, and
    # the foreach and elementwise kernels its unscale runs (named after it in their lambdas).
    _rule(r"amp_update_scale_cuda_kernel|amp_(?:foreach_)?non_finite_check_and_unscale", "optimizer", "aten"),
    _rule(r"nll_loss|ctc_loss|multi_margin_loss|multilabel_margin_loss|ClassNLLCriterion", "loss", "aten"),
    _rule(r"kOptimizer\w*State|kPreconditionOptimizer|kOptimizerStatic8bit", "optimizer", "bitsandbytes"),
    _rule(
        r"radixSort|bitonicSort|MergeSort|SortKVInPlace|segmented_sort|sort_postprocess|fill_reverse_indices"
        r"|sbtopk::|mbtopk::|gatherTopK|gatherKthValue|gatherMedian|searchsorted",
        "sort",
        "aten",
    ),
    _rule(r"tensor_kernel_scan|scan_innermost_dim|scan_outer_dim", "scan", "aten"),
    _rule(
        r"max_pool|avg_pool|adaptive_?(?:ave|avg|max)|max_unpool|fractional_max_pool",
        "pooling",
        "aten",
    ),
    _rule(
        r"reflection_pad|replication_pad|upsample_|grid_sampler|im2col|col2im|vol2col|col2vol|nearest_neighbor_\dd",
        "resampling",
        "aten",
    ),
    # flip gathers through index_elementwise_kernel but is a copy: pointwise, like roll.
    _rule(r"flip_kernel", "pointwise", "aten", fused_ops=aten_ops),
    _rule(
        r"gather_kernel|_scatter_gather_elementwise|index_elementwise_kernel|index(?:Select|Func|Copy|Fill)\w*Index"
        r"|indexing_backward_kernel|embedding_backward|EmbeddingBag|embedding_bag|compute_grad_weight|krn_partial"
        r"|compute_num_of_partial_segments|sum_and_scatter|::scatter_kernel\b|take_put",
        "indexing",
        "aten",
    ),
    _rule(
        r"reduce_kernel|softmax|SoftMax|layer_norm|LayerNorm|norm_kernel|batch_norm|RowwiseMoments|GammaBetaBackward"
        r"|ComputeFusedParams|ComputeInternalGradients|ComputeBackwardFusedParams|renormRows|kernelHistogram"
        r"|LpNormFunctor|lpnorm_cleanup|GradGammaBeta|cuComputeGradInput|cuApplyLayerNorm|cuApplyRMSNorm|cuWelford",
        "reduction",
        "aten",
        fused_ops=aten_ops,
    ),
    _rule(
        r"elementwise_kernel|CatArrayBatchedCopy|multi_tensor_apply|distribution_|fill_kernel|copy_kernel"
        r"|triu_tril_kernel|roll_cuda_kernel|_assert_async|fused_dropout_kernel|adjacent_difference_kernel"
        r"|sampleMultinomial|randperm_handle_duplicate_keys|kernelPointwiseApply",
        "pointwise",
        "aten",
        fused_ops=aten_ops,
    ),
    # The Philox seed and offset for cuDNN's dropout and attention, read on the GPU.
    _rule(r"at::cuda::philox::unpack", "random", "aten"),
    # at::cuda::spin_kernel is torch.cuda._sleep: it waits, and is none of the kinds.
    _rule(r"at::cuda::.*?spin_kernel", "other", "aten"),
    # Kernels of other libraries, after ATen's rules: ATen's own kernels name these libraries
    # in their template arguments (curandStatePhilox4_32_10 in every random kernel).
    _rule(
        r"^(?:regular_fft|vector_fft|fft_|bluestein|regular_bluestein|prime_fft|postprocess|preprocess)|_fft_factor|cufft",
        "fft",
        "cufft",
    ),
    _rule(r"^(?:generate_seed_pseudo|gen_sequenced|curand|philox|xorwow|mtgp32)", "random", "curand"),
    # cuSPARSE: sparse x dense products (SpMM, SpMV) are GEMM work, C = beta*C before them its
    # helper (like cuBLAS's scal_kernel); its load-balancing partitions say nothing of a kind.
    _rule(r"cusparse::\w*(?:csrmm|coomm|bsrmm|spmm|SpMM|csrmv|coomv|bsrmv|spmv|SpMV)", "gemm", "cusparse"),
    _rule(r"cusparse::matrix_scalar_multiply", "pointwise", "cusparse", part_of="gemm"),
    _rule(r"cusparse::", "other", "cusparse", places_kind=False),
    # fbgemm_gpu (recommendation models): table-batched embeddings, sparse permutes, bucketize, FP8
    # quantize; named as pytorch/FBGEMM's sources name their __global__ functions.
    _rule(
        r"split_embedding\w*kernel|batched_embedding|embedding_codegen|dense_embedding|bounds_check_indices"
        r"|lxu_cache|linearize_cache|(?:^|::)_?permute_\w*kernel|permute_pooled_embs|jagged_\w*kernel"
        r"|l[rf]u_cache_\w*kernel|linearize_index\w*kernel"
        r"|fbgemm_gpu::[\w:() ]*?(?:index_select|index_add|masked_index|pack_segments|unpack_segments"
        r"|narrow_broadcast_indices|invert_permute|recat_copy)",
        "indexing",
        "fbgemm",
    ),
    _rule(r"complete_cumsum|scalar_cumsum", "scan", "fbgemm"),
    _rule(r"bucketize_sparse_features|_block_bucketize", "sort", "fbgemm"),
    _rule(
        r"FP8rowwise|FP8_rowwise|fused8bitrowwise|Fused8BitRowwise|float_to_FP8|_to_FP8|quantize_fp8"
        r"|fusednbitrowwise|FusedNBitRowwise|_8bit_quantize|FP8_quantize|mx4_|_mx4|msfp_shared_exponent",
        "pointwise",
        "fbgemm",
    ),
    _rule(r"_get_8bit_qparam|_get_FP8_qparam", "reduction", "fbgemm"),  # each row's min and max
    _rule(r"fbgemm_gpu::[\w:() ]*?zipf", "random", "fbgemm"),
    _rule(r"fbgemm", "other", "fbgemm", places_kind=False),
    # Triton kernels of Inductor before its names said their kind (triton__0d1d2d...).
    _rule(r"^triton__\d", "other", "inductor", places_kind=False),
    _rule(r"^void at::native::|at::native::|at::cuda::", "other", "aten", fused_ops=aten_ops, places_kind=False),
)
