"""The profile of a callable: each profiled call and the representative call."""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import VariedProfileError
from ..health import (
    NO_READINGS,
    REGION_PREFIX,
    TRACE_CANNOT_TELL_COMPILE,
    CompileFacts,
    CompileReport,
    MemoryReading,
    MemoryReport,
    compile_report,
    memory_report,
    region_ids,
)
from ..tables import format_us, plural, printable
from .gpu_time import Overlap, gpu_time_line, memory_ops_line, overlap_of
from .kernels import KernelList, MemoryOp
from .measured import MODULE_RANGE_PREFIX, NO_GPU_ACTIVITY, needs_measurement
from .ops import ModuleTable, ModuleView, OpTable
from .records import CopyList, RuntimeCalls, SyncList, advice
from .varied import names_differ, varied_kernels


@dataclass(frozen=True)
class CallProfile:
    """What one profiled call did.

    ``wall_us`` is the host span of the call (its ``ProfilerStep`` range). The GPU-side
    counts and times are read through properties that raise :class:`NoDeviceActivityError`
    where no GPU activity was recorded: "no launches" must not pass because nothing ran.
    """

    index: int
    kernels: KernelList
    memory_ops: tuple[MemoryOp, ...]
    ops: OpTable
    runtime: RuntimeCalls
    memory_reading: MemoryReading | None = None  # the allocator around this call, live on a GPU only
    syncs: SyncList = field(default_factory=lambda: SyncList(unavailable=_NOT_BUILT))
    wall_us: float = 0.0
    _launches: int = field(default=0, repr=False)
    _graph_launches: int = field(default=0, repr=False)
    _gpu_busy_us: float = field(default=0.0, repr=False)
    _gpu_work_us: float = field(default=0.0, repr=False)
    _gpu_idle: tuple[tuple[float, float], ...] = field(default=(), repr=False)

    @property
    def _unavailable(self) -> str | None:
        """Why no GPU activity was measured (None where some was): the reason its kernels give."""
        return self.kernels._unavailable

    def overlap(self) -> Overlap:
        """Communication time hidden under compute kernels in this call."""
        __tracebackhide__ = True
        return overlap_of(self.kernels)

    @property
    def compiled_regions(self) -> list[str]:
        """The compile id ("0/0") of each compiled frame this call entered, once per entry."""
        names = [name for name in self.ops.names if name.startswith(REGION_PREFIX)]
        return region_ids(names, {name: self.ops[name].count for name in names})

    @property
    @needs_measurement
    def memory(self) -> MemoryReport:
        """GPU memory of this call alone (see ``KernelProfile.memory``)."""
        return memory_report([self.runtime], [self.memory_reading], NO_READINGS)

    @property
    @needs_measurement
    def copies(self) -> CopyList:
        """The call's memcpys (``memory_ops`` without the memsets)."""
        return CopyList([m for m in self.memory_ops if m.kind == "memcpy"])

    @property
    @needs_measurement
    def launches(self) -> int:
        """Kernel launch calls (each graph launch counts one); memcpy/memset calls are not launches."""
        return self._launches

    @property
    @needs_measurement
    def graph_launches(self) -> int:
        """``cudaGraphLaunch``/``cuGraphLaunch`` calls."""
        return self._graph_launches

    @property
    @needs_measurement
    def gpu_busy_us(self) -> float:
        """Time within ``wall_us`` (the host span) when some kernel or memory op ran on the GPU
        (their union): what ``gpu_idle_fraction`` reads. Work still running after the host
        returned is left out, so it can be less than ``kernels.total_us``; ``gpu_work_us`` has it."""
        return self._gpu_busy_us

    @property
    @needs_measurement
    def gpu_work_us(self) -> float:
        """Time when some kernel or memory op of the call ran on the GPU (their union), wherever
        it ran: within the host span or after the host returned. ``kernels.total_us`` exceeds it
        only where kernels overlapped (several streams)."""
        return self._gpu_work_us

    @property
    @needs_measurement
    def gpu_idle_spans(self) -> tuple[tuple[float, float], ...]:
        """Where in the host span no kernel or memory op ran on the GPU: ``(start_us, end_us)``
        from the call's start (as ``Kernel.start_us``), in order, the wait for the first kernel
        included. What ``gpu_idle_fraction`` counts: their total is ``wall_us - gpu_busy_us``."""
        return self._gpu_idle

    @property
    def gpu_idle_fraction(self) -> float:
        """Share of the call's host span with no GPU work: ``1 - gpu_busy_us / wall_us``."""
        __tracebackhide__ = True
        busy = self.gpu_busy_us
        return 1.0 - busy / self.wall_us if self.wall_us > 0 else 0.0

    @functools.cached_property
    def modules(self) -> ModuleTable:
        """The ``nn.Module``s of the call, by name (profiles recorded with ``modules=True``).
        Made once: each ``module(name)`` reads it, and its names come from a pass over the ops."""
        __tracebackhide__ = True
        return ModuleTable(self.ops)

    def module(self, name: str) -> ModuleView:
        """One module of the call by its ``named_modules()`` name, e.g. ``"model.layers.3.mlp"``."""
        __tracebackhide__ = True
        return self.modules[name]

    def __repr__(self) -> str:
        return f"CallProfile(call {self.index}: {self.kernels!r})"

    def __str__(self) -> str:
        # print() gives the call's kernel table, as IPython does; unmeasured, the repr, which says so.
        return f"call {self.index}:\n{self.kernels.table()}" if self.kernels.measured else repr(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self) if cycle else str(self))


