"""Run a callable under torch.profiler: warm-up, synchronisation, one step per call.

Every path out of a session stops the profiler, so a failing callable never leaves one
running for the next test. A capture ends with a ``CapturedSession``: the events and what
was read beside them; ``api.py`` builds the profile from it.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import importlib.metadata
import inspect
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, TextIO

from .build import paused_gc
from .chrome import KERNELPROF_VERSION, append_kernelprof_key, events_from_trace_file
from .compile_watch import watch_compiles
from .defaults import DEFAULT_CALLS, DEFAULT_WARMUP
from .errors import ProfilerBusyError, ProfilerStartError, RecordingError
from .events import ANNOTATION, KERNEL, PYTHON, STEP_PREFIX, RawEvent, Source, arch_name, events_from_kineto
from .health import CompileFacts, MemoryReading
from .model import KernelProfile
from .modules import module_ranges
from .names import parse_kernel_name
from .paths import atomic_path, short_path
from .syncs import FlaggedSync, is_user_file
from .triton_kernels import learn_triton_kernels, watch_triton_launches


def _torch() -> Any:
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - torch is a dependency
        raise ImportError("pytest-kernelprof needs PyTorch: pip install torch") from exc
    return torch


def device_facts() -> tuple[str | None, str | None]:
    """(GPU name, arch such as "sm90") of the current CUDA device, or (None, None)."""
    torch = _torch()
    if not torch.cuda.is_available():
        return None, None
    return _facts_of_device(int(torch.cuda.current_device()))


@functools.cache
def _facts_of_device(index: int) -> tuple[str, str]:
    # A device's name and compute capability cannot change within a process; every
    # profile asks for them, and each read goes through the CUDA runtime's properties.
    torch = _torch()
    major, minor = torch.cuda.get_device_capability(index)
    return torch.cuda.get_device_name(index), arch_name(major, minor)


def package_versions(*dists: str) -> dict[str, str | None]:
    """The installed version of each distribution, None where it is not installed."""
    versions: dict[str, str | None] = {}
    for dist in dists:
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            versions[dist] = None
    return versions


def synchronize() -> None:
    torch = _torch()
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _no_sync() -> None:
    return None


def _synchronizer(torch: Any) -> Callable[[], None]:
    """``synchronize`` with the CUDA check made once, for a capture's several synchronizations."""
    return torch.cuda.synchronize if torch.cuda.is_available() else _no_sync


def profiler_running() -> bool:
    """Whether a torch profiler session is active in this process (False where torch cannot tell)."""
    probe = getattr(_torch()._C._autograd, "_profiler_enabled", None)
    return bool(probe()) if probe is not None else False


def kineto_events(torch_profiler: Any) -> Any | None:
    """The raw Kineto events of a finished session, or None where this torch lacks them."""
    results = getattr(getattr(torch_profiler, "profiler", None), "kineto_results", None)
    events = getattr(results, "events", None)
    return events() if events is not None else None


def export_once(session: Any) -> Any:
    """``session`` (a finished torch profiler session), its Chrome trace writable more than once.

    torch (2.11 at least) saves a session's trace once: a second ``export_chrome_trace`` raises
    "Trace is already saved". Capture exports it itself where the raw events lack Python frames
    (``raw_events``), and the plugin exports it again for ``--kernelprof-trace-dir``: the first
    export is kept (its bytes) and later ones write that copy. The session keeps its type; its
    ``export_chrome_trace`` is replaced on the instance.
    """
    export = session.export_chrome_trace
    saved: list[bytes] = []

    def export_chrome_trace(path: str) -> None:
        if not saved:
            export(path)
            with open(path, "rb") as handle:
                saved.append(handle.read())
        else:
            with open(path, "wb") as handle:
                handle.write(saved[0])

    session.export_chrome_trace = export_chrome_trace
    return session


def raw_events(torch_profiler: Any, *, python_frames: bool = False) -> list[RawEvent]:
    """Raw Kineto events when available (fast); otherwise the exported Chrome trace (slow, same builder).

    ``python_frames``: the session recorded stacks, which torch 2.11 and older keep out of
    the raw events (no ``is_python_function``); their Chrome trace has them.
    """
    events = kineto_events(torch_profiler)
    if events is not None and not (python_frames and events and not hasattr(events[0], "is_python_function")):
        adapted = events_from_kineto(events)
        if not python_frames or any(e.category == PYTHON for e in adapted):
            return adapted
    with tempfile.TemporaryDirectory(prefix="kernelprof-") as tmp:
        path = os.path.join(tmp, "trace.json")
        torch_profiler.export_chrome_trace(path)
        return events_from_trace_file(path)[1]


