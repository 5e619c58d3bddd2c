"""Run a callable under torch.profiler: warm-up, synchronisation, one step per call; or the
body of a ``with kernelprof.record()`` block, a step per ``rec.step()``.

A capture ends with a ``CapturedSession``: the events and what was read beside them;
``api/`` builds the profile from it into a ``Capture``.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..assemble import paused_gc
from ..decode import parse_kernel_name
from ..decode.sync_calls import FlaggedSync
from ..errors import RecordingError
from ..health import CompileFacts, MemoryReading
from ..model import KernelProfile
from ..options import DEFAULT_CALLS, DEFAULT_WARMUP
from ..paths import atomic_path
from ..traces import KERNEL, STEP_PREFIX, RawEvent, Source
from ..traces.chrome import KERNELPROF_VERSION, append_kernelprof_key
from .compile_watch import watch_compiles
from .guards import annotate, check_callable, check_counts, check_result, check_steps, interrupted
from .meter import AllocatorMeter, meter_for
from .module_ranges import module_ranges
from .profiler import (
    device_facts,
    export_once,
    import_torch,
    profiler_running,
    profiler_session,
    raw_events,
    synchronize,
    synchronizer,
)
from .sync_lines import SyncLines, flagging_syncs
from .triton_kernels import learn_triton_kernels, watch_triton_launches


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


@dataclass(frozen=True)
class Capture:
    """A finished session: the profile and the torch profiler it came from (for trace export).

    ``learned``: what the capture learned beyond torch's events (``{"triton_kernels": [...]}``),
    written into exported traces under the ``"kernelprof"`` key so that ``load_trace`` reads
    the same profile back.
    """

    profile: KernelProfile
    torch_profiler: Any
    learned: Mapping[str, Any] = field(default_factory=dict)

    def export_trace(self, path: str | os.PathLike[str]) -> None:
        """Write the session's Chrome trace, gzipped when ``path`` ends in ``.gz``; atomically."""
        # A ".json" temporary name: torch gzips by itself for a ".gz" one, in another way.
        with atomic_path(path, suffix=".json") as tmp:
            self.torch_profiler.export_chrome_trace(tmp)
            append_kernelprof_key(tmp, {"version": KERNELPROF_VERSION, **self.learned})
            if os.fspath(path).endswith(".gz"):
                with atomic_path(tmp, suffix=".gz") as packed, open(tmp, "rb") as src, gzip.open(packed, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)


def _source(label: str, triton_kernels: frozenset[str]) -> Source:
    device, arch = device_facts()
    return Source(
        label=label, device=device, arch=arch, gpu_requested=device is not None, triton_kernels=triton_kernels
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


def capture_callable(
    fn: Callable[..., Any],
    args: tuple[Any, ...] = (),
    kwargs: Mapping[str, Any] | None = None,
    *,
    warmup: int = DEFAULT_WARMUP,
    calls: int = DEFAULT_CALLS,
    no_grad: bool = False,
    stacks: bool = False,
    model: Any | None = None,
) -> CapturedSession:
    """Warm up, then profile ``calls`` calls of ``fn``, each in its own ``ProfilerStep#N``.

    ``stacks``: record Python stacks (``with_stack``) and flag syncs with torch's sync
    debug mode, so that syncs and kernels carry the user's frames and syncs their line.
    ``model`` (an nn.Module): a range per module call (see ``module_ranges.py``).
    """
    __tracebackhide__ = True  # a failure shows the test's line and the callable's frames
    check_callable(fn)
    check_counts(warmup, calls)
    torch = import_torch()
    kw = dict(kwargs or {})
    grad = torch.no_grad() if no_grad else contextlib.nullcontext()
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
    return _finished(prof, stacks, calls, tritons.names, label, meter, watch.facts(), lines)


def _finished(
    prof: Any,
    stacks: bool,
    calls: int,
    launched: set[str],
    label: str,
    meter: AllocatorMeter | None,
    compile_facts: CompileFacts | None,
    lines: SyncLines | None,
) -> CapturedSession:
    """The session of a stopped profiler: its events (read with the collector paused, as a
    build runs) and what was read beside them."""
    __tracebackhide__ = True
    prof = export_once(prof)
    with paused_gc():
        events = raw_events(prof, python_frames=stacks)
        triton = _learned_triton(events, launched)
    check_steps(events, calls)
    return CapturedSession(
        events=events,
        source=_source(label, triton),
        torch_profiler=prof,
        memory=meter.readings if meter is not None else None,
        compile_facts=compile_facts,
        flagged_syncs=lines.by_call if lines is not None else None,
        learned={"triton_kernels": sorted(triton)},
    )


class Recording:
    """The handle of ``with kernelprof.record() as rec``: ``rec.step()`` starts the next call."""

    def __init__(self, torch: Any) -> None:
        self._torch = torch
        self._index = 0
        self._range: Any = None
        self._capture: Capture | None = None
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
    def capture(self) -> Capture:
        __tracebackhide__ = True
        if self._capture is None:
            raise RecordingError("the profile exists once the `with kernelprof.record()` block has ended")
        return self._capture

    @property
    def profile(self) -> KernelProfile:
        __tracebackhide__ = True
        return self.capture.profile


@contextlib.contextmanager
def record_block(*, stacks: bool = False, model: Any | None = None) -> Iterator[Recording]:
    """Profile the body of a ``with`` block; each ``rec.step()`` starts a new call. After the
    block, ``rec._session`` holds the session (``api/`` builds ``rec.capture`` from it)."""
    torch = import_torch()
    rec = Recording(torch)
    synchronize()
    with watch_compiles() as watch:
        watch.profiled()  # no warm-up here: every compile in the block is in a profiled call
        with _watched(model) as tritons, profiler_session(stacks=stacks) as prof, flagging_syncs(stacks) as lines:
            rec._lines = lines
            rec._open()
            try:
                yield rec
            finally:
                rec._close()
            if not profiler_running():
                raise interrupted("the `with kernelprof.record()` block", "code in the block")
    rec._session = _finished(prof, stacks, rec._index + 1, tritons.names, "record()", rec._meter, watch.facts(), lines)
