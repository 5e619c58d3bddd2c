"""The Chrome trace format: its events as ``RawEvent``s, and the facts of its header.

torch.profiler exports Chrome/Perfetto JSON. This module knows that layout: the adapter
from one event object (``raw_event_from_chrome``), msgspec's typed records for the same
events and the loop that adapts a batch of them (``[fast]`` extra), and the device facts of a
trace's header with what the ``"kernelprof"`` key that captures add to the traces they export
holds (that key is ``kernelprof_key.py``'s). Reading bytes and files (size caps, gzip,
batching) is ``files.py``'s; it is handed the converters here and knows nothing of events.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Mapping
from typing import Any

from ..tables import printable
from . import (
    CATEGORIES,
    CPU_RANGES,
    GPU_CATEGORIES,
    IGNORED,
    KERNEL,
    OP,
    RUNTIME,
    RawEvent,
    Source,
    arch_name,
    cpu_event,
    dim3,
    gpu_event,
    runtime_event,
    typed_op_event,
)
from .files import read_trace
from .json_reader import hide_trace_errors
from .kernelprof_key import _triton_ir, _triton_kernels, kernelprof_section
from .records import UNNAMED_RUNTIME, unnamed_runtime_call
from .typed_batches import TypedReader

# -- one event ----------------------------------------------------------------------------


def raw_event_from_chrome(ev: Mapping[str, Any]) -> RawEvent | None:
    """One Chrome trace event as a RawEvent; None for events the builder does not use.

    Raises KeyError, TypeError or ValueError on a malformed event; the trace reader turns
    those into a TraceError that names the file. The hot path of ``load_trace``: CPU ops
    (most events) take the fewest lookups. ``_typed_events`` applies the same rules to
    msgspec's typed records: change both (tests/unit/test_traces.py compares them).
    """
    if ev.get("ph") != "X":
        return None
    cat = ev.get("cat")
    if type(cat) is not str:
        return None
    category = CATEGORIES.get(cat) or CATEGORIES.get(cat.lower(), IGNORED)
    if category == IGNORED:
        return None
    name = ev["name"]
    if type(name) is not str:
        raise TypeError(f"event name is a {type(name).__name__}, not a string")
    name = sys.intern(name)  # names repeat across calls: keep one copy of each
    start = round(float(ev["ts"]) * 1000)
    end = start + round(float(ev.get("dur", 0)) * 1000)
    if not (-MAX_TIME_NS < start < MAX_TIME_NS and end - start <= MAX_DURATION_NS):
        raise ValueError(impossible_time(ev["ts"], ev.get("dur", 0)))
    args = ev.get("args")
    if type(args) is not dict:
        args = _NO_ARGS
    external = args.get("External id")
    if external is None:
        external = args.get("external id")
    external = int(external) if external else 0
    if category in CPU_RANGES:  # the common case first
        types = args.get("Input type") if category == OP else None
        if types:
            return typed_op_event(name, start, end, thread_id(ev.get("tid", 0)), external, input_types_of(types))
        return cpu_event(category, name, start, end, thread_id(ev.get("tid", 0)), external)
    correlation = args.get("correlation")
    correlation = int(correlation) if correlation else 0
    if category == RUNTIME:
        if name == UNNAMED_RUNTIME:
            name = sys.intern(unnamed_runtime_call(args.get("cbid")))
        return runtime_event(name, start, end, thread_id(ev.get("tid", 0)), correlation, external)
    stream = args.get("stream", ev.get("tid", 0))
    device = args.get("device")
    nbytes = args.get("bytes") if category != KERNEL else None
    return gpu_event(
        category=category,
        name=name,
        start=start,
        end=end,
        stream=int(stream) if stream else 0,
        correlation=correlation,
        linked=external,
        device=device if type(device) is int else None,
        grid=dim3(args.get("grid")),
        block=dim3(args.get("block")),
        nbytes=nbytes if type(nbytes) is int else None,
    )


def input_types_of(types: object) -> tuple[str, ...]:
    """An op's ``Input type`` list as a tuple of strings; () for anything else."""
    if type(types) is not list or not all(type(t) is str for t in types):
        return ()
    return tuple(types)


# Times no profiler writes: a timestamp beyond int64 nanoseconds (what events hold; about 292
# years from Kineto's epoch), an event of more than a day. Shown, they are numbers of hundreds of digits.
MAX_TIME_NS = 2**63 - 1
MAX_DURATION_NS = 86_400 * 10**9


def impossible_time(ts: Any, dur: Any) -> str:
    """Why an event's ``ts``/``dur`` (microseconds) cannot be a profiler's."""
    if abs(float(ts)) * 1000 >= MAX_TIME_NS:
        return f"its 'ts' of {ts!r} us is not a time a profiler writes (more than 292 years from the epoch)"
    return f"its 'dur' of {dur!r} us is more than a day, which no profiled event lasts"


