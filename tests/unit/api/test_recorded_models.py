"""The real-model facts of examples/test_08_llama.py and test_09_resnet.py, on traces recorded on
a GPU with modules=True (``python -m tools.record_models``): what CI checks without a GPU.

The traces carry their module ranges and the ``"kernelprof"`` key with the Triton kernels
capture learned, so these are the live profile's answers, read back by ``load_trace``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import pytest

from pytest_kernelprof import KernelProfile, UndecodedKernelWarning, load_trace
from pytest_kernelprof.types import Decoder
from tests.helpers import DATA

LAYERS = ("model.layers.0", "model.layers.1")
LIGER_KERNELS = ("_rms_norm_forward_kernel", "_swiglu_forward_kernel", "_triton_rope")


@pytest.fixture(scope="module")
def recorded() -> Callable[[str], KernelProfile]:
    """``recorded("llama_forward_modules")``: the profile of ``tests/data/<card>_<name>.json.gz``."""
    cache: dict[str, KernelProfile] = {}

    def load(name: str) -> KernelProfile:
        if name not in cache:
            found = sorted(DATA.glob(f"h[12]00_{name}.json.gz"))
            assert len(found) == 1, f"expected one recorded trace of {name} in {DATA}, found {found}"
            cache[name] = load_trace(found[0])
        return cache[name]

    return load


def test_each_eager_llama_layer_by_module(recorded: Callable[[str], KernelProfile]) -> None:
    prof = recorded("llama_forward_modules")
    for layer in LAYERS:
        mlp = prof.module(f"{layer}.mlp")
        assert mlp.kernels.count(kind="gemm") == 3
        assert [k.op for k in mlp.kernels.of_kind("pointwise")] == ["aten::silu", "aten::mul"]
        assert [k.module for k in mlp.kernels] == [f"{layer}.mlp.{m}" for m in ("gate_proj", "act_fn", "up_proj")] + [
            f"{layer}.mlp",
            f"{layer}.mlp.down_proj",
        ]
        for norm in ("input_layernorm", "post_attention_layernorm"):
            kernels = prof.module(f"{layer}.{norm}").kernels
            assert kernels.count(kind="reduction") == 1
            assert kernels.count(kind="pointwise") >= 4
        attention = prof.module(f"{layer}.self_attn").kernels.one(kind="attention")
        assert "aten::scaled_dot_product_attention" in attention.ops
        assert attention.ops[:3] == ("nn.Module: LlamaForCausalLM", "nn.Module: model", f"nn.Module: {layer}")
    assert "aten::_scaled_dot_product_attention_math" not in prof.ops
    assert prof.module("LlamaForCausalLM").kernels == prof.kernels
    assert prof.module("lm_head").kernels.count(kind="gemm") == 1
    assert sum(prof.module(n).device_time_us for n in LAYERS) < prof.module("model").device_time_us
    assert not [k for k in prof.kernels if k.kind == "other"]


def test_liger_llama_layers_run_its_triton_kernels(recorded: Callable[[str], KernelProfile]) -> None:
    prof = recorded("liger_llama_forward_modules")
    for layer in LAYERS:
        for norm in ("input_layernorm", "post_attention_layernorm"):
            assert prof.module(f"{layer}.{norm}").kernels.names == ["_rms_norm_forward_kernel"]
        mlp = prof.module(f"{layer}.mlp").kernels
        assert mlp.count("_swiglu_forward_kernel") == 1
        assert [k.kind for k in mlp].count("gemm") == 3
        assert prof.module(f"{layer}.self_attn").kernels.count("_triton_rope") == 1
    assert "aten::silu" not in prof.ops
    liger = [k for k in prof.kernels if k.name in LIGER_KERNELS]
    assert len(liger) == 2 * 4 + 1
    # Known out of the box: Liger's kernels by name, given that they are Triton kernels (the
    # trace's "kernelprof" key says so, and their ops are Liger's autograd Functions).
    assert {(k.name, k.kind, k.family) for k in liger} == {
        ("_rms_norm_forward_kernel", "reduction", "liger"),
        ("_swiglu_forward_kernel", "pointwise", "liger"),
        ("_triton_rope", "pointwise", "liger"),
    }
    assert {(k.evidence.kind, k.evidence.family) for k in liger} == {("name", "name")}
    assert not prof.kernels.unplaced()
    assert not [k for k in prof.kernels if k.kind == "other" or k.family == "aten" and k.name in LIGER_KERNELS]


def test_liger_kernels_answer_kind_questions_quietly(recorded: Callable[[str], KernelProfile]) -> None:
    prof = recorded("liger_llama_forward_modules")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UndecodedKernelWarning)
        mlp = prof.module(f"{LAYERS[0]}.mlp").kernels
        assert mlp.count(kind="gemm") == 3
        assert mlp.one(kind="pointwise").name == "_swiglu_forward_kernel"
        assert prof.module(f"{LAYERS[0]}.input_layernorm").kernels.one(kind="reduction").family == "liger"
        assert prof.module(f"{LAYERS[0]}.self_attn").kernels.count(kind="pointwise") >= 1


# What a user may still teach: it comes before the built-in table.
LIGER_TEACHING = ("_triton_rope: kind=attention",)


def test_taught_facts_win_over_the_built_in_liger_table() -> None:
    (path,) = sorted(DATA.glob("h[12]00_liger_llama_forward_modules.json.gz"))
    prof = load_trace(path, decoder=Decoder().teach_lines(LIGER_TEACHING, "LIGER_TEACHING"))
    rope = prof.kernels.matching("_triton_rope")
    assert {(k.kind, k.family, k.evidence.kind) for k in rope} == {("attention", "liger", "user")}


def test_liger_geglu_forward_and_backward_are_pointwise_liger_kernels() -> None:
    for name, kernel in (("geglu_liger", "_geglu_tanh_forward_kernel"), ("train_liger", "_geglu_tanh_backward_kernel")):
        (path,) = sorted(DATA.glob(f"h[12]00_{name}.json.gz"))
        found = load_trace(path).kernels.one(kernel)
        assert (found.kind, found.family) == ("pointwise", "liger")
        assert found.op is not None  # these traces have no "kernelprof" key: the op places them
        assert found.op.startswith("LigerGELUMulFunction")


def test_a_compiled_llama_layer_fuses_each_rmsnorm(recorded: Callable[[str], KernelProfile]) -> None:
    prof = recorded("llama_layer_compiled_modules")
    norms = [k for k in prof.kernels if k.family == "inductor" and {"pow", "mean", "rsqrt"} <= set(k.fused_ops)]
    assert len(norms) == 2
    assert {k.kind for k in norms} <= {"reduction", "persistent_reduction"}
    assert prof.kernels.count(kind="reduction") == 2  # persistent reductions included
    assert prof.kernels.count(kind="gemm") == 7
    for kernel in norms:
        assert kernel.op is not None
        assert kernel.op.startswith("Torch-Compiled Region")
        assert kernel.ops[-1].startswith("## Call CompiledFxGraph")  # Inductor's per-kernel range left out
        assert kernel.module == "LlamaDecoderLayer"
    assert list(prof.modules) == ["LlamaDecoderLayer"]


def resnet50_convolutions() -> tuple[list[str], list[str]]:
    """torchvision's ResNet-50 by name: its 1x1 stride-1 convolutions, and the others."""
    one_by_one, others = ["layer1.0.downsample.0"], ["conv1"]
    for layer, blocks in enumerate((3, 4, 6, 3), start=1):
        for block in range(blocks):
            one_by_one += [f"layer{layer}.{block}.conv1", f"layer{layer}.{block}.conv3"]
            others.append(f"layer{layer}.{block}.conv2")
        if layer > 1:
            others.append(f"layer{layer}.0.downsample.0")
    return one_by_one, others


def test_resnet_one_by_one_convolutions_are_gemm_kernels(recorded: Callable[[str], KernelProfile]) -> None:
    prof = recorded("resnet50_forward_cl_modules")
    convs = prof.ops["aten::cudnn_convolution"]
    assert convs.count == 53
    one_by_one, others = resnet50_convolutions()
    assert (len(one_by_one), len(others)) == (33, 20)
    for name in one_by_one:
        kernels = prof.module(name).kernels
        assert "aten::cudnn_convolution" in kernels.one(kind="gemm").ops
        assert kernels.count(kind="convolution") == 0, name
    for name in others:
        kernels = prof.module(name).kernels
        assert kernels.count(kind="convolution") == 1, name
        assert kernels.count(kind="gemm") == 0, name
    assert convs.kernels.count(kind="gemm") == 33
    # The same kernels, asked per kernel through its op chain.
    under = [k for k in prof.kernels if "aten::cudnn_convolution" in k.ops]
    assert under == list(convs.kernels)
    assert "aten::cudnn_convolution" not in prof.module("fc").kernels.one(kind="gemm").ops
    assert not [k for k in prof.kernels if k.kind == "other"]
