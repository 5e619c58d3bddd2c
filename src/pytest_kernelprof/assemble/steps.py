"""Events -> steps, and the medians of the representative call (the completeness checks are
``complete.py``'s).

A step is one profiled call (its ``ProfilerStep#N`` range): the passes after this one read
its CPU ops, runtime calls, Python frames and GPU records.
"""

from __future__ import annotations

import bisect
import difflib
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple, Protocol

from ..decode.sync_calls import api_name, sync_kind
from ..errors import KernelSequenceMismatchError, hide_own_errors
from ..model import CallProfile, Kernel, KernelList, MemoryOp, Op, OpTable, SyncList
from ..tables import changed_parts, display_name, printable
from ..traces import (
    ANNOTATION,
    GPU_CATEGORIES,
    OP,
    PYTHON,
    RUNTIME,
    STEP_PREFIX,
    RawEvent,
    Source,
    is_graph_launch,
    is_kernel_launch,
)


@dataclass
class Step:
    index: int
    start: int
    end: int
    ops: list[RawEvent]
    runtime: list[RawEvent]
    gpu: list[tuple[int, RawEvent]]  # (launch time, record)
    python: list[RawEvent] = field(default_factory=list)  # frames begun inside the step


def _steps(events: Sequence[RawEvent]) -> tuple[list[Step], bool]:
    """One step per ``ProfilerStep#N`` mark, and whether there were marks (else one step for all)."""
    marks = sorted(
        (e for e in events if e.category == ANNOTATION and e.name.startswith(STEP_PREFIX)), key=lambda e: e.start
    )
    if not marks:
        cpu = [e for e in events if e.category in (OP, ANNOTATION, RUNTIME)] or list(events)
        if not cpu:
            return [Step(0, 0, 0, [], [], [])], False
        return [Step(0, min(e.start for e in cpu), max(e.end for e in cpu), [], [], [])], False
    return [Step(i, m.start, m.end, [], [], []) for i, m in enumerate(marks)], True


def _step_of(starts: list[int], steps: list[Step], time: int) -> Step | None:
    i = bisect.bisect_right(starts, time) - 1
    if i >= 0 and time <= steps[i].end:
        return steps[i]
    return None


class SortedEvents(NamedTuple):
    """A session's events sorted into steps, and the indexes that later passes look records up in."""

    steps: list[Step]
    runtime_by_corr: dict[int, RawEvent]  # runtime calls by correlation id
    ops_by_id: dict[int, RawEvent]  # CPU ops and user ranges by their own id
    gpu_events: list[RawEvent]  # every GPU record, in or outside a step
    stacks: bool  # whether Python frames were recorded (with_stack=True)


def sort_events(events: Sequence[RawEvent]) -> SortedEvents:
    """One step per ``ProfilerStep#N`` mark (one for all events without marks), each with its
    CPU ops, runtime calls, Python frames and, by launch time, GPU records."""
    steps, marked = _steps(events)
    starts = [s.start for s in steps]
    single = not marked
    runtime_by_corr: dict[int, RawEvent] = {}
    ops_by_id: dict[int, RawEvent] = {}
    gpu_events: list[RawEvent] = []
    stacks = False
    # Events come mostly in time order: the step of the last one is tried before a search.
    step: Step | None = steps[0]
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

    return SortedEvents(steps, runtime_by_corr, ops_by_id, gpu_events, stacks)


def no_activity_reason(source: Source, from_trace: bool = False) -> str:
    """Why ``source`` holds no GPU record, in the terms of where it came from: a live capture
    (``from_trace`` false) ran a callable, a trace file ran nothing here."""
    if not source.gpu_requested:
        return (
            "no GPU activity was recorded because CUDA is not available: only CPU ops were profiled. "
            "In a pytest suite, mark GPU tests with @pytest.mark.gpu so that they skip here."
        )
    if source.unread:
        held = ", ".join(f"{count} '{category}'" for category, count in source.unread[:5])
        return (
            f"no GPU activity in this trace: it holds no GPU kernel, memcpy or memset records ('kernel', "
            f"'gpu_memcpy', 'gpu_memset' events, what CUDA and ROCm profiles hold) but {held} events, "
            "which this plugin does not read (another accelerator's, such as MTIA's?)"
        )
    if from_trace:
        trace = printable(source.label)
        ops = "Its CPU ops (prof.ops) can be queried as they are."
        if source.device is None:
            return (
                f"{trace} recorded no GPU activity: it holds no kernel, memcpy or memset records and names no "
                "GPU (a CPU-only profile, recorded where CUDA was not available). Record the trace on a GPU "
                f"to query its kernels. {ops}"
            )
        return (
            f"{trace} recorded no GPU activity, though it was recorded on {source.device}: it holds no kernel, "
            "memcpy or memset records (the profiled code launched no GPU work, its tensors on the CPU?, or "
            f"CUPTI recorded nothing: another CUPTI client such as nsys/ncu attached). {ops}"
        )
    return (
        "the profiler recorded no GPU activity: the callable launched no GPU work (are its tensors on "
        "the CPU?) or CUPTI recorded nothing (another CUPTI client such as nsys/ncu attached, or "
        "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES; see the profiler's warnings)"
    )


class RuntimeNames(dict[str, tuple[bool, bool, bool]]):
    """(kernel launch, graph launch, may sync) by runtime call name, worked out once per name
    and build: every call repeats the same few names."""

    def __missing__(self, name: str) -> tuple[bool, bool, bool]:
        facts = self[name] = (
            is_kernel_launch(name),
            is_graph_launch(name),
            sync_kind(name, None) is not None or _may_copy(name),
        )
        return facts


