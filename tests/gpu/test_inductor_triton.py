"""Inductor's Triton kernels get their dtype live (run with ``pytest -m gpu``): read from the
autotuners that launch them (capture/inductor_kernels.py), kept in the trace a capture saves."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

import pytest_kernelprof as kp

pytestmark = pytest.mark.gpu


def _gelu_mul(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return F.gelu(x @ w) * 2.0


def _gelu_scale(x: torch.Tensor) -> torch.Tensor:
    return F.gelu(x) * 2.0


def _sigmoid_to_fp32(x: torch.Tensor) -> torch.Tensor:
    return torch.sigmoid(x).float() * 2.0


@pytest.fixture(autouse=True)
def _fresh_graphs() -> None:
    """Each test compiles its own graph: kernel names restart at ``_0``."""
    torch._dynamo.reset()


def test_a_compiled_bf16_pointwise_kernel_reads_bf16_and_its_trace_says_so(
    kernelprof: kp.Profiler, tmp_path: Path
) -> None:
    x = torch.randn(256, 512, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(512, 512, device="cuda", dtype=torch.bfloat16)
    prof = kernelprof(torch.compile(_gelu_mul), x, w)
    fused = prof.kernels.one(kind="pointwise")
    assert (fused.family, fused.dtype, fused.evidence.dtype) == ("inductor", "bf16", "ir")
    assert kernelprof.captures[-1].learned["triton_ir"][fused.name] == {"kind": "pointwise", "dtype": "bf16"}
    path = tmp_path / "compiled.json.gz"
    kernelprof.captures[-1].export_trace(path)
    offline = kp.load_trace(path).kernels.one(kind="pointwise")
    assert (offline.name, offline.dtype, offline.evidence.dtype) == (fused.name, "bf16", "ir")


def test_a_kernel_that_reads_bf16_and_writes_fp32_is_fp32_as_the_eager_cast_is(kernelprof: kp.Profiler) -> None:
    # One rule (docs/decoding.md): a kernel that is no GEMM has the dtype it writes, as ATen's casts do.
    x = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
    compiled = kernelprof(torch.compile(_sigmoid_to_fp32), x).kernels.one(kind="pointwise")
    eager = kernelprof(lambda t: t.float(), x).kernels.one(kind="pointwise")
    assert (compiled.dtype, eager.dtype) == ("fp32", "fp32")
    assert compiled.dtype == torch.float32


def test_a_name_of_two_graphs_reads_as_the_graph_the_capture_compiled(kernelprof: kp.Profiler) -> None:
    """Every graph numbers its kernels from 0: the fp32 and the bf16 graph of one function both
    hold a ``triton_poi_fused_gelu_mul_0``. Each profile compiled its own in its warm-up."""
    compiled = torch.compile(_gelu_scale)
    x = torch.randn(64, 128, device="cuda")
    fp32 = kernelprof(compiled, x).kernels.one(kind="pointwise")
    bf16 = kernelprof(compiled, x.bfloat16()).kernels.one(kind="pointwise")
    assert bf16.name == fp32.name
    assert (fp32.dtype, bf16.dtype) == ("fp32", "bf16")


def test_a_name_a_profile_ran_under_two_graphs_has_no_dtype(kernelprof: kp.Profiler) -> None:
    """One name, launched by two graphs of different dtypes in one profile: no dtype, not one of the two."""
    compiled = torch.compile(_gelu_scale)
    x = torch.randn(64, 128, device="cuda")
    kernelprof(compiled, x)
    x16 = x.bfloat16()
    prof = kernelprof.profile(lambda: (compiled(x), compiled(x16)))
    fp32, bf16 = [k for k in prof.kernels if k.family == "inductor"]
    assert fp32.name == bf16.name
    assert (fp32.dtype, bf16.dtype) == (None, None)
