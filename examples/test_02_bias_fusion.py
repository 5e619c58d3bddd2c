"""Part 1's ``torch.add(torch.matmul(x, w), b)``: eager runs two kernels, compiled runs one.

Eager PyTorch executes what you wrote: a GEMM, then an elementwise add kernel that reads
the GEMM's output back from memory. ``torch.compile`` sees both ops and rewrites them to
``addmm``, so cuBLAS folds the bias into the GEMM epilogue: one kernel, one pass.
"""

from __future__ import annotations

import pytest
import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@pytest.fixture
def matmul_add():
    torch.manual_seed(0)
    w = torch.randn(32, 64, device=DEVICE, dtype=torch.bfloat16)
    b = torch.randn(64, device=DEVICE, dtype=torch.bfloat16)
    x = torch.randn(1024, 32, device=DEVICE, dtype=torch.bfloat16)

    def fn(x):
        return torch.add(torch.matmul(x, w), b)

    return fn, x


def test_op_lists(kernelprof, matmul_add):
    """The CPU side of both versions (runs on CPU too)."""
    fn, x = matmul_add
    eager = kernelprof.profile(fn, (x,), no_grad=True)
    assert eager.ops["aten::matmul"].children == ["aten::mm"]
    assert "aten::add" in eager.ops

    compiled = kernelprof.profile(torch.compile(fn), (x,), no_grad=True)
    assert "aten::addmm" in compiled.ops
    assert "aten::mm" not in compiled.ops
    assert "aten::add" not in compiled.ops


@pytest.mark.gpu
def test_eager_runs_a_gemm_then_an_add(kernelprof, matmul_add):
    fn, x = matmul_add
    prof = kernelprof.profile(fn, (x,), no_grad=True)
    assert [k.kind for k in prof.kernels] == ["gemm", "pointwise"]
    add = prof.kernels.of_kind("pointwise").one()
    assert add.fused_ops == ("add",)  # decoded from ATen's CUDAFunctor_add
    assert add.op == "aten::add"


@pytest.mark.gpu
def test_compiled_runs_one_gemm_with_the_bias_folded_in(kernelprof, matmul_add):
    fn, x = matmul_add
    prof = kernelprof.profile(torch.compile(fn), (x,), no_grad=True)
    gemm = prof.kernels.one(kind="gemm")
    assert len(prof.kernels) == 1
    assert gemm.op == "aten::addmm"
