"""What decoding from evidence costs: the same profile built with the full decoder (name,
template arguments, launching op, its inputs' dtypes) and with a decoder that reads the name
alone, in interleaved rounds.

    python -m benchmarks.decode_cost [ROUNDS] [KERNELS]     (GPU: kernelprof(fn) of KERNELS kernels)
    python -m benchmarks.decode_cost --trace PATH [ROUNDS]  (any machine: load_trace of a recorded trace)

Each round runs both kinds once, in turns whose order alternates, after a full collection off
the clock; the figure is the median of the per-round ratios (full / name only).
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from pytest_kernelprof import Profiler, load_trace
from pytest_kernelprof.decode import KernelName
from pytest_kernelprof.types import Decoder


class NameOnly(Decoder):
    """The decoder as it was before evidence: the name and nothing else."""

    __slots__ = ()

    def decode(self, name: str, op: str | None = None, input_types: tuple[str, ...] = ()) -> KernelName:
        return super().decode(name)


def _timed(run: Callable[[], object]) -> float:
    gc.collect()
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def interleave(kinds: dict[str, Callable[[], object]], rounds: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in kinds}
    order = list(kinds)
    for round_ in range(rounds + 1):
        for name in order if round_ % 2 else reversed(order):
            took = _timed(kinds[name])
            if round_:  # the first round warms caches up and is not counted
                times[name].append(took)
    return times


def report(times: dict[str, list[float]], what: str) -> None:
    full, name_only = times["full"], times["name only"]
    ratios = [a / b for a, b in zip(full, name_only, strict=True)]
    print(
        f"{what}: full decoder {statistics.median(full) * 1e3:.2f} ms, name only "
        f"{statistics.median(name_only) * 1e3:.2f} ms: median of per-round ratios {statistics.median(ratios):.3f} "
        f"(rounds: {', '.join(f'{r:.3f}' for r in ratios)})"
    )


def main(argv: list[str]) -> None:
    if argv[:1] == ["--trace"]:
        path = Path(argv[1])
        rounds = int(argv[2]) if len(argv) > 2 else 11
        kinds = {
            "full": lambda: load_trace(path).kernels[0],
            "name only": lambda: load_trace(path, decoder=NameOnly()).kernels[0],
        }
        report(interleave(kinds, rounds), f"load_trace({path.name})")
        return
    import torch

    rounds = int(argv[0]) if argv else 11
    count = int(argv[1]) if len(argv) > 1 else 8000
    x = torch.zeros(16, device="cuda")

    def fn() -> None:
        for _ in range(count):
            x.add_(1)

    full, name_only = Profiler(), Profiler(decoder=NameOnly())

    def run(profiler: Profiler) -> None:
        profiler(fn).kernels[0]
        profiler.captures.clear()

    kinds = {"full": lambda: run(full), "name only": lambda: run(name_only)}
    report(interleave(kinds, rounds), f"kernelprof(fn), {count} kernels on {torch.cuda.get_device_name()}")


if __name__ == "__main__":
    main(sys.argv[1:])
