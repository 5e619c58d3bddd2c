"""``build_profile``: raw events -> KernelProfile, the one builder for live sessions and
saved traces. It runs the passes in order: events to steps (``steps``) and the completeness
checks (``complete``), GPU records to kernels and memory ops (``kernels``), CPU ops to the op forest
(``optree``), syncs, stacks and busy time (``syncs``), and the medians of the representative
call (``steps``).
"""

from __future__ import annotations

import functools
import operator
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from ..decode import BUILT_IN, Decoder
from ..decode.sync_calls import FlaggedSync
from ..decode.triton_ir import IrFacts
from ..errors import hide_own_errors
from ..health import CompileFacts, MemoryReading
from ..model import CallProfile, KernelList, KernelProfile, Op, OpTable, OpTreeNode, RuntimeCalls, SyncList
from ..traces import RawEvent, Source
from ..traces.records import paused_gc
from .complete import check_recorded, check_records_complete
from .kernels import CallKernels, call_records
from .optree import op_forest, ops_by_thread
from .steps import (
    RuntimeNames,
    Step,
    check_sequences,
    median_call,
    no_activity_reason,
    representative_memory,
    sort_events,
)
from .syncs import busy_ns, host_syncs, idle_ns, representative_syncs, user_stacks, work_ns


def build_profile(
    events: Sequence[RawEvent],
    source: Source,
    *,
    allow_variation: bool = False,
    check_complete: bool = True,
    memory: Sequence[MemoryReading] | None = None,
    compile_facts: CompileFacts | None = None,
    flagged_syncs: Mapping[int, Sequence[FlaggedSync]] | None = None,
    decoder: Decoder = BUILT_IN,
    from_trace: bool = False,
) -> KernelProfile:
    """Turn raw events into a KernelProfile: one call per ``ProfilerStep#N`` annotation.

    ``memory`` (one reading per profiled call) and ``compile_facts`` are what a live capture
    saw beside the events; a reading list that does not match the calls is not used.
    ``flagged_syncs`` are the syncs torch's sync debug mode warned about live, by call
    index: they give the syncs of those calls their exact line. ``decoder`` decodes the
    kernels (what the user taught first, then the built-in evidence). ``from_trace``: the events
    were read from a file, which errors take into account in what they advise.
    """
    __tracebackhide__ = hide_own_errors  # the builder's own errors fail at the test's line
    check_recorded(events, source)
    steps, runtime_by_corr, ops_by_id, gpu_events, stacks = sort_events(events)
    gpu_seen = bool(gpu_events)
    unavailable = None if gpu_seen else no_activity_reason(source, from_trace)

    runtime_names = RuntimeNames()
    if check_complete and source.gpu_requested:
        check_records_complete(steps, gpu_events, runtime_names, runtime_by_corr)

    readings = memory if memory is not None and len(memory) == len(steps) else [None] * len(steps)
    flagged = flagged_syncs or {}
    triton_ir = dict(source.triton_ir)
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
            triton_ir,
            decoder,
        )
        for step, reading in zip(steps, readings, strict=True)
    ]
    calls = [call for call, _ in built]
    made = [kernels for _, kernels in built]
    varied = check_sequences(steps, made, allow_variation, from_trace) if gpu_seen else False
    memory_from = None
    if len(calls) == 1:
        representative = calls[0]
    elif varied:
        memory_ops, memory_from = representative_memory(calls)
        representative = replace(calls[0], memory_ops=memory_ops, syncs=representative_syncs(calls, unavailable))
    else:
        memory_ops, memory_from = representative_memory(calls)
        representative = median_call(calls, made, representative_syncs(calls, unavailable), memory_ops)
    return KernelProfile(
        call=representative,
        calls=tuple(calls),
        device=source.device,
        arch=source.arch,
        source=source.label,
        varied=varied,
        has_device_activity=gpu_seen,
        compile_facts=compile_facts,
        memory_from=memory_from,
    )


_NAME = operator.attrgetter("name")


def _build_call(
    step: Step,
    ops_by_id: Mapping[int, RawEvent],
    runtime_by_corr: Mapping[int, RawEvent],
    unavailable: str | None,
    stacks: bool,
    flagged: Sequence[FlaggedSync],
    runtime_names: RuntimeNames,
    reading: MemoryReading | None = None,
    triton_kernels: frozenset[str] = frozenset(),
    triton_ir: Mapping[str, IrFacts] | None = None,
    decoder: Decoder = BUILT_IN,
) -> tuple[CallProfile, CallKernels]:
    records, launchers, memory = call_records(step, ops_by_id, runtime_by_corr)

    def frames() -> list[tuple[str, ...] | None]:
        return user_stacks(step, [runtime_by_corr.get(g.correlation) for g in records])

    call_kernels = CallKernels(
        step, records, launchers, frames if stacks else None, triton_kernels, triton_ir or {}, decoder
    )

    @functools.cache
    def forest() -> tuple[list[str], Callable[[str], Op], Callable[[], tuple[OpTreeNode, ...]]]:
        launched = call_kernels.launched()
        with paused_gc():  # built lazily, outside build_profile's pause
            return op_forest(ops_by_thread(step.ops), launched, unavailable is None)

    def load_ops() -> tuple[list[str], Callable[[str], Op]]:
        names, make, _ = forest()
        return names, make

    def load_tree() -> tuple[OpTreeNode, ...]:
        with paused_gc():
            return forest()[2]()

    runtime = dict(Counter(map(_NAME, step.runtime)))
    kinds = [(runtime_names[name], count) for name, count in runtime.items()]
    may_sync = {name for name in runtime if runtime_names[name][2]}
    call = CallProfile(
        index=step.index,
        kernels=KernelList.deferred(call_kernels.own, unavailable=unavailable),
        memory_ops=tuple(memory),
        ops=OpTable(load_ops, load_tree, call=step.index),
        runtime=RuntimeCalls(runtime, unavailable=unavailable),
        memory_reading=reading,
        syncs=SyncList(host_syncs(step, stacks, flagged, may_sync), unavailable=unavailable, call=step.index),
        wall_us=(step.end - step.start) / 1000.0,
        _launches=sum(count for (kernel, _, _), count in kinds if kernel),
        _graph_launches=sum(count for (_, graph, _), count in kinds if graph),
        _gpu_busy_us=busy_ns(step, records) / 1000.0,
        _gpu_idle=tuple(((a - step.start) / 1000.0, (b - step.start) / 1000.0) for a, b in idle_ns(step, records)),
        _gpu_work_us=work_ns(records) / 1000.0,
    )
    return call, call_kernels
