"""How events get in: ``RawEvent``, its factories, and the live Kineto adapter.

A live session (Kineto events, here) and a saved Chrome trace (``chrome.py``) are turned
into the same flat ``RawEvent`` records by one adapter each; the builder (``build/``) only
ever sees those, so the offline tests over recorded traces exercise the code that runs live.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# Kineto's activity types, which are also the Chrome trace categories; older Kineto
# versions wrote capitalised categories.
OP, ANNOTATION, PYTHON, RUNTIME, KERNEL, MEMCPY, MEMSET, IGNORED = (
    "op",
    "annotation",
    "python",
    "runtime",
    "kernel",
    "memcpy",
    "memset",
    "ignored",
)
CATEGORIES: Mapping[str, str] = {
    "cpu_op": OP,
    "operator": OP,
    "user_annotation": ANNOTATION,
    "python_function": PYTHON,  # recorded with with_stack=True
    "cuda_runtime": RUNTIME,
    "cuda_driver": RUNTIME,
    "runtime": RUNTIME,
    "driver": RUNTIME,
    "kernel": KERNEL,
    "gpu_memcpy": MEMCPY,
    "memcpy": MEMCPY,
    "gpu_memset": MEMSET,
    "memset": MEMSET,
}
GPU_CATEGORIES = frozenset((KERNEL, MEMCPY, MEMSET))
CPU_RANGES = frozenset((OP, ANNOTATION, PYTHON))
STEP_PREFIX = "ProfilerStep#"

# Runtime/driver calls that launch kernels: each must have at least one GPU record with
# its correlation id (a graph launch has many). Memcpy and memset calls are left out:
# some of them legitimately produce no GPU record.
KERNEL_LAUNCHES = frozenset(
    (
        "cudaLaunchKernel",
        "cudaLaunchKernelExC",
        "cudaLaunchCooperativeKernel",
        "cudaLaunchCooperativeKernelMultiDevice",
        "cuLaunchKernel",
        "cuLaunchKernelEx",
        "cuLaunchCooperativeKernel",
        "cudaGraphLaunch",
        "cuGraphLaunch",
    )
)
_LAUNCH_PREFIXES = ("cudaLaunchKernel", "cuLaunchKernel", "cudaGraphLaunch", "cuGraphLaunch")


def is_kernel_launch(name: str) -> bool:
    # Kineto appends the API version on some builds ("cudaLaunchKernel_v7000").
    return name in KERNEL_LAUNCHES or name.startswith(_LAUNCH_PREFIXES)


def is_graph_launch(name: str) -> bool:
    return name.startswith(("cudaGraphLaunch", "cuGraphLaunch"))


Dim3 = tuple[int, int, int]


class RawEvent:
    """One profiler event, source-independent. Times in integer nanoseconds.

    CPU ops, annotations and Python frames carry ``thread`` and, ops and annotations, their
    own id ``ident``; runtime calls carry ``thread``, the CUPTI ``correlation`` id and
    ``linked``, the id of the CPU op that was running; GPU records (kernels, memcpys,
    memsets) carry ``stream``, ``correlation``, ``linked``, ``device`` and, where the source
    has them, ``grid`` and ``block`` (kernels) or ``nbytes`` (memory records). CPU ops carry
    ``input_types`` where the profile recorded shapes (a Chrome trace's ``Input type``): the
    decoder's last evidence for a kernel's dtype.
    Fields a kind of event does not have are 0 or None.

    Equal and hashed by identity (the builder keys dicts by event, not by ``id``: one call
    fewer per lookup). Construct with keywords. The adapters make the subclasses below
    instead (``cpu_event``, ``runtime_event``, ``typed_op_event``, positional: the hot loop
    of every trace, where a keyword call costs measurably more per event; ``gpu_event``,
    keywords: GPU records are the fewer; or inline in the Kineto loops). The fields of a
    RawEvent are never set after it is made.
    """

    __slots__ = (
        "block",
        "category",
        "correlation",
        "device",
        "end",
        "grid",
        "ident",
        "input_types",
        "linked",
        "name",
        "nbytes",
        "start",
        "stream",
        "thread",
    )

    def __init__(
        self,
        *,
        category: str,
        name: str,
        start: int,
        end: int,
        thread: int = 0,
        stream: int = 0,
        ident: int = 0,
        correlation: int = 0,
        linked: int = 0,
        device: int | None = None,
        grid: Dim3 | None = None,
        block: Dim3 | None = None,
        nbytes: int | None = None,
        input_types: tuple[str, ...] = (),
    ) -> None:
        self.category = category
        self.name = name
        self.start = start
        self.end = end
        self.thread = thread
        self.stream = stream
        self.ident = ident
        self.correlation = correlation
        self.linked = linked
        self.device = device
        self.grid = grid
        self.block = block
        self.nbytes = nbytes
        self.input_types = input_types

    def __repr__(self) -> str:
        return f"RawEvent({self.category}, {self.name!r}, start={self.start}, end={self.end})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Copied or pickled as a plain RawEvent: the adapters' subclasses (below) cannot
        # have their shadowed fields set, which the default slot-by-slot state would do.
        return _keyword_event, (tuple((field, getattr(self, field)) for field in RawEvent.__slots__),)


def _keyword_event(fields: tuple[tuple[str, Any], ...]) -> RawEvent:
    return RawEvent(**dict(fields))


_new_event = object.__new__


# What the adapters make: RawEvents whose fields a kind of event does not have are class
# attributes of a subclass, not set per event (a slot the subclass shadows is never read).
# Making an event is most of an adapter's own cost, and this halves the attributes it sets.
# The shadowed fields are read-only on these (setting one raises AttributeError), which
# holds the rule that an event is not changed once made.
class _HostEvent(RawEvent):
    __slots__ = ()
    stream = correlation = linked = 0
    device = grid = block = nbytes = None
    input_types = ()


class _TypedOpEvent(RawEvent):  # a CPU op with its inputs' types recorded
    __slots__ = ()
    stream = correlation = linked = 0
    device = grid = block = nbytes = None


class _RuntimeEvent(RawEvent):
    __slots__ = ()
    category = RUNTIME
    stream = ident = 0
    device = grid = block = nbytes = None
    input_types = ()


class _GpuEvent(RawEvent):
    __slots__ = ()
    thread = ident = 0
    input_types = ()


def cpu_event(category: str, name: str, start: int, end: int, thread: int, ident: int) -> RawEvent:
    e: RawEvent = _new_event(_HostEvent)
    e.category, e.name, e.start, e.end, e.thread, e.ident = category, name, start, end, thread, ident
    return e


def typed_op_event(name: str, start: int, end: int, thread: int, ident: int, input_types: tuple[str, ...]) -> RawEvent:
    e: RawEvent = _new_event(_TypedOpEvent)
    e.category, e.name, e.start, e.end, e.thread, e.ident = OP, name, start, end, thread, ident
    e.input_types = input_types
    return e


def runtime_event(name: str, start: int, end: int, thread: int, correlation: int, linked: int) -> RawEvent:
    e: RawEvent = _new_event(_RuntimeEvent)
    e.name, e.start, e.end, e.thread, e.correlation, e.linked = name, start, end, thread, correlation, linked
    return e


def gpu_event(
    *,
    category: str,
    name: str,
    start: int,
    end: int,
    stream: int,
    correlation: int,
    linked: int,
    device: int | None = None,
    grid: Dim3 | None = None,
    block: Dim3 | None = None,
    nbytes: int | None = None,
) -> RawEvent:
    """A GPU record (kernel, memcpy, memset), made as the adapters make them."""
    e: RawEvent = _new_event(_GpuEvent)
    e.category, e.name, e.start, e.end, e.stream = category, name, start, end, stream
    e.correlation, e.linked, e.device, e.grid, e.block = correlation, linked, device, grid, block
    e.nbytes = nbytes
    return e


def arch_name(major: int, minor: int) -> str:
    """A compute capability as baselines and reports name it: (9, 0) -> "sm90"."""
    return f"sm{major}{minor}"


@dataclass(frozen=True)
class Source:
    """Facts about where the events came from.

    ``triton_kernels``: names of kernels that capture learned are Triton kernels (their names
    do not say so); saved in a trace's ``"kernelprof"`` key, read back from it.
    """

    def with_unread(self, unread: tuple[tuple[str, int], ...]) -> Source:
        return Source(self.label, self.device, self.arch, self.gpu_requested, self.triton_kernels, unread)

    label: str
    device: str | None = None
    arch: str | None = None
    gpu_requested: bool = False
    triton_kernels: frozenset[str] = frozenset()
    # A trace with no GPU record: (category, events) of the complete events it holds that the
    # plugin does not read, such as another accelerator's (MTIA's), for saying what it holds.
    unread: tuple[tuple[str, int], ...] = ()


def dim3(value: Any) -> Dim3 | None:
    if type(value) is list and len(value) == 3:
        x, y, z = value
        if type(x) is int and type(y) is int and type(z) is int:
            return (x, y, z)
    return None


# -- live: Kineto events ------------------------------------------------------------------


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
    new, host_class, runtime_class, gpu_class = _new_event, _HostEvent, _RuntimeEvent, _GpuEvent
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
            e.name = name
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
    new, host_class, runtime_class, gpu_class = _new_event, _HostEvent, _RuntimeEvent, _GpuEvent
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
