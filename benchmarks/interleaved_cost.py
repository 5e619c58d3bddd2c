"""``kernelprof(fn)`` against a bare session, alternating in every round, for 1, 600 and 8,000 kernels.

    python -m benchmarks.interleaved_cost [ROUNDS]     (from the repository root)

``test_bench_cost.py`` runs all rounds of one case, then all of the other; on a shared GPU
machine the bare session alone moved 20-40% between runs, which that order turns into the
ratio. Here each round runs both, one right after the other, and the ratio is taken per round:
the medians of those ratios are what this prints (with the medians of the times). The
workloads are ``test_bench_cost.py``'s (``workloads.py``).
"""

from __future__ import annotations

import statistics
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import torch

from benchmarks.workloads import DEVICE, TINY, bare_session, stack
from pytest_kernelprof import Profiler


def _timed(run: Callable[[], Any]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    warnings.simplefilter("ignore")  # torch's "Profiler clears events" on bare sessions
    profiler = Profiler()
    where = torch.cuda.get_device_name() if DEVICE == "cuda" else "CPU"
    print(f"{where}, torch {torch.__version__}, {rounds} rounds (x10 for one kernel), medians")
    for kernels in (1, 600, 8000):
        fn = stack(kernels)
        ours: list[float] = []
        bare: list[float] = []
        n = rounds * 10 if kernels == 1 else rounds
        for i in range(n + 2):  # two warm-up rounds
            a = _timed(lambda fn=fn: profiler(fn, TINY))
            profiler.captures.clear()
            b = _timed(lambda fn=fn: bare_session(fn))
            if i >= 2:
                ours.append(a)
                bare.append(b)
        ratio = statistics.median(x / y for x, y in zip(ours, bare, strict=True))
        print(
            f"{kernels:5d} kernel(s): kernelprof(fn) {statistics.median(ours) * 1e3:9.2f} ms, "
            f"bare {statistics.median(bare) * 1e3:9.2f} ms, per-round ratio {ratio:.2f}x"
        )


if __name__ == "__main__":
    main()
