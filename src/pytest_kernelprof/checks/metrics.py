"""The numbers of a profile by name, for ``kernelprof_forbid`` metric rules and for baselines.

Each metric reads a ``KernelProfile`` and says what it is made of (``detail``, for a
failure message). A metric a profile cannot tell (memory on a CPU profile, graph breaks of a
loaded trace) reads as None: rules do not apply to it, baselines neither store nor compare it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..errors import CannotTellError, NoDeviceActivityError
from ..model import CallProfile, KernelProfile


@dataclass(frozen=True)
class Metric:
    """A number of a profile; ``detail`` shows what makes it up."""

    read: Callable[[KernelProfile], int]
    detail: Callable[[KernelProfile], str]
    size: bool = False  # a byte count: rules take units, and messages print sizes


def _nothing(prof: KernelProfile) -> str:
    return ""


def _most_kernels(prof: KernelProfile) -> CallProfile:
    """The call whose kernels a count reads: the representative one, or, where the calls launched
    different sequences (``allow_variation=True``), the one with the most, so that a rule such as
    ``kernels>2`` breaks on any call that broke it (as syncs take the call with the most)."""
    return max(prof.calls, key=lambda c: len(c.kernels)) if prof.varied else prof.call


def _most_launches(prof: KernelProfile) -> int:
    return max(c.launches for c in prof.calls) if prof.varied else prof.launches


METRICS: dict[str, Metric] = {
    "syncs": Metric(lambda p: len(p.syncs), lambda p: p.syncs.table()),
    "dtoh_copies": Metric(lambda p: p.copies.count(direction="DtoH"), lambda p: p.copies.table()),
    "launches": Metric(_most_launches, lambda p: _most_kernels(p).kernels.table()),
    "graph_breaks": Metric(
        lambda p: len(p.compile.graph_breaks), lambda p: "\n".join(str(b) for b in p.compile.graph_breaks)
    ),
    "recompiles": Metric(lambda p: p.compile.recompiles, lambda p: "\n".join(p.compile.recompile_reasons)),
    "frames": Metric(lambda p: p.compile.frames, _nothing),
    "regions": Metric(lambda p: p.compile.regions, _nothing),
    "kernels": Metric(lambda p: len(_most_kernels(p).kernels), lambda p: _most_kernels(p).kernels.table()),
    "peak_bytes": Metric(lambda p: p.memory.peak_bytes, lambda p: p.memory.table(), size=True),
    "retained_bytes": Metric(lambda p: p.memory.retained_bytes, lambda p: p.memory.table(), size=True),
    "malloc_calls": Metric(lambda p: p.memory.malloc_calls, lambda p: p.memory.table()),
    "free_calls": Metric(lambda p: p.memory.free_calls, lambda p: p.memory.table()),
}


def read_metric(prof: KernelProfile, name: str) -> int | None:
    """The metric ``name`` of ``prof``, or None where the profile cannot tell it."""
    try:
        return int(METRICS[name].read(prof))
    except (NoDeviceActivityError, CannotTellError):
        return None
