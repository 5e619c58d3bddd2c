"""Where the time of one ``kernelprof(fn)`` goes, stage by stage, next to a bare session.

    python -m benchmarks.capture_stages [ROUNDS] [--inductor]     (from the repository root)

Profiles a one-kernel callable (``x + 1``, on the GPU where there is one) with ``Profiler()``,
2 warm-up and 3 profiled calls, and times each stage of the real ``capture_callable`` by
wrapping the functions it calls (so the numbers follow the code as it is): the allocator
readings, the compile watch, the Triton watch, the session's start and stop, the sync
flagging, reading the events, the build, the source facts. ``other`` is what no stage
covers (the loop, the context managers' own cost). A bare session (``torch.profiler.profile``
and the autograd profiler it wraps) runs the same calls in the same rounds, interleaved.
``--inductor`` imports Inductor first, as in ``test_bench_cost.py`` runs (its session fixture
does), which changes the session the capture starts; ``torch.profiler.profile`` is timed
only then, since it imports Inductor itself. Medians in us.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch

from pytest_kernelprof.api import profiler as api
from pytest_kernelprof.capture import compile_watch
from pytest_kernelprof.capture import profiler as torch_session
from pytest_kernelprof.capture import run as capture

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
TIMES: dict[str, list[float]] = {}
_round: dict[str, float] = {}


def _add(name: str, start: int) -> None:
    _round[name] = _round.get(name, 0.0) + (time.perf_counter_ns() - start) / 1e3


def _timed(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter_ns()
        try:
            return real(*args, **kwargs)
        finally:
            _add(name, start)

    return timed


def _timed_cm(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
    @contextlib.contextmanager
    def timed(*args: Any, **kwargs: Any) -> Iterator[Any]:
        start = time.perf_counter_ns()
        cm = real(*args, **kwargs)
        value = cm.__enter__()
        _add(f"{name} enter", start)
        try:
            yield value
        finally:
            start = time.perf_counter_ns()
            cm.__exit__(None, None, None)
            _add(f"{name} exit", start)

    return timed


def _instrument() -> None:
    for name in ("meter_for", "raw_events", "_learned_triton", "_source"):
        setattr(capture, name, _timed(name, getattr(capture, name)))
    synchronizer = capture.synchronizer
    capture.synchronizer = lambda torch_module: _timed("synchronize", synchronizer(torch_module))
    for name in ("watch_compiles", "_watched", "profiler_session", "flagging_syncs"):
        setattr(capture, name, _timed_cm(name, getattr(capture, name)))
    meter = capture.AllocatorMeter
    meter.before_call = _timed("meter.before_call", meter.before_call)  # type: ignore[method-assign]
    meter.after_call = _timed("meter.after_call", meter.after_call)  # type: ignore[method-assign]
    watch = compile_watch.CompileWatch
    watch.profiled = _timed("compile watch.profiled", watch.profiled)  # type: ignore[method-assign]
    watch.facts = _timed("compile watch.facts", watch.facts)  # type: ignore[method-assign]
    api.build_profile = _timed("build_profile", api.build_profile)
    api.check_rules = _timed("check_rules", api.check_rules)


def _bare(fn: Callable[[], Any], make: Callable[[], Any]) -> None:
    for _ in range(2):
        fn()
    if DEVICE == "cuda":
        torch.cuda.synchronize()
    with make():
        for step in range(3):
            with torch.profiler.record_function(f"ProfilerStep#{step}"):
                fn()
            if DEVICE == "cuda":
                torch.cuda.synchronize()


def main() -> None:
    rounds = next((int(a) for a in sys.argv[1:] if a.isdigit()), 200)
    if "--inductor" in sys.argv:
        import importlib

        importlib.import_module("torch._inductor")
    warnings.simplefilter("ignore")  # torch's "Profiler clears events" on bare sessions
    x = torch.ones(4, device=DEVICE)

    def fn() -> torch.Tensor:
        start = time.perf_counter_ns()
        try:
            return x + 1
        finally:
            _add("the callable (5 calls)", start)

    activities = [torch.profiler.ProfilerActivity.CPU]
    if DEVICE == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    _instrument()
    profiler = api.Profiler()
    bare = {
        "bare autograd profiler": lambda: torch.autograd.profiler.profile(
            use_kineto=True, use_device="cuda" if DEVICE == "cuda" else None
        )
    }
    if "torch._inductor" in sys.modules:  # else torch.profiler.profile would import it
        bare["bare torch.profiler.profile"] = lambda: torch.profiler.profile(activities=activities)
    for i in range(rounds + 10):
        _round.clear()
        start = time.perf_counter_ns()
        profiler(fn)
        total = (time.perf_counter_ns() - start) / 1e3
        profiler.captures.clear()
        stages = dict(_round)
        stages["other"] = total - sum(stages.values())
        stages["kernelprof(fn) total"] = total
        for label, make in bare.items():
            start = time.perf_counter_ns()
            _bare(fn, make)
            stages[label] = (time.perf_counter_ns() - start) / 1e3
        if i >= 10:  # the first rounds warm up
            for name, value in stages.items():
                TIMES.setdefault(name, []).append(value)
    where = torch.cuda.get_device_name() if DEVICE == "cuda" else "CPU"
    session = "autograd profiler" if torch_session._direct_session_is_equivalent(torch) else "torch.profiler.profile"
    print(f"{where}, torch {torch.__version__}, {rounds} rounds, capture's session: {session}")
    for name, values in TIMES.items():
        print(f"{name:34s} {statistics.median(values):9.1f}")


if __name__ == "__main__":
    main()
