"""The decoder against kernel names from cards and libraries this project cannot run.

``tests/data/names_corpus.tsv`` holds names that real runs printed on A100, V100, L4, B200,
MI210, MI300X and MI350 machines, each with where it came from and what the kernel is
(``tests/data/names_corpus.md`` tells the sources and the naming grammars). The expectations
are the sources', not the decoder's: a disagreement below is a decision, with its reason.
"""

from __future__ import annotations

import csv

import pytest

from pytest_kernelprof.decode import KINDS, RULES, parse_kernel_name
from tests.helpers import DATA

CORPUS = DATA / "names_corpus.tsv"

# Where the decoder says otherwise than a source, by design.
DECIDED = {
    # ATen's elementwise machinery stays pointwise whatever it computes (random numbers, arange).
    "distribution_elementwise_grid_stride": "pointwise: built on ATen's elementwise machinery",
    "elementwise_kernel_with_index": "pointwise: arange fills positions, it reads no index tensor",
    # Upsampling computes source positions: resampling, not indexing.
    "upsample_nearest": "resampling: output built from computed source positions",
    # A softmax reduces over a row.
    "cunn_SoftMaxForward": "reduction: a softmax reduces over a row",
    # HIP's fill and copy kernels are GPU work of the runtime: pointwise, fused_ops tells copy.
    "__amd_rocclr_": "pointwise: 'copy' and 'memset' are not kernel kinds",
}
FAMILY_DECIDED = {
    # The name carries no library; ATen's norm rule reads it as the normalization it is.
    "groupnorm_kernel_dispatch": "no library in the name",
}
DTYPE_DECIDED = {
    # The name says f16; the source ran it on bf16 inputs. The name is the evidence here.
    "cudnn_generated_fort_native_sdpa_sm80_flash_fprop_wmma_f16": "the name says f16",
    # Template arguments name the computed type; the source named the op's input type.
    "distribution_elementwise_grid_stride_kernel<float": "the template says float",
    "softmax_warp_forward<c10::BFloat16": "the template's first type is the input's",
    "scaled_fp8_quant_kernel_strided": "the kernel's output type is named first",
}
# The same element type under two spellings: TF32 SGEMMs read fp32; complex64 is pairs of fp32.
SAME_DTYPE = {("fp32", "tf32"), ("tf32", "fp32"), ("fp32", "complex64"), ("fp64", "complex128")}
# Kernels no name grammar can place: a user's own Triton kernels, Inductor's kernels from before
# their names said their kind, and runtime helpers. The launching op, or a user's teaching, must.
UNPLACEABLE_FAMILIES = {"triton", "inductor", ""}


def _rows() -> list[dict[str, str]]:
    with CORPUS.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


ROWS = _rows()


def _decided(name: str, table: dict[str, str]) -> bool:
    return any(key in name for key in table)


def test_the_corpus_is_large_and_sourced() -> None:
    assert len(ROWS) >= 500
    assert all(row["source"].strip() for row in ROWS)
    assert len({row["name"] for row in ROWS}) == len(ROWS)
    archs = {row["arch"] for row in ROWS}
    assert {"sm70", "sm80", "sm100", "gfx90a", "gfx942"} <= archs


# Each row's kind question, asked only where the decoder answers it: an unplaced kernel is
# unknown, not wrong (test_library_kernels_are_placed counts them), and a decided row is held to
# its decision (test_a_decided_kind_is_the_decision).
KIND_ROWS = [
    row
    for row in ROWS
    if row["expected_kind"] in KINDS
    and not _decided(row["name"], DECIDED)
    and not parse_kernel_name(row["name"]).unplaced
]
# Each row's dtype question, where the decoder reads a dtype (None is no answer, not a wrong one)
# and the row is not one whose disagreement DTYPE_DECIDED explains.
DTYPE_ROWS = [
    row
    for row in ROWS
    if row["expected_dtype"]
    and parse_kernel_name(row["name"]).dtype is not None
    and not _decided(row["name"], DTYPE_DECIDED)
]


@pytest.mark.parametrize("row", KIND_ROWS, ids=lambda r: r["name"][:60])
def test_kind_is_the_sources(row: dict[str, str]) -> None:
    decoded = parse_kernel_name(row["name"])
    # A helper keeps its own kind and says whose work it serves (part_of).
    assert row["expected_kind"] in (decoded.kind, decoded.part_of), (decoded.kind, decoded.part_of, decoded.family)


@pytest.mark.parametrize("key", sorted(DECIDED))
def test_a_decided_kind_is_the_decision(key: str) -> None:
    decision = DECIDED[key].split(":")[0]  # "pointwise: built on ..." decides pointwise
    decoded = [parse_kernel_name(row["name"]) for row in ROWS if key in row["name"]]
    assert decoded, f"no corpus name holds {key!r}"
    assert {d.kind for d in decoded} == {decision}


@pytest.mark.parametrize("row", DTYPE_ROWS, ids=lambda r: r["name"][:60])
def test_a_dtype_given_is_the_sources(row: dict[str, str]) -> None:
    decoded = parse_kernel_name(row["name"])
    assert decoded.dtype == row["expected_dtype"] or (row["expected_dtype"], decoded.dtype) in SAME_DTYPE


def test_library_kernels_are_placed() -> None:
    unplaced = [
        (row["expected_family"], row["name"][:100])
        for row in ROWS
        if row["expected_family"] not in UNPLACEABLE_FAMILIES
        and row["expected_kind"] in KINDS
        and parse_kernel_name(row["name"]).unplaced
    ]
    # At most 0.5% of the corpus's library kernels: each one left is listed in the failure.
    assert len(unplaced) <= len(ROWS) // 200, unplaced


def test_families_the_sources_name_are_the_decoders() -> None:
    known = {rule.family for rule in RULES}
    wrong = [
        (row["expected_family"], parse_kernel_name(row["name"]).family, row["name"][:80])
        for row in ROWS
        if row["expected_family"] in known
        and parse_kernel_name(row["name"]).family not in (row["expected_family"], "unknown")
        and row["expected_family"] not in ("cublas", "cutlass")  # cuBLAS ships CUTLASS kernels
        and not _decided(row["name"], FAMILY_DECIDED)
    ]
    assert wrong == []
