"""Raw events -> KernelProfile: the one builder for live sessions and saved traces.

The events come from ``events.py``'s adapters; everything here is shared by both sources:
steps -> calls, the completeness check, the op forest, and the medians of the
representative call.
"""

from __future__ import annotations

import bisect
import contextlib
import difflib
import gc
import itertools
import operator
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .errors import IncompleteProfileError, KernelSequenceMismatchError
from .events import (
    ANNOTATION,
    GPU_CATEGORIES,
    KERNEL,
    MEMCPY,
    OP,
    PYTHON,
    RUNTIME,
    STEP_PREFIX,
    RawEvent,
    Source,
    is_graph_launch,
    is_kernel_launch,
)
from .health import CompileFacts, MemoryReading
from .model import (
    CallProfile,
    Kernel,
    KernelList,
    KernelProfile,
    MemoryOp,
    Op,
    OpTable,
    RuntimeCalls,
    Sync,
    SyncList,
)
from .names import KernelName, parse_kernel_name
from .report import display_name
from .syncs import FlaggedSync, api_name, assign_lines, memcpy_kind, sync_kind, user_frames


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while a profile is built.

    Building allocates hundreds of thousands of small containers, none in reference
    cycles; the collector's repeated passes over them cost more than the build itself
    (measured: 1.8 s -> 0.7 s for a 100 MB trace).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# -- the builder --------------------------------------------------------------------------


class _OpNode:
    __slots__ = ("children", "device_ns", "end", "kernels", "name", "self_device_ns", "start", "subtree_kernels")

    def __init__(self, event: RawEvent) -> None:
        self.name = event.name
        self.start = event.start
        self.end = event.end
        self.children: list[_OpNode] = []
        self.kernels: list[tuple[int, Kernel]] = []  # (position in the call, kernel)
        self.subtree_kernels: list[tuple[int, Kernel]] = self.kernels
        self.self_device_ns = 0
        self.device_ns = 0


@dataclass
class _Step:
    index: int
    start: int
    end: int
    ops: list[RawEvent]
    runtime: list[RawEvent]
    gpu: list[tuple[int, RawEvent]]  # (launch time, record)
    python: list[RawEvent] = field(default_factory=list)  # frames begun inside the step


def _steps(events: Sequence[RawEvent]) -> tuple[list[_Step], bool]:
    """One step per ``ProfilerStep#N`` mark, and whether there were marks (else one step for all)."""
    marks = sorted(
        (e for e in events if e.category == ANNOTATION and e.name.startswith(STEP_PREFIX)), key=lambda e: e.start
    )
    if not marks:
        cpu = [e for e in events if e.category in (OP, ANNOTATION, RUNTIME)] or list(events)
        if not cpu:
            return [_Step(0, 0, 0, [], [], [])], False
        return [_Step(0, min(e.start for e in cpu), max(e.end for e in cpu), [], [], [])], False
    return [_Step(i, m.start, m.end, [], [], []) for i, m in enumerate(marks)], True


def _step_of(starts: list[int], steps: list[_Step], time: int) -> _Step | None:
    i = bisect.bisect_right(starts, time) - 1
    if i >= 0 and time <= steps[i].end:
        return steps[i]
    return None


