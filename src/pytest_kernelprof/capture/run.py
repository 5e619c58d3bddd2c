"""Run a callable under torch.profiler: warm-up, synchronisation, one step per call; or the
body of a ``with kernelprof.record()`` block, a step per ``rec.step()``.

A capture ends with a ``CapturedSession``: the events and what was read beside them. It builds
nothing: ``api/`` builds the profile from the session.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..decode import parse_kernel_name
from ..decode.sync_calls import FlaggedSync
from ..decode.triton_ir import IrFacts
from ..errors import RecordingError
from ..health import CompileFacts, MemoryReading
from ..options import DEFAULTS, ProfileOptions
from ..running import keeps_traces
from ..traces import KERNEL, STEP_PREFIX, RawEvent, Source
from ..traces.records import paused_gc
from .compile_watch import watch_compiles
from .guards import annotate, check_callable, check_result, check_steps, interrupted
from .inductor_kernels import inductor_ir_facts
from .meter import AllocatorMeter, meter_for
from .module_ranges import module_ranges, resolve_model
from .profiler import (
    device_facts,
    import_torch,
    profiler_running,
    profiler_session,
    raw_events,
    synchronize,
    synchronizer,
)
from .session_traces import guard_exports
from .sync_lines import SyncLines, flagging_syncs
from .triton_kernels import ir_facts, learn_triton_kernels, watch_triton_launches


@dataclass(frozen=True)
class CapturedSession:
    """What a finished session recorded, for ``api/`` to build a profile from.

    ``events``: the session's RawEvents; ``source``: where they came from (device, label,
    the Triton kernels learned); ``memory``: one allocator reading per profiled call (None
    without CUDA); ``compile_facts``: what compiled before and during the profiled calls;
    ``flagged_syncs``: the lines torch's sync debug mode flagged, by call (None unless
    ``stacks``); ``torch_profiler``: the session, for trace export; ``learned``: what goes
    into an exported trace's ``"kernelprof"`` key.
    """

    events: list[RawEvent]
    source: Source
    torch_profiler: Any
    memory: Sequence[MemoryReading] | None = None
    compile_facts: CompileFacts | None = None
    flagged_syncs: Mapping[int, Sequence[FlaggedSync]] | None = None
    learned: Mapping[str, Any] = field(default_factory=dict)


INDUCTOR_PREFIX = "triton_"  # triton_poi_, triton_red_, triton_tem_, ... and the older triton__0d1d


def _source(label: str, triton_kernels: frozenset[str], triton_ir: Mapping[str, IrFacts]) -> Source:
    device, arch = device_facts()
    return Source(
        label=label,
        device=device,
        arch=arch,
        gpu_requested=device is not None,
        triton_kernels=triton_kernels,
        triton_ir=tuple(sorted(triton_ir.items())),
    )


@contextlib.contextmanager
def _watched(model: Any | None) -> Iterator[Any]:
    """The profiled stretch: Triton's launch hook, and module ranges where ``model`` is given;
    both removed on every path out. Yields the Triton watch."""
    with contextlib.ExitStack() as stack:
        watch = stack.enter_context(watch_triton_launches())
        if model is not None:
            stack.enter_context(module_ranges(model, import_torch()))
        yield watch


def _learned_triton(events: list[RawEvent], launched: set[str]) -> frozenset[str]:
    """The Triton kernels of a finished session (see ``triton_kernels.py``)."""
    unaccounted = {e.name for e in events if e.category == KERNEL and parse_kernel_name(e.name).family == "unknown"}
    return learn_triton_kernels(launched, unaccounted)


def _read_ir(events: list[RawEvent], triton: frozenset[str], since: int) -> dict[str, IrFacts]:
    """What the compiled IR of the session's Triton kernels shows: for a user's own and Liger's,
    read from Triton's JIT caches once per kernel name in the process; for Inductor's, whose
    names say their kind but no dtype, from Inductor's autotuners (``inductor_kernels.py``;
    ``since``: the modules loaded when the capture began)."""
    ir = ir_facts(name for name in sorted(triton) if not name.startswith(INDUCTOR_PREFIX))
    names = {e.name for e in events if e.category == KERNEL}
    generated = {n for n in names if (d := parse_kernel_name(n)).family == "inductor" and d.dtype is None}
    return ir | inductor_ir_facts(generated, events, since) if generated else ir


def capture_callable(
    fn: Callable[..., Any],
    args: tuple[Any, ...] = (),
    kwargs: Mapping[str, Any] | None = None,
    options: ProfileOptions = DEFAULTS,
) -> CapturedSession:
    """Warm up ``options.warmup`` times, then profile ``options.calls`` calls of ``fn``, each in
    its own ``ProfilerStep#N`` (under ``torch.no_grad()`` with ``options.no_grad``).

    ``options.stacks``: record Python stacks (``with_stack``) and flag syncs with torch's sync
    debug mode, so that syncs and kernels carry the user's frames and syncs their line.
    ``options.modules``: a range per module call (see ``module_ranges.py``) of ``fn`` (True) or
    of the nn.Module given.
    """
    __tracebackhide__ = True  # a failure shows the test's line and the callable's frames
    check_callable(fn)
    warmup, calls, stacks = options.warmup, options.calls, options.stacks
    torch = import_torch()
    since = len(sys.modules)  # the modules loaded after it are those of the graphs the warm-up compiles
    model = resolve_model(fn, options.modules, torch)
    kw = dict(kwargs or {})
    grad = torch.no_grad() if options.no_grad else contextlib.nullcontext()
    meter = meter_for(torch)
    sync = synchronizer(torch)
    with watch_compiles() as watch, grad:
        for i in range(warmup):
            try:
                result = fn(*args, **kw)
            except BaseException as exc:
                annotate(exc, f"pytest-kernelprof: raised in warm-up call {i + 1} of {warmup}, before profiling")
                raise
            if i == 0:
                check_result(fn, result)
        sync()
        watch.profiled()
        with _watched(model) as tritons, profiler_session(stacks=stacks) as prof, flagging_syncs(stacks) as lines:
            for i in range(calls):
                if lines is not None:
                    lines.call = i
                try:
                    if meter is not None:
                        meter.before_call()
                    with torch.profiler.record_function(f"{STEP_PREFIX}{i}"):
                        result = fn(*args, **kw)
                    sync()
                    if meter is not None:
                        meter.after_call()
                except BaseException as exc:
                    annotate(
                        exc, f"pytest-kernelprof: raised in profiled call {i + 1} of {calls}; the profiler was stopped"
                    )
                    raise
                if i == 0 and not warmup:
                    check_result(fn, result)
                if not profiler_running():
                    raise interrupted(f"profiled call {i + 1} of {calls}")
    label = getattr(fn, "__qualname__", None) or type(fn).__name__
    return _finished(
        prof, stacks, calls, tritons.names, label, meter, watch.facts(), lines, keep=options.keep_traces, since=since
    )


def _finished(
    prof: Any,
    stacks: bool,
    calls: int,
    launched: set[str],
    label: str,
    meter: AllocatorMeter | None,
    compile_facts: CompileFacts | None,
    lines: SyncLines | None,
    *,
    keep: bool,
    since: int,
) -> CapturedSession:
    """The session of a stopped profiler: its events (read with the collector paused, as a
    build runs) and what was read beside them. Its trace is kept now (exported before any later
    session, see ``session_traces.py``) where ``keep`` says so or the running test's traces will
    be saved; else only while it is the newest session can it be exported."""
    __tracebackhide__ = True
    trace = guard_exports(prof)
    if keep or keeps_traces():
        trace.keep_as_it_ends()
    with paused_gc():
        events = raw_events(prof, python_frames=stacks)
        triton = _learned_triton(events, launched)
        ir = _read_ir(events, triton, since)
    check_steps(events, calls)
    learned: dict[str, Any] = {"triton_kernels": sorted(triton)}
    if ir:
        learned["triton_ir"] = {name: facts.to_json() for name, facts in sorted(ir.items())}
    return CapturedSession(
        events=events,
        source=_source(label, triton, ir),
        torch_profiler=prof,
        memory=meter.readings if meter is not None else None,
        compile_facts=compile_facts,
        flagged_syncs=lines.by_call if lines is not None else None,
        learned=learned,
    )


class Block:
    """The calls of a ``with kernelprof.record()`` block: ``step()`` ends one and begins the
    next; ``session``, once the block has ended, is what it recorded. ``api/``'s ``Recording``,
    the handle the user holds, steps through it."""

    def __init__(self, torch: Any) -> None:
        self._torch = torch
        self._index = 0
        self._range: Any = None
        self._session: CapturedSession | None = None
        self._meter = meter_for(torch)
        self._lines: SyncLines | None = None

    def _open(self) -> None:
        if self._meter is not None:
            self._meter.before_call()
        if self._lines is not None:
            self._lines.call = self._index
        self._range = self._torch.profiler.record_function(f"{STEP_PREFIX}{self._index}")
        self._range.__enter__()

    def _close(self) -> None:
        if self._range is not None:
            self._range.__exit__(None, None, None)
            self._range = None
            synchronize()
            if self._meter is not None:
                self._meter.after_call()

    def step(self) -> None:
        """End the current call and begin the next one."""
        __tracebackhide__ = True
        if self._range is None:
            raise RecordingError("rec.step() was called outside its `with kernelprof.record()` block")
        self._close()
        self._index += 1
        self._open()

    @property
    def session(self) -> CapturedSession:
        """What the block recorded, once it has ended."""
        __tracebackhide__ = True
        if self._session is None:
            raise RecordingError("the profile exists once the `with kernelprof.record()` block has ended")
        return self._session


@contextlib.contextmanager
def record_block(options: ProfileOptions = DEFAULTS) -> Iterator[Block]:
    """Profile the body of a ``with`` block; each ``block.step()`` starts a new call. After the
    block, ``block.session`` holds what it recorded. Of the options, ``stacks`` and ``modules``
    (the nn.Module whose module calls to record) apply: the block is neither warmed up nor repeated."""
    torch = import_torch()
    since = len(sys.modules)
    model = resolve_model(None, options.modules, torch)
    block = Block(torch)
    synchronize()
    stacks = options.stacks
    with watch_compiles() as watch:
        watch.profiled()  # no warm-up here: every compile in the block is in a profiled call
        with _watched(model) as tritons, profiler_session(stacks=stacks) as prof, flagging_syncs(stacks) as lines:
            block._lines = lines
            block._open()
            try:
                yield block
            finally:
                block._close()
            if not profiler_running():
                raise interrupted("the `with kernelprof.record()` block", "code in the block")
    block._session = _finished(
        prof,
        stacks,
        block._index + 1,
        tritons.names,
        "record()",
        block._meter,
        watch.facts(),
        lines,
        keep=options.keep_traces,
        since=since,
    )