_NO_ARGS: Mapping[str, Any] = {}


def thread_id(tid: Any) -> int:
    """A Chrome trace's ``tid`` as an int: torch writes ints, some tools names (hashed)."""
    if type(tid) is int:
        return tid
    try:
        return int(tid)
    except (TypeError, ValueError):
        return hash(tid)


# -- the typed records (msgspec) ----------------------------------------------------------


@functools.cache
def typed_reader() -> TypedReader[RawEvent] | None:
    """msgspec's reader of Chrome events, or None without the ``[fast]`` extra; imported on
    first use (0.1 s). Its records keep only the fields a trace event needs."""
    try:
        import msgspec
    except ImportError:
        return None
    unset = msgspec.UNSET
    dim = tuple[int, int, int] | None
    args = msgspec.defstruct(
        "TraceArgs",
        [
            ("external", int | None, None),
            ("external_lower", int | None, None),
            ("correlation", int | None, None),
            ("cbid", int | None, None),
            ("stream", int | None | msgspec.UnsetType, unset),
            ("device", int | None, None),
            ("grid", dim, None),
            ("block", dim, None),
            ("nbytes", int | None, None),
            ("input_types", list[str] | None, None),
        ],
        rename={
            "external": "External id",
            "external_lower": "external id",
            "nbytes": "bytes",
            "input_types": "Input type",
        },
        gc=False,
    )
    event = msgspec.defstruct(
        "TraceEvent",
        [
            ("ph", str | None, None),
            ("cat", str | None, None),
            ("name", str | msgspec.UnsetType, unset),
            ("ts", float | msgspec.UnsetType, unset),
            ("dur", float, 0.0),
            ("tid", int | str, 0),
            ("args", args | None, None),
        ],
        gc=False,
    )
    decoder = msgspec.json.Decoder(list[event])  # type: ignore[valid-type]  # a class made at run time
    return TypedReader(
        decoder.decode, (msgspec.DecodeError, RecursionError), functools.partial(_typed_events, unset=unset)
    )


def _typed_events(batch: list[Any], out: list[RawEvent], unset: object) -> bool:
    """Append what ``raw_event_from_chrome`` makes of each event; False where it would raise.

    The same rules, field by field, on records whose types msgspec has checked; a negative
    duration or an impossible time also returns False, so that the general reader reports
    it. A change to that adapter needs the same change here: tests/unit/test_traces.py
    compares the two.
    """
    cpu_ranges, max_time, max_duration = CPU_RANGES, MAX_TIME_NS, MAX_DURATION_NS
    intern, append = sys.intern, out.append
    nearest = float.__round__  # round() of a float, without looking the method up on every call
    category_of: dict[str | None, str] = {None: IGNORED}  # a batch has a handful of categories
    try:
        for ev in batch:
            if ev.ph != "X":
                continue
            category = category_of.get(ev.cat)
            if category is None:
                cat = ev.cat
                category = category_of[cat] = CATEGORIES.get(cat) or CATEGORIES.get(cat.lower(), IGNORED)
            if category == IGNORED:
                continue
            name, ts, dur, args = ev.name, ev.ts, ev.dur, ev.args
            if name is unset or ts is unset or dur < 0:
                return False
            start = nearest(ts * 1000)
            end = start + nearest(dur * 1000)
            if not (-max_time < start < max_time and end - start <= max_duration):
                return False
            if args is None:
                external = 0
            else:
                external = args.external
                if external is None:
                    external = args.external_lower
                external = external or 0
            if category in cpu_ranges:  # the common case first
                tid = ev.tid
                thread = tid if type(tid) is int else thread_id(tid)
                types = args.input_types if args is not None and category == OP else None
                if types:
                    append(typed_op_event(intern(name), start, end, thread, external, tuple(types)))
                else:
                    append(cpu_event(category, intern(name), start, end, thread, external))
                continue
            correlation = 0 if args is None else args.correlation or 0
            if category == RUNTIME:
                tid = ev.tid
                thread = tid if type(tid) is int else thread_id(tid)
                if name == UNNAMED_RUNTIME:
                    name = unnamed_runtime_call(None if args is None else args.cbid)
                append(runtime_event(intern(name), start, end, thread, correlation, external))
            else:
                has_args = args is not None
                stream = args.stream if has_args and args.stream is not unset else ev.tid
                append(
                    gpu_event(
                        category=category,
                        name=intern(name),
                        start=start,
                        end=end,
                        stream=int(stream) if stream else 0,
                        correlation=correlation,
                        linked=external,
                        device=args.device if has_args else None,
                        grid=args.grid if has_args else None,
                        block=args.block if has_args else None,
                        nbytes=args.nbytes if has_args and category != KERNEL else None,
                    )
                )
    except (ValueError, OverflowError):  # int() of a text tid, round() of an infinite time
        return False
    return True


