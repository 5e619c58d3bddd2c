"""The live adapter (Kineto events) and the offline one (Chrome trace) build the same profile.

The Kineto events were dumped on an H200 under torch 2.11 from the very session whose
trace is in tests/data, so this checks the live path, including its fallback for a torch
without ``_KinetoEvent.activity_type``, on a machine without a GPU; and a live session's
events through Kineto's own serialisation equal the adapter's.
"""

from __future__ import annotations

import copy
import gzip
import json
import os
import pickle
import sys
import types
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from pytest_kernelprof import KernelProfile, load_trace
from pytest_kernelprof import traces as events
from pytest_kernelprof.assemble import build_profile
from pytest_kernelprof.capture import capture_callable
from pytest_kernelprof.options import ProfileOptions
from pytest_kernelprof.traces import PYTHON, Source, events_from_kineto
from pytest_kernelprof.traces.chrome import events_from_trace_file
from tests.fake_gpu import recorded_kineto_events
from tests.helpers import TypedKinetoEvent


def _from_kineto(name: str) -> KernelProfile:
    source = Source(label=name, device="NVIDIA H200", arch="sm90", gpu_requested=True)
    return build_profile(events_from_kineto(recorded_kineto_events(name)), source)


@pytest.mark.parametrize("name", ["linear_eager", "geglu_liger", "train_compiled"])
def test_kineto_and_trace_build_the_same_profile(trace: Callable[[str], Path], name: str) -> None:
    live = _from_kineto(name)
    offline = load_trace(trace(name))
    assert live.kernels.names == offline.kernels.names
    assert [k.op for k in live.kernels] == [k.op for k in offline.kernels]
    assert [k.stream for k in live.kernels] == [k.stream for k in offline.kernels]
    assert [k.duration_us for k in live.kernels] == pytest.approx([k.duration_us for k in offline.kernels], abs=0.002)
    assert live.ops.names == offline.ops.names
    assert [live.ops[n].children for n in live.ops] == [offline.ops[n].children for n in offline.ops]
    assert [live.ops[n].count for n in live.ops] == [offline.ops[n].count for n in offline.ops]
    assert dict(live.runtime) == dict(offline.runtime)
    assert [len(c.memory_ops) for c in live.calls] == [len(c.memory_ops) for c in offline.calls]


@pytest.mark.parametrize("name", ["linear_eager", "geglu_liger", "train_compiled"])
def test_the_fallback_classifier_sorts_events_as_the_trace_does(trace: Callable[[str], Path], name: str) -> None:
    # The dump is from torch 2.11, which has no activity_type: the live adapter had to
    # classify each event itself, and the trace of the same session says what it was.
    live = Counter((e.category, e.name) for e in events_from_kineto(recorded_kineto_events(name)))
    offline = Counter((e.category, e.name) for e in events_from_trace_file(trace(name))[1])
    assert live == offline


def test_gpu_lane_annotations_and_kineto_overhead_are_not_kernels() -> None:
    events = recorded_kineto_events("linear_eager")
    names = {e.name() for e in events}
    assert "ProfilerStep#0" in names  # present on the GPU lane in the dump...
    prof = _from_kineto("linear_eager")
    assert not any(n.startswith("ProfilerStep#") for n in prof.kernels.names)  # ...but never a kernel
    assert len(prof.kernels) == 1


class _InContainer:
    """A recorded event as a process of id 57 records it (a fresh container's small ids)."""

    def __init__(self, event: Any, calls: Counter[str]) -> None:
        self._event = event
        self._calls = calls

    def device_index(self) -> int:
        index = self._event.device_index()
        return 57 if index == HOST_INDEX else index

    def device_type(self) -> Any:
        self._calls["device_type"] += 1
        return self._event.device_type()

    def __getattr__(self, method: str) -> Any:
        return getattr(self._event, method)


HOST_INDEX = 619  # the process id in the recorded dump


@pytest.mark.parametrize(("pid", "gpus", "per_event"), [(57, 1, False), (0, 1, True), (57, 64, True)])
def test_a_small_process_id_costs_one_device_type_call_per_index_unless_it_is_a_gpus_ordinal(
    monkeypatch: pytest.MonkeyPatch, trace: Callable[[str], Path], pid: int, gpus: int, per_event: bool
) -> None:
    recorded = recorded_kineto_events("train_compiled")
    assert {e.device_index() for e in recorded} == {HOST_INDEX, 0, -1}
    fake_torch = types.SimpleNamespace(cuda=types.SimpleNamespace(device_count=lambda: gpus))
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    monkeypatch.setattr(os, "getpid", lambda: pid)
    calls: Counter[str] = Counter()
    adapted = events.events_from_kineto([_InContainer(e, calls) for e in recorded])
    offline = Counter((e.category, e.name) for e in events_from_trace_file(trace("train_compiled"))[1])
    assert Counter((e.category, e.name) for e in adapted) == offline
    # One call to learn the device type enum, then one per distinct index (57, 0, -1), or,
    # for the index that is both this process and a GPU, one per such event.
    ambiguous = sum(1 for e in recorded if (57 if e.device_index() == HOST_INDEX else e.device_index()) == pid)
    assert calls["device_type"] == 1 + (2 + ambiguous if per_event else 3)


