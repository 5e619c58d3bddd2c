"""Kernel diffs (``checks/diff.py``, ``kernelprof diff``): no invented fusions; a one-for-one
replacement is no fusion, and each removed kernel is fused into one kernel at most."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_kernelprof import load_trace
from pytest_kernelprof.checks.diff import diff_kernels, render_diff
from pytest_kernelprof.cli import main
from pytest_kernelprof.decode import parse_kernel_name

Trace = Callable[[str], Path]


def test_a_one_for_one_replacement_is_no_fusion() -> None:
    gemm = parse_kernel_name("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT")
    tanh = parse_kernel_name(
        "void at::native::vectorized_elementwise_kernel<4, at::native::tanh_kernel_cuda(at::TensorIteratorBase&)"
        "::{lambda()#2}::operator()() const::{lambda()#1}::operator()() const::{lambda(float)#1}, "
        "std::array<char*, 2ul> >(int, at::native::tanh_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}"
        "::operator()() const::{lambda()#1}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)"
    )
    fused = parse_kernel_name("triton_poi_fused_tanh_0")
    assert tanh.fused_ops == fused.fused_ops == ("tanh",)
    diff = diff_kernels([gemm, tanh] * 64, [gemm, fused] * 64)
    assert diff.fusions == ()
    assert not any(line.startswith("fused:") for line in render_diff(diff))


def test_each_removed_kernel_is_fused_into_one_kernel(trace: Trace) -> None:
    eager = list(load_trace(trace("decode_eager")).kernels)
    graphs = list(load_trace(trace("decode_graphs")).kernels)
    diff = diff_kernels(eager, graphs)
    assert [len(covered) for covered, _ in diff.fusions] == [3] * 12  # add, tanh and mul of each layer
    assert all(sorted(k.fused_ops[0] for k in covered) == ["add", "mul", "tanh"] for covered, _ in diff.fusions)
    claimed = [id(k) for covered, _ in diff.fusions for k in covered]
    assert len(claimed) == len(set(claimed))
    fused = [line for line in render_diff(diff) if line.startswith("fused:")]
    ops = "add (aten pointwise) + tanh (aten pointwise) + mul (aten pointwise)"
    assert fused[0] == f"fused: {ops} -> triton_poi_fused_add_mul_tanh_0"


def test_kernelprof_diff_tells_each_fusion_once(trace: Trace, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", str(trace("decode_eager")), str(trace("decode_graphs"))]) == 1
    fused = [line for line in capsys.readouterr().out.splitlines() if line.startswith("fused:")]
    assert len(fused) == 12
    assert all(line.count(" + ") == 2 for line in fused)
