"""Ways out of a finished Kineto session, to the same RawEvents (issue 24).

    python -m benchmarks.event_paths [rounds]        # from the repository root

For callables of 1, 600 and 8,000 small eager kernels (``x + 1`` on 4 elements, 2 warm-up
and 3 profiled calls, as ``kernelprof(fn)`` runs them), on one finished session each, with
the cyclic collector paused as the build runs:

- ``kineto``: today's per-event adapter, ``events_from_kineto(results.events())``: a pybind
  call per field of each event;
- ``floor_fields``: only the six pybind reads a builder needs per event, building nothing
  (the floor of any per-event reader);
- ``save``: ``_ProfilerResult.save(path)`` alone (Kineto writes the Chrome JSON in C++; what
  ``export_chrome_trace`` does), into a RAM-backed directory (/dev/shm). A session saves
  once (a second raises "Trace is already saved"): each save way is timed on a fresh one;
- ``save_read``: ``save``, then the file's bytes through the typed (msgspec) reader, a
  megabyte batch at a time (``saved_events``, what the plugin would run);
- ``save_whole``: ``save``, then one msgspec decode of the whole event array straight off
  the file's bytes (a memoryview slice: no second copy), then the same conversion;
- ``save_json``: ``save``, then the standard-library reader (no msgspec).

Then ``kernelprof(fn)`` against a bare ``torch.profiler.profile`` session around the same
calls, with the events taken each way (rounds interleaved). Prints one table; also checks
that both ways give the same events (times less the trace's ``baseTimeNanoseconds``,
threads by order of appearance) and the same profile.
"""

from __future__ import annotations

import gc
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import torch

from pytest_kernelprof import Profiler
from pytest_kernelprof.assemble import build_profile
from pytest_kernelprof.capture import run as capture
from pytest_kernelprof.traces import RawEvent, events_from_kineto
from pytest_kernelprof.traces.chrome import raw_event_from_chrome, typed_reader
from pytest_kernelprof.traces.files import read_trace_data

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
TINY = torch.ones(4, device=DEVICE)
SIZES = (1, 600, 8000)
RAM = "/dev/shm" if os.path.isdir("/dev/shm") else None


def read_chrome_bytes(data: bytes, name: str) -> tuple[dict[str, Any], list[RawEvent]]:
    """A saved trace's header and events: the typed reader, batched, where it takes them."""
    return read_trace_data(data, name, raw_event_from_chrome, typed_reader())


def saved_events(torch_profiler: Any) -> list[RawEvent]:
    """The way through C++: ``save`` into a RAM-backed directory, then the Chrome reader
    (what the plugin would run; ``kernelprof_save`` below swaps it in for the adapter)."""
    with tempfile.TemporaryDirectory(prefix="kernelprof-", dir=RAM) as tmp:
        path = _save(torch_profiler, tmp)
        data = _bytes(path)
    return read_chrome_bytes(data, path)[1]


def sync() -> None:
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def stack(kernels: int) -> Callable[[torch.Tensor], torch.Tensor]:
    def run(x: torch.Tensor) -> torch.Tensor:
        for _ in range(kernels):
            x = x + 1
        return x

    return run