def build_profile(
    events: Sequence[RawEvent],
    source: Source,
    *,
    allow_variation: bool = False,
    check_complete: bool = True,
    memory: Sequence[MemoryReading] | None = None,
    compile_facts: CompileFacts | None = None,
    flagged_syncs: Mapping[int, Sequence[FlaggedSync]] | None = None,
) -> KernelProfile:
    """Turn raw events into a KernelProfile: one call per ``ProfilerStep#N`` annotation.

    ``memory`` (one reading per profiled call) and ``compile_facts`` are what a live capture
    saw beside the events; a reading list that does not match the calls is not used.
    ``flagged_syncs`` are the syncs torch's sync debug mode warned about live, by call
    index: they give the syncs of those calls their exact line.
    """
    steps, marked = _steps(events)
    starts = [s.start for s in steps]
    single = not marked
    runtime_by_corr: dict[int, RawEvent] = {}
    ops_by_id: dict[int, RawEvent] = {}
    gpu_events: list[RawEvent] = []
    stacks = False  # whether Python frames were recorded (with_stack=True)
    # Events come mostly in time order: the step of the last one is tried before a search.
    step: _Step | None = steps[0]
    # Bounds of ``step`` (an empty range for None), so that single=True never searches.
    step_start, step_end = (-(2**63), 2**63) if single else (steps[0].start, steps[0].end)
    gpu_categories, add_gpu = GPU_CATEGORIES, gpu_events.append
    for e in events:
        cat = e.category
        if cat in gpu_categories:
            add_gpu(e)
            continue
        if not step_start <= e.start <= step_end:
            step = _step_of(starts, steps, e.start)
            step_start, step_end = (step.start, step.end) if step is not None else (1, 0)
        if cat == OP:
            if e.ident:
                ops_by_id[e.ident] = e
            if step is not None:
                step.ops.append(e)
            continue
        if cat == ANNOTATION and e.name.startswith(STEP_PREFIX):
            continue
        if cat == RUNTIME:
            runtime_by_corr[e.correlation] = e
            if step is not None:
                # Runtime calls that start inside a step: the plugin's own synchronize
                # after each call starts after its step ends and is never one of them.
                step.runtime.append(e)
        elif cat == PYTHON:
            stacks = True
            if step is not None:
                step.python.append(e)
        else:
            if e.ident:
                ops_by_id[e.ident] = e
            if step is not None:
                step.ops.append(e)

    step = steps[0]
    for g in gpu_events:
        launch = runtime_by_corr.get(g.correlation)
        launch_time = launch.start if launch is not None else g.start
        if not single and (step is None or not step.start <= launch_time <= step.end):
            step = _step_of(starts, steps, launch_time)
        if step is None and launch is None:
            # No launch record: the kernel ran after its launch, so the latest step begun
            # before it is the one that launched it.
            i = bisect.bisect_right(starts, g.start) - 1
            step = steps[i] if i >= 0 else None
        if step is not None:
            step.gpu.append((launch_time, g))

    gpu_seen = bool(gpu_events)
    unavailable = None if gpu_seen else _no_activity_reason(source)

    runtime_names = _RuntimeNames()
    if check_complete and source.gpu_requested:
        _check_complete(steps, gpu_events, runtime_names)

    readings = memory if memory is not None and len(memory) == len(steps) else [None] * len(steps)
    flagged = flagged_syncs or {}
    built = [
        _build_call(
            step,
            ops_by_id,
            runtime_by_corr,
            unavailable,
            stacks,
            flagged.get(step.index, ()),
            runtime_names,
            reading,
            source.triton_kernels,
        )
        for step, reading in zip(steps, readings, strict=True)
    ]
    calls = [call for call, _ in built]
    made = [kernels for _, kernels in built]
    varied = _check_sequences(steps, made, allow_variation) if gpu_seen else False
    if len(calls) == 1:
        representative = calls[0]
    elif varied:
        representative = replace(calls[0], syncs=_representative_syncs(calls, unavailable))
    else:
        representative = _median_call(calls, made, _representative_syncs(calls, unavailable))
    return KernelProfile(
        call=representative,
        calls=tuple(calls),
        device=source.device,
        arch=source.arch,
        source=source.label,
        varied=varied,
        has_device_activity=gpu_seen,
        compile_facts=compile_facts,
    )


def _no_activity_reason(source: Source) -> str:
    if not source.gpu_requested:
        return (
            "no GPU activity was recorded because CUDA is not available: only CPU ops were profiled. "
            "Mark GPU tests with @pytest.mark.gpu so they skip here."
        )
    return (
        "the profiler recorded no GPU activity: the callable launched no GPU work (are its tensors on "
        "the CPU?) or CUPTI recorded nothing (another CUPTI client such as nsys/ncu attached, or "
        "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES; see the profiler's warnings)"
    )


class _RuntimeNames(dict[str, tuple[bool, bool, bool]]):
    """(kernel launch, graph launch, may sync) by runtime call name, worked out once per name
    and build: every call repeats the same few names."""

    def __missing__(self, name: str) -> tuple[bool, bool, bool]:
        facts = self[name] = (
            is_kernel_launch(name),
            is_graph_launch(name),
            sync_kind(name, None) is not None or _may_copy(name),
        )
        return facts


