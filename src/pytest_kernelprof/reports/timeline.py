"""A self-contained HTML page of a profile: a kernel timeline, the kernel and op tables.

One file, no network: the data is a JSON block in the page and the drawing is a few KB of
plain JavaScript that makes one SVG ``rect`` per kernel (the page around the data, script
included, is ``timeline.html``, package data). Lanes: the host (kernel launches, host
syncs, the host span marked) and one per CUDA stream (kernels coloured by kind, memcpys and
memsets with DtoH copies marked, the GPU's idle time shaded: exactly the stretches of the
host span that the call's idle share counts, ``CallProfile.gpu_idle_spans``, the wait for
the first kernel included; work after the host span's end is no idle time; a few short lines
under the timeline say so, with the figures). Hover shows a kernel's name, op, module (in a
trace with modules) and duration; the wheel zooms, dragging pans. The page opens on the
fastest call by host span (:func:`shown_call`: the first call carries the profiler's start-up).
After drawing, the script writes what it drew into the body's ``data-drawn`` attribute (counts
per lane, milliseconds taken), which the tests read back from a headless browser; the page
shows none of it.
A profile without GPU activity (a CPU run) says so, in its heading and in each GPU section
("not measured"): "0 kernels" or "none" there would read as measured idleness; its op table is
by CPU time, without the device column.

Every value goes into the page once (:func:`fill`: one pass over the template, so a value is
never searched for placeholders) and escaped for where it lands: HTML text and attributes by
``html.escape``, the JSON data block with ``<``, ``>``, ``&`` and the line separators as
``\\u`` escapes, so that no name in a trace can end the script or start markup.

What the profile model has is read through its public attributes. The host's launch times
and the memcpys' and memsets' GPU times are not in the model: they are read from the Chrome
trace the profile came from, where there is one (``kernelprof show TRACE --html``, the pages beside a
failing test's traces), through the trace reader and its size cap; without it the host lane
has the syncs only.

For a test that failed on its kernel baseline, the page also has the stored baseline and
the run side by side (:func:`baseline_table`), aligned by the diff ``kernelprof diff`` prints,
with the lines it tells above its kernels (count and dtype changes, ``fused:``) and each
kernel a fusion took over marked as fused into its kernel,
each kernel in the words of its line there.
"""

from __future__ import annotations

import functools
import html
import json
import os
import re
from collections.abc import Callable, Container, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..assemble.optree import is_inductors_range
from ..checks.diff import change_details, describe_kernel, diff_kernels, render_diff, summary_lines, unknown_dtype_note
from ..errors import KernelProfError
from ..model import CallProfile, KernelProfile
from ..model.gpu_time import call_line, inductor_dtype_note, memory_ops_line
from ..model.kernel_text import evidence_key
from ..model.kernels import kernel_cells
from ..model.ops import Op
from ..model.records import COPY_COLUMNS, SYNC_COLUMNS, advice, copy_cells, sync_cells
from ..paths import atomic_path
from ..tables import display_name, format_share, format_us, plural
from ..traces.records import paused_gc
from .lanes import DEPTH, LANE_KEYS, MAX_BARS, host_records, op_rows
from .summary import relative_paths

# What the page's GPU sections say where the profile has no GPU activity (the template's NM too).
NOT_MEASURED = "not measured: no GPU activity in this profile"
TABLE_ROWS = 500  # kernel table rows drawn at first; a button draws the rest


def shown_call(prof: KernelProfile) -> int:
    """The call the page opens on: ``prof.fastest_call``, whose figures ``kernelprof show`` and
    the profile's table print."""
    fastest = prof.fastest_call
    return next((i for i, call in enumerate(prof.calls) if call is fastest), 0)


