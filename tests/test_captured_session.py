"""One way in for events: capture returns a session, api.py alone builds; the event factories."""

from __future__ import annotations

import pytest
import torch

import pytest_kernelprof as kp
from pytest_kernelprof import api, capture
from pytest_kernelprof.capture import CapturedSession, capture_callable
from pytest_kernelprof.chrome import events_from_trace_file
from pytest_kernelprof.events import ANNOTATION, KERNEL, STEP_PREFIX, gpu_event


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
