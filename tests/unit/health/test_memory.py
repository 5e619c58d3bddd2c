"""prof.memory: allocator calls from the events (traces recorded on an H200), peak and retained
bytes from the allocator readings the capture takes around each call (a stand-in allocator here)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

import pytest_kernelprof as kp
from pytest_kernelprof.assemble import build_profile
from pytest_kernelprof.capture import AllocatorMeter
from pytest_kernelprof.health import MemoryReading, format_bytes, memory_report, runtime_count
from pytest_kernelprof.traces.chrome import events_from_trace_file

Trace = Callable[[str], Path]
MiB64 = 64 * 2**20


def test_allocator_calls_are_read_from_a_trace(trace: Trace) -> None:
    leak = kp.load_trace(trace("memory_leak")).memory  # 64 MiB kept per call: a new block each call
    steady = kp.load_trace(trace("memory_steady")).memory  # the same 64 MiB freed each call: reused
    assert (leak.malloc_calls, leak.free_calls) == (1, 0)
    assert (steady.malloc_calls, steady.free_calls) == (0, 0)
    assert [c.memory.malloc_calls for c in kp.load_trace(trace("memory_leak")).calls] == [1, 1, 1]
    with pytest.raises(kp.CannotTellError, match="prof.memory.peak_bytes: this profile has no allocator readings"):
        _ = leak.peak_bytes
    with pytest.raises(kp.CannotTellError, match="retained_bytes"):
        _ = leak.retained_bytes
    assert "malloc_calls  1  (cudaMalloc per call)" in str(leak)
    assert "cannot tell" in str(leak)


def test_readings_become_peak_and_retained_bytes_medians(trace: Trace) -> None:
    source, events = events_from_trace_file(trace("memory_leak"))
    readings = [MemoryReading(before=i * MiB64, peak=(i + 1) * MiB64, after=(i + 1) * MiB64) for i in range(3)]
    prof = build_profile(events, source, memory=readings)
    assert prof.memory.peak_bytes == MiB64
    assert prof.memory.retained_bytes == MiB64
    assert prof.calls[2].memory.retained_bytes == MiB64
    assert prof.calls[2].memory_reading == readings[2]
    assert "retained_bytes  67,108,864  (64.0 MiB more allocated after the call)" in str(prof.memory)
    assert "MemoryReport (median of 3 calls)" in str(prof.memory)

    # One call that kept memory is not "every call": the median says 0.
    once = [MemoryReading(0, MiB64, MiB64), MemoryReading(MiB64, MiB64, MiB64), MemoryReading(MiB64, MiB64, MiB64)]
    assert build_profile(events, source, memory=once).memory.retained_bytes == 0

    # Readings that do not match the calls are not used, rather than shifted onto other calls.
    with pytest.raises(kp.CannotTellError):
        _ = build_profile(events, source, memory=readings[:2]).memory.peak_bytes


def test_memory_of_a_cpu_profile_raises_no_device_activity() -> None:
    prof = kp.profile(torch.relu, torch.randn(3))
    if torch.cuda.is_available():
        pytest.skip("a CPU-only profile needs a machine without CUDA")
    with pytest.raises(kp.NoDeviceActivityError):
        _ = prof.memory
    with pytest.raises(kp.NoDeviceActivityError):
        _ = prof.calls[0].memory


def test_runtime_names_and_sizes() -> None:
    assert runtime_count({"cudaMalloc": 2, "cudaMalloc_v3020": 1, "cudaMallocHost": 5}, ("cudaMalloc",)) == 3
    assert [format_bytes(v) for v in (0, 1023, 1024, 3 * 2**30, -MiB64)] == [
        "0 B",
        "1023 B",
        "1.0 KiB",
        "3.0 GiB",
        "-64.0 MiB",
    ]
    report = memory_report([{"cudaFree": 1}] * 3, [None, None, None], "why")
    assert (report.malloc_calls, report.free_calls, report.readings) == (0, 1, None)


class FakeCuda:
    """The part of ``torch.cuda`` the meter uses, with an allocator that the test drives."""

    def __init__(self, *, initialized: bool = True) -> None:
        self.initialized = initialized
        self.current = 0
        self.peak = 0
        self.public_calls = 0

    def is_initialized(self) -> bool:
        return self.initialized

    def current_device(self) -> int:
        assert self.initialized, "the meter initialised CUDA"
        return 0

    def allocate(self, size: int) -> None:
        self.current += size
        self.peak = max(self.peak, self.current)

    def memory_stats(self, device: int) -> dict[str, int]:
        self.public_calls += 1
        return {"allocated_bytes.all.current": self.current, "allocated_bytes.all.peak": self.peak}

    def reset_peak_memory_stats(self, device: int) -> None:
        self.public_calls += 1
        self.peak = self.current


def fake_torch(cuda: FakeCuda, *, raw: bool) -> Any:
    class C:
        pass

    c = C()
    if raw:
        c._cuda_memoryStats = lambda device: {  # type: ignore[attr-defined]
            "allocated_bytes": {"all": {"current": cuda.current, "peak": cuda.peak}}
        }
        c._cuda_resetPeakMemoryStats = lambda device: setattr(cuda, "peak", cuda.current)  # type: ignore[attr-defined]

    class T:
        pass

    t = T()
    t.cuda = cuda  # type: ignore[attr-defined]
    t._C = c  # type: ignore[attr-defined]
    return t


def _three_calls(meter: AllocatorMeter, cuda: FakeCuda) -> list[MemoryReading]:
    cuda.allocate(1000)  # allocated before profiling
    for _ in range(3):
        meter.before_call()
        cuda.allocate(500)  # a temporary: freed before the call returns
        cuda.allocate(-500)
        cuda.allocate(100)  # kept: a leak
        meter.after_call()
    return meter.readings


@pytest.mark.parametrize("raw", [True, False], ids=["torch._C counters", "torch.cuda.memory_stats fallback"])
def test_the_meter_reads_peak_above_before_and_what_stays(raw: bool) -> None:
    cuda = FakeCuda()
    readings = _three_calls(AllocatorMeter(fake_torch(cuda, raw=raw)), cuda)
    assert [(r.peak_above_before, r.retained) for r in readings] == [(500, 100)] * 3
    assert [r.before for r in readings] == [1000, 1100, 1200]  # one call's "after" is the next one's "before"
    assert (cuda.public_calls > 0) is not raw


def test_the_meter_falls_back_when_the_private_counters_change_shape() -> None:
    cuda = FakeCuda()
    torch_module = fake_torch(cuda, raw=True)
    torch_module._C._cuda_memoryStats = lambda device: {"allocated": 1}
    readings = _three_calls(AllocatorMeter(torch_module), cuda)
    assert readings[0].retained == 100
    assert cuda.public_calls > 0


def test_the_meter_never_initialises_cuda() -> None:
    cuda = FakeCuda(initialized=False)
    meter = AllocatorMeter(fake_torch(cuda, raw=True))
    meter.before_call()
    meter.after_call()
    assert meter.readings == [MemoryReading(0, 0, 0)]
