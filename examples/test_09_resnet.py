"""ResNet-50 convolutions: which kernels cuDNN runs, and channels-last.

torchvision's ResNet-50 (random weights), bf16, a batch of 2 at 64x64, inference:

* every convolution is ``aten::cudnn_convolution``, 53 of them. cuDNN runs each 1x1 convolution
  of stride 1 (the first and last of every bottleneck block, and layer1's shortcut: 33) as a GEMM
  kernel (nvjet on Hopper), which is ``kind="gemm"`` by name: a GEMM kernel's name says nothing
  of a convolution. The op chain does: ``prof.ops["aten::cudnn_convolution"].kernels`` holds them,
  and each one's ``Kernel.ops`` has ``aten::cudnn_convolution``. The 3x3, 7x7 and strided
  convolutions run convolution kernels;
* channels-last model and input: no layout kernels around the convolutions; NCHW: cuDNN converts
  to NHWC and back (``nchwToNhwcKernel``, ``nhwcToNchwKernel``) around many of them.

``torchvision`` is in the ``examples`` extra (``pip install -e ".[examples]"``); the tests skip
without it.
"""

from __future__ import annotations

import re

import pytest
from torch import nn

from examples.models import resnet50, resnet_input

pytest.importorskip("torchvision", reason="needs torchvision: pip install -e '.[examples]'")

pytestmark = pytest.mark.gpu

LAYOUT_CONVERSIONS = re.compile(r"nchwToNhwc|nhwcToNchw")


def convolutions(model: nn.Module) -> tuple[list[str], list[str]]:
    """Names of the 1x1 stride-1 convolutions, and of the others."""
    one_by_one, others = [], []
    for name, module in model.named_modules():
        if isinstance(module, nn.Conv2d):
            plain = module.kernel_size == (1, 1) and module.stride == (1, 1)
            (one_by_one if plain else others).append(name)
    return one_by_one, others


def test_one_by_one_convolutions_run_as_gemm_kernels(kernelprof):
    model = resnet50(channels_last=True)
    prof = kernelprof.profile(model, (resnet_input(channels_last=True),), no_grad=True, modules=True)
    convs = prof.ops["aten::cudnn_convolution"]
    assert convs.count == 53
    one_by_one, others = convolutions(model)
    assert len(one_by_one) == 33
    for name in one_by_one:
        kernels = prof.module(name).kernels
        gemm = kernels.one(kind="gemm")
        assert "aten::cudnn_convolution" in gemm.ops
        assert kernels.count(kind="convolution") == 0, name
    for name in others:
        kernels = prof.module(name).kernels
        assert kernels.count(kind="convolution") == 1, name
        assert kernels.count(kind="gemm") == 0, name
    assert convs.kernels.count(kind="gemm") == 33
    assert convs.kernels.count(kind="convolution") == len(others) == 20
    # The classifier's GEMM is no convolution.
    assert "aten::cudnn_convolution" not in prof.module("fc").kernels.one(kind="gemm").ops


def test_channels_last_runs_no_layout_conversions(kernelprof):
    channels_last = kernelprof.profile(resnet50(channels_last=True), (resnet_input(channels_last=True),), no_grad=True)
    nchw = kernelprof.profile(resnet50(channels_last=False), (resnet_input(channels_last=False),), no_grad=True)
    assert channels_last.kernels.count(LAYOUT_CONVERSIONS) == 0
    conversions = nchw.kernels.matching(LAYOUT_CONVERSIONS)
    assert len(conversions) > 0
    assert {(k.kind, k.family, k.op) for k in conversions} == {("pointwise", "cudnn", "aten::cudnn_convolution")}
    assert len(channels_last.kernels) < len(nchw.kernels)
