"""The study's models, defined once for the examples, the tests, the tools and the benchmarks.

The GeGLU MLP of the design study: ``down(gelu(gate(x)) * up(x))``, dim 768, hidden 3072,
input ``[64, 128, 768]``, bf16 on the GPU. The root ``conftest.py`` turns these into the
fixtures ``mlp``, ``x`` and ``liger_mlp``; scripts import them as ``examples.models``.
"""

from __future__ import annotations

import types
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

DIM, HIDDEN = 768, 3072
INPUT_SHAPE = (64, 128, DIM)
BF16: dict[str, Any] = {"device": "cuda", "dtype": torch.bfloat16}


class GeGLUMLP(nn.Module):
    def __init__(self, dim: int = DIM, hidden: int = HIDDEN) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden, bias=False)
        self.up_proj = nn.Linear(dim, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.gelu(self.gate_proj(x), approximate="tanh") * self.up_proj(x))


def geglu_mlp() -> GeGLUMLP:
    """The study's MLP, bf16 on the GPU, with the same weights every time."""
    torch.manual_seed(0)
    return GeGLUMLP().to(**BF16)


def geglu_input(*, requires_grad: bool = False) -> torch.Tensor:
    return torch.randn(*INPUT_SHAPE, **BF16, requires_grad=requires_grad)


def liger_geglu_mlp(like: nn.Module | None = None) -> nn.Module:
    """Liger-Kernel's ``LigerGEGLUMLP`` of the same size (weights of ``like`` when given).

    Raises ImportError where liger-kernel is not installed.
    """
    from liger_kernel.transformers import LigerGEGLUMLP

    config = types.SimpleNamespace(hidden_size=DIM, intermediate_size=HIDDEN, hidden_act="gelu_pytorch_tanh")
    liger: nn.Module = LigerGEGLUMLP(config).to(**BF16)
    if like is not None:
        liger.load_state_dict(like.state_dict())
    return liger