def _data(
    prof: KernelProfile, title: str, host: Sequence[Mapping[str, Any]], inductors: Container[str] = frozenset()
) -> dict[str, Any]:
    strings: dict[str, int] = {}

    def ref(text: str | None) -> int:
        if text is None:
            return -1
        return strings.setdefault(text, len(strings))

    calls = []
    for number, call in enumerate(prof.calls):
        try:
            kernels = list(call.kernels)
        except KernelProfError:
            kernels = []
        rows = []
        for k in kernels:
            rows.append(
                [
                    round(k.start_us or 0.0, 3),
                    round(k.duration_us, 3),
                    -1 if k.stream is None else k.stream,
                    ref(k.kind),
                    ref(k.family),
                    ref(k.name),
                    ref(k.op),
                    ref(k.module),
                    ref(display_name(k.name)),  # as every output shows it; the whole name is the cell's title
                    *(ref(cell) for cell in kernel_cells(k)),  # the columns of every kernel table
                    ref(k.part_of),  # a column of its own where a call has a helper kernel, as kernel_table's
                ]
            )
        try:
            syncs = [[round(s.start_us, 3), round(s.duration_us, 3), s.kind, s.call, s.op, s.where] for s in call.syncs]
            sync_rows = [sync_cells(s) for s in call.syncs]  # the tables of kernelprof show, cell for cell
            copy_rows = [copy_cells(m) for m in call.copies]
        except KernelProfError:
            syncs, sync_rows, copy_rows = [], [], []
        extra = host[number] if number < len(host) and len(host) == len(prof.calls) else {}
        ops, origin = extra.get("ops", ()), extra.get("origin_ns", 0)
        ends = [
            call.wall_us,
            *(row[0] + row[1] for row in rows),
            (max((e.end for e in ops), default=0) - origin) / 1000,
        ]
        lane = op_rows(ops, origin, max(ends) * 1.02, inductors)  # 1.02: the page's opening view
        try:  # the shading: the idle stretches the call's GPU idle share counts, as the model has them
            idle = [[round(start, 3), round(end - start, 3)] for start, end in call.gpu_idle_spans]
            share = format_share(call.gpu_idle_fraction)  # the text outputs' words: ">99%", never "100%" of work
        except KernelProfError:
            idle, share = [], ""
        calls.append(
            {
                "figures": _figures(call),
                "wall": round(call.wall_us, 3),
                "idle": idle,
                "idle_share": share,
                "kernels": rows,
                "syncs": syncs,
                "sync_rows": sync_rows,
                "copy_rows": copy_rows,  # the copies table's; "copies" are what the lanes draw
                "launches": extra.get("launches", []),
                "copies": extra.get("copies", []),
                "host": bool(extra),
                "ops": [[*bar[:3], ref(bar[3]), bar[4]] for bar in lane.pop("bars")],
                "op_lane": [lane[key] for key in LANE_KEYS],  # a list: a dict's keys, 20,000 calls over, were 1.4 MB
            }
        )
    # The time columns, one call's own: headed with the call's number, as kernelprof show heads them.
    own = [SYNC_COLUMNS[3], COPY_COLUMNS[3]]
    columns = {"sync_columns": SYNC_COLUMNS, "copy_columns": COPY_COLUMNS, "call_columns": own}
    # Without GPU records the GPU sections say "not measured", never "0 kernels" or "none".
    measured = prof.has_device_activity
    limits = {"op_depth": DEPTH, "op_bars": MAX_BARS}
    # Under the figures, the lines show prints under its table: what an evidence mark means (the
    # page's table has the marks), why a dtype reads ?.
    kernels = list(prof.call.kernels) if measured else []
    notes = [note for note in (evidence_key(kernels), inductor_dtype_note(kernels)) if note]
    # The kernel table's module column and the tip's module line, where any kernel of any call
    # has a module. Per profile, not per call: a module is there where the trace was recorded
    # with modules=True (most traces are not: a trial found the column all "-"), which is the
    # whole trace's; in such a trace a call whose kernels ran outside every module keeps the
    # column, its "-" cells saying so, and the columns stay put as the picker switches calls.
    modules = any(row[7] >= 0 for call in calls for row in call["kernels"])
    return {
        "title": title,
        "strings": list(strings),
        "calls": calls,
        "measured": measured,
        "modules": modules,
        "kernel_notes": notes,
        **columns,
        **limits,
    }


def _figures(call: CallProfile) -> list[str]:
    """The lines ``kernelprof show`` gives a call, in its words: launches, time in kernels, host
    span, GPU busy and work (:func:`call_line`) and the host syncs, then the memory ops by name,
    then the ``to fix:`` lines of its syncs and copies (a trial found the page without the figures
    and the memsets its timeline marks; another, a failed test's page without the count of syncs
    and the fixes that show prints)."""
    try:
        line = call_line(call)
    except KernelProfError:  # no GPU activity: the one figure a CPU profile has, as show words it
        return [f"host span {format_us(call.wall_us)}us; no GPU activity recorded"]
    syncs = call.syncs
    if syncs.measured:
        line += f", {plural(len(syncs), 'host sync')}" if syncs else ", no host syncs"
    return [line, memory_ops_line(call, call=call.index), *advice(syncs if syncs.measured else (), call.copies)]


