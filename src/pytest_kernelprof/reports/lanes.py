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

from ..assemble.optree import is_graph_call
from ..errors import KernelProfError
from ..tables import plural
from ..traces import ANNOTATION, MEMCPY, MEMSET, OP, RUNTIME, STEP_PREFIX
from ..traces.chrome import read_chrome_trace

DEPTH = 4
THREADS = 2
REFERENCE_PX = 2000
MAX_BARS = 3000
_MERGED_NAMES = 3  # the names a merged bar's tip lists
LANE_KEYS = ("rows", "deeper", "threads", "merged", "capped")  # what the page has of op_rows, in this order
LAUNCH_PREFIXES = ("cudaLaunch", "cuLaunch", "cudaGraphLaunch", "cuGraphLaunch")


def host_records(trace: str | os.PathLike[str]) -> list[dict[str, list[list[Any]]]]:
    """Per call (ProfilerStep#N, in order; the whole trace where it has none): the kernel
    launches ``[start_us, dur_us]``, the memcpys and memsets (``"copies"``)
    ``[start_us, dur_us, stream, name]`` and the CPU ops, the op table's (``"ops"``)
    ``[start_us, end_us, thread, name]``, times from the start of the call as ``Kernel.start_us`` counts them.
    Read as ``load_trace`` reads (its reader, size cap and gzip), in time linear in the events."""
    try:
        _, events = read_chrome_trace(trace)
    except (KernelProfError, OSError, ValueError):
        return []
    steps = sorted(
        (e.start / 1000, e.end / 1000) for e in events if e.category == ANNOTATION and e.name.startswith(STEP_PREFIX)
    )
    if not steps:
        host = [e.start / 1000 for e in events if e.category in (OP, ANNOTATION, RUNTIME)]
        if not host:
            return []
        steps = [(min(host), float("inf"))]
    starts = [start for start, _ in steps]
    last = len(steps) - 1
    calls: list[dict[str, list[list[Any]]]] = [{"launches": [], "copies": [], "ops": []} for _ in steps]
    for e in events:
        launch = e.category == RUNTIME and e.name.startswith(LAUNCH_PREFIXES)
        # The ops a step holds (sort_events): its ops and user ranges that start in it, but the step's own.
        op = e.category == OP or (e.category == ANNOTATION and not e.name.startswith(STEP_PREFIX))
        # Memsets too: GPU work the idle share counts, so the page draws what its shading leaves out.
        if not launch and not op and e.category not in (MEMCPY, MEMSET):
            continue
        ts, dur = e.start / 1000, round((e.end - e.start) / 1000, 3)
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
            calls[index]["ops"].append([round(ts - start, 3), round(e.end / 1000 - start, 3), e.thread, e.name])
        elif launch:
            calls[index]["launches"].append([round(ts - start, 3), dur])
        else:
            calls[index]["copies"].append([round(ts - start, 3), dur, e.stream, e.name])
    return calls


def op_rows(ops: Sequence[Sequence[Any]], view_us: float, inductors: Container[str]) -> dict[str, Any]:
    """``ops``: the call's ``[start_us, end_us, thread, name]``, in any order; ``view_us``: the
    time the page opens on; ``inductors``: the names of Inductor's own ranges. The bars
    ``[start_us, dur_us, row, name, ops]`` (``ops`` > 1: a merged bar, ``name`` its tip), the
    row count and what was left out (``deeper``, ``threads``: ops not drawn; ``merged``: ops in
    merged bars; ``capped``: bars past ``MAX_BARS``)."""
    ordered = sorted(ops, key=lambda op: (op[2], op[0], -op[1]))
    by_thread: dict[Any, list[tuple[float, float, int, str]]] = {}
    deeper = 0
    stack: list[tuple[float, str, bool]] = []  # (end, name, drawn) of the open ops of the thread
    open_names: dict[str, int] = {}
    drawn_open, thread = 0, None
    for start, end, tid, name in ordered:
        if tid != thread:
            thread, stack, open_names, drawn_open = tid, [], {}, 0
        while stack and stack[-1][0] < end:  # as op_forest: an op ending before this one is no parent
            _, gone, was_drawn = stack.pop()
            open_names[gone] -= 1
            drawn_open -= was_drawn
        drawn = not open_names.get(name) and name not in inductors and not is_graph_call(name)
        if drawn:
            if drawn_open < DEPTH:
                by_thread.setdefault(tid, []).append((start, end, drawn_open, name))
            else:
                deeper += 1
        stack.append((end, name, drawn))
        open_names[name] = open_names.get(name, 0) + 1
        drawn_open += drawn
    # Threads share rows where their ops did not overlap in time (the autograd thread's backward
    # after the main thread's forward); one that ran alongside a set gets the next set of rows.
    sets: list[float] = []  # the end of each set's last thread
    rows: list[list[tuple[float, float, str]]] = []
    left_threads = 0
    for found in sorted(by_thread.values(), key=lambda t: t[0][0]):
        first, last = found[0][0], max(op[1] for op in found)
        slot = next((i for i, end in enumerate(sets) if end <= first), len(sets))
        if slot >= THREADS:
            left_threads += len(found)
            continue
        if slot == len(sets):
            sets.append(last)
        sets[slot] = max(sets[slot], last)
        for start, end, depth, name in found:
            row = slot * DEPTH + depth
            while len(rows) <= row:
                rows.append([])
            rows[row].append((start, end, name))
    pixel = view_us / REFERENCE_PX
    bars: list[list[Any]] = []
    for number, row_ops in enumerate(rows):
        row_ops.sort()
        group: list[tuple[float, float, str]] = []
        group_end = 0.0
        for op in row_ops:
            if op[1] - op[0] >= pixel:
                _close(group, number, bars)
                group = []
                bars.append([op[0], round(op[1] - op[0], 3), number, op[2], 1])
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
    return {
        "bars": bars,
        "rows": len(rows),
        "deeper": deeper,
        "threads": left_threads,
        "merged": merged,
        "capped": capped,
    }


def _close(group: list[tuple[float, float, str]], row: int, bars: list[list[Any]]) -> None:
    """The bar of a run of ops each shorter than a pixel: the op itself where it is one."""
    if not group:
        return
    start, end = group[0][0], max(op[1] for op in group)
    if len(group) == 1:
        bars.append([start, round(end - start, 3), row, group[0][2], 1])
        return
    names = list(dict.fromkeys(op[2] for op in group))
    listed = ", ".join(names[:_MERGED_NAMES]) + (", ..." if len(names) > _MERGED_NAMES else "")
    tip = f"{plural(len(group), 'op')}, each shorter than a pixel at the opening zoom, merged: {listed}"
    bars.append([start, round(end - start, 3), row, tip, len(group)])
