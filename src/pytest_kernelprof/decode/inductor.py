"""Inductor's kernel names: ``triton_<category>_fused_<origin ops>_<n>``.

The category says the kind (``INDUCTOR_KINDS``), a template's origin ops say what it computes
(``template_kind``), and the origin ops are split back out of the name (``inductor_ops``).
Pure functions over strings, like ``extractors.py``.
"""

from __future__ import annotations

import re

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
        "_int_mm",
        "_grouped_mm",
        "_scaled_grouped_mm",
        "flex_attention",
        "flex_attention_backward",
        "flex_decoding",
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


def _words(joined: str) -> list[str]:
    """The "_"-separated words of a joined string, a run of underscores kept on the next word."""
    words: list[str] = []
    pending_underscore = ""
    for word in joined.split("_"):
        if word == "":
            pending_underscore += "_"
            continue
        words.append(pending_underscore + word)
        pending_underscore = ""
    return words


# The most words a known op spans: no longer run can match one, so the split tries no more.
_MOST_OP_WORDS = max(len(_words(op)) for op in _KNOWN_ATEN_OPS)
# Inductor names a kernel after 10 ops at most (``kernel_name_max_ops``); the words past this
# many are not split, so that a hostile name costs no more than a long real one.
MAX_FUSED_WORDS = 256


def _split_fused(joined: str) -> tuple[str, ...]:
    words = _words(joined)[:MAX_FUSED_WORDS]
    ops: list[str] = []
    i = 0
    while i < len(words):
        for j in range(min(len(words), i + _MOST_OP_WORDS), i + 1, -1):
            candidate = "_".join(words[i:j])
            if candidate in _KNOWN_ATEN_OPS:
                ops.append(candidate)
                i = j
                break
        else:
            ops.append(words[i])
            i += 1
    return tuple(ops)


# The kind of each Inductor kernel category, by the three letters of its name's prefix
# (torch/_inductor: "triton_" + the category's first three letters). A template ("tem") is
# placed by what it computes (template_kind); "unk" is a kernel of no single category: None
# leaves it unplaced.
INDUCTOR_KINDS: dict[str, str | None] = {
    "poi": "pointwise",
    # foreach: one launch over many tensors (a compiled optimizer step, grad clipping).
    "for": "pointwise",
    "red": "reduction",
    "per": "persistent_reduction",
    "sca": "reduction",
    "spl": "scan",  # split_scan: cumsum and other scans over long rows
    "mix": "reduction",
    "unk": None,
}

# What an Inductor template computes, by its origin ops (its name's fused ops): the GEMM
# templates (mm, addmm, bmm, baddbmm, scaled and int8 mm, mm_plus_mm), flex attention and flex
# decoding, and the convolution template. Searched in this order: an attention or convolution
# template may carry a GEMM's name among its epilogue's ops, not the other way round.
_TEMPLATE_KINDS = (
    ("attention", re.compile(r"^flex_(?:attention|attention_backward|decoding)$")),
    ("convolution", re.compile(r"^_?convolution(?:_backward)?$")),
    ("gemm", re.compile(r"^(?:mm|addmm|bmm|baddbmm|addbmm|_scaled_mm|_int_mm|_grouped_mm|_scaled_grouped_mm)$")),
)


def template_kind(fused_ops: tuple[str, ...]) -> str | None:
    """The kind of work an Inductor template computes, by its origin ops; None where they give
    no hint (``triton_tem_fused_0``, a template whose ops Inductor did not name)."""
    for kind, pattern in _TEMPLATE_KINDS:
        if any(pattern.match(op) for op in fused_ops):
            return kind
    return None


# Triton before 3.0 appended its specialisation of each argument to a kernel's name, argument
# 0 first (triton_poi_fused_add_0_0d1d2d3de: kernel 0, then "0d1d2d3de"). One character class,
# not ``[a-z]*(?:\d+[a-z]*)*`` (the same strings), whose nested repeats backtrack exponentially
# on a long run of digits that does not end the name.
_TRITON_SIGNATURE = re.compile(r"_0[a-z\d]*$")


def inductor_ops(name: str) -> tuple[str, ...]:
    body = name[len("triton_xxx_") :]
    if body.startswith("fused"):
        body = body[len("fused") :]
    body = _TRITON_SIGNATURE.sub("", body[1:] if body.startswith("_") else body)
    body = re.sub(r"(?:^|_)\d+$", "", body)
    return _split_fused(body) if body else ()
