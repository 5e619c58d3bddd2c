"""A Triton kernel's kind and dtype from its TTIR (decode/triton_ir.py), on kernels compiled by
tools/record_triton_ir.py: each file is named ``<kind>_<dtype>_<kernel>.ttir.gz``."""

from __future__ import annotations

import gzip

import pytest

from pytest_kernelprof.decode.triton_ir import IrFacts, dtype_from_signature, facts_from_ttir
from tests.helpers import DATA

IR_FILES = sorted((DATA / "triton_ir").glob("*.ttir.gz"))


def test_every_kind_the_reader_tells_has_a_compiled_kernel() -> None:
    assert {path.name.split("_")[0] for path in IR_FILES} == {"gemm", "pointwise", "reduction", "scan", "sort"}


@pytest.mark.parametrize("path", IR_FILES, ids=lambda p: p.name.removesuffix(".ttir.gz"))
def test_compiled_kernels_read_as_what_they_compute(path: object) -> None:
    kind, dtype, _ = path.name.split("_", 2)  # type: ignore[attr-defined]
    assert facts_from_ttir(gzip.decompress(path.read_bytes()).decode()) == IrFacts(kind, dtype)  # type: ignore[attr-defined]


def test_a_dot_outweighs_the_reductions_around_it() -> None:
    # A fused matmul + softmax epilogue is a GEMM kernel first.
    text = gzip.decompress((DATA / "triton_ir" / "gemm_bf16_matmul.ttir.gz").read_bytes()).decode()
    reduction = gzip.decompress((DATA / "triton_ir" / "reduction_fp32_bf16_row_sum.ttir.gz").read_bytes()).decode()
    body = reduction[reduction.index("tt.func") :]
    assert facts_from_ttir(text.replace("tt.return", body.split("tt.return")[0] + "tt.return", 1)) == IrFacts(
        "gemm", "bf16"
    )


@pytest.mark.parametrize("text", ["", "not mlir", "module {\n}\n"])
def test_text_that_holds_no_triton_function_gives_no_facts(text: str) -> None:
    assert facts_from_ttir(text) is None


def test_an_element_type_we_do_not_list_gives_no_dtype() -> None:
    ttir = "tt.func public @k(%x: !tt.ptr<i16>) {\n  %0 = tt.load %p : tensor<8x!tt.ptr<i16>>\n}\n"
    assert facts_from_ttir(ttir) == IrFacts("pointwise", None)


def test_a_loss_kernel_is_the_dtype_of_its_data_not_of_its_targets() -> None:
    # liger_cross_entropy_kernel loads its int64 targets before its logits
    ttir = (
        "tt.func public @ce(%y: !tt.ptr<i64>, %x: !tt.ptr<bf16>) {\n"
        "  %0 = tt.load %y : !tt.ptr<i64>\n"
        "  %1 = tt.load %x : tensor<1024x!tt.ptr<bf16>>\n"
        '  %2 = "tt.reduce"(%1) <{axis = 0 : i32}> ({\n'
        "  tt.store %x, %1 : tensor<1024x!tt.ptr<bf16>>\n"
        "}\n"
    )
    assert facts_from_ttir(ttir) == IrFacts("reduction", "bf16")


def test_a_kernel_is_the_dtype_it_writes_as_atens_are() -> None:
    """A bf16 -> fp32 cast is fp32, as ATen's ``.float()`` kernel is; the first floating-point
    store decides, an integer store before it does not."""
    ttir = (
        "tt.func public @k(%x: !tt.ptr<bf16>, %i: !tt.ptr<i64>, %y: !tt.ptr<f32>) {\n"
        "  %0 = tt.load %x : tensor<8x!tt.ptr<bf16>>\n"
        "  tt.store %i, %1 : tensor<8x!tt.ptr<i64>>\n"
        "  tt.store %y, %2 : tensor<8x!tt.ptr<f32>>\n"
        "  tt.store %x, %0 : tensor<8x!tt.ptr<bf16>>\n"
        "}\n"
    )
    assert facts_from_ttir(ttir) == IrFacts("pointwise", "fp32")
    assert facts_from_ttir(ttir.replace("  tt.store %y", "  // ")) == IrFacts("pointwise", "bf16")
    assert facts_from_ttir(ttir.replace("  tt.store", "  // ")) == IrFacts("pointwise", "bf16")  # stores none