def _check_complete(steps: list[_Step], gpu_events: Sequence[RawEvent], runtime_names: _RuntimeNames) -> None:
    recorded = {g.correlation for g in gpu_events}
    launches = [r for step in steps for r in step.runtime if runtime_names[r.name][0]]
    lost = [r for r in launches if r.correlation not in recorded]
    if lost:
        names = Counter(r.name for r in lost)
        listing = ", ".join(f"{n} x{c}" for n, c in names.most_common())
        raise IncompleteProfileError(
            f"the profiler lost GPU records: {len(lost)} of {len(launches)} kernel launches recorded on the "
            f"CPU side have no GPU record ({listing}). The counts would be wrong, so the profile is refused. "
            "Synchronize before the profiler stops, or raise the CUPTI buffer size; rerun to see if it persists."
        )


def _triton(decoded: KernelName, as_triton: dict[str, KernelName]) -> KernelName:
    """``decoded`` with family ``triton``, made once per name and build."""
    found = as_triton.get(decoded.name)
    if found is None:
        found = as_triton[decoded.name] = replace(decoded, family="triton")
    return found


def _is_launch_range(range_name: str, kernel_name: str) -> bool:
    """Whether a range is the one Inductor opens around a single Triton launch: named after the
    kernel, or after its name in the generated code (``_rms_norm_forward_kernel_0`` for a user
    kernel)."""
    if not range_name.startswith(kernel_name):
        return False
    rest = range_name[len(kernel_name) :]
    return not rest or (rest[0] == "_" and rest[1:].isdigit())


def _is_graph_call(range_name: str) -> bool:
    """Inductor's ``## Call CompiledFxGraph <hash> ##`` around a compiled graph: its hash changes
    from run to run, so it is in a kernel's ``ops`` but never its ``op``."""
    return range_name.startswith("## ") and range_name.endswith(" ##")


class _Chains:
    """The op chains of one call: each op's enclosing ranges, from one walk over all its ops.

    Made on first use: only kernels that Inductor launched need a chain at build time (for
    their ``op``), and ``Kernel.ops`` is read by few tests; walking every call's ops would
    otherwise add half to the build of a compiled training step.
    """

    __slots__ = ("_chains", "_ops", "_parents")

    def __init__(self, ops: Sequence[RawEvent]) -> None:
        self._ops = ops
        self._parents: dict[RawEvent, RawEvent | None] | None = None
        self._chains: dict[RawEvent, tuple[str, ...]] = {}

    def of(self, launcher: RawEvent) -> tuple[str, ...]:
        """The launcher's chain, outermost first, ending with the launcher itself."""
        chain = self._chains.get(launcher)
        if chain is not None:
            return chain
        parents = self._parents
        if parents is None:
            parents = _parents(self._ops)
            if parents is None:
                parents = _parents([e for thread in _threads(self._ops) for e in thread]) or {}
            self._parents = parents
        names = [launcher.name]
        # A launcher outside the call's ops (it began before the call's range) is its own chain.
        parent = parents.get(launcher)
        while parent is not None:
            names.append(parent.name)
            parent = parents[parent]
        chain = self._chains[launcher] = tuple(reversed(names))
        return chain

    def kernel_ops(self, launcher: RawEvent, kernel_name: str) -> tuple[str, ...]:
        """A kernel's ``ops``: its launcher's chain, without Inductor's range around its launch."""
        chain = self.of(launcher)
        return chain[:-1] if _is_launch_range(launcher.name, kernel_name) else chain


def _inductor_op(chain: tuple[str, ...]) -> str | None:
    """The op of a kernel Inductor launched: the innermost range around its launch range
    (``chain[-1]``) other than the graph call (``CompiledFunction``, ``Torch-Compiled Region: 0/0``)."""
    for name in reversed(chain[:-1]):
        if not _is_graph_call(name):
            return name
    return None