class AllocatorMeter:
    """Reads the CUDA caching allocator's allocated bytes around each profiled call.

    Taken between the ``ProfilerStep`` ranges, never inside them, so neither a call's
    kernels nor its time change: before a call, the peak counter is reset (about 5 us);
    after it (synchronized), one read of the counters gives the peak and what is still
    allocated, which is also the next call's "before". The read goes through
    ``torch._C._cuda_memoryStats`` (probed: private), which skips the flattening that
    makes ``torch.cuda.memory_stats()``/``memory_allocated()`` cost over 100 us each.
    """

    def __init__(self, torch: Any) -> None:
        self._cuda = torch.cuda
        self._raw_stats = getattr(torch._C, "_cuda_memoryStats", None)
        self._raw_reset = getattr(torch._C, "_cuda_resetPeakMemoryStats", None)
        self._before: int | None = None
        self.readings: list[MemoryReading] = []

    def _device(self) -> int | None:
        # Never initialise CUDA for a reading: an uninitialised allocator holds nothing.
        return int(self._cuda.current_device()) if self._cuda.is_initialized() else None

    def _counters(self) -> tuple[int, int]:
        """(allocated now, peak since the last reset) on the current device."""
        device = self._device()
        if device is None:
            return 0, 0
        if self._raw_stats is not None:
            try:
                allocated = self._raw_stats(device)["allocated_bytes"]["all"]
                return int(allocated["current"]), int(allocated["peak"])
            except (TypeError, KeyError, RuntimeError):
                self._raw_stats = None  # another layout: the public API from now on
        stats = self._cuda.memory_stats(device)
        return int(stats.get("allocated_bytes.all.current", 0)), int(stats.get("allocated_bytes.all.peak", 0))

    def _reset_peak(self) -> None:
        device = self._device()
        if device is None:
            return
        if self._raw_reset is not None:
            try:
                self._raw_reset(device)
                return
            except (TypeError, RuntimeError):
                self._raw_reset = None
        self._cuda.reset_peak_memory_stats(device)

    def before_call(self) -> None:
        if self._before is None:
            self._before = self._counters()[0]
        self._reset_peak()

    def after_call(self) -> None:
        before = self._before or 0
        current, peak = self._counters()
        self.readings.append(MemoryReading(before=before, peak=max(peak, before, current), after=current))
        self._before = current


def _meter(torch: Any) -> AllocatorMeter | None:
    return AllocatorMeter(torch) if torch.cuda.is_available() else None