def _op_table(prof: KernelProfile, number: int, inductors: Container[str]) -> str:
    """The op table of call ``number``, the one the page opens on: one call's ops, where the
    profile's own (medians over every call) cost an op tree per call, seconds on a long trace.
    By device time; a profile without GPU activity by CPU time, without the device column, whose
    cells would all read "-" (its heading says so, as the page's GPU sections say "not measured")."""
    measured = prof.has_device_activity
    order = "device time" if measured else "CPU time"
    unmeasured = "" if measured else f"; device time {NOT_MEASURED}"
    heading = f"<h2>Ops of call {number} (by {order}, the ops inside each op included{unmeasured})</h2>"
    rows = []
    try:
        ops = prof.calls[number].ops if prof.calls else prof.ops
        names = sorted(
            (name for name in ops.names if name not in inductors),
            key=lambda name: -(_time(ops[name], measured) or 0.0),
        )
    except KernelProfError:
        return heading + "<p>no op table</p>"
    for name in names[:300]:
        op = ops[name]
        cells = [html.escape(name), str(op.count), f"{op.cpu_time_us:.1f}"]
        if measured:
            cells.append("-" if op.subtree_device_us is None else f"{op.subtree_device_us:.1f}")
        rows.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>")
    more = f"<p>... and {len(names) - 300} more ops</p>" if len(names) > 300 else ""
    headers = ["op", "count", *(ops.time_headers() if measured else ops.time_headers()[:1])]
    # Without GPU activity the note's words on device time tell of nothing measured.
    note = ops.times_note(device=measured)
    return (
        f"{heading}{_nesting_note(ops, names[:300], measured)}<table><thead><tr>"
        + "".join(f"<th>{header}</th>" for header in headers)
        + f"</tr></thead><tbody>{''.join(rows)}</tbody></table><p>{note}</p>{more}"
    )


def _inductors_ranges(prof: KernelProfile, number: int) -> frozenset[str]:
    """The names of Inductor's own ranges in call ``number``, which the op table and the ops rows
    leave out. Found on that call's ops (an op tree per call costs seconds on a long trace) and
    left out of every call by name: a launch range is named after its kernel, which each call
    launches alike (the ops rows tell a graph call by its name alone, in any call)."""
    try:
        ops = prof.calls[number].ops if prof.calls else prof.ops
        return frozenset(name for name in ops.names if is_inductors_range(ops[name]))
    except KernelProfError:
        return frozenset()


def _time(op: Op, measured: bool) -> float | None:
    """What the op table sorts by: an op's device time, or its CPU time where none was measured."""
    return op.subtree_device_us if measured else op.cpu_time_us


def _nested_pair(ops: Any, names: Sequence[str], measured: bool) -> tuple[str, str] | None:
    """The first of the table's top rows that holds another row with time (device time where
    measured), and that row, the nearest one inside it."""
    timed = {name for name in names if _time(ops[name], measured)}
    for name in names[:20]:
        seen, todo = {name}, list(ops[name].child_names)
        while todo:
            inner = todo.pop(0)
            if inner in seen or inner not in ops:
                continue
            if inner in timed:
                return name, inner
            seen.add(inner)
            todo.extend(ops[inner].child_names)
    return None


def _nesting_note(ops: Any, names: Sequence[str], measured: bool) -> str:
    """The op table is flat: an op and the ops inside it are rows alike (a compiled region's
    224.4us held its aten::mm's 168.9us), so a reader who added the column counted time twice."""
    pair = _nested_pair(ops, names, measured)
    example = "" if pair is None else f" ({html.escape(pair[0])} holds {html.escape(pair[1])})"
    return (
        f"<p>Each op's time includes the ops inside it{example}: "
        "an op and the ops inside it are rows alike, and the column does not add up.</p>"
    )


# The side-by-side table's row colours, told above it (those it has): (class, what a row of it is).
SIDE_LEGEND = (
    ("same", "the same kernel"),
    ("chg", "the same kind of kernel, another name or dtype"),
    ("del", "only in the baseline"),
    ("add", "only in this run"),
    ("fus", "fused into a kernel of this run"),
    ("spl", "split into kernels of this run"),
)


