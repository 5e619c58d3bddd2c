"""The study's GPU facts, checked offline against traces recorded on an H200.

The traces were exported by the plugin's own capture (tools/record_traces.py), so these
tests read what the live fixture read: same builder, same queries.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_kernelprof import KernelProfile, load_trace

Trace = Callable[[str], Path]


def test_device_and_calls_come_from_the_trace(trace: Trace) -> None:
    prof = load_trace(trace("linear_eager"))
    assert prof.device == "NVIDIA H200"
    assert prof.arch == "sm90"
    assert len(prof.calls) == 3
    assert not prof.varied


def test_linear_is_one_tn_gemm_with_the_bias_in_its_epilogue(trace: Trace) -> None:
    prof = load_trace(trace("linear_eager"))
    gemm = prof.kernels.one(kind="gemm")
    assert (gemm.layout, gemm.dtype, gemm.fused_ops, gemm.op) == ("tn", "bf16", ("bias",), "aten::addmm")
    assert len(prof.kernels) == 1
    assert "aten::add" not in prof.ops
    assert prof.ops["aten::linear"].children == ["aten::t", "aten::addmm"]
    assert prof.ops["aten::t"].children == ["aten::transpose"]
    assert prof.ops["aten::transpose"].children == ["aten::as_strided"]
    assert gemm.grid is not None  # the Chrome trace carries launch shapes
    assert gemm.block is not None
    assert gemm.stream is not None
    assert gemm.duration_us > 0


@pytest.mark.parametrize("view", ["aten::t", "aten::transpose", "aten::as_strided"])
def test_views_have_no_device_time(trace: Trace, view: str) -> None:
    prof = load_trace(trace("linear_eager"))
    assert prof.ops[view].device_time_us == 0
    assert len(prof.ops[view].kernels) == 0


def test_device_time_rolls_up_the_op_tree(trace: Trace) -> None:
    prof = load_trace(trace("linear_eager"))
    gemm_us = prof.kernels.one(kind="gemm").duration_us
    assert prof.ops["aten::addmm"].self_device_time_us == pytest.approx(gemm_us)
    assert prof.ops["aten::linear"].self_device_time_us == 0
    assert prof.ops["aten::linear"].device_time_us == pytest.approx(gemm_us)
    assert prof.ops["aten::linear"].kernels.names == prof.kernels.names


def test_compiled_linear_runs_the_eager_kernel_without_aten_t(trace: Trace) -> None:
    eager = load_trace(trace("linear_eager"))
    compiled = load_trace(trace("linear_compiled"))
    assert compiled.kernels.names == eager.kernels.names
    assert "aten::t" not in compiled.ops
    assert "aten::linear" not in compiled.ops
    assert compiled.ops["aten::addmm"].count == 1


def test_fp32_linear_is_an_xmma_gemm_named_fp32(trace: Trace) -> None:
    gemm = load_trace(trace("linear_fp32")).kernels.one(kind="gemm")
    assert (gemm.family, gemm.layout, gemm.dtype) == ("cublas", "tn", "fp32")
    assert gemm.name.startswith("sm80_xmma_gemm_f32f32")


def test_fp32_linear_adds_its_bias_in_its_gemm_as_bf16s_does(trace: Trace) -> None:
    # The fp32 GEMM's name tells no epilogue, and no add kernel runs: addmm's bias-add is in the
    # GEMM (beta=1), as in the bf16 one's named bias epilogue. The op tells it, and says so.
    prof = load_trace(trace("linear_fp32"))
    gemm = prof.kernels.one(kind="gemm")
    assert (gemm.op, gemm.fused_ops, gemm.evidence.fused_ops) == ("aten::addmm", ("bias",), "op")
    assert len(prof.kernels) == 1
    bf16 = load_trace(trace("linear_eager")).kernels.one(kind="gemm")
    assert (bf16.fused_ops, bf16.evidence.fused_ops) == (("bias",), "name")
    # A GEMM of an op with no bias has none.
    eager = load_trace(trace("geglu_eager"))
    assert {(k.op, k.fused_ops) for k in eager.kernels.of_kind("gemm")} == {("aten::mm", ())}


def test_eager_kernels_name_what_they_compute(trace: Trace) -> None:
    # ReLU forward (clamp_min on recent torch) and backward (threshold), an MSE loss and its
    # backward: each kernel's fused ops, from its functor where that names one op, else its op.
    prof = load_trace(trace("sync_item_stacks"))
    told = {(k.op, k.fused_ops, k.evidence.fused_ops) for k in prof.kernels if k.family == "aten"}
    assert {
        ("aten::clamp_min", ("clamp_min",), "op"),
        ("aten::threshold_backward", ("threshold",), "name"),
        ("aten::mse_loss", ("mse_loss",), "op"),
        ("aten::mse_loss_backward", ("mse_loss_backward",), "op"),
    } <= told
    # Every ATen elementwise and reduction kernel of the recorded traces tells its op.
    for name in ("sync_item_stacks", "bf16_mlp_fp32_linear", "geglu_eager", "compile_clean_train"):
        kernels = load_trace(trace(name)).kernels
        untold = [
            k.name for k in kernels if k.family == "aten" and k.kind in ("pointwise", "reduction") and not k.fused_ops
        ]
        assert untold == [], name


def test_matmul_add_eager_is_gemm_then_add_compiled_is_one_gemm(trace: Trace) -> None:
    eager = load_trace(trace("matmul_add_eager"))
    assert [k.kind for k in eager.kernels] == ["gemm", "pointwise"]
    assert eager.kernels[1].fused_ops == ("add",)
    assert eager.kernels[1].op == "aten::add"
    compiled = load_trace(trace("matmul_add_compiled"))
    gemm = compiled.kernels.one(kind="gemm")
    assert len(compiled.kernels) == 1
    assert gemm.fused_ops == ("bias",)
    assert gemm.op == "aten::addmm"


def test_eager_geglu_runs_five_kernels_and_keeps_memsets_apart(trace: Trace) -> None:
    prof = load_trace(trace("geglu_eager"))
    assert len(prof.kernels) == 5
    assert prof.kernels.count(kind="gemm") == 3
    assert [k.fused_ops for k in prof.kernels.of_kind("pointwise")] == [("gelu",), ("mul",)]
    gate, up = prof.kernels.of_kind("gemm")[:2]
    assert gate.name == up.name
    assert all(m.kind == "memset" for m in prof.memory_ops)
    assert prof.runtime["cudaMemsetAsync"] == len(prof.memory_ops)


def test_compiled_geglu_fuses_gelu_and_mul(trace: Trace) -> None:
    eager = load_trace(trace("geglu_eager"))
    prof = load_trace(trace("geglu_compiled"))
    fused = prof.kernels.one("triton_poi_fused_*gelu*mul*")
    assert fused.fused_ops == ("gelu", "mul")  # not the view (_unsafe_view) its name has too
    assert fused.family == "inductor"
    assert len(prof.kernels) == 4
    assert prof.kernels.of_kind("gemm").names == eager.kernels.of_kind("gemm").names
    assert prof.runtime["cuLaunchKernel"] == 1  # Inductor launches Triton through the driver API


def test_liger_geglu_runs_its_own_fused_kernel(trace: Trace) -> None:
    prof = load_trace(trace("geglu_liger"))
    assert prof.kernels.count("_geglu_tanh_forward_kernel") == 1
    assert prof.kernels.one("_geglu_tanh_forward_kernel").op == "LigerGELUMulFunction"
    assert len(prof.kernels) == 4
    assert not any("Torch-Compiled" in name or "dynamo" in name.lower() for name in prof.ops)


def test_compiled_training_step_has_a_fused_gelu_backward(trace: Trace) -> None:
    prof = load_trace(trace("train_compiled"))
    backward = prof.kernels.one("triton_poi_fused_*gelu_backward*")
    assert "gelu_backward" in backward.fused_ops
    assert prof.kernels.count(kind="gemm") == 9  # 3 forward + 2 per linear in backward


def test_liger_training_step_has_its_backward_kernel(trace: Trace) -> None:
    prof = load_trace(trace("train_liger"))
    assert prof.kernels.count("_geglu_tanh_backward_kernel") == 1
    assert prof.kernels.one("_geglu_tanh_backward_kernel").op == "LigerGELUMulFunctionBackward"


@pytest.mark.parametrize(
    "name",
    [
        "linear_eager",
        "linear_compiled",
        "linear_fp32",
        "matmul_add_eager",
        "matmul_add_compiled",
        "geglu_eager",
        "geglu_compiled",
        "geglu_liger",
        "train_compiled",
        "train_liger",
    ],
)
def test_recorded_traces_are_complete_and_steady(trace: Trace, name: str) -> None:
    prof = load_trace(trace(name))
    assert isinstance(prof, KernelProfile)
    assert len(prof.calls) == 3
    assert not any(k.name.startswith("ProfilerStep#") for call in prof.calls for k in call.kernels)
    assert all(call.kernels.names == prof.kernels.names for call in prof.calls)
    launches = sum(n for api, n in prof.runtime.items() if "Launch" in api)
    assert launches == len(prof.kernels)
