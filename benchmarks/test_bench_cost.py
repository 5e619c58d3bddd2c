"""The plugin's own cost, measured against what it replaces, on the same profile in the same run.

    python -m pytest benchmarks/test_bench_cost.py --benchmark-json=bench.json
    python benchmarks/check_budget.py bench.json

1. Building a KernelProfile from a finished session vs torch's own parsers, ``prof.events()``
   and ``prof.key_averages()``, for about 1k, 10k and 100k events (CPU ops are events too).
   ``build`` is what ``kernelprof(fn)`` does; ``build_and_ops`` also reads the op table,
   which is built on first use.
   ``floor`` fetches the raw Kineto events and reads each one's name, the least any
   builder does; ``floor_fields`` reads the six fields every event needs (name, device
   index, start, duration, correlation and linked ids), one pybind call each, and builds
   nothing: the least a builder does on a torch whose events have no batch accessor.
   ``build_without_activity_type`` hides ``_KinetoEvent.activity_type`` (as torch 2.11
   and older lack it) to time the fallback classifier on a newer torch.
2. One ``kernelprof(fn)`` call vs a bare torch.profiler session around the same calls,
   for a callable of 1, 600 and 8,000 eager kernels; and vs the autograd profiler session
   that ``kernelprof(fn)`` starts itself, the least a session costs. Each case runs its
   rounds back to back, so each pays for freeing its own sessions (``workloads.py``).
Peak memory (tracemalloc) goes to extra_info as ``peak_mb``.
"""

from __future__ import annotations

import os
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
import torch

# pytest imports this folder first on the import path ("prepend" mode), as for conftest.py's synthetic.
from workloads import DEVICE, TINY, activities, autograd_session, bare_session, stack, sync

from pytest_kernelprof import Profiler
from pytest_kernelprof.build import build_profile, paused_gc
from pytest_kernelprof.capture import kineto_events
from pytest_kernelprof.events import Source, events_from_kineto

# KERNELPROF_BENCH_EVENTS=1000,10000 for a quicker run (CI): torch's own parser takes
# minutes at 100k events.
# torch 2.10+ warns at every bare session start (kernelprof's own sessions silence it).
pytestmark = pytest.mark.filterwarnings("ignore:.*Profiler clears events")

EVENT_COUNTS = tuple(int(n) for n in os.environ.get("KERNELPROF_BENCH_EVENTS", "1000,10000,100000").split(","))


@pytest.fixture(scope="module", params=EVENT_COUNTS, ids=lambda n: f"{n // 1000}k")
def session(request: pytest.FixtureRequest) -> Any:
    """A finished session of three ProfilerStep calls with about ``n`` events in all."""
    x = torch.randn(8, device=DEVICE)
    per_call = request.param // 3 // (4 if DEVICE == "cuda" else 2)  # events per torch.add
    with torch.profiler.profile(activities=activities()) as prof:
        for step in range(3):
            with torch.profiler.record_function(f"ProfilerStep#{step}"):
                for _ in range(per_call):
                    torch.add(x, 1)
            sync()
    return prof


def _peak_mb(fn: Callable[[], Any]) -> float:
    tracemalloc.start()
    try:
        fn()
        return round(tracemalloc.get_traced_memory()[1] / 1e6, 2)
    finally:
        tracemalloc.stop()


def _build(prof: Any) -> Any:
    with paused_gc():
        return build_profile(events_from_kineto(kineto_events(prof)), Source("bench", gpu_requested=DEVICE == "cuda"))


def _torch_events(prof: Any) -> Any:
    """What ``prof.events()`` does the first time (it caches afterwards): parse, build the tree."""
    events = torch.autograd.profiler_util.EventList(prof.profiler._parse_kineto_results(prof.profiler.kineto_results))
    events._build_tree()
    return events


