"""A self-contained HTML page of a profile: a kernel timeline, the kernel and op tables.

One file, no network: the data is a JSON block in the page and the drawing is a few KB of
plain JavaScript that makes one SVG ``rect`` per kernel (the page around the data, script
included, is ``timeline.html``, package data). Lanes: the host (kernel launches, host
syncs) and one per CUDA stream (kernels coloured by kind, memcpys with DtoH copies marked,
the GPU's idle gaps shaded). Hover shows a kernel's name, op, module and duration; the
wheel zooms, dragging pans. After drawing, the script writes what it drew into
``<pre id="drawn">`` (counts per lane, milliseconds taken), which the tests read back from
a headless browser.

What the profile model has is read through its public attributes. The host's launch times
and the memcpys' GPU times are not in the model: they are read from the Chrome trace the
profile came from, where there is one (``kernelprof show TRACE --html``, the pages beside a
failing test's traces); without it the host lane has the syncs only.

For a test that failed on its kernel baseline, the page also has the stored baseline and
the run side by side, aligned as the baseline's diff aligns them.
"""

from __future__ import annotations

import difflib
import functools
import gzip
import html
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import KernelProfError
from ..model import KernelProfile
from ..tables import display_name

LAUNCH_PREFIXES = ("cudaLaunch", "cuLaunch", "cudaGraphLaunch", "cuGraphLaunch")
_RUNTIME = ("cuda_runtime", "cuda_driver", "runtime", "driver")
_HOST = ("cpu_op", "operator", "user_annotation", *_RUNTIME)
STEP_PREFIX = "ProfilerStep#"
TABLE_ROWS = 500  # kernel table rows drawn at first; a button draws the rest


def _open(path: str | os.PathLike[str]) -> Any:
    with open(path, "rb") as handle:
        data = handle.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data)


def host_records(trace: str | os.PathLike[str]) -> list[dict[str, list[list[Any]]]]:
    """Per call (ProfilerStep#N, in order; the whole trace where it has none): the kernel
    launches ``[start_us, dur_us]`` and the memcpys ``[start_us, dur_us, stream, name]``,
    times from the start of the call as ``Kernel.start_us`` counts them."""
    try:
        events = [e for e in _open(trace).get("traceEvents", ()) if isinstance(e, dict) and e.get("ph") == "X"]
    except (OSError, ValueError, AttributeError):
        return []
    steps = sorted(
        (float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)))
        for e in events
        if e.get("cat") == "user_annotation" and str(e.get("name", "")).startswith(STEP_PREFIX)
    )
    if not steps:
        host = [float(e["ts"]) for e in events if e.get("cat") in _HOST and "ts" in e]
        if not host:
            return []
        steps = [(min(host), float("inf"))]
    calls: list[dict[str, list[list[Any]]]] = [{"launches": [], "copies": []} for _ in steps]
    for e in events:
        cat, name = e.get("cat"), str(e.get("name", ""))
        try:
            ts, dur = float(e["ts"]), float(e.get("dur", 0))
        except (KeyError, TypeError, ValueError):
            continue
        if cat in _RUNTIME and name.startswith(LAUNCH_PREFIXES):
            key = "launches"
            record: list[Any] = [ts, round(dur, 3)]
        elif cat in ("gpu_memcpy", "memcpy"):
            args = e.get("args") or {}
            stream = args.get("stream", e.get("tid", 0))
            stream_id = int(str(stream)) if str(stream).isdigit() else 0
            key = "copies"
            record = [ts, round(dur, 3), stream_id, name]
        else:
            continue
        for index, (start, end) in enumerate(steps):
            if start <= ts <= end or (key == "copies" and index == len(steps) - 1 and ts > start):
                record[0] = round(ts - start, 3)
                calls[index][key].append(record)
                break
    return calls


