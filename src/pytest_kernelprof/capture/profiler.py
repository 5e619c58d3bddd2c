"""The torch profiler session: started (below ``torch.profiler.profile`` where that records
the same), stopped on every path, its events read; and the live machine's facts (device,
versions) and synchronization.

Every path out of a session stops the profiler, so a failing callable never leaves one
running for the next test.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import os
import re
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..errors import MissingTorchError, ProfilerBusyError, ProfilerStartError
from ..traces import PYTHON, RawEvent, arch_name, events_from_kineto
from ..traces.chrome import events_from_trace_file
from .session_traces import session_started

# The oldest torch the whole CPU suite passes on (docs/versions.md). Older ones differ where a
# profile is made, not only where it is read: torch 2.5 moves the start of a range named
# "ProfilerStep#N" under with_stack, 2.4 and 2.5 say nothing of graph breaks in the structured
# trace, 2.4's Kineto events cannot tell a user annotation.
MIN_TORCH = (2, 6)


def import_torch() -> Any:
    try:
        import torch
    except ImportError as exc:  # a trace-only install (docs/versions.md): reading traces needs no torch
        raise MissingTorchError(
            f"pytest-kernelprof needs PyTorch for this, and torch cannot be imported ({exc}): pip install torch "
            "(saved traces load without it: load_trace, kernelprof show)"
        ) from None
    refusal = unsupported_torch(torch.__version__)
    if refusal is not None:
        raise ImportError(refusal)
    return torch


def torch_version() -> str | None:
    """The installed torch's version; read without importing torch where it is not imported yet."""
    imported = getattr(sys.modules.get("torch"), "__version__", None)
    if imported is not None:
        return str(imported)
    return package_versions("torch")["torch"]


@functools.cache
def unsupported_torch(version: str | None) -> str | None:
    """The one line that refuses a torch older than ``MIN_TORCH``, or None (also where the
    version is unknown or unreadable: a source build says what it is only when it can)."""
    found = re.match(r"(\d+)\.(\d+)", version or "")
    if found is None or (int(found.group(1)), int(found.group(2))) >= MIN_TORCH:
        return None
    release = str(version).split("+", 1)[0]  # "2.4.1+cu121": the release is what to upgrade
    return f"pytest-kernelprof needs torch>={MIN_TORCH[0]}.{MIN_TORCH[1]}; this is {release}"


def device_facts() -> tuple[str | None, str | None]:
    """(GPU name, arch such as "sm90") of the current CUDA device, or (None, None)."""
    torch = import_torch()
    if not torch.cuda.is_available():
        return None, None
    return _facts_of_device(int(torch.cuda.current_device()))


@functools.cache
def _facts_of_device(index: int) -> tuple[str, str]:
    # A device's name and compute capability cannot change within a process; every
    # profile asks for them, and each read goes through the CUDA runtime's properties.
    torch = import_torch()
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
    torch = import_torch()
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _no_sync() -> None:
    return None


def synchronizer(torch: Any) -> Callable[[], None]:
    """``synchronize`` with the CUDA check made once, for a capture's several synchronizations."""
    return torch.cuda.synchronize if torch.cuda.is_available() else _no_sync


def profiler_running() -> bool:
    """Whether a torch profiler session is active in this process (False where torch cannot tell)."""
    probe = getattr(import_torch()._C._autograd, "_profiler_enabled", None)
    return bool(probe()) if probe is not None else False


def kineto_events(torch_profiler: Any) -> Any | None:
    """The raw Kineto events of a finished session, or None where this torch lacks them."""
    results = getattr(getattr(torch_profiler, "profiler", None), "kineto_results", None)
    events = getattr(results, "events", None)
    return events() if events is not None else None


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
def profiler_session(*, stacks: bool = False) -> Iterator[Any]:
    torch = import_torch()
    if profiler_running():
        raise ProfilerBusyError(
            "a torch profiler session is already running in this process; pytest-kernelprof cannot start "
            "another inside it. Profile outside the running session, or stop it first."
        )
    prof = _new_session(torch, stacks)
    session_started()
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
        _release_prepared(torch, prof)
        raise ProfilerStartError(
            f"torch.profiler failed to start: {exc}. If the message mentions CUPTI, another profiler "
            "(nsys, ncu) may be attached or the driver refuses profiling to this user "
            "(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES): see NVIDIA's ERR_NVGPUCTRPERM page."
        ) from exc
    try:
        yield prof
    finally:
        _stop(prof)


def _release_prepared(torch: Any, prof: Any) -> None:
    """Return Kineto to idle after a start that failed once the trace was prepared.

    torch 2.11 and older leave Kineto holding the prepared trace, and the next session's
    prepare cancels it through torch's own stop, which raises "Can't disable Kineto profiler
    when it's not running": every later profile in the process would fail to start. A
    start and stop of the prepared trace releases it (2.12+ needs none; it costs a failed
    start only).
    """
    autograd = getattr(prof, "profiler", None)
    enable = getattr(torch._C._autograd, "_enable_profiler", None)
    disable = getattr(torch._C._autograd, "_disable_profiler", None)
    if autograd is None or enable is None or disable is None or profiler_running():
        return
    with contextlib.suppress(Exception):
        enable(autograd.config(), autograd.kineto_activities)
    if profiler_running():
        with contextlib.suppress(Exception):
            disable()


def _stop(prof: Any) -> None:
    """Stop the session, also one that another profiler in the process already stopped: torch
    2.11 and older then raise "Can't disable Kineto profiler when it's not running" (2.12+
    stop nothing), which would hide the ProfilerBusyError that says what happened."""
    running = profiler_running()
    try:
        prof.__exit__(None, None, None)
    except RuntimeError:
        if running:
            raise
