"""What the timeline page reads from the trace file, for its lanes: the host's launches, the
memcpys' and memsets' GPU times and the CPU ops' times, none of which the profile model has
(:func:`host_records`); and the ops rows, one call's CPU ops laid out as a flame chart, bounded
in size (:func:`op_rows`).

The ops are the op table's: the call's ``cpu_op`` and ``user_annotation`` ranges (its
``ProfilerStep#N`` left out), nested on their thread as the op forest nests them (by start, the
longer first; an op inside one that ends before it is a sibling), each occurrence the op table
counts drawn once: an op inside an op of its name is part of that one (ATen's ``aten::sum``
calling ``aten::sum``), and Inductor's own ranges (``is_inductors_range``) are left out, as the
op table leaves them out, so that the rows name what the table names. Their ops move up into their
place: a compiled region's ``## Call CompiledFxGraph <hash> ##`` would take a row that says only
"compiled code ran here" (the ``Torch-Compiled Region`` around it says that, and is kept), and
its one-kernel launch ranges would repeat the host lane's launches under kernel names.

Bounded: ``DEPTH`` rows per thread (deeper ops are counted, not drawn); threads whose ops ran at
the same time as another's get rows of their own, at most ``THREADS`` sets; ops shorter than a
pixel of a ``REFERENCE_PX`` wide timeline at the opening zoom are merged with their short
neighbours on the row into one bar; at most ``MAX_BARS`` bars a call, the longest kept. The page
says what was left out, with the counts here.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Container, Sequence
from typing import Any

from ..assemble.optree import is_graph_call, ops_by_thread
from ..errors import KernelProfError
from ..tables import plural
from ..traces import ANNOTATION, MEMCPY, MEMSET, OP, RUNTIME, STEP_PREFIX, RawEvent
from ..traces.chrome import read_chrome_trace

DEPTH = 4
THREADS = 2
REFERENCE_PX = 2000
MAX_BARS = 3000
_MERGED_NAMES = 3  # the names a merged bar's tip lists
LANE_KEYS = ("rows", "deeper", "threads", "merged", "capped")  # what the page has of op_rows, in this order
LAUNCH_PREFIXES = ("cudaLaunch", "cuLaunch", "cudaGraphLaunch", "cuGraphLaunch")


def host_records(trace: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Per call (ProfilerStep#N, in order; the whole trace where it has none): the kernel
    launches ``[start_us, dur_us]`` and the memcpys and memsets (``"copies"``)
    ``[start_us, dur_us, stream, name]``, times from the start of the call as ``Kernel.start_us``
    counts them; and the CPU ops, the op table's (``"ops"``, events, for :func:`op_rows`), with the
    call's start (``"origin_ns"``). Read as ``load_trace`` reads (its reader, size cap and gzip), in
    time linear in the events."""
    try:
        _, events = read_chrome_trace(trace)
    except (KernelProfError, OSError, ValueError):
        return []
    found = sorted((e.start, e.end) for e in events if e.category == ANNOTATION and e.name.startswith(STEP_PREFIX))
    steps = [(start / 1000, end / 1000) for start, end in found]
    if not steps:
        host = [e.start for e in events if e.category in (OP, ANNOTATION, RUNTIME)]
        if not host:
            return []
        found, steps = [(min(host), 0)], [(min(host) / 1000, float("inf"))]
    starts = [start for start, _ in steps]
    last = len(steps) - 1
    calls: list[dict[str, Any]] = [
        {"launches": [], "copies": [], "ops": [], "origin_ns": origin} for origin, _ in found
    ]
    for e in events:
        category = e.category
        launch = category == RUNTIME and e.name.startswith(LAUNCH_PREFIXES)
        # The ops a step holds (sort_events): its ops and user ranges that start in it, but the step's own.
        op = category == OP or (category == ANNOTATION and not e.name.startswith(STEP_PREFIX))
        # Memsets too: GPU work the idle share counts, so the page draws what its shading leaves out.
        if not launch and not op and category not in (MEMCPY, MEMSET):
            continue
        ts = e.start / 1000
        # The first call (in start order) whose range holds ts: the one that starts last at or
        # before ts, or the one before it where the two ranges meet at ts.
        index = bisect.bisect_right(starts, ts) - 1
        if index > 0 and ts <= steps[index - 1][1]:
            index -= 1
        if index < 0:
            continue
        start, end = steps[index]
        if not ts <= end and not (not launch and not op and index == last and ts > start):
            continue
        if op:
            calls[index]["ops"].append(e)
        elif launch:
            calls[index]["launches"].append([round(ts - start, 3), round((e.end - e.start) / 1000, 3)])
        else:
            calls[index]["copies"].append([round(ts - start, 3), round((e.end - e.start) / 1000, 3), e.stream, e.name])
    return calls


