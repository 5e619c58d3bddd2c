"""What the cost benchmarks profile, shared by ``test_bench_cost.py`` and ``interleaved_cost.py``:
an eager stack of ``x + 1`` on a 4-element tensor, and the bare ``torch.profiler`` session that
``kernelprof(fn)`` is measured against (the same warm-up, calls and step ranges)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
TINY = torch.ones(4, device=DEVICE)


def sync() -> None:
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def stack(kernels: int) -> Callable[[torch.Tensor], torch.Tensor]:
    """A callable that launches ``kernels`` small kernels (one per ``x + 1``)."""

    def run(x: torch.Tensor) -> torch.Tensor:
        for _ in range(kernels):
            x = x + 1
        return x

    return run


def activities() -> list[Any]:
    found = [torch.profiler.ProfilerActivity.CPU]
    if DEVICE == "cuda":
        found.append(torch.profiler.ProfilerActivity.CUDA)
    return found


def bare_session(fn: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    """What ``kernelprof(fn, TINY)`` does, bare: 2 warm-up calls, then 3 calls in step ranges."""
    for _ in range(2):
        fn(TINY)
    sync()
    with torch.profiler.profile(activities=activities()) as prof:
        for step in range(3):
            with torch.profiler.record_function(f"ProfilerStep#{step}"):
                fn(TINY)
            sync()
    return prof
