"""Compile health, GPU memory, and suite-wide rules: the regressions CI keeps missing.

* A ``print`` and a ``.item()`` inside a compiled function each break the graph: dynamo
  compiles three frames (the function, then one per place it resumes), and every call
  enters three compiled regions instead of one. ``prof.compile.graph_breaks`` names the
  lines. (Runs on the CPU too: compile health needs no GPU.)
* ``dynamic=False`` and a new batch size in every call: a recompile per call, with dynamo's
  guard failure as the reason.
* A loss accumulated with its graph keeps every step's activations alive: memory grows by
  the same amount every call (``prof.memory.retained_bytes``).
* ``sdpa_kernel(SDPBackend.MATH)`` forces scaled-dot-product attention onto its unfused math
  path, the CPU op ``aten::_scaled_dot_product_attention_math``: a ``kernelprof_forbid`` op
  rule in the ini file catches it in every test of a suite.
* One ``nn.Linear`` left in fp32 inside a bf16 model runs an fp32 GEMM (on an H200:
  ``cutlass_80_simt_sgemm_64x64_8x5_tn_align1`` and a split-K reduce, plus casts): the rule
  ``kind=gemm dtype=fp32`` catches it whatever the kernel is called on another card.

The rules are shown the way a suite has them, in an ini file, run through ``pytester``.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel

GPU = torch.cuda.is_available()
DEVICE = "cuda" if GPU else "cpu"
# bf16 on the GPU: Inductor warns (an error under -W error) when it compiles an fp32 matmul
# on a card with TF32 tensor cores that are not enabled.
DTYPE = torch.bfloat16 if GPU else torch.float32
# Inductor on the CPU compiles C++ for tens of seconds; what dynamo does (frames, graph
# breaks, recompiles) is the same with the aot_eager backend.
BACKEND = "inductor" if GPU else "aot_eager"


def scale_and_report(x):
    y = torch.sin(x) * 2
    print("scaled")  # graph break 1: dynamo cannot trace print
    total = y.sum().item()  # graph break 2: a Python number out of a tensor
    return torch.cos(y) + total


def test_a_print_and_an_item_break_the_graph(kernelprof):
    prof = kernelprof(torch.compile(scale_and_report, backend=BACKEND), torch.randn(64, 64, device=DEVICE))
    assert prof.compile.regions == 3  # one compiled region per dynamo frame, per call
    assert prof.compile.frames == 3
    assert prof.compile.recompiles == 0
    printed, item = prof.compile.graph_breaks
    assert printed.file == item.file == __file__
    assert item.line == printed.line + 1
    assert "print" in printed.reason
    assert "item" in item.reason  # in torch's words ("Tensor.item" until 2.7)


class TwoLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.up, self.down = nn.Linear(64, 256), nn.Linear(256, 64)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))


def test_a_new_batch_size_in_every_call_recompiles(kernelprof):
    model = TwoLayers().to(DEVICE, DTYPE)
    compiled = torch.compile(model, backend=BACKEND, dynamic=False)
    batches = iter([8, 8, 16, 24, 32])  # the two warm-up calls, then a new size per profiled call
    # A recompile inside a call also autotunes there, so the calls' kernels differ.
    prof = kernelprof.profile(
        lambda: compiled(torch.randn(next(batches), 64, device=DEVICE, dtype=DTYPE)), no_grad=True, allow_variation=True
    )
    assert prof.compile.recompiles == 3
    assert prof.compile.frames == 4  # the warm-up's compile and the three recompiles
    assert any("size mismatch at index 0. expected 8, actual 16" in r for r in prof.compile.recompile_reasons)

    steady = iter([8] * 5)
    fixed = torch.compile(TwoLayers().to(DEVICE, DTYPE), backend=BACKEND, dynamic=False)
    prof = kernelprof.profile(lambda: fixed(torch.randn(next(steady), 64, device=DEVICE, dtype=DTYPE)), no_grad=True)
    assert prof.compile.recompiles == 0


SDPA_SUITE = """
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

q, k, v = (torch.randn(2, 8, 128, 64) for _ in range(3))

def attention():
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)

