"""The naming grammar of kernel libraries: one ordered table of rules, ``RULES``.

Pure functions over strings: no torch import, so the rules are testable anywhere and
usable on names read from a trace file.

The first rule whose pattern is found in the name decides the kind and family. Layout,
dtype and fused ops are then read by the rule's own extractors. An unknown name is
``kind="other"``, never an error: new libraries appear faster than rules do, and a test
must not crash on them (``decode.py`` then asks the other evidence).

``fused_ops`` means "the operations this kernel computes, as far as its name tells":
the origin ops of an Inductor kernel (``("_unsafe_view", "gelu", "mul")``), the op of an
ATen elementwise functor (``("gelu",)``), the epilogue of a GEMM (``("bias",)``). One field
for all three lets a test compare eager and compiled runs with the same query.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

# -- extractors -------------------------------------------------------------------------

_LAYOUT_TOKEN = re.compile(r"(?:^|_)(nn|nt|tn|tt)(?:_|$)", re.IGNORECASE)
_LAYOUT_TOKEN3 = re.compile(r"_([nt]{3})_align", re.IGNORECASE)
_NVJET_LAYOUT = re.compile(r"_([NT]{3})$")

# Type letters of cuBLASLt JIT (nvjet) names: <A/B type><compute type><output type>.
_NVJET_TYPES = {"h": "fp16", "t": "bf16", "s": "fp32", "d": "fp64", "e": "fp8", "i": "int8", "q": "fp8"}
# fp8 GEMMs put two letters for the fp8 A and B before the three: nvjet_sm90_qqtst_* (e4m3),
# nvjet_sm90_qrtst_* (e4m3 x e5m2).
_NVJET_DTYPE = re.compile(r"^nvjet_(?:sm\d+_)?([qr][qr])?([a-z])[a-z]{2}_")

_DTYPE_TOKENS = (
    (re.compile(r"bf16|[bB]float16|BFloat16"), "bf16"),
    (re.compile(r"[eE]4[mM]3|[eE]5[mM]2|fp8|Float8"), "fp8"),
    (re.compile(r"fp16|(?<![A-Za-z])f16|Half|(?:^|_)half(?:_|$)|h884|h1688|h16816|hgemm"), "fp16"),
    (re.compile(r"tf32"), "tf32"),
    (re.compile(r"(?<![A-Za-z])f64|fp64|double|dgemm"), "fp64"),
    # complex GEMMs of cuBLAS (cgemm) and the "gcgemm" of cuDNN's FFT convolutions
    (re.compile(r"[gc]cgemm|Cgemm"), "complex64"),
    (re.compile(r"zgemm|Zgemm"), "complex128"),
    (re.compile(r"(?<![A-Za-z])f32|fp32|(?<![bB])float(?!\d)|sgemm"), "fp32"),
    (re.compile(r"int8|(?<![A-Za-z])i8|imma|i16\d{2,4}gemm|_s8_"), "int8"),
)


def _first_dtype(text: str) -> str | None:
    best: tuple[int, str] | None = None
    for pattern, dtype in _DTYPE_TOKENS:
        found = pattern.search(text)
        if found and (best is None or found.start() < best[0]):
            best = (found.start(), dtype)
    return best[1] if best else None


# CUTLASS/cuBLAS TF32 tensor-core SGEMMs (``cutlass_80_tensorop_s1688gemm_*``) name no input
# type: the "s" kernel of those instruction shapes reads fp32 (computing in TF32). Other
# input types put their own token in the name (``f16_s1688gemm``, ``bf16_s16816gemm``).
_TF32_SGEMM = re.compile(r"s16(?:88|84)\w*gemm")


def _gemm_dtype(name: str) -> str | None:
    dtype = _first_dtype(name)
    if dtype is None and _TF32_SGEMM.search(name):
        return "fp32"
    return dtype


def _layout_any(name: str) -> str | None:
    three = _LAYOUT_TOKEN3.search(name)
    if three:
        return three.group(1)[:2].lower()
    # The last layout token wins: tile shapes and types come first in these names. The
    # head (before template arguments) is read first: a wrapper's arguments may repeat it.
    head = name.split("(")[0]
    tokens = _LAYOUT_TOKEN.findall(head.split("<")[0]) or _LAYOUT_TOKEN.findall(re.sub(r"[<>,:\s]+", "_", head))
    return tokens[-1].lower() if tokens else None


def _nvjet_layout(name: str) -> str | None:
    found = _NVJET_LAYOUT.search(name)
    return found.group(1)[:2].lower() if found else None


def _nvjet_dtype(name: str) -> str | None:
    found = _NVJET_DTYPE.match(name)
    if found is None:
        return None
    return "fp8" if found.group(1) else _NVJET_TYPES.get(found.group(2))


_GEMM_EPILOGUES = (("bias", "bias"), ("relu", "relu"), ("gelu", "gelu"), ("swish", "silu"))


def _gemm_epilogue(name: str) -> tuple[str, ...]:
    tokens = set(re.split(r"[_<>,:\s]+", name.lower()))
    return tuple(op for token, op in _GEMM_EPILOGUES if token in tokens)


# Inductor names a kernel "triton_<kind>_fused_<op>_<op>..._<n>" from its origin aten ops,
# joined with "_". Op names contain "_" themselves, so the joined string is split back
# by greedy longest match against known op names; an unknown word stays a word.
_KNOWN_ATEN_OPS = frozenset(
    (
        "_unsafe_view",
        "_to_copy",
        "_softmax",
        "_log_softmax",
        "_softmax_backward_data",
        "_log_softmax_backward_data",
        "_scaled_dot_product_efficient_attention",
        "_scaled_dot_product_flash_attention",
        "_scaled_mm",
        "_fused_rms_norm",
        "native_layer_norm",
        "native_layer_norm_backward",
        "native_batch_norm_backward",
        "native_group_norm",
        "native_group_norm_backward",
        "native_dropout",
        "native_dropout_backward",
        "gelu_backward",
        "silu_backward",
        "sigmoid_backward",
        "tanh_backward",
        "threshold_backward",
        "hardtanh_backward",
        "embedding_dense_backward",
        "nll_loss_forward",
        "nll_loss_backward",
        "mse_loss",
        "mse_loss_backward",
        "var_mean",
        "scatter_add",
        "index_put",
        "index_select",
        "constant_pad_nd",
        "clamp_min",
        "clamp_max",
        "masked_fill",
        "full_like",
        "zeros_like",
        "ones_like",
        "randn_like",
        "empty_like",
        "new_zeros",
        "new_ones",
        "convolution_backward",
        "select_backward",
        "slice_backward",
        "as_strided_scatter",
        "slice_scatter",
        "select_scatter",
        "addcmul",
        "addcdiv",
        "lerp",
        "rsub",
        "logical_not",
        "bitwise_and",
        "bitwise_or",
    )
)


def _split_fused(joined: str) -> tuple[str, ...]:
    words: list[str] = []
    pending_underscore = ""
    for word in joined.split("_"):
        if word == "":
            pending_underscore += "_"
            continue
        words.append(pending_underscore + word)
        pending_underscore = ""
    ops: list[str] = []
    i = 0
    while i < len(words):
        for j in range(len(words), i + 1, -1):
            candidate = "_".join(words[i:j])
            if candidate in _KNOWN_ATEN_OPS:
                ops.append(candidate)
                i = j
                break
        else:
            ops.append(words[i])
            i += 1
    return tuple(ops)


_INDUCTOR_KINDS = {
    "poi": "pointwise",
    "red": "reduction",
    "per": "persistent_reduction",
    "tem": "template",
    "for": "pointwise",
    "sca": "reduction",
    "spl": "reduction",
    "mix": "reduction",
}


def _inductor_ops(name: str) -> tuple[str, ...]:
    body = name[len("triton_xxx_") :]
    if body.startswith("fused"):
        body = body[len("fused") :]
    body = re.sub(r"(?:^|_)\d+$", "", body[1:] if body.startswith("_") else body)
    return _split_fused(body) if body else ()


# ATen elementwise kernels carry their functor in the template arguments; the functor
# names the op. Ordered: "GeluBackward" must win over "Gelu".
_ATEN_FUNCTORS = (
    (re.compile(r"gelu_?backward", re.IGNORECASE), "gelu_backward"),
    (re.compile(r"gelu", re.IGNORECASE), "gelu"),
    (re.compile(r"silu_?backward", re.IGNORECASE), "silu_backward"),
    (re.compile(r"silu", re.IGNORECASE), "silu"),
    (re.compile(r"sigmoid", re.IGNORECASE), "sigmoid"),
    (re.compile(r"tanh", re.IGNORECASE), "tanh"),
    (re.compile(r"threshold|relu", re.IGNORECASE), "relu"),
    (re.compile(r"MulFunctor|mul_kernel|binary_internal::MulFunctor", re.IGNORECASE), "mul"),
    (re.compile(r"DivFunctor|div_(?:true|floor|trunc)_kernel", re.IGNORECASE), "div"),
    (re.compile(r"CUDAFunctor_add|AddFunctor|add_kernel", re.IGNORECASE), "add"),
    (re.compile(r"sub_kernel|CUDAFunctor_sub", re.IGNORECASE), "sub"),
    (re.compile(r"exp_kernel", re.IGNORECASE), "exp"),
    (re.compile(r"rsqrt", re.IGNORECASE), "rsqrt"),
    (re.compile(r"pow_tensor|pow_kernel", re.IGNORECASE), "pow"),
    (re.compile(r"copy_kernel|CatArrayBatchedCopy", re.IGNORECASE), "copy"),
    (re.compile(r"FillFunctor|fill_kernel", re.IGNORECASE), "fill"),
    (re.compile(r"normal_kernel|uniform_kernel|distribution", re.IGNORECASE), "random"),
    (re.compile(r"bernoulli|multinomial|randperm", re.IGNORECASE), "random"),
    (re.compile(r"dropout", re.IGNORECASE), "dropout"),
    (re.compile(r"MeanOps", re.IGNORECASE), "mean"),
    (re.compile(r"sum_functor|ReduceAdd|sum_kernel", re.IGNORECASE), "sum"),
    (re.compile(r"MaxOps|max_kernel|MaxNanFunctor", re.IGNORECASE), "max"),
    (re.compile(r"MinOps|min_kernel|MinNanFunctor", re.IGNORECASE), "min"),
    (re.compile(r"softmax", re.IGNORECASE), "softmax"),
    (re.compile(r"layer_norm|LayerNorm", re.IGNORECASE), "layer_norm"),
    (re.compile(r"AbsFunctor|abs_kernel", re.IGNORECASE), "abs"),
    (re.compile(r"neg_kernel", re.IGNORECASE), "neg"),
    (re.compile(r"where_kernel", re.IGNORECASE), "where"),
)


def _aten_ops(name: str) -> tuple[str, ...]:
    for pattern, op in _ATEN_FUNCTORS:
        if pattern.search(name):
            return (op,)
    return ()


_NCCL_COLLECTIVES = (
    "AllReduce",
    "AllGather",
    "ReduceScatter",
    "Broadcast",
    "Reduce",
    "SendRecv",
    "Send",
    "Recv",
    "AllToAll",
)
_NCCL_DTYPES = {
    "bf16": "bf16",
    "bfloat16": "bf16",
    "f16": "fp16",
    "half": "fp16",
    "f32": "fp32",
    "float": "fp32",
    "f64": "fp64",
    "double": "fp64",
    "i8": "int8",
    "int8": "int8",
    "u8": "uint8",
    "i32": "int32",
    "u32": "uint32",
    "i64": "int64",
    "u64": "uint64",
    "f8e4m3": "fp8",
    "f8e5m2": "fp8",
}


def _nccl_collective(name: str) -> str | None:
    for collective in _NCCL_COLLECTIVES:
        if collective in name:
            return collective
    return None


def _nccl_dtype(name: str) -> str | None:
    for token in reversed(re.split(r"[_<>,:()\s]+", name)):
        dtype = _NCCL_DTYPES.get(token.lower())
        if dtype:
            return dtype
    return None


# ROCm Tensile (rocBLAS, hipBLASLt) GEMMs: Cijk_<A index order>_<B index order>_<types>_...;
# A as "lik" and B as "jlk" are the transposed operands; the first type letter is A's and B's.
_TENSILE = re.compile(r"^Cijk_A(ilk|lik)_B(ljk|jlk)_(I8|F8|B8|[SDHBCZ])")
_TENSILE_TYPES = {"S": "fp32", "D": "fp64", "H": "fp16", "B": "bf16", "C": "complex64", "Z": "complex128"}
_TENSILE_TYPES.update({"I8": "int8", "F8": "fp8", "B8": "fp8"})


def _tensile_layout(name: str) -> str | None:
    found = _TENSILE.match(name)
    if found is None:
        return None
    return ("t" if found.group(1) == "lik" else "n") + ("t" if found.group(2) == "jlk" else "n")


def _tensile_dtype(name: str) -> str | None:
    found = _TENSILE.match(name)
    return _TENSILE_TYPES.get(found.group(3)) if found else None


# cuDNN's classic kernels say their input type with one letter before "cudnn":
# volta_scudnn_128x64_relu_interior_nn_v1, cudnn_infer_ampere_h16816cudnn_...
_CUDNN_TYPE = re.compile(r"(?:^|_)(s|h|d|bf16_?s|h\d+|s\d+)cudnn")


def _cudnn_dtype(name: str) -> str | None:
    found = _CUDNN_TYPE.search(name)
    if found is None:
        return _first_dtype(name)
    # volta_fp16_s884cudnn_fp16_*: an input type named before the instruction wins over it.
    named = _first_dtype(name[: found.start()])
    if named is not None:
        return named
    letter = found.group(1)
    if letter.startswith("bf16"):
        return "bf16"
    return {"s": "fp32", "h": "fp16", "d": "fp64"}[letter[0]]


_MAGMA_TYPE = re.compile(r"magma_([sdcz])")
_BLAS_TYPES = {"s": "fp32", "d": "fp64", "c": "complex64", "z": "complex128", "h": "fp16"}


def _magma_dtype(name: str) -> str | None:
    found = _MAGMA_TYPE.search(name)
    return _BLAS_TYPES[found.group(1)] if found else None


# cuDNN's generated SDPA kernels say "f16" for any 16-bit input, bf16 included (the same
# cudnn_generated_fort_native_sdpa_*_f16_* name ran for c10::BFloat16 and c10::Half inputs on
# an H100): the name gives no dtype there, and the op's inputs may.
_AMBIGUOUS_F16 = re.compile(r"(?:^|_)f16(?:_|$)")


def _cudnn_sdpa_dtype(name: str) -> str | None:
    if _AMBIGUOUS_F16.search(name) and not re.search(r"bf16|bfloat16", name):
        return None
    return _first_dtype(name)


def _copy_op(_: str) -> tuple[str, ...]:
    return ("copy",)


def _none(_: str) -> None:
    return None


def _no_ops(_: str) -> tuple[str, ...]:
    return ()


@dataclass(frozen=True)
class Rule:
    """One line of the decoding table."""

    pattern: re.Pattern[str]
    kind: str
    family: str
    layout: Callable[[str], str | None] = _none
    dtype: Callable[[str], str | None] = _first_dtype
    fused_ops: Callable[[str], tuple[str, ...]] = _no_ops
    collective: Callable[[str], str | None] = _none
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
    layout: Callable[[str], str | None] = _none,
    dtype: Callable[[str], str | None] = _first_dtype,
    fused_ops: Callable[[str], tuple[str, ...]] = _no_ops,
    collective: Callable[[str], str | None] = _none,
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
        dtype_anywhere=dtype is not _first_dtype,
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
RULES: tuple[Rule, ...] = (
    _rule(r"nccl", "communication", "nccl", dtype=_nccl_dtype, collective=_nccl_collective),
    _rule(r"^triton_(poi|red|per|tem|for|sca|spl|mix)_", "pointwise", "inductor", fused_ops=_inductor_ops),
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
    _rule(r"cudnn\w*(sdpa|fmha|attention)|cudnn::fusion::", "attention", "cudnn", dtype=_cudnn_sdpa_dtype),
    _rule(r"^aiter::.*?(?:fmha|attention|mha_)", "attention", "aiter"),
    _rule(r"fmha|AttentionKernel|attention_kernel|efficient_attention|mem_eff", "attention", "mem_efficient"),
    _rule(r"^nvjet_", "gemm", "nvjet", layout=_nvjet_layout, dtype=_nvjet_dtype, fused_ops=_gemm_epilogue),
    # cuDNN's CUTLASS split-K reduce after a convolution (like cuBLAS's splitKreduce after a GEMM).
    _rule(r"cudnn::reduction::|cutlass_cudnn\w*::\w*ReduceSplitK", "reduction", "cudnn", part_of="convolution"),
    # ROCm: Tensile GEMMs (rocBLAS and hipBLASLt), Composable Kernel, MIOpen.
    _rule(r"^Cijk_", "gemm", "tensile", layout=_tensile_layout, dtype=_tensile_dtype, fused_ops=_gemm_epilogue),
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
    _rule(r"__amd_rocclr_copy", "pointwise", "hip", fused_ops=_copy_op),
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
        dtype=_cudnn_dtype,
    ),
    _rule(
        r"cask_cudnn\w*::compute\w*OffsetsKernel|cask_cudnn\w*::\w*Offsets", "indexing", "cudnn", part_of="convolution"
    ),
    # cuDNN's CUTLASS convolutions (cuDNN 8/9): some names lose "fprop"/"wgrad" when shortened.
    _rule(r"^cutlass_cudnn|^cutlass__5x_cudnn", "convolution", "cudnn", dtype=_gemm_dtype, template_dtype_first=True),
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
        layout=_layout_any,
        dtype=_gemm_dtype,
        fused_ops=_gemm_epilogue,
    ),
    _rule(
        r"^sm\d+_xmma_gemm_|xmma_gemm",
        "gemm",
        "cublas",
        layout=_layout_any,
        dtype=_gemm_dtype,
        fused_ops=_gemm_epilogue,
    ),
    _rule(
        r"^(ampere|volta|turing|maxwell|pascal|hopper|ada|sm\d+)_\w*gemm",
        "gemm",
        "cublas",
        layout=_layout_any,
        dtype=_gemm_dtype,
        fused_ops=_gemm_epilogue,
    ),
    _rule(r"^magma\w*gemm", "gemm", "magma", dtype=_magma_dtype),
    _rule(r"^magma", "linalg", "magma", dtype=_magma_dtype),
    # cuSOLVER before the GEMV rule: its tridiagonal reductions run kernels named *_gemv_*.
    _rule(
        r"cusolver|^(?:syevj|gesvdj|gesvdbj|getrf|getrs|geqr2|geqrf|larft|larfb|larfg|kernel_trsm|trsm_|potrf|potrs|orgqr"
        r"|ormqr|laswp|trtri|gesvd|syevd|sytrd|sytd2|stedc|ormtr|orgtr|lacpy|laset|lascl|steqr|svd_\w*rotate"
        r"|copy_info_kernel|batch_(?:sym|svd|eig)|jacobi)",
        "linalg",
        "cusolver",
    ),
    _rule(r"gemv|gemvx", "gemm", "cublas"),
    _rule(r"^(?:fermi|kepler|maxwell)\w*gemm", "gemm", "cublas", layout=_layout_any),
    _rule(r"^transpose_readWrite", "pointwise", "cublas", fused_ops=_copy_op),
    # cuBLAS's older kernels named after the BLAS routine: sgemm_largek_lds64, dgemm_*.
    _rule(r"gemmSN_|gemmk1_kernel|gemm_kernel|^[sdhcz]gemm_", "gemm", "cublas", layout=_layout_any),
    # A GEMM's helpers are not GEMMs: split-K reduction, beta scaling (C = beta*C before a GEMM
    # that accumulates into it), the bias epilogue, and the last reduction of a dot product.
    _rule(r"splitKreduce|SplitKReduce|split_k_reduce", "reduction", "cublas", part_of="gemm"),
    _rule(r"^scal_kernel|cublasLt::epilogue::", "pointwise", "cublas", part_of="gemm"),
    _rule(r"^reduce_1Block_kernel|^dot_kernel_reduce", "reduction", "cublas", part_of="gemm"),
    _rule(r"^dot_kernel", "gemm", "cublas"),
    # cuBLAS level-1 routines other than dot (no ATen GEMM op runs them, but linalg does).
    _rule(r"^(?:axpy|nrm2|asum|swap|rot|iamax|iamin|copy)_kernel", "pointwise", "cublas"),
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
    _rule(r"nchwToNhwc|nhwcToNchw|nhwcAddPadding|nchwAddPadding", "pointwise", "cudnn", fused_ops=_copy_op),
    _rule(r"scalePackedTensor", "pointwise", "cudnn"),
    # Any other cuDNN kernel: the family is certain, the kind is not.
    _rule(r"cudnn::\w*::convertTensor_kernel|convertTensor_kernel", "pointwise", "cudnn", fused_ops=_copy_op),
    _rule(r"cudnn::\w*::cubeTranspose|cudnn::\w*::transpose|^op_tensor_kernel|cudnnOpTensorOp", "pointwise", "cudnn"),
    # cuDNN's dropout states: curand states seeded for each thread.
    _rule(r"cudnn::initstates", "random", "cudnn"),
    _rule(r"cudnn::\w*(?:CTC|ctc|compute_alphas_and_betas|computeSoftmaxProbability|compute_grads)", "loss", "cudnn"),
    _rule(r"cudnn::engines_precompiled::(?:genericTranspose|setTensor|scaleTensor)", "pointwise", "cudnn"),
    _rule(r"cudnn::", "other", "cudnn", places_kind=False),
    # ATen's dedicated kernels, before its generic elementwise/reduce rules below.
    _rule(r"conv_depthwise|depthwise_conv", "convolution", "aten"),
    _rule(r"Fused(?:Adam|Sgd|SGD|Adagrad)\w*Functor|fused_adam|fused_sgd", "optimizer", "aten"),
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
    _rule(r"flip_kernel", "pointwise", "aten", fused_ops=_aten_ops),
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
        fused_ops=_aten_ops,
    ),
    _rule(
        r"elementwise_kernel|CatArrayBatchedCopy|multi_tensor_apply|distribution_|fill_kernel|copy_kernel"
        r"|triu_tril_kernel|roll_cuda_kernel|_assert_async|fused_dropout_kernel|adjacent_difference_kernel"
        r"|sampleMultinomial|randperm_handle_duplicate_keys|kernelPointwiseApply",
        "pointwise",
        "aten",
        fused_ops=_aten_ops,
    ),
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
    # fbgemm_gpu (recommendation models): table-batched embeddings, sparse permutes, bucketize, FP8
    # quantize; named as pytorch/FBGEMM's sources name their __global__ functions.
    _rule(
        r"split_embedding\w*kernel|batched_embedding|embedding_codegen|dense_embedding|bounds_check_indices"
        r"|lxu_cache|linearize_cache|(?:^|::)_?permute_\w*kernel|permute_pooled_embs|jagged_\w*kernel",
        "indexing",
        "fbgemm",
    ),
    _rule(r"bucketize_sparse_features|_block_bucketize", "sort", "fbgemm"),
    _rule(
        r"FP8rowwise|FP8_rowwise|fused8bitrowwise|Fused8BitRowwise|float_to_FP8|_to_FP8|quantize_fp8",
        "pointwise",
        "fbgemm",
    ),
    _rule(r"fbgemm", "other", "fbgemm", places_kind=False),
    # Triton kernels of Inductor before its names said their kind (triton__0d1d2d...).
    _rule(r"^triton__\d", "other", "inductor", places_kind=False),
    _rule(r"^void at::native::|at::native::|at::cuda::", "other", "aten", fused_ops=_aten_ops, places_kind=False),
)
