"""What the launching op says about a kernel: the family of work, its inputs' dtype, and what
it computes.

Used only where the name is silent: a kernel that no rule places, under ``aten::mm``, is
GEMM work whatever its library calls it; one under ``aten::_fft_r2c`` is FFT work.
"""

from __future__ import annotations

import re

_EXACT = {
    "gemm": (
        "aten::mm",
        "aten::addmm",
        "aten::_addmm_activation",
        "aten::bmm",
        "aten::baddbmm",
        "aten::addbmm",
        "aten::_scaled_mm",
        "aten::_scaled_grouped_mm",
        "aten::_grouped_mm",
        "aten::_int_mm",
        "aten::addmv",
        "aten::mv",
        "aten::dot",
        "aten::vdot",
        "aten::addr",
        "aten::ger",
        "aten::outer",
    ),
    "rnn": ("aten::_cudnn_rnn", "aten::_cudnn_rnn_backward", "aten::miopen_rnn", "aten::miopen_rnn_backward"),
    "convolution": (
        "aten::cudnn_convolution",
        "aten::cudnn_convolution_transpose",
        "aten::cudnn_convolution_relu",
        "aten::cudnn_convolution_add_relu",
        "aten::miopen_convolution",
        "aten::miopen_convolution_transpose",
        "aten::miopen_depthwise_convolution",
        "aten::convolution_backward",
        "aten::_convolution",
        "aten::_slow_conv2d_forward",
        "aten::_slow_conv2d_backward",
        "aten::slow_conv3d_forward",
        "aten::slow_conv_transpose2d",
        "aten::slow_conv_transpose3d",
        "aten::_conv_depthwise2d",
        "aten::conv_depthwise3d",
    ),
    "random": (
        "aten::normal_",
        "aten::uniform_",
        "aten::bernoulli_",
        "aten::bernoulli",
        "aten::random_",
        "aten::exponential_",
        "aten::geometric_",
        "aten::log_normal_",
        "aten::cauchy_",
        "aten::multinomial",
        "aten::randperm",
        "aten::rand",
        "aten::randn",
        "aten::randint",
        "aten::rand_like",
        "aten::randn_like",
        "aten::randint_like",
        "aten::poisson",
        "aten::_standard_gamma",
        "aten::_sample_dirichlet",
        "aten::binomial",
    ),
    "attention": (
        "aten::_scaled_dot_product_flash_attention",
        "aten::_scaled_dot_product_flash_attention_backward",
        "aten::_scaled_dot_product_efficient_attention",
        "aten::_scaled_dot_product_efficient_attention_backward",
        "aten::_scaled_dot_product_cudnn_attention",
        "aten::_scaled_dot_product_cudnn_attention_backward",
        "aten::_flash_attention_forward",
        "aten::_flash_attention_backward",
        "aten::_efficient_attention_forward",
        "aten::_efficient_attention_backward",
    ),
    "sort": ("aten::sort", "aten::topk", "aten::kthvalue", "aten::median", "aten::searchsorted", "aten::bucketize"),
    "scan": ("aten::cumsum", "aten::cumprod", "aten::_cummax_helper", "aten::_cummin_helper", "aten::logcumsumexp"),
    "optimizer": ("aten::_fused_adam_", "aten::_fused_adamw_", "aten::_fused_sgd_", "aten::_fused_adagrad_"),
    "loss": ("aten::_cudnn_ctc_loss", "aten::_ctc_loss", "aten::_ctc_loss_backward", "aten::nll_loss2d_forward"),
    "reduction": (
        "aten::sum",
        "aten::mean",
        "aten::prod",
        "aten::amax",
        "aten::amin",
        "aten::max",
        "aten::min",
        "aten::argmax",
        "aten::argmin",
        "aten::std",
        "aten::var",
        "aten::std_mean",
        "aten::var_mean",
        "aten::norm",
        "aten::linalg_vector_norm",
        "aten::logsumexp",
        "aten::all",
        "aten::any",
        "aten::_softmax",
        "aten::_log_softmax",
        "aten::native_layer_norm",
        "aten::native_group_norm",
        "aten::native_batch_norm",
        "aten::_fused_rms_norm",
    ),
}
_KIND_OF_OP = {op: kind for kind, ops in _EXACT.items() for op in ops}

