"""A GeGLU MLP three ways: eager, ``torch.compile`` and Liger-Kernel.

``down(gelu(gate(x)) * up(x))`` with dim 768, hidden 3072, x ``[64, 128, 768]`` in bf16:

* eager runs 5 kernels per forward: 3 GEMMs, a GELU and a mul (each elementwise op reads
  and writes a ``[64, 128, 3072]`` tensor); gate and up are the same GEMM kernel;
* compiled runs 4: Inductor fuses the GELU and the mul into one Triton kernel named after
  the ops it fused (``triton_poi_fused__unsafe_view_gelu_mul_0``); the GEMMs stay cuBLAS;
* Liger's ``LigerGEGLUMLP`` runs 4 too, with its hand-written ``_geglu_tanh_forward_kernel``,
  and without Dynamo on the CPU side;
* in a training step, the backward gets its own fused kernel in both.

cuBLAS may add workspace memsets (2-3 per call on H100/H200, varying with shape and card):
they are ``prof.memory_ops``, not kernels, so the counts below hold across GPUs.
"""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.gpu

# The model, its input and the Liger variant are the fixtures mlp, x and liger_mlp of the
# root conftest.py; the model itself is in examples/models.py.


def test_eager_runs_five_kernels(kernelprof, mlp, x):
    prof = kernelprof.profile(mlp, (x,), no_grad=True)
    assert len(prof.kernels) == 5
    assert prof.kernels.count(kind="gemm") == 3
    assert [k.fused_ops for k in prof.kernels.of_kind("pointwise")] == [("gelu",), ("mul",)]
    gate, up, down = prof.kernels.of_kind("gemm")
    assert gate.name == up.name  # same shapes, same cuBLAS choice
    assert all(m.kind == "memset" for m in prof.memory_ops)  # workspace memsets stay apart


def test_compiled_fuses_gelu_and_mul(kernelprof, mlp, x):
    eager = kernelprof.profile(mlp, (x,), no_grad=True)
    prof = kernelprof.profile(torch.compile(mlp), (x,), no_grad=True)
    assert prof.kernels.count("triton_poi_fused_*gelu*mul*") == 1
    fused = prof.kernels.one(kind="pointwise")
    assert {"gelu", "mul"} <= set(fused.fused_ops)
    assert fused.family == "inductor"
    assert fused.dtype == "bf16"  # read from the signature Inductor compiled it with (evidence "ir")
    assert len(prof.kernels) == 4
    assert prof.kernels.of_kind("gemm").names == eager.kernels.of_kind("gemm").names


def test_fusion_saves_gpu_time(kernelprof, mlp, x):
    eager = kernelprof.profile(mlp, (x,), no_grad=True)
    compiled = kernelprof.profile(torch.compile(mlp), (x,), no_grad=True)
    eager_elementwise = eager.kernels.of_kind("pointwise").total_us
    fused = compiled.kernels.of_kind("pointwise").total_us
    assert fused < eager_elementwise  # one pass over the hidden tensor instead of two


def test_liger_runs_its_fused_kernel_without_dynamo(kernelprof, liger_mlp, x):
    prof = kernelprof.profile(liger_mlp, (x,), no_grad=True)
    assert prof.kernels.count("_geglu_tanh_forward_kernel") == 1
    assert prof.kernels.one("_geglu_tanh_forward_kernel").op == "LigerGELUMulFunction"
    assert len(prof.kernels) == 4
    assert not [op for op in prof.ops if "Dynamo" in op or "Torch-Compiled" in op]


def test_compiled_has_dynamo_on_the_cpu_side(kernelprof, mlp, x):
    prof = kernelprof.profile(torch.compile(mlp), (x,), no_grad=True)
    assert "TorchDynamo Cache Lookup" in prof.ops
    assert [op for op in prof.ops if op.startswith("Torch-Compiled Region")]


def test_liger_matches_eager_numerically(mlp, liger_mlp, x):
    with torch.no_grad():
        torch.testing.assert_close(liger_mlp(x), mlp(x), rtol=2e-2, atol=2e-2)


def test_compiled_training_step_fuses_the_gelu_backward(kernelprof, mlp, x):
    compiled = torch.compile(mlp)
    x = x.requires_grad_()

    def step():
        compiled(x).sum().backward()

    prof = kernelprof(step)
    backward = prof.kernels.one("triton_poi_fused_*gelu_backward*")
    assert "gelu_backward" in backward.fused_ops
    assert prof.kernels.count(kind="gemm") == 9  # 3 forward, 2 per linear in backward


def test_liger_training_step_has_its_backward_kernel(kernelprof, liger_mlp, x):
    x = x.requires_grad_()

    def step():
        liger_mlp(x).sum().backward()

    prof = kernelprof(step)
    assert prof.kernels.count("_geglu_tanh_backward_kernel") == 1
    assert prof.kernels.count("_geglu_tanh_forward_kernel") == 1
