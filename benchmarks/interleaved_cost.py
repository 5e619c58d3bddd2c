"""``kernelprof(fn)`` against bare sessions, in alternating blocks of rounds, for 1, 600 and 8,000 kernels.

    python -m benchmarks.interleaved_cost [BLOCKS]     (from the repository root)

Running all rounds of one case, then all of the other (as ``test_bench_cost.py`` did until
2026-11-26), on a shared GPU machine the bare session alone moved 20-40% between runs, which
that order turns into the ratio. Here the kinds take turns in blocks of rounds, and the ratio
is taken per block pair; ``test_bench_cost.py``'s ``test_kernelprof_cost`` now does the same,
with a full collection before each turn (benchmarks/README.md), and this script adds the floor
of reading the fields.

Blocks, not single rounds: ``torch.profiler.profile`` keeps itself alive in a reference
cycle, so a session's results are freed by the garbage collector, at a moment that falls in
whatever runs next. Alternating single rounds charged each bare session's teardown to the
``kernelprof(fn)`` after it (measured on an H200: the one-kernel callable took 2.3 ms for its
5 calls after a ``torch.profiler.profile`` session, 0.5 ms after anything else). In a block,
the collections land mostly in the same kind's later rounds; where sessions were promoted to
an older generation they are freed in batches, now and then in another kind's block, and the
per-block median leaves most such rounds out. ``kernelprof(fn)`` pays its own teardown inside
every round (its captures are cleared there), so what is left of the error counts against it.
The first round of a block is not counted, and the kinds take turns in a rotating order.

Two bare sessions: ``torch.profiler.profile`` (what users write) and the autograd profiler
session under it, which is what ``kernelprof(fn)`` starts itself (the least any session
costs); and the floor of any tool that reads Kineto's events one pybind call at a time:
that autograd session, then the raw events fetched and the six fields every event needs read
(``floor_fields`` of ``test_bench_cost.py``), nothing built. The workloads are
``test_bench_cost.py``'s (``workloads.py``).
"""

from __future__ import annotations

import statistics
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import torch

from benchmarks.workloads import DEVICE, TINY, autograd_session, bare_session, stack
from pytest_kernelprof import Profiler
from pytest_kernelprof.traces.records import paused_gc

BLOCK = 6  # rounds per block, the first not counted (4 for 8,000 kernels: a second a round)


def _block(run: Callable[[], Any], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times[1:])


def read_fields(session: Any) -> list[tuple[Any, ...]]:
    with paused_gc():  # as kernelprof reads and builds: the collector's passes are no floor
        return [
            (e.name(), e.device_index(), e.start_ns(), e.duration_ns(), e.correlation_id(), e.linked_correlation_id())
            for e in session.kineto_results.events()  # an autograd profiler session
        ]


def _blocks(blocks: int, kernels: int) -> int:
    """More blocks for the short one-kernel rounds, fewer for the second-long 8,000-kernel ones."""
    if kernels == 1:
        return blocks * 2
    return max(1, blocks // 2) if kernels == 8000 else blocks


def main() -> None:
    blocks = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    warnings.simplefilter("ignore")  # torch's "Profiler clears events" on bare sessions
    import torch._inductor  # noqa: F401  (torch.profiler.profile imports it at its first session)

    profiler = Profiler()
    where = torch.cuda.get_device_name() if DEVICE == "cuda" else "CPU"
    print(f"{where}, torch {torch.__version__}, {blocks} blocks of {BLOCK} rounds a kind, medians (1 kernel:")
    print(f"{_blocks(blocks, 1)} blocks; 8,000 kernels: {_blocks(blocks, 8000)} blocks of 4 rounds)")
    for kernels in (1, 600, 8000):
        fn = stack(kernels)

        def ours(fn: Callable[[torch.Tensor], torch.Tensor] = fn) -> None:
            profiler(fn, TINY)
            profiler.captures.clear()

        kinds: dict[str, Callable[[], Any]] = {
            "kernelprof(fn)": ours,
            "torch.profiler.profile": lambda fn=fn: bare_session(fn),
            "autograd profiler": lambda fn=fn: autograd_session(fn),
            "autograd profiler + reading the fields": lambda fn=fn: read_fields(autograd_session(fn)),
        }
        times: dict[str, list[float]] = {name: [] for name in kinds}
        order = list(kinds.items())
        for i in range(_blocks(blocks, kernels) + 1):  # +1: a warm-up block of each kind
            for name, run in order[i % len(order) :] + order[: i % len(order)]:
                median = _block(run, BLOCK if kernels < 8000 else 4)
                if i:
                    times[name].append(median)
        ours_times = times["kernelprof(fn)"]
        line = ", ".join(
            f"vs {name} {statistics.median(theirs) * 1e3:.2f} ms: "
            f"{statistics.median(x / y for x, y in zip(ours_times, theirs, strict=True)):.2f}x"
            for name, theirs in times.items()
            if name != "kernelprof(fn)"
        )
        print(f"{kernels:5d} kernel(s): kernelprof(fn) {statistics.median(ours_times) * 1e3:.2f} ms; {line}")


if __name__ == "__main__":
    main()
