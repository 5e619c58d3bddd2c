"""What the cost benchmarks profile, shared by ``test_bench_cost.py`` and ``interleaved_cost.py``:
an eager stack of ``x + 1`` on a 4-element tensor, and the bare ``torch.profiler`` session that
``kernelprof(fn)`` is measured against (the same warm-up, calls and step ranges)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
TINY = torch.ones(4, device=DEVICE)
# KERNELPROF_BENCH_SLOWDOWN=N: every build N times (test-only, see benchmarks/README.md and conftest.py).
SLOWDOWN = int(os.environ.get("KERNELPROF_BENCH_SLOWDOWN", "1"))


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


def _session(fn: Callable[[torch.Tensor], torch.Tensor], make: Callable[[], Any]) -> Any:
    for _ in range(2):
        fn(TINY)
    sync()
    with make() as prof:
        for step in range(3):
            with torch.profiler.record_function(f"ProfilerStep#{step}"):
                fn(TINY)
            sync()
    return prof


def bare_session(fn: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    """What ``kernelprof(fn, TINY)`` does, bare: 2 warm-up calls, then 3 calls in step ranges
    of a ``torch.profiler.profile`` session.

    That session keeps itself alive in a reference cycle: the garbage collector frees its
    results later, in whatever runs then (measured on an H200: about 1.7 ms for a one-kernel
    session). Rounds of one kind back to back pay for most of their own; sessions promoted to
    an older generation are freed in batches, which a median leaves out, so the comparison
    errs against ``kernelprof(fn)``, which frees its session inside every round.
    """
    return _session(fn, lambda: torch.profiler.profile(activities=activities()))


def autograd_session(fn: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    """``bare_session`` on the autograd profiler that ``torch.profiler.profile`` wraps, which is
    the session ``kernelprof(fn)`` starts itself: the least a session costs."""
    return _session(
        fn, lambda: torch.autograd.profiler.profile(use_kineto=True, use_device="cuda" if DEVICE == "cuda" else None)
    )