_PREFIXES = (
    (re.compile(r"^aten::_?fft_"), "fft"),
    (re.compile(r"^aten::_?linalg_"), "linalg"),
    (
        re.compile(
            r"^aten::(?:cholesky|_cholesky|lu_|_lu_|triangular_solve|geqrf|orgqr|ormqr|inverse|_inverse|svd|_svd"
            r"|symeig|eig|lstsq|lu_solve|lu_unpack|cholesky_solve|cholesky_inverse|logdet|slogdet|det|pinverse)"
        ),
        "linalg",
    ),
    (re.compile(r"^aten::(?:cudnn_|miopen_)?(?:conv|convolution)"), "convolution"),
    (re.compile(r"^aten::(?:max_pool|avg_pool|adaptive_max_pool|adaptive_avg_pool|fractional_max_pool)"), "pooling"),
    (re.compile(r"^aten::(?:upsample_|grid_sampler|reflection_pad|replication_pad|im2col|col2im)"), "resampling"),
    (re.compile(r"^aten::(?:nll_loss|ctc_loss|_ctc_loss|multi_margin_loss|multilabel_margin_loss)"), "loss"),
)


def kind_of_op(op: str | None) -> str | None:
    """The family of work of a launching op, or None where the op does not say."""
    if op is None:
        return None
    kind = _KIND_OF_OP.get(op)
    if kind is not None:
        return kind
    for pattern, prefixed_kind in _PREFIXES:
        if pattern.match(op):
            return prefixed_kind
    return None


# addmm's bias-add runs in its GEMM: through cuBLASLt's bias epilogue for a 1-D bias (whose
# name may say so: nvjet's "_bias_"), or as beta=1 on an output a copy kernel filled with the
# bias first (sm80_xmma_gemm_f32f32_*, nvjet's "_badd_"); either way the GEMM does the add.
_BIAS_IN_GEMM = frozenset(("aten::addmm", "aten::_addmm_activation"))
# The kinds of ATen's elementwise and reduction machinery, whose kernels compute their op.
_COMPUTES_ITS_OP = frozenset(("pointwise", "reduction", "persistent_reduction", "loss"))


def fused_ops_of_op(op: str | None, kind: str, family: str) -> tuple[str, ...]:
    """What the launching op says a kernel computes where its name says nothing: ``("bias",)``
    for the GEMM of ``aten::addmm``, and for an ATen elementwise, reduction or loss kernel the
    op's name (``aten::clamp_min`` -> ``clamp_min``; in place, ``aten::add_`` -> ``add``)."""
    if op is None:
        return ()
    if kind == "gemm":
        return ("bias",) if op in _BIAS_IN_GEMM else ()
    if family != "aten" or kind not in _COMPUTES_ITS_OP or not op.startswith("aten::"):
        return ()
    name = op[len("aten::") :]
    # An in-place op computes what its functional form does; "__and__" is no in-place op.
    return (name[:-1] if name.endswith("_") and not name.endswith("__") else name,)


# The "Input type" strings the profiler records for an op's inputs (record_shapes=True).
_INPUT_TYPES = {
    "float": "fp32",
    "double": "fp64",
    "c10::Half": "fp16",
    "c10::BFloat16": "bf16",
    "c10::Float8_e4m3fn": "fp8",
    "c10::Float8_e5m2": "fp8",
    "c10::Float8_e4m3fnuz": "fp8",
    "c10::Float8_e5m2fnuz": "fp8",
    "c10::Float8_e8m0fnu": "fp8",
    "c10::complex<float>": "complex64",
    "c10::complex<double>": "complex128",
    "signed char": "int8",
    "unsigned char": "uint8",
}


def dtype_of_inputs(input_types: tuple[str, ...]) -> str | None:
    """The element type of an op's first tensor input with a floating (or 8-bit) type.

    Index and size inputs (``long int``, ``int``) and flags (``bool``) are passed over: they
    are never what a kernel computes in.
    """
    for input_type in input_types:
        dtype = _INPUT_TYPES.get(input_type)
        if dtype is not None:
            return dtype
    return None