def bare(fn: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    activities = [torch.profiler.ProfilerActivity.CPU]
    if DEVICE == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    for _ in range(2):
        fn(TINY)
    sync()
    with torch.profiler.profile(activities=activities) as prof:
        for step in range(3):
            with torch.profiler.record_function(f"ProfilerStep#{step}"):
                fn(TINY)
            sync()
    return prof


def _results(prof: Any) -> Any:
    return prof.profiler.kineto_results


def _save(prof: Any, tmp: str) -> str:
    path = os.path.join(tmp, "trace.json")
    _results(prof).save(path)
    return path


def way_kineto(prof: Any, tmp: str) -> list[RawEvent]:
    return events_from_kineto(_results(prof).events())


def way_floor_fields(prof: Any, tmp: str) -> list[Any]:
    return [
        (e.name(), e.device_index(), e.start_ns(), e.duration_ns(), e.correlation_id(), e.linked_correlation_id())
        for e in _results(prof).events()
    ]


def way_save(prof: Any, tmp: str) -> None:
    _save(prof, tmp)


def _bytes(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def way_save_read(prof: Any, tmp: str) -> list[RawEvent]:
    return read_chrome_bytes(_bytes(_save(prof, tmp)), "trace")[1]


def way_save_whole(prof: Any, tmp: str) -> list[RawEvent]:
    data = _bytes(_save(prof, tmp))
    typed = typed_reader()
    assert typed is not None
    begin = data.index(b"[", data.index(b'"traceEvents"'))
    end = data.rindex(b"]") + 1
    out: list[RawEvent] = []
    assert typed.convert(typed.decode(memoryview(data)[begin:end]), out)
    return out


def way_save_json(prof: Any, tmp: str) -> list[RawEvent]:
    return read_trace_data(_bytes(_save(prof, tmp)), "trace", raw_event_from_chrome)[1]


WAYS: dict[str, Callable[[Any, str], Any]] = {
    "kineto": way_kineto,
    "floor_fields": way_floor_fields,
    "save": way_save,
    "save_read": way_save_read,
    "save_whole": way_save_whole,
    "save_json": way_save_json,
}


def timed(fn: Callable[[], Any]) -> float:
    gc.disable()
    try:
        start = time.perf_counter_ns()
        fn()
        return (time.perf_counter_ns() - start) / 1e6
    finally:
        gc.enable()


def normalised(events: list[RawEvent], base: int) -> Counter[tuple[Any, ...]]:
    threads: dict[int, int] = {}
    rows = []
    for e in events:
        thread = threads.setdefault(e.thread, len(threads)) if e.thread else 0
        rows.append(
            (e.category, e.name, e.start - base, e.end - base, thread, e.stream, e.ident, e.correlation, e.linked)
            + (e.device, e.grid, e.block, e.nbytes)
        )
    return Counter(rows)


def compare(prof: Any, tmp: str) -> str:
    """How the two ways' events and profiles differ ("same" where they do not)."""
    live = way_kineto(prof, tmp)
    header, saved = read_chrome_bytes(_bytes(_save(prof, tmp)), "trace")
    base = int(header.get("baseTimeNanoseconds", 0))
    a, b = normalised(live, base), normalised(saved, 0)
    notes = []
    if a != b:
        fields_only = Counter(r[:2] + r[4:9] for r in a.elements()) == Counter(r[:2] + r[4:9] for r in b.elements())
        shapes = Counter(r[:9] for r in a.elements()) == Counter(r[:9] for r in b.elements())
        notes.append(
            f"events differ ({len(a - b)} only live, {len(b - a)} only saved; ids equal: {fields_only}; "
            f"equal without device/grid/block/bytes: {shapes})"
        )
        for row in list((a - b).elements())[:2] + list((b - a).elements())[:2]:
            notes.append(f"    {row}")
    source = capture._source("bench", frozenset())
    p, q = build_profile(live, source), build_profile(saved, source)
    if DEVICE == "cuda":
        same = (p.kernels.names, [k.op for k in p.kernels]) == (q.kernels.names, [k.op for k in q.kernels])
        notes.append(f"kernels same: {same}")
        notes.append(f"launch shapes live/saved: {p.kernels[0].grid}/{q.kernels[0].grid}")
    same_ops = (p.ops.names, [p.ops[n].children for n in p.ops]) == (q.ops.names, [q.ops[n].children for n in q.ops])
    notes.append(f"ops same: {same_ops}")
    if DEVICE == "cuda":
        notes.append(f"runtime same: {dict(p.runtime) == dict(q.runtime)}")
    return "\n".join(notes)


def _saved_raw_events(torch_profiler: Any, *, python_frames: bool = False) -> list[RawEvent]:
    return saved_events(torch_profiler)


def main() -> None:
    rounds = next((int(a) for a in sys.argv[1:] if a.isdigit()), 7)
    print(f"torch {torch.__version__}, device {torch.cuda.get_device_name() if DEVICE == 'cuda' else 'cpu'}")
    print(f"msgspec: {typed_reader() is not None}; RAM dir: {RAM}; rounds: {rounds} (medians, ms)")
    bare(stack(1))  # the first session of a process costs seconds
    per_event = capture.raw_events
    for size in SIZES:
        fn = stack(size)
        prof = bare(fn)
        count = len(_results(prof).events())
        with tempfile.TemporaryDirectory(dir=RAM) as tmp:
            nbytes = os.path.getsize(_save(bare(fn), tmp))
            times: dict[str, list[float]] = {name: [] for name in WAYS}
            for _ in range(rounds):
                for name, way in WAYS.items():
                    # A session saves once ("Trace is already saved"): a fresh one per save.
                    session = bare(fn) if name.startswith("save") else prof
                    times[name].append(timed(lambda way=way, session=session: way(session, tmp)))
                    del session
            notes = compare(bare(fn), tmp)
        whole: dict[str, list[float]] = {"bare": [], "kernelprof_kineto": [], "kernelprof_save": []}
        profiler = Profiler()
        for _ in range(rounds):
            whole["bare"].append(_wall(lambda fn=fn: bare(fn)))
            capture.raw_events = per_event
            whole["kernelprof_kineto"].append(_wall(lambda fn=fn, p=profiler: p(fn, TINY)))
            capture.raw_events = _saved_raw_events
            whole["kernelprof_save"].append(_wall(lambda fn=fn, p=profiler: p(fn, TINY)))
            profiler.captures.clear()
        capture.raw_events = per_event
        med = {k: statistics.median(v) for k, v in {**times, **whole}.items()}
        print(f"\n== {size} kernels: {count} Kineto events, saved trace {nbytes / 1e6:.2f} MB")
        for name in WAYS:
            print(f"  {name:<20} {med[name]:9.3f}   x{med[name] / med['kineto']:.2f} of kineto")
        for name in whole:
            print(f"  {name:<20} {med[name]:9.3f}   x{med[name] / med['bare']:.3f} of bare")
        print("  " + notes.replace("\n", "\n  "))


def _wall(fn: Callable[[], Any]) -> float:
    start = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - start) / 1e6


if __name__ == "__main__":
    main()
