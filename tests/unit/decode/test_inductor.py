"""Inductor's kernel names: a template's kind is what it computes, and that it came from a
template is its own fact (KernelName.template); foreach, split-scan and unknown-category prefixes;
names that carry Triton's pre-3.0 signature suffix."""

from __future__ import annotations

import pytest

from pytest_kernelprof.decode import BUILT_IN, parse_kernel_name


@pytest.mark.parametrize(
    ("name", "kind", "fused_ops"),
    [
        ("triton_tem_fused_mm_0", "gemm", ("mm",)),
        ("triton_tem_fused_addmm_gelu_t_0", "gemm", ("addmm", "gelu")),
        ("triton_tem_fused_bmm_1", "gemm", ("bmm",)),
        ("triton_tem_fused_baddbmm_2", "gemm", ("baddbmm",)),
        ("triton_tem_fused__scaled_mm_0", "gemm", ("_scaled_mm",)),
        ("triton_tem_fused__int_mm_0", "gemm", ("_int_mm",)),
        ("triton_tem_fused_flex_attention_0", "attention", ("flex_attention",)),
        ("triton_tem_fused_flex_attention_backward_1", "attention", ("flex_attention_backward",)),
        ("triton_tem_fused_flex_decoding_0", "attention", ("flex_decoding",)),
        ("triton_tem_fused_convolution_0", "convolution", ("convolution",)),
        # an epilogue's GEMM name does not make an attention template a GEMM
        ("triton_tem_fused_flex_attention_mm_0", "attention", ("flex_attention", "mm")),
    ],
)
def test_a_template_is_the_work_it_computes(name: str, kind: str, fused_ops: tuple[str, ...]) -> None:
    decoded = parse_kernel_name(name)
    assert (decoded.kind, decoded.family, decoded.template, decoded.fused_ops) == (kind, "inductor", True, fused_ops)
    assert (decoded.evidence.kind, decoded.evidence.family) == ("name", "name")
    assert decoded.is_kind("template")
    assert decoded.is_kind(kind)


@pytest.mark.parametrize("name", ["triton_tem_fused_0", "triton_tem_fused_gelu_0"])
def test_a_template_whose_ops_give_no_hint_is_unplaced_for_its_op_to_place(name: str) -> None:
    # triton_tem_fused_0 is a GEMM most often, but flex attention's forward has been named so too.
    decoded = parse_kernel_name(name)
    assert (decoded.kind, decoded.family, decoded.template) == ("other", "inductor", True)
    assert decoded.unplaced
    placed = BUILT_IN.decode(name, "aten::mm")
    assert (placed.kind, placed.evidence.kind, placed.template) == ("gemm", "op", True)


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("triton_poi_fused_add_0", "pointwise"),
        ("triton_for_fused_0", "pointwise"),  # foreach: a compiled optimizer step, grad clipping
        ("triton_spl_fused_cumsum_0", "scan"),
        ("triton_red_fused_sum_1", "reduction"),
        ("triton_per_fused__log_softmax_0", "persistent_reduction"),
    ],
)
def test_inductors_other_prefixes_say_the_kind_and_no_template(name: str, kind: str) -> None:
    decoded = parse_kernel_name(name)
    assert (decoded.kind, decoded.family, decoded.template) == (kind, "inductor", False)
    assert not decoded.is_kind("template")


def test_a_kernel_of_no_single_category_is_inductors_and_unplaced() -> None:
    decoded = parse_kernel_name("triton_unk_fused_add_0")
    assert (decoded.family, decoded.unplaced, decoded.fused_ops) == ("inductor", True, ("add",))


@pytest.mark.parametrize(
    ("name", "fused_ops"),
    [
        ("triton_poi_fused_gelu_0_0d1d2de", ("gelu",)),
        ("triton_poi_fused_add_cos_sin_0_0d1d2d3d", ("add", "cos", "sin")),
        ("triton_per_fused_native_layer_norm_1_0d1d2d3d4de5de", ("native_layer_norm",)),
        ("triton_poi_fused_add_0", ("add",)),
    ],
)
def test_tritons_old_signature_suffix_is_not_an_op(name: str, fused_ops: tuple[str, ...]) -> None:
    assert parse_kernel_name(name).fused_ops == fused_ops