def test_default_attention(kernelprof):
    kernelprof(attention)

def test_forced_math_attention(kernelprof):
    with sdpa_kernel(SDPBackend.MATH):
        kernelprof(attention)
"""


def test_a_forbid_rule_catches_the_sdpa_math_fallback(pytester):
    pytester.makeini(
        """
        [pytest]
        kernelprof_forbid =
            math-sdpa: op=aten::_scaled_dot_product_attention_math | use a fused SDPA backend
        """
    )
    pytester.makepyfile(test_attention=SDPA_SUITE)
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_forced_math_attention*",
            "*kernelprof_forbid rule 'math-sdpa' (op=aten::_scaled_dot_product_attention_math) is broken: "
            "use a fused SDPA backend",
            "*ran in call 0:",
            "*aten::_scaled_dot_product_attention_math *1*",
        ]
    )


@pytest.mark.gpu
def test_a_loss_kept_with_its_graph_leaks(kernelprof):
    model = TwoLayers().to("cuda")
    x = torch.randn(4096, 64, device="cuda")
    total = [torch.zeros((), device="cuda")]

    def leaky_step():
        total[0] = total[0] + model(x).square().mean()  # keeps every step's graph: activations and all

    def fixed_step():
        total[0] = total[0] + model(x).square().mean().detach()

    leak = kernelprof(leaky_step).memory
    assert leak.retained_bytes >= 4096 * 256 * 4  # at least the [4096, 256] activation, every call
    assert leak.peak_bytes >= leak.retained_bytes
    fixed = kernelprof(fixed_step).memory
    assert fixed.retained_bytes == 0
    assert fixed.peak_bytes > 0  # the activations still exist while a step runs


@pytest.mark.gpu
def test_the_math_fallback_on_the_gpu(kernelprof):
    q, k, v = (torch.randn(2, 8, 128, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    fused = kernelprof(F.scaled_dot_product_attention, q, k, v)
    with sdpa_kernel(SDPBackend.MATH):
        math = kernelprof(F.scaled_dot_product_attention, q, k, v)
    assert "aten::_scaled_dot_product_attention_math" not in fused.ops
    assert fused.kernels.count(kind="attention") == 1  # cuDNN's or flash's fused kernel
    assert "aten::_scaled_dot_product_attention_math" in math.ops
    assert math.kernels.count(kind="attention") == 0
    assert math.kernels.count(kind="gemm") == 2  # q @ k.T and p @ v, as separate GEMMs


FP32_SUITE = """
import pytest
import torch
from torch import nn

pytestmark = pytest.mark.gpu

def model(forgotten):
    torch.manual_seed(0)
    layers = [nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.Linear(512, 256)]
    mlp = nn.Sequential(*layers).to("cuda", torch.bfloat16)
    if forgotten:
        mlp[2].float()  # left in fp32: casts around it, and an fp32 GEMM
        mlp[2].register_forward_pre_hook(lambda m, args: (args[0].float(),))
        mlp[2].register_forward_hook(lambda m, args, out: out.bfloat16())
    return mlp

x = torch.randn(64, 256, device="cuda", dtype=torch.bfloat16)

def test_all_bf16(kernelprof):
    kernelprof.profile(model(False), (x,), no_grad=True)

def test_one_linear_forgotten_in_fp32(kernelprof):
    kernelprof.profile(model(True), (x,), no_grad=True)
"""


@pytest.mark.gpu
def test_a_forbid_rule_catches_a_forgotten_fp32_linear(pytester):
    pytester.makeini(
        """
        [pytest]
        kernelprof_forbid =
            fp32-gemm: kind=gemm dtype=fp32,tf32 | bf16 models must not run fp32 GEMMs
        """
    )
    pytester.makepyfile(test_mlp=FP32_SUITE)
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_one_linear_forgotten_in_fp32*",
            "*kernelprof_forbid rule 'fp32-gemm' (kind=gemm dtype=fp32,tf32) is broken: "
            "bf16 models must not run fp32 GEMMs",
            "* of * kernels per call match:",
            "*gemm *aten::addmm*",
        ]
    )
