"""GPU memory of a profile: ``prof.memory``.

:class:`MemoryReport` is made from the ``cudaMalloc``/``cudaFree`` runtime calls the events
hold (so a loaded trace has them) and the :class:`MemoryReading` that capture took live
around each call. Pure: no torch import.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import CannotTellError
from .compiled import hide_cannot_tell

MALLOC_CALLS = ("cudaMalloc",)
FREE_CALLS = ("cudaFree",)


def runtime_count(runtime: Mapping[str, int], names: Sequence[str]) -> int:
    """Calls of the runtime functions ``names``, also under Kineto's versioned names
    (``cudaMalloc_v3020``)."""
    return sum(count for name, count in runtime.items() if name in names or name.split("_v")[0] in names)


@dataclass(frozen=True)
class MemoryReading:
    """The caching allocator's counters around one profiled call, in bytes, on the current
    CUDA device: allocated before the call, the peak during it, allocated after it
    (synchronized, with the call's return value already released)."""

    before: int
    peak: int
    after: int

    @property
    def peak_above_before(self) -> int:
        return self.peak - self.before

    @property
    def retained(self) -> int:
        return self.after - self.before


def format_bytes(value: int) -> str:
    sign = "-" if value < 0 else ""
    size = float(abs(value))
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            text = f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
            return sign + text
        size /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass(frozen=True, repr=False)
class MemoryReport:
    """GPU memory of a profile's calls: ``prof.memory`` (or ``prof.calls[i].memory``).

    ``malloc_calls``/``free_calls`` are the ``cudaMalloc``/``cudaFree`` runtime calls per call
    (the median), read from the events, so loaded traces have them. ``peak_bytes`` and
    ``retained_bytes`` come from the allocator's counters read live around each call;
    where there are none (a loaded trace) reading them raises :class:`CannotTellError`.
    """

    malloc_calls: int
    free_calls: int
    readings: tuple[MemoryReading, ...] | None
    unknown: str = ""

    def _readings(self, what: str) -> tuple[MemoryReading, ...]:
        __tracebackhide__ = hide_cannot_tell
        if self.readings is None:
            raise CannotTellError(f"{what}: {self.unknown}")
        return self.readings

    @property
    def peak_bytes(self) -> int:
        """Peak allocated during a call above what was allocated before it (median over calls)."""
        __tracebackhide__ = hide_cannot_tell
        return _median_int(r.peak_above_before for r in self._readings("prof.memory.peak_bytes"))

    @property
    def retained_bytes(self) -> int:
        """Allocated after a call minus before it (median over calls): more than 0 in every
        call is a leak, such as a loss kept with its graph."""
        __tracebackhide__ = hide_cannot_tell
        return _median_int(r.retained for r in self._readings("prof.memory.retained_bytes"))

    def table(self) -> str:
        rows: list[tuple[str, str, str]] = []
        if self.readings is not None:
            peak, retained = self.peak_bytes, self.retained_bytes
            before = format_bytes(_median_int(r.before for r in self.readings))
            above = f"{format_bytes(peak)} above the {before} allocated before the call"
            rows.append(("peak_bytes", f"{peak:,}", above))
            rows.append(("retained_bytes", f"{retained:,}", f"{format_bytes(retained)} more allocated after the call"))
        rows.append(("malloc_calls", str(self.malloc_calls), "cudaMalloc per call"))
        rows.append(("free_calls", str(self.free_calls), "cudaFree per call"))
        label = max(len(r[0]) for r in rows)
        value = max(len(r[1]) for r in rows)
        lines = [f"  {name.ljust(label)}  {number.rjust(value)}  ({note})" for name, number, note in rows]
        if self.readings is None:
            lines.append(f"  peak_bytes, retained_bytes: cannot tell ({self.unknown})")
            return "MemoryReport:\n" + "\n".join(lines)
        return f"MemoryReport (median of {len(self.readings)} calls):\n" + "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        # One short line, as CompileReport's: print() gives the table.
        counts = f"malloc_calls={self.malloc_calls}, free_calls={self.free_calls}"
        if self.readings is None:
            return f"MemoryReport({counts}; peak_bytes, retained_bytes: cannot tell, see .table())"
        peak, retained = format_bytes(self.peak_bytes), format_bytes(self.retained_bytes)
        calls = _plural_calls(len(self.readings))
        return f"MemoryReport(peak_bytes={peak}, retained_bytes={retained}, {counts}; median of {calls})"


def _plural_calls(count: int) -> str:
    return f"{count} call" if count == 1 else f"{count} calls"


def memory_report(
    runtimes: Sequence[Mapping[str, int]], readings: Sequence[MemoryReading | None], unknown: str
) -> MemoryReport:
    complete = None if not readings or any(r is None for r in readings) else tuple(r for r in readings if r)
    return MemoryReport(
        malloc_calls=_median_int(runtime_count(r, MALLOC_CALLS) for r in runtimes),
        free_calls=_median_int(runtime_count(r, FREE_CALLS) for r in runtimes),
        readings=complete,
        unknown=unknown,
    )


NO_READINGS = (
    "this profile has no allocator readings: they are taken live around each profiled call on a GPU, "
    "and a trace keeps the cudaMalloc/cudaFree calls (malloc_calls, free_calls) but not the bytes allocated"
)


def _median_int(values: Iterable[int]) -> int:
    ordered = list(values)
    return int(statistics.median_low(ordered)) if ordered else 0
