"""Liger-Kernel's kernels: the table of decode/liger.py against what its wheels ship, and when
a Liger name places a kernel (only with evidence that it is that Triton kernel).

``tests/data/liger_kernels.tsv`` is ``tools/liger_kernels.py``'s reading of every liger-kernel
wheel from 0.5.0 to 0.8.5 (PyPI; their sha256 in its header): each table entry is checked
against it here, offline.
"""

from __future__ import annotations

import csv
import re

import pytest

from pytest_kernelprof.decode import BUILT_IN, KINDS, parse_kernel_name
from pytest_kernelprof.decode.aten_op_names import ATEN_OP_NAMES
from pytest_kernelprof.decode.liger import _COMPUTES, GENERIC_NAMES, KERNELS, NEWEST, is_liger_op
from tests.helpers import DATA

LISTING = DATA / "liger_kernels.tsv"


def _listing() -> tuple[list[str], dict[str, dict[str, str]]]:
    lines = LISTING.read_text(encoding="utf-8").splitlines()
    header = [line for line in lines if line.startswith("#")]
    rows = csv.DictReader([line for line in lines if not line.startswith("#")], delimiter="\t")
    return header, {row["name"]: row for row in rows}


HEADER, ROWS = _listing()
WHEELS = [re.match(r"# liger_kernel-([\d.]+)-py3-none-any\.whl sha256=[0-9a-f]{64}$", line) for line in HEADER]
VERSIONS = [found.group(1) for found in WHEELS if found]
FUNCTIONS = next(line for line in HEADER if line.startswith("# autograd Functions: ")).split(": ")[1].split(",")


def test_the_listing_read_every_release_from_0_5_to_the_newest() -> None:
    assert VERSIONS[0] == "0.5.0"
    assert VERSIONS[-1] == NEWEST
    assert len(VERSIONS) == 24  # 0.5.0 to 0.5.10, 0.6.0 to 0.6.5, 0.7.0, 0.8.0 to 0.8.5


def test_every_kernel_the_wheels_ship_is_in_the_table_as_they_ship_it() -> None:
    assert sorted(KERNELS) == sorted(ROWS)
    for name, kernel in KERNELS.items():
        row = ROWS[name]
        assert (kernel.first, kernel.last, kernel.path) == (row["first"], row["last"], row["path"]), name
        assert row["missing_in"] == "", name  # none left and came back between its versions


@pytest.mark.parametrize("name", sorted(ROWS))
def test_each_kind_is_a_kind_and_fits_what_the_source_computes(name: str) -> None:
    kernel, ops = KERNELS[name], set(filter(None, ROWS[name]["tl_ops"].split(",")))
    assert kernel.kind in KINDS
    assert kernel.kind not in ("other", "template")
    # A kernel with no tl.dot, reduction, scan, sort or atomic does elementwise work (a loss's
    # backward is its elementwise gradient), or gathers rows (an embedding).
    if not ops:
        assert kernel.kind in ("pointwise", "loss", "indexing"), (name, ops)
    if kernel.kind == "gemm":
        assert "dot" in ops, name
    if "dot" in ops:
        assert kernel.kind in ("gemm", "attention"), name


def test_every_autograd_function_of_liger_is_a_liger_op() -> None:
    functions = [f for f in FUNCTIONS if not f.endswith("Base")]  # abstract bases never run as ops
    assert "LigerRMSNormFunction" in functions
    assert [f for f in functions if not is_liger_op(f) or not is_liger_op(f + "Backward")] == []
    assert not is_liger_op("CompiledFunction")
    assert not is_liger_op("aten::layer_norm")
    assert not is_liger_op(None)


LAYER_NORM = "_layer_norm_forward_kernel"


def test_a_liger_name_alone_places_nothing() -> None:
    # ATen may have kernels of the same bare names: the name is Liger's only with evidence.
    assert parse_kernel_name(LAYER_NORM).family == "aten"
    assert parse_kernel_name("_rms_norm_forward_kernel").unplaced
    assert BUILT_IN.decode("_rms_norm_forward_kernel", "my_ext::rms_norm").unplaced


