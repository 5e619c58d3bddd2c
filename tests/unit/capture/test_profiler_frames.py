"""The user's Python frames of a session (``capture/profiler.py``'s ``raw_events`` under
``stacks=True``): from the profiler's ``python_function`` events, live from torch 2.12 on, else
from the session's exported trace."""

from __future__ import annotations

import gzip
import shutil
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch

from pytest_kernelprof.capture import capture_callable, raw_events
from pytest_kernelprof.options import ProfileOptions
from pytest_kernelprof.traces import PYTHON
from tests.fake_gpu import recorded_kineto_events

Trace = Callable[[str], Path]


class FakeTorchProfiler:
    """A finished session of torch 2.11: Kineto events without Python frames, a trace with them."""

    def __init__(self, events: list[Any], trace: Path) -> None:
        self.profiler = SimpleNamespace(kineto_results=SimpleNamespace(events=lambda: events))
        self.trace = trace
        self.exported = 0

    def export_chrome_trace(self, path: str) -> None:
        self.exported += 1
        shutil.copyfile(self.trace, path)


def test_without_live_frames_stacks_come_from_the_exported_trace(trace: Trace, tmp_path: Path) -> None:
    plain = tmp_path / "trace.json"
    plain.write_bytes(gzip.decompress(trace("sync_item_stacks").read_bytes()))
    session = FakeTorchProfiler(recorded_kineto_events("linear_eager"), plain)
    assert not any(e.category == PYTHON for e in raw_events(session))
    assert session.exported == 0
    events = raw_events(session, python_frames=True)
    assert session.exported == 1
    assert any(e.category == PYTHON and e.name == "train.py(40): train_step_item" for e in events)


def test_stacks_record_the_callables_frames_live() -> None:
    def profiled_step(x: torch.Tensor) -> torch.Tensor:
        return x.relu()

    capture = capture_callable(profiled_step, (torch.randn(8),), options=ProfileOptions(stacks=True, warmup=0, calls=1))
    names = {e.name for e in raw_events(capture.torch_profiler, python_frames=True) if e.category == PYTHON}
    assert any(n.endswith(": profiled_step") and "test_profiler_frames.py(" in n for n in names)
