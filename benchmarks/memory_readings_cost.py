"""What ``prof.memory``'s allocator readings cost: each read, and a whole ``kernelprof(fn)``.

    python -m benchmarks.memory_readings_cost      (from the repository root, on a GPU machine)

Times torch's allocator queries (the private counters the capture reads, and the public
functions with the same numbers), the capture's per-call readings through each, and
``pytest_kernelprof.profile(x + 1)`` (2 warm-up calls, 3 profiled calls) with and without
the readings, interleaved, median of 40.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import torch

import pytest_kernelprof as kp
from pytest_kernelprof.capture import run as capture


def per_call_us(fn: Callable[[], Any], n: int = 2000) -> float:
    fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    device = torch.cuda.current_device()
    x = torch.randn(1 << 20, device="cuda")
    held = [torch.randn(1000 + i, device="cuda") for i in range(200)]  # some allocator state
    print("device", torch.cuda.get_device_name(), "torch", torch.__version__, f"({len(held)} tensors held)")
    for label, fn in [
        ("torch._C._cuda_memoryStats", lambda: torch._C._cuda_memoryStats(device)),
        ("torch._C._cuda_resetPeakMemoryStats", lambda: torch._C._cuda_resetPeakMemoryStats(device)),
        ("torch.cuda.memory_allocated", torch.cuda.memory_allocated),
        ("torch.cuda.max_memory_allocated", torch.cuda.max_memory_allocated),
        ("torch.cuda.reset_peak_memory_stats", torch.cuda.reset_peak_memory_stats),
        ("torch.cuda.memory_stats", torch.cuda.memory_stats),
    ]:
        print(f"{label}: {per_call_us(fn):.1f} us per call")

    meter = capture.AllocatorMeter(torch)
    both = per_call_us(lambda: (meter.before_call(), meter.after_call()))
    print(f"AllocatorMeter before_call + after_call: {both:.1f} us")
    public = capture.AllocatorMeter(torch)
    public._raw_stats = public._raw_reset = None
    both = per_call_us(lambda: (public.before_call(), public.after_call()))
    print(f"same through torch.cuda (the fallback): {both:.1f} us")

    def tiny() -> torch.Tensor:
        return x + 1

    real = capture.meter_for
    with_readings: list[float] = []
    without: list[float] = []
    for _ in range(3):
        kp.profile(tiny)
    try:
        for _ in range(40):
            for use, sink in ((True, with_readings), (False, without)):
                capture.meter_for = real if use else (lambda torch_module: None)
                start = time.perf_counter()
                kp.profile(tiny)
                sink.append(time.perf_counter() - start)
    finally:
        capture.meter_for = real
    a, b = statistics.median(with_readings) * 1e3, statistics.median(without) * 1e3
    print(f"kp.profile(x + 1), 3 calls: {a:.3f} ms with the readings, {b:.3f} ms without: {a / b:.3f}x")


if __name__ == "__main__":
    main()