def _from_here(source: str) -> str:
    """A trace's path as the failure's section and the job summary name it: relative where it lies
    under the working folder (pytest's rootdir, where a suite runs from there), else as given. A
    trial saw the file's base name in the repr and its whole path in the section, then the whole
    path in the repr and the relative one in the section."""
    if not os.path.isabs(source):
        return source  # a relative path, or a callable's name (a live profile)
    try:
        relative = os.path.relpath(source)
    except ValueError:  # another drive (Windows)
        return source
    return source if relative.startswith(os.pardir) else relative


def fastest_of(calls: Sequence[CallProfile]) -> CallProfile:
    """The call with the shortest host span, the first such: the one call whose figures a profile's
    per-call totals report (``KernelProfile.fastest_call``). The calls run the same work, so a longer
    span is time the profiler or the machine added: call 0 holds the profiler's start-up (ms), and
    call 1 often its tail (on the recorded H100 and H200 traces of tests/data, call 1's span is up to
    3.7x call 2's). The median of three calls was that slower call, and a trial read its idle share
    as the program's. The fastest is the steady state, as ``timeit`` reports its best run."""
    return min(calls, key=lambda call: call.wall_us)


def fastest_call_words(prof: KernelProfile) -> str:
    """``call 2, numbered from 0, the fastest of 3 by host span``: which call a profile's per-call
    figures are, in the words of every output that names it (a failure's line, ``kernelprof
    show``'s head). Numbered from 0, as ``prof.calls[i]``: "call 1 of 3" alone read as the first."""
    return f"call {prof.fastest_call.index}, numbered from 0, the fastest of {len(prof.calls)} by host span"


_NOT_BUILT = "this CallProfile was made without host syncs; profiles from the builder have them"


