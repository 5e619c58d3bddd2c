"""Liger-Kernel's Triton kernels: what each computes, and the versions that ship it.

Liger's kernels are ``@triton.jit`` functions named after themselves (``_rms_norm_forward_kernel``),
with no library marker, and a few of the names look like ATen's (``_layer_norm_forward_kernel``,
``_softmax_single_block_forward_kernel``). So a name here places a kernel only with evidence
that it is this Triton kernel (``liger_kernel``): the capture learned it is a Triton kernel,
Inductor launched it, or a Liger autograd Function (``LigerRMSNormFunction``, its backward
``LigerRMSNormFunctionBackward``) launched it. A name alone never does.

The table is read from the sources of every liger-kernel release from 0.5.0 to 0.8.5 (the
``liger_kernel/ops`` Triton kernels that run on CUDA and ROCm; the Huawei NPU backend's are
left out) by ``tools/liger_kernels.py``; ``tests/data/liger_kernels.tsv`` is its output and
``tests/unit/decode/test_liger.py`` checks each row against it. A first version of 0.5.0 means
"0.5.0 or older". Each kind was decided from the kernel's source: a row reduction (norms,
softmax, log-softmax) is a ``reduction``, a kernel with ``tl.dot`` a ``gemm`` (or ``attention``
for the neighborhood-attention kernels), elementwise work (SwiGLU, GEGLU, RoPE, DyT forward)
``pointwise``, a loss or divergence (cross entropy, KL, JSD, TVD, GRPO) ``loss``. Where a kernel
does the work of a few eager ATen kernels, its fused ops name their ops (``_COMPUTES``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The newest liger-kernel release read.
NEWEST = "0.8.5"


@dataclass(frozen=True)
class LigerKernel:
    name: str
    kind: str
    path: str  # its file under liger_kernel/ops/
    first: str  # the first liger-kernel version read that ships it ("0.5.0": that or older)
    last: str = NEWEST  # the last version read that ships it
    part_of: str | None = None
    fused_ops: tuple[str, ...] = ()  # the eager ATen ops whose work it does (_COMPUTES)


# Kernels whose names other code uses too (Triton's matmul tutorial is matmul_kernel): placed
# only where a Liger autograd Function launched them, not on Triton evidence alone.
GENERIC_NAMES = frozenset(
    (
        "matmul_kernel",
        "embedding_forward_kernel",
        "embedding_backward_kernel",
        "element_mul_kernel",
        "_mask_fwd_kernel",
        "_mask_bwd_kernel",
    )
)

# File under liger_kernel/ops/ -> (kernel, kind, first version that ships it).
_TABLE: dict[str, tuple[tuple[str, str, str], ...]] = {
    "attn_res.py": (
        # Attention residuals: RMSNorm, a dot with a learned query and a softmax over depth, per token.
        ("_attn_res_bwd_kernel", "reduction", "0.8.0"),
        ("_attn_res_fwd_kernel", "reduction", "0.8.0"),
    ),
    "cross_entropy.py": (("liger_cross_entropy_kernel", "loss", "0.5.0"),),
    "dyt.py": (
        # DyT: tanh(alpha * x) * gamma + beta; the backward sums alpha's, gamma's and beta's gradients.
        ("_dyt_bwd_kernel", "reduction", "0.5.6"),
        ("_dyt_fwd_kernel", "pointwise", "0.5.6"),
    ),
    "experimental/embedding.py": (
        ("embedding_backward_kernel", "indexing", "0.5.0"),
        ("embedding_forward_kernel", "indexing", "0.5.0"),
    ),
    "experimental/mm_int8int2.py": (
        # An int8 x int2 GEMM.
        ("matmul_kernel", "gemm", "0.5.0"),
    ),
    "fused_add_rms_norm.py": (
        ("_fused_add_rms_norm_backward_kernel", "reduction", "0.6.1"),
        ("_fused_add_rms_norm_forward_kernel", "reduction", "0.6.1"),
    ),
    "fused_ce_tvd.py": (
        ("_fused_ce_tvd_backward_kernel", "loss", "0.8.4"),
        ("_fused_ce_tvd_forward_kernel", "loss", "0.8.4"),
    ),
    "fused_linear_kl_div.py": (("_kl_div_kernel", "loss", "0.8.3"),),
    "fused_moe_kernels.py": (
        # Fused MoE: grouped GEMMs (tl.dot) and the routing that orders tokens by expert.
        ("_fused_down_proj_kernel", "gemm", "0.8.0"),
        ("_fused_up_proj_swiglu_kernel", "gemm", "0.8.0"),
        ("_moe_bwd_dW1_kernel", "gemm", "0.8.0"),
        ("_moe_bwd_dW2_kernel", "gemm", "0.8.0"),
        ("_moe_bwd_dX_expanded_kernel", "gemm", "0.8.0"),
        ("_moe_bwd_down_proj_kernel", "gemm", "0.8.0"),
        ("_moe_router_histogram_kernel", "reduction", "0.8.0"),
        ("_moe_router_prefix_sum_kernel", "scan", "0.8.0"),
        ("_moe_router_scatter_kernel", "sort", "0.8.0"),
        # Gathers each token's expert outputs and sums them by routing weight, like an embedding bag.
        ("_token_gather_weighted_sum_kernel", "indexing", "0.8.0"),
    ),
    "fused_neighborhood_attention.py": (
        # Its masking kernel builds the neighborhood mask of the attention scores.
        ("_fused_neighborhood_attention_av_kernel", "attention", "0.6.0"),
        ("_fused_neighborhood_attention_grad_attn_kernel", "attention", "0.6.0"),
        ("_fused_neighborhood_attention_grad_k_kernel", "attention", "0.6.0"),
        ("_fused_neighborhood_attention_grad_qk_kernel", "attention", "0.6.0"),
        ("_fused_neighborhood_attention_grad_v_kernel", "attention", "0.6.0"),
        ("_fused_neighborhood_attention_qk_kernel", "attention", "0.6.0"),
        ("_neighborhood_mask_kernel", "pointwise", "0.6.0"),
    ),
    "geglu.py": (
        ("_geglu_tanh_backward_kernel", "pointwise", "0.5.0"),
        ("_geglu_tanh_forward_kernel", "pointwise", "0.5.0"),
    ),
    "group_norm.py": (
        ("_group_norm_backward_kernel", "reduction", "0.5.0"),
        ("_group_norm_forward_kernel", "reduction", "0.5.0"),
    ),
    "grpo_loss.py": (
        ("_grpo_loss_bwd_kernel", "loss", "0.5.10"),
        ("_grpo_loss_bwd_kernel_seq", "loss", "0.8.0"),
        ("_grpo_loss_fwd_kernel", "loss", "0.5.10"),
        ("_grpo_loss_fwd_kernel_seq", "loss", "0.8.0"),
        # Each token's log-probability of its target: a log-softmax over the vocabulary, for GRPO.
        ("_selective_log_softmax_kernel", "reduction", "0.5.10"),
    ),
    "jsd.py": (("_jsd_kernel", "loss", "0.5.0"),),
    "kl_div.py": (
        ("_kldiv_kernel_backward", "loss", "0.5.0"),
        ("_kldiv_kernel_forward", "loss", "0.5.0"),
    ),
    "layer_norm.py": (
        ("_layer_norm_backward_kernel", "reduction", "0.5.0"),
        ("_layer_norm_forward_kernel", "reduction", "0.5.0"),
    ),
    "llama4_rope.py": (("_llama4_rope_kernel", "pointwise", "0.6.2"),),
    "mhc.py": (
        # Manifold hyper-connections: a GEMM with RMS norm, Sinkhorn normalisation (row and column
        # reductions), and the mix of a few residual streams (elementwise in the forward).
        ("_mhc_mm_norm_bwd_fused_kernel", "gemm", "0.8.0"),
        ("_mhc_mm_norm_fwd_kernel", "gemm", "0.8.0"),
        ("_mhc_post_res_bwd_kernel", "reduction", "0.8.0"),
        ("_mhc_post_res_fwd_kernel", "pointwise", "0.8.0"),
        ("_mhc_pre_bwd_kernel", "reduction", "0.8.0"),
        ("_mhc_pre_fwd_kernel", "pointwise", "0.8.0"),
        ("_mhc_sinkhorn_bwd_hist_kernel", "reduction", "0.8.0"),
        ("_mhc_sinkhorn_bwd_kernel", "reduction", "0.8.0"),
        ("_mhc_split_sinkhorn_fwd_kernel", "reduction", "0.8.0"),
    ),
    "mlp.py": (
        # The fused MLP: its GEMMs (tl.dot) with the SwiGLU in their epilogue.
        ("_swiglu_kernel_backward_dGU", "gemm", "0.8.3"),
        ("_swiglu_kernel_backward_dI", "gemm", "0.8.3"),
        ("_swiglu_kernel_forward", "gemm", "0.8.3"),
        ("_swiglu_kernel_forward_inference", "gemm", "0.8.3"),
    ),
    "modulated_rms_norm.py": (
        ("_modulated_rms_norm_backward_kernel", "reduction", "0.8.1"),
        ("_modulated_rms_norm_forward_kernel", "reduction", "0.8.1"),
    ),
    "multi_token_attention.py": (
        # Multi-token attention: the causal mask of the attention scores.
        ("_mask_bwd_kernel", "pointwise", "0.6.0"),
        ("_mask_fwd_kernel", "pointwise", "0.6.0"),
    ),
    "poly_norm.py": (
        ("_poly_norm_backward_kernel", "reduction", "0.6.3"),
        ("_poly_norm_forward_kernel", "reduction", "0.6.3"),
    ),
    "qwen2vl_mrope.py": (("_triton_qwen2vl_mrope", "pointwise", "0.5.0"),),
    "relu_squared.py": (
        ("_relu_squared_backward_kernel", "pointwise", "0.8.0"),
        ("_relu_squared_forward_kernel", "pointwise", "0.8.0"),
    ),
    "rms_norm.py": (
        ("_block_rms_norm_backward_kernel", "reduction", "0.6.0"),
        ("_block_rms_norm_forward_kernel", "reduction", "0.6.0"),
        ("_rms_norm_backward_kernel", "reduction", "0.5.0"),
        ("_rms_norm_forward_kernel", "reduction", "0.5.0"),
    ),
    "rope.py": (("_triton_rope", "pointwise", "0.5.0"),),
    "softmax.py": (
        ("_softmax_multi_block_backward_kernel", "reduction", "0.6.0"),
        ("_softmax_multi_block_forward_kernel", "reduction", "0.6.0"),
        ("_softmax_single_block_backward_kernel", "reduction", "0.6.0"),
        ("_softmax_single_block_forward_kernel", "reduction", "0.6.0"),
    ),
    "sparsemax.py": (
        ("_sparsemax_backward_kernel", "reduction", "0.5.10"),
        ("_sparsemax_forward_kernel", "reduction", "0.5.10"),
    ),
    "swiglu.py": (
        ("_swiglu_backward_kernel", "pointwise", "0.5.0"),
        ("_swiglu_backward_kernel_tiled", "pointwise", "0.8.1"),
        ("_swiglu_forward_kernel", "pointwise", "0.5.0"),
        ("_swiglu_forward_kernel_tiled", "pointwise", "0.8.1"),
        ("_swiglu_fused_gate_up_backward_kernel", "pointwise", "0.8.2"),
        ("_swiglu_fused_gate_up_forward_kernel", "pointwise", "0.8.2"),
    ),
    "tvd.py": (("_tv_distance_kernel", "loss", "0.5.4"),),
    "utils.py": (
        # Scales the gradient of fused linear cross entropy and JSD by the loss's gradient.
        ("element_mul_kernel", "pointwise", "0.5.0"),
    ),
    "vocab_parallel_cross_entropy.py": (
        ("liger_vocab_parallel_ce_backward_kernel", "loss", "0.8.1"),
        ("liger_vocab_parallel_ce_forward_kernel", "loss", "0.8.1"),
    ),
}
# Helpers of another kind of work (KernelName.part_of).
_PART_OF = {
    "_neighborhood_mask_kernel": "attention",
    "_selective_log_softmax_kernel": "loss",
    "element_mul_kernel": "loss",
    "_mask_bwd_kernel": "attention",
    "_mask_fwd_kernel": "attention",
}

# What a kernel computes, in the op words the eager ATen kernels doing that work decode to (their
# names: ``GeluCUDAKernelImpl`` is gelu, ``MulFunctor`` mul, ``layer_norm`` kernels layer_norm), so
# that a diff pairs the eager kernels a Liger kernel replaces with it (``fused:``). Read from each
# kernel's source; a kernel whose work no eager op's kernels name (the losses, the GEMMs, RMSNorm's
# backward, which mixes several ops' gradients) gives none.
_COMPUTES: dict[str, tuple[str, ...]] = {
    # c = gelu_tanh(a) * b; the backward recomputes gelu and gives a's gradient through it.
    "_geglu_tanh_forward_kernel": ("gelu", "mul"),
    "_geglu_tanh_backward_kernel": ("gelu_backward", "mul"),
    # c = silu(a) * b (a and b one fused gate-up tensor's halves in the fused_gate_up kernels).
    "_swiglu_forward_kernel": ("silu", "mul"),
    "_swiglu_forward_kernel_tiled": ("silu", "mul"),
    "_swiglu_fused_gate_up_forward_kernel": ("silu", "mul"),
    "_swiglu_backward_kernel": ("silu_backward", "mul"),
    "_swiglu_backward_kernel_tiled": ("silu_backward", "mul"),
    "_swiglu_fused_gate_up_backward_kernel": ("silu_backward", "mul"),
    # y = x * rsqrt(mean(x * x) + eps) * (offset + w): eager's pow, mean, add, rsqrt and muls.
    "_rms_norm_forward_kernel": ("pow", "mean", "add", "rsqrt", "mul"),
    "_block_rms_norm_forward_kernel": ("pow", "mean", "add", "rsqrt", "mul"),
    "_layer_norm_forward_kernel": ("layer_norm",),
    "_layer_norm_backward_kernel": ("layer_norm",),
    "_softmax_single_block_forward_kernel": ("softmax",),
    "_softmax_multi_block_forward_kernel": ("softmax",),
    "_softmax_single_block_backward_kernel": ("softmax",),
    "_softmax_multi_block_backward_kernel": ("softmax",),
    # y = max(x, 0) ** 2.
    "_relu_squared_forward_kernel": ("relu", "pow"),
    # y = tanh(alpha * x) * gamma + beta.
    "_dyt_fwd_kernel": ("tanh", "mul", "add"),
    # q * cos + rotate_half(q) * sin, for q and k: the muls, the negation in rotate_half, the add.
    "_triton_rope": ("mul", "neg", "add"),
}

KERNELS: dict[str, LigerKernel] = {
    name: LigerKernel(name, kind, path, first, part_of=_PART_OF.get(name), fused_ops=_COMPUTES.get(name, ()))
    for path, rows in _TABLE.items()
    for name, kind, first in rows
}

# Liger's autograd Functions are named Liger<Op>Function (a backward op adds "Backward"), but for these.
_OTHER_FUNCTIONS = (
    "GrpoLossFunction",
    "_ChunkedSelectiveLogProbFunction",
    "_FusedLinearPPOFallbackFunction",
    "_TensorParallelFusedLinearPPOFallbackFunction",
)
_LIGER_FUNCTION = re.compile(rf"^(?:_?Liger\w*Function|{'|'.join(_OTHER_FUNCTIONS)})(?:Backward)?$")

# Triton before 3.0 appended its specialisation of each argument to a kernel's name
# (``_rms_norm_forward_kernel_0d1d2d3de4de5``): argument 0 first, its index and letters. One
# character class (inductor.py says why).
_TRITON_SIGNATURE = re.compile(r"_0[a-z\d]*$")


def is_liger_op(op: str | None) -> bool:
    """Whether ``op`` is one of Liger's autograd Functions, forward or backward."""
    return op is not None and _LIGER_FUNCTION.match(op) is not None


def liger_kernel(name: str, op: str | None, triton: bool) -> LigerKernel | None:
    """The Liger kernel ``name`` is, where evidence says it is this Triton kernel: ``triton``
    (capture learned it, or Inductor launched it) or a Liger Function as its op."""
    found = KERNELS.get(name) or KERNELS.get(_TRITON_SIGNATURE.sub("", name))
    if found is None:
        return None
    if is_liger_op(op) or (triton and found.name not in GENERIC_NAMES):
        return found
    return None
