"""Live profiling on the CPU: what works without a GPU, and every way a session can go wrong."""

from __future__ import annotations

import sys
from typing import Any

import pytest
import torch

import pytest_kernelprof as kp
from pytest_kernelprof.capture import profiler as capture
from pytest_kernelprof.capture import profiler_running

pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="these tests pin the CPU-only behaviour")


@pytest.fixture
def linear() -> tuple[torch.nn.Module, torch.Tensor]:
    return torch.nn.Linear(32, 64), torch.randn(16, 32)


def test_cpu_ops_and_dispatch_chain(linear: tuple[torch.nn.Module, torch.Tensor]) -> None:
    prof = kp.profile(*linear)
    assert prof.device is None
    assert prof.arch is None
    assert prof.ops["aten::linear"].children == ["aten::t", "aten::addmm"]
    assert prof.ops["aten::t"].children == ["aten::transpose"]
    assert prof.ops["aten::linear"].count == 1  # per call, not per session
    assert len(prof.calls) == 3
    assert prof.ops["aten::linear"].cpu_time_us >= prof.ops["aten::addmm"].cpu_time_us


def test_kernel_queries_raise_without_gpu_activity(linear: tuple[torch.nn.Module, torch.Tensor]) -> None:
    prof = kp.profile(*linear)
    assert not prof.has_device_activity
    with pytest.raises(kp.NoDeviceActivityError, match="CUDA is not available"):
        len(prof.kernels)
    with pytest.raises(kp.NoDeviceActivityError):
        prof.kernels.count(kind="gemm")
    with pytest.raises(kp.NoDeviceActivityError):
        _ = prof.ops["aten::t"].device_time_us
    with pytest.raises(kp.NoDeviceActivityError):
        _ = prof.memory_ops
    assert "no GPU activity" in prof.table()


def test_warmup_and_calls_are_counted_and_no_grad_applies() -> None:
    seen: list[bool] = []

    def fn() -> None:
        seen.append(torch.is_grad_enabled())

    prof = kp.Profiler(warmup=1, calls=4, no_grad=True)(fn)
    assert len(seen) == 5
    assert not any(seen)
    assert len(prof.calls) == 4


@pytest.mark.parametrize(
    ("options", "message"), [({"warmup": -1}, "warmup"), ({"calls": 0}, "calls"), ({"calls": True}, "calls")]
)
def test_bad_counts_are_value_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        kp.Profiler().profile(lambda: None, **options)


def test_a_non_callable_is_a_type_error_that_says_what_to_pass() -> None:
    with pytest.raises(TypeError, match=r"kernelprof\(fn, x\), not kernelprof\(fn\(x\)\)"):
        kp.profile(torch.randn(2))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="tuple"):
        kp.Profiler().profile(len, args=[1])  # type: ignore[arg-type]


def test_a_raising_callable_stops_the_profiler_and_keeps_its_exception() -> None:
    calls = 0

    def flaky() -> None:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise ZeroDivisionError("boom")

    with pytest.raises(ZeroDivisionError, match="boom") as info:
        kp.Profiler(warmup=2, calls=3)(flaky)
    if sys.version_info >= (3, 11):
        assert "profiled call 1 of 3" in " ".join(info.value.__notes__)
    assert not profiler_running()
    assert kp.profile(torch.relu, torch.randn(4)).ops["aten::relu"].count == 1


def test_a_raising_warmup_never_starts_the_profiler() -> None:
    def broken() -> None:
        raise KeyError("x")

    with pytest.raises(KeyError):
        kp.profile(broken)
    assert not profiler_running()


def test_a_running_profiler_is_refused_and_left_running() -> None:
    with torch.profiler.profile() as outer:
        with pytest.raises(kp.ProfilerBusyError, match="already running"):
            kp.profile(torch.relu, torch.randn(4))
        assert profiler_running()
        torch.relu(torch.randn(4))
    assert any(e.name == "aten::relu" for e in outer.events())
    assert not profiler_running()


