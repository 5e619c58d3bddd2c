"""The adapter of live Kineto events (``prof.profiler.kineto_results.events()``) to ``RawEvent``.

About 50x faster than ``prof.events()`` or ``key_averages()``: what this torch offers is
probed once, on the first event, and only what the builder uses is read.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable
from typing import Any

from .records import (
    ANNOTATION,
    CATEGORIES,
    CPU_RANGES,
    IGNORED,
    KERNEL,
    MEMCPY,
    MEMSET,
    OP,
    PYTHON,
    RUNTIME,
    UNNAMED_RUNTIME,
    Dim3,
    GpuEvent,
    HostEvent,
    RawEvent,
    RuntimeEvent,
    dim3,
    new_event,
    unnamed_runtime_call,
)


def events_from_kineto(kineto_events: Iterable[Any]) -> list[RawEvent]:
    """Adapt ``prof.profiler.kineto_results.events()`` (torch's ``_KinetoEvent``).

    The hot loop of a live profile: each method of an event is a pybind call (0.2-0.45 us
    on an H200, torch 2.11), so what this torch offers is probed once, on the first event,
    each event is classified with as few calls as it takes, and only what the builder uses
    is read.
    """
    events = kineto_events if type(kineto_events) is list else list(kineto_events)
    if not events:
        return []
    if hasattr(events[0], "activity_type"):
        return _by_activity_type(events)
    return _without_activity_type(events)


def _by_activity_type(events: list[Any]) -> list[RawEvent]:
    categories = CATEGORIES
    cpu_ranges = CPU_RANGES
    out: list[RawEvent] = []
    append = out.append
    new, host_class, runtime_class, gpu_class = new_event, HostEvent, RuntimeEvent, GpuEvent
    e: RawEvent
    for ev in events:
        try:
            name = ev.name()
        except UnicodeDecodeError:
            # Seen once on torch 2.13 for a Python frame under with_stack=True: a name
            # cut inside a multi-byte character. One lost frame, not a failed profile.
            continue
        # Asked for every event, "aten::" names too: a user's record_function("aten::x") is
        # an annotation, and its GPU-lane copy no host op (skipping the call for aten:: names
        # measured 0.87-0.91x this loop's time, but made both ops).
        category = categories.get(ev.activity_type(), IGNORED)
        # The events are made here, not by cpu_event/runtime_event/gpu_event: a call
        # per event is a tenth of the loop. _without_activity_type makes them with the same
        # lines on purpose: one loop for both paths, branching per event, measured 1.01-1.05x
        # on this path (CPU VM, 2,493 and 24,993 events).
        if category in cpu_ranges:
            e = new(host_class)
            e.category, e.name = category, name
            e.start = start = ev.start_ns()
            e.end = start + ev.duration_ns()
            e.thread, e.ident = ev.start_thread_id(), ev.correlation_id()
            append(e)
        elif category is RUNTIME:
            e = new(runtime_class)
            e.name = name if name != UNNAMED_RUNTIME else unnamed_runtime_call(_kineto_cbid(ev))
            e.start = start = ev.start_ns()
            e.end = start + ev.duration_ns()
            e.thread, e.correlation = ev.start_thread_id(), ev.correlation_id()
            e.linked = ev.linked_correlation_id()
            append(e)
        elif category is not IGNORED:
            e = new(gpu_class)
            e.category, e.name, e.device = category, name, ev.device_index()
            e.start = start = ev.start_ns()
            e.end = start + ev.duration_ns()
            e.stream, e.correlation = ev.device_resource_id(), ev.correlation_id()
            e.linked = ev.linked_correlation_id()
            if category is KERNEL:
                e.grid, e.block = _kineto_launch_shape(ev)
                e.nbytes = None
            else:
                e.grid = e.block = None
                e.nbytes = _kineto_bytes(ev)
            append(e)
    return out


_RUNTIME_NAME = re.compile(r"^cu(?:da)?[A-Z]")


_KINETO_OVERHEAD = frozenset(("Activity Buffer Request", "Buffer Request", "Buffer Flush"))

# A host event's device_index() is the process id (or -1 for Kineto's own events), a
# device event's is the device's ordinal: torch fills it from Kineto's DeviceAndResource.
# One value means both only where this process's id is also the ordinal of a GPU it has
# (a container's PID 1 on a machine of two GPUs, say).
_UNKNOWN_DEVICE_COUNT = 256  # no more GPUs than this in one process


def _ambiguous_index() -> int | None:
    """The device_index() that may be this process on host events and a GPU on device records."""
    pid = os.getpid()
    torch = sys.modules.get("torch")  # imported wherever Kineto events exist; never imported here
    try:
        count = int(torch.cuda.device_count()) if torch is not None else _UNKNOWN_DEVICE_COUNT
    except Exception:  # a broken CUDA setup: assume the worst, correctness first
        count = _UNKNOWN_DEVICE_COUNT
    return pid if pid < count else None


def _without_activity_type(events: list[Any]) -> list[RawEvent]:
    """Classify events of a torch without ``_KinetoEvent.activity_type`` (2.11 and older).

    ``device_type()`` is the dearest call (it builds an enum object, and comparing it is
    another call), so it is made once per distinct ``device_index()``, which the GPU
    records need anyway, except for a value that is both this process's id and a GPU's
    ordinal (``_ambiguous_index``): those events pay it each. Which methods exist is probed
    once, on the first event: each was added in a different release, and a failed attribute
    lookup per event would cost more.
    Names decide what they can: runtime calls by their ``cu``/``cuda`` prefix, dispatcher
    ops by ``aten::`` (torch never names a user annotation so), memory records by
    ``Memcpy``/``Memset``.
    """
    first = events[0]
    has_python = hasattr(first, "is_python_function")
    has_annotation = hasattr(first, "is_user_annotation")
    cpu_type = getattr(type(first.device_type()), "CPU", None)
    ambiguous = _ambiguous_index()
    on_host: dict[int, bool] = {}

    def host_event(ev: Any, index: int) -> bool:
        device_type = ev.device_type()
        host = device_type == cpu_type if cpu_type is not None else str(device_type).endswith("CPU")
        if index != ambiguous:
            on_host[index] = host
        return host

    # What a host event's name alone says, found once per distinct name: names repeat
    # (every aten::add, every cudaLaunchKernel), and a dict lookup is cheaper than the
    # prefix tests. None: the name cannot tell (an annotation, a Python frame or an op).
    host_kinds: dict[str, str | None] = {}
    gpu_kinds: dict[str, str] = {}
    out: list[RawEvent] = []
    append = out.append
    new, host_class, runtime_class, gpu_class = new_event, HostEvent, RuntimeEvent, GpuEvent
    e: RawEvent
    for ev in events:
        try:
            name = ev.name()
        except UnicodeDecodeError:
            continue  # see _by_activity_type
        index = ev.device_index()
        host = on_host.get(index)
        if host is None:
            host = host_event(ev, index)
        if host:
            kind = host_kinds.get(name, IGNORED)  # IGNORED: not seen yet (never stored)
            if kind is IGNORED:
                kind = host_kinds[name] = _host_kind(name)
            if kind is RUNTIME:
                e = new(runtime_class)
                e.name = name
                e.start = start = ev.start_ns()
                e.end = start + ev.duration_ns()
                e.thread, e.correlation = ev.start_thread_id(), ev.correlation_id()
                e.linked = ev.linked_correlation_id()
                append(e)
                continue
            if kind is None:
                if has_annotation and ev.is_user_annotation():
                    kind = ANNOTATION
                elif has_python and ev.is_python_function():
                    kind = PYTHON
                else:
                    kind = OP
            elif kind is _OVERHEAD:
                continue
            e = new(host_class)
            e.category, e.name = kind, name
            e.start = start = ev.start_ns()
            e.end = start + ev.duration_ns()
            e.thread, e.ident = ev.start_thread_id(), ev.correlation_id()
            append(e)
            continue
        kind = gpu_kinds.get(name)
        if kind is None:
            memcpy, memset = name.startswith("Memcpy"), name.startswith("Memset")
            kind = gpu_kinds[name] = MEMCPY if memcpy else MEMSET if memset else KERNEL
        # GPU-lane copies of annotations are not kernels. Launch shapes come with metadata
        # only from torch versions that also have activity_type; older ones return empty
        # metadata, not worth a call per kernel.
        if kind is KERNEL and has_annotation and ev.is_user_annotation():
            continue
        e = new(gpu_class)
        e.category, e.name, e.device = kind, name, index
        e.start = start = ev.start_ns()
        e.end = start + ev.duration_ns()
        e.stream, e.correlation = ev.device_resource_id(), ev.correlation_id()
        e.linked = ev.linked_correlation_id()
        e.grid = e.block = None
        e.nbytes = _kineto_bytes(ev) if kind is not KERNEL else None
        append(e)
    return out


_OVERHEAD = "overhead"  # a host_kinds value: Kineto's own bookkeeping, dropped


def _host_kind(name: str) -> str | None:
    """What a host event's name says it is on a torch without activity_type: runtime calls
    by their ``cu``/``cuda`` prefix, dispatcher ops by ``aten::`` (torch never names a user
    annotation so), Kineto's buffer bookkeeping by name; None where the name cannot tell."""
    if _RUNTIME_NAME.match(name):
        return RUNTIME
    if name.startswith("aten::"):
        return OP
    if name in _KINETO_OVERHEAD:
        return _OVERHEAD
    return None


_BYTES = re.compile(r'"bytes":\s*(\d+)')


def _kineto_bytes(ev: Any) -> int | None:
    """A memory record's size, where the event's metadata has it (torch 2.12+; torch 2.11
    fills metadata only under ``_ExperimentalConfig(expose_kineto_event_metadata=True)``)."""
    try:
        meta = ev.metadata_json()
    except AttributeError:
        return None
    found = _BYTES.search(meta) if meta else None
    return int(found.group(1)) if found is not None else None


def _kineto_cbid(ev: Any) -> int | None:
    """A runtime call's CUPTI callback id, where the event's metadata has it (see ``_kineto_bytes``)."""
    try:
        meta = ev.metadata_json()
    except AttributeError:
        return None
    found = _CBID.search(meta) if meta else None
    return int(found.group(1)) if found is not None else None


_CBID = re.compile(r'"cbid"\s*:\s*(\d+)')


def _kineto_launch_shape(ev: Any) -> tuple[Dim3 | None, Dim3 | None]:
    try:
        meta = ev.metadata_json()
    except AttributeError:
        return None, None
    if not meta or "grid" not in meta:
        return None, None
    try:
        fields = json.loads("{" + meta + "}" if not meta.lstrip().startswith("{") else meta)
    except ValueError:
        return None, None
    return dim3(fields.get("grid")), dim3(fields.get("block"))