class _CallKernels:
    """The kernels of one call, made from its records on first read.

    Making a Kernel (decoding, the launching op, Inductor's op chain, the object) is most
    of the cost of a build; the sequence check and the medians need only names and
    durations, and tests mostly read the representative call. So each call's own
    ``KernelList`` is deferred, and the representative's kernels are made once, with the
    median durations, from the first call's records.
    """

    __slots__ = ("_frames", "_kernels", "_triton_kernels", "chains", "launchers", "records", "step")

    def __init__(
        self,
        step: _Step,
        records: list[RawEvent],
        launchers: list[RawEvent | None],
        frames: Callable[[], list[tuple[str, ...] | None]] | None,
        triton_kernels: frozenset[str],
    ) -> None:
        self.step = step
        self.records = records  # the call's GPU records in launch order
        self.launchers = launchers  # the CPU op that launched each record, where known
        self.chains = _Chains(step.ops)
        self._frames = frames
        self._triton_kernels = triton_kernels
        self._kernels: list[Kernel] | None = None

    @property
    def names(self) -> list[str]:
        return [g.name for g in self.records if g.category == KERNEL]

    @property
    def durations(self) -> list[float]:
        return [(g.end - g.start) / 1000.0 for g in self.records if g.category == KERNEL]

    def own(self) -> list[Kernel]:
        """This call's kernels, with their own durations."""
        if self._kernels is None:
            with paused_gc():  # made lazily, outside build_profile's pause
                self._kernels = self.make(None)
        return self._kernels

    def make(self, durations: Sequence[float] | None) -> list[Kernel]:
        """The call's kernels; with ``durations`` (one per kernel) in place of their own."""
        step, chains = self.step, self.chains
        frames = self._frames() if self._frames is not None else None
        as_triton: dict[str, KernelName] = {}
        triton_kernels = self._triton_kernels
        kernels: list[Kernel] = []
        for position, (g, op_event) in enumerate(zip(self.records, self.launchers, strict=True)):
            if g.category != KERNEL:
                continue
            op_name = op_event.name if op_event is not None else None
            decoded = parse_kernel_name(g.name)
            inductor = op_name is not None and op_name.startswith(g.name) and _is_launch_range(op_name, g.name)
            if inductor:
                op_name = _inductor_op(chains.of(op_event))  # type: ignore[arg-type]  # inductor: op_event is set
            # A kernel whose name says nothing is a Triton kernel where capture learned it, or
            # where Inductor launched it (a user's @triton.jit kernel in a compiled region).
            if decoded.family == "unknown" and (inductor or g.name in triton_kernels):
                decoded = _triton(decoded, as_triton)
            kernels.append(
                _new_kernel(
                    decoded,
                    {
                        "duration_us": (g.end - g.start) / 1000.0 if durations is None else durations[len(kernels)],
                        "stream": g.stream,
                        "device": g.device,
                        "op": op_name,
                        "grid": g.grid,
                        "block": g.block,
                        "start_us": (g.start - step.start) / 1000.0,
                        "stack": frames[position] if frames is not None else None,
                        # Kernel.ops, resolved on first read
                        "chains": chains if op_event is not None else None,
                        "launcher": op_event,
                    },
                )
            )
        return kernels

    def launched(self) -> list[tuple[RawEvent, int, Kernel | None, int]]:
        """(launching op, kernel position, kernel or None for a memory op, GPU ns) per record
        with a known launcher: what the op forest hangs kernels and device time on."""
        kernels = iter(self.own())
        out: list[tuple[RawEvent, int, Kernel | None, int]] = []
        position = -1
        for g, op_event in zip(self.records, self.launchers, strict=True):
            kernel = None
            if g.category == KERNEL:
                kernel = next(kernels)
                position += 1
            if op_event is not None:
                out.append((op_event, position, kernel, g.end - g.start))
        return out


