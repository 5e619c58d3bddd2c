"""Runtime calls -> host syncs, with the ranges and the user's Python frames around each;
and the GPU busy time of a call."""

from __future__ import annotations

import itertools
import operator
from collections import defaultdict
from collections.abc import Sequence

from ..decode.sync_calls import FlaggedSync, assign_lines, sync_kind, user_frames
from ..model import CallProfile, Sync, SyncList
from ..model.profiles import fastest_of
from ..traces import MEMCPY, RawEvent
from .optree import bounded_chain
from .steps import Step


def host_syncs(step: Step, stacks: bool, flagged: Sequence[FlaggedSync], maybe: set[str]) -> list[Sync]:
    """The runtime calls of a step in which the host waits for the GPU, in time order.

    ``maybe``: the names of the step's runtime calls that may sync. Most names (kernel
    launches) never sync whatever their memcpy, so only those calls are looked at one by one.
    """
    if not maybe:
        return []
    memcpy_by_corr = {g.correlation: g.name for _, g in step.gpu if g.category == MEMCPY}
    found: list[tuple[RawEvent, str]] = []
    for r in sorted((r for r in step.runtime if r.name in maybe), key=lambda e: e.start):
        kind = sync_kind(r.name, memcpy_by_corr.get(r.correlation))
        if kind is not None:
            found.append((r, kind))
    if not found:
        return []
    calls = [r for r, _ in found]
    chains = [tuple(o.name for o in chain) for chain in _enclosing(step.ops, calls)]
    frames = user_stacks(step, calls) if stacks else None
    lines: dict[int, str | None] = {}
    if flagged and frames is not None:
        stream = [i for i, (_, kind) in enumerate(found) if kind == "stream"]
        for i, line in zip(stream, assign_lines([frames[i] for i in stream], flagged), strict=True):
            lines[i] = line
        # A blocking copy to pageable memory is a "copy" then a "stream" sync in one op, and
        # torch warns once for the pair: the copy shares the stream sync's line.
        by_op = {found[i][0].linked: line for i, line in lines.items() if line and found[i][0].linked}
        for i, (r, kind) in enumerate(found):
            if kind == "copy" and r.linked in by_op:
                lines[i] = by_op[r.linked]
    return [
        Sync(
            call=r.name,
            kind=kind,
            op=chains[i][-1] if chains[i] else None,
            ops=chains[i],
            duration_us=(r.end - r.start) / 1000.0,
            start_us=(r.start - step.start) / 1000.0,
            memcpy=memcpy_by_corr.get(r.correlation) if kind == "copy" else None,
            stack=frames[i] if frames is not None else None,
            line=lines.get(i),
        )
        for i, (r, kind) in enumerate(found)
    ]


def _enclosing(ranges: Sequence[RawEvent], points: Sequence[RawEvent | None]) -> list[tuple[RawEvent, ...]]:
    """For each point (a runtime call), the ranges on its thread open at its start, outermost first.

    One sweep per thread: a range encloses a point when it began at or before the point
    and had not ended. By start alone, so that a call a clock tick longer than its op
    still counts as inside it. None points get no ranges.
    """
    by_thread: dict[int, list[RawEvent]] = defaultdict(list)
    for r in ranges:
        by_thread[r.thread].append(r)
    result: list[tuple[RawEvent, ...]] = [()] * len(points)
    located = sorted((p.thread, p.start, i) for i, p in enumerate(points) if p is not None)
    for thread, group in itertools.groupby(located, key=lambda t: t[0]):
        thread_ranges = sorted(by_thread.get(thread, ()), key=lambda e: (e.start, -e.end))
        open_ranges: list[RawEvent] = []
        next_range = 0
        for _, start, i in group:
            while next_range < len(thread_ranges) and thread_ranges[next_range].start <= start:
                r = thread_ranges[next_range]
                next_range += 1
                while open_ranges and open_ranges[-1].end <= r.start:
                    open_ranges.pop()
                open_ranges.append(r)
            while open_ranges and open_ranges[-1].end <= start:
                open_ranges.pop()
            result[i] = bounded_chain(open_ranges)
    return result


def user_stacks(step: Step, points: Sequence[RawEvent | None]) -> list[tuple[str, ...] | None]:
    """The user's Python frames around each runtime call (None for a record without one)."""
    kept: dict[tuple[str, ...], tuple[str, ...]] = {}
    out: list[tuple[str, ...] | None] = []
    for point, chain in zip(points, _enclosing(step.python, points), strict=True):
        if point is None:
            out.append(None)
            continue
        names = tuple(f.name for f in chain)
        frames = kept.get(names)
        if frames is None:
            frames = kept[names] = user_frames(names)
        out.append(frames)
    return out


_START = operator.attrgetter("start")


def busy_ns(step: Step, records: list[RawEvent]) -> int:
    """The union of the step's GPU records (``records``, in launch order), clipped to the step's
    host span: the span less its idle stretches (:func:`idle_ns`), so the two always agree."""
    return step.end - step.start - sum(end - start for start, end in idle_ns(step, records))


def idle_ns(step: Step, records: list[RawEvent]) -> list[tuple[int, int]]:
    """The stretches of the step's host span when none of its GPU records ran, in order: before
    the first record starts, between records, and after the last one ends."""
    gaps: list[tuple[int, int]] = []
    covered, last = step.start, step.end
    for g in _in_start_order(records):
        if g.start >= last:
            break
        if g.start > covered:
            gaps.append((covered, g.start))
        if g.end > covered:
            covered = min(g.end, last)
    if covered < last:
        gaps.append((covered, last))
    return gaps


def work_ns(records: list[RawEvent]) -> int:
    """The union of a step's GPU records, wherever they ran: work launched late in a call runs
    on after the host has returned, which :func:`busy_ns` leaves out."""
    busy = 0
    covered: int | None = None
    for g in _in_start_order(records):
        start = g.start if covered is None or g.start > covered else covered
        if g.end > start:
            busy += g.end - start
            covered = g.end
    return busy


def _in_start_order(records: list[RawEvent]) -> list[RawEvent]:
    """``records`` (in launch order) by start. Launch order is nearly always start order too:
    one pass then, and a sort (of a copy) only where a record started before an earlier one
    (several streams)."""
    previous = -1
    for g in records:
        if g.start < previous:
            return sorted(records, key=_START)
        previous = g.start
    return records


def representative_syncs(calls: Sequence[CallProfile], unavailable: str | None) -> SyncList:
    """The syncs of the representative call (see ``KernelProfile.syncs``): where the calls
    synced alike, the fastest call's own (by host span, ``KernelProfile.fastest_call``), so that
    their host times are that call's, as ``kernelprof show``, the profile's table and the
    timeline page give them; where they did not, the call with the most syncs."""
    if unavailable is not None:
        return SyncList(unavailable=unavailable)
    shapes = {tuple((s.call, s.kind, s.ops) for s in c.syncs) for c in calls}
    if len(shapes) > 1:
        return max((c.syncs for c in calls), key=len)
    return fastest_of(calls).syncs