def test_a_profiler_that_fails_to_start_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: Any) -> None:
        raise RuntimeError("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES")

    monkeypatch.setattr(capture, "_direct_session_is_equivalent", lambda _torch: False)
    monkeypatch.setattr(torch.profiler.profile, "__enter__", refuse)
    with pytest.raises(kp.ProfilerStartError, match="CUPTI_ERROR_INSUFFICIENT_PRIVILEGES.*nsys"):
        kp.profile(torch.relu, torch.randn(4))
    monkeypatch.undo()
    assert not profiler_running()


def test_without_kineto_events_the_exported_trace_gives_the_same_profile(
    monkeypatch: pytest.MonkeyPatch, linear: tuple[torch.nn.Module, torch.Tensor]
) -> None:
    fast = kp.profile(*linear)
    monkeypatch.setattr(capture, "kineto_events", lambda _prof: None)
    slow = kp.profile(*linear)
    assert slow.ops.names == fast.ops.names
    assert [slow.ops[n].children for n in slow.ops] == [fast.ops[n].children for n in fast.ops]
    assert [slow.ops[n].count for n in slow.ops] == [fast.ops[n].count for n in fast.ops]


class _OldKinetoEvent:
    """A torch 2.11-style event: no activity_type, no is_python_function."""

    def __init__(self, event: Any) -> None:
        self._event = event

    def __getattr__(self, name: str) -> Any:
        if name in ("activity_type", "is_python_function", "external_id"):
            raise AttributeError(name)
        return getattr(self._event, name)


def test_the_fallback_classifier_agrees_with_activity_type(
    monkeypatch: pytest.MonkeyPatch, linear: tuple[torch.nn.Module, torch.Tensor]
) -> None:
    modern = kp.profile(*linear)
    real = capture.kineto_events
    monkeypatch.setattr(capture, "kineto_events", lambda prof: [_OldKinetoEvent(e) for e in real(prof)])
    old = kp.profile(*linear)
    assert old.ops.names == modern.ops.names
    assert [old.ops[n].children for n in old.ops] == [modern.ops[n].children for n in modern.ops]


def test_record_block_with_steps() -> None:
    profiler = kp.Profiler()
    with profiler.record() as rec:
        torch.relu(torch.randn(4))
        rec.step()
        torch.relu(torch.randn(4))
        with pytest.raises(kp.RecordingError, match="once the"):
            _ = rec.profile
    assert len(rec.profile.calls) == 2
    assert rec.profile.ops["aten::relu"].count == 1
    assert profiler.captures[-1].profile is rec.profile


def test_record_block_that_raises_stops_the_profiler() -> None:
    with pytest.raises(ValueError, match="inside"), kp.Profiler().record():
        raise ValueError("inside")
    assert not profiler_running()


def test_export_trace_round_trips_through_load_trace(
    tmp_path: Any, linear: tuple[torch.nn.Module, torch.Tensor]
) -> None:
    profiler = kp.Profiler()
    prof = profiler(*linear)
    path = tmp_path / "sub" / "linear.json.gz"
    profiler.captures[-1].export_trace(path)
    assert [p.name for p in path.parent.iterdir()] == ["linear.json.gz"]  # no temporary left behind
    loaded = kp.load_trace(path)
    assert loaded.ops.names == prof.ops.names
    assert len(loaded.calls) == len(prof.calls)


def test_device_facts_are_read_once_per_device(monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[int] = []
    current = 0

    def capability(index: int) -> tuple[int, int]:
        reads.append(index)
        return (9, 0) if index == 0 else (8, 0)

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: current)
    monkeypatch.setattr(torch.cuda, "get_device_capability", capability)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index: f"GPU {index}")
    capture._facts_of_device.cache_clear()
    try:
        assert capture.device_facts() == capture.device_facts() == ("GPU 0", "sm90")
        current = 1  # another current device: its own facts
        assert capture.device_facts() == ("GPU 1", "sm80")
        assert reads == [0, 1]
    finally:
        capture._facts_of_device.cache_clear()