_FIELDS = ("category", "name", "start", "end", "thread", "stream", "ident", "correlation", "linked", "device")


class _WithActivityType:
    """A recorded torch 2.11 event as torch 2.12+ gives it: ``activity_type`` (the category of
    the same event in the session's Chrome trace) and the launch shape or size in metadata."""

    def __init__(self, event: Any, activity: str, args: dict[str, Any]) -> None:
        self._event = event
        self._activity = activity
        fields = {k: args[k] for k in ("grid", "block", "bytes") if k in args}
        self._metadata = ", ".join(f'"{k}": {json.dumps(v)}' for k, v in fields.items())

    def activity_type(self) -> str:
        return self._activity

    def metadata_json(self) -> str:
        return self._metadata

    def __getattr__(self, method: str) -> Any:
        return getattr(self._event, method)


@pytest.mark.parametrize("name", ["linear_eager", "geglu_liger", "train_compiled"])
def test_both_kineto_adapters_make_the_same_events(name: str, trace: Callable[[str], Path]) -> None:
    saved = json.loads(gzip.decompress(trace(name).read_bytes()))
    base = int(saved["baseTimeNanoseconds"])
    by_start = {
        (e["name"], base + round(e["ts"] * 1000)): e for e in saved["traceEvents"] if e.get("ph") == "X" and "cat" in e
    }
    recorded = recorded_kineto_events(name)
    typed = []
    unmatched = []
    for e in recorded:
        chrome = by_start.get((e.name(), e.start_ns()))
        if chrome is None:
            unmatched.append(e)
            chrome = {"cat": "gpu_user_annotation", "args": {}}
        typed.append(_WithActivityType(e, chrome["cat"], chrome.get("args", {})))
    # Only the GPU-lane copies of the step marks have no twin at the same start in the trace.
    assert [(e.name(), str(e.device_type()), e.is_user_annotation()) for e in unmatched] == [
        (f"ProfilerStep#{i}", "DeviceType.CUDA", True) for i in range(3)
    ]
    modern = events.events_from_kineto(typed)
    fallback = events.events_from_kineto(recorded)
    assert [[getattr(e, f) for f in _FIELDS] for e in modern] == [[getattr(e, f) for f in _FIELDS] for e in fallback]
    gpu = [(e, by_start[e.name, e.start]["args"]) for e in modern if e.category in events.GPU_CATEGORIES]
    assert {e.category for e, _ in gpu} == (
        {events.KERNEL, events.MEMSET} if name != "linear_eager" else {events.KERNEL}
    )
    for e, args in gpu:
        assert (e.grid, e.block, e.nbytes) == (
            (tuple(args["grid"]), tuple(args["block"]), None)
            if e.category == events.KERNEL
            else (None, None, args["bytes"])
        )
    # The fallback cannot read them (torch 2.11 leaves the metadata empty).
    assert all(e.grid is None and e.block is None and e.nbytes is None for e in fallback)


def test_a_user_range_named_like_an_op_stays_an_annotation() -> None:
    adapted = events.events_from_kineto(
        [
            TypedKinetoEvent("aten::my_region", 5, "user_annotation", 7),
            TypedKinetoEvent("aten::my_region", 6, "gpu_user_annotation", 7),  # its GPU-lane copy: no event
            TypedKinetoEvent("aten::add", 7, "cpu_op", 8),
        ]
    )
    assert [(e.category, e.name, e.start) for e in adapted] == [
        (events.ANNOTATION, "aten::my_region", 5),
        (events.OP, "aten::add", 7),
    ]


def test_events_copy_and_pickle_whole() -> None:
    adapted = events.events_from_kineto(recorded_kineto_events("geglu_liger"))
    assert {type(e).__name__ for e in adapted} == {"HostEvent", "RuntimeEvent", "GpuEvent"}
    every = (*_FIELDS, "grid", "block", "nbytes")
    for copied in ([copy.copy(e) for e in adapted], pickle.loads(pickle.dumps(adapted))):
        assert [[getattr(e, f) for f in every] for e in copied] == [[getattr(e, f) for f in every] for e in adapted]


def test_kinetos_own_serialisation_gives_the_adapters_events_for_a_live_session(tmp_path: object) -> None:
    """The way through C++ (``_ProfilerResult.save``, then the Chrome reader) measured in
    benchmarks/event_paths.py: the same events as the per-event adapter, once times are taken
    from the trace's ``baseTimeNanoseconds`` and threads by order of appearance. The plugin
    keeps the adapter (benchmarks/FLOOR.md says why)."""
    from pathlib import Path

    from pytest_kernelprof.traces import chrome, events_from_kineto
    from pytest_kernelprof.traces import files as traces

    session = capture_callable(lambda x: (x + 1) * 2, (torch.randn(4),), options=ProfileOptions(warmup=1, calls=2))
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


def test_live_python_frames_of_newer_torch_and_a_name_that_does_not_decode() -> None:
    events = events_from_kineto([TypedKinetoEvent("t.py(1): step", 5), TypedKinetoEvent(None, 6)])
    assert [(e.category, e.name, e.start, e.thread) for e in events] == [(PYTHON, "t.py(1): step", 5, 1)]
