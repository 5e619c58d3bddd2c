"""Triton kernels learned live (run with ``pytest -m gpu``): a user's ``@triton.jit`` kernel through
the launch hook, through the JIT-cache scan alone, and launched by Inductor in a compiled region;
the exported trace gives the same families."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

import pytest_kernelprof as kp
from pytest_kernelprof.capture import triton_kernels

pytestmark = pytest.mark.gpu

KERNEL = "user_add_kernel"


@pytest.fixture
def user_add() -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    pytest.importorskip("triton")
    from tests.gpu.user_triton import user_add

    return user_add


@pytest.fixture
def xy() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(4096, device="cuda"), torch.randn(4096, device="cuda")


def test_the_launch_hook_names_a_user_kernel_and_the_trace_keeps_it(
    kernelprof: kp.Profiler,
    user_add: Callable[..., torch.Tensor],
    xy: tuple[torch.Tensor, torch.Tensor],
    tmp_path: Path,
) -> None:
    prof = kernelprof(user_add, *xy)
    kernel = prof.kernels.one(KERNEL)
    assert (kernel.kind, kernel.family, kernel.dtype, kernel.evidence.kind) == ("pointwise", "triton", "fp32", "ir")
    assert kernelprof.captures[-1].learned == {
        "triton_kernels": [KERNEL],
        "triton_ir": {KERNEL: {"kind": "pointwise", "dtype": "fp32"}},
    }
    path = tmp_path / "user.json.gz"
    kernelprof.captures[-1].export_trace(path)
    offline = kp.load_trace(path).kernels.one(KERNEL)
    assert (offline.kind, offline.family, offline.dtype, offline.evidence.kind) == ("pointwise", "triton", "fp32", "ir")
    chain = getattr(getattr(sys.modules["triton"], "knobs", None), "runtime", None)
    hooks = getattr(getattr(chain, "launch_enter_hook", None), "calls", [])
    assert not [h for h in hooks if getattr(h, "__self__", None).__class__ is triton_kernels.TritonWatch]


def test_without_a_launch_hook_the_jit_caches_tell(
    kernelprof: kp.Profiler,
    user_add: Callable[..., torch.Tensor],
    xy: tuple[torch.Tensor, torch.Tensor],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(triton_kernels, "_install", lambda triton, hook: None)  # a Triton without hooks
    prof = kernelprof(user_add, *xy)
    assert prof.kernels.one(KERNEL).family == "triton"
    assert kernelprof.captures[-1].learned["triton_kernels"] == [KERNEL]


def test_a_user_kernel_inductor_launches_is_a_triton_kernel_of_the_compiled_region(
    kernelprof: kp.Profiler, user_add: Callable[..., torch.Tensor], xy: tuple[torch.Tensor, torch.Tensor]
) -> None:
    @torch.compile
    def fused(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return user_add(x * 2, y) + 1

    # Inductor launches the user's kernel statically, keeping no TTIR: its IR is read from the
    # JIT cache of an eager launch in the process (docs/decoding.md). Without one (this test
    # first in its worker), it is unplaced: the eager call makes the answer not depend on order.
    user_add(*xy)
    prof = kernelprof(fused, *xy)
    kernel = prof.kernels.one(KERNEL)
    assert kernel.family == "triton"
    assert kernel.op is not None
    assert kernel.op.startswith("Torch-Compiled Region")
    assert not kernel.ops[-1].startswith(KERNEL)  # Inductor's range around the launch is left out
    assert prof.kernels.count("triton_poi_*") >= 1  # Inductor's own kernels around it
    # The user's kernel, launched by Inductor, is read from the IR its eager launch compiled.
    assert (kernel.kind, kernel.evidence.kind) == ("pointwise", "ir")


@pytest.fixture
def user_kernels() -> object:
    pytest.importorskip("triton")
    from tests.gpu import user_triton

    return user_triton


def test_user_kernels_of_each_kind_are_read_from_their_ir(
    kernelprof: kp.Profiler, user_kernels: Any, tmp_path: Path
) -> None:
    x = torch.randn(256, 1024, device="cuda", dtype=torch.bfloat16)
    a = torch.randn(256, 64, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(64, 256, device="cuda", dtype=torch.bfloat16)
    xf = torch.randn(256, 1024, device="cuda")

    def step() -> None:
        user_kernels.user_row_sum(x)
        user_kernels.user_cumsum(xf)
        user_kernels.user_matmul(a, b)  # autotuned: the kernel is the Autotuner's JITFunction
        torch.sort(xf, dim=-1)  # an ATen sort beside them, placed by its name

    prof = kernelprof(step)
    got = {k.name: (k.kind, k.dtype, k.evidence.kind) for k in prof.kernels if k.family == "triton"}
    assert got == {
        "user_row_sum_kernel": ("reduction", "fp32", "ir"),  # bf16 in, fp32 written
        "user_cumsum_kernel": ("scan", "fp32", "ir"),
        "user_matmul_kernel": ("gemm", "bf16", "ir"),
    }
    assert prof.kernels.count(kind="gemm") == 1  # no undecoded kernel to warn about
    path = tmp_path / "kinds.json.gz"
    kernelprof.captures[-1].export_trace(path)
    offline = kp.load_trace(path)
    assert {k.name: (k.kind, k.dtype, k.evidence.kind) for k in offline.kernels if k.family == "triton"} == got
