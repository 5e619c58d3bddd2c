"""How steady is each way of timing GPU work? One run, same callables, same card.

    python -m benchmarks.gpu_timing_spread [ROUNDS]    (from the repository root)

For the study's nn.Linear and GeGLU MLP, prints median and spread (stddev / median) of:
kernelprof's kernel time (the kernel_benchmark figure), the host timer pytest-benchmark uses
by default (time.perf_counter around the call, no synchronisation, as pytest-benchmark does),
the same host timer with torch.cuda.synchronize(), CUDA events, and triton.testing.do_bench.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable

import torch
from torch import nn

from examples.models import GeGLUMLP
from pytest_kernelprof import Profiler


def spread(values: list[float]) -> tuple[float, float]:
    median = statistics.median(values)
    return median, statistics.stdev(values) / median


def host(fn: Callable[[], object], rounds: int, sync: bool) -> list[float]:
    out = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        if sync:
            torch.cuda.synchronize()
        out.append((time.perf_counter() - start) * 1e6)
    torch.cuda.synchronize()
    return out


def cuda_events(fn: Callable[[], object], rounds: int) -> list[float]:
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(rounds)]
    for start, end in pairs:
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return [start.elapsed_time(end) * 1e3 for start, end in pairs]


def main(rounds: int) -> None:
    from triton.testing import do_bench

    bf16 = {"device": "cuda", "dtype": torch.bfloat16}
    lin = nn.Linear(32, 64, **bf16)
    x_lin = torch.randn(1024, 32, **bf16)
    mlp = GeGLUMLP().to(**bf16)
    x_mlp = torch.randn(64, 128, 768, **bf16)
    cases = {"nn.Linear(32, 64)": lambda: lin(x_lin), "GeGLU MLP": lambda: mlp(x_mlp)}
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, {rounds} rounds each")
    print(f"{'callable':18} {'timer':34} {'median us':>10} {'stddev/median':>14}")
    with torch.no_grad():
        for label, fn in cases.items():
            for _ in range(10):
                fn()
            torch.cuda.synchronize()
            prof = Profiler(warmup=2, calls=rounds, allow_variation=True)(fn)
            rows = {
                "kernelprof kernel time": [c.kernels.total_us for c in prof.calls],
                "perf_counter, no sync (pb default)": host(fn, rounds, sync=False),
                "perf_counter + synchronize": host(fn, rounds, sync=True),
                "CUDA events": cuda_events(fn, rounds),
                "triton do_bench (all)": [t * 1e3 for t in do_bench(fn, return_mode="all")],
            }
            for timer, values in rows.items():
                median, rel = spread(values)
                print(f"{label:18} {timer:34} {median:10.2f} {rel:14.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