def _record(benchmark: Any, prof: Any, fn: Callable[[], Any]) -> None:
    benchmark.extra_info["device"] = DEVICE  # check_budget.py holds GPU runs to the GPU budgets
    benchmark.extra_info["events"] = len(kineto_events(prof))
    benchmark.extra_info["peak_mb"] = _peak_mb(fn)
    benchmark.pedantic(fn, rounds=5 if benchmark.extra_info["events"] < 50_000 else 3, iterations=1, warmup_rounds=1)


def test_build(benchmark: Any, session: Any) -> None:
    _record(benchmark, session, lambda: _build(session))


def _names(prof: Any) -> list[str]:
    with paused_gc():  # as the build: the collector's passes are no floor
        return [e.name() for e in kineto_events(prof)]


def test_floor(benchmark: Any, session: Any) -> None:
    _record(benchmark, session, lambda: _names(session))


def _fields(prof: Any) -> list[tuple[Any, ...]]:
    with paused_gc():
        return [
            (e.name(), e.device_index(), e.start_ns(), e.duration_ns(), e.correlation_id(), e.linked_correlation_id())
            for e in kineto_events(prof)
        ]


def test_floor_fields(benchmark: Any, session: Any) -> None:
    _record(benchmark, session, lambda: _fields(session))


def test_build_without_activity_type(benchmark: Any, session: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    kineto_event = type(kineto_events(session)[0])
    if not hasattr(kineto_event, "activity_type"):
        pytest.skip("this torch has no activity_type: test_build is the fallback path")
    monkeypatch.delattr(kineto_event, "activity_type")
    _record(benchmark, session, lambda: _build(session))


def test_build_and_ops(benchmark: Any, session: Any) -> None:
    _record(benchmark, session, lambda: _build(session).ops["aten::add"])


def test_prof_events(benchmark: Any, session: Any) -> None:
    _record(benchmark, session, lambda: _torch_events(session))


def test_prof_key_averages(benchmark: Any, session: Any) -> None:
    _record(benchmark, session, lambda: _torch_events(session).key_averages())


def test_results_agree(session: Any) -> None:
    ours = _build(session).ops["aten::add"].count
    theirs = sum(e.name == "aten::add" for e in _torch_events(session)) // 3
    assert ours == theirs


# Kernels per call: one, and the eager stacks of 600 and 8,000 small kernels that issue 16
# measured on an H100 (1.59x and 1.79x a bare session).
KERNELS = (1, 600, 8000)


def _rounds(kernels: int) -> int:
    return 20 if kernels < 100 else 7


@pytest.mark.parametrize("kernels", KERNELS)
def test_kernelprof_call(benchmark: Any, kernels: int) -> None:
    profiler = Profiler()
    fn = stack(kernels)

    def profiled() -> Any:
        profile = profiler(fn, TINY)
        profiler.captures.clear()  # each round pays for freeing its own session (see workloads.py)
        return profile

    benchmark.extra_info["device"] = DEVICE
    profile = benchmark.pedantic(profiled, rounds=_rounds(kernels), iterations=1, warmup_rounds=2)
    assert profile.ops["aten::add"].count == kernels
    if DEVICE == "cuda":
        assert len(profile.kernels) == kernels


@pytest.mark.parametrize("kernels", KERNELS)
def test_bare_session(benchmark: Any, kernels: int) -> None:
    fn = stack(kernels)
    benchmark.extra_info["device"] = DEVICE
    benchmark.pedantic(lambda: bare_session(fn), rounds=_rounds(kernels), iterations=1, warmup_rounds=2)


@pytest.mark.parametrize("kernels", KERNELS)
def test_bare_autograd_session(benchmark: Any, kernels: int) -> None:
    """The session kernelprof(fn) starts, bare: the least a session costs (no budget; the
    README reports the ratio)."""
    fn = stack(kernels)
    benchmark.extra_info["device"] = DEVICE
    benchmark.pedantic(lambda: autograd_session(fn), rounds=_rounds(kernels), iterations=1, warmup_rounds=2)