@dataclass(frozen=True)
class KernelProfile:
    """One representative call of a profiled callable, plus each call on its own.

    The representative call (``call``, whose kernels ``kernels`` holds) has the kernel sequence
    the calls launched (the same in each, or building the profile failed unless variation was
    allowed), each kernel's duration its median over all calls; the call-level figures (launches,
    host span, GPU busy and idle, syncs) are the fastest call's by host span (``fastest_call``,
    "call 2, numbered from 0, the fastest of 3" in every output: ``fastest_call_words``).
    """

    call: CallProfile
    calls: tuple[CallProfile, ...]
    device: str | None = None
    arch: str | None = None
    source: str = "live"
    varied: bool = False
    has_device_activity: bool = False
    compile_facts: CompileFacts | None = field(default=None, repr=False)  # live only
    # The call whose memory ops the representative call holds, where the calls made different
    # ones; None where they made the same (each duration then their median). Decided by the
    # builder, which chose them (assemble's representative_memory).
    memory_from: int | None = field(default=None, repr=False)

    @property
    def _unavailable(self) -> str | None:
        return self.call._unavailable

    @property
    def device_label(self) -> str | None:
        """The card as every output names it, its arch after it: ``NVIDIA H200 (sm90)``; the name
        alone where the trace gives no arch; None where it names no card."""
        if not self.device:
            return None
        return f"{self.device} ({self.arch})" if self.arch else self.device

    @property
    def kernels(self) -> KernelList:
        """The representative call's kernels, each duration its median over the calls. Where the
        calls launched different kernel sequences (``varied``, let through by
        ``allow_variation=True``) no one list answers for them all, and answering for the first
        call would pass a test on the others' behalf: a :class:`VariedProfileError` that says how
        they differ and to ask ``calls[i].kernels``, or every call."""
        __tracebackhide__ = True
        if self.varied:
            raise VariedProfileError(varied_kernels(self.calls))
        return self.call.kernels

    @functools.cached_property
    def compile(self) -> CompileReport:
        """What torch.compile did: frames, graph breaks, recompiles, compiled regions per call."""
        return compile_report([c.compiled_regions for c in self.calls], self.compile_facts, TRACE_CANNOT_TELL_COMPILE)

    @property
    @needs_measurement
    def memory(self) -> MemoryReport:
        """GPU memory per call: peak and retained bytes (live), cudaMalloc/cudaFree calls.

        Raises :class:`NoDeviceActivityError` where no GPU work was recorded.
        """
        return memory_report([c.runtime for c in self.calls], [c.memory_reading for c in self.calls], NO_READINGS)

    @needs_measurement
    def require_device_activity(self) -> None:
        """Raise :class:`NoDeviceActivityError`, with the reason, unless GPU activity was recorded.

        For code that reads no kernel itself but must not pass on a profile of nothing (a
        baseline check, a benchmark); ``has_device_activity`` is the same question as a bool.
        """

    @property
    @needs_measurement
    def memory_ops(self) -> tuple[MemoryOp, ...]:
        """The memcpys and memsets of the representative call, chosen as ``copies`` are."""
        return self.call.memory_ops

    @property
    def ops(self) -> OpTable:
        """The representative call's CPU ops: each op's times its median over the calls (the first
        call's own where the calls varied, as its table's headers say). Where the
        calls ran different ops (by name), a :class:`VariedProfileError`: ``"aten::x" not in
        prof.ops`` must not pass on the first call's word while another call ran it."""
        __tracebackhide__ = True
        if self._ops_differ is not None:
            raise VariedProfileError(self._ops_differ)
        return self.call.ops

    @functools.cached_property
    def _ops_differ(self) -> str | None:
        """How the calls' op names differ (None where every call ran the same ops): worked out
        once, as it loads every call's op table."""
        return names_differ(self.calls, "ops", lambda name: True)

    @functools.cached_property
    def _modules_differ(self) -> str | None:
        """How the calls' modules differ (None where every call ran the same ones): module ranges
        are ops, so only where the ops differ."""
        if self._ops_differ is None:
            return None
        return names_differ(self.calls, "modules", lambda name: name.startswith(MODULE_RANGE_PREFIX))

    @property
    def runtime(self) -> RuntimeCalls:
        """CUDA runtime and driver calls of one call, by name; reads raise
        :class:`NoDeviceActivityError` where nothing was measured (see :class:`RuntimeCalls`)."""
        return self.call.runtime

    @property
    def syncs(self) -> SyncList:
        """Host syncs per call. Where the calls synced alike: the fastest call's (``fastest_call``),
        its own host times, as ``kernelprof show`` and the timeline page give them; where they
        did not: the call with the most syncs, so that a sync in any call fails
        ``assert not prof.syncs`` (``calls[i].syncs`` has each)."""
        return self.call.syncs

    @property
    def copies(self) -> CopyList:
        """The memcpys of the representative call. Where the calls copied alike: the first
        call's, each duration the median over calls; where they did not: those of the call with
        the most DtoH copies (then the most copies, then the most memory ops), so that a copy any
        call made fails ``assert not prof.copies`` and a ``dtoh_copies`` rule (``calls[i].copies``
        has each). A failed query's table says which."""
        __tracebackhide__ = True
        copies = self.call.copies
        if len(self.calls) == 1:
            return copies
        if self.memory_from is None:
            times = f"each one's median over the {len(self.calls)} calls"
        else:
            times = f"call {self.memory_from}'s, the call with the most DtoH copies: the calls copied differently"
        return CopyList(copies, times=times, medians=self.memory_from is None)

    @property
    def fastest_call(self) -> CallProfile:
        """The call whose figures the per-call totals report (``launches``, ``wall_us``,
        ``gpu_busy_us``, ``gpu_work_us``, ``gpu_idle_fraction``, and the kernel time that
        ``kernelprof show`` and the JUnit ``kernel_us`` print beside them): the call with the
        shortest host span, the first such (``fastest_of`` says why the fastest).

        One call, so that no two of those figures contradict each other: figures taken one by one
        from different calls disagree (GPU work below kernel time, busy time of another call's
        span). Each kernel's ``duration_us`` in ``prof.kernels`` is still that kernel's own median
        over the calls: GPU time, which the profiler's start-up does not stretch."""
        return fastest_of(self.calls)

    @property
    @needs_measurement
    def launches(self) -> int:
        """Kernel launch calls of the fastest call (``fastest_call``); a graph launch counts one."""
        return self.fastest_call.launches

    @property
    @needs_measurement
    def graph_launches(self) -> int:
        """Graph launch calls of the fastest call (``fastest_call``)."""
        return self.fastest_call.graph_launches

    @property
    def wall_us(self) -> float:
        """Host span of the fastest call (``fastest_call``): the shortest host span over the calls."""
        return self.fastest_call.wall_us

    @property
    @needs_measurement
    def gpu_busy_us(self) -> float:
        """GPU busy time within the fastest call's host span (union of kernels and memory ops);
        see ``fastest_call`` and ``CallProfile.gpu_busy_us``."""
        return self.fastest_call.gpu_busy_us

    @property
    @needs_measurement
    def gpu_work_us(self) -> float:
        """GPU busy time of the fastest call's work wherever it ran (union of kernels and memory
        ops, not cut at the host span); see ``fastest_call`` and ``CallProfile.gpu_work_us``."""
        return self.fastest_call.gpu_work_us

    @property
    @needs_measurement
    def gpu_idle_fraction(self) -> float:
        """Share of the fastest call's host span with no GPU work (see ``fastest_call``)."""
        return self.fastest_call.gpu_idle_fraction

    @property
    def modules(self) -> ModuleTable:
        """The ``nn.Module``s of the representative call (recorded with ``modules=True``); where the
        calls ran different modules, a :class:`VariedProfileError`, as ``ops``."""
        __tracebackhide__ = True
        if self._modules_differ is not None:
            raise VariedProfileError(self._modules_differ)
        return self.call.modules

    def module(self, name: str) -> ModuleView:
        """One module by name: ``prof.module("model.layers.3.mlp").kernels``."""
        __tracebackhide__ = True
        return self.modules[name]

    def overlap(self) -> Overlap:
        """Communication time hidden under compute, the median over the calls (by fraction).

        For a test such as "DDP overlaps its gradient all-reduce with backward":
        ``assert prof.overlap().fraction > 0.5``.
        """
        __tracebackhide__ = True
        per_call = []
        for call in self.calls:  # a loop, not a generator: its frame would show in a failure
            per_call.append(call.overlap())
        per_call.sort(key=lambda o: o.fraction)
        return per_call[len(per_call) // 2]

    def table(self, *, kernels: str | None = None, ops: bool = True) -> str:
        """The profile as text: where it came from, its kernel table, then its memory ops,
        launches, host span and syncs. ``kernels``: a line to put in place of the kernel table
        (a report that has shown that table already says so). A profile without GPU activity has
        its op table instead, unless ``ops`` is False (a report that shows it marked, after)."""
        where = self._where()
        # The trace's path, as any name is shown: a file named with a newline must not start a line.
        head = f"KernelProfile from {printable(self.source)}{where}: {plural(len(self.calls), 'call')}"
        if self.varied:
            head += ", calls launched different kernel sequences"
        elif len(self.calls) > 1 and self.has_device_activity:
            head += " (each kernel's time its median over them)"
        if not self.has_device_activity:
            reason = self._unavailable or "no GPU activity"  # each reason says "no GPU activity" itself
            return f"{head}\n{reason}" + (f"\n{self.call.ops.table()}" if ops else "")
        # In the words `kernelprof show` uses, not a "+ N" line: under a baseline's diff a
        # leading "+" read as one more added kernel. None is left unsaid, as in a failure's every
        # other line but the host syncs'; where the calls made different ones, whose they are.
        whose = "" if self.memory_from is None else f" (call {self.memory_from}'s: the calls made different ones)"
        memory = f"\n{memory_ops_line(self.call, whose)}"  # "none" said: left out read as not reported (a trial)
        table = self.call.kernels.table() if kernels is None else kernels
        return f"{head}\n{table}{memory}\n{self.host_summary()}"

    def host_summary(self) -> str:
        """Launches, kernel time, host span, GPU idle share and the host syncs, as the profile
        table ends: one call's figures, the fastest call's, named where there are several; then
        a ``to fix:`` line per cause of the syncs and the copies.

        The kernel table above it is ``prof.kernels``, each kernel's median over the calls (or
        the first call's, where they varied), whose sum is no call's kernel time: where the two
        differ as shown, the line gives the table's sum beside the call's, each named, so that
        neither reads as a miscount of the other."""
        fastest = self.fastest_call
        graphs = f" ({fastest.graph_launches} graph)" if fastest.graph_launches else ""
        launches = f"{fastest.launches} launch{'' if fastest.launches == 1 else 'es'}"
        # The one call whose figures these are, named where there are several: "per call (call 1,
        # ...)" read as figures typical of every call, or averaged (a trial).
        which = "per call" if len(self.calls) == 1 else fastest_call_words(self)
        kernels = f"{format_us(fastest.kernels.total_us)}us in kernels"
        table_us = format_us(self.call.kernels.total_us)
        if len(self.calls) > 1 and table_us != format_us(fastest.kernels.total_us):
            table = (
                "the table's medians add" if self.call.kernels.times else f"the table, call {self.call.index}'s, adds"
            )
            kernels += f" ({table} to {table_us}us)"
        line = f"{which}: {launches}{graphs}, {kernels}, {gpu_time_line(fastest)}"
        syncs, whose = self._summary_syncs(fastest)
        # What would remove the syncs and the copies' cost, said here once: under the table the
        # failure's report shows, not in the reprs pytest prints twice (``assert not prof.syncs``).
        fixes = "".join(f"\n{fix}" for fix in advice(syncs, self.copies))
        if not syncs:
            return f"{line}, no host syncs{fixes}"
        return f"{line}, {plural(len(syncs), 'host sync')}{whose}:\n{syncs.table()}{fixes}"

    def _summary_syncs(self, fastest: CallProfile) -> tuple[SyncList, str]:
        """The syncs under the line that names ``fastest``: its own where the calls synced alike
        (which ``syncs`` is then too); else ``syncs``, the call with the most, and a note that
        says whose they are."""
        shapes = {tuple((s.call, s.kind, s.ops) for s in c.syncs) for c in self.calls if c.syncs.measured}
        if len(shapes) <= 1 or len(self.calls) == 1:
            return (fastest.syncs if fastest.syncs.measured else self.syncs), ""
        most = max(self.calls, key=lambda c: len(c.syncs) if c.syncs.measured else -1)
        return self.syncs, f" (call {most.index}'s, the call with the most: the calls synced differently)"

    def _where(self) -> str:
        """Where the profile ran, as its table's head and its repr say it after its source."""
        named = f" on {self.device_label}" if self.device_label else ""
        if not self.has_device_activity:
            # As `kernelprof show` and the timeline page say it: "no GPU named" read as device
            # metadata gone missing, where no GPU work was recorded at all (a CPU run).
            return f"{named}, CPU only ({NO_GPU_ACTIVITY})"
        # "no GPU named" is true of one case only: GPU activity in a trace that names no card (its
        # deviceProperties missing). A GPU ran; its name is what is unknown. ("on no GPU" read oddly.)
        return named or ", no GPU named"

    def __repr__(self) -> str:
        # One line, as KernelList's; the table is table(), and what IPython shows.
        label = _from_here(self.source)
        calls = plural(len(self.calls), "call")
        if not self.has_device_activity:
            return f"KernelProfile({label!r}{self._where()}, {calls})"
        return f"KernelProfile({label!r}{self._where()}: {plural(len(self.call.kernels), 'kernel')} per call, {calls})"

    def __str__(self) -> str:
        return self.table()  # print() gives the table, as IPython does

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self) if cycle else str(self))
