"""One way in for events: capture returns a session, api.py alone builds; the event factories."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import pytest_kernelprof as kp
from pytest_kernelprof import Profiler, api, capture, load_trace
from pytest_kernelprof.capture import CapturedSession, capture_callable
from pytest_kernelprof.traces import ANNOTATION, KERNEL, STEP_PREFIX, gpu_event
from pytest_kernelprof.traces.chrome import events_from_trace_file


def test_a_capture_is_a_session_of_events_that_api_builds_into_the_profile() -> None:
    session = capture_callable(torch.relu, (torch.randn(8),), warmup=1, calls=2)
    assert isinstance(session, CapturedSession)
    assert not hasattr(session, "profile")
    steps = [e.name for e in session.events if e.category == ANNOTATION and e.name.startswith(STEP_PREFIX)]
    assert steps == [f"{STEP_PREFIX}0", f"{STEP_PREFIX}1"]
    assert session.source.label.endswith("relu")
    assert session.learned == {"triton_kernels": []}
    built = api.build_capture(session)
    assert built.torch_profiler is session.torch_profiler
    assert len(built.profile.calls) == 2
    assert "aten::relu" in built.profile.ops


def test_only_api_builds_profiles() -> None:
    assert not hasattr(capture, "build_profile")


def test_the_profilers_captures_and_a_recordings_profile_still_come_built(tmp_path: object) -> None:
    profiler = kp.Profiler(calls=2)
    profiler(torch.relu, torch.randn(4))
    with profiler.record() as rec:
        torch.relu(torch.randn(4))
    assert [len(c.profile.calls) for c in profiler.captures] == [2, 1]
    assert rec.profile is profiler.captures[-1].profile


def test_an_exported_trace_reads_back_through_chrome(tmp_path: object) -> None:
    from pathlib import Path

    profiler = kp.Profiler(calls=2)
    profiler(torch.relu, torch.randn(4))
    path = Path(str(tmp_path)) / "t.json.gz"
    profiler.captures[-1].export_trace(path)
    source, events = events_from_trace_file(path)
    assert source.triton_kernels == frozenset()
    assert kp.load_trace(path).ops.names == profiler.captures[-1].profile.ops.names
    assert any(e.name == "aten::relu" for e in events)


def test_the_gpu_event_constructor_takes_keywords() -> None:
    with pytest.raises(TypeError):
        gpu_event(KERNEL, "k", 0, 1, 7, 1, 2)  # type: ignore[misc]
    e = gpu_event(category=KERNEL, name="k", start=0, end=1, stream=7, correlation=1, linked=2, grid=(1, 1, 1))
    assert (e.category, e.name, e.stream, e.correlation, e.linked, e.grid, e.block, e.nbytes, e.device) == (
        KERNEL,
        "k",
        7,
        1,
        2,
        (1, 1, 1),
        None,
        None,
        None,
    )
    assert (e.thread, e.ident, e.input_types) == (0, 0, ())


def test_kinetos_own_serialisation_gives_the_adapters_events_for_a_live_session(tmp_path: object) -> None:
    """The way through C++ (``_ProfilerResult.save``, then the Chrome reader) measured in
    benchmarks/event_paths.py: the same events as the per-event adapter, once times are taken
    from the trace's ``baseTimeNanoseconds`` and threads by order of appearance. The plugin
    keeps the adapter (benchmarks/FLOOR.md says why)."""
    from pathlib import Path

    from pytest_kernelprof.traces import chrome, events_from_kineto
    from pytest_kernelprof.traces import files as traces

    session = capture_callable(lambda x: (x + 1) * 2, (torch.randn(4),), warmup=1, calls=2)
    results = session.torch_profiler.profiler.kineto_results
    path = Path(str(tmp_path)) / "saved.json"
    results.save(str(path))
    header, saved = traces.read_trace(path, chrome.raw_event_from_chrome, chrome.typed_reader())
    base = int(header["baseTimeNanoseconds"])

    def rows(events: list, offset: int) -> list[tuple[object, ...]]:  # type: ignore[type-arg]
        threads: dict[int, int] = {}
        return [
            (e.category, e.name, e.start + offset, e.end + offset, threads.setdefault(e.thread, len(threads)))
            + (e.ident, e.correlation, e.linked, e.stream, e.device, e.grid, e.block, e.nbytes, e.input_types)
            for e in events
        ]

    assert rows(saved, base) == rows(events_from_kineto(results.events()), 0)
    assert rows(session.events, 0) == rows(events_from_kineto(results.events()), 0)


def test_a_captures_trace_can_be_exported_more_than_once(tmp_path: Path) -> None:
    # torch saves a session's trace once ("Trace is already saved"); capture itself exports it
    # where the raw events lack Python frames (torch 2.11 with stacks=True), and the plugin
    # exports it again for --kernelprof-trace-dir: that ended in an INTERNALERROR on an H100.
    profiler = Profiler()
    profiler.profile(lambda: torch.ones(3).sum().item(), stacks=True)
    capture = profiler.captures[-1]
    capture.export_trace(tmp_path / "first.json.gz")
    capture.export_trace(tmp_path / "second.json")
    first, second = load_trace(tmp_path / "first.json.gz"), load_trace(tmp_path / "second.json")
    assert len(first.calls) == len(second.calls) == 3
    assert first.ops.names == second.ops.names
