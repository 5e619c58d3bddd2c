"""The plugin's own cost, measured against what it replaces, on the same profile in interleaved rounds.

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
   rounds in blocks, so each pays for freeing its own sessions (``workloads.py``).

Each case runs its kinds in interleaved rounds (``interleave`` in conftest.py), and records
every kind's per-call time of every round in extra_info["interleaved"]; the table of
pytest-benchmark times whole rounds. Peak memory (tracemalloc) goes to extra_info as
``peak_mb``, by kind. See benchmarks/README.md.
"""

from __future__ import annotations

import os
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
import torch

# pytest imports this folder first on the import path ("prepend" mode), as for conftest.py's synthetic.
from workloads import DEVICE, SLOWDOWN, TINY, activities, autograd_session, bare_session, stack, sync

from pytest_kernelprof import Profiler
from pytest_kernelprof.assemble import build_profile
from pytest_kernelprof.capture import kineto_events
from pytest_kernelprof.traces import Source, events_from_kineto
from pytest_kernelprof.traces.records import paused_gc

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
    for _ in range(SLOWDOWN - 1):  # KERNELPROF_BENCH_SLOWDOWN: a deliberate regression (README.md)
        _build_once(prof)
    return _build_once(prof)


def _build_once(prof: Any) -> Any:
    with paused_gc():
        return build_profile(events_from_kineto(kineto_events(prof)), Source("bench", gpu_requested=DEVICE == "cuda"))


def _without_activity_type(prof: Any) -> Callable[[], Any]:
    """The build with ``_KinetoEvent.activity_type`` hidden, as torch 2.11 and older lack it."""
    kineto_event = type(kineto_events(prof)[0])
    attribute = kineto_event.__dict__["activity_type"]

    def build() -> Any:
        delattr(kineto_event, "activity_type")
        try:
            return _build(prof)
        finally:
            kineto_event.activity_type = attribute

    return build


def _torch_events(prof: Any) -> Any:
    """What ``prof.events()`` does the first time (it caches afterwards): parse, build the tree."""
    events = torch.autograd.profiler_util.EventList(prof.profiler._parse_kineto_results(prof.profiler.kineto_results))
    events._build_tree()
    return events


def _names(prof: Any) -> list[str]:
    with paused_gc():  # as the build: the collector's passes are no floor
        return [e.name() for e in kineto_events(prof)]


def _fields(prof: Any) -> list[tuple[Any, ...]]:
    with paused_gc():
        return [
            (e.name(), e.device_index(), e.start_ns(), e.duration_ns(), e.correlation_id(), e.linked_correlation_id())
            for e in kineto_events(prof)
        ]


# A sample of a kind is timed over as many calls in a row as make it last this long: a
# 1k-event build takes a few milliseconds on the CPU VM, which one scheduler hiccup can double.
MIN_SAMPLE_S = 0.1


def _session_rounds(events: int) -> int:
    return 15 if events < 5_000 else 9 if events < 50_000 else 5


def test_session_cost(benchmark: Any, interleave: Any, session: Any) -> None:
    """The build, its fallback, build and op table, the two floors and prof.events(), in turns."""
    kinds: dict[str, Callable[[], Any]] = {
        "build": lambda: _build(session),
        "build and ops": lambda: _build(session).ops["aten::add"],
        "floor": lambda: _names(session),
        "floor_fields": lambda: _fields(session),
        "prof.events()": lambda: _torch_events(session),
    }
    # Where this torch has no activity_type, the build is the fallback path: no second kind.
    if hasattr(type(kineto_events(session)[0]), "activity_type"):
        kinds["fallback build"] = _without_activity_type(session)
    events = len(kineto_events(session))
    benchmark.extra_info["device"] = DEVICE  # check_budget.py holds GPU runs to the GPU budgets
    benchmark.extra_info["events"] = events
    benchmark.extra_info["peak_mb"] = {name: _peak_mb(kind) for name, kind in kinds.items()}
    interleave(kinds, rounds=_session_rounds(events), min_sample_s=MIN_SAMPLE_S)


def test_prof_key_averages(benchmark: Any, session: Any) -> None:
    """torch's other parser (no budget; not run on CI)."""
    benchmark.extra_info["device"] = DEVICE
    benchmark.extra_info["events"] = len(kineto_events(session))
    benchmark.pedantic(lambda: _torch_events(session).key_averages(), rounds=5, iterations=1, warmup_rounds=1)


def test_results_agree(session: Any) -> None:
    ours = _build(session).ops["aten::add"].count
    theirs = sum(e.name == "aten::add" for e in _torch_events(session)) // 3
    assert ours == theirs


# Kernels per call: one, and the eager stacks of 600 and 8,000 small kernels that issue 16
# measured on an H100 (1.59x and 1.79x a bare session).
KERNELS = (1, 600, 8000)


@pytest.mark.parametrize("kernels", KERNELS)
def test_kernelprof_cost(benchmark: Any, interleave: Any, kernels: int) -> None:
    """One kernelprof(fn) call, a bare torch.profiler.profile session around the same calls, and
    the autograd profiler session that kernelprof(fn) starts itself (the least a session costs;
    no budget, the README reports the ratio), in turns of blocks of runs. A bare session's
    results are freed by the garbage collector later (workloads.py): a full collection before
    each turn, outside the clock, keeps any kind from paying for another's, and the runs of a
    block after its first pay for freeing the one before, as back to back."""
    profiler = Profiler()
    fn = stack(kernels)

    def profiled() -> Any:
        profile = profiler(fn, TINY)
        profiler.captures.clear()  # each round pays for freeing its own session (see workloads.py)
        return profile

    benchmark.extra_info["device"] = DEVICE
    kinds: dict[str, Callable[[], Any]] = {
        "kernelprof(fn)": profiled,
        "torch.profiler.profile": lambda: bare_session(fn),
        "autograd profiler": lambda: autograd_session(fn),
    }
    rounds, block = {1: (20, 6), 600: (8, 4)}.get(kernels, (3, 2))
    interleave(kinds, rounds=rounds, block=block)
    profile = profiled()
    assert profile.ops["aten::add"].count == kernels
    if DEVICE == "cuda":
        assert len(profile.kernels) == kernels
