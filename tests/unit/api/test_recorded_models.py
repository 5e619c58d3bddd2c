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


# What a Liger user teaches the decoder: Liger's Triton kernels carry no marker in their names.
LIGER_TEACHING = (
    "_rms_norm_forward_kernel: kind=reduction family=liger",
    "_swiglu_forward_kernel: kind=pointwise family=liger",
    "_triton_rope: kind=pointwise family=liger",
)


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
    assert {(k.kind, k.family) for k in liger} == {("other", "triton")}  # from the trace's "kernelprof" key
    assert all(k.unplaced for k in liger)
    assert len(liger) == 2 * 4 + 1
    assert [k for k in prof.kernels if k.kind == "other"] == liger


def test_unplaced_liger_kernels_make_kind_questions_loud(recorded: Callable[[str], KernelProfile]) -> None:
    mlp = recorded("liger_llama_forward_modules").module(f"{LAYERS[0]}.mlp").kernels
    with pytest.warns(UndecodedKernelWarning, match=r"(?s)count\(kind='gemm'\) may not hold.*_swiglu_forward_kernel"):
        assert mlp.count(kind="gemm") == 3
    with pytest.warns(UndecodedKernelWarning, match="_swiglu_forward_kernel: kind=... family=..."):
        assert mlp.count(kind="pointwise") == 0  # the answer a taught decoder corrects below


def test_taught_liger_kernels_answer_kind_questions() -> None:
    (path,) = sorted(DATA.glob("h[12]00_liger_llama_forward_modules.json.gz"))
    prof = load_trace(path, decoder=Decoder().teach_lines(LIGER_TEACHING, "LIGER_TEACHING"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UndecodedKernelWarning)
        mlp = prof.module(f"{LAYERS[0]}.mlp").kernels
        assert mlp.count(kind="gemm") == 3
        assert mlp.count(kind="pointwise") == 1
        assert prof.module(f"{LAYERS[0]}.input_layernorm").kernels.one(kind="reduction").family == "liger"
    assert not prof.kernels.unplaced()
    assert {k.evidence.kind for k in prof.kernels if k.family == "liger"} == {"user"}


def test_a_compiled_llama_layer_fuses_each_rmsnorm(recorded: Callable[[str], KernelProfile]) -> None:
    prof = recorded("llama_layer_compiled_modules")
    norms = [k for k in prof.kernels if k.family == "inductor" and {"pow", "mean", "rsqrt"} <= set(k.fused_ops)]
    assert len(norms) == 2
    assert {k.kind for k in norms} <= {"reduction", "persistent_reduction"}
    assert prof.kernels.count(kind="reduction") + prof.kernels.count(kind="persistent_reduction") == 2
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