def _may_copy(name: str) -> bool:
    """Whether a runtime call is a copy, which syncs or not by its memcpy record."""
    return api_name(name).startswith(("cudaMemcpy", "cuMemcpy"))


class CallRecords(Protocol):
    """The GPU records of one call, as the sequence check and the medians read them: kernel
    names and durations, and the call's kernels made with other durations (``CallKernels``)."""

    @property
    def names(self) -> list[str]: ...

    @property
    def durations(self) -> list[float]: ...

    def make(self, durations: Sequence[float] | None) -> list[Kernel]: ...


def check_sequences(
    steps: Sequence[Step], made: Sequence[CallRecords], allow_variation: bool, from_trace: bool = False
) -> bool:
    __tracebackhide__ = hide_own_errors
    first = made[0].names
    for step, call in zip(steps[1:], made[1:], strict=True):
        names = call.names
        if names != first:
            if allow_variation:
                return True
            raise KernelSequenceMismatchError(_sequence_diff(steps[0].index, first, step.index, names, from_trace))
    return False


def _sequence_diff(a: int, a_names: list[str], b: int, b_names: list[str], from_trace: bool = False) -> str:
    diff = difflib.unified_diff(
        [display_name(n) for n in a_names],
        [display_name(n) for n in b_names],
        fromfile=f"call {a}",
        tofile=f"call {b}",
        lineterm="",
        n=1,
    )
    fix = (
        "Pass allow_variation=True to load_trace to read it with per-call views, or record it with more "
        "warm-up calls if the first ones still compiled or autotuned."
        if from_trace
        else "Raise warmup= if the first calls still compile or autotune, or pass allow_variation=True to keep "
        "per-call views."
    )
    lines = list(diff)
    if not lines:  # the shown names are alike: the difference is in what shortening leaves out
        lines = [
            f"#{i}: {display_name(x)}, in a part the shown names leave out: {changed_parts(x, y)}"
            for i, (x, y) in enumerate(zip(a_names, b_names, strict=False))
            if x != y
        ][:5]
    return (
        f"the profiled calls launched different kernel sequences (call {a}: {len(a_names)} kernels, "
        f"call {b}: {len(b_names)} kernels). {fix}\n" + "\n".join(lines)
    )


def median_call(
    calls: Sequence[CallProfile], made: Sequence[CallRecords], syncs: SyncList, memory_ops: tuple[MemoryOp, ...]
) -> CallProfile:
    """The representative call: the first, with each duration the median over the calls
    (``syncs``: see ``representative_syncs``; ``memory_ops``: ``representative_memory``).

    Its kernels are made here, once, from the first call's records (see ``kernels.CallKernels``).
    """
    first = calls[0]
    kernels = first.kernels
    if kernels.measured:
        medians = [median(list(same)) for same in zip(*(m.durations for m in made), strict=True)]
        kernels = KernelList(made[0].make(medians), times=f"each kernel's median over the {len(calls)} calls")
    representative = tuple(kernels) if kernels.measured else ()
    position: dict[int, int] = {}  # a kernel of the first call -> its index; filled on the first op read

    def make(name: str) -> Op:
        op = first.ops[name]
        same = [c.ops[name] for c in calls if name in c.ops]
        op_kernels = op.kernels
        if representative:
            if not position:
                position.update((id(k), i) for i, k in enumerate(first.kernels))
            numbers = [position[id(k)] for k in op.kernels]
            op_kernels = KernelList([representative[n] for n in numbers], times=kernels.times, positions=numbers)
        return replace(
            op,
            kernels=op_kernels,
            cpu_time_us=statistics.median(o.cpu_time_us for o in same),
            self_cpu_time_us=statistics.median(o.self_cpu_time_us for o in same),
            subtree_device_us=_median_or_none([o.subtree_device_us for o in same]),
            self_device_us=_median_or_none([o.self_device_us for o in same]),
        )

    ops = OpTable(lambda: (first.ops.names, make), medians=len(calls))
    return replace(first, kernels=kernels, memory_ops=memory_ops, ops=ops, syncs=syncs)


def representative_memory(calls: Sequence[CallProfile]) -> tuple[tuple[MemoryOp, ...], int | None]:
    """The memory ops of the representative call. Where the calls made the same ones: the
    first call's, each duration the median over the calls; where they did not: those of the
    call with the most DtoH copies, then the most copies, then the most memory ops (the first
    such call), as ``representative_syncs`` takes the call with the most syncs: a copy that
    any call made fails ``assert not prof.copies``, a ``dtoh_copies`` rule and a baseline
    (``calls[i].memory_ops`` has each call's). With them, the index of the call they are from
    where the calls differed, None where they were alike (``KernelProfile.memory_from``)."""
    first = calls[0].memory_ops
    names = [m.name for m in first]
    if all([m.name for m in c.memory_ops] == names for c in calls[1:]):
        medians = tuple(
            replace(ms[0], duration_us=median([m.duration_us for m in ms]))
            for ms in zip(*(c.memory_ops for c in calls), strict=True)
        )
        return medians, None
    most = max(calls, key=lambda c: _copy_weight(c.memory_ops))
    return most.memory_ops, most.index


def _copy_weight(memory: Sequence[MemoryOp]) -> tuple[int, int, int]:
    copies = [m for m in memory if m.kind == "memcpy"]
    return sum(m.direction == "DtoH" for m in copies), len(copies), len(memory)


def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def _median_or_none(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None
