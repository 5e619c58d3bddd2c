"""The study's models, defined once for the examples, the tests, the tools and the benchmarks.

The real models of issue 15 (a tiny Llama, Liger-Kernel's Llama, ResNet-50) are at the end;
their libraries are optional (the ``examples`` extra) and imported where they are built.

The GeGLU MLP of the design study: ``down(gelu(gate(x)) * up(x))``, dim 768, hidden 3072,
input ``[64, 128, 768]``, bf16 on the GPU. The root ``conftest.py`` turns these into the
fixtures ``mlp``, ``x`` and ``liger_mlp``; scripts import them as ``examples.models``.
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Iterator
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


# -- sweeps (examples/test_10_sweeps.py, tools/record_sweeps.py) --------------------------------


class GeGLUBreakingOddBatches(GeGLUMLP):
    """The GeGLU MLP with a graph break between the GELU and the mul, for odd batch sizes only:
    a fusion regression that a test of one shape (batch 64) never sees."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate = F.gelu(self.gate_proj(x), approximate="tanh")
        if x.shape[0] % 2:
            torch._dynamo.graph_break()
        return self.down_proj(gate * self.up_proj(x))


SWEEP_SEQ = 128


def geglu_cases(model: type[GeGLUMLP] = GeGLUMLP) -> Any:
    """A sweep's builder: ``build(batch, hidden, dynamic=False)`` makes the input ``[batch, 128,
    768]`` and returns the call of the compiled MLP of that hidden size. One compiled model per
    hidden size and mode, made on first use: the batches of a size share it, so a new batch
    recompiles it (``dynamic=False``) or runs its dynamic graph (``dynamic=True``)."""
    compiled: dict[tuple[int, bool], Any] = {}

    def build(batch: int, hidden: int, dynamic: bool = False) -> Any:
        if (hidden, dynamic) not in compiled:
            torch.manual_seed(0)
            compiled[hidden, dynamic] = torch.compile(model(hidden=hidden).to(**BF16), dynamic=dynamic)
        x = torch.randn(batch, SWEEP_SEQ, DIM, **BF16)
        return lambda: compiled[hidden, dynamic](x)

    return build


def attention_case(seq_len: int) -> Any:
    """A sweep's builder: scaled-dot-product attention of ``[4, 8, seq_len, 64]`` bf16 q, k, v
    with the default backend choice."""
    torch.manual_seed(0)
    q, k, v = (torch.randn(4, 8, seq_len, 64, **BF16) for _ in range(3))
    return lambda: F.scaled_dot_product_attention(q, k, v)


# -- real models (optional: transformers, torchvision, liger-kernel; the `examples` extra) --------

LLAMA_VOCAB = 1000
LLAMA_IDS_SHAPE = (2, 64)


def tiny_llama(dtype: torch.dtype = torch.bfloat16) -> nn.Module:
    """A 2-layer Llama built from a config (no download): hidden 256, MLP 512, 4 heads (2 KV),
    vocabulary 1000, SDPA attention; on the GPU, seeded. Raises ImportError without transformers."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        hidden_size=256,
        intermediate_size=512,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=LLAMA_VOCAB,
        attn_implementation="sdpa",
    )
    torch.manual_seed(0)
    model: nn.Module = LlamaForCausalLM(config).to(device="cuda", dtype=dtype)
    return model.eval()


def llama_ids() -> torch.Tensor:
    torch.manual_seed(0)
    return torch.randint(0, LLAMA_VOCAB, LLAMA_IDS_SHAPE, device="cuda")


def llama_layer_inputs(model: nn.Module) -> tuple[torch.Tensor, dict[str, Any]]:
    """Hidden states and the keyword arguments of one decoder layer call of ``tiny_llama``."""
    hidden = torch.randn(*LLAMA_IDS_SHAPE, 256, device="cuda", dtype=torch.bfloat16)
    positions = torch.arange(LLAMA_IDS_SHAPE[1], device="cuda").unsqueeze(0).expand(*LLAMA_IDS_SHAPE)
    embeddings = model.model.rotary_emb(hidden, positions)  # type: ignore[operator, union-attr]
    return hidden, {"position_embeddings": embeddings, "position_ids": positions}


@contextlib.contextmanager
def liger_patched_llama() -> Iterator[None]:
    """Liger-Kernel's RMSNorm, SwiGLU MLP and RoPE in transformers' Llama, for the block only.

    ``apply_liger_kernel_to_llama`` replaces names in transformers' ``modeling_llama`` for the
    whole process; they are put back afterwards, so models built later are plain Llamas again.
    Build the model inside the block. Raises ImportError without liger-kernel.
    """
    from liger_kernel.transformers import apply_liger_kernel_to_llama
    from transformers.models.llama import modeling_llama

    patched = ("LlamaRMSNorm", "LlamaMLP", "apply_rotary_pos_emb")
    saved = {name: getattr(modeling_llama, name) for name in patched}
    apply_liger_kernel_to_llama(rope=True, rms_norm=True, swiglu=True, fused_linear_cross_entropy=False)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(modeling_llama, name, value)


def resnet50(*, channels_last: bool) -> nn.Module:
    """torchvision's ResNet-50 (random weights), bf16 on the GPU, in eval mode, seeded.
    Raises ImportError without torchvision."""
    import torchvision

    torch.manual_seed(0)
    model: nn.Module = torchvision.models.resnet50().to(device="cuda", dtype=torch.bfloat16).eval()
    return model.to(memory_format=torch.channels_last) if channels_last else model


def resnet_input(*, channels_last: bool) -> torch.Tensor:
    torch.manual_seed(0)
    x = torch.randn(2, 3, 64, 64, device="cuda", dtype=torch.bfloat16)
    return x.to(memory_format=torch.channels_last) if channels_last else x