def test_a_norm_is_the_dtype_of_its_output_not_of_the_statistic_it_stores_first() -> None:
    """Liger's _rms_norm_forward_kernel (H100, a bf16 x) stores its row's fp32 rstd, one value,
    before its bf16 output: a block's store counts before a single value's."""
    ttir = (
        "tt.func public @norm(%x: !tt.ptr<bf16>, %r: !tt.ptr<f32>, %y: !tt.ptr<bf16>) {\n"
        "  %0 = tt.load %x : tensor<1024x!tt.ptr<bf16>>\n"
        '  %1 = "tt.reduce"(%0) <{axis = 0 : i32}> ({\n'
        "  tt.store %r, %1 : !tt.ptr<f32>\n"
        "  tt.store %y, %2 : tensor<1024x!tt.ptr<bf16>>\n"
        "}\n"
    )
    assert facts_from_ttir(ttir) == IrFacts("reduction", "bf16")
    # the statistic alone (a row sum that stores one fp32 value): what it writes
    assert facts_from_ttir(ttir.replace("  tt.store %y", "  // ")) == IrFacts("reduction", "fp32")


@pytest.mark.parametrize(
    ("signature", "dtype"),
    [
        # torch 2.11's gelu(x @ w) * 2.0 in bf16 (H100): the kernel updates the matmul's output in place
        ([("in_out_ptr0", "*bf16"), ("xnumel", "i32"), ("XBLOCK", "constexpr")], "bf16"),
        # sigmoid(x).float(): reads bf16, writes fp32; what it writes, as ATen's .float() kernel is
        ([("in_ptr0", "*bf16"), ("out_ptr0", "*fp32"), ("xnumel", "i32")], "fp32"),
        # x.bfloat16() of an fp32 x: bf16, as ATen's bfloat16_copy_kernel_cuda is
        ([("in_ptr0", "*fp32"), ("out_ptr0", "*bf16"), ("xnumel", "i32")], "bf16"),
        # an embedding's gather: the int64 indices first, the fp16 table is the data
        ([("in_ptr0", "*i64"), ("in_ptr1", "*fp16"), ("out_ptr0", "*fp16")], "fp16"),
        # an argmax: int64 out of fp32 in
        ([("in_ptr0", "*fp32"), ("out_ptr0", "*i64"), ("xnumel", "i32"), ("r0_numel", "i32")], "fp32"),
        # what it stores before what it loads, wherever the signature lists them
        ([("in_ptr0", "*bf16"), ("in_ptr1", "*fp16"), ("out_ptr0", "*fp32")], "fp32"),
        # the first floating-point tensor it stores, an in_out_ptr among them
        ([("in_ptr0", "*fp32"), ("in_out_ptr0", "*bf16"), ("out_ptr0", "*fp32")], "bf16"),
        # an integer store does not count before a floating-point load (an argmax's indices)
        ([("out_ptr0", "*i64"), ("in_ptr0", "*i32")], "int32"),
        # a fill that loads nothing: what it stores
        ([("out_ptr0", "*fp32"), ("xnumel", "i32")], "fp32"),
        # integers only: the first it loads
        ([("in_ptr0", "*i32"), ("in_ptr1", "*u8"), ("out_ptr0", "*i1")], "int32"),
        ([("in_ptr0", "*u8"), ("out_ptr0", "*i1")], "uint8"),
        ([("in_ptr0", "*fp8e4nv"), ("out_ptr0", "*bf16")], "bf16"),  # a dequantizing cast
        ([("in_ptr0", "*bf16"), ("out_ptr0", "*fp8e4nv")], "fp8"),  # a quantizing cast
        # a template's operands are named for the template, not in_ptr
        ([("arg_A", "*bf16"), ("arg_B", "*bf16"), ("out_ptr0", "*bf16")], "bf16"),
        ([("in_ptr0", "*i16"), ("out_ptr0", "*i16")], None),  # no int16 among the decoder's dtypes
        ([("xnumel", "i32"), ("XBLOCK", "constexpr")], None),  # no pointer at all
        ([], None),
    ],
)
def test_an_inductor_signature_reads_by_the_rule_of_ttir(signature: list[tuple[str, str]], dtype: str | None) -> None:
    assert dtype_from_signature(signature) == dtype


def test_the_signature_and_the_ttir_of_one_kernel_agree() -> None:
    ttir = (
        "tt.func public @k(%a: !tt.ptr<i64>, %b: !tt.ptr<bf16>, %c: !tt.ptr<fp32>) {\n"
        "  %0 = tt.load %a : tensor<8x!tt.ptr<i64>>\n"
        "  %1 = tt.load %b : tensor<8x!tt.ptr<bf16>>\n"
        "  tt.store %c, %1 : tensor<8x!tt.ptr<f32>>\n"
        "}\n"
    )
    signature = [("in_ptr0", "*i64"), ("in_ptr1", "*bf16"), ("out_ptr0", "*fp32"), ("xnumel", "i32")]
    assert facts_from_ttir(ttir) == IrFacts("pointwise", "fp32")
    assert dtype_from_signature(signature) == "fp32"
