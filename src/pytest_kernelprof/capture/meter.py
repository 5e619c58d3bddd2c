"""The CUDA caching allocator's readings around each profiled call (``prof.memory``)."""

from __future__ import annotations

from typing import Any

from ..health import MemoryReading


class AllocatorMeter:
    """Reads the CUDA caching allocator's allocated bytes around each profiled call.

    Taken between the ``ProfilerStep`` ranges, never inside them, so neither a call's
    kernels nor its time change: before a call, the peak counter is reset (about 5 us);
    after it (synchronized), one read of the counters gives the peak and what is still
    allocated, which is also the next call's "before". The read goes through
    ``torch._C._cuda_memoryStats`` (probed: private), which skips the flattening that
    makes ``torch.cuda.memory_stats()``/``memory_allocated()`` cost over 100 us each.
    """

    def __init__(self, torch: Any) -> None:
        self._cuda = torch.cuda
        self._raw_stats = getattr(torch._C, "_cuda_memoryStats", None)
        self._raw_reset = getattr(torch._C, "_cuda_resetPeakMemoryStats", None)
        self._before: int | None = None
        self.readings: list[MemoryReading] = []

    def _device(self) -> int | None:
        # Never initialise CUDA for a reading: an uninitialised allocator holds nothing.
        return int(self._cuda.current_device()) if self._cuda.is_initialized() else None

    def _counters(self) -> tuple[int, int]:
        """(allocated now, peak since the last reset) on the current device."""
        device = self._device()
        if device is None:
            return 0, 0
        if self._raw_stats is not None:
            try:
                allocated = self._raw_stats(device)["allocated_bytes"]["all"]
                return int(allocated["current"]), int(allocated["peak"])
            except (TypeError, KeyError, RuntimeError):
                self._raw_stats = None  # another layout: the public API from now on
        stats = self._cuda.memory_stats(device)
        return int(stats.get("allocated_bytes.all.current", 0)), int(stats.get("allocated_bytes.all.peak", 0))

    def _reset_peak(self) -> None:
        device = self._device()
        if device is None:
            return
        if self._raw_reset is not None:
            try:
                self._raw_reset(device)
                return
            except (TypeError, RuntimeError):
                self._raw_reset = None
        self._cuda.reset_peak_memory_stats(device)

    def before_call(self) -> None:
        if self._before is None:
            self._before = self._counters()[0]
        self._reset_peak()

    def after_call(self) -> None:
        before = self._before or 0
        current, peak = self._counters()
        self.readings.append(MemoryReading(before=before, peak=max(peak, before, current), after=current))
        self._before = current


def meter_for(torch: Any) -> AllocatorMeter | None:
    return AllocatorMeter(torch) if torch.cuda.is_available() else None
