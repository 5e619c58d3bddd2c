"""A Triton kernel's kind and dtype from its TTIR (decode/triton_ir.py), on kernels compiled by
tools/record_triton_ir.py: each file is named ``<kind>_<dtype>_<kernel>.ttir.gz``."""

from __future__ import annotations

import gzip

import pytest

from pytest_kernelprof.decode.triton_ir import IrFacts, facts_from_ttir
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
    reduction = gzip.decompress((DATA / "triton_ir" / "reduction_bf16_row_sum.ttir.gz").read_bytes()).decode()
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
