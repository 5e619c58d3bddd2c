"""The one-time profiler start: paid by the first profiled call of a process, not per test.

    python benchmarks/first_session.py

Run in a fresh process: times the first kernelprof(fn) call and the next five.
"""

from __future__ import annotations

import time

import torch

from pytest_kernelprof import Profiler

device = "cuda" if torch.cuda.is_available() else "cpu"
x = torch.randn(1024, device=device)
profiler = Profiler()
times = []
for _ in range(6):
    start = time.perf_counter()
    profiler(torch.relu, x)
    times.append((time.perf_counter() - start) * 1e3)
name = torch.cuda.get_device_name() if device == "cuda" else "CPU only"
print(f"{name}: first kernelprof call {times[0]:.1f} ms, then " + ", ".join(f"{t:.1f}" for t in times[1:]) + " ms")