@dataclass(frozen=True)
class CapturedSession:
    """What a finished session recorded, for ``api.py`` to build a profile from.

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


_CLEARS_EVENTS = "Profiler clears events"


def _clears_events_warning_pending(torch: Any) -> bool:
    """Whether torch may still emit its "Profiler clears events" warning (torch 2.10+).

    torch shows it once per process and records what it has shown (a private set, probed;
    without it, assume pending). Silencing it costs a ``warnings.catch_warnings``, which
    resets Python's warning caches, so it is done only until torch has shown it once.
    """
    shown = getattr(getattr(torch.profiler, "profiler", None), "_WARNINGS_SHOWN", None)
    if not isinstance(shown, set):
        return True
    return not any(_CLEARS_EVENTS in str(message) for message in shown)


class KinetoSession:
    """A session started below ``torch.profiler.profile``, on the autograd profiler it wraps.

    Offers what capture uses of ``torch.profiler.profile``: the autograd profiler as
    ``profiler`` (``kineto_results`` after the stop) and ``export_chrome_trace``.
    """

    def __init__(self, profiler: Any, metadata: Mapping[str, str], add_metadata: Callable[[str, str], None]) -> None:
        self.profiler = profiler
        self._metadata = metadata
        self._add_metadata = add_metadata

    def __enter__(self) -> KinetoSession:
        self.profiler._prepare_trace()
        self.profiler._start_trace()
        for key, value in self._metadata.items():
            self._add_metadata(key, value)
        return self

    def __exit__(self, *exc: object) -> None:
        self.profiler.__exit__(None, None, None)

    def export_chrome_trace(self, path: str) -> None:
        self.profiler.export_chrome_trace(path)


def _direct_session_is_equivalent(torch: Any) -> bool:
    """Whether starting below ``torch.profiler.profile`` records what it would record.

    ``torch.profiler.profile`` starts with ``if hasattr(torch, "_inductor"): import
    torch._inductor.config``, only to read ``triton.cudagraphs`` for a CUPTI workaround
    (CUDA graphs before CUDA 12.6). ``hasattr`` imports Inductor, Dynamo and sympy: over
    3 s, most of a process's first profiled call (3.4 s of 3.4 s on an H200). Where
    Inductor is not imported yet, that setting is its default, the environment's
    ``TORCHINDUCTOR_CUDAGRAPHS``; where Inductor is imported, its config says (read here
    too: a session through ``torch.profiler.profile`` costs more, 0.1 ms on the CPU VM).
    Where that is off, the workaround is skipped and the rest of ``torch.profiler.profile``'s
    start is the autograd profiler's own, but for trace metadata: ``with_stack`` (added
    here) and a distributed run's ``distributedInfo`` (so a process in a distributed run
    takes ``torch.profiler.profile``).
    """
    if "torch._inductor" in sys.modules:
        config = sys.modules.get("torch._inductor.config")
        cudagraphs = getattr(getattr(config, "triton", None), "cudagraphs", None)
        if cudagraphs is not False:
            return False  # on, or a config this cannot read: torch.profiler.profile applies the workaround
    elif os.environ.get("TORCHINDUCTOR_CUDAGRAPHS") == "1":
        return False
    distributed = sys.modules.get("torch.distributed")
    if distributed is not None and distributed.is_available() and distributed.is_initialized():
        return False
    profile = getattr(getattr(torch.autograd, "profiler", None), "profile", None)
    return all(hasattr(profile, m) for m in ("_prepare_trace", "_start_trace", "export_chrome_trace"))


def _new_session(torch: Any, stacks: bool) -> Any:
    cuda = torch.cuda.is_available()
    add_metadata = getattr(torch.autograd, "_add_metadata_json", None)
    if add_metadata is not None and _direct_session_is_equivalent(torch):
        profiler = torch.autograd.profiler.profile(
            use_kineto=True, use_device="cuda" if cuda else None, with_stack=stacks
        )
        return KinetoSession(profiler, {"with_stack": "1"} if stacks else {}, add_metadata)
    activities = [torch.profiler.ProfilerActivity.CPU]
    if cuda:
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    return torch.profiler.profile(activities=activities, with_stack=stacks)


@contextlib.contextmanager
def _session(*, stacks: bool = False) -> Iterator[Any]:
    torch = _torch()
    if profiler_running():
        raise ProfilerBusyError(
            "a torch profiler session is already running in this process; pytest-kernelprof cannot start "
            "another inside it. Profile outside the running session, or stop it first."
        )
    prof = _new_session(torch, stacks)
    try:
        # Only torch.profiler.profile gives that warning.
        if not isinstance(prof, KinetoSession) and _clears_events_warning_pending(torch):
            with warnings.catch_warnings():
                # torch 2.10+ warns at a session's start that events are cleared between
                # cycles; each session here is one cycle, and suites run with -W error.
                warnings.filterwarnings("ignore", message=".*Profiler clears events", category=UserWarning)
                prof.__enter__()
        else:
            prof.__enter__()
    except Exception as exc:
        with contextlib.suppress(Exception):
            prof.__exit__(None, None, None)
        raise ProfilerStartError(
            f"torch.profiler failed to start: {exc}. If the message mentions CUPTI, another profiler "
            "(nsys, ncu) may be attached or the driver refuses profiling to this user "
            "(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES): see NVIDIA's ERR_NVGPUCTRPERM page."
        ) from exc
    try:
        yield prof
    finally:
        prof.__exit__(None, None, None)


_SYNC_WARNING = "called a synchronizing CUDA operation"
_PLUGIN = __name__.partition(".")[0]


class SyncLines:
    """The user's line of each sync torch's sync debug mode warns about, by profiled call.

    The warning is raised where the synchronizing torch call returns to Python, so the
    Python stack at that moment holds the user's exact line (the profiler's frames only
    name each function's def line).
    """

    def __init__(self) -> None:
        self.call = 0
        self.by_call: dict[int, list[FlaggedSync]] = {}

    def add(self, frame: FrameType | None) -> None:
        inner: list[tuple[str, int, str]] = []
        while frame is not None:
            # The profiled callable's frames end where the plugin's loop called it.
            if frame.f_globals.get("__name__", "").startswith(_PLUGIN):
                break
            inner.append((frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name))
            frame = frame.f_back
        user = [f for f in inner if is_user_file(f[0])]
        if user:
            path, line, function = user[0]
            self.by_call.setdefault(self.call, []).append(FlaggedSync(f"{short_path(path)}:{line}", function))


@contextlib.contextmanager
def _flagging_syncs(enabled: bool) -> Iterator[SyncLines | None]:
    """Turn torch's sync debug mode to "warn" and keep the line of each warning, not the warning.

    Only where the mode is off (a user's "warn" or "error" stays as it is) and CUDA is
    there. Other warnings pass through to the filters and display as they were.
    """
    torch = _torch()
    set_mode = getattr(torch.cuda, "set_sync_debug_mode", None)
    get_mode = getattr(torch.cuda, "get_sync_debug_mode", None)
    if not enabled or set_mode is None or get_mode is None or not torch.cuda.is_available() or get_mode() != 0:
        yield None
        return
    lines = SyncLines()
    with warnings.catch_warnings():
        warnings.filterwarnings("always", message=f".*{_SYNC_WARNING}", category=UserWarning)
        # torch says so once per process when the mode is set; under -W error it would raise.
        warnings.filterwarnings("ignore", message=".*Synchronization debug mode is a prototype", category=UserWarning)
        shown = warnings.showwarning

        def showwarning(
            message: Warning | str,
            category: type[Warning],
            filename: str,
            lineno: int,
            file: TextIO | None = None,
            line: str | None = None,
        ) -> None:
            if issubclass(category, UserWarning) and _SYNC_WARNING in str(message):
                lines.add(sys._getframe(1))
            else:
                shown(message, category, filename, lineno, file, line)

        warnings.showwarning = showwarning
        try:
            set_mode("warn")
            yield lines
        finally:
            set_mode(0)  # also after a failed set: a mode left on would warn in every later test


def _annotate(exc: BaseException, note: str) -> None:
    add_note = getattr(exc, "add_note", None)
    if add_note is not None:
        add_note(note)


def _source(label: str, triton_kernels: frozenset[str]) -> Source:
    device, arch = device_facts()
    return Source(
        label=label, device=device, arch=arch, gpu_requested=device is not None, triton_kernels=triton_kernels
    )


def _check_counts(warmup: int, calls: int) -> None:
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be an int >= 0, got {warmup!r}")
    if isinstance(calls, bool) or not isinstance(calls, int) or calls < 1:
        raise ValueError(f"calls must be an int >= 1, got {calls!r}")


@contextlib.contextmanager
def _watched(model: Any | None) -> Iterator[Any]:
    """The profiled stretch: Triton's launch hook, and module ranges where ``model`` is given;
    both removed on every path out. Yields the Triton watch."""
    with contextlib.ExitStack() as stack:
        watch = stack.enter_context(watch_triton_launches())
        if model is not None:
            stack.enter_context(module_ranges(model, _torch()))
        yield watch


def _learned_triton(events: list[RawEvent], launched: set[str]) -> frozenset[str]:
    """The Triton kernels of a finished session (see ``triton_kernels.py``)."""
    unaccounted = {e.name for e in events if e.category == KERNEL and parse_kernel_name(e.name).family == "unknown"}
    return learn_triton_kernels(launched, unaccounted)


def _check_callable(fn: object) -> None:
    """A TypeError for what cannot be profiled by calling it: a non-callable (``fn(x)`` passed
    instead of ``fn``), and generator or coroutine functions, whose call runs nothing."""
    __tracebackhide__ = True
    if not callable(fn):
        raise TypeError(
            f"kernelprof needs a callable to profile, got {type(fn).__name__}: pass the function and its "
            "arguments separately, kernelprof(fn, x), not kernelprof(fn(x))"
        )
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    if inspect.isasyncgenfunction(fn):
        raise TypeError(
            f"kernelprof cannot profile {name}: it is an async generator function, and calling it runs nothing. "
            "Profile a function that drains it, e.g. lambda: asyncio.run(drain(fn(x)))"
        )
    if inspect.isgeneratorfunction(fn):
        raise TypeError(
            f"kernelprof cannot profile {name}: it is a generator function, and calling it runs nothing "
            "until the generator is iterated. Profile a function that consumes it: kernelprof(lambda: list(fn(x)))"
        )
    if inspect.iscoroutinefunction(fn):
        raise TypeError(
            f"kernelprof cannot profile {name}: it is a coroutine function (async def), and calling it runs "
            "nothing until it is awaited. Profile a function that runs it: kernelprof(lambda: asyncio.run(fn(x)))"
        )


def _check_result(fn: object, result: object) -> None:
    """A TypeError where a call returned deferred work (a generator, coroutine or awaitable),
    which ran nothing; the object is closed so that it warns of nothing later."""
    __tracebackhide__ = True
    if not (inspect.isgenerator(result) or inspect.isasyncgen(result) or inspect.isawaitable(result)):
        return
    close = getattr(result, "close", None)
    if inspect.isasyncgen(result):
        close = None  # its aclose() is itself a coroutine; dropping an unstarted one warns of nothing
    if close is not None:
        close()
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    what = type(result).__name__
    remedy = (
        "iterate it: kernelprof(lambda: list(fn(x)))"
        if inspect.isgenerator(result) or inspect.isasyncgen(result)
        else "await it: kernelprof(lambda: asyncio.run(fn(x)))"
    )
    raise TypeError(
        f"kernelprof: calling {name} returned a {what}, so nothing ran: the work happens only when you {remedy}"
    )


def _interrupted(step: str, who: str = "the callable") -> ProfilerBusyError:
    return ProfilerBusyError(
        f"the profiler session of pytest-kernelprof was stopped during {step}: {who} started or stopped "
        "a torch profiler itself (torch.profiler.profile, or start()/stop()), which ends the one session a "
        "process can have, so nothing of its work was recorded. Profile it without a profiler of its "
        "own, or use that profiler's results instead of kernelprof."
    )


def _check_steps(events: Sequence[RawEvent], expected: int) -> None:
    """A ProfilerBusyError where the session lost its step marks: another profiler cleared its events."""
    __tracebackhide__ = True
    found = sum(1 for e in events if e.category == ANNOTATION and e.name.startswith(STEP_PREFIX))
    if found != expected:
        raise ProfilerBusyError(
            f"the profiler session holds {found} of the {expected} profiled call(s) (ProfilerStep marks): another "
            "torch profiler in the process cleared the session's events. Profile the callable without a "
            "profiler of its own."
        )


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
    ``model`` (an nn.Module): a range per module call (see ``modules.py``).
    """
    __tracebackhide__ = True  # a failure shows the test's line and the callable's frames
    _check_callable(fn)
    _check_counts(warmup, calls)
    torch = _torch()
    kw = dict(kwargs or {})
    grad = torch.no_grad() if no_grad else contextlib.nullcontext()
    meter = _meter(torch)
    sync = _synchronizer(torch)
    with watch_compiles() as watch, grad:
        for i in range(warmup):
            try:
                result = fn(*args, **kw)
            except BaseException as exc:
                _annotate(exc, f"pytest-kernelprof: raised in warm-up call {i + 1} of {warmup}, before profiling")
                raise
            if i == 0:
                _check_result(fn, result)
        sync()
        watch.profiled()
        with _watched(model) as tritons, _session(stacks=stacks) as prof, _flagging_syncs(stacks) as lines:
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
                    _annotate(
                        exc, f"pytest-kernelprof: raised in profiled call {i + 1} of {calls}; the profiler was stopped"
                    )
                    raise
                if i == 0 and not warmup:
                    _check_result(fn, result)
                if not profiler_running():
                    raise _interrupted(f"profiled call {i + 1} of {calls}")
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
    _check_steps(events, calls)
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
        self._meter = _meter(torch)
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
    block, ``rec._session`` holds the session (``api.py`` builds ``rec.capture`` from it)."""
    torch = _torch()
    rec = Recording(torch)
    synchronize()
    with watch_compiles() as watch:
        watch.profiled()  # no warm-up here: every compile in the block is in a profiled call
        with _watched(model) as tritons, _session(stacks=stacks) as prof, _flagging_syncs(stacks) as lines:
            rec._lines = lines
            rec._open()
            try:
                yield rec
            finally:
                rec._close()
            if not profiler_running():
                raise _interrupted("the `with kernelprof.record()` block", "code in the block")
    rec._session = _finished(prof, stacks, rec._index + 1, tritons.names, "record()", rec._meter, watch.facts(), lines)
