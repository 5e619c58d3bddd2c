"""nn.Linear is one GEMM: the bias rides in its epilogue, and the transpose is a view.

Part 2 of "Profiling in PyTorch" starts from ``nn.Linear(32, 64)`` on a ``[1024, 32]``
bf16 input. What it found, as tests that hold on any NVIDIA GPU:

* one kernel per call, a GEMM with layout ``tn`` (the weight is read transposed);
* no separate add kernel: cuBLAS adds the bias in the GEMM's epilogue;
* on the CPU, ``aten::linear`` calls ``aten::t`` (a view: ``aten::transpose`` then
  ``aten::as_strided``) and then ``aten::addmm``, and the views launch nothing;
* ``torch.compile`` runs the very same GPU kernel, but its CPU side calls
  ``aten::addmm`` directly: no ``aten::t`` at all.

The CPU-side claims run everywhere, also in CPU-only CI; the GPU claims are marked ``gpu``.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
VIEWS = ["aten::t", "aten::transpose", "aten::as_strided"]
# With a 3-D input, nn.Linear flattens it for a 2-D GEMM and restores the shape afterwards.
VIEWS_3D = {*VIEWS, "aten::reshape", "aten::view", "aten::_unsafe_view"}


@pytest.fixture
def linear_and_input() -> tuple[nn.Linear, torch.Tensor]:
    torch.manual_seed(0)
    lin = nn.Linear(32, 64, bias=True, device=DEVICE, dtype=torch.bfloat16)
    return lin, torch.randn(1024, 32, device=DEVICE, dtype=torch.bfloat16)


def test_dispatch_chain(kernelprof, linear_and_input):
    """The CPU ops of one call, as the profiler's op tree shows them (runs on CPU too)."""
    lin, x = linear_and_input
    prof = kernelprof.profile(lin, (x,), no_grad=True)
    assert prof.ops["aten::linear"].children == ["aten::t", "aten::addmm"]
    assert prof.ops["aten::t"].children == ["aten::transpose"]
    assert prof.ops["aten::transpose"].children == ["aten::as_strided"]
    # aten::t is a view: nothing below it copies or computes.
    assert prof.ops["aten::as_strided"].children == []


@pytest.mark.gpu
def test_one_gemm_with_the_bias_fused(kernelprof, linear_and_input):
    lin, x = linear_and_input
    prof = kernelprof.profile(lin, (x,), no_grad=True)

    gemm = prof.kernels.one(kind="gemm")  # exactly one GEMM, or a failure that prints the table
    assert gemm.layout == "tn"
    assert gemm.dtype in ("bf16", None)  # decoded from the name where the library spells it
    assert gemm.op == "aten::addmm"
    assert len(prof.kernels) == 1  # no elementwise add kernel: the epilogue added the bias
    assert "aten::add" not in prof.ops

    # The literal form is GPU-specific. On Hopper cuBLASLt picks a JIT "nvjet" kernel whose
    # name says "bias" (H100: nvjet_sm90_tst_8x64_64x16_2x1_v_bz_bias_TNN, H200: ..._bias_TNT);
    # an A100 runs cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_32x1_tn_align8, whose
    # name does not. Hence kind/layout queries for the portable claim.
    if gemm.family == "nvjet":
        assert gemm.fused_ops == ("bias",)


@pytest.mark.gpu
@pytest.mark.parametrize("view", VIEWS)
def test_views_launch_nothing(kernelprof, linear_and_input, view):
    lin, x = linear_and_input
    prof = kernelprof.profile(lin, (x,), no_grad=True)
    assert prof.ops[view].device_time_us == 0
    assert prof.ops["aten::addmm"].device_time_us > 0  # ...while the GEMM's op carries the time


def test_views_around_a_3d_input_do_no_work(kernelprof):
    """Every view op's subtree holds only views: nothing copies (runs on CPU too)."""
    lin = nn.Linear(32, 64, bias=False, device=DEVICE, dtype=torch.bfloat16)
    x = torch.randn(4, 8, 32, device=DEVICE, dtype=torch.bfloat16)
    prof = kernelprof.profile(lin, (x,), no_grad=True)
    assert prof.ops["aten::matmul"].children == ["aten::reshape", "aten::mm", "aten::_unsafe_view"]
    assert set(prof.ops) >= VIEWS_3D
    for view in VIEWS_3D:
        assert set(prof.ops[view].children) <= VIEWS_3D


@pytest.mark.gpu
def test_views_around_a_3d_input_have_no_device_time(kernelprof):
    lin = nn.Linear(32, 64, bias=False, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(4, 8, 32, device="cuda", dtype=torch.bfloat16)
    prof = kernelprof.profile(lin, (x,), no_grad=True)
    assert {view: prof.ops[view].device_time_us for view in VIEWS_3D} == dict.fromkeys(VIEWS_3D, 0)
    assert prof.ops["aten::mm"].device_time_us > 0


@pytest.mark.gpu
def test_compiled_linear_runs_the_same_kernel(kernelprof, linear_and_input):
    lin, x = linear_and_input
    eager = kernelprof.profile(lin, (x,), no_grad=True)
    compiled = kernelprof.profile(torch.compile(lin), (x,), no_grad=True)
    assert compiled.kernels.names == eager.kernels.names


def test_compiled_linear_skips_aten_t(kernelprof, linear_and_input):
    """Inductor hands the transposed weight straight to addmm (runs on CPU too)."""
    lin, x = linear_and_input
    compiled = kernelprof.profile(torch.compile(lin), (x,), no_grad=True)
    assert "aten::addmm" in compiled.ops
    assert "aten::t" not in compiled.ops
    assert "aten::linear" not in compiled.ops