def baseline_table(stored: Sequence[Any], current: Sequence[Any], headline: Sequence[str] = ()) -> str:
    """The stored baseline's kernels and the run's side by side, aligned by their diff;
    each a ``KernelName`` (``BaselineKernel`` or ``Kernel``). The diff is the one the text
    diff renders (:func:`diff_kernels`), so the page tells what it tells: its count and dtype
    lines (:func:`summary_lines`), its ``fused:`` and ``split:`` lines and its unknown-dtype note above the
    table, a kernel a fusion took over as fused into the run's
    kernel, not as removed or renamed, and each kernel in the words of its line there (kind,
    family, dtype, layout, fused ops, name: ``pointwise/aten bf16 [gelu]  at::native::...``).
    ``headline``: the baseline failure's first lines (``kernels per call: 4 -> 5 (launches too)``),
    told first, as the failure tells them."""

    def key(k: Any) -> str:
        return f"{k.kind}/{k.family} {display_name(k.name)}"

    def ops(kernels: Sequence[Any]) -> str:
        return " + ".join(",".join(k.fused_ops) or f"{k.family} {k.kind}" for k in kernels)

    diff = diff_kernels(stored, current, by=key)
    # Which removed kernel went into which added one, and back, by identity: two kernels of a
    # stored baseline may be equal as values.
    into = {id(k): fused for covered, fused in diff.fusions for k in covered}
    fusing = {id(fused): covered for covered, fused in diff.fusions}
    split = {id(whole): parts for parts, whole in diff.splits}
    splitting = {id(k): whole for parts, whole in diff.splits for k in parts}
    rows = []
    classes: set[str] = set()
    for change in diff.changes:
        x, y = change.before, change.after
        # The text diff's own words for a kernel, not a copy of them: a copy here drifted (the rows
        # lost the layout and the fused ops that `kernelprof diff` and a baseline failure print).
        cells = [html.escape(describe_kernel(k)) if k is not None else "" for k in (x, y)]
        if x is not None and y is not None:
            cls = "same" if change.mark == "=" else "chg"
            # What the text diff tells under the change's line (a dtype that moved, another op).
            cells[1] += "".join(
                f'<div class="why">{html.escape(line)}</div>'
                for line in change_details(change, "the baseline", "this run")
            )
        elif x is not None and id(x) in into:
            cls, cells[1] = "fus", f"<i>fused into {html.escape(display_name(into[id(x)].name))}</i>"
        elif x is not None and id(x) in split:
            cls, cells[1] = "spl", f"<i>split into {html.escape(ops(split[id(x)]))}</i>"
        elif x is not None:
            cls = "del"
        else:
            assert y is not None
            cls = "add"
            if id(y) in fusing:
                cells[0] = f"<i>fuses {html.escape(ops(fusing[id(y)]))}</i>"
            elif id(y) in splitting:
                cells[0] = f"<i>part of {html.escape(display_name(splitting[id(y)].name))}</i>"
        classes.add(cls)
        rows.append(f'<tr class="{cls}"><td>{cells[0]}</td><td>{cells[1]}</td></tr>')
    # Every line the text diff tells above its kernels, then its fused: and split: lines: a GEMM
    # gone fp32 is told by the dtype line alone (its row is one more yellow row).
    told = [*headline, *summary_lines(stored, current)]
    told += [line for line in render_diff(diff, "baseline", "this run") if line.startswith(("fused: ", "split: "))]
    told += unknown_dtype_note(
        stored, current, "the baseline", "this run"
    )  # last, as the text diff's note after its kernels
    lines = "".join(f"<div>{html.escape(line)}</div>" for line in told)
    legend = "".join(f'<span class="{cls}"><i></i>{what}</span>' for cls, what in SIDE_LEGEND if cls in classes)
    return (
        f'<div class="told">{lines}</div><div class="sidelegend">{legend}</div>'
        f'<table class="side"><thead><tr><th>baseline ({plural(len(stored), "kernel")})</th>'
        f"<th>this run ({plural(len(current), 'kernel')})</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def render_page(
    prof: KernelProfile,
    *,
    title: str,
    trace: str | os.PathLike[str] | None = None,
    baselines: Sequence[tuple[str, str]] = (),
    shown: Callable[[str], str] | None = None,
) -> str:
    """The page's HTML. ``trace``: the Chrome trace the profile came from (launches, memcpys, memsets);
    ``baselines``: (heading, side-by-side table HTML) sections, from :func:`baseline_table`.
    ``shown``: the profile's source (a trace's path) as the page names it; by default relative to
    the working folder where under it (``kernelprof show --html``), else whole. The plugin names
    paths relative to the rootdir, as a failure and the job summary do."""
    source = (shown or _from_here)(prof.source)
    # `kernelprof show TRACE --html` titles the page with the trace: the heading names it, once.
    same = source == title or os.path.abspath(title) == os.path.abspath(prof.source)
    sourced = "" if same else f"; source {source}"
    opened = shown_call(prof)
    inductors = _inductors_ranges(prof, opened)
    with paused_gc():  # many small lists, no cycle: the collector's passes cost more than making them
        host = host_records(trace) if trace is not None else []
        data = _data(prof, title, host, inductors)
    data["open"] = opened
    # Why the ops rows are empty, where they are: the op times are the trace's, not the model's.
    if trace is None:
        data["op_times"] = "the page was written without the trace file, which holds the ops' times"
    elif len(host) != len(prof.calls):
        data["op_times"] = "the ops' times could not be read from the trace file, or its calls are not the profile's"
    where = prof.device_label or "no GPU named"
    if prof.has_device_activity:
        head = f"{plural(len(prof.calls), 'call')} on {where}{sourced}"
    else:  # as kernelprof show says it: a CPU profile measured no GPU work, it did not see none done
        named = f" on {where}" if prof.device else ""
        head = f"{plural(len(prof.calls), 'call')}, CPU only (no GPU activity recorded{named}){sourced}"
    if len(prof.calls) > 1:
        head += f"; showing call {opened}, the fastest call by host span (pick another below)"
    side = "".join(f"<h2>{html.escape(h)}</h2>{table}" for h, table in baselines)
    return fill(
        _template(),
        TITLE=html.escape(title),
        HEAD=html.escape(head),
        BASELINE=side,
        OPS=_op_table(prof, opened, inductors),
        ROWS=str(TABLE_ROWS),
        DATA=script_json(data),
    )