# -- files and bytes ----------------------------------------------------------------------


def read_chrome_trace(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[RawEvent]]:
    """A Chrome trace file's header (without ``traceEvents``) and its events, by the typed
    reader where msgspec is installed and the file is as it expects, else the standard library's."""
    __tracebackhide__ = hide_trace_errors
    return read_trace(path, raw_event_from_chrome, typed_reader())


def events_from_trace_file(path: str | os.PathLike[str]) -> tuple[Source, list[RawEvent]]:
    """The events of a Chrome trace file and the facts its header gives about the device.

    The one way a trace file becomes events: ``load_trace`` and the live capture's
    export fallback (a torch without raw Kineto events) both read files through it.
    """
    __tracebackhide__ = hide_trace_errors
    header, events = read_chrome_trace(path)
    source = chrome_source(header, os.fspath(path))
    if not any(event.category in GPU_CATEGORIES for event in events):
        # Rare, and said once: read the file again for what it holds instead of GPU records.
        source = source.with_unread(_unread_categories(path))
    return source, events


def _unread_categories(path: str | os.PathLike[str]) -> tuple[tuple[str, int], ...]:
    """(category, count) of the trace's complete events of categories the plugin does not read."""
    _, categories = read_trace(path, _unread_category, _typed_categories())
    counts: dict[str, int] = {}
    for category in categories:
        counts[category] = counts.get(category, 0) + 1
    return tuple(sorted(counts.items(), key=lambda item: -item[1]))


# Categories of CUDA and CPU profiles that the plugin does not read and that are no device's work.
_ANCILLARY = frozenset(("gpu_user_annotation", "ac2g", "trace", "overhead", "cpu_instant_event", "fwdbwd", "flow"))


@functools.cache
def _typed_categories() -> TypedReader[str] | None:
    """msgspec's reader for ``_unread_category``, or None without the ``[fast]`` extra: a trace of
    no GPU record (a gzip of spaces, say) is read again without a decoded copy of its text."""
    try:
        import msgspec
    except ImportError:
        return None
    event = msgspec.defstruct(
        "CategoryEvent", [("ph", str | None, None), ("cat", str | None, None), ("dur", float, 0.0)], gc=False
    )
    decoder = msgspec.json.Decoder(list[event])  # type: ignore[valid-type]  # a class made at run time
    return TypedReader(decoder.decode, (msgspec.DecodeError, RecursionError), _typed_unread_categories)


def _typed_unread_categories(batch: list[Any], out: list[str]) -> bool:
    """``_unread_category`` of each record; False where the general reader would raise (a negative
    duration of an event it keeps)."""
    for ev in batch:
        category = _unread_category({"ph": ev.ph, "cat": ev.cat})
        if category is not None:
            if not ev.dur >= 0:
                return False
            out.append(category)
    return True


def _unread_category(ev: dict[str, Any]) -> str | None:
    cat = ev.get("cat")
    if ev.get("ph") != "X" or type(cat) is not str or cat.lower() in _ANCILLARY:
        return None
    known = CATEGORIES.get(cat) or CATEGORIES.get(cat.lower(), IGNORED)
    if known != IGNORED:
        return None
    # Named in a message, the file's text: one printable line (a "\n::error::" would be a CI
    # command), and not a megabyte of it.
    return printable(cat if len(cat) <= _CATEGORY_CHARS else cat[:_CATEGORY_CHARS] + "...")


_CATEGORY_CHARS = 40


def chrome_source(trace: Mapping[str, Any], label: str) -> Source:
    """Device facts from a Chrome trace's ``deviceProperties``, and what kernelprof saved in it."""
    __tracebackhide__ = hide_trace_errors
    props = trace.get("deviceProperties")
    device = arch = None
    if isinstance(props, list) and props and isinstance(props[0], Mapping):
        name = props[0].get("name")
        device = printable(name) if isinstance(name, str) else None  # shown at the start of lines
        major, minor = props[0].get("computeMajor"), props[0].get("computeMinor")
        if isinstance(major, int) and isinstance(minor, int):
            arch = arch_name(major, minor)
    section = kernelprof_section(trace, label)
    return Source(
        label=label,
        device=device,
        arch=arch,
        gpu_requested=True,
        triton_kernels=_triton_kernels(section, label),
        triton_ir=_triton_ir(section, label),
    )
