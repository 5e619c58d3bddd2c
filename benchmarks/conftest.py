"""Fixtures of the cost benchmarks: the big traces, the interleaved measurement, the slowdown switch.

``interleave`` runs the kinds of one budget (ours and what it is measured against) in turns,
round after round, and records every kind's per-call time of every round in the benchmark's
``extra_info["interleaved"]``; ``check_budget.py`` takes each budget's ratio as the median of
its per-round ratios, so a stretch of a busy machine slows both sides of the rounds it falls in
instead of one side of the comparison. See benchmarks/README.md.

``KERNELPROF_BENCH_SLOWDOWN=N`` (test-only, read here and nowhere in the plugin) makes every
build N times as dear, to prove that the budgets catch a regression: the benchmarks' own builds
run N times, and the plugin's ``build_profile`` (under ``kernelprof(fn)`` and ``load_trace``)
runs N times over the same events.
"""

from __future__ import annotations

import gc
import math
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

# pytest imports a conftest with its own folder first on the import path ("prepend" mode).
from synthetic import write_trace

# KERNELPROF_BENCH_TRACE_MB=10 for a quicker run (CI).
SIZES_MB = tuple(int(mb) for mb in os.environ.get("KERNELPROF_BENCH_TRACE_MB", "10,100").split(","))

# How many times each build runs: 2 is the deliberate 2x slowdown that check_budget.py must fail.
SLOWDOWN = int(os.environ.get("KERNELPROF_BENCH_SLOWDOWN", "1"))

MAX_INNER = 64


def _slow_down_the_plugins_build(passes: int) -> None:
    from pytest_kernelprof import assemble as build
    from pytest_kernelprof.api import profiler as api

    original = build.build_profile

    def build_profile(*args: Any, **kwargs: Any) -> Any:
        for _ in range(passes - 1):
            original(*args, **kwargs)
        return original(*args, **kwargs)

    for module in (build, api):  # each module's own name for it
        vars(module)["build_profile"] = build_profile


if SLOWDOWN > 1:
    _slow_down_the_plugins_build(SLOWDOWN)


def pytest_report_header() -> str | None:
    if SLOWDOWN > 1:
        return f"KERNELPROF_BENCH_SLOWDOWN={SLOWDOWN}: every build runs {SLOWDOWN} times (a deliberate regression)"
    return None


@pytest.fixture(scope="session", params=SIZES_MB, ids=lambda mb: f"{mb}MB")
def big_trace(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uncompressed trace of the given size, made from a recorded H200 training step."""
    return write_trace(tmp_path_factory.mktemp("traces") / f"trace_{request.param}MB.json", request.param)


def _turn(run: Callable[[], Any], inner: int, block: int) -> float:
    """One kind's turn: ``block`` timed runs of ``inner`` calls; per call, the median of the runs
    after the first where there are several (the first pays for what the kind before left)."""
    times = []
    for _ in range(block):
        start = time.perf_counter()
        for _ in range(inner):
            run()
        times.append((time.perf_counter() - start) / inner)
    return statistics.median(times[1:] if block > 1 else times)


Interleave = Callable[..., dict[str, list[float]]]


@pytest.fixture
def interleave(benchmark: Any) -> Interleave:
    """``interleave(kinds, rounds=..., min_sample_s=..., block=1, collect=True, warmup=1)``.

    Each round runs every kind once, in an order that rotates from round to round. A kind's
    sample is one call, timed over ``inner`` calls in a row, where ``inner`` is set once (by
    a first call of each kind) so that a sample lasts at least ``min_sample_s``: a build of a
    millisecond is timed over tens of them, so one scheduler hiccup cannot halve it.
    ``collect``: a full garbage collection before each turn, outside the clock, so that no
    kind pays for freeing another's results (each still frees its own results inside its
    turn). ``block > 1`` (for sessions, whose teardown the collector runs later; see
    ``interleaved_cost.py``): a turn is ``block`` runs, the first not counted.

    pytest-benchmark times whole rounds (all kinds); per-kind times go to
    ``extra_info["interleaved"]``, ``warmup`` rounds left out.
    """

    def run(
        kinds: dict[str, Callable[[], Any]],
        *,
        rounds: int,
        min_sample_s: float = 0.0,
        block: int = 1,
        collect: bool = True,
        warmup: int = 1,
    ) -> dict[str, list[float]]:
        inner = dict.fromkeys(kinds, 1)
        if min_sample_s > 0:
            for name, kind in kinds.items():
                gc.collect()
                start = time.perf_counter()
                kind()
                once = time.perf_counter() - start
                inner[name] = max(1, min(MAX_INNER, math.ceil(min_sample_s / max(once, 1e-6))))
        samples: dict[str, list[float]] = {name: [] for name in kinds}
        order = list(kinds.items())
        done = 0

        def one_round() -> None:
            nonlocal done
            shift = done % len(order)
            for name, kind in order[shift:] + order[:shift]:
                if collect:
                    gc.collect()
                samples[name].append(_turn(kind, inner[name], block))
            done += 1

        benchmark.pedantic(one_round, rounds=rounds, warmup_rounds=warmup, iterations=1)
        # A disabled benchmark (--benchmark-disable) ran one round: keep it.
        kept = {name: times[warmup:] or times for name, times in samples.items()}
        benchmark.extra_info["interleaved"] = {
            name: {"inner": inner[name], "block": block, "samples": times} for name, times in kept.items()
        }
        if SLOWDOWN > 1:
            benchmark.extra_info["slowdown"] = SLOWDOWN
        return kept

    return run