# In a <script> block, "<!--", "<script" and "</script" change how the HTML parser reads on,
# and U+2028/2029 end a JavaScript line in older engines: none of them may appear as such.
_SCRIPT_ESCAPES = str.maketrans({char: f"\\u{ord(char):04x}" for char in "<>&\u2028\u2029"})


def fill(template: str, **values: str) -> str:
    """The template with each ``%NAME%`` replaced by its value, in one pass: a value that holds
    ``%DATA%`` stays as it is. Each value must already be escaped for where it lands."""
    names = re.compile("%(" + "|".join(map(re.escape, values)) + ")%")
    return names.sub(lambda found: values[found[1]], template)


def script_json(value: Any) -> str:
    """``value`` as JSON that is safe inside ``<script type="application/json">``: it parses
    back to ``value`` and holds no ``<``, ``>``, ``&`` or line separator as such."""
    return json.dumps(value, separators=(",", ":")).translate(_SCRIPT_ESCAPES)


def write_page(
    path: str | os.PathLike[str],
    prof: KernelProfile,
    *,
    title: str,
    trace: str | os.PathLike[str] | None = None,
    baselines: Sequence[tuple[str, str]] = (),
    shown: Callable[[str], str] | None = None,
) -> None:
    """Write the page atomically: a reader (a browser, an artifact upload, another run writing the
    same test's page) never sees half of it."""
    page = render_page(prof, title=title, trace=trace, baselines=baselines, shown=shown)
    # A name from a trace may hold a lone surrogate (JSON's "\ud800"), a path an undecodable byte:
    # no UTF-8 file holds them as such, so they are written as escapes, as tables show them.
    with atomic_path(path) as tmp:
        Path(tmp).write_text(page, encoding="utf-8", errors="backslashreplace")


def _from_here(text: str) -> str:
    """``text`` with each absolute path under the working folder written relative to it."""
    return relative_paths(text, Path.cwd())


def page_path(trace: Path) -> Path:
    name = trace.name
    for suffix in (".json.gz", ".json"):
        if name.endswith(suffix):
            return trace.with_name(name[: -len(suffix)] + ".html")
    return trace.with_name(name + ".html")


@functools.cache
def _template() -> str:
    """The page around the data: timeline.html beside this module (HTML, CSS and the script)."""
    return (Path(__file__).parent / "timeline.html").read_text(encoding="utf-8")
