"""Run a callable (or a ``with`` block) under torch.profiler and hand back what it recorded.

``run.py`` runs the calls, ``profiler.py`` starts, stops and reads the torch session,
``session_traces.py`` writes its trace (kept as it ends, or only while no later one started),
``meter.py`` reads the allocator around each call, ``sync_lines.py`` finds the user's line of
each sync, ``guards.py`` words what went wrong, ``triton_kernels.py`` learns which kernels are
Triton's and reads their IR, ``inductor_kernels.py`` the dtypes of Inductor's. ``api/`` builds
the profile from the ``CapturedSession`` a capture ends with (``record_block``'s ``Block`` holds
it once the block has ended).
"""

from __future__ import annotations

from .meter import AllocatorMeter
from .profiler import (
    KinetoSession,
    device_facts,
    kineto_events,
    package_versions,
    profiler_running,
    raw_events,
    synchronize,
)
from .run import Block, CapturedSession, capture_callable, record_block
from .sync_lines import SyncLines

__all__ = [
    "AllocatorMeter",
    "Block",
    "CapturedSession",
    "KinetoSession",
    "SyncLines",
    "capture_callable",
    "device_facts",
    "kineto_events",
    "package_versions",
    "profiler_running",
    "raw_events",
    "record_block",
    "synchronize",
]
