"""The profiler (api/profiler.py): capture returns a session and api alone builds it into a
profile; what ``Profiler.captures`` and ``record()`` hand back, and their exported traces."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

import pytest_kernelprof as kp
from pytest_kernelprof import Profiler, api, capture, load_trace
from pytest_kernelprof.capture import CapturedSession, capture_callable
from pytest_kernelprof.options import ProfileOptions
from pytest_kernelprof.traces import ANNOTATION, STEP_PREFIX
from pytest_kernelprof.traces.chrome import events_from_trace_file
from tests.helpers import DATA


def test_a_capture_is_a_session_of_events_that_api_builds_into_the_profile() -> None:
    session = capture_callable(torch.relu, (torch.randn(8),), options=ProfileOptions(warmup=1, calls=2))
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
    assert not hasattr(capture, "Capture")  # what holds a built profile is api's
    sources = {path.name: path.read_text() for path in Path(capture.__file__).parent.glob("*.py")}
    assert [name for name, text in sources.items() if "from ..assemble" in text] == []
    assert "KernelProfile" not in sources["run.py"]


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


def test_a_profiler_reads_in_one_line() -> None:
    profiler = Profiler()
    assert repr(profiler) == "Profiler(warmup=2, calls=3, 0 profiles taken)"
    profiler.load_trace(Path(__file__).parents[2] / "data" / "h200_linear_eager.json.gz")
    # A trial: it said "1 profile taken"; then "warmup=2, calls=3", which say nothing about a loaded trace.
    assert repr(profiler) == "Profiler(1 profile loaded)"
    profiler(lambda: torch.ones(3).sum())
    assert repr(profiler) == "Profiler(warmup=2, calls=3, 2 profiles: 1 taken, 1 loaded)"
    tuned = Profiler(warmup=0, calls=1, stacks=True, modules=True)
    tuned.teach("my_kernel*", kind="gemm")
    tuned.teach("other*", kind="pointwise")
    assert repr(tuned) == "Profiler(warmup=0, calls=1, stacks=True, modules=True, 2 taught rules, 0 profiles taken)"
    assert repr(Profiler(modules=torch.nn.Linear(2, 2))).startswith("Profiler(warmup=2, calls=3, modules=Linear, ")  # type: ignore[arg-type]


def test_load_trace_takes_a_path_as_bytes_as_open_does(tmp_path: Path) -> None:
    """``load_trace(b"/path")`` raised "a bytes-like object is required, not 'str'" from deep in
    the reader; a path from ``os.listdir(b".")`` is a path as much as a str."""
    path = tmp_path / "trace.json.gz"
    path.write_bytes((DATA / "h200_sync_device.json.gz").read_bytes())
    prof = load_trace(os.fsencode(path))
    assert prof.source == str(path)
    assert prof.kernels.names == load_trace(path).kernels.names
    assert Profiler().load_trace(os.fsencode(path)).source == str(path)  # the fixture's
    with pytest.raises(TypeError, match="expected str, bytes or os.PathLike object, not int"):
        load_trace(3)  # type: ignore[arg-type]
