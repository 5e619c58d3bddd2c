"""The host waits for the GPU: syncs, copies, launches and an idle GPU, as assertions.

* ``loss.item()`` in a training loop makes the host wait for the GPU every step
  (``cudaStreamSynchronize`` under ``aten::item > aten::_local_scalar_dense``); with
  ``stacks=True`` the failure names the line. Keeping the running loss on the GPU removes it.
* ``x.cpu()`` copies into pageable memory: the host waits inside the copy itself, then
  syncs the stream. A ``non_blocking`` copy into a pinned buffer does neither. A
  ``non_blocking`` copy into a *pageable* buffer still blocks, without any sync call
  (``torch.cuda.set_sync_debug_mode`` does not see it; the profile does).
* ``x[mask]`` syncs inside ``aten::nonzero``: the output size lives on the GPU.
  ``torch.where`` keeps the shape static and the host free.
* A decode step of small layers is launch-bound: the GPU idles while the host launches
  kernel after kernel. ``torch.compile(mode="reduce-overhead")`` replays them as one CUDA
  graph launch.

Numbers in the comments: one NVIDIA H200, torch 2.11.0+cu130 (this plugin's GPU run, or the
issue-11 study's traces, tests/data/h200_sync_* and h200_copy_*).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch import nn

pytestmark = pytest.mark.gpu


def line_of(fn: Callable[..., Any], text: str) -> int:
    """The line number of the first line of ``fn`` that contains ``text``."""
    lines, first = inspect.getsourcelines(fn)
    return next(first + i for i, line in enumerate(lines) if text in line)


@pytest.fixture
def training() -> tuple[nn.Module, torch.optim.Optimizer, torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 1)).cuda()
    return (
        model,
        torch.optim.SGD(model.parameters(), lr=1e-3),
        torch.randn(64, 256, device="cuda"),
        torch.randn(64, 1, device="cuda"),
    )


def test_logging_loss_item_every_step_syncs_and_names_the_line(kernelprof, training):
    model, opt, x, y = training
    losses = []

    def train_step():
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())  # the host waits here for the whole step to finish (H200: 7.6 us)

    prof = kernelprof.profile(train_step, stacks=True)
    (sync,) = prof.syncs  # exactly one per step
    assert (sync.call, sync.kind) == ("cudaStreamSynchronize", "stream")
    assert sync.ops == ("aten::item", "aten::_local_scalar_dense")
    assert sync.line.endswith(f"test_06_host_syncs.py:{line_of(train_step, 'loss.item()')}")
    assert sync.stack[-1].endswith(": train_step")  # the profiler's frame names the def line
    assert prof.copies.count("DtoH", host_memory="pinned") == 1  # .item() copies 4 bytes into pinned memory


def test_the_fixed_loop_keeps_the_loss_on_the_gpu(kernelprof, training):
    model, opt, x, y = training
    running = torch.zeros((), device="cuda")

    def train_step():
        nonlocal running
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        running += loss.detach()  # read once per epoch, outside the hot loop

    prof = kernelprof(train_step)
    assert not prof.syncs
    assert prof.copies.count("DtoH") == 0


@pytest.fixture
def big() -> torch.Tensor:
    return torch.randn(1 << 20, device="cuda")  # 4 MiB


def test_cpu_copy_blocks_inside_the_copy_then_syncs(kernelprof, big):
    prof = kernelprof(lambda: big.cpu())
    copy, stream = prof.syncs
    assert (copy.kind, copy.memcpy) == ("copy", "Memcpy DtoH (Device -> Pageable)")
    assert stream.kind == "stream"
    assert copy.duration_us > 10 * stream.duration_us  # H200: 300 us in the copy of 4 MiB, 3.6 us in the sync
    assert prof.copies.count("DtoH", host_memory="pageable") == 1


def test_pinned_non_blocking_copy_does_not_wait(kernelprof, big):
    pinned = torch.empty(big.shape, pin_memory=True)
    prof = kernelprof(lambda: pinned.copy_(big, non_blocking=True))
    assert not prof.syncs  # H200: the call returns after 54 us of host time
    (copy,) = prof.copies
    assert (copy.direction, copy.host_memory) == ("DtoH", "pinned")


def test_non_blocking_into_pageable_memory_still_blocks(kernelprof, big):
    pageable = torch.empty(big.shape)
    prof = kernelprof(lambda: pageable.copy_(big, non_blocking=True))
    (sync,) = prof.syncs  # no sync call at all: the host waits inside cudaMemcpyAsync (H200: 302 us)
    assert (sync.call, sync.kind) == ("cudaMemcpyAsync", "copy")


def test_boolean_mask_indexing_hides_a_sync(kernelprof):
    x = torch.randn(4096, device="cuda")
    mask = x > 0
    indexed = kernelprof(lambda: x[mask])
    assert [s.ops for s in indexed.syncs] == [("aten::index", "aten::nonzero")]  # after CUB's kernels
    where = kernelprof(lambda: torch.where(mask, x, 0.0))  # same values, static shape
    assert not where.syncs


# Sized so that the graph has GPU work to show: with a [1, 256] input the study measured an idle
# share of 0.86-0.90 even under CUDA graphs (H200), the graph wrapper's own host time dominating.
LAYERS, WIDTH, BATCH = 32, 4096, 64


@pytest.fixture
def decoder() -> nn.Module:
    torch.manual_seed(0)
    layers = [m for _ in range(LAYERS) for m in (nn.Linear(WIDTH, WIDTH), nn.Tanh())]
    return nn.Sequential(*layers).to("cuda", torch.bfloat16).eval()


# torch 2.11 warns once about an empty CUDA graph while cudagraph trees record (seen on an H200);
# the assertions below show the replayed graph does hold every layer's kernels.
@pytest.mark.filterwarnings("ignore:The CUDA Graph is empty:UserWarning")
def test_decode_is_launch_bound_until_cuda_graphs(kernelprof, decoder):
    x = torch.randn(BATCH, WIDTH, device="cuda", dtype=torch.bfloat16)
    graphed = torch.compile(decoder, mode="reduce-overhead")

    def step(model: nn.Module) -> Callable[[], int]:
        # A decode step hands its token to the host, as a generation loop does to stop or stream.
        return lambda: model(x).argmax().item()

    eager = kernelprof.profile(step(decoder), no_grad=True)
    # Warm-up: compile, then cudagraph trees' warm-up run and recording; the profiled calls replay.
    graphs = kernelprof.profile(step(graphed), no_grad=True, warmup=3)

    assert eager.graph_launches == 0
    assert eager.launches >= 2 * LAYERS  # a GEMM (bias in its epilogue) and a tanh per layer
    assert graphs.graph_launches == 1
    assert graphs.launches < 5  # the graph, its input copy, the argmax
    assert len(graphs.kernels) > 2 * LAYERS  # the same work, launched at once
    assert eager.gpu_idle_fraction > 0.5  # the GPU waits for the host's launches
    assert graphs.gpu_idle_fraction < eager.gpu_idle_fraction
