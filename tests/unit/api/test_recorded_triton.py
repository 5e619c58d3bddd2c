"""Liger-Kernel's ops, forward and backward, and a user's own Triton kernels, recorded on an
NVIDIA H100 (torch 2.11, Triton 3.6, liger-kernel 0.8.5; tools/record_liger.py and
tools/record_user_triton.py), checked offline: what the live capture decoded, load_trace decodes."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.decode import BUILT_IN
from tests.helpers import DATA

LIGER_TRACES = sorted(DATA.glob("h100_liger_*.json.gz"))

# What each Liger kernel computes (its source, liger_kernel/ops/): the kinds the decoder must give.
LIGER_KINDS = {
    "_rms_norm_forward_kernel": "reduction",
    "_rms_norm_backward_kernel": "reduction",
    "_layer_norm_forward_kernel": "reduction",
    "_layer_norm_backward_kernel": "reduction",
    "_group_norm_forward_kernel": "reduction",
    "_group_norm_backward_kernel": "reduction",
    "_poly_norm_forward_kernel": "reduction",
    "_poly_norm_backward_kernel": "reduction",
    "_softmax_single_block_forward_kernel": "reduction",
    "_softmax_single_block_backward_kernel": "reduction",
    "_sparsemax_forward_kernel": "reduction",
    "_sparsemax_backward_kernel": "reduction",
    "_dyt_fwd_kernel": "pointwise",
    "_dyt_bwd_kernel": "reduction",
    "_swiglu_forward_kernel": "pointwise",
    "_swiglu_backward_kernel": "pointwise",
    "_geglu_tanh_forward_kernel": "pointwise",
    "_geglu_tanh_backward_kernel": "pointwise",
    "_relu_squared_forward_kernel": "pointwise",
    "_relu_squared_backward_kernel": "pointwise",
    "_triton_rope": "pointwise",
    "liger_cross_entropy_kernel": "loss",
    "_kldiv_kernel_forward": "loss",
    "_kldiv_kernel_backward": "loss",
    "_jsd_kernel": "loss",
    "_tv_distance_kernel": "loss",
}


# What each computes in the words of the eager ATen kernels that do that work (their fused ops):
# a diff pairs those kernels with it. The losses and RMSNorm's backward name no eager op's work.
LIGER_FUSED_OPS = {
    "_geglu_tanh_forward_kernel": ("gelu", "mul"),
    "_geglu_tanh_backward_kernel": ("gelu_backward", "mul"),
    "_swiglu_forward_kernel": ("silu", "mul"),
    "_swiglu_backward_kernel": ("silu_backward", "mul"),
    "_rms_norm_forward_kernel": ("pow", "mean", "add", "rsqrt", "mul"),
    "_layer_norm_forward_kernel": ("layer_norm",),
    "_layer_norm_backward_kernel": ("layer_norm",),
    "_softmax_single_block_forward_kernel": ("softmax",),
    "_softmax_single_block_backward_kernel": ("softmax",),
    "_relu_squared_forward_kernel": ("relu", "pow"),
    "_dyt_fwd_kernel": ("tanh", "mul", "add"),
    "_triton_rope": ("mul", "neg", "add"),
}


def test_every_liger_op_was_recorded() -> None:
    ops = {path.name.removeprefix("h100_liger_").removesuffix(".json.gz") for path in LIGER_TRACES}
    assert len(ops) == 17
    assert {"rms_norm", "layer_norm", "cross_entropy", "fused_linear_cross_entropy", "geglu", "rope"} <= ops


@pytest.mark.parametrize("path", LIGER_TRACES, ids=lambda p: p.name.removeprefix("h100_liger_")[: -len(".json.gz")])
def test_a_liger_op_forward_and_backward_decodes_with_no_kernel_left_over(path: Path) -> None:
    prof = load_trace(path)
    assert not prof.kernels.unplaced()
    liger = [k for k in prof.kernels if k.name in LIGER_KINDS]
    assert liger, "the op's own Triton kernels ran"
    assert {k.family for k in liger} == {"liger"}  # never aten, though some names look like ATen's
    assert all(k.kind == LIGER_KINDS[k.name] for k in liger)
    assert all(k.fused_ops == LIGER_FUSED_OPS.get(k.name, ()) for k in liger)
    assert all(k.evidence.fused_ops == ("name" if k.fused_ops else None) for k in liger)
    # the dtype the op inputs did not give (no shapes recorded), the kernels' IR did
    assert all(k.dtype in ("bf16", "fp32") and k.evidence.dtype == "ir" for k in liger)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no kernel of unknown kind or dtype to warn about
        prof.kernels.count(kind="reduction")


def test_a_users_triton_kernels_read_as_their_ir_showed() -> None:
    prof = load_trace(DATA / "h100_user_triton.json.gz")
    got = {k.name: (k.kind, k.family, k.dtype, k.evidence.kind) for k in prof.kernels}
    assert got == {
        "user_row_sum_kernel": ("reduction", "triton", "fp32", "ir"),  # sums bf16 into fp32: what it writes
        "user_cumsum_kernel": ("scan", "triton", "fp32", "ir"),
        "user_matmul_kernel": ("gemm", "triton", "bf16", "ir"),
        "user_add_kernel": ("pointwise", "triton", "fp32", "ir"),
    }
    assert prof.kernels.count(kind="gemm") == 1


def test_the_kernel_table_says_what_its_evidence_marks_mean() -> None:
    # A trial met "reduction (ir)" in a table and found what "(ir)" meant only in docs/decoding.md.
    table = load_trace(DATA / "h100_user_triton.json.gz").kernels.table().splitlines()
    assert any("reduction (ir)" in row for row in table)
    assert table[-1] == "(ir): read from its compiled Triton IR"
    # A trial could not tell a bias the fp32 addmm's GEMM was given by its op from one read in a name.
    fp32 = load_trace(DATA / "h200_linear_fp32.json.gz").kernels.table().splitlines()
    assert "  bias (op)  " in fp32[1]
    assert fp32[-1] == "(op): from the op that launched it"
    bf16 = load_trace(DATA / "h200_linear_eager.json.gz").kernels.table().splitlines()
    assert "  bias  " in bf16[1]  # nvjet_..._bias_TNT: read in the name
    assert not bf16[-1].startswith("(")  # no mark in the table, no key under it
    taught = BUILT_IN.teach_lines(["user_add_kernel: kind=pointwise family=mine dtype=bf16"], "--kernels")
    key = load_trace(DATA / "h100_user_triton.json.gz", decoder=taught).kernels.table().splitlines()[-1]
    assert key.startswith("(ir): read from its compiled Triton IR; (user): taught to the decoder (kernelprof.teach, ")