@pytest.mark.parametrize(
    ("op", "triton"),
    [("LigerLayerNormFunction", False), ("LigerLayerNormFunctionBackward", False), (None, True), ("aten::mm", True)],
)
def test_a_liger_name_with_evidence_that_it_is_triton_is_liger_never_aten(op: str | None, triton: bool) -> None:
    decoded = BUILT_IN.decode(LAYER_NORM, op, (), triton)
    assert (decoded.kind, decoded.family, decoded.evidence.kind, decoded.evidence.family) == (
        "reduction",
        "liger",
        "name",
        "name",
    )
    # Liger's table's fused ops, nothing ATen's rule read from the look-alike name
    assert decoded.fused_ops == KERNELS[LAYER_NORM].fused_ops == ("layer_norm",)
    assert decoded.evidence.fused_ops == "name"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("_rms_norm_forward_kernel", "reduction"),
        ("_rms_norm_backward_kernel", "reduction"),
        ("_softmax_single_block_forward_kernel", "reduction"),
        ("_group_norm_forward_kernel", "reduction"),
        ("_swiglu_forward_kernel", "pointwise"),
        ("_geglu_tanh_backward_kernel", "pointwise"),
        ("_triton_rope", "pointwise"),
        ("_dyt_fwd_kernel", "pointwise"),
        ("liger_cross_entropy_kernel", "loss"),
        ("_kldiv_kernel_forward", "loss"),
        ("_jsd_kernel", "loss"),
        ("_tv_distance_kernel", "loss"),
        ("_fused_neighborhood_attention_qk_kernel", "attention"),
        ("_fused_up_proj_swiglu_kernel", "gemm"),
    ],
)
def test_liger_kernels_say_what_they_compute(name: str, kind: str) -> None:
    assert (BUILT_IN.decode(name, None, (), True).kind, BUILT_IN.decode(name, None, (), True).family) == (kind, "liger")


def test_the_dtype_comes_from_the_ops_inputs() -> None:
    decoded = BUILT_IN.decode("_rms_norm_forward_kernel", "LigerRMSNormFunction", ("c10::BFloat16", "c10::BFloat16"))
    assert (decoded.dtype, decoded.evidence.dtype) == ("bf16", "op-inputs")


def test_a_generic_name_needs_a_liger_function() -> None:
    assert "matmul_kernel" in GENERIC_NAMES  # Triton's matmul tutorial's kernel too
    mine = BUILT_IN.decode("matmul_kernel", "my_ext::matmul", (), True)
    assert (mine.kind, mine.family) == ("other", "triton")
    liger = BUILT_IN.decode("matmul_kernel", "LigerMatmulFunction", ("signed char",))
    assert (liger.kind, liger.family, liger.dtype) == ("gemm", "liger", "int8")


def test_a_helper_says_whose_work_it_serves() -> None:
    assert BUILT_IN.decode("element_mul_kernel", "LigerFusedLinearCrossEntropyFunction").part_of == "loss"


def test_older_tritons_signature_suffix_is_the_same_kernel() -> None:
    # Triton before 3.0 appended each argument's specialisation to the kernel's name.
    decoded = BUILT_IN.decode("_rms_norm_forward_kernel_0d1d2d3de4de5de6", None, (), True)
    assert (decoded.kind, decoded.family) == ("reduction", "liger")


def test_a_taught_fact_still_wins() -> None:
    taught = BUILT_IN.teach("_triton_rope", kind="attention")
    decoded = taught.decode("_triton_rope", "LigerRopeFunction")
    assert (decoded.kind, decoded.family, decoded.evidence.kind) == ("attention", "liger", "user")


def test_a_liger_kernels_fused_ops_are_aten_op_names_of_a_kernel_in_the_table() -> None:
    # The fused: line of a diff pairs them with the eager kernels' ops: a typo pairs with none.
    assert set(_COMPUTES) <= set(KERNELS)
    assert all(op in ATEN_OP_NAMES for kernel in KERNELS.values() for op in kernel.fused_ops)
    assert KERNELS["_geglu_tanh_forward_kernel"].fused_ops == ("gelu", "mul")
    assert KERNELS["liger_cross_entropy_kernel"].fused_ops == ()
