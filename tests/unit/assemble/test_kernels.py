"""Kernels as the builder makes them (``assemble/kernels.py``): each carries the user's frames of
its launch under ``stacks=True``; a user's Triton kernel is what its compiled IR showed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_kernelprof import KernelProfile, TraceError, load_trace
from tests.helpers import Stream, write

Trace = Callable[[str], Path]


def test_kernels_carry_the_frames_of_their_launch(trace: Trace) -> None:
    prof = load_trace(trace("sync_item_stacks"))
    forward = [k for k in prof.kernels if k.op in ("aten::addmm", "aten::clamp_min", "aten::mse_loss")]
    assert forward
    assert all(k.stack == ("train.py(40): train_step_item",) for k in forward)
    # Backward runs on autograd's own thread, where no Python frame is open.
    assert any(k.stack == () for k in prof.kernels if k.op == "aten::mm")


def _user_kernel_trace(tmp_path: Path, name: str, **top: Any) -> KernelProfile:
    s = Stream()
    s.step(0, 0, 100)
    op = s.op("my_model.attention", 1, 20)
    s.launch(op, name, 2, api="cuLaunchKernel")
    return load_trace(write(tmp_path, s, **top))


def test_a_user_triton_kernel_is_what_its_ir_showed(tmp_path: Path) -> None:
    key = {
        "version": 1,
        "triton_kernels": ["_fwd_kernel"],
        "triton_ir": {"_fwd_kernel": {"kind": "gemm", "dtype": "bf16"}},
    }
    kernel = _user_kernel_trace(tmp_path, "_fwd_kernel", kernelprof=key).kernels[0]
    assert (kernel.kind, kernel.family, kernel.dtype) == ("gemm", "triton", "bf16")
    assert (kernel.evidence.kind, kernel.evidence.dtype) == ("ir", "ir")
    assert not kernel.unplaced
    # without the IR the same kernel is one no evidence placed
    bare = {"version": 1, "triton_kernels": ["_fwd_kernel"]}
    assert _user_kernel_trace(tmp_path, "_fwd_kernel", kernelprof=bare).kernels[0].unplaced


def test_a_kernel_its_name_places_keeps_what_the_name_says(tmp_path: Path) -> None:
    name = "triton_poi_fused_add_0"
    key = {"version": 1, "triton_kernels": [name], "triton_ir": {name: {"kind": "gemm", "dtype": "fp16"}}}
    kernel = _user_kernel_trace(tmp_path, name, kernelprof=key).kernels[0]
    assert (kernel.kind, kernel.evidence.kind) == ("pointwise", "name")


@pytest.mark.parametrize(
    "triton_ir",
    [["_fwd_kernel"], {"_fwd_kernel": {"kind": "matmul"}}, {"_fwd_kernel": {"kind": "gemm", "dtype": "bfloat16"}}],
)
def test_ir_facts_a_trace_cannot_hold_are_refused(tmp_path: Path, triton_ir: object) -> None:
    key = {"version": 1, "triton_kernels": ["_fwd_kernel"], "triton_ir": triton_ir}
    with pytest.raises(TraceError, match=r"'kernelprof\.triton_ir' is not an object of kernel names"):
        _user_kernel_trace(tmp_path, "_fwd_kernel", kernelprof=key)


def test_a_kernel_its_name_places_takes_only_the_dtype_it_lacked_from_the_ir(tmp_path: Path) -> None:
    # A Liger kernel under its autograd Function: its name gives the kind, the IR the dtype.
    s = Stream()
    s.step(0, 0, 100)
    op = s.op("LigerRMSNormFunction", 1, 20)
    s.launch(op, "_rms_norm_forward_kernel", 2)
    ir = {"_rms_norm_forward_kernel": {"kind": "pointwise", "dtype": "bf16"}}
    key = {"version": 1, "triton_kernels": ["_rms_norm_forward_kernel"], "triton_ir": ir}
    kernel = load_trace(write(tmp_path, s, kernelprof=key)).kernels[0]
    assert (kernel.kind, kernel.family, kernel.dtype) == ("reduction", "liger", "bf16")
    assert (kernel.evidence.kind, kernel.evidence.dtype) == ("name", "ir")