def _build_call(
    step: _Step,
    ops_by_id: Mapping[int, RawEvent],
    runtime_by_corr: Mapping[int, RawEvent],
    unavailable: str | None,
    stacks: bool,
    flagged: Sequence[FlaggedSync],
    runtime_names: _RuntimeNames,
    reading: MemoryReading | None = None,
    triton_kernels: frozenset[str] = frozenset(),
) -> tuple[CallProfile, _CallKernels]:
    # By launch time, then GPU start: two stable sorts, cheaper than a tuple key per record.
    step.gpu.sort(key=_gpu_start)
    step.gpu.sort(key=_launch_time)
    records = [g for _, g in step.gpu]
    launchers: list[RawEvent | None] = []
    memory: list[MemoryOp] = []
    for g in records:
        op_event = ops_by_id.get(g.linked)
        if op_event is None:
            launch = runtime_by_corr.get(g.correlation)
            op_event = ops_by_id.get(launch.linked) if launch is not None else None
        launchers.append(op_event)
        if g.category != KERNEL:
            direction, host_memory = memcpy_kind(g.name) if g.category == MEMCPY else (None, None)
            memory.append(
                _new_memory_op(
                    g.name,
                    g.category,
                    (g.end - g.start) / 1000.0,
                    g.stream,
                    g.device,
                    op_event.name if op_event is not None else None,
                    direction,
                    host_memory,
                    g.nbytes,
                )
            )

    def frames() -> list[tuple[str, ...] | None]:
        return _user_stacks(step, [runtime_by_corr.get(g.correlation) for g in records])

    call_kernels = _CallKernels(step, records, launchers, frames if stacks else None, triton_kernels)

    def load_ops() -> tuple[list[str], Callable[[str], Op]]:
        launched = call_kernels.launched()
        with paused_gc():  # built lazily, outside build_profile's pause
            return _op_forest(_threads(step.ops), launched, unavailable is None)

    runtime = dict(Counter(map(_NAME, step.runtime)))
    kinds = [(runtime_names[name], count) for name, count in runtime.items()]
    may_sync = {name for name in runtime if runtime_names[name][2]}
    call = CallProfile(
        index=step.index,
        kernels=KernelList.deferred(call_kernels.own, unavailable=unavailable),
        memory_ops=tuple(memory),
        ops=OpTable(load_ops),
        runtime=RuntimeCalls(runtime, unavailable=unavailable),
        memory_reading=reading,
        syncs=SyncList(_syncs(step, stacks, flagged, may_sync), unavailable=unavailable),
        wall_us=(step.end - step.start) / 1000.0,
        _launches=sum(count for (kernel, _, _), count in kinds if kernel),
        _graph_launches=sum(count for (_, graph, _), count in kinds if graph),
        _gpu_busy_us=_busy_ns(step, records) / 1000.0,
    )
    return call, call_kernels


def _syncs(step: _Step, stacks: bool, flagged: Sequence[FlaggedSync], maybe: set[str]) -> list[Sync]:
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
    frames = _user_stacks(step, calls) if stacks else None
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


def _may_copy(name: str) -> bool:
    """Whether a runtime call is a copy, which syncs or not by its memcpy record."""
    return api_name(name).startswith(("cudaMemcpy", "cuMemcpy"))


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
            result[i] = tuple(open_ranges)
    return result


def _user_stacks(step: _Step, points: Sequence[RawEvent | None]) -> list[tuple[str, ...] | None]:
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


def _busy_ns(step: _Step, records: list[RawEvent]) -> int:
    """The union of the step's GPU records (``records``, in launch order), clipped to the step's
    host span.

    Launch order is nearly always start order too: one pass then, and a sort (of a copy)
    only where a record started before an earlier one (several streams).
    """
    previous = -1
    for g in records:
        if g.start < previous:
            records = sorted(records, key=_START)
            break
        previous = g.start
    busy = 0
    covered = step.start
    step_end = step.end
    for g in records:
        start = g.start if g.start > covered else covered
        end = g.end if g.end < step_end else step_end
        if end > start:
            busy += end - start
            covered = end
    return busy


def _representative_syncs(calls: Sequence[CallProfile], unavailable: str | None) -> SyncList:
    """The syncs of the representative call (see ``KernelProfile.syncs``)."""
    if unavailable is not None:
        return SyncList(unavailable=unavailable)
    per_call = [list(c.syncs) for c in calls]
    shapes = {tuple((s.call, s.kind, s.ops) for s in syncs) for syncs in per_call}
    if len(shapes) > 1:
        return max((c.syncs for c in calls), key=len)
    medians = [
        replace(
            same[0],
            duration_us=_median([s.duration_us for s in same]),
            start_us=_median([s.start_us for s in same]),
        )
        for same in zip(*per_call, strict=True)
    ]
    return SyncList(medians)


def _threads(ops: Sequence[RawEvent]) -> list[list[RawEvent]]:
    """The ops of each thread, in nesting order: by start, the longer first."""
    by_thread: dict[int, list[RawEvent]] = {}
    for e in ops:
        found = by_thread.get(e.thread)
        if found is None:
            by_thread[e.thread] = [e]
        else:
            found.append(e)
    threads = list(by_thread.values())
    for thread_events in threads:
        # Two stable sorts by key functions: cheaper than one by a tuple key, and nearly free
        # on events that arrive in order.
        thread_events.sort(key=_negative_end)
        thread_events.sort(key=_START)
    return threads


_START = operator.attrgetter("start")
_NAME = operator.attrgetter("name")
_launch_time = operator.itemgetter(0)


def _gpu_start(pair: tuple[int, RawEvent]) -> int:
    return pair[1].start


def _negative_end(e: RawEvent) -> int:
    return -e.end