def op_rows(ops: Sequence[RawEvent], origin_ns: int, view_us: float, inductors: Container[str]) -> dict[str, Any]:
    """``ops``: the call's op events, in any order, ``origin_ns`` its start; ``view_us``: the
    time the page opens on; ``inductors``: the names of Inductor's own ranges. The bars
    ``[start_us, dur_us, row, name, ops]``, times from the call's start (``ops`` > 1: a merged bar,
    ``name`` its tip), the row count and what was left out (``deeper``, ``threads``: ops not drawn;
    ``merged``: ops in merged bars; ``capped``: bars past ``MAX_BARS``)."""
    by_thread: list[list[tuple[int, int, int, str]]] = []
    deeper = 0
    for thread_events in ops_by_thread(ops):
        found: list[tuple[int, int, int, str]] = []
        stack: list[tuple[int, str, bool]] = []  # (end, name, drawn) of the thread's open ops
        open_names: dict[str, int] = {}
        drawn_open = 0
        for e in thread_events:
            end, name = e.end, e.name
            while stack and stack[-1][0] < end:  # as op_forest: an op ending before this one is no parent
                _, gone, was_drawn = stack.pop()
                open_names[gone] -= 1
                drawn_open -= was_drawn
            drawn = not open_names.get(name) and name not in inductors and not is_graph_call(name)
            if drawn:
                if drawn_open < DEPTH:
                    found.append((e.start, end, drawn_open, name))
                else:
                    deeper += 1
            stack.append((end, name, drawn))
            open_names[name] = open_names.get(name, 0) + 1
            drawn_open += drawn
        if found:
            by_thread.append(found)
    # Threads share rows where their outermost ops did not overlap in time (the autograd thread's
    # backward between the main thread's forward and its optimizer step); a thread whose ops ran
    # alongside a set's gets the next set of rows.
    sets: list[list[tuple[int, int]]] = []  # each set's outermost ops, by start
    rows: list[list[tuple[int, int, str]]] = []
    left_threads = 0
    for found in sorted(by_thread, key=lambda t: t[0][0]):
        roots = [(op[0], op[1]) for op in found if op[2] == 0]  # by start: the thread's order
        slot = next((i for i, taken in enumerate(sets) if not _overlap(taken, roots)), len(sets))
        if slot >= THREADS:
            left_threads += len(found)
            continue
        if slot == len(sets):
            sets.append([])
        sets[slot] = sorted(sets[slot] + roots)
        for start, end, depth, name in found:
            row = slot * DEPTH + depth
            while len(rows) <= row:
                rows.append([])
            rows[row].append((start, end, name))
    pixel = view_us * 1000 / REFERENCE_PX
    bars: list[list[Any]] = []
    for number, row_ops in enumerate(rows):
        row_ops.sort()
        group: list[tuple[int, int, str]] = []
        group_end = 0
        for op in row_ops:
            if op[1] - op[0] >= pixel:
                _close(group, number, bars)
                group = []
                bars.append([op[0], op[1] - op[0], number, op[2], 1])
                continue
            if group and op[0] - group_end > pixel:
                _close(group, number, bars)
                group = []
            group.append(op)
            group_end = max(group_end, op[1]) if len(group) > 1 else op[1]
        _close(group, number, bars)
    merged = sum(bar[4] for bar in bars if bar[4] > 1)
    capped = max(len(bars) - MAX_BARS, 0)
    if capped:
        bars = sorted(sorted(bars, key=lambda bar: -bar[1])[:MAX_BARS])
    for bar in bars:  # in microseconds from the call's start, as the page's other times
        bar[0], bar[1] = round((bar[0] - origin_ns) / 1000, 3), round(bar[1] / 1000, 3)
    return {
        "bars": bars,
        "rows": len(rows),
        "deeper": deeper,
        "threads": left_threads,
        "merged": merged,
        "capped": capped,
    }


def _overlap(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]) -> bool:
    """Whether two lists of ranges, each by start and not overlapping within itself, overlap."""
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i][1] <= b[j][0]:
            i += 1
        elif b[j][1] <= a[i][0]:
            j += 1
        else:
            return True
    return False


def _close(group: list[tuple[int, int, str]], row: int, bars: list[list[Any]]) -> None:
    """The bar of a run of ops each shorter than a pixel: the op itself where it is one."""
    if not group:
        return
    start, end = group[0][0], max(op[1] for op in group)
    if len(group) == 1:
        bars.append([start, end - start, row, group[0][2], 1])
        return
    names = list(dict.fromkeys(op[2] for op in group))
    listed = ", ".join(names[:_MERGED_NAMES]) + (", ..." if len(names) > _MERGED_NAMES else "")
    tip = f"{plural(len(group), 'op')}, each shorter than a pixel at the opening zoom, merged: {listed}"
    bars.append([start, end - start, row, tip, len(group)])