def _data(prof: KernelProfile, title: str, host: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
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
                ]
            )
        try:
            syncs = [[round(s.start_us, 3), round(s.duration_us, 3), s.kind, s.call, s.op, s.where] for s in call.syncs]
        except KernelProfError:
            syncs = []
        extra = host[number] if number < len(host) and len(host) == len(prof.calls) else {}
        calls.append(
            {
                "wall": round(call.wall_us, 3),
                "kernels": rows,
                "syncs": syncs,
                "launches": extra.get("launches", []),
                "copies": extra.get("copies", []),
                "host": bool(extra),
            }
        )
    return {"title": title, "strings": list(strings), "calls": calls}


def _op_table(prof: KernelProfile) -> str:
    rows = []
    try:
        ops = prof.ops
        names = sorted(ops.names, key=lambda name: -(ops[name].subtree_device_us or 0.0))
    except KernelProfError:
        return "<p>no op table</p>"
    for name in names[:300]:
        op = ops[name]
        device = "-" if op.subtree_device_us is None else f"{op.subtree_device_us:.1f}"
        rows.append(
            f"<tr><td>{html.escape(name)}</td><td>{op.count}</td><td>{op.cpu_time_us:.1f}</td><td>{device}</td></tr>"
        )
    more = f"<p>... and {len(names) - 300} more ops</p>" if len(names) > 300 else ""
    return (
        "<table><thead><tr><th>op</th><th>count</th><th>cpu us</th><th>device us (subtree)</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>{more}"
    )


def baseline_table(stored: Sequence[Any], current: Sequence[Any]) -> str:
    """The stored baseline's kernels and the run's side by side, aligned by their diff;
    each a ``KernelName`` (``BaselineKernel`` or ``Kernel``)."""

    def key(k: Any) -> str:
        return f"{k.kind}/{k.family} {display_name(k.name)}"

    a, b = [key(k) for k in stored], [key(k) for k in current]
    rows = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        left, right = a[i1:i2], b[j1:j2]
        for n in range(max(len(left), len(right))):
            x = left[n] if n < len(left) else ""
            y = right[n] if n < len(right) else ""
            cls = "same" if tag == "equal" else "del" if not y else "add" if not x else "chg"
            rows.append(f'<tr class="{cls}"><td>{html.escape(x)}</td><td>{html.escape(y)}</td></tr>')
    return (
        f'<table class="side"><thead><tr><th>baseline ({len(a)} kernels)</th><th>this run ({len(b)} kernels)</th>'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def render_page(
    prof: KernelProfile,
    *,
    title: str,
    trace: str | os.PathLike[str] | None = None,
    baselines: Sequence[tuple[str, str]] = (),
) -> str:
    """The page's HTML. ``trace``: the Chrome trace the profile came from (launches, memcpys);
    ``baselines``: (heading, side-by-side table HTML) sections, from :func:`baseline_table`."""
    host = host_records(trace) if trace is not None else []
    data = json.dumps(_data(prof, title, host), separators=(",", ":")).replace("</", "<\\/")
    where = f"{prof.device} ({prof.arch})" if prof.device else "no GPU named"
    head = f"{len(prof.calls)} call(s) on {where}; source {prof.source}"
    side = "".join(f"<h2>{html.escape(h)}</h2>{table}" for h, table in baselines)
    return (
        _template()
        .replace("%TITLE%", html.escape(title))
        .replace("%HEAD%", html.escape(head))
        .replace("%BASELINE%", side)
        .replace("%OPS%", _op_table(prof))
        .replace("%ROWS%", str(TABLE_ROWS))
        .replace("%DATA%", data)
    )


def write_page(
    path: str | os.PathLike[str],
    prof: KernelProfile,
    *,
    title: str,
    trace: str | os.PathLike[str] | None = None,
    baselines: Sequence[tuple[str, str]] = (),
) -> None:
    Path(path).write_text(render_page(prof, title=title, trace=trace, baselines=baselines), encoding="utf-8")


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