def _parents(ops: Sequence[RawEvent]) -> dict[RawEvent, RawEvent | None] | None:
    """Each op's innermost enclosing op (None for a root); None where ``ops`` are not
    in nesting order on each thread (``_threads`` sorts them).

    Ranges nest by time on their thread, as in the op forest. Kineto's events come in that
    order, so one pass usually does.
    """
    parents: dict[RawEvent, RawEvent | None] = {}
    stacks: dict[int, list[RawEvent]] = {}
    thread: int | None = None
    stack: list[RawEvent] = []
    last_start, last_end = -1, 0
    for e in ops:
        if e.thread != thread:
            thread = e.thread
            stack = stacks.setdefault(thread, [])
            # The thread's last event is on top of its stack: every event is pushed.
            last_start, last_end = (stack[-1].start, stack[-1].end) if stack else (-1, 0)
        start, end = e.start, e.end
        if start < last_start or (start == last_start and end > last_end):
            return None
        last_start, last_end = start, end
        while stack and stack[-1].end < end:
            stack.pop()
        parents[e] = stack[-1] if stack else None
        stack.append(e)
    return parents


def _op_forest(
    threads: Sequence[Sequence[RawEvent]],
    launched: Sequence[tuple[RawEvent, int, Kernel | None, int]],
    device_recorded: bool,
) -> tuple[list[str], Callable[[str], Op]]:
    """The op tree of one call, from its ops per thread in nesting order (``_threads``), with
    kernels and device time."""
    nodes_by_event: dict[RawEvent, _OpNode] = {}
    roots: list[_OpNode] = []
    ordered_nodes: list[_OpNode] = []
    for thread_events in threads:
        stack: list[_OpNode] = []
        for e in thread_events:
            node = _OpNode(e)
            nodes_by_event[e] = node
            while stack and stack[-1].end < e.end:
                stack.pop()
            if stack:
                stack[-1].children.append(node)
            else:
                roots.append(node)
            stack.append(node)
            ordered_nodes.append(node)
    ordered_nodes.sort(key=lambda n: n.start)
    for op_event, position, kernel, gpu_ns in launched:
        launcher = nodes_by_event.get(op_event)
        if launcher is not None:
            if kernel is not None:
                launcher.kernels.append((position, kernel))
            launcher.self_device_ns += gpu_ns
    for root in roots:
        _sum_subtree(root)
    return _op_table(ordered_nodes, device_recorded)


