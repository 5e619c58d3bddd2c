"""A tiny Llama three ways: eager, with Liger-Kernel, and one decoder layer compiled.

``LlamaForCausalLM`` from ``transformers`` built from a config (2 decoder layers, hidden 256,
no download), bf16, ``input_ids`` of shape ``[2, 64]``. Per decoder layer, with ``modules=True``
so that each fact is asked of the module it is about:

* eager: the MLP is 3 GEMMs, then ``aten::silu`` and ``aten::mul`` as two pointwise kernels; each
  RMSNorm is a chain of ATen kernels (to fp32, pow, mean, add, rsqrt, mul, ...) with one
  reduction among them; SDPA runs one attention kernel (cuDNN's on Hopper), not the math path
  (``bmm``, softmax, ``bmm``);
* Liger-Kernel patched in: one ``_rms_norm_forward_kernel`` per norm, one ``_swiglu_forward_kernel``
  for SiLU(gate) * up and no pointwise kernel left in the MLP, one ``_triton_rope``; they are
  Triton kernels (family ``triton``), learned from Triton's launch hook while profiling;
* a compiled decoder layer: Inductor fuses each RMSNorm into one Triton reduction kernel; no
  module hook runs inside the compiled region, so the layer's own range is the only one;
* a training step: backward kernels run on the autograd thread, outside every forward hook, so
  they belong to no module.

``transformers`` and ``liger-kernel`` are the ``examples`` extra (``pip install -e ".[examples]"``);
the tests skip without them.
"""

from __future__ import annotations

import pytest
import torch

from examples.models import liger_patched_llama, llama_ids, llama_layer_inputs, tiny_llama

pytest.importorskip("transformers", reason="needs transformers: pip install -e '.[examples]'")

pytestmark = pytest.mark.gpu

LAYERS = ("model.layers.0", "model.layers.1")
LIGER_KERNELS = ("_rms_norm_forward_kernel", "_swiglu_forward_kernel", "_triton_rope")


@pytest.fixture
def llama():
    return tiny_llama()


@pytest.fixture
def ids():
    return llama_ids()


def test_each_eager_layer_by_module(kernelprof, llama, ids):
    prof = kernelprof.profile(llama, (ids,), no_grad=True, modules=True)
    for layer in LAYERS:
        mlp = prof.module(f"{layer}.mlp")
        assert mlp.kernels.count(kind="gemm") == 3  # gate, up, down
        assert [k.op for k in mlp.kernels.of_kind("pointwise")] == ["aten::silu", "aten::mul"]
        for norm in ("input_layernorm", "post_attention_layernorm"):
            kernels = prof.module(f"{layer}.{norm}").kernels
            assert kernels.count(kind="reduction") == 1  # the mean
            assert kernels.count(kind="pointwise") >= 4  # eager: one kernel per op around it
        attention = prof.module(f"{layer}.self_attn").kernels.one(kind="attention")
        assert "aten::scaled_dot_product_attention" in attention.ops
    assert "aten::_scaled_dot_product_attention_math" not in prof.ops
    assert prof.module("LlamaForCausalLM").count == 1
    assert prof.module("lm_head").kernels.count(kind="gemm") == 1


def test_liger_layers_run_its_triton_kernels(kernelprof, ids):
    pytest.importorskip("liger_kernel", reason="needs liger-kernel: pip install -e '.[examples]'")
    # Liger's Triton kernels carry no marker in their names, but the plugin knows every one
    # liger-kernel ships (family liger, the kind each computes), and reads the dtype from its IR.
    with liger_patched_llama():
        model = tiny_llama()
        prof = kernelprof.profile(model, (ids,), no_grad=True, modules=True)
    for layer in LAYERS:
        for norm in ("input_layernorm", "post_attention_layernorm"):
            assert prof.module(f"{layer}.{norm}").kernels.names == ["_rms_norm_forward_kernel"]
        mlp = prof.module(f"{layer}.mlp").kernels
        assert mlp.count(kind="gemm") == 3
        assert mlp.count("_swiglu_forward_kernel") == 1
        assert mlp.count(kind="pointwise") == 1  # SiLU and the mul are one SwiGLU kernel
        assert prof.module(f"{layer}.self_attn").kernels.count("_triton_rope") == 1
    assert "aten::silu" not in prof.ops
    liger = [k for k in prof.kernels if k.name in LIGER_KERNELS]
    assert {(k.kind, k.family) for k in liger} == {("reduction", "liger"), ("pointwise", "liger")}
    assert not prof.kernels.unplaced()
    assert len(liger) == 2 * 4 + 1  # per layer 2 norms, SwiGLU, RoPE; the final norm
    assert kernelprof.captures[-1].learned["triton_kernels"] == sorted(LIGER_KERNELS)
    assert {k.dtype for k in liger} == {"bf16"}


def test_a_liger_training_step_places_every_kernel(kernelprof, ids):
    pytest.importorskip("liger_kernel", reason="needs liger-kernel: pip install -e '.[examples]'")
    with liger_patched_llama():
        model = tiny_llama()

    def train_step():
        model(ids, labels=ids).loss.backward()

    prof = kernelprof(train_step)
    assert not prof.kernels.unplaced()  # so no kind or dtype question warns
    learned = set(kernelprof.captures[-1].learned["triton_kernels"])
    liger = [k for k in prof.kernels if k.name in learned]
    assert {k.name for k in liger} >= {"_rms_norm_backward_kernel", "_swiglu_backward_kernel"}
    assert {k.family for k in liger} == {"liger"}  # never aten, though _layer_norm_* names look like ATen's
    assert not learned & {k.name for k in prof.kernels if k.family == "aten"}  # no Triton kernel reads as ATen's


def test_a_compiled_layer_fuses_each_rmsnorm_into_one_triton_reduction(kernelprof, llama):
    layer = llama.model.layers[0]
    hidden, kwargs = llama_layer_inputs(llama)
    eager = kernelprof.profile(layer, (hidden,), kwargs, no_grad=True)
    prof = kernelprof.profile(torch.compile(layer), (hidden,), kwargs, no_grad=True, modules=True)
    norms = [k for k in prof.kernels if k.family == "inductor" and {"pow", "mean", "rsqrt"} <= set(k.fused_ops)]
    assert len(norms) == 2  # input and post-attention norm, one kernel each
    assert {k.kind for k in norms} <= {"reduction", "persistent_reduction"}
    assert eager.kernels.count(kind="reduction") == 2
    # kind="reduction" counts Inductor's persistent reductions too: the same work as eager's.
    assert prof.kernels.count(kind="reduction") == 2
    assert prof.kernels.count(kind="gemm") == eager.kernels.count(kind="gemm") == 7
    assert len(prof.kernels) < len(eager.kernels) / 2
    # Inductor's kernels belong to the compiled region, not to the range named after each kernel.
    assert all(k.op.startswith("Torch-Compiled Region") for k in norms)
    assert list(prof.modules) == ["LlamaDecoderLayer"]  # no module hook runs inside compiled code


def test_backward_kernels_belong_to_no_module(kernelprof, llama, ids):
    llama.train()

    def step():
        llama(input_ids=ids, labels=ids).loss.backward()

    prof = kernelprof.profile(step, modules=llama)
    backward = [k for k in prof.kernels if k.ops and k.ops[0].startswith("autograd::engine")]
    assert backward
    assert all(k.module is None for k in backward)
    forward = prof.module("model.layers.1.mlp").kernels
    assert forward.count(kind="gemm") == 3
    assert all(k.module.startswith("model.layers.1.mlp") for k in forward)