def _sum_subtree(root: _OpNode) -> None:
    """Device time and kernels of each node's subtree, computed once, bottom-up.

    Iterative post-order: op trees of compiled graphs can be deeper than the recursion limit.
    """
    stack: list[tuple[_OpNode, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if not done:
            stack.append((node, True))
            stack.extend((child, False) for child in node.children)
            continue
        device_ns = node.self_device_ns
        below: list[tuple[int, Kernel]] = []
        for child in node.children:
            device_ns += child.device_ns
            below.extend(child.subtree_kernels)
        node.device_ns = device_ns
        if below:
            node.subtree_kernels = sorted(node.kernels + below, key=lambda pair: pair[0])


def _op_table(nodes: Sequence[_OpNode], device_recorded: bool) -> tuple[list[str], Callable[[str], Op]]:
    grouped: dict[str, list[_OpNode]] = {}
    for node in nodes:
        grouped.setdefault(node.name, []).append(node)

    def make(name: str) -> Op:
        group = grouped[name]
        cpu_ns = sum(n.end - n.start for n in group)
        self_cpu_ns = cpu_ns - sum(c.end - c.start for n in group for c in n.children)
        kernels = [k for n in group for _, k in n.subtree_kernels]
        first_children = tuple(c.name for c in group[0].children)
        return Op(
            name=name,
            count=len(group),
            cpu_time_us=cpu_ns / 1000.0,
            self_cpu_time_us=self_cpu_ns / 1000.0,
            child_names=first_children,
            children_vary=any(tuple(c.name for c in n.children) != first_children for n in group[1:]),
            kernels=KernelList(kernels, unavailable=None if device_recorded else _UNRECORDED),
            subtree_device_us=sum(n.device_ns for n in group) / 1000.0 if device_recorded else None,
            self_device_us=sum(n.self_device_ns for n in group) / 1000.0 if device_recorded else None,
        )

    return list(grouped), make


_UNRECORDED = "no GPU activity was recorded in this profile, so no op has kernels or device time"


def _check_sequences(steps: Sequence[_Step], made: Sequence[_CallKernels], allow_variation: bool) -> bool:
    first = made[0].names
    for step, call in zip(steps[1:], made[1:], strict=True):
        names = call.names
        if names != first:
            if allow_variation:
                return True
            raise KernelSequenceMismatchError(_sequence_diff(steps[0].index, first, step.index, names))
    return False


def _sequence_diff(a: int, a_names: list[str], b: int, b_names: list[str]) -> str:
    diff = difflib.unified_diff(
        [display_name(n) for n in a_names],
        [display_name(n) for n in b_names],
        fromfile=f"call {a}",
        tofile=f"call {b}",
        lineterm="",
        n=1,
    )
    return (
        f"the profiled calls launched different kernel sequences (call {a}: {len(a_names)} kernels, "
        f"call {b}: {len(b_names)} kernels). Raise warmup= if the first calls still compile or autotune, "
        "or pass allow_variation=True to keep per-call views.\n" + "\n".join(diff)
    )


def _median_call(calls: Sequence[CallProfile], made: Sequence[_CallKernels], syncs: SyncList) -> CallProfile:
    """The representative call: the first, with each duration the median over the calls
    (``syncs``: see ``_representative_syncs``).

    Its kernels are made here, once, from the first call's records (see ``_CallKernels``).
    """
    first = calls[0]
    kernels = first.kernels
    if kernels.measured:
        medians = [_median(list(same)) for same in zip(*(m.durations for m in made), strict=True)]
        kernels = KernelList(made[0].make(medians))
    representative = tuple(kernels) if kernels.measured else ()
    position: dict[int, int] = {}  # a kernel of the first call -> its index; filled on the first op read

    def make(name: str) -> Op:
        op = first.ops[name]
        same = [c.ops[name] for c in calls if name in c.ops]
        op_kernels = op.kernels
        if representative:
            if not position:
                position.update((id(k), i) for i, k in enumerate(first.kernels))
            op_kernels = KernelList([representative[position[id(k)]] for k in op.kernels])
        return replace(
            op,
            kernels=op_kernels,
            cpu_time_us=statistics.median(o.cpu_time_us for o in same),
            self_cpu_time_us=statistics.median(o.self_cpu_time_us for o in same),
            subtree_device_us=_median_or_none([o.subtree_device_us for o in same]),
            self_device_us=_median_or_none([o.self_device_us for o in same]),
        )

    memory = first.memory_ops
    names = [m.name for m in memory]
    if memory and all([m.name for m in c.memory_ops] == names for c in calls[1:]):
        memory = tuple(
            replace(ms[0], duration_us=_median([m.duration_us for m in ms]))
            for ms in zip(*(c.memory_ops for c in calls), strict=True)
        )
    return replace(first, kernels=kernels, memory_ops=memory, ops=OpTable(lambda: (first.ops.names, make)), syncs=syncs)


def _new_kernel(base: KernelName, fields: dict[str, Any]) -> Kernel:
    """A new Kernel: the fields of ``base`` (a decoded name, or a Kernel to copy) updated with
    ``fields``, without the frozen dataclass's ``__init__``.

    That ``__init__`` sets each field through ``object.__setattr__`` and costs about 3 us a
    kernel, the largest single cost of building a GPU profile (``dataclasses.replace``, for
    a median duration, 5x more). The instance is filled before anyone sees it, never
    changed after. ``test_build`` checks that every field is given and that the result
    equals the constructor's.
    """
    kernel = object.__new__(Kernel)
    state = kernel.__dict__
    state.update(base.__dict__)
    state.update(fields)
    return kernel


def _new_memory_op(
    name: str,
    kind: str,
    duration_us: float,
    stream: int | None,
    device: int | None,
    op: str | None,
    direction: str | None,
    host_memory: str | None,
    nbytes: int | None,
) -> MemoryOp:
    """A MemoryOp without the frozen dataclass's ``__init__`` (see ``_new_kernel``); a memset
    per call is common (optimizers, zeroed buffers). ``test_build`` compares it with the
    constructor's."""
    memory_op = object.__new__(MemoryOp)
    memory_op.__dict__.update(
        name=name,
        kind=kind,
        duration_us=duration_us,
        stream=stream,
        device=device,
        op=op,
        direction=direction,
        host_memory=host_memory,
        bytes=nbytes,
    )
    return memory_op


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def _median_or_none(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None
